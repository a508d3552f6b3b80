//! What a search answers: a value, what is proven of it, and a game's result.

use awari_dbformat::{Outcome, Score};

/// What a search's value is known to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The value is the position's value, proven with exact leaves.
    Exact,
    /// The position's value is at least the value (proven).
    Lower,
    /// The position's value is at most the value (proven).
    Upper,
    /// The value rests on estimated leaves: nothing is proven.
    Estimate,
}

impl Bound {
    /// The name used in JSON: `"exact"`, `"lower"`, `"upper"` or `"estimate"`.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Exact => "exact",
            Bound::Lower => "lower",
            Bound::Upper => "upper",
            Bound::Estimate => "estimate",
        }
    }
}

/// The answer of a search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// The value for the mover, as found at the last completed depth.
    pub value: Score,
    /// What is proven of [`SearchResult::value`].
    pub bound: Bound,
    /// The last depth completed, in plies.
    pub depth: u32,
    /// Positions searched, by all threads.
    pub nodes: u64,
    /// The pit of the best move found, if the position has a move.
    pub best: Option<u8>,
    /// The principal variation (pits), from the transposition table.
    pub pv: Vec<u8>,
    /// Seconds spent.
    pub seconds: f64,
}

/// The result of a game for a split of the captured seeds, and whether the
/// search proved it (see [`Searcher::prove_outcome`](super::Searcher::prove_outcome)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutcomeProof {
    /// The result for the mover.
    pub outcome: Outcome,
    /// True when proven with exact leaves.
    pub proven: bool,
}

/// A search's answer for a game: the search, and the result for a split of
/// the captured seeds (see [`Searcher::answer`](super::Searcher::answer)).
#[derive(Clone, Debug)]
pub struct Answer {
    /// The search of the position.
    pub search: SearchResult,
    /// The result of the game for the mover.
    pub outcome: Outcome,
    /// True when that result is proven with exact leaves.
    pub outcome_proven: bool,
}
