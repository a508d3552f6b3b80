//! Latency of single-board lookups by where the board lies in its block.
//!
//! A lookup in a context encoding decodes its block from the start up to the
//! board asked for (values depend on earlier ones), so its cost is a fixed
//! part (finding and checking the block) plus a part per board decoded. This
//! prints the median and 10th percentile over 2000 lookups, each in another
//! block, for boards at several offsets into their blocks, with one reader
//! (the file should be in the page cache: run it twice). Every lookup is a
//! miss in the reader's block cache. No timing is asserted.
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
        "{path}: {} boards, {} per block, {}",
        reader.boards(),
        bb,
        reader.encoding_description()
    );
    for offset in [0u64, 16, 256, 1024, 2048, 4000] {
        if offset >= bb {
            continue;
        }
        let mut micros: Vec<f64> = (0..2000u64)
            .map(|k| {
                // Blocks far apart (7919 is prime), never the last (maybe short).
                let block = (k * 7919) % (blocks - 1);
                let started = Instant::now();
                let value = reader.get(block * bb + offset).expect("a valid file");
                std::hint::black_box(value);
                started.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        micros.sort_by(f64::total_cmp);
        println!(
            "offset {offset:5}: median {:7.2} us, p10 {:7.2} us",
            micros[micros.len() / 2],
            micros[micros.len() / 10]
        );
    }
}
