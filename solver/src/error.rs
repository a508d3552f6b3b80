//! The one error type of the solver crate.

use std::path::PathBuf;

use awari_dbformat::memory::PROCESS_BYTES;

use crate::memory::format_size;

/// What can stop a build.
#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    /// A database file could not be read or written, or is not sound.
    #[error(transparent)]
    Db(#[from] awari_dbformat::Error),
    /// A level does not fit in the memory budget.
    #[error(
        "level {seeds} needs about {needed} of memory ({boards} boards x {state_bytes:.3} bytes for the level, plus {lower} for the lower levels it reads and 64 MiB for the rest of the process), but the budget is {budget}; raise --memory or use a machine with more memory"
    )]
    Memory {
        /// The level.
        seeds: u32,
        /// Its boards.
        boards: u64,
        /// The bytes a board of the level needs in memory: what the level
        /// needs beside its lower levels and the rest of the process (its
        /// cells or, on disk, one partition's, its maps, the writer's
        /// memory), by board.
        state_bytes: f64,
        /// What the lower levels take, formatted.
        lower: String,
        /// The total needed, formatted.
        needed: String,
        /// The budget, formatted.
        budget: String,
    },
    /// A rank's share of a level does not fit in its memory budget (under
    /// MPI, each rank has `--memory` of its own).
    #[error(
        "a rank's share of level {seeds} ({boards} boards, one of {ranks} ranks) needs about {needed} of memory ({state_bytes:.3} bytes a board for the share, plus {lower} for its shares of the lower levels and 64 MiB for the rest of the process), but each rank's budget is {budget}; raise --memory or run more ranks"
    )]
    RankMemory {
        /// The level.
        seeds: u32,
        /// The ranks.
        ranks: u64,
        /// The boards of a rank's share.
        boards: u64,
        /// As in [`SolveError::Memory`], for the share.
        state_bytes: f64,
        /// What the rank's shares of the lower levels take, formatted.
        lower: String,
        /// The total needed, formatted.
        needed: String,
        /// The budget, formatted.
        budget: String,
    },
    /// A directory's file system has too little room for what a level
    /// writes there.
    #[error(
        "level {seeds} needs about {needed} free in {} ({what}), but {available} are free; free some space or choose another directory (--db, --work-dir)",
        dir.display()
    )]
    Disk {
        /// The level.
        seeds: u32,
        /// The directory.
        dir: PathBuf,
        /// What the level writes there.
        what: &'static str,
        /// What is needed, formatted.
        needed: String,
        /// What is free, formatted.
        available: String,
    },
    /// A request that makes no sense (for example, more seeds than supported).
    #[error("{0}")]
    Invalid(String),
}

impl SolveError {
    /// [`SolveError::Memory`] for level `seeds` of `boards` boards, which
    /// needs `needed` bytes of memory in all, `lower_bytes` of them for the
    /// lower levels it reads (and [`PROCESS_BYTES`] for the rest of the
    /// process), against a `budget` of bytes.
    pub(crate) fn memory(
        seeds: u32,
        boards: u64,
        lower_bytes: u64,
        needed: u64,
        budget: u64,
    ) -> SolveError {
        let level = needed.saturating_sub(lower_bytes + PROCESS_BYTES);
        SolveError::Memory {
            seeds,
            boards,
            state_bytes: level as f64 / boards.max(1) as f64,
            lower: format_size(lower_bytes),
            needed: format_size(needed),
            budget: format_size(budget),
        }
    }
}
