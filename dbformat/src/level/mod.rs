//! Levels as the solver, the verifier and the probe hold them: one number
//! per stored board in index order.
//!
//! A capture takes at least two seeds off the board, so the boards of level
//! `n` (the boards with `n` seeds) lead by quiet moves to boards of level
//! `n` and by captures to levels `0..=n-2` only
//! ([`levels_captures_reach`]). Everything that values a board from its
//! children reads those levels, decoded:
//!
//! - [`Values`] and [`Generations`]: one signed byte (a score) or one `u16`
//!   (a certificate's generation) per board, in huge pages.
//! - [`Levels`]: decoded levels by seed count, with a board's score and the
//!   place where it is kept (a [`Slot`], to prefetch it); a level kept long
//!   beside others may be held in fewer bits ([`PackedScores`]).
//! - [`one_ply`]: the value of any board from its children's values.
//! - [`repetition`]: endless play under other rules than the even split,
//!   and the [`Bounds`] that hold under all of them ([`one_ply_bounds`]).
//! - [`scores`]: a level decoded into its scores, in memory or in a file of
//!   scores, lower bounds resolved through the captures.

mod levels;
mod one_ply;
mod packed;
pub mod repetition;
pub mod scores;
mod values;

pub use levels::Levels;
pub use one_ply::one_ply;
pub use packed::{PackedScores, Slot};
pub use repetition::{one_ply_bounds, Bound, Bounds, Repetition};

pub use values::{Generations, PerBoard, Plain, Values};

use std::ops::Range;

/// The levels that a capture from a board of level `seeds` can reach:
/// `0..seeds - 1` (a capture takes two seeds or more; empty below 2).
#[inline]
pub fn levels_captures_reach(seeds: u32) -> Range<u32> {
    0..seeds.saturating_sub(1)
}

/// True when a capture from a board of level `from` can reach level `to`
/// (`to` is in [`levels_captures_reach`]`(from)`): the levels a level reads.
#[inline]
pub fn capture_reaches(from: u32, to: u32) -> bool {
    to + 2 <= from
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_take_two_seeds_or_more() {
        assert!(levels_captures_reach(0).is_empty());
        assert!(levels_captures_reach(1).is_empty());
        assert_eq!(levels_captures_reach(2), 0..1);
        assert_eq!(levels_captures_reach(24), 0..23);
        for from in 0..30 {
            for to in 0..30 {
                assert_eq!(
                    capture_reaches(from, to),
                    levels_captures_reach(from).contains(&to)
                );
            }
        }
    }
}
