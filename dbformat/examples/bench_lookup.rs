//! Latency of single-board lookups by where the board lies in its segment.
//!
//! A lookup in a context encoding decodes its segment (its block, when
//! blocks are not cut) from the start up to the board asked for (values
//! depend on earlier ones), so its cost is a fixed part (finding and checking
//! the block) plus a part per board decoded. This prints the median and 10th
//! percentile over 2000 lookups, each in another block, for boards at several
//! offsets into their segments, then for boards drawn uniformly, with one
//! reader (the file should be in the page cache: run it twice). Nearly every
//! lookup is a miss in the reader's cache. No timing is asserted.
//!
//!   cargo run --release -p awari-dbformat --example bench_lookup -- db/awari-p6-n22.awl

use std::path::Path;
use std::time::Instant;

use awari_dbformat::file::LevelReader;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: bench_lookup LEVEL_FILE");
        std::process::exit(2);
    };
    let reader = match LevelReader::open(Path::new(&path)) {
        Ok(reader) => reader,
        Err(e) => {
            eprintln!("bench_lookup: {e}");
            std::process::exit(1);
        }
    };
    let bb = u64::from(reader.block_boards());
    let blocks = reader.blocks();
    if blocks < 2 {
        eprintln!("bench_lookup: {path} has a single block; take a larger level");
        std::process::exit(1);
    }
    println!(
        "{path}: {} boards, {} per block, {} per segment, {}",
        reader.boards(),
        bb,
        reader.segment_boards(),
        reader.encoding_description()
    );
    let unit = u64::from(reader.segment_boards());
    let time = |index: u64| {
        let started = Instant::now();
        let value = reader.get(index).expect("a valid file");
        std::hint::black_box(value);
        started.elapsed().as_secs_f64() * 1e6
    };
    let report = |what: String, mut micros: Vec<f64>| {
        micros.sort_by(f64::total_cmp);
        println!(
            "{what:>20}: median {:7.2} us, p10 {:7.2} us",
            micros[micros.len() / 2],
            micros[micros.len() / 10]
        );
    };
    for offset in [0u64, 16, 256, 1024, 2047, 4095] {
        if offset >= unit {
            continue;
        }
        // Blocks far apart (7919 is prime), never the last (maybe short).
        let micros = (0..2000u64)
            .map(|k| time((k * 7919) % (blocks - 1) * bb + offset))
            .collect();
        report(format!("offset {offset}"), micros);
    }
    // Boards spread evenly at random (a fixed linear congruential sequence).
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let micros = (0..2000)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            time((x >> 11) % reader.boards())
        })
        .collect();
    report("uniform".into(), micros);
}
