//! Finding the boards of many indices of one level, when they come mostly in
//! increasing order and close together: the marked boards a solver visits in
//! a generation, found by scanning its per-board state.
//!
//! [`Index::unrank`] places all `2P` pits. But the boards that share an
//! opponent's row are consecutive in the index order (the mover's pits are
//! the low ones), `C(r + P - 1, P - 1)` of them for `r` seeds in the mover's
//! row, some 3,000 on the large levels of the 6-pit game. A board in the row
//! of the last one found needs only the mover's `P` pits placed, and one a
//! few places further on only a few steps of the level's order.

use crate::error::Result;
use crate::game::board::{seeds_packed, Board};
use crate::index::{step_packed, Index};

/// Finds boards of one level by index, for `P` pits per side; see the module
/// docs. Any order of indices gives the right boards; increasing and nearby
/// ones are the fast case.
pub struct BoardFinder<'a, const P: usize> {
    index: &'a Index,
    seeds: u32,
    /// The opponent's row of the last board found, if any.
    row: Option<Row>,
}

/// The run of boards of a level that share an opponent's row.
#[derive(Clone, Copy, Debug)]
struct Row {
    /// The index of the row's first board.
    first: u64,
    /// How many boards the row holds.
    len: u64,
    /// The opponent's pits, packed ([`Board::packed`]; the mover's bytes 0).
    opponent: u128,
    /// The seeds in the mover's row.
    mover_seeds: usize,
    /// The last board found in the row: its index and its pits.
    at: u64,
    pits: u128,
}

impl<'a, const P: usize> BoardFinder<'a, P> {
    /// Steps of the level's order taken rather than placing the mover's
    /// pits (a step is a few instructions on the packed board; placing the
    /// pits costs about as much as four of them).
    const MAX_STEPS: u64 = 4;

    /// A finder for the level of `seeds` seeds of `index`.
    ///
    /// # Panics
    /// In debug builds, when `P` is not the index's pits per side.
    pub fn new(index: &'a Index, seeds: u32) -> BoardFinder<'a, P> {
        debug_assert_eq!(usize::from(index.per_side()), P);
        BoardFinder {
            index,
            seeds,
            row: None,
        }
    }

    /// The board with index `i` in the level; the same as
    /// [`Index::unrank`]`(seeds, i)`.
    ///
    /// # Errors
    /// As [`Index::unrank`]: an index past the level's end, a level beyond
    /// `MAX_SEEDS`.
    #[inline]
    pub fn board(&mut self, i: u64) -> Result<Board> {
        if let Some(row) = &mut self.row {
            if i.wrapping_sub(row.first) < row.len {
                let ahead = i.wrapping_sub(row.at);
                if ahead <= Self::MAX_STEPS {
                    // Within the row every board is stored, and stepping
                    // never leaves the mover's pits.
                    for _ in 0..ahead {
                        row.pits = step_packed(row.pits);
                    }
                } else {
                    let mover = self
                        .index
                        .unrank_mover_packed::<P>(i - row.first, row.mover_seeds);
                    row.pits = row.opponent | mover;
                }
                row.at = i;
                return Ok(Board::from_packed(row.pits, P as u8));
            }
        }
        let board = self.index.unrank(self.seeds, i)?;
        let pits = board.packed();
        let mover_row = Board::row_mask(P as u32);
        let mover_seeds = seeds_packed(pits & mover_row);
        let within = self.index.mover_walk_packed::<P>(pits, mover_seeds);
        self.row = Some(Row {
            first: i - within,
            len: self.index.mover_rows(mover_seeds),
            opponent: pits & !mover_row,
            mover_seeds,
            at: i,
            pits,
        });
        Ok(board)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Indices in increasing order with gaps of every size, then some going
    /// back, then past the end: the finder gives unrank's boards and errors.
    fn finds_what_unrank_finds<const P: usize>(seeds: u32) {
        let index = Index::for_pits(P as u8);
        let size = index.level_size(seeds);
        let mut finder = BoardFinder::<P>::new(index, seeds);
        let mut i = 0u64;
        let mut gap = 0u64;
        let mut asked = Vec::new();
        while i < size {
            asked.push(i);
            gap = (gap * 7 + 3) % 53; // 0, 3, 24, 12, ...: steps, rows, jumps
            i += gap * gap / 8;
        }
        asked.extend([size / 2, size / 3, 0, size - 1, size / 2 + 1]);
        for &i in &asked {
            assert_eq!(
                finder.board(i).unwrap(),
                index.unrank(seeds, i).unwrap(),
                "P={P} n={seeds} index {i}"
            );
        }
        assert!(finder.board(size).is_err());
        assert_eq!(
            finder.board(size - 1).unwrap(),
            index.unrank(seeds, size - 1).unwrap()
        );
    }

    #[test]
    fn finds_what_unrank_finds_for_every_size() {
        for seeds in [1, 2, 5, 9] {
            finds_what_unrank_finds::<2>(seeds);
            finds_what_unrank_finds::<3>(seeds);
            finds_what_unrank_finds::<4>(seeds);
            finds_what_unrank_finds::<6>(seeds);
            finds_what_unrank_finds::<8>(seeds.min(5));
        }
        finds_what_unrank_finds::<6>(14);
    }
}
