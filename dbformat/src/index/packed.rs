//! Boards packed into 63 bits, for long lists of boards of one size.
//!
//! A [`Board`] takes 17 bytes, room for the largest board there is. A list
//! of many boards of one size (the solver's frontier holds up to one board in
//! 64 of a level) can take each in one `u64`: every pit in a fixed number of
//! bits, `63 / 2P` of them (5 for the 6-pit game, so up to 31 seeds a pit),
//! and the top bit left to the list's owner. A board with a pit too full for
//! that does not pack; the owner keeps it some other way.

use crate::game::board::ONES;
use crate::game::board::{Board, MAX_BOARD_PITS};

/// `f::<W>(arg)` with `W` the packer's width (3 to 8) as a constant of the
/// code: one predictable branch per call instead of shifts by a variable.
macro_rules! at_width {
    ($width:expr, $f:ident($arg:expr)) => {
        match $width {
            3 => $f::<3>($arg),
            4 => $f::<4>($arg),
            5 => $f::<5>($arg),
            6 => $f::<6>($arg),
            7 => $f::<7>($arg),
            _ => $f::<8>($arg),
        }
    };
}

/// Packs and unpacks the boards of one number of pits per side.
///
/// Pit `k` goes to bits `w k .. w (k + 1)`, `w` bits a pit. Both directions
/// work on the board's pit bytes eight at a time, as a `u64`, pairing
/// neighbours in three steps (bytes into 16-bit lanes, those into 32-bit
/// lanes, then the two halves) rather than pit by pit, with `w` a constant of
/// the compiled code: a frontier board is packed and unpacked once per visit,
/// in the solver's hottest loop.
#[derive(Clone, Copy, Debug)]
pub struct BoardPacker {
    per_side: u8,
    /// Bits per pit, 3 to 8 (a pit holds at most 48 seeds).
    width: u32,
}

impl BoardPacker {
    /// The top bit, never set in a packed board.
    pub const SPARE_BIT: u64 = 1 << 63;

    /// A packer for boards of `per_side` pits per side.
    ///
    /// # Panics
    /// When `per_side` is 0 or more than [`crate::MAX_PITS`].
    pub fn new(per_side: u8) -> BoardPacker {
        let pits = 2 * u32::from(per_side);
        assert!(
            (1..=MAX_BOARD_PITS as u32).contains(&pits),
            "{per_side} pits per side"
        );
        BoardPacker {
            per_side,
            width: (63 / pits).min(8),
        }
    }

    /// The most seeds a pit of a packed board may hold.
    pub fn max_pit_seeds(&self) -> u32 {
        (1 << self.width) - 1
    }

    /// `board` in 63 bits (the top bit is clear), or `None` when one of its
    /// pits holds more than [`BoardPacker::max_pit_seeds`].
    ///
    /// # Panics
    /// In debug builds, when the board has another number of pits per side.
    #[inline]
    pub fn pack(&self, board: &Board) -> Option<u64> {
        debug_assert_eq!(board.per_side(), self.per_side);
        self.pack_pits(board.packed())
    }

    /// Like [`BoardPacker::pack`], for a board given as its
    /// [`Board::packed`] pits.
    #[inline]
    pub fn pack_pits(&self, x: u128) -> Option<u64> {
        // Every pit fits when no byte has a bit at or above `width`.
        if x & !(((1 << self.width) - 1) * ONES) != 0 {
            return None;
        }
        Some(at_width!(self.width, pack(x)))
    }

    /// The board that [`BoardPacker::pack`] made `bits` from; the top bit is
    /// ignored.
    #[inline]
    pub fn unpack(&self, bits: u64) -> Board {
        Board::from_packed(self.unpack_pits(bits), self.per_side)
    }

    /// The pits ([`Board::packed`]) of the board that [`BoardPacker::pack`]
    /// made `bits` from; the top bit is ignored. (For hot loops that keep
    /// boards as pits, as [`BoardPacker::pack_pits`] does the other way.)
    #[inline]
    pub fn unpack_pits(&self, bits: u64) -> u128 {
        let bits = bits & !Self::SPARE_BIT;
        // (Pits beyond 2P were zero when packed, so they come back zero.)
        at_width!(self.width, unpack(bits))
    }
}

/// The low `bits` bits of every lane of `lane` bits in a `u64`.
const fn lane_mask(lane: u32, bits: u32) -> u64 {
    let low = if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    let mut mask = 0;
    let mut at = 0;
    while at < 64 {
        mask |= low << at;
        at += lane;
    }
    mask
}

/// Eight pit bytes (each below `2^W`) side by side in `8 W` bits.
#[inline(always)]
fn pack8<const W: u32>(v: u64) -> u64 {
    let v = (v & lane_mask(16, W)) | ((v >> 8) & lane_mask(16, W)) << W;
    let v = (v & lane_mask(32, 2 * W)) | ((v >> 16) & lane_mask(32, 2 * W)) << (2 * W);
    (v & lane_mask(64, 4 * W)) | (v >> 32) << (4 * W)
}

/// The eight pit bytes of [`pack8`]'s `8 W` bits.
#[inline(always)]
fn unpack8<const W: u32>(v: u64) -> u64 {
    let v = (v & lane_mask(64, 4 * W)) | (v >> (4 * W)) << 32;
    let v = (v & lane_mask(32, 2 * W)) | ((v >> (2 * W)) & lane_mask(32, 2 * W)) << 16;
    (v & lane_mask(16, W)) | ((v >> W) & lane_mask(16, W)) << 8
}

/// The sixteen pit bytes of a board, `W` bits each: pits 0..8, then 8..16
/// above them (empty when `W` is 8: at most 6 pits, 8 bits each).
#[inline(always)]
fn pack<const W: u32>(x: u128) -> u64 {
    let low = pack8::<W>(x as u64);
    if 8 * W < 64 {
        low | pack8::<W>((x >> 64) as u64) << (8 * W % 64)
    } else {
        low
    }
}

/// The sixteen pit bytes of [`pack`]'s bits.
#[inline(always)]
fn unpack<const W: u32>(bits: u64) -> u128 {
    if 8 * W < 64 {
        let low = unpack8::<W>(bits & lane_mask(64, 8 * W));
        let high = unpack8::<W>(bits >> (8 * W % 64));
        u128::from(low) | u128::from(high) << 64
    } else {
        u128::from(unpack8::<W>(bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Index;

    #[test]
    fn every_board_of_small_levels_round_trips() {
        for per_side in [2u8, 3, 4, 5, 6, 7, 8] {
            let packer = BoardPacker::new(per_side);
            let index = Index::for_pits(per_side);
            for seeds in 0..=12 {
                let mut packed = 0u64;
                for board in index.boards_from(seeds, 0) {
                    match packer.pack(&board) {
                        Some(bits) => {
                            assert_eq!(bits & BoardPacker::SPARE_BIT, 0);
                            assert_eq!(bits, packed_pit_by_pit(&packer, &board));
                            assert_eq!(packer.unpack(bits), board);
                            assert_eq!(
                                packer.unpack(bits | BoardPacker::SPARE_BIT),
                                board,
                                "the top bit is ignored"
                            );
                            packed += 1;
                        }
                        None => assert!(board
                            .pits()
                            .iter()
                            .any(|&s| u32::from(s) > packer.max_pit_seeds())),
                    }
                }
                if seeds <= 7 {
                    assert_eq!(packed, index.level_size(seeds), "P={per_side} n={seeds}");
                }
            }
        }
    }

    /// The layout by its definition: pit `k` at bits `w k ..`.
    fn packed_pit_by_pit(packer: &BoardPacker, board: &Board) -> u64 {
        let w = packer.max_pit_seeds().count_ones() as usize;
        board
            .pits()
            .iter()
            .enumerate()
            .map(|(k, &s)| u64::from(s) << (w * k))
            .sum()
    }

    #[test]
    fn widths_fill_63_bits() {
        assert_eq!(BoardPacker::new(6).max_pit_seeds(), 31);
        assert_eq!(BoardPacker::new(4).max_pit_seeds(), 127);
        assert_eq!(BoardPacker::new(8).max_pit_seeds(), 7);
        assert_eq!(BoardPacker::new(3).max_pit_seeds(), 255);
        let full = Board::new(&[31, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 31]).unwrap();
        let packer = BoardPacker::new(6);
        assert_eq!(packer.unpack(packer.pack(&full).unwrap()), full);
        let over = Board::new(&[32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        assert_eq!(packer.pack(&over), None);
    }
}
