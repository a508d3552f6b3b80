//! The stored parents of a board with their indices: what a retrograde
//! analysis asks for each board it decides.
//!
//! [`Parents::for_each`] makes the same parents as [`Rules::for_each_unmove`]
//! (the tests check it), ranks each one as it is made, and leaves out the
//! parents that are not stored. It is written for one board size at a time
//! (`P`, a constant): the rows are then constant masks, every loop over pits
//! unrolls, and a board never leaves its 128-bit word. In the solver's
//! propagation this is the work done for every decided board.
//!
//! The un-moves are found from bit masks of the board rather than tried one
//! by one: from an empty pit, sowing `s` seeds (fewer than 2P) can be undone
//! exactly when the `s` pits after it hold seeds, so the candidates of a pit
//! are a run of the mask of full pits, less the last pits where a seed
//! captures (see `Shape`). The general loop tried each candidate and broke
//! off at the first short pit; its branches were as good as random, and
//! with them it took 1.6 times as long (`bench_moves`, level 20).
//!
//! Two shortcuts, both from the index order (see [`crate::index`]):
//! - a parent whose move sowed only its own row has the child's mover row as
//!   its opponent's row, so the opponent's part of its index, the larger one,
//!   is found once per child;
//! - its own row holds as many seeds as before the move, so the mover's part
//!   needs no sum of the row either.

use crate::board::{nonzero_pits, pits_of_two_or_three, seeds_packed, Board};
use crate::index::Index;
use crate::rules::{RuleSet, Rules};
use crate::sowing::{pit_of, Sowing};

/// Finds the stored parents of boards of one rule set, with their indices.
#[derive(Clone, Copy)]
pub struct Parents {
    rules: Rules,
    index: &'static Index,
    sowing: &'static Sowing,
}

impl std::fmt::Debug for Parents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parents")
            .field("rules", &self.rules)
            .finish()
    }
}

/// The pits of a packed board after a move (in the mover's view of the
/// parent) as bit masks, bit k for pit k: what the un-moves of
/// [`Parents::for_each`] need to know of it.
struct Shape<const P: usize> {
    /// Pits holding seeds.
    full: u32,
    /// Opponent's pits holding 2 or 3 seeds, where a last seed captured.
    captures: u32,
}

impl<const P: usize> Shape<P> {
    #[inline(always)]
    fn of(after: u128) -> Shape<P> {
        let pits = (1u32 << (2 * P)) - 1;
        // A byte of at most 127 is non-zero exactly when subtracting one from
        // it with its high bit set leaves that bit set.
        let full = nonzero_pits(after) & pits;
        Shape {
            full,
            captures: pits_of_two_or_three(after) & pits & !((1 << P) - 1),
        }
    }

    /// The mover's pits that are empty.
    #[inline(always)]
    fn empty_mover_pits(&self) -> u32 {
        !self.full & ((1 << P) - 1)
    }

    /// For an empty mover's pit `pit`: how many pits after it (in sowing
    /// order, up to 2P - 1) hold seeds in a row, and the sowings that fit
    /// and capture nothing, bit s - 1 for s seeds.
    #[inline(always)]
    fn sowings_from(&self, pit: usize) -> (usize, u32) {
        let n = 2 * P;
        let mask = (1u32 << n) - 1;
        // The pits from pit + 1 on, in sowing order, at bits 0, 1, ...
        let rotate = |bits: u32| ((bits >> (pit + 1)) | (bits << (n - pit - 1))) & mask;
        // `pit` itself is empty and comes last, so the run stops there at latest.
        let run = (!rotate(self.full)).trailing_zeros() as usize;
        let fits = (1u32 << run) - 1;
        (run, fits & !rotate(self.captures))
    }
}

impl Parents {
    /// The parent finder of `rules`.
    pub fn new(rules: Rules) -> Parents {
        Parents {
            rules,
            index: Index::for_pits(rules.pits()),
            sowing: Sowing::for_pits(rules.pits()),
        }
    }

    /// Calls `visit(index, parent)` for each stored parent of the board of
    /// pits `child` ([`Board::packed`]): each board from which a legal
    /// non-capturing move leads to `child`, with its index in the level of
    /// `child` and its pits. The parents and their order are those of
    /// [`Rules::for_each_unmove`], less the ones not stored.
    ///
    /// # Panics
    /// In debug builds, when `P` is not the rules' pits per side. (In
    /// release builds such a call gives wrong parents: the solver picks `P`
    /// from the rules once per level.)
    #[inline(always)]
    pub fn for_each<const P: usize>(&self, child: u128, mut visit: impl FnMut(u64, u128)) {
        debug_assert_eq!(usize::from(self.rules.pits()), P);
        let n = 2 * P;
        let mover = Board::row_mask(P as u32);
        // The parent's view of the board after its move: rows swapped back.
        let after = ((child >> (8 * P)) & mover) | ((child & mover) << (8 * P));
        let seeds = seeds_packed(child);
        // A move that leaves the child's mover (the parent's opponent) with
        // seeds does not starve, and so is legal under every rule set; it is
        // quiet when its last seed makes no 2 or 3 in the opponent's row,
        // except under abapa, where a grand slam captures nothing. Other
        // candidates must be played to be sure.
        if child & mover == 0 || self.rules.set() == RuleSet::Abapa {
            return self.for_each_replaying::<P>(child, seeds, visit);
        }
        let shape = Shape::<P>::of(after);
        // The parent's own row holds these seeds when the move stayed in it.
        let row_seeds = seeds_packed(after & mover);
        // The opponent's part of the index of parents that sowed their own
        // row only (`None`: a full opponent row, no such parent is stored),
        // found at the first of them.
        let mut shared: Option<Option<u64>> = None;
        let mut empty = shape.empty_mover_pits();
        while empty != 0 {
            // The pit a move starts from is always empty afterwards.
            let pit = empty.trailing_zeros() as usize;
            empty &= empty - 1;
            // Sowing s seeds (s < 2P) drops one into each of the s pits after
            // `pit`, so it can be undone while those pits hold seeds: s runs
            // from 1 to `run`. Bit s - 1 of `quiet` says whether the last seed,
            // in pit (pit + s) mod 2P, captures nothing.
            let (run, quiet) = shape.sowings_from(pit);
            // The first P - 1 - pit sowings stay in the parent's own row.
            let own = quiet & ((1 << (P - 1 - pit)) - 1);
            let mut bits = own;
            while bits != 0 {
                let sown = bits.trailing_zeros() as usize + 1;
                bits &= bits - 1;
                let parent = self.unsown(after, pit, sown);
                let opponent = *shared.get_or_insert_with(|| {
                    self.index
                        .opponent_walk_packed::<P>(after, seeds)
                        .map(|(opponent, _)| opponent)
                });
                if let Some(opponent) = opponent {
                    visit(
                        opponent + self.index.mover_walk_packed::<P>(parent, row_seeds),
                        parent,
                    );
                }
            }
            // The others sowed the opponent's row too.
            let mut bits = quiet & !own;
            while bits != 0 {
                let sown = bits.trailing_zeros() as usize + 1;
                bits &= bits - 1;
                let parent = self.unsown(after, pit, sown);
                if let Some(index) = self.index.rank_packed::<P>(parent, seeds) {
                    visit(index, parent);
                }
            }
            if run == n - 1 {
                // Every other pit holds seeds: sowings of a lap or more may
                // fit too (rare), each checked whole.
                for sown in n..seeds + 1 {
                    let Some(parent) = self.sowing.unsow(after, pit, sown) else {
                        break;
                    };
                    let k = self.sowing.last(pit, sown);
                    if k >= P && matches!(pit_of(after, k), 2 | 3) {
                        continue; // the last seed captures
                    }
                    if let Some(index) = self.index.rank_packed::<P>(parent, seeds) {
                        visit(index, parent);
                    }
                }
            }
        }
    }

    /// The board before `sown` seeds (fewer than 2P) were sown from `pit`
    /// into `after`, where each pit they fell in holds at least one.
    #[inline(always)]
    fn unsown(&self, after: u128, pit: usize, sown: usize) -> u128 {
        after - self.sowing.add(pit, sown) + ((sown as u128) << (8 * pit))
    }

    /// [`Parents::for_each`] where candidates may need playing: the child's
    /// mover has no seeds (so the parent's move may have starved it), or the
    /// rules are abapa (where a grand slam captures nothing). Rare, so the
    /// general un-moves do it, each candidate confirmed by playing it.
    #[inline(never)]
    fn for_each_replaying<const P: usize>(
        &self,
        child: u128,
        seeds: usize,
        mut visit: impl FnMut(u64, u128),
    ) {
        let board = Board::from_packed(child, self.rules.pits());
        self.rules.for_each_unmove(&board, |parent, _| {
            let parent = parent.packed();
            if let Some(index) = self.index.rank_packed::<P>(parent, seeds) {
                visit(index, parent);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Stored parents: `(index, pits)` in the order they were found.
    type Found = Vec<(u64, u128)>;

    /// The parents of `board` both ways: ranked as they are made, and from
    /// the general un-moves ranked apart.
    fn both<const P: usize>(rules: Rules, board: &Board) -> (Found, Found) {
        let index = Index::for_pits(rules.pits());
        let mut fast = Vec::new();
        Parents::new(rules).for_each::<P>(board.packed(), |q, parent| fast.push((q, parent)));
        let mut general = Vec::new();
        rules.for_each_unmove(board, |parent, _| {
            if let Some(q) = index.rank(&parent) {
                general.push((q, parent.packed()));
            }
        });
        (fast, general)
    }

    fn board_of(pits: &[u8]) -> Board {
        Board::new(pits).expect("a valid board")
    }

    fn check<const P: usize>(set: RuleSet, pits: &[u8]) -> Result<(), TestCaseError> {
        let rules = Rules::new(set, P as u8).expect("a supported size");
        let board = board_of(pits);
        let (fast, general) = both::<P>(rules, &board);
        prop_assert_eq!(fast, general, "parents of {}", board.to_notation());
        Ok(())
    }

    fn any_set() -> impl Strategy<Value = RuleSet> {
        prop_oneof![
            Just(RuleSet::Awari),
            Just(RuleSet::Abapa),
            Just(RuleSet::GrandSlamCaptures),
            Just(RuleSet::GrandSlamReplay),
        ]
    }

    proptest! {
        #[test]
        fn six_pits_agree_with_the_general_unmoves(
            set in any_set(),
            pits in proptest::collection::vec(0u8..6, 12),
        ) {
            check::<6>(set, &pits)?;
        }

        #[test]
        fn sparse_six_pit_boards_agree(
            set in any_set(),
            pits in proptest::collection::vec(prop_oneof![3 => Just(0u8), 1 => 1u8..4, 1 => 2u8..=3], 12),
        ) {
            check::<6>(set, &pits)?;
        }

        #[test]
        fn other_sizes_agree(
            set in any_set(),
            pits in proptest::collection::vec(0u8..5, 16),
        ) {
            check::<2>(set, &pits[..4])?;
            check::<3>(set, &pits[..6])?;
            check::<4>(set, &pits[..8])?;
            check::<5>(set, &pits[..10])?;
            check::<7>(set, &pits[..14])?;
            check::<8>(set, &pits[..16])?;
        }
    }

    #[test]
    fn every_board_of_small_levels_agrees() {
        // All of levels 0..=8 of the 6-pit game and 0..=10 of the 4-pit
        // game, under every rule set.
        for set in [
            RuleSet::Awari,
            RuleSet::Abapa,
            RuleSet::GrandSlamCaptures,
            RuleSet::GrandSlamReplay,
        ] {
            let six = Rules::new(set, 6).unwrap();
            for seeds in 0..=8 {
                for board in Index::for_pits(6).boards(seeds) {
                    let (fast, general) = both::<6>(six, &board);
                    assert_eq!(fast, general, "{set:?}: {}", board.to_notation());
                }
            }
            let four = Rules::new(set, 4).unwrap();
            for seeds in 0..=10 {
                for board in Index::for_pits(4).boards(seeds) {
                    let (fast, general) = both::<4>(four, &board);
                    assert_eq!(fast, general, "{set:?}: {}", board.to_notation());
                }
            }
        }
    }
}
