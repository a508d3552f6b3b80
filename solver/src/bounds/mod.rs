//! Levels under `--repetition any`: for each board a lower and an upper
//! bound that hold under every rule ending endless play by sharing the seeds
//! on the board (see `awari_dbformat::level::repetition` for what they mean).
//!
//! The solver of a level is the threshold algorithm of [`crate::retro`] with
//! the two bounds decided apart, in plain arrays in memory (5 bytes a board;
//! `docs/algorithm.md`, "Bounds under any repetition rule"):
//!
//! - `A_k`, the boards whose lower bound is at least k: a board joins when a
//!   capture (or its end) gives a lower bound of k, or a quiet child joins
//!   `B_-k`;
//! - `B_-k`, the boards whose upper bound is at most -k: a board joins when
//!   its captures give at most -k and every quiet child is in `A_k`.
//!
//! Stage k, for k = n, n-1, ..., -n+1, grows both (seeding, then
//! generations of un-moves). Unlike the even split, the stages go on below
//! zero, and a board joins `A` and `B` once each: a board in `A_k` still
//! counts its quiet children for `B`. A board never in `A` has the lower
//! bound -n, never in `B` the upper bound +n. Each quiet edge is followed
//! twice, so a level costs O(boards x moves), in 2n seeding sweeps.
//!
//! The even-split solver's partitions, cells on disk and ranks are not
//! used here: a level of bounds is solved in memory in one process.

mod build;
mod level;

pub use build::{bound_stats_path, build_bounds, plan_bounds, BoundReport};
pub use level::{
    solve_bound_level, solve_bounds_in_memory, BoundLevels, SolvedBounds, STATE_BYTES_PER_BOARD,
};
