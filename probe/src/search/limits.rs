//! How far and how long a search goes, and how it estimates the horizon.

use std::time::Duration;

use awari_dbformat::Board;

/// How far and how long to search.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Stop after this much time (checked every few thousand positions).
    pub time: Option<Duration>,
    /// Stop after this depth in plies.
    pub depth: Option<u32>,
    /// Bytes of the transposition table (rounded down to a power of two of
    /// 16-byte entries).
    pub hash_bytes: usize,
    /// Threads searching together.
    pub threads: usize,
    /// How positions at the horizon are estimated.
    pub evaluation: Evaluation,
}

/// How a position at the search's horizon is estimated (an estimate is never
/// proven, whatever it is).
///
/// The default, `Weighted(FITTED)` (fitted to the databases' values),
/// scored about 60% against Aalina at 100 ms a move where `SeedsOnSide(4)`
/// scored 30% (`scripts/match.sh`, docs/performance.md). `SeedsOnSide(4)`
/// had won 27 of 44 points against `Captured` at 100 ms a move,
/// `SeedsOnSide(8)` 28 of 44, `SeedsOnSide(2)` 16 of 32
/// (`probe/examples/match.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluation {
    /// 0: the seeds captured along the way are the whole estimate.
    Captured,
    /// Also the seeds on the mover's side minus those on the opponent's,
    /// divided by the number given.
    SeedsOnSide(i16),
    /// A weighted sum of the board's [`features`], in sixteenths of a seed.
    Weighted([i16; FEATURES]),
}

/// How many [`features`] a board has.
pub const FEATURES: usize = 5;

/// The weights of [`Evaluation::Weighted`] fitted by least squares to the
/// databases' values of 60,000 random abapa boards of levels 24..=28
/// (`probe/examples/fit_evaluation.rs`).
pub const FITTED: [i16; FEATURES] = [-2, -48, -26, 43, 23];

/// What an evaluation weighs, each the mover's count minus the opponent's:
/// the seeds on its side, its empty houses, its houses of one or two seeds
/// (the ones a capture takes), its houses of more than a lap of seeds (a
/// *kroo*, which sows around the board), and 1 (the move).
pub fn features(board: &Board) -> [i16; FEATURES] {
    let lap = board.len() as u8;
    let count = |row: &[u8]| {
        let mut f = [0i16; 4];
        for &n in row {
            f[0] += i16::from(n);
            f[1] += i16::from(n == 0);
            f[2] += i16::from(n == 1 || n == 2);
            f[3] += i16::from(n > lap);
        }
        f
    };
    let (m, o) = (count(board.mover_row()), count(board.opponent_row()));
    [m[0] - o[0], m[1] - o[1], m[2] - o[2], m[3] - o[3], 1]
}

impl Default for Evaluation {
    /// `Weighted(FITTED)`, the best measured.
    fn default() -> Evaluation {
        Evaluation::Weighted(FITTED)
    }
}

impl Evaluation {
    /// The estimate of `board` for its mover.
    pub fn of(self, board: &Board) -> i16 {
        match self {
            Evaluation::Captured => 0,
            Evaluation::SeedsOnSide(divisor) => {
                let side = |row: &[u8]| row.iter().map(|&n| i16::from(n)).sum::<i16>();
                (side(board.mover_row()) - side(board.opponent_row())) / divisor.max(1)
            }
            Evaluation::Weighted(weights) => {
                let f = features(board);
                let sum: i32 = (0..FEATURES)
                    .map(|k| i32::from(weights[k]) * i32::from(f[k]))
                    .sum();
                // Rounded to the nearest seed.
                ((sum + 8).div_euclid(16)) as i16
            }
        }
    }
}

impl Default for Limits {
    /// Two seconds, no depth limit, 64 MiB of table, one thread per core.
    fn default() -> Limits {
        Limits {
            time: Some(Duration::from_secs(2)),
            depth: None,
            hash_bytes: 64 << 20,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            evaluation: Evaluation::default(),
        }
    }
}
