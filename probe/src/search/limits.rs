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
/// The default, `SeedsOnSide(4)`, won 27 of 44 points (+4.1 and +2.6 seeds a
/// game in two runs) against `Captured` at 100 ms a move, `SeedsOnSide(8)`
/// 28 of 44 (+1.8, -0.6), `SeedsOnSide(2)` 16 of 32 (+0.4):
/// `probe/examples/match.rs`, docs/performance.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluation {
    /// 0: the seeds captured along the way are the whole estimate.
    Captured,
    /// Also the seeds on the mover's side minus those on the opponent's,
    /// divided by the number given.
    SeedsOnSide(i16),
}

impl Default for Evaluation {
    /// `SeedsOnSide(4)`, the best measured.
    fn default() -> Evaluation {
        Evaluation::SeedsOnSide(4)
    }
}

impl Evaluation {
    /// The estimate of `board` for its mover.
    pub(super) fn of(self, board: &Board) -> i16 {
        match self {
            Evaluation::Captured => 0,
            Evaluation::SeedsOnSide(divisor) => {
                let side = |row: &[u8]| row.iter().map(|&n| i16::from(n)).sum::<i16>();
                (side(board.mover_row()) - side(board.opponent_row())) / divisor.max(1)
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
