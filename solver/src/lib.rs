//! Builds perfect-play Awari databases by retrograde analysis, level by level.
//!
//! - [`cells`]: the packed state of the level being solved (value and
//!   counter of each board, six boards to a word).
//! - [`retro`]: the retrograde loop that solves one level (thresholds from the
//!   extremes inwards, counters, generations of un-moves), in parallel.
//! - [`lower`]: the finished lower levels, decoded, as the loop reads them.
//! - [`stats`]: the number of boards with each value, stored and over all boards.
//! - [`build`]: the levels of a plan, written to a directory, resumable.
//! - [`memory`]: the memory budget.
//!
//! ```
//! use awari_dbformat::{Rules, Index};
//! use awari_solver::{lower::LowerLevels, solve_in_memory};
//!
//! // Every level of the 6-pit game up to 4 seeds, in memory.
//! let levels = solve_in_memory(Rules::default(), 4);
//! assert_eq!(levels[1].len() as u64, Index::for_pits(6).level_size(1));
//! ```

pub mod build;
pub mod cells;
pub mod error;
pub mod lists;
pub mod lower;
pub mod memory;
pub mod retro;
pub mod stats;

pub use error::SolveError;

use std::sync::Arc;

use awari_dbformat::Rules;

/// Solves every level from 0 to `max_seeds` in memory and returns their values
/// (index order). For tests and small experiments; the build writes files.
pub fn solve_in_memory(rules: Rules, max_seeds: u32) -> Vec<Arc<awari_dbformat::huge::Values>> {
    solve_levels_within(rules, max_seeds, None)
        .into_iter()
        .map(|(values, _)| values)
        .collect()
}

/// Like [`solve_in_memory`], with frontier lists of at most `list_entries`
/// boards per generation (`None`: the default share, as with room to
/// spare); each level also with its free bits ([`retro::SolvedLevel::free`]).
pub fn solve_levels_within(
    rules: Rules,
    max_seeds: u32,
    list_entries: Option<u64>,
) -> Vec<(Arc<awari_dbformat::huge::Values>, Vec<u64>)> {
    solve_levels_in(None, rules, max_seeds, list_entries)
}

/// Like [`solve_levels_within`], every level in the cell layout `layout`
/// (`None`: the smallest that holds the level, as the build does), so that
/// tests can solve small levels in the wide layout of big levels too.
///
/// # Panics
/// When `layout` does not hold a level up to `max_seeds`.
pub fn solve_levels_in(
    layout: Option<cells::CellLayout>,
    rules: Rules,
    max_seeds: u32,
    list_entries: Option<u64>,
) -> Vec<(Arc<awari_dbformat::huge::Values>, Vec<u64>)> {
    let index = awari_dbformat::Index::for_pits(rules.pits());
    let mut lower = lower::LowerLevels::new(rules.pits());
    let mut out = Vec::new();
    let hidden = indicatif::ProgressBar::hidden();
    for n in 0..=max_seeds {
        let lists =
            list_entries.unwrap_or_else(|| retro::default_list_entries(index.level_size(n)));
        let layout = layout.unwrap_or_else(|| cells::CellLayout::for_seeds(n));
        let solved = retro::solve_level_in(layout, rules, n, &lower, &hidden, false, lists);
        let values = Arc::new(solved.values);
        lower.insert(n, values.clone());
        out.push((values, solved.free.as_u64().to_vec()));
    }
    out
}
