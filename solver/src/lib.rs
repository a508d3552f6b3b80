//! Builds perfect-play Awari databases by retrograde analysis, level by level.
//!
//! - [`cells`]: the packed state of the level being solved (value and
//!   counter of each board, six boards to a word).
//! - [`retro`]: the retrograde loop that solves one level (thresholds from the
//!   extremes inwards, counters, generations of un-moves), in parallel and in
//!   partitions.
//! - the finished lower levels are `awari_dbformat::Levels`, decoded, as the loop reads them.
//! - [`stats`]: the number of boards with each value, stored and over all boards.
//! - [`build`]: the levels of a plan, written to a directory, resumable.
//! - [`memory`]: the memory budget.
//!
//! ```
//! use awari_dbformat::{Index, Rules};
//! use awari_solver::solve_in_memory;
//!
//! // Every level of the 6-pit game up to 4 seeds, in memory.
//! let levels = solve_in_memory(Rules::default(), 4);
//! assert_eq!(levels[1].len() as u64, Index::for_pits(6).level_size(1));
//! ```

pub mod bounds;
pub mod build;
pub mod cells;
mod error;
pub(crate) mod lists;
pub mod memory;
pub mod retro;
pub mod stats;

pub use error::SolveError;

use std::sync::Arc;

use awari_dbformat::Rules;

/// Solves every level from 0 to `max_seeds` in memory and returns their values
/// (index order). For tests and small experiments; the build writes files.
pub fn solve_in_memory(rules: Rules, max_seeds: u32) -> Vec<Arc<awari_dbformat::level::Values>> {
    solve_levels(rules, max_seeds, &retro::SolveOptions::default())
        .into_iter()
        .map(|(values, _)| values)
        .collect()
}

/// Like [`solve_in_memory`], every level solved with `options`; each level
/// also with its free bits ([`retro::SolvedLevel::free`]). The options
/// change the time and the memory, never the result: the tests solve with
/// short lists, wide cells and many partitions and compare.
///
/// # Panics
/// When `options.layout` does not hold a level up to `max_seeds`, or a
/// work directory in `options` fails ([`retro::solve_level`]).
pub fn solve_levels(
    rules: Rules,
    max_seeds: u32,
    options: &retro::SolveOptions,
) -> Vec<(Arc<awari_dbformat::level::Values>, Vec<u64>)> {
    let mut lower = awari_dbformat::Levels::new(rules.pits());
    let mut out = Vec::new();
    let hidden = indicatif::ProgressBar::hidden();
    for n in 0..=max_seeds {
        let solved = retro::solve_level(rules, n, &lower, &hidden, options)
            .unwrap_or_else(|err| panic!("level {n}: {err}"));
        let values = Arc::new(solved.values);
        lower.insert(n, values.clone());
        out.push((values, solved.free.as_u64().to_vec()));
    }
    out
}
