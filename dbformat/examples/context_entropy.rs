//! Experiment: what a level's values would cost under candidate contexts
//! (bits per board, held out), to see which board features would pay.
//!
//! Blocks of 4096 boards alternate between two halves; each half is coded
//! with counts learnt on the other. A candidate context is the current one
//! (neighbours 1 and 2, neighbour 3's class, pit 0) refined by a feature;
//! a refined context backs off to the current one as the file's model does.
//!
//! The per-context counts are kept dense, two halves per candidate: about
//! 1.6 GB for level 22 of the 6-pit game. Output, per candidate, for three
//! back-off weights:
//!
//! ```text
//! base                      a=4: 3.0039  a=16: 3.0033  a=64: 3.0032
//! n3 exact                  a=4: 2.9617  a=16: 2.9599  a=64: 2.9593
//! ```
//!
//! (level 22 of awari: the file itself takes 3.053 bits per board, of which
//! 0.031 are the blocks' offsets, checksums and final states and 0.011 the
//! model.) Adding a feature multiplies the contexts, and so the model a file
//! must store and the tables a decoder must keep in its caches; the figures
//! here do not count that.
//!
//!   cargo run --release -p awari-dbformat --example context_entropy -- FILE.awl

use std::path::Path;

use awari_dbformat::file::codec::{class3, neighbour_offsets};
use awari_dbformat::file::LevelReader;
use awari_dbformat::Index;

/// Bits to code `test` with probabilities from `train`, refined contexts of
/// `f` features backing off (weight `alpha`) to their base context.
fn cost(train: &[u32], test: &[u32], f: usize, alphabet: usize, alpha: f64) -> f64 {
    let mut bits = 0.0;
    let row = f * alphabet;
    for (tr, te) in train.chunks(row).zip(test.chunks(row)) {
        let mut base = vec![0.5f64; alphabet];
        for c in tr.chunks(alphabet) {
            for (b, &x) in base.iter_mut().zip(c) {
                *b += f64::from(x);
            }
        }
        let total: f64 = base.iter().sum();
        for (c, t) in tr.chunks(alphabet).zip(te.chunks(alphabet)) {
            let n: f64 = c.iter().map(|&x| f64::from(x)).sum();
            for s in 0..alphabet {
                if t[s] > 0 {
                    let p = (f64::from(c[s]) + alpha * base[s] / total) / (n + alpha);
                    bits -= f64::from(t[s]) * p.log2();
                }
            }
        }
    }
    bits
}

/// A feature refining a context: `(pits, seeds, neighbour 3's symbol)` to a
/// number below the feature's size.
type Feature = fn(&[u8], u32, usize) -> usize;

/// The seeds in some pits.
fn seeds(p: &[u8]) -> usize {
    p.iter().map(|&s| s as usize).sum()
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: context_entropy LEVEL_FILE");
        std::process::exit(2);
    };
    let opened = LevelReader::open(Path::new(&path)).and_then(|r| Ok((r.decode_all()?, r)));
    let (values, reader) = match opened {
        Ok(both) => both,
        Err(e) => {
            eprintln!("context_entropy: {e}");
            std::process::exit(1);
        }
    };
    let id = reader.id();
    if id.rules.pits() != 6 {
        eprintln!("context_entropy: the features are written for 6 pits per side");
        std::process::exit(1);
    }
    let n = id.seeds;
    let index = Index::for_pits(id.rules.pits());
    let alphabet = 2 * n as usize + 1;
    let sym = |i: u64, off: u64| -> usize {
        if off == 0 || off > i {
            alphabet // none
        } else {
            (i32::from(values[(i - off) as usize]) + n as i32) as usize
        }
    };
    // The file's context: neighbours 1 and 2 (or none), neighbour 3's
    // class, pit 0 up to 3 (see `awari_dbformat::file::context`).
    let a1 = alphabet + 1;
    let base_size = a1 * a1 * 10 * 4;
    // "mover share": the mover's part of the seeds, in eighths.
    let variants: Vec<(&str, usize, Feature)> = vec![
        ("base", 1, |_, _, _| 0),
        ("n3 exact", 64, |_, _, s3| s3.min(63)),
        ("pit1 0..3", 4, |p, _, _| (p[1] as usize).min(3)),
        ("mover share 8", 8, |p, n, _| {
            seeds(&p[..6]) * 8 / (n as usize + 1)
        }),
        ("n3 +-7 x pit1 0..3", 64, |p, n, s3| {
            (s3 as i64 - n as i64).clamp(-8, 7).wrapping_add(8) as usize * 4
                + (p[1] as usize).min(3)
        }),
        ("n3 +-3 x share 8", 64, |p, n, s3| {
            (s3 as i64 - n as i64).clamp(-4, 3).wrapping_add(4) as usize * 8
                + seeds(&p[..6]) * 8 / (n as usize + 1)
        }),
        ("pit1 0..3 x share 8", 32, |p, n, _| {
            (p[1] as usize).min(3) * 8 + seeds(&p[..6]) * 8 / (n as usize + 1)
        }),
        ("pit1 0..3 x pit2 0..3", 16, |p, _, _| {
            (p[1] as usize).min(3) * 4 + (p[2] as usize).min(3)
        }),
    ];
    let mut tables: Vec<Vec<u32>> = variants
        .iter()
        .map(|(_, f, _)| vec![0u32; 2 * base_size * f * alphabet])
        .collect();
    for (i, board) in index.boards(n).enumerate() {
        let i = i as u64;
        let pits = board.pits();
        let off = neighbour_offsets(pits);
        let s1 = sym(i, off[0]);
        let s2 = sym(i, off[1]);
        let s3 = sym(i, off[2]);
        let c3 = class3(s3, n) as usize;
        let p0 = (pits[0] as usize).min(3);
        let base = ((p0 * 10 + c3) * a1 + s2) * a1 + s1;
        let v = (i32::from(values[i as usize]) + n as i32) as usize;
        let half = ((i >> 12) & 1) as usize;
        for (t, (_, fsize, f)) in tables.iter_mut().zip(&variants) {
            let ctx = base * fsize + f(pits, n, s3);
            t[(half * base_size * fsize + ctx) * alphabet + v] += 1;
        }
    }
    let boards = reader.boards() as f64;
    for (t, (name, fsize, _)) in tables.iter().zip(&variants) {
        let (a, b) = t.split_at(t.len() / 2);
        let mut line = format!("{name:24}");
        for alpha in [4.0, 16.0, 64.0] {
            let bits = cost(a, b, *fsize, alphabet, alpha) + cost(b, a, *fsize, alphabet, alpha);
            line += &format!("  a={alpha}: {:.4}", bits / boards);
        }
        println!("{line}");
    }
}
