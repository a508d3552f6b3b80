//! A game as the engine protocol describes it: the houses seen from South,
//! the two stores, who moves, and the positions since the last capture.
//!
//! The notation is Aalina's (and OpenSpiel's): `A`..`F` are South's houses
//! from South's left, `a`..`f` North's from North's left; South moves first
//! from `startpos`; a FEN is the houses `A..F a..f`, the stores of South and
//! North and the player to move (`S` or `N`), joined by `-`, e.g.
//! `4-4-4-4-4-4-4-4-4-4-4-4-0-0-S`.

use awari_dbformat::{Board, Rules, Turn};
use awari_probe::search::RepetitionRule;
use awari_probe::ProbeError;

/// A game in progress.
#[derive(Clone, Debug)]
pub(super) struct Position {
    rules: Rules,
    /// The board seen from the player to move.
    board: Board,
    /// True when South moves.
    south_to_move: bool,
    /// Seeds captured by South and by North.
    stores: [u32; 2],
    /// The positions since the last capture, oldest first, each seen from
    /// its mover; the last is the current position's parent.
    history: Vec<Board>,
}

impl Position {
    /// The start: `seeds` in every house, South to move.
    pub(super) fn start(rules: Rules, seeds: u8) -> Position {
        let houses = vec![seeds; rules.board_pits()];
        Position {
            rules,
            board: Board::new(&houses).expect("a start board is a board"),
            south_to_move: true,
            stores: [0, 0],
            history: Vec::new(),
        }
    }

    /// The position of a FEN (see the module docs), with no history.
    ///
    /// # Errors
    /// [`ProbeError::Input`] naming what is wrong.
    pub(super) fn from_fen(rules: Rules, fen: &str) -> Result<Position, ProbeError> {
        let bad = |why: String| ProbeError::Input(format!("fen {fen:?}: {why}"));
        let parts: Vec<&str> = fen.trim().split('-').collect();
        let houses = rules.board_pits();
        if parts.len() != houses + 3 {
            return Err(bad(format!(
                "{} fields; a fen has {houses} houses, 2 stores and S or N",
                parts.len()
            )));
        }
        let numbers = parts[..houses + 2]
            .iter()
            .map(|p| {
                p.parse::<u8>()
                    .map_err(|_| bad(format!("{p:?} is not a count of seeds")))
            })
            .collect::<Result<Vec<u8>, _>>()?;
        let south_to_move = match parts[houses + 2] {
            "S" => true,
            "N" => false,
            other => return Err(bad(format!("{other:?}: the player to move is S or N"))),
        };
        let south = Board::new(&numbers[..houses])?;
        Ok(Position {
            rules,
            board: if south_to_move {
                south
            } else {
                south.swapped()
            },
            south_to_move,
            stores: [u32::from(numbers[houses]), u32::from(numbers[houses + 1])],
            history: Vec::new(),
        })
    }

    /// The rules of the game.
    pub(super) fn rules(&self) -> Rules {
        self.rules
    }

    /// The board seen from the player to move.
    pub(super) fn board(&self) -> &Board {
        &self.board
    }

    /// The positions since the last capture (see [`Position::history`]'s field).
    pub(super) fn history(&self) -> &[Board] {
        &self.history
    }

    /// Seeds captured by the player to move and by its opponent.
    pub(super) fn captured(&self) -> (u32, u32) {
        let [south, north] = self.stores;
        if self.south_to_move {
            (south, north)
        } else {
            (north, south)
        }
    }

    /// The letter of the mover's `pit` (`A`.. for South, `a`.. for North).
    pub(super) fn letter(&self, pit: u8, south: bool) -> char {
        let base = if south { b'A' } else { b'a' };
        char::from(base + pit)
    }

    /// The letters of `pits` played in turn from this position.
    pub(super) fn letters(&self, pits: &[u8]) -> String {
        let mut game = self.clone();
        let mut out = String::new();
        for &pit in pits {
            out.push(game.letter(pit, game.south_to_move));
            if game.play_pit(pit).is_err() {
                break;
            }
        }
        out
    }

    /// Plays every letter of `moves` (letters, with or without spaces).
    ///
    /// # Errors
    /// [`ProbeError::Input`] for a letter that is not a house of the player
    /// to move or a move that is not legal.
    pub(super) fn play_all(&mut self, moves: &str) -> Result<(), ProbeError> {
        for c in moves.chars().filter(|c| !c.is_whitespace()) {
            self.play_letter(c)?;
        }
        Ok(())
    }

    /// Plays the move of letter `c`.
    fn play_letter(&mut self, c: char) -> Result<(), ProbeError> {
        let p = self.rules.pits();
        let (pit, south) = match c {
            'A'..='Z' => (c as u8 - b'A', true),
            'a'..='z' => (c as u8 - b'a', false),
            _ => return Err(ProbeError::Input(format!("{c:?} is not a move letter"))),
        };
        if pit >= p {
            return Err(ProbeError::Input(format!(
                "{c:?} is not a house: the houses are A..{} and a..{}",
                char::from(b'A' + p - 1),
                char::from(b'a' + p - 1)
            )));
        }
        if south != self.south_to_move {
            let mover = if self.south_to_move { "South" } else { "North" };
            return Err(ProbeError::Input(format!(
                "{c:?} is not a house of {mover}, who is to move"
            )));
        }
        self.play_pit(pit)
    }

    /// Plays the mover's `pit`.
    fn play_pit(&mut self, pit: u8) -> Result<(), ProbeError> {
        let m = self.rules.play(&self.board, usize::from(pit))?;
        let mover = usize::from(!self.south_to_move);
        self.stores[mover] += u32::from(m.captured);
        if m.captured > 0 {
            self.history.clear();
        } else {
            self.history.push(self.board);
        }
        self.board = m.child;
        if m.turn == Turn::Passes {
            self.south_to_move = !self.south_to_move;
        }
        Ok(())
    }

    /// True when South is to move.
    pub(super) fn south_to_move(&self) -> bool {
        self.south_to_move
    }

    /// Why the game is over, if it is: a player has captured more than
    /// half the seeds, the mover has no move, or (under a rule that ends
    /// the game there) the position repeats one since the last capture.
    pub(super) fn over(&self, rule: RepetitionRule) -> Option<&'static str> {
        let total = self.stores[0] + self.stores[1] + self.board.seeds();
        if self.stores.iter().any(|&s| 2 * s > total) {
            return Some("a player has captured more than half the seeds");
        }
        if self.rules.legal_moves(&self.board).is_empty() {
            return Some("the player to move has no move");
        }
        let n = self.history.len();
        let earlier = self
            .history
            .iter()
            .enumerate()
            .filter(|&(k, b)| (n - k).is_multiple_of(2) && b == &self.board)
            .count();
        match rule.ending_after() {
            Some(after) if earlier >= after => Some("the position repeats"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn abapa() -> Rules {
        Rules::new(awari_dbformat::RuleSet::Abapa, 6).unwrap()
    }

    #[test]
    fn moves_turn_the_board_and_fill_the_stores() {
        let mut game = Position::start(abapa(), 4);
        // South sows F: its 4 seeds go to a, b, c and d.
        game.play_all("F").unwrap();
        assert!(!game.south_to_move());
        assert_eq!(game.board().to_notation(), "5 5 5 5 4 4 / 4 4 4 4 4 0");
        assert_eq!(game.history().len(), 1);
        assert_eq!(game.letters(&[0, 5]), "aF");
        let e = game.play_all("B").unwrap_err().to_string();
        assert!(e.contains("North"), "{e}");
        assert!(game.play_all("g").is_err());
        assert!(game.play_all("x").is_err());
    }

    #[test]
    fn a_fen_reads_back_the_same_game() {
        let fen = "0-0-0-0-2-1-1-0-0-0-0-0-20-24-N";
        let game = Position::from_fen(abapa(), fen).unwrap();
        assert!(!game.south_to_move());
        assert_eq!(game.board().to_notation(), "1 0 0 0 0 0 / 0 0 0 0 2 1");
        assert_eq!(game.captured(), (24, 20));
        assert!(game.over(RepetitionRule::OwnRows).is_none());
        for bad in [
            "4-4-S",
            "x-4-4-4-4-4-4-4-4-4-4-4-0-0-S",
            "4-4-4-4-4-4-4-4-4-4-4-4-0-0-W",
        ] {
            assert!(Position::from_fen(abapa(), bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_repetition_ends_the_game_under_own_rows_only() {
        let mut game = Position::start(abapa(), 4);
        let other: Board = "4 4 4 4 4 0 / 5 5 5 5 4 4".parse().unwrap();
        // The same board two plies back: the same player to move.
        game.history = vec![*game.board(), other];
        assert_eq!(
            game.over(RepetitionRule::OwnRows),
            Some("the position repeats")
        );
        assert_eq!(game.over(RepetitionRule::ThreeFold), None);
        assert_eq!(game.over(RepetitionRule::EvenSplit), None);
        // One ply back: the other player moved there, no repetition.
        game.history = vec![other, *game.board()];
        assert_eq!(game.over(RepetitionRule::OwnRows), None);
    }
}
