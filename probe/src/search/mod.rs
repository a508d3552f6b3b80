//! A search for positions above the levels built: iterative-deepening
//! alpha-beta (principal variation search) with the databases at its leaves,
//! saying which of its answers are proven.
//!
//! ## Values and proofs
//! Values are those of the databases: what the mover will still capture
//! minus what the opponent will, with perfect play. A leaf is *exact* when the
//! game is over or its seed count is covered by a level (read from the
//! [`Tablebase`](crate::Tablebase)); any other leaf at the search horizon gets an estimate
//! ([`Evaluation`]; by default a quarter of the seeds on the mover's side
//! minus the opponent's, the captured difference along the way being already
//! in the value), and a position that repeats one on the current line gets
//! 0, the value of endless play, but never as a proven one: a player may
//! still leave the
//! cycle. What is proven of such a position is only that its value lies
//! within plus or minus its seeds, which decides a window beyond them.
//!
//! Every result of `search(position, alpha, beta)` carries a flag *proven*:
//! when set, the result `v` holds for the true value `t`: `t >= v` when
//! `v >= beta` (a lower bound), `t <= v` when `v <= alpha` (an upper bound),
//! and `t == v` in between. A cut-off is proven when the move that made it is;
//! any other result when every move's result is. This composes through
//! negamax, so the root's flag is a proof that rests only on exact leaves. A
//! full-window result that is proven is the exact value; a null-window search
//! at `v` that is proven shows a bound ("at least `v`").
//!
//! ## Search
//! Principal variation search with a transposition table (`--hash`), whose
//! best move is tried first, then captures by size, two killer moves per ply
//! and a history of pits. Several threads search the same tree and share the
//! table (Lazy SMP); the first thread's completed iterations are the answer.
//! A table entry is used at any depth when proven (a proof does not depend on
//! the depth it was found at), else only at its own depth or less.

mod game;
mod limits;
mod line;
mod result;
mod run;
mod searcher;
mod table;
mod think;
mod worker;

pub use game::{Game, RepetitionRule, MAX_CONTEMPT};
pub use limits::{features, Evaluation, Limits, FEATURES, FITTED};
pub use result::{Answer, Bound, OutcomeProof, SearchResult};
pub use searcher::Searcher;
pub use think::Iteration;

/// Values beyond any score, for open windows.
const INFINITE: i16 = 1000;

/// The deepest iteration.
const MAX_DEPTH: u32 = 120;
