//! Benchmark of the level file format on real values.
//!
//! For every level found in `--db DIR` (level files `*.awl`, or published
//! `scores.N` files), the stored values (scores or lower bounds, kept as
//! such) are rewritten with the options given into
//! `--out DIR` and measured: boards, bytes, bits per board on disk, write speed
//! (boards per second, all threads), and the latency of random single-board
//! lookups:
//! - cold: the file evicted from the page cache (posix_fadvise) and a fresh
//!   reader (each lookup reads its block from disk);
//! - warm: the file in the page cache, a fresh reader, lookups spread over the
//!   level (nearly every one decompresses a block);
//! - hit: lookups of boards whose block is already decoded in the reader's cache.
//!
//! Latencies are medians (a busy machine makes means jumpy).
//!
//! Every lookup is checked against the values written. No timing is asserted.
//!
//! Example:
//!   cargo run --release -p awari-dbformat --example bench_format -- \
//!       --db /tmp/awari-db --out /tmp/awari-bench --max-seeds 24

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use awari_dbformat::file::{
    scan_dir, write_level_as, EncodingChoice, LevelId, LevelReader, Stored, WriteOptions,
};
use awari_dbformat::Rules;

struct Args {
    db: PathBuf,
    out: PathBuf,
    max_seeds: u32,
    min_seeds: u32,
    options: WriteOptions,
    choice: EncodingChoice,
    lookups: usize,
    keep: bool,
}

fn usage() -> ! {
    eprintln!(
        "usage: bench_format --db DIR [--out DIR] [--min-seeds N] [--max-seeds N] \
         [--block-boards B] [--segment-boards S] [--zstd-level L] [--encoding auto|raw|rank1|rank2|rank3|ans1|ans2|ans3] \
         [--lookups K] [--keep]"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut args = Args {
        db: PathBuf::new(),
        out: std::env::temp_dir().join("awari-bench-format"),
        max_seeds: 24,
        min_seeds: 0,
        options: WriteOptions::default(),
        choice: EncodingChoice::Auto,
        lookups: 2000,
        keep: false,
    };
    let mut segment = None;
    let mut block_given = false;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--db" => args.db = value().into(),
            "--out" => args.out = value().into(),
            "--max-seeds" => args.max_seeds = value().parse().unwrap_or_else(|_| usage()),
            "--min-seeds" => args.min_seeds = value().parse().unwrap_or_else(|_| usage()),
            "--block-boards" => {
                args.options.block_boards = value().parse().unwrap_or_else(|_| usage());
                block_given = true;
            }
            "--segment-boards" => segment = Some(value().parse().unwrap_or_else(|_| usage())),
            "--zstd-level" => args.options.zstd_level = value().parse().unwrap_or_else(|_| usage()),
            "--lookups" => args.lookups = value().parse().unwrap_or_else(|_| usage()),
            "--keep" => args.keep = true,
            "--encoding" => {
                args.choice = match value().as_str() {
                    "auto" => EncodingChoice::Auto,
                    "raw" => EncodingChoice::Raw,
                    "rank1" => EncodingChoice::ContextRank(1),
                    "rank2" => EncodingChoice::ContextRank(2),
                    "rank3" => EncodingChoice::ContextRank(3),
                    "ans1" => EncodingChoice::ContextAns(1),
                    "ans2" => EncodingChoice::ContextAns(2),
                    "ans3" => EncodingChoice::ContextAns(3),
                    _ => usage(),
                }
            }
            _ => usage(),
        }
    }
    if args.db.as_os_str().is_empty() {
        usage();
    }
    // Another block size without a segment size: blocks not cut.
    match segment {
        Some(s) => args.options.segment_boards = s,
        None if block_given => args.options.segment_boards = args.options.block_boards,
        None => {}
    }
    args
}

/// The levels to measure, with a way to load their values.
enum Source {
    Level(PathBuf),
    Scores(PathBuf),
}

fn sources(args: &Args) -> Vec<(LevelId, Source)> {
    let mut out: Vec<(LevelId, Source)> = scan_dir(&args.db)
        .unwrap_or_else(|e| fail(&e.to_string()))
        .into_iter()
        .map(|(id, p)| (id, Source::Level(p)))
        .collect();
    if out.is_empty() {
        // Published files: scores.N, one signed byte per board, awari rules, P = 6.
        for n in 0..=64u32 {
            let p = args.db.join(format!("scores.{n}"));
            if p.is_file() {
                out.push((LevelId::new(Rules::default(), n), Source::Scores(p)));
            }
        }
    }
    out.retain(|(id, _)| (args.min_seeds..=args.max_seeds).contains(&id.seeds));
    out
}

fn fail(msg: &str) -> ! {
    eprintln!("bench_format: {msg}");
    std::process::exit(2)
}

/// The stored values of a level, and what they are.
fn load(id: LevelId, source: &Source) -> (Vec<i8>, Stored) {
    match source {
        Source::Level(p) => LevelReader::open_expecting(p, id)
            .and_then(|r| Ok((r.decode_all()?.to_vec(), r.stored())))
            .unwrap_or_else(|e| fail(&e.to_string())),
        Source::Scores(p) => {
            let bytes = std::fs::read(p).unwrap_or_else(|e| fail(&format!("{}: {e}", p.display())));
            if bytes.len() as u64 != id.boards() {
                fail(&format!(
                    "{}: {} bytes, expected {}",
                    p.display(),
                    bytes.len(),
                    id.boards()
                ));
            }
            (bytes.into_iter().map(|b| b as i8).collect(), Stored::Scores)
        }
    }
}

/// Drops the file's pages from the page cache (Linux; a no-op elsewhere).
fn evict(path: &Path) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        if let Ok(f) = std::fs::File::open(path) {
            // SAFETY: a plain system call on a file descriptor we own.
            unsafe {
                libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
}

/// A small deterministic generator for lookup positions.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (((self.0 >> 33) as u128 * n as u128) >> 31) as u64
    }
}

/// Median latency of lookups of `indices`, each checked against `values`.
fn time_lookups(reader: &LevelReader, indices: &[u64], values: &[i8]) -> Duration {
    let mut times = Vec::with_capacity(indices.len());
    for &i in indices {
        let start = Instant::now();
        let got = reader.get(i).unwrap_or_else(|e| fail(&e.to_string()));
        times.push(start.elapsed());
        assert_eq!(got.get(), values[i as usize], "lookup of board {i}");
    }
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn micros(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e6)
}

fn main() {
    let args = parse_args();
    let levels = sources(&args);
    if levels.is_empty() {
        fail(&format!(
            "no level files or scores.N files in {}",
            args.db.display()
        ));
    }
    std::fs::create_dir_all(&args.out).unwrap_or_else(|e| fail(&e.to_string()));
    println!(
        "# block_boards={} segment_boards={} zstd_level={} encoding={:?} lookups={} threads={}",
        args.options.block_boards,
        args.options.segment_boards,
        args.options.zstd_level,
        args.choice,
        args.lookups,
        rayon::current_num_threads()
    );
    println!(
        "{:>5} {:>12} {:>12} {:>6} {:>16} {:>10} {:>12} {:>9} {:>9} {:>9} {:>11}",
        "seeds",
        "boards",
        "bytes",
        "bits",
        "encoding",
        "write_s",
        "boards/s",
        "cold_us",
        "warm_us",
        "hit_us",
        "decode_MB/s"
    );
    let (mut total_boards, mut total_bytes) = (0u64, 0u64);
    let mut per_level_bits = Vec::new();
    let mut rng = Lcg(0x5eed);
    for (id, source) in &levels {
        let (values, stored) = load(*id, source);
        let start = Instant::now();
        let path = write_level_as(
            &args.out,
            *id,
            &values,
            stored,
            WriteOptions {
                encoding: args.choice,
                ..args.options
            },
        )
        .unwrap_or_else(|e| fail(&e.to_string()));
        let write = start.elapsed();
        let boards = values.len() as u64;

        let indices: Vec<u64> = (0..args.lookups).map(|_| rng.below(boards)).collect();
        evict(&path);
        let cold_reader = LevelReader::open(&path).unwrap_or_else(|e| fail(&e.to_string()));
        let cold = time_lookups(&cold_reader, &indices, &values);

        let reader = LevelReader::open(&path).unwrap_or_else(|e| fail(&e.to_string()));
        let start = Instant::now();
        let all = reader.decode_all().unwrap_or_else(|e| fail(&e.to_string()));
        let decode = start.elapsed();
        assert!(
            all[..] == values[..],
            "decode_all differs from the values written"
        );
        let warm_indices: Vec<u64> = (0..args.lookups).map(|_| rng.below(boards)).collect();
        let warm_reader = LevelReader::open(&path).unwrap_or_else(|e| fail(&e.to_string()));
        let warm = time_lookups(&warm_reader, &warm_indices, &values);
        // Cache hits: boards of one block, already decoded.
        let bb = u64::from(reader.block_boards());
        let first = warm_indices[0] / bb * bb;
        let last = (first + bb - 1).min(boards - 1);
        let _ = warm_reader.get(last);
        let hot: Vec<u64> = (0..args.lookups as u64)
            .map(|i| first + i * 7 % (last - first + 1))
            .collect();
        let hit = time_lookups(&warm_reader, &hot, &values);

        let bytes = reader.file_bytes();
        let bits = bytes as f64 * 8.0 / boards as f64;
        total_boards += boards;
        total_bytes += bytes;
        per_level_bits.push(bits);
        println!(
            "{:>5} {:>12} {:>12} {:>6.3} {:>16} {:>10.3} {:>12.0} {:>9} {:>9} {:>9} {:>11.0}",
            id.seeds,
            boards,
            bytes,
            bits,
            reader.encoding_description(),
            write.as_secs_f64(),
            boards as f64 / write.as_secs_f64(),
            micros(cold),
            micros(warm),
            micros(hit),
            boards as f64 / decode.as_secs_f64() / 1e6,
        );
        if !args.keep {
            let _ = std::fs::remove_file(&path);
        }
    }
    println!(
        "# levels {}..={}: {} boards, {} bytes: {:.3} bits per board over all boards; \
         unweighted mean of the levels {:.3}",
        levels.first().map_or(0, |l| l.0.seeds),
        levels.last().map_or(0, |l| l.0.seeds),
        total_boards,
        total_bytes,
        total_bytes as f64 * 8.0 / total_boards as f64,
        per_level_bits.iter().sum::<f64>() / per_level_bits.len() as f64
    );
}
