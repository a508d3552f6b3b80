//! Sowing tables: what sowing `s` seeds from a pit does to every pit, as one
//! 128-bit word with a byte per pit, and where the last seed lands.
//!
//! A board size has two tables: every pit sown counterclockwise (pit i + 1,
//! i + 2, ...), and odd sowings clockwise (i - 1, i - 2, ...: `cross-wari`).
//! The direction is a function of the seeds sown, so one entry per pit and
//! seed count says everything either way, and the code that reads the
//! tables (sowing, un-sowing, where the last seed lands) needs no case for
//! it.
//!
//! With the board packed the same way ([`Board::packed`]), sowing is one
//! subtraction (empty the pit) and one addition (the table entry), and an
//! un-move is the reverse. No byte ever carries into the next: a pit holds at
//! most [`MAX_SEEDS`] = 64 seeds, well below 256.
//!
//! Un-moves need to know whether subtracting an entry leaves every pit
//! non-negative; [`Sowing::unsow`] does it for all pits at once with the
//! high bit of each byte as a borrow guard (see there).
//!
//! [`Board::packed`]: crate::Board::packed

use std::sync::OnceLock;

use crate::game::board::HIGH;
use crate::game::rules::{Rules, MAX_PITS, MAX_SEEDS, MIN_PITS};

/// Seed counts a table covers: `0..=MAX_SEEDS`.
const SEEDS: usize = MAX_SEEDS as usize + 1;

/// The sowing tables of one board size.
pub(crate) struct Sowing {
    /// `adds[pit * SEEDS + s]`: one byte per pit, the seeds sowing `s` seeds
    /// from `pit` drops into it (0 for `pit` itself, which is skipped).
    adds: Vec<u128>,
    /// `last[pit * SEEDS + s]`: the pit the last seed lands in (`pit` for `s = 0`).
    last: Vec<u8>,
    /// `landing[pit * SEEDS + s]`: the seeds that pit receives (0 for `s = 0`).
    landing: Vec<u8>,
}

impl Sowing {
    /// The shared tables of `rules` (built once per board size and direction).
    #[inline]
    pub(crate) fn for_rules(rules: Rules) -> &'static Sowing {
        type Cache = [OnceLock<Sowing>; MAX_PITS as usize + 1];
        static COUNTERCLOCKWISE: Cache = [const { OnceLock::new() }; MAX_PITS as usize + 1];
        static ODD_CLOCKWISE: Cache = [const { OnceLock::new() }; MAX_PITS as usize + 1];
        let per_side = rules.pits();
        debug_assert!((MIN_PITS..=MAX_PITS).contains(&per_side));
        let odd_clockwise = rules.set().sows_odd_clockwise();
        let cache = if odd_clockwise {
            &ODD_CLOCKWISE
        } else {
            &COUNTERCLOCKWISE
        };
        cache[per_side as usize].get_or_init(|| Sowing::build(per_side, odd_clockwise))
    }

    /// Sows seed by seed, the way the rules describe it, to fill the tables:
    /// counterclockwise, or clockwise for an odd count when `odd_clockwise`.
    fn build(per_side: u8, odd_clockwise: bool) -> Sowing {
        let n = 2 * per_side as usize;
        let mut adds = Vec::with_capacity(n * SEEDS);
        let mut last = Vec::with_capacity(n * SEEDS);
        let mut landing = Vec::with_capacity(n * SEEDS);
        for pit in 0..n {
            for seeds in 0..SEEDS {
                // One step on: + 1, or - 1 (that is, + n - 1) clockwise.
                let step = if odd_clockwise && seeds % 2 == 1 {
                    n - 1
                } else {
                    1
                };
                let mut bytes = [0u8; 16];
                let mut k = pit;
                for _ in 0..seeds {
                    k = (k + step) % n;
                    if k == pit {
                        k = (k + step) % n; // the starting pit is skipped
                    }
                    bytes[k] += 1;
                }
                adds.push(u128::from_le_bytes(bytes));
                last.push(k as u8);
                landing.push(if seeds == 0 { 0 } else { bytes[k] });
            }
        }
        Sowing {
            adds,
            last,
            landing,
        }
    }

    /// What sowing `seeds` seeds from `pit` adds to each pit.
    #[inline]
    pub(crate) fn add(&self, pit: usize, seeds: usize) -> u128 {
        self.adds[pit * SEEDS + seeds]
    }

    /// The pit the last of `seeds` seeds sown from `pit` lands in.
    #[inline]
    pub(crate) fn last(&self, pit: usize, seeds: usize) -> usize {
        self.last[pit * SEEDS + seeds] as usize
    }

    /// The seeds that the pit the last of `seeds` seeds sown from `pit`
    /// lands in receives from that sowing (more than one after a lap).
    #[inline]
    pub(crate) fn landing(&self, pit: usize, seeds: usize) -> u8 {
        self.landing[pit * SEEDS + seeds]
    }

    /// The board `packed` after emptying `pit` (holding `seeds`) and sowing.
    #[inline]
    pub(crate) fn sow(&self, packed: u128, pit: usize, seeds: usize) -> u128 {
        packed - ((seeds as u128) << (8 * pit)) + self.add(pit, seeds)
    }

    /// The board before `seeds` seeds were sown from `pit` into `packed`, or
    /// `None` when some pit holds fewer seeds than that sowing drops into it.
    ///
    /// Each byte is first lifted by 128 (every pit holds at most 64 seeds, so
    /// the lifted byte cannot borrow from its neighbour); a byte whose high bit
    /// is gone after the subtraction was short of seeds.
    #[inline]
    pub(crate) fn unsow(&self, packed: u128, pit: usize, seeds: usize) -> Option<u128> {
        let lifted = (packed | HIGH) - self.add(pit, seeds);
        (lifted & HIGH == HIGH).then(|| (lifted & !HIGH) | ((seeds as u128) << (8 * pit)))
    }
}

/// The byte of pit `k` of a packed board.
#[inline]
pub(crate) fn pit_of(packed: u128, k: usize) -> u8 {
    (packed >> (8 * k)) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(set: crate::RuleSet) -> &'static Sowing {
        Sowing::for_rules(Rules::new(set, 6).unwrap())
    }

    #[test]
    fn tables_match_hand_counted_sowings() {
        let t = tables(crate::RuleSet::Awari);
        // 3 seeds from A (pit 0): B, C, D get one each; the last lands in D.
        assert_eq!(
            t.add(0, 3),
            u128::from_le_bytes([0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        );
        assert_eq!(t.last(0, 3), 3);
        // 12 seeds from f (pit 11): a full lap of the 11 other pits, then A again.
        assert_eq!(
            t.add(11, 12),
            u128::from_le_bytes([2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0])
        );
        assert_eq!(t.last(11, 12), 0);
        // 11 seeds from C: everything but C, the last in B.
        assert_eq!(t.last(2, 11), 1);
    }

    #[test]
    fn odd_sowings_go_clockwise_under_cross_wari() {
        let t = tables(crate::RuleSet::CrossWari);
        // 3 seeds from B (pit 1): A, then the opponent's f and e.
        assert_eq!(
            t.add(1, 3),
            u128::from_le_bytes([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0])
        );
        assert_eq!(t.last(1, 3), 10);
        // 2 seeds from B: counterclockwise, C and D.
        assert_eq!(t.last(1, 2), 3);
        assert_eq!(t.add(1, 2), tables(crate::RuleSet::Awari).add(1, 2));
        // 13 seeds from A: a lap of the 11 other pits clockwise, then f and e again.
        assert_eq!(
            t.add(0, 13),
            u128::from_le_bytes([0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 0, 0, 0, 0])
        );
        assert_eq!(t.last(0, 13), 10);
        assert_eq!(t.landing(0, 13), 2);
    }

    #[test]
    fn unsow_undoes_sow_and_refuses_short_pits() {
        let t = tables(crate::RuleSet::Awari);
        let board = u128::from_le_bytes([5, 0, 1, 2, 0, 0, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
        let sown = t.sow(board, 0, 5);
        assert_eq!(pit_of(sown, 0), 0);
        assert_eq!(t.unsow(sown, 0, 5), Some(board));
        // Unsowing 8 seeds from A would need a seed in pit 8, which is empty.
        assert_eq!(pit_of(sown, 8), 0);
        assert_eq!(t.unsow(sown, 0, 8), None);
        // 7 seeds fit: every pit from B to pit 7 has one to give back.
        assert!(t.unsow(sown, 0, 7).is_some());
        let six = crate::Board::new(&[0; 12]).unwrap();
        assert_eq!(
            six.opponent_row_mask(),
            u128::from_le_bytes([0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0])
        );
    }
}
