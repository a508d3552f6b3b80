//! Independent verification of a level: every value re-derived from its children
//! with forward moves only, and every non-zero value shown to be reachable in a
//! finite number of moves. Levels of bounds (`--repetition any`), two files
//! per level, are checked by [`bounds`].
//!
//! ## Why two checks
//! The recurrence `v(p) = max over moves [captured - v(child)]` alone cannot tell
//! a draw by endless play from wrong values inside a cycle: two boards that move
//! into each other satisfy it with values `x` and `-x` for any `x`. So the second
//! check proves every non-zero value by a well-founded argument, computed here
//! from the stored values alone (no counters or stages of the solver):
//!
//! - a board with `v = k > 0` is *proven* when one of its moves keeps the value
//!   and makes progress: a capture worth `k` (its child is on a lower level,
//!   verified before), or a quiet move to a child with value `-k` that is proven;
//! - a board with `v = -k < 0` is *proven* when every quiet child (all have values
//!   `>= k` by the recurrence) is proven; a board with no quiet move is proven.
//!
//! Because each proof only uses proofs found earlier, the mover of a proven
//! `k > 0` board can force a gain of at least `k` in finitely many moves, and the
//! opponent of a proven `-k` board can force at least `k`; with the recurrence on
//! every board (which makes the defensive bounds hold, endless play counting 0),
//! every value is exact.
//!
//! ## How the proofs are found
//! One forward pass checks the recurrence and finds the proofs at hand (captures,
//! boards without a quiet move); each board waiting for a proof keeps a small
//! counter (1 for a win, its number of quiet moves for a loss). Then every proven
//! board tells its parents, depth first, and a parent whose counter reaches zero
//! is proven and tells its own parents. The parents are found with the un-move
//! generator, but nothing rests on it: each (parent, pit) it proposes is confirmed
//! by playing the move forward before it counts, and counts once (a move leads
//! to one child, each proven child tells its parents once, and a pair proposed
//! twice for one child is dropped). So a loss's counter reaches zero only when
//! every one of its quiet moves leads to a proven child, and a wrong or missing
//! parent can only leave a board unproven (reported), never prove it.
//! The proofs found do not depend on the order of work (they are the least
//! fixpoint of the rules above), so the result is the same for any thread count.
//!
//! ## Certificates
//! The solver can also write, per level, the generation of its threshold stage
//! in which it decided each board (`awari-solve --certificate`, file format in
//! `awari_dbformat::file::certificate`). With it the proofs are checked in the
//! forward pass, with no search: a board `v = k > 0` is *certified* when a
//! capture keeps `k` or a quiet child worth `-k` has a smaller generation; a
//! board `v = -k < 0` when every quiet child is worth more than `k`, or `k` with
//! a smaller generation. If every board is certified, every board is proven:
//! by induction on `|v|` from the largest down and, within one `|v|`, on the
//! generation, each certified board meets the rules above with proofs found
//! earlier (a win's child is a loss of the same `|v|` and a smaller generation;
//! a loss's children are wins of a larger `|v|`, or of the same `|v|` and a
//! smaller generation). If any board is not certified, the certificate is set
//! aside and the search runs as without one; so the result never depends on the
//! certificate, which is never trusted, only used to skip work.

pub mod bounds;
mod check;
mod first_pass;
mod levels;
mod prover;
mod report;
mod shares;

pub use awari_dbformat::Levels;
pub use check::{check_level, check_level_with, Aids};
pub use report::{LevelCheck, Mismatch};
pub use shares::{check_share, resolve_share, scores_by_shares};

use awari_dbformat::{Board, Index, Rules};

/// Boards a thread takes at a time where a pass goes over the level in
/// index order.
const CHUNK: usize = 1 << 14;

/// The level being checked and what its check reads: its values (index
/// order) and the levels below, which its captures reach.
#[derive(Clone, Copy)]
struct Level<'a> {
    /// The rules of the level.
    rules: Rules,
    /// Its seed count.
    seeds: u32,
    /// The index of its board size.
    index: &'static Index,
    /// Its values, one per stored board in index order.
    values: &'a [i8],
    /// The levels below (at least those its captures reach).
    lower: &'a Levels,
}

impl Level<'_> {
    /// The board of index `i`.
    fn board(&self, i: u64) -> Board {
        self.index
            .unrank(self.seeds, i)
            .expect("index within level")
    }

    /// A mismatch of the board of index `i`, which its children value
    /// `derived`.
    fn mismatch(&self, board: &Board, i: u64, derived: i8, reason: String) -> Mismatch {
        Mismatch {
            seeds: self.seeds,
            index: i,
            board: board.pits().to_vec(),
            stored: self.values[i as usize],
            derived,
            reason,
        }
    }
}
