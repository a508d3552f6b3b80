//! The board: the seeds in each pit, seen from the player to move.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::game::rules::{MAX_PITS, MAX_PIT_SEEDS, MAX_SEEDS, MIN_PITS};

/// The most pits a board can have (2 × `MAX_PITS`).
pub const MAX_BOARD_PITS: usize = 2 * MAX_PITS as usize;

/// One in the low bit of every byte of a packed board ([`Board::packed`]).
pub(crate) const ONES: u128 = u128::MAX / 0xFF;
/// The high bit of every byte of a packed board: above any pit (at most
/// [`crate::MAX_SEEDS`] seeds), so the byte-wise tricks on packed boards
/// use it as a borrow guard.
pub(crate) const HIGH: u128 = ONES << 7;

/// The seeds of a packed board ([`Board::packed`]): its bytes added up by
/// one multiplication (each pit and the sum are at most
/// [`crate::MAX_SEEDS`], so no byte carries into the next).
#[inline(always)]
pub(crate) fn seeds_packed(packed: u128) -> usize {
    let folded = (packed as u64) + ((packed >> 64) as u64);
    (folded.wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize
}

/// Bit k set when byte k of `bytes` has its high bit set (the only bit a
/// byte may have), for the low 16 bytes: the high bits gathered by one
/// multiplication per half.
#[inline(always)]
fn gather_high_bits(bytes: u128) -> u32 {
    // 0x8000_..._80 >> 7 puts bit 0 of byte k at bit 8k; multiplying by
    // 0x0102_0408_1020_4080 moves each to bit 56 + k, without carries.
    let gather = |half: u64| {
        ((((half >> 7) & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080)) >> 56) as u32
    };
    gather(bytes as u64) | gather((bytes >> 64) as u64) << 8
}

/// Bit k set when pit k of a packed board ([`Board::packed`]) holds seeds.
#[inline(always)]
pub(crate) fn nonzero_pits(packed: u128) -> u32 {
    // A byte of at most 127 is non-zero exactly when subtracting one from
    // it with its high bit set leaves that bit set.
    gather_high_bits(((packed | HIGH) - ONES) & HIGH)
}

/// Bit k set when pit k of a packed board ([`Board::packed`]) holds 2 or 3
/// seeds, the counts a last seed captures.
#[inline(always)]
pub(crate) fn pits_of_two_or_three(packed: u128) -> u32 {
    // 2 and 3 are the bytes whose value with bit 0 cleared is 2: those
    // become zero, and only those.
    !nonzero_pits((packed & !ONES) ^ (ONES << 1)) & 0xFFFF
}

/// A board seen from the player to move (the mover).
///
/// Pits are numbered `0..2P` counterclockwise: `0..P` are the mover's (A, B, ...
/// from the mover's left), `P..2P` the opponent's (a, b, ... from the opponent's
/// left), so pit `2P-1` sits opposite pit 0. Captured seeds are not part of a
/// board: a board's value never depends on them.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Board {
    /// Seeds per pit; entries at and beyond `2 * per_side` are always 0.
    pits: [u8; MAX_BOARD_PITS],
    per_side: u8,
}

impl Board {
    /// A board from its pits in pit order (the mover's row first).
    ///
    /// # Errors
    /// [`Error::Notation`] when the number of pits is odd or outside `4..=16`, a pit
    /// holds more than 48 seeds, or the board holds more than `MAX_SEEDS`.
    pub fn new(pits: &[u8]) -> Result<Board> {
        let bad = |reason: String| Error::Notation {
            input: format!("{pits:?}"),
            reason,
        };
        let n = pits.len();
        if n % 2 == 1 || n < 2 * MIN_PITS as usize || n > MAX_BOARD_PITS {
            return Err(bad(format!(
                "{n} pits given; a board has an even number from {} to {} (2 rows of {MIN_PITS} to {MAX_PITS})",
                2 * MIN_PITS,
                MAX_BOARD_PITS
            )));
        }
        if let Some(i) = pits.iter().position(|&s| s > MAX_PIT_SEEDS) {
            return Err(bad(format!(
                "pit {} holds {} seeds; at most {MAX_PIT_SEEDS} fit a pit",
                pit_label(i, n / 2),
                pits[i]
            )));
        }
        let total: u32 = pits.iter().map(|&s| u32::from(s)).sum();
        if total > MAX_SEEDS {
            return Err(bad(format!(
                "{total} seeds in all; at most {MAX_SEEDS} are supported"
            )));
        }
        let mut array = [0; MAX_BOARD_PITS];
        array[..n].copy_from_slice(pits);
        Ok(Board {
            pits: array,
            per_side: (n / 2) as u8,
        })
    }

    /// A board from a full pit array whose unused tail is zero. The caller
    /// guarantees the seed limits; used by move generation and the index.
    #[inline]
    pub(crate) fn from_array(pits: [u8; MAX_BOARD_PITS], per_side: u8) -> Board {
        debug_assert!(pits[2 * per_side as usize..].iter().all(|&s| s == 0));
        Board { pits, per_side }
    }

    /// The pits packed into one word, pit `k` in byte `k` (little end first):
    /// the form the sowing tables of `sowing` work on, and a cheap key for
    /// hot loops that keep boards for a while (a `u128` stays in registers,
    /// where a copied `Board` may go through memory).
    #[inline]
    pub fn packed(&self) -> u128 {
        u128::from_le_bytes(self.pits)
    }

    /// The board of a packed word (see [`Board::packed`]); bytes at and beyond
    /// `2 * per_side` must be zero.
    #[inline]
    pub(crate) fn from_packed(packed: u128, per_side: u8) -> Board {
        Board::from_array(packed.to_le_bytes(), per_side)
    }

    /// The empty board with `per_side` pits per side.
    pub(crate) fn empty(per_side: u8) -> Board {
        Board {
            pits: [0; MAX_BOARD_PITS],
            per_side,
        }
    }

    /// Pits per side (P).
    #[inline]
    pub fn per_side(&self) -> u8 {
        self.per_side
    }

    /// The number of pits on the board (2P).
    #[inline]
    pub fn len(&self) -> usize {
        2 * self.per_side as usize
    }

    /// Always false: a board has at least 4 pits. (Present for `len`'s sake.)
    #[inline]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Seeds in pit `i` (0-based, pit order).
    ///
    /// # Panics
    /// When `i >= 2P`.
    #[inline]
    pub fn pit(&self, i: usize) -> u8 {
        self.pits()[i]
    }

    /// All pits in pit order, the mover's row first.
    #[inline]
    pub fn pits(&self) -> &[u8] {
        &self.pits[..self.len()]
    }

    /// The full fixed-size array (unused tail zero), for hot loops.
    #[inline]
    pub(crate) fn array(&self) -> &[u8; MAX_BOARD_PITS] {
        &self.pits
    }

    /// The mover's row, pits `0..P`.
    #[inline]
    pub fn mover_row(&self) -> &[u8] {
        &self.pits[..self.per_side as usize]
    }

    /// The opponent's row, pits `P..2P`.
    #[inline]
    pub fn opponent_row(&self) -> &[u8] {
        &self.pits[self.per_side as usize..self.len()]
    }

    /// The total number of seeds on the board (the level it belongs to).
    #[inline]
    pub fn seeds(&self) -> u32 {
        self.pits.iter().map(|&s| u32::from(s)).sum()
    }

    /// True when the opponent's row has an empty pit: exactly the boards a
    /// database stores (`docs/rules.md`, "Which boards are stored, and their
    /// order").
    #[inline]
    pub fn is_stored(&self) -> bool {
        Board::stored_packed(self.packed(), u32::from(self.per_side))
    }

    /// [`Board::is_stored`] of the packed board `packed` ([`Board::packed`])
    /// with `per_side` pits per side.
    #[inline]
    pub(crate) fn stored_packed(packed: u128, per_side: u32) -> bool {
        // A zero byte among the opponent's: `(x - 1) & !x` has the high bit of
        // the lowest zero byte set (the classic test); bytes outside the row are
        // made non-zero first, and a borrow only ever starts at a zero byte.
        let row = Board::row_mask(per_side) << (8 * per_side);
        let x = (packed & row) | (ONES & !row);
        x.wrapping_sub(ONES) & !x & HIGH != 0
    }

    /// True when the mover has no seeds (and so no move).
    #[inline]
    pub fn mover_row_empty(&self) -> bool {
        self.packed() & self.mover_row_mask() == 0
    }

    /// True when the opponent has no seeds.
    #[inline]
    pub fn opponent_row_empty(&self) -> bool {
        self.packed() & self.opponent_row_mask() == 0
    }

    /// The same board seen from the other player: the rows change places.
    #[inline]
    pub fn swapped(&self) -> Board {
        // On the packed word: one shift each way. (Copying the rows byte-wise
        // and reading the result back as a word stalled the store buffer.)
        let bits = 8 * u32::from(self.per_side);
        let x = self.packed();
        let mover = self.mover_row_mask();
        Board::from_packed(((x >> bits) & mover) | ((x & mover) << bits), self.per_side)
    }

    /// The bytes of the mover's pits in [`Board::packed`].
    #[inline]
    fn mover_row_mask(&self) -> u128 {
        Board::row_mask(u32::from(self.per_side))
    }

    /// The bytes of the mover's pits in a packed board with `per_side` pits
    /// per side (shifted by `8 * per_side` bits: the opponent's).
    #[inline]
    pub(crate) fn row_mask(per_side: u32) -> u128 {
        (1u128 << (8 * per_side)) - 1
    }

    /// The bytes of the opponent's pits in [`Board::packed`].
    #[inline]
    pub(crate) fn opponent_row_mask(&self) -> u128 {
        self.mover_row_mask() << (8 * u32::from(self.per_side))
    }

    /// True when `other` has the same opponent's row as this board (one
    /// comparison of packed pits, for hot loops).
    ///
    /// # Panics
    /// In debug builds, when the boards have other numbers of pits per side.
    #[inline]
    pub fn same_opponent_row(&self, other: &Board) -> bool {
        debug_assert_eq!(self.per_side, other.per_side);
        (self.packed() ^ other.packed()) & self.opponent_row_mask() == 0
    }

    /// The board in the notation [`Board::from_str`] reads: `1 1 1 1 1 2 / 4 2 3 0 0 0`.
    pub fn to_notation(&self) -> String {
        let row = |r: &[u8]| {
            r.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        format!("{} / {}", row(self.mover_row()), row(self.opponent_row()))
    }

    /// A two-row drawing for people: the opponent's row on top, right to left
    /// (pit 2P-1, `f`, above pit 0, `A`), the mover's row below, with pit letters.
    pub fn drawing(&self) -> String {
        let p = self.per_side as usize;
        let mut top_labels = String::from("      ");
        let mut top = String::from("  opp ");
        let mut bottom = String::from("  you ");
        let mut bottom_labels = String::from("      ");
        for k in 0..p {
            let opp = 2 * p - 1 - k;
            top_labels.push_str(&format!("  {} ", pit_label(opp, p)));
            top.push_str(&format!("[{:>2}]", self.pits[opp]));
            bottom.push_str(&format!("[{:>2}]", self.pits[k]));
            bottom_labels.push_str(&format!("  {} ", pit_label(k, p)));
        }
        format!(
            "{}\n{}\n{}  <- to move\n{}",
            top_labels.trim_end(),
            top,
            bottom,
            bottom_labels.trim_end()
        )
    }
}

/// The letter of pit `i` on a board with `per_side` pits per side: `A`.. for the
/// mover's pits, `a`.. for the opponent's.
pub fn pit_label(i: usize, per_side: usize) -> char {
    if i < per_side {
        (b'A' + i as u8) as char
    } else {
        (b'a' + (i - per_side) as u8) as char
    }
}

/// Reads a mover's pit given as a letter (`A`..) or a 1-based number (`1`..).
///
/// # Errors
/// [`Error::Notation`] when `text` names no pit of the mover's row.
pub fn parse_pit(text: &str, per_side: u8) -> Result<usize> {
    let t = text.trim();
    let bad = || Error::Notation {
        input: text.to_string(),
        reason: format!(
            "a move is one of the mover's pits, a letter A..{} or a number 1..{per_side}",
            pit_label(per_side as usize - 1, per_side as usize)
        ),
    };
    let pit = match t.as_bytes() {
        [c @ b'A'..=b'Z'] => usize::from(c - b'A'),
        [c @ b'a'..=b'z'] => usize::from(c - b'a'),
        _ => t
            .parse::<usize>()
            .map_err(|_| bad())?
            .checked_sub(1)
            .ok_or_else(bad)?,
    };
    if pit < per_side as usize {
        Ok(pit)
    } else {
        Err(bad())
    }
}

impl FromStr for Board {
    type Err = Error;

    /// Reads 2P pit counts in pit order (the mover's row first), separated by
    /// spaces or commas, optionally with `/` or `|` between the rows and brackets
    /// around the whole: `1 1 1 1 1 2 / 4 2 3 0 0 0`, `[1,1,1,1,1,2,4,2,3,0,0,0]`.
    ///
    /// # Errors
    /// [`Error::Notation`] saying what is wrong: a word that is not a number, a
    /// negative count, rows of different lengths, a wrong number of pits, a pit
    /// over 48 seeds.
    fn from_str(input: &str) -> Result<Board> {
        let bad = |reason: String| Error::Notation {
            input: input.to_string(),
            reason,
        };
        let body = input
            .trim()
            .trim_start_matches(['[', '('])
            .trim_end_matches([']', ')']);
        let rows: Vec<&str> = body.split(['/', '|']).collect();
        if rows.len() > 2 {
            return Err(bad("more than one row separator ('/' or '|')".into()));
        }
        let mut pits = Vec::new();
        let mut row_lengths = Vec::new();
        for row in &rows {
            let before = pits.len();
            for word in row.split([' ', ',', '\t']).filter(|w| !w.is_empty()) {
                if word.starts_with('-') {
                    return Err(bad(format!(
                        "{word:?} is negative; a pit holds 0 or more seeds"
                    )));
                }
                let seeds: u32 = word
                    .parse()
                    .map_err(|_| bad(format!("{word:?} is not a number of seeds")))?;
                if seeds > u32::from(MAX_PIT_SEEDS) {
                    return Err(bad(format!(
                        "a pit holds {seeds} seeds; at most {MAX_PIT_SEEDS} fit a pit"
                    )));
                }
                pits.push(seeds as u8);
            }
            row_lengths.push(pits.len() - before);
        }
        if pits.is_empty() {
            return Err(bad("no pits given".into()));
        }
        if row_lengths.len() == 2 && row_lengths[0] != row_lengths[1] {
            return Err(bad(format!(
                "the rows have {} and {} pits; both rows have the same number",
                row_lengths[0], row_lengths[1]
            )));
        }
        Board::new(&pits).map_err(|e| match e {
            Error::Notation { reason, .. } => bad(reason),
            other => other,
        })
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Board[{}]", self.to_notation())
    }
}

impl fmt::Display for Board {
    /// The notation, `1 1 1 1 1 2 / 4 2 3 0 0 0`; see [`Board::drawing`] for a picture.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_notation())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_documented_notation() {
        let want = Board::new(&[1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]).unwrap();
        for text in [
            "1 1 1 1 1 2 4 2 3 0 0 0",
            "1,1,1,1,1,2,4,2,3,0,0,0",
            "1 1 1 1 1 2 / 4 2 3 0 0 0",
            "1,1,1,1,1,2 | 4,2,3,0,0,0",
            "[1,1,1,1,1,2, 4,2,3,0,0,0]",
        ] {
            assert_eq!(text.parse::<Board>().unwrap(), want, "{text}");
        }
        assert_eq!(want.to_notation().parse::<Board>().unwrap(), want);
        assert_eq!(want.seeds(), 16);
        assert_eq!(want.per_side(), 6);
    }

    #[test]
    fn malformed_boards_say_what_is_wrong() {
        let cases = [
            ("1 2 3", "3 pits given"),
            ("1 1 1 1 1 x 0 0 0 0 0 0", "not a number"),
            ("1 1 1 1 1 -1 0 0 0 0 0 0", "negative"),
            ("49 0 0 0 0 0 0 0 0 0 0 0", "at most 48"),
            ("1 1 1 1 1 / 0 0 0 0 0 0 0", "same number"),
            ("1 / 2 / 3", "more than one row separator"),
            ("", "no pits"),
            ("40 40 0 0", "at most 64"),
        ];
        for (text, needle) in cases {
            let err = text.parse::<Board>().unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn swapping_twice_is_identity_and_drawing_puts_f_over_a() {
        let b: Board = "1 2 3 4 5 6 / 7 8 9 0 0 11".parse().unwrap();
        assert_eq!(b.swapped().swapped(), b);
        assert_eq!(b.swapped().mover_row(), &[7, 8, 9, 0, 0, 11]);
        let drawing = b.drawing();
        let lines: Vec<&str> = drawing.lines().collect();
        assert!(lines[0].trim_start().starts_with('f'));
        assert!(lines[1].contains("[11][ 0][ 0][ 9][ 8][ 7]"));
        assert!(lines[2].contains("[ 1][ 2][ 3][ 4][ 5][ 6]"));
    }

    #[test]
    fn same_opponent_row_looks_at_the_opponent_row_only() {
        let b: Board = "1 2 3 4 5 6 / 7 8 9 0 0 11".parse().unwrap();
        let mover_differs: Board = "0 0 0 4 5 6 / 7 8 9 0 0 11".parse().unwrap();
        let opponent_differs: Board = "1 2 3 4 5 6 / 7 8 9 0 1 10".parse().unwrap();
        assert!(b.same_opponent_row(&b) && b.same_opponent_row(&mover_differs));
        assert!(!b.same_opponent_row(&opponent_differs));
        assert_eq!(
            b.same_opponent_row(&b.swapped()),
            b.opponent_row() == b.swapped().opponent_row()
        );
    }

    #[test]
    fn pits_are_read_as_letters_or_numbers() {
        assert_eq!(parse_pit("A", 6).unwrap(), 0);
        assert_eq!(parse_pit("f", 6).unwrap(), 5);
        assert_eq!(parse_pit("6", 6).unwrap(), 5);
        assert!(parse_pit("G", 6).is_err());
        assert!(parse_pit("0", 6).is_err());
    }
}
