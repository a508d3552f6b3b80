//! Fits the weights of the search's evaluation (`search::features`) to the
//! databases' values by least squares, on random boards of the levels given.
//!
//! ```sh
//! cargo run --release -p awari-probe --example fit_evaluation -- DB RULES FIRST LAST [SAMPLES]
//! ```
//! prints the weights in sixteenths of a seed (`search::FITTED`), the mean
//! absolute error of the fit and of `SeedsOnSide(4)` on the same boards.

use awari_dbformat::{Index, RuleSet, Rules};
use awari_probe::search::{features, Evaluation, FEATURES};
use awari_probe::Tablebase;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: fit_evaluation DB RULES FIRST LAST [SAMPLES]";
    let db = args.get(1).ok_or(usage)?;
    let set: RuleSet = args.get(2).ok_or(usage)?.parse()?;
    let first: u32 = args.get(3).ok_or(usage)?.parse()?;
    let last: u32 = args.get(4).ok_or(usage)?.parse()?;
    let samples: u64 = args.get(5).map_or(Ok(12_000), |a| a.parse())?;
    let rules = Rules::new(set, 6)?;
    let tb = Tablebase::open(db, rules)?;
    let index = Index::for_pits(6);
    // Random boards of each level (a xorshift: reproducible), with values.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut rows = Vec::new();
    for seeds in first..=last {
        let size = index.level_size(seeds);
        for _ in 0..samples {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let board = index.unrank(seeds, state % size)?;
            let v = f64::from(tb.score(&board)?.get());
            let f = features(&board).map(f64::from);
            rows.push((f, v, board));
        }
    }
    // Normal equations (X'X) w = X'v, solved by Gaussian elimination.
    let mut a = [[0f64; FEATURES + 1]; FEATURES];
    for (f, v, _) in &rows {
        for i in 0..FEATURES {
            for j in 0..FEATURES {
                a[i][j] += f[i] * f[j];
            }
            a[i][FEATURES] += f[i] * v;
        }
    }
    for col in 0..FEATURES {
        let pivot = (col..FEATURES)
            .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            .unwrap();
        a.swap(col, pivot);
        for row in 0..FEATURES {
            if row != col && a[col][col] != 0.0 {
                let k = a[row][col] / a[col][col];
                let pivot_row = a[col];
                for (x, p) in a[row].iter_mut().zip(pivot_row).skip(col) {
                    *x -= k * p;
                }
            }
        }
    }
    let w: Vec<f64> = (0..FEATURES).map(|i| a[i][FEATURES] / a[i][i]).collect();
    let sixteenths: Vec<i16> = w.iter().map(|x| (x * 16.0).round() as i16).collect();
    let fitted = Evaluation::Weighted(sixteenths.clone().try_into().unwrap());
    let error = |e: Evaluation| {
        rows.iter()
            .map(|(_, v, b)| (f64::from(e.of(b)) - v).abs())
            .sum::<f64>()
            / rows.len() as f64
    };
    println!(
        "{} boards of levels {first}..={last} ({set}): weights {:?} (sixteenths of a seed; features: side, empty, 1-2, kroo, move)",
        rows.len(),
        sixteenths
    );
    println!(
        "mean absolute error: fitted {:.3} seeds, SeedsOnSide(4) {:.3}, 0 {:.3}",
        error(fitted),
        error(Evaluation::SeedsOnSide(4)),
        error(Evaluation::Captured)
    );
    Ok(())
}
