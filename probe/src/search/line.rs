//! The positions on the line being searched, with the game's before it, as
//! far back as the last capture: what a repetition is checked against.

use awari_dbformat::Board;

use super::game::{mix, repetition_key, Game, RepetitionRule};

/// The positions since the last capture: the game's history, then the line
/// searched from the root.
pub(super) struct Line {
    rule: RepetitionRule,
    /// Repetition keys ([`repetition_key`]) of the positions, oldest first.
    keys: Vec<u128>,
    /// `keys[start..]` were played since the last capture.
    start: usize,
    /// The sum of [`mix`] over `keys[start..]`: the multiset of positions a
    /// node's value depends on under a rule that ends the game at a
    /// repetition (0 under the even split, whose repetitions are only
    /// estimates).
    hash: u64,
}

/// What [`Line::enter`] changed, for [`Line::leave`].
pub(super) struct Entered {
    start: usize,
    hash: u64,
}

impl Line {
    /// The line at the root `board` of `game`: its history since the last
    /// capture (the positions of the root's seed count).
    pub(super) fn new(game: &Game, board: &Board) -> Line {
        let mut line = Line {
            rule: game.repetition,
            keys: Vec::new(),
            start: 0,
            hash: 0,
        };
        let n = game.history.len();
        for (k, earlier) in game.history.iter().enumerate() {
            if earlier.seeds() == board.seeds() && earlier.per_side() == board.per_side() {
                // n - k plies before the root: the same parity as n - k.
                line.push(repetition_key(earlier, n - k));
            }
        }
        line
    }

    /// How many times the position of `key` came before, since the last
    /// capture.
    #[inline]
    pub(super) fn earlier(&self, key: u128) -> usize {
        self.keys[self.start..]
            .iter()
            .filter(|&&k| k == key)
            .count()
    }

    /// What the value of a node at `ply` depends on besides its board, for
    /// the transposition table's key: under a rule that ends the game at a
    /// repetition, the positions before it and which side moves (their keys
    /// hold it); nothing under the even split.
    #[inline]
    pub(super) fn salt(&self, ply: usize) -> u64 {
        if self.rule == RepetitionRule::EvenSplit {
            0
        } else {
            self.hash ^ (ply as u64 & 1).wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
    }

    /// A position whose moves are about to be searched.
    #[inline]
    pub(super) fn push(&mut self, key: u128) {
        self.keys.push(key);
        if self.rule != RepetitionRule::EvenSplit {
            self.hash = self.hash.wrapping_add(mix(key));
        }
    }

    /// Undoes the last [`Line::push`] of `key`.
    #[inline]
    pub(super) fn pop(&mut self, key: u128) {
        self.keys.pop();
        if self.rule != RepetitionRule::EvenSplit {
            self.hash = self.hash.wrapping_sub(mix(key));
        }
    }

    /// Before searching a child: a capture makes every position so far
    /// unreachable.
    #[inline]
    pub(super) fn enter(&mut self, captured: bool) -> Entered {
        let was = Entered {
            start: self.start,
            hash: self.hash,
        };
        if captured {
            self.start = self.keys.len();
            self.hash = 0;
        }
        was
    }

    /// After searching a child: as before [`Line::enter`].
    #[inline]
    pub(super) fn leave(&mut self, was: Entered) {
        self.start = was.start;
        self.hash = was.hash;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_counts_from_the_last_capture_and_by_mover() {
        let a: Board = "1 0 1 / 0 0 0".parse().unwrap();
        let b: Board = "2 0 0 / 0 0 0".parse().unwrap();
        let bigger: Board = "2 2 2 / 0 0 0".parse().unwrap();
        let game = Game {
            repetition: RepetitionRule::OwnRows,
            // b two plies before the root, a one ply before it.
            history: vec![bigger, b, a],
            ..Game::default()
        };
        let mut line = Line::new(&game, &a);
        assert_eq!(line.earlier(repetition_key(&b, 0)), 1);
        assert_eq!(line.earlier(repetition_key(&b, 1)), 0);
        assert_eq!(line.earlier(repetition_key(&a, 1)), 1);
        assert_eq!(line.earlier(repetition_key(&a, 0)), 0);
        let salt = line.salt(0);
        assert_ne!(salt, 0);
        assert_ne!(salt, line.salt(1));
        line.push(repetition_key(&a, 0));
        let was = line.enter(true);
        assert_eq!(line.earlier(repetition_key(&b, 0)), 0);
        assert_eq!(line.earlier(repetition_key(&a, 0)), 0);
        assert_eq!(line.salt(0), 0);
        line.leave(was);
        assert_eq!(line.earlier(repetition_key(&a, 0)), 1);
        line.pop(repetition_key(&a, 0));
        assert_eq!(line.salt(0), salt);
    }
}
