//! What the search knows of the game beyond its board: the rule that ends
//! repetitions, the positions played since the last capture, and the seeds
//! already captured (to play for the result, not only the margin).

use std::fmt;
use std::str::FromStr;

use awari_dbformat::Board;

use crate::error::ProbeError;

/// How the game being searched treats a position that comes back.
///
/// The databases value endless play by sharing the seeds equally
/// (`even-split`, Romein and Bal's rule); the games people and programs
/// play end it at a repetition instead. Under `own-rows` and `three-fold` a
/// repetition ends the game there and then, each side taking the seeds on
/// its own row, so the value of a position depends on the positions seen
/// since the last capture (a capture makes every earlier position
/// unreachable: it has more seeds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RepetitionRule {
    /// Endless play shares the seeds equally: a position repeating one on
    /// the line is worth 0, as an estimate (either player may still leave
    /// the cycle), the databases' scores are exact.
    #[default]
    EvenSplit,
    /// The first repetition of a position (same board, same player to move)
    /// since the last capture ends the game, each side taking the seeds of
    /// its own row: OpenSpiel's `oware` and Aalina (Auale).
    OwnRows,
    /// The same at the third occurrence of a position.
    ThreeFold,
}

impl RepetitionRule {
    /// Every rule, the default first.
    pub const ALL: [RepetitionRule; 3] = [
        RepetitionRule::EvenSplit,
        RepetitionRule::OwnRows,
        RepetitionRule::ThreeFold,
    ];

    /// `even-split`, `own-rows` or `three-fold`, as command lines write it.
    pub fn name(self) -> &'static str {
        match self {
            RepetitionRule::EvenSplit => "even-split",
            RepetitionRule::OwnRows => "own-rows",
            RepetitionRule::ThreeFold => "three-fold",
        }
    }

    /// How many earlier occurrences of a position end the game when it
    /// comes again: 1 (own rows), 2 (three-fold), or `None` when a
    /// repetition ends nothing (even split).
    pub fn ending_after(self) -> Option<usize> {
        match self {
            RepetitionRule::EvenSplit => None,
            RepetitionRule::OwnRows => Some(1),
            RepetitionRule::ThreeFold => Some(2),
        }
    }
}

impl fmt::Display for RepetitionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RepetitionRule {
    type Err = ProbeError;

    /// Reads `even-split`, `own-rows` or `three-fold`.
    ///
    /// # Errors
    /// [`ProbeError::Input`] naming the text and the rules known.
    fn from_str(s: &str) -> Result<RepetitionRule, ProbeError> {
        RepetitionRule::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                ProbeError::Input(format!(
                    "unknown repetition rule {s:?}; the search takes even-split, own-rows or three-fold"
                ))
            })
    }
}

/// The game around the board searched.
#[derive(Clone, Debug, Default)]
pub struct Game {
    /// How a repetition ends (or not) the game.
    pub repetition: RepetitionRule,
    /// The positions played since the last capture before the board
    /// searched, oldest first, each seen from its own mover; the last is the
    /// board's parent. Positions before the last capture may be included:
    /// they hold more seeds and never match.
    pub history: Vec<Board>,
    /// The seeds captured so far by the board's mover and by its opponent,
    /// when known: the search then plays for the result first (a win before
    /// any margin, a draw before a loss), and only then for the margin.
    pub captured: Option<(u32, u32)>,
    /// With [`Game::captured`]: seeds a draw is worth less than the
    /// threshold to the board's mover (positive: it avoids draws), at most
    /// [`MAX_CONTEMPT`] either way.
    pub contempt: i16,
}

/// The largest contempt (seeds) the search takes either way.
pub const MAX_CONTEMPT: i16 = 10;

/// A bonus beyond every margin: a position whose result is known is worth
/// its margin plus this for a win, minus it for a loss, when the search
/// plays for the result.
pub(super) const RESULT_BONUS: i16 = 100;

/// The key of a position for repetitions: its pits, and which player moves
/// (the parity of its ply from the root) in the top bit, which no pit uses
/// (a pit holds at most 48 seeds).
#[inline]
pub(super) fn repetition_key(board: &Board, ply: usize) -> u128 {
    board.packed() | ((ply & 1) as u128) << 127
}

/// A 64-bit mix of a repetition key, summed (wrapping) over a multiset of
/// positions to give the key of that multiset.
#[inline]
pub(super) fn mix(key: u128) -> u64 {
    let mut h = (key as u64) ^ ((key >> 64) as u64).rotate_left(23) ^ 0x51_7C_C1_B7_27_22_0A_95;
    h = (h ^ (h >> 32)).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    h = (h ^ (h >> 32)).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    h ^ (h >> 32)
}

/// What the result of the game makes of a margin at one node, when the
/// search plays for the result: the node's mover wins when its margin is
/// above `threshold` (the seeds its opponent has captured minus its own),
/// draws at it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Stakes {
    /// Win above, draw at, loss below (margin for the node's mover).
    pub(super) threshold: i16,
    /// Seeds a draw costs the node's mover (the root's contempt, negated
    /// for the root's opponent).
    pub(super) contempt: i16,
    /// False when the search plays for the margin alone.
    pub(super) active: bool,
}

impl Stakes {
    /// Margin alone.
    pub(super) const MARGIN: Stakes = Stakes {
        threshold: 0,
        contempt: 0,
        active: false,
    };

    /// The stakes at the root for `game`.
    pub(super) fn root(game: &Game) -> Stakes {
        match game.captured {
            None => Stakes::MARGIN,
            Some((mine, theirs)) => Stakes {
                threshold: (i64::from(theirs) - i64::from(mine)).clamp(-200, 200) as i16,
                contempt: game.contempt.clamp(-MAX_CONTEMPT, MAX_CONTEMPT),
                active: true,
            },
        }
    }

    /// The stakes of a child reached by a move capturing `gain`, the turn
    /// passing (`passes`) or staying.
    #[inline]
    pub(super) fn child(self, gain: i16, passes: bool) -> Stakes {
        if !self.active {
            return self;
        }
        if passes {
            // The child's mover is the opponent: its captured seeds are
            // ours, ours plus the gain are its opponent's.
            Stakes {
                threshold: gain - self.threshold,
                contempt: -self.contempt,
                active: true,
            }
        } else {
            Stakes {
                threshold: self.threshold - gain,
                ..self
            }
        }
    }

    /// The score of a margin `v` known for certain: `v` plus or minus
    /// [`RESULT_BONUS`] for a win or a loss, `v` less the contempt for a
    /// draw. Increasing in `v`, and it composes through negamax as the
    /// margin does (a move's score is its gain minus its child's).
    #[inline]
    pub(super) fn score(self, v: i16) -> i16 {
        if !self.active {
            return v;
        }
        match v.cmp(&self.threshold) {
            std::cmp::Ordering::Greater => v + RESULT_BONUS,
            std::cmp::Ordering::Less => v - RESULT_BONUS,
            std::cmp::Ordering::Equal => v - self.contempt,
        }
    }

    /// The score of a margin known to lie in `lo..=hi`, estimated at `e`:
    /// the bounds' scores (proven) and the estimate's, which carries the
    /// result's bonus only where every margin in the range gives the same
    /// result.
    #[inline]
    pub(super) fn range(self, lo: i16, hi: i16, e: i16) -> (i16, i16, i16) {
        let e = e.clamp(lo, hi);
        let (sl, sh) = (self.score(lo), self.score(hi));
        let decided = !self.active || lo > self.threshold || hi < self.threshold || lo == hi;
        let se = if decided || e == self.threshold {
            self.score(e)
        } else {
            e
        };
        (sl, sh, se.clamp(sl, sh))
    }

    /// The margin that a score at the root stands for (the inverse of
    /// [`Stakes::score`] away from the threshold).
    pub fn margin(self, s: i16) -> i16 {
        if !self.active {
            s
        } else if s > RESULT_BONUS / 2 {
            s - RESULT_BONUS
        } else if s < -RESULT_BONUS / 2 {
            s + RESULT_BONUS
        } else {
            s
        }
    }

    /// The result a proven score at the root stands for: 1 a win, 0 a
    /// draw, -1 a loss; `None` when unproven or playing for the margin.
    pub fn result(self, s: i16, proven: bool) -> Option<i8> {
        if !self.active || !proven {
            None
        } else if s > RESULT_BONUS / 2 {
            Some(1)
        } else if s < -RESULT_BONUS / 2 {
            Some(-1)
        } else {
            Some(0)
        }
    }

    /// A salt for the transposition table: scores under different stakes
    /// differ.
    #[inline]
    pub(super) fn salt(self) -> u64 {
        if self.active {
            (self.threshold as u16 as u64) << 48 | (self.contempt as u16 as u64) << 32 | 1
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_and_print() {
        for r in RepetitionRule::ALL {
            assert_eq!(r.name().parse::<RepetitionRule>().unwrap(), r);
        }
        let e = "twice".parse::<RepetitionRule>().unwrap_err().to_string();
        assert!(e.contains("twice") && e.contains("own-rows"), "{e}");
    }

    #[test]
    fn scores_compose_through_negamax() {
        // Root: mover has 20, opponent 22: wins above +2.
        let root = Stakes::root(&Game {
            captured: Some((20, 22)),
            contempt: 3,
            ..Game::default()
        });
        assert_eq!(root.threshold, 2);
        // A move capturing 4 passes the turn; the child's mover has 22
        // and its opponent 24: it wins above 2 - ... = 4 - 2 = 2.
        let child = root.child(4, true);
        assert_eq!((child.threshold, child.contempt), (2, -3));
        for v in -10i16..=10 {
            // The move's margin is 4 - v; its score is 4 - the child's.
            assert_eq!(root.score(4 - v), 4 - child.score(v), "child margin {v}");
        }
        // Increasing.
        for v in -30i16..30 {
            assert!(root.score(v) < root.score(v + 1));
            assert_eq!(root.margin(root.score(v)), v - if v == 2 { 3 } else { 0 });
        }
        assert_eq!(Stakes::MARGIN.score(7), 7);
    }

    #[test]
    fn a_range_carries_the_bonus_only_when_decided() {
        let s = Stakes {
            threshold: 0,
            contempt: 0,
            active: true,
        };
        assert_eq!(s.range(1, 5, 3), (101, 105, 103));
        assert_eq!(s.range(-5, -1, -3), (-105, -101, -103));
        assert_eq!(s.range(-5, 5, 3), (-105, 105, 3));
        assert_eq!(s.range(-5, 5, 9), (-105, 105, 5));
    }
}
