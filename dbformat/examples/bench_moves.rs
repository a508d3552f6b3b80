//! Cost of the game-model primitives the solver and the verifier spend their time in,
//! one thread, on a sample of one level's boards:
//! `cargo run --release -p awari-dbformat --example bench_moves -- [SEEDS] [SAMPLE]`.
//!
//! Prints nanoseconds per call and calls per second for: stepping the level
//! iterator, unrank, rank, legal moves, the initial pass's quiet moves and
//! captures, un-move generation (with and without
//! ranking each parent, and the solver's ranked stored parents), and finding
//! the boards of increasing nearby indices (unranking each, or [`BoardFinder`]).
use std::hint::black_box;
use std::time::Instant;

use awari_dbformat::{BoardFinder, Index, Parents, Rules};

fn main() {
    let mut args = std::env::args().skip(1);
    let seeds: u32 = args.next().map_or(20, |a| a.parse().expect("SEEDS"));
    let sample: u64 = args
        .next()
        .map_or(2_000_000, |a| a.parse().expect("SAMPLE"));
    let rules = Rules::default();
    let index = Index::for_pits(rules.pits());
    let size = index.level_size(seeds);
    // An evenly spread sample of indices (a multiplicative stride, so neighbours in
    // the sample are far apart in the level, as in the solver's random accesses).
    let indices: Vec<u64> = (0..sample.min(size))
        .map(|k| (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) % size)
        .collect();
    let boards: Vec<_> = indices
        .iter()
        .map(|&i| index.unrank(seeds, i).expect("in range"))
        .collect();
    let n = boards.len() as f64;
    println!("level {seeds}: {size} boards, sample {}", boards.len());

    let report = |what: &str, started: Instant, calls: f64| {
        let s = started.elapsed().as_secs_f64();
        println!(
            "{what:<28} {:>8.1} ns/call {:>8.2} M calls/s",
            s * 1e9 / calls,
            calls / s / 1e6
        );
    };

    let t = Instant::now();
    let mut count = 0u64;
    for b in index.boards(seeds).take(boards.len()) {
        count += u64::from(black_box(b).pit(0));
    }
    black_box(count);
    report("level iterator step", t, n);

    let t = Instant::now();
    for &i in &indices {
        black_box(index.unrank(seeds, black_box(i)).ok());
    }
    report("unrank", t, n);

    let t = Instant::now();
    for b in &boards {
        black_box(index.rank(black_box(b)));
    }
    report("rank", t, n);

    // Increasing indices with gaps like those between the marked boards of
    // a propagation generation (level 21, counted: 62% within 10 of the last,
    // most of the rest within 1,024).
    let mut near = Vec::with_capacity(boards.len());
    let (mut i, mut x) = (0u64, 1u64);
    while near.len() < boards.len() {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let roll = (x >> 33) % 100;
        let span = match roll {
            0..=61 => 10,
            62..=88 => 64,
            89..=97 => 1024,
            _ => 100_000,
        };
        i = (i + 1 + (x >> 13) % span) % size;
        near.push(i);
    }
    let t = Instant::now();
    for &i in &near {
        black_box(index.unrank(seeds, black_box(i)).ok());
    }
    report("nearby boards: unrank", t, n);
    let t = Instant::now();
    let mut found = BoardFinder::<6>::new(index, seeds);
    for &i in &near {
        black_box(found.board(black_box(i)).ok());
    }
    report("nearby boards: BoardFinder", t, n);

    let t = Instant::now();
    let mut moves = 0usize;
    for b in &boards {
        moves += black_box(rules.legal_moves(black_box(b))).len();
    }
    report("legal moves", t, n);
    println!("{:<28} {:>8.2}", "  moves per board", moves as f64 / n);

    // The solver's initial pass: the quiet moves counted, the captures made.
    let t = Instant::now();
    let (mut quiet, mut captured) = (0usize, 0usize);
    let mut captures = awari_dbformat::MoveList::new();
    for b in &boards {
        quiet +=
            usize::from(rules.quiet_moves_and_captures_sized::<6>(black_box(b), &mut captures));
        captured += black_box(&captures).len();
    }
    report("quiet moves and captures", t, n);
    println!(
        "{:<28} {:>8.2}",
        "  quiet moves per board",
        quiet as f64 / n
    );
    println!(
        "{:<28} {:>8.2}",
        "  captures per board",
        captured as f64 / n
    );

    let t = Instant::now();
    let mut parents = 0usize;
    for b in &boards {
        rules.for_each_unmove(black_box(b), |p, _| {
            black_box(p);
            parents += 1;
        });
    }
    report("un-moves", t, n);
    println!("{:<28} {:>8.2}", "  parents per board", parents as f64 / n);

    let t = Instant::now();
    for b in &boards {
        rules.for_each_unmove(black_box(b), |p, _| {
            black_box(index.rank(&p));
        });
    }
    report("un-moves + rank parents", t, n);

    // The solver's form: stored parents ranked as they are made, for the
    // 6-pit game's constant rows.
    let finder = Parents::new(rules);
    let t = Instant::now();
    let mut stored = 0usize;
    for b in &boards {
        finder.for_each::<6>(black_box(b.packed()), |q, parent| {
            black_box((q, parent));
            stored += 1;
        });
    }
    report("stored parents (Parents)", t, n);
    println!(
        "{:<28} {:>8.2}",
        "  stored parents per board",
        stored as f64 / n
    );
}
