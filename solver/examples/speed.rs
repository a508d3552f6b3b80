//! Quick timing of the in-memory solve per level: `cargo run --release --example speed -- 16`.
use std::time::Instant;

use awari_dbformat::Levels;
use awari_dbformat::Rules;
use awari_solver::retro;

fn main() {
    let max: u32 = std::env::args().nth(1).map_or(16, |a| a.parse().unwrap());
    let rules = Rules::default();
    let mut lower = Levels::new(6);
    let hidden = indicatif::ProgressBar::hidden();
    for n in 0..=max {
        let t = Instant::now();
        let solved = retro::solve_level(rules, n, &lower, &hidden, &retro::SolveOptions::default())
            .expect("an in-memory solve has no disk to fail");
        let s = t.elapsed().as_secs_f64();
        let gens: u32 = solved.stages.iter().map(|s| s.generations).sum();
        println!(
            "{n:>3} {:>12} {:>8.3}s (init {:>7.3}s) {:>8.2} M/s gens {gens}",
            solved.values.len(),
            s,
            solved.init_seconds,
            solved.values.len() as f64 / s / 1e6
        );
        lower.insert(n, std::sync::Arc::new(solved.values));
    }
}
