//! Random-position probe throughput of the library.
//!
//! `cargo run --release -p awari-probe --example bench_probe -- DB [COUNT] [BOARDS_OUT]`
//!
//! Draws COUNT random stored boards (uniform level among those present, uniform
//! index in the level), then times `Tablebase::score` and `Tablebase::analyse`
//! over them, on one thread and on all threads. With BOARDS_OUT it also writes the
//! boards, one per line, for timing `awari-probe batch` (see scripts/bench-probe.sh).

use std::io::Write;
use std::time::Instant;

use awari_dbformat::{Board, Index, Rules};
use awari_probe::Tablebase;
use rayon::prelude::*;

/// xorshift64*: a small deterministic generator, enough to spread probes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let db = args.next().unwrap_or_else(|| "db".into());
    let count: usize = args.next().map_or(200_000, |c| c.parse().expect("a count"));
    let out = args.next();
    let tb = Tablebase::open(&db, Rules::default()).expect("a database of awari, 6 pits");
    let levels = tb.levels();
    let index = Index::for_pits(6);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let boards: Vec<Board> = (0..count)
        .map(|_| {
            let n = levels[(rng.next() % levels.len() as u64) as usize];
            let i = rng.next() % index.level_size(n);
            index.unrank(n, i).expect("in range")
        })
        .collect();
    if let Some(path) = out {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
        for b in &boards {
            writeln!(f, "{}", b.to_notation()).expect("write");
        }
    }
    println!(
        "database {db}: levels {:?}..={:?}, {count} random stored boards",
        levels.first(),
        levels.last()
    );
    let threads = rayon::current_num_threads();
    // Times `f` over every board and prints positions per second.
    let measure = |label: &str, parallel: bool, f: &(dyn Fn(&Board) -> i64 + Sync)| {
        let t = Instant::now();
        let sum: i64 = if parallel {
            boards.par_iter().map(f).sum()
        } else {
            boards.iter().map(f).sum()
        };
        let s = t.elapsed().as_secs_f64();
        println!(
            "{label:<48} {:>12.0} positions/s ({:.2} µs each; checksum {sum})",
            count as f64 / s,
            s * 1e6 / count as f64
        );
    };
    let score = |b: &Board| i64::from(tb.score(b).expect("score").get());
    let analyse = |b: &Board| tb.analyse(b).expect("analyse").moves.len() as i64;
    // Cold: the first pass decompresses blocks; warm: the same boards again.
    measure("score, 1 thread, cold", false, &score);
    measure("score, 1 thread, warm", false, &score);
    measure(&format!("score, {threads} threads"), true, &score);
    // With whole levels decoded in memory (`batch --preload`).
    tb.preload(u64::MAX);
    measure(
        &format!("score, {threads} threads, preloading (decode included)"),
        true,
        &score,
    );
    measure(
        &format!("score, {threads} threads, preloaded"),
        true,
        &score,
    );
    measure(
        &format!("analyse (every move), {threads} threads, preloaded"),
        true,
        &analyse,
    );
}
