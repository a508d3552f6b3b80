//! Endless play, and the values that hold under every rule that ends it.
//!
//! The databases value endless play as Romein and Bal's Awari does: the
//! seeds on the board are shared equally, so a cycle scores 0
//! ([`Repetition::EvenSplit`], every level file of scores). Other sources end
//! it otherwise (a repetition gives each player the seeds on its own side; a
//! deadlock shares them with the odd seed to the leader), and under those
//! rules a board's value can depend on the game's history. What a table of
//! single positions can give for all of them at once is a pair of
//! [`Bounds`] ([`Repetition::Any`]):
//!
//! - **lower**: the most the mover can make sure of when any endless play
//!   would give every seed then on the board to the board's opponent;
//! - **upper**: the same when endless play would give them all to the
//!   board's mover.
//!
//! Any rule that ends endless play by sharing the seeds on the board in
//! some way (the even split among them) gives a value in `[lower, upper]`:
//! the mover's strategy for the lower bound keeps every play either ending by
//! the rules with at least `lower`, or captures enough first that even losing
//! every seed left keeps it there. Where the two meet, the value is the same
//! under every such rule.
//!
//! Both follow the usual recurrence, each from the *other* bound of the
//! children ([`one_ply_bounds`]): a move that passes the turn is worth
//! `captured - upper(child)` towards the lower bound and
//! `captured - lower(child)` towards the upper one (a move that keeps the
//! turn, `captured + lower(child)` and `captured + upper(child)`). Within a
//! level the lower bound is the least solution and the upper the greatest:
//! a bound better than the trivial `-n` or `+n` is always forced in finitely
//! many moves (or captures) from where it is claimed.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::file::Stored;
use crate::game::{Board, Rules, Score, Turn};

/// How a database values endless play.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Repetition {
    /// The seeds on the board are shared equally: a cycle scores 0. One
    /// score per board, exact under this rule (Romein and Bal's).
    #[default]
    EvenSplit,
    /// A [`Bounds`] pair per board that holds under every rule sharing the
    /// seeds on the board in any way.
    Any,
}

impl Repetition {
    /// Both, the default first.
    pub const ALL: [Repetition; 2] = [Repetition::EvenSplit, Repetition::Any];

    /// `even-split` or `any`, as the command lines write it.
    pub fn name(self) -> &'static str {
        match self {
            Repetition::EvenSplit => "even-split",
            Repetition::Any => "any",
        }
    }
}

impl fmt::Display for Repetition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Repetition {
    type Err = Error;

    /// Reads `even-split` or `any`.
    ///
    /// # Errors
    /// [`Error::Repetition`] naming the text.
    fn from_str(s: &str) -> Result<Repetition> {
        Repetition::ALL
            .into_iter()
            .find(|r| r.name() == s.trim())
            .ok_or_else(|| Error::Repetition {
                input: s.to_string(),
            })
    }
}

/// One of the two bounds of `--repetition any`, each kept in a file of its
/// own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// [`Bounds::lower`].
    Lower,
    /// [`Bounds::upper`].
    Upper,
}

impl Bound {
    /// Both, lower first.
    pub const BOTH: [Bound; 2] = [Bound::Lower, Bound::Upper];

    /// `lower` or `upper` (also the middle of the file name).
    pub fn name(self) -> &'static str {
        match self {
            Bound::Lower => "lower",
            Bound::Upper => "upper",
        }
    }

    /// What a level file of this bound says it holds (header byte 92).
    pub fn stored(self) -> Stored {
        match self {
            Bound::Lower => Stored::RepetitionLower,
            Bound::Upper => Stored::RepetitionUpper,
        }
    }
}

/// A board's value under every repetition rule: at least `lower`, at most
/// `upper`, for the mover (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    /// The most the mover can make sure of whatever the repetition rule.
    pub lower: Score,
    /// The most the opponent can hold the mover to whatever the rule.
    pub upper: Score,
}

impl Bounds {
    /// Bounds that meet at `value` (a board whose game ends now, say).
    pub fn exact(value: Score) -> Bounds {
        Bounds {
            lower: value,
            upper: value,
        }
    }

    /// True when the two bounds meet: the value is the same under every
    /// repetition rule.
    pub fn is_exact(&self) -> bool {
        self.lower == self.upper
    }

    /// True when `value` lies within the bounds.
    pub fn contains(&self, value: Score) -> bool {
        self.lower <= value && value <= self.upper
    }

    /// The bounds of a move that reaches a child with bounds `child`, for
    /// the player who made it: the move's capture, then the child's bounds
    /// from the other side (`captured - upper`, `captured - lower`), or from
    /// the same side when the turn stays.
    pub fn of_move(captured: u8, turn: Turn, child: Bounds) -> Bounds {
        let c = captured as i8;
        match turn {
            Turn::Passes => Bounds {
                lower: Score::new(c - child.upper.get()),
                upper: Score::new(c - child.lower.get()),
            },
            Turn::Stays => Bounds {
                lower: Score::new(c + child.lower.get()),
                upper: Score::new(c + child.upper.get()),
            },
        }
    }
}

impl fmt::Display for Bounds {
    /// `+3` when exact, else `-2..+4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_exact() {
            write!(f, "{:+}", self.lower.get())
        } else {
            write!(f, "{:+}..{:+}", self.lower.get(), self.upper.get())
        }
    }
}

/// The bounds of `board` by one ply: the best of its moves for each bound
/// ([`Bounds::of_move`]), with `child_bounds` giving a child's bounds for
/// the child's mover; or, when the mover cannot move, the game's end
/// ([`Rules::terminal_value`]) as both bounds.
///
/// # Errors
/// The first error of `child_bounds`.
pub fn one_ply_bounds<E>(
    rules: Rules,
    board: &Board,
    mut child_bounds: impl FnMut(&Board) -> std::result::Result<Bounds, E>,
) -> std::result::Result<Bounds, E> {
    if let Some(v) = rules.terminal_value(board) {
        return Ok(Bounds::exact(v));
    }
    let mut best: Option<Bounds> = None;
    for m in rules.legal_moves(board).iter() {
        let b = Bounds::of_move(m.captured, m.turn, child_bounds(&m.child)?);
        best = Some(match best {
            None => b,
            Some(x) => Bounds {
                lower: x.lower.max(b.lower),
                upper: x.upper.max(b.upper),
            },
        });
    }
    Ok(best.expect("a board with seeds in the mover's row has a move"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_bad_ones_are_refused() {
        for r in Repetition::ALL {
            assert_eq!(r.name().parse::<Repetition>().unwrap(), r);
        }
        let err = "own-rows".parse::<Repetition>().unwrap_err().to_string();
        assert!(err.contains("even-split or any"), "{err}");
    }

    #[test]
    fn a_move_turns_the_bounds_of_its_child_round() {
        let child = Bounds {
            lower: Score::new(-2),
            upper: Score::new(3),
        };
        let passes = Bounds::of_move(4, Turn::Passes, child);
        assert_eq!((passes.lower.get(), passes.upper.get()), (1, 6));
        let stays = Bounds::of_move(4, Turn::Stays, child);
        assert_eq!((stays.lower.get(), stays.upper.get()), (2, 7));
        assert_eq!(child.to_string(), "-2..+3");
        assert_eq!(Bounds::exact(Score::new(0)).to_string(), "+0");
    }
}
