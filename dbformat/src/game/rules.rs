//! Rule sets and board sizes: which "starving" rule is in force and how many
//! pits each side has.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// The fewest pits per side this crate supports.
pub const MIN_PITS: u8 = 2;
/// The most pits per side this crate supports.
pub const MAX_PITS: u8 = 8;

/// Evaluates `$body` with `$P` a constant `usize` equal to `$pits`, a number
/// of pits per side [`Rules`] accepts (`MIN_PITS..=MAX_PITS`): the one
/// dispatch from a board size known at run time to the code compiled for it
/// (the `_sized::<P>` functions, the solver's passes).
///
/// ```
/// use awari_dbformat::{with_pits, Board, Index};
///
/// let board: Board = "1 1 1 1 1 2 / 4 2 3 0 0 0".parse()?;
/// let index = Index::for_pits(board.per_side());
/// let rank = with_pits!(board.per_side(), P => index.rank_sized::<P>(&board));
/// assert_eq!(rank, index.rank(&board));
/// # Ok::<(), awari_dbformat::Error>(())
/// ```
///
/// # Panics
/// When `$pits` is outside `MIN_PITS..=MAX_PITS`.
#[macro_export]
macro_rules! with_pits {
    ($pits:expr, $P:ident => $body:expr) => {
        match $pits {
            2 => {
                const $P: usize = 2;
                $body
            }
            3 => {
                const $P: usize = 3;
                $body
            }
            4 => {
                const $P: usize = 4;
                $body
            }
            5 => {
                const $P: usize = 5;
                $body
            }
            6 => {
                const $P: usize = 6;
                $body
            }
            7 => {
                const $P: usize = 7;
                $body
            }
            8 => {
                const $P: usize = 8;
                $body
            }
            pits => unreachable!("{pits} pits per side: Rules accepts 2 to 8"),
        }
    };
}
/// The most seeds a board may hold in total (enough for 4 seeds in each of 16 pits).
pub const MAX_SEEDS: u32 = 64;

/// Checks that a level of `seeds` seeds can be indexed: at most [`MAX_SEEDS`].
///
/// # Errors
/// [`Error::TooManySeeds`] beyond it.
pub fn check_seeds(seeds: u32) -> Result<()> {
    if seeds > MAX_SEEDS {
        return Err(Error::TooManySeeds {
            seeds,
            max: MAX_SEEDS,
        });
    }
    Ok(())
}

/// The most seeds one pit may hold in the board notation.
pub const MAX_PIT_SEEDS: u8 = 48;

/// How a rule set treats a move that leaves the opponent without seeds.
///
/// See `docs/rules.md`, "Rule sets". Every database records its rule set,
/// and a file built under one is never read as another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum RuleSet {
    /// Computer Olympiad rules (Romein & Bal, Lincke): a move that leaves the
    /// opponent's row empty is illegal unless every legal move does so; then the
    /// mover takes all remaining seeds.
    #[default]
    Awari,
    /// Oware Society rules: a grand slam is legal but captures nothing; the mover
    /// must feed an empty opponent row when it can, else takes all remaining seeds.
    Abapa,
    /// A grand slam is legal and captures; the opponent then cannot move and the
    /// capturer takes what is left. Feeding as in `Abapa`.
    GrandSlamCaptures,
    /// A grand slam captures the whole row and the capturer moves again (and must
    /// feed, else takes the seeds on its side). Feeding as in `Abapa`.
    GrandSlamReplay,
    /// Cross-Wari (W. Dan Troyka, 2001): `Abapa`, except that a pit holding an
    /// odd number of seeds is sown clockwise (and its captures walk back
    /// clockwise's way), and that a game's end leaves the seeds on the board
    /// to no one: a position without a legal move is worth 0.
    CrossWari,
}

impl RuleSet {
    /// Every rule set, in the order of their codes.
    pub const ALL: [RuleSet; 5] = [
        RuleSet::Awari,
        RuleSet::Abapa,
        RuleSet::GrandSlamCaptures,
        RuleSet::GrandSlamReplay,
        RuleSet::CrossWari,
    ];

    /// The name used on the command line and in file names, e.g. `grand-slam-captures`.
    pub fn name(self) -> &'static str {
        match self {
            RuleSet::Awari => "awari",
            RuleSet::Abapa => "abapa",
            RuleSet::GrandSlamCaptures => "grand-slam-captures",
            RuleSet::GrandSlamReplay => "grand-slam-replay",
            RuleSet::CrossWari => "cross-wari",
        }
    }

    /// The one-byte code stored in level file headers.
    pub fn code(self) -> u8 {
        match self {
            RuleSet::Awari => 0,
            RuleSet::Abapa => 1,
            RuleSet::GrandSlamCaptures => 2,
            RuleSet::GrandSlamReplay => 3,
            RuleSet::CrossWari => 4,
        }
    }

    /// The rule set with this header code, or `None` for an unknown code.
    pub fn from_code(code: u8) -> Option<RuleSet> {
        RuleSet::ALL.get(usize::from(code)).copied()
    }

    /// True when a pit holding an odd number of seeds is sown clockwise
    /// (`cross-wari`); otherwise every pit is sown counterclockwise.
    pub fn sows_odd_clockwise(self) -> bool {
        self == RuleSet::CrossWari
    }

    /// True when a grand slam may be played and captures nothing, the seeds
    /// staying on the board (`abapa`, `cross-wari`): a last seed making 2 or
    /// 3 in the opponent's row then does not always capture.
    pub fn grand_slam_captures_nothing(self) -> bool {
        matches!(self, RuleSet::Abapa | RuleSet::CrossWari)
    }

    /// True when the seeds left on the board at a game's end go to no one
    /// (`cross-wari`), so that a position without a legal move is worth 0;
    /// otherwise the player who can still move takes them.
    pub fn end_leaves_seeds_to_no_one(self) -> bool {
        self == RuleSet::CrossWari
    }
}

impl fmt::Display for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RuleSet {
    type Err = Error;

    /// Parses a rule set name as printed by [`RuleSet::name`].
    ///
    /// # Errors
    /// [`Error::Rules`] naming the known rule sets when `s` is none of them.
    fn from_str(s: &str) -> Result<RuleSet> {
        RuleSet::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = RuleSet::ALL.iter().map(|r| r.name()).collect();
                Error::Rules(format!(
                    "unknown rule set {s:?}; expected one of {}",
                    names.join(", ")
                ))
            })
    }
}

/// A rule set together with the number of pits per side: everything that decides
/// which moves are legal and what a database holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    set: RuleSet,
    pits: u8,
}

impl Default for Rules {
    /// Awari rules on the usual board of 6 pits per side.
    fn default() -> Rules {
        Rules {
            set: RuleSet::Awari,
            pits: 6,
        }
    }
}

impl Rules {
    /// Rules for `pits` pits per side.
    ///
    /// # Errors
    /// [`Error::Rules`] when `pits` is outside `MIN_PITS..=MAX_PITS`.
    pub fn new(set: RuleSet, pits: u8) -> Result<Rules> {
        if !(MIN_PITS..=MAX_PITS).contains(&pits) {
            return Err(Error::Rules(format!(
                "{pits} pits per side is not supported; use {MIN_PITS} to {MAX_PITS}"
            )));
        }
        Ok(Rules { set, pits })
    }

    /// The rule set.
    pub fn set(self) -> RuleSet {
        self.set
    }

    /// Pits per side (P).
    pub fn pits(self) -> u8 {
        self.pits
    }

    /// Pits on the whole board (2P).
    pub fn board_pits(self) -> usize {
        2 * usize::from(self.pits)
    }
}

impl fmt::Display for Rules {
    /// `awari, 6 pits per side`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {} pits per side", self.set, self.pits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_round_trip() {
        for set in RuleSet::ALL {
            assert_eq!(set.name().parse::<RuleSet>().unwrap(), set);
            assert_eq!(RuleSet::from_code(set.code()), Some(set));
        }
        assert_eq!(RuleSet::from_code(5), None);
        assert!("oware".parse::<RuleSet>().is_err());
    }

    #[test]
    fn board_sizes_are_checked() {
        assert!(Rules::new(RuleSet::Awari, 1).is_err());
        assert!(Rules::new(RuleSet::Awari, 9).is_err());
        assert_eq!(Rules::new(RuleSet::Abapa, 4).unwrap().board_pits(), 8);
    }
}
