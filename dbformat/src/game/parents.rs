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
//! The runs read the pits counterclockwise, the way every rule set sows but
//! one: `cross-wari` sows an odd count clockwise, so its odd sowings are
//! read from the same masks turned the other way round
//! (`Shape::sowings_back_from`), and its even ones as everywhere else.
//! Under `abapa` and `cross-wari` a last seed making 2 or 3 may be a grand
//! slam that captures nothing: those few candidates are played to be sure.
//!
//! Two shortcuts, both from the index order (see [`crate::index`]):
//! - a parent whose move sowed only its own row has the child's mover row as
//!   its opponent's row, so the opponent's part of its index, the larger one,
//!   is found once per child;
//! - its own row holds as many seeds as before the move, so the mover's part
//!   needs no sum of the row either.

use crate::game::board::{nonzero_pits, pits_of_two_or_three, seeds_packed, Board};
use crate::game::rules::Rules;
use crate::game::sowing::{pit_of, Sowing};
use crate::index::Index;

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

    /// For an empty mover's pit `pit`, the sowings from it that can be
    /// undone, counterclockwise (pit + 1, pit + 2, ...): see [`Sowings`].
    #[inline(always)]
    fn sowings_from(&self, pit: usize) -> Sowings {
        let n = 2 * P;
        let mask = (1u32 << n) - 1;
        // The pits from pit + 1 on, in sowing order, at bits 0, 1, ...
        let rotate = |bits: u32| ((bits >> (pit + 1)) | (bits << (n - pit - 1))) & mask;
        Sowings::of(rotate(self.full), rotate(self.captures))
    }

    /// [`Shape::sowings_from`] clockwise (pit - 1, pit - 2, ...), the way
    /// `cross-wari` sows an odd count.
    #[inline(always)]
    fn sowings_back_from(&self, pit: usize) -> Sowings {
        let n = 2 * P;
        let mask = (1u32 << n) - 1;
        // Bit m of the rotation is pit + m; pit - 1 - j is m = n - 1 - j,
        // so reversing the n bits puts it at bit j.
        let rotate = |bits: u32| {
            let from_pit = ((bits >> pit) | (bits << (n - pit))) & mask;
            from_pit.reverse_bits() >> (32 - n)
        };
        Sowings::of(rotate(self.full), rotate(self.captures))
    }
}

/// The sowings of fewer than 2P seeds from one empty pit, one way round,
/// that can be undone, as bits: bit s - 1 for s seeds.
struct Sowings {
    /// How many pits after the pit, in sowing order, hold seeds in a row:
    /// 2P - 1 when every other pit does.
    run: usize,
    /// The sowings whose last seed captures nothing.
    quiet: u32,
    /// The sowings whose last seed makes 2 or 3 in the opponent's row: they
    /// capture, unless a grand slam captures nothing (abapa, cross-wari).
    capturing: u32,
}

impl Sowings {
    /// From the pits after the pit in sowing order, at bits 0, 1, ...: those
    /// holding seeds, and the opponent's holding 2 or 3.
    #[inline(always)]
    fn of(full: u32, captures: u32) -> Sowings {
        // Sowing s seeds (s < 2P) drops one into each of the s pits after the
        // pit, so it can be undone while those pits hold seeds. The pit
        // itself is empty and comes last, so the run stops there at latest.
        let run = (!full).trailing_zeros() as usize;
        let fits = (1u32 << run) - 1;
        Sowings {
            run,
            quiet: fits & !captures,
            capturing: fits & captures,
        }
    }
}

/// Bits s - 1 of the sowings of an odd number s of seeds.
const ODD_SOWINGS: u32 = 0x5555_5555;

impl Parents {
    /// The parent finder of `rules`.
    pub fn new(rules: Rules) -> Parents {
        Parents {
            rules,
            index: Index::for_pits(rules.pits()),
            sowing: Sowing::for_rules(rules),
        }
    }

    /// Calls `visit(index, parent)` for each stored parent of the board of
    /// pits `child` ([`Board::packed`]): each board from which a legal
    /// non-capturing move leads to `child`, with its index in the level of
    /// `child` and its pits. The parents are those of
    /// [`Rules::for_each_unmove`], less the ones not stored, each once (not
    /// always in the same order).
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
        let after = swap_rows::<P>(child);
        let seeds = seeds_packed(child);
        // A move that leaves the child's mover (the parent's opponent) with
        // seeds does not starve, and so is legal under every rule set; it is
        // quiet when its last seed makes no 2 or 3 in the opponent's row.
        // Other candidates must be played to be sure: all of them when the
        // child's mover has no seeds (rare).
        if child & mover == 0 {
            return self.for_each_replaying::<P>(child, seeds, visit);
        }
        let set = self.rules.set();
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
            let counterclockwise = shape.sowings_from(pit);
            let run = counterclockwise.run;
            if set.sows_odd_clockwise() {
                // Cross-wari: the even sowings went counterclockwise, where
                // the first P - 1 - pit stay in the parent's own row, and the
                // odd ones clockwise, where the first `pit` do.
                self.visit_sowings::<P>(
                    after,
                    pit,
                    &counterclockwise,
                    !ODD_SOWINGS & ((1 << (P - 1 - pit)) - 1),
                    !ODD_SOWINGS,
                    (seeds, row_seeds),
                    &mut shared,
                    &mut visit,
                );
                self.visit_sowings::<P>(
                    after,
                    pit,
                    &shape.sowings_back_from(pit),
                    ODD_SOWINGS & ((1 << pit) - 1),
                    ODD_SOWINGS,
                    (seeds, row_seeds),
                    &mut shared,
                    &mut visit,
                );
            } else {
                // The first P - 1 - pit sowings stay in the parent's own row.
                self.visit_sowings::<P>(
                    after,
                    pit,
                    &counterclockwise,
                    (1 << (P - 1 - pit)) - 1,
                    u32::MAX,
                    (seeds, row_seeds),
                    &mut shared,
                    &mut visit,
                );
            }
            if run == n - 1 {
                // Every other pit holds seeds: sowings of a lap or more may
                // fit too (rare), each checked whole. Sowing two seeds more,
                // the same way round, drops at least as many into every
                // pit, so each parity stops at its first short sowing.
                for first in [n, n + 1] {
                    for sown in (first..seeds + 1).step_by(2) {
                        let Some(parent) = self.sowing.unsow(after, pit, sown) else {
                            break;
                        };
                        let k = self.sowing.last(pit, sown);
                        if k >= P
                            && matches!(pit_of(after, k), 2 | 3)
                            && !self.replays_to(parent, pit, child)
                        {
                            continue; // the last seed captures
                        }
                        if let Some(index) = self.index.rank_packed::<P>(parent, seeds) {
                            visit(index, parent);
                        }
                    }
                }
            }
        }
    }

    /// Visits the parents among the sowings `sowings` from `pit` into
    /// `after` whose bits are in `these`: those in `own` sowed the parent's
    /// own row only and share the opponent's part of their index
    /// (`shared`, found at the first); `seeds` are the level's seeds and
    /// `row_seeds` those of the parent's own row.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn visit_sowings<const P: usize>(
        &self,
        after: u128,
        pit: usize,
        sowings: &Sowings,
        own: u32,
        these: u32,
        (seeds, row_seeds): (usize, usize),
        shared: &mut Option<Option<u64>>,
        visit: &mut impl FnMut(u64, u128),
    ) {
        let quiet = sowings.quiet & these;
        let mut bits = quiet & own;
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
        // A last seed making 2 or 3 captures, except in a grand slam under
        // abapa or cross-wari: those are played to be sure.
        if self.rules.set().grand_slam_captures_nothing() {
            let child = swap_rows::<P>(after);
            let mut bits = sowings.capturing & these;
            while bits != 0 {
                let sown = bits.trailing_zeros() as usize + 1;
                bits &= bits - 1;
                let parent = self.unsown(after, pit, sown);
                if self.replays_to(parent, pit, child) {
                    if let Some(index) = self.index.rank_packed::<P>(parent, seeds) {
                        visit(index, parent);
                    }
                }
            }
        }
    }

    /// True when the move from `pit` of `parent` is legal, captures nothing
    /// and leads to `child` (all packed): a grand slam that captures
    /// nothing under abapa or cross-wari, when its last seed made 2 or 3.
    #[inline(never)]
    fn replays_to(&self, parent: u128, pit: usize, child: u128) -> bool {
        let pits = self.rules.pits();
        self.rules.set().grand_slam_captures_nothing()
            && self
                .rules
                .quiet_child(&Board::from_packed(parent, pits), pit)
                .is_some_and(|c| c.packed() == child)
    }

    /// The board before `sown` seeds (fewer than 2P) were sown from `pit`
    /// into `after`, where each pit they fell in holds at least one.
    #[inline(always)]
    fn unsown(&self, after: u128, pit: usize, sown: usize) -> u128 {
        after - self.sowing.add(pit, sown) + ((sown as u128) << (8 * pit))
    }

    /// [`Parents::for_each`] where candidates may need playing: the child's
    /// mover has no seeds, so the parent's move may have starved it. Rare,
    /// so the general un-moves do it, each candidate confirmed by playing it.
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

/// A packed board of `P` pits per side with its rows swapped.
#[inline(always)]
fn swap_rows<const P: usize>(pits: u128) -> u128 {
    let mover = Board::row_mask(P as u32);
    ((pits >> (8 * P)) & mover) | ((pits & mover) << (8 * P))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::rules::RuleSet;
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
        prop_assert_eq!(
            sorted(fast),
            sorted(general),
            "parents of {}",
            board.to_notation()
        );
        Ok(())
    }

    fn any_set() -> impl Strategy<Value = RuleSet> {
        prop::sample::select(RuleSet::ALL.to_vec())
    }

    /// The parents in index order: the fast path finds them in another
    /// order than the general un-moves under cross-wari (one direction
    /// after the other) and abapa (grand slams after the others).
    fn sorted(mut found: Found) -> Found {
        found.sort_unstable();
        found
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
        for set in RuleSet::ALL {
            let six = Rules::new(set, 6).unwrap();
            for seeds in 0..=8 {
                for board in Index::for_pits(6).boards(seeds) {
                    let (fast, general) = both::<6>(six, &board);
                    assert_eq!(
                        sorted(fast),
                        sorted(general),
                        "{set:?}: {}",
                        board.to_notation()
                    );
                }
            }
            let four = Rules::new(set, 4).unwrap();
            for seeds in 0..=10 {
                for board in Index::for_pits(4).boards(seeds) {
                    let (fast, general) = both::<4>(four, &board);
                    assert_eq!(
                        sorted(fast),
                        sorted(general),
                        "{set:?}: {}",
                        board.to_notation()
                    );
                }
            }
        }
    }
}
