//! What a database stores for a position, and what it means for a game.

use std::fmt;

/// The value of a position for the player to move: the seeds the mover will still
/// capture minus the seeds the opponent will still capture, with perfect play by
/// both (each maximising its own final difference). Endless play counts 0.
///
/// For a board of `n` seeds, `-n <= score <= n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Score(i8);

impl Score {
    /// A drawn position: 0.
    pub const DRAW: Score = Score(0);

    /// The score `v`.
    #[inline]
    pub const fn new(v: i8) -> Score {
        Score(v)
    }

    /// The difference as a number.
    #[inline]
    pub const fn get(self) -> i8 {
        self.0
    }

    /// The result of the game for the mover when the mover has already captured
    /// `mover_captured` seeds and the opponent `opponent_captured`.
    pub fn outcome(self, mover_captured: u32, opponent_captured: u32) -> Outcome {
        let total = i64::from(mover_captured) - i64::from(opponent_captured) + i64::from(self.0);
        match total.signum() {
            1 => Outcome::Win,
            0 => Outcome::Draw,
            _ => Outcome::Loss,
        }
    }
}

impl fmt::Display for Score {
    /// With an explicit sign for non-zero values: `+3`, `0`, `-2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 > 0 {
            write!(f, "+{}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

/// Win, draw or loss for the player to move, once the seeds already captured are
/// taken into account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The mover ends with more seeds.
    Win,
    /// Both end with the same number of seeds.
    Draw,
    /// The opponent ends with more seeds.
    Loss,
}

impl Outcome {
    /// `win`, `draw` or `loss`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Win => "win",
            Outcome::Draw => "draw",
            Outcome::Loss => "loss",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_adds_captured_seeds() {
        // Lincke's Fig. A.2: the mover has 8 of 18 still to gain against 10: -2.
        assert_eq!(Score::new(-2).outcome(0, 0), Outcome::Loss);
        assert_eq!(Score::new(-2).outcome(17, 13), Outcome::Win);
        assert_eq!(Score::new(-2).outcome(15, 13), Outcome::Draw);
        assert_eq!(Score::DRAW.outcome(24, 24), Outcome::Draw);
        assert_eq!(Score::new(3).to_string(), "+3");
        assert_eq!(Score::new(-3).to_string(), "-3");
    }
}
