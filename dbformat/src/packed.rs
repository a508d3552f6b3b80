//! Boards packed into 63 bits, for long lists of boards of one size.
//!
//! A [`Board`] takes 17 bytes, room for the largest board there is. A list
//! of many boards of one size (the solver's frontier holds up to one board in
//! 64 of a level) can take each in one `u64`: every pit in a fixed number of
//! bits, `63 / 2P` of them (5 for the 6-pit game, so up to 31 seeds a pit),
//! and the top bit left to the list's owner. A board with a pit too full for
//! that does not pack; the owner keeps it some other way.

use crate::board::{Board, MAX_BOARD_PITS};

/// Packs and unpacks the boards of one number of pits per side.
///
/// Pit `k` goes to bits `w k .. w (k + 1)`, `w` bits a pit. Both directions
/// work on the board's sixteen pit bytes as one `u128`, pairing neighbours in
/// four steps (bytes into 16-bit lanes, those into 32-bit lanes, and so on)
/// rather than pit by pit: a frontier board is packed and unpacked once per
/// visit, in the solver's hottest loop.
#[derive(Clone, Copy, Debug)]
pub struct BoardPacker {
    per_side: u8,
    /// Bits per pit, at most 8 (a pit holds at most 48 seeds).
    width: u32,
    /// Per step `s` (lanes of `16 << s` bits), the low `width << s` bits of
    /// every lane set.
    masks: [u128; 4],
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
        let width = (63 / pits).min(8);
        let masks = std::array::from_fn(|step| {
            let lane = 16u32 << step;
            let low = (1u128 << (width << step)) - 1;
            (0..128 / lane).fold(0u128, |m, k| m | low << (k * lane))
        });
        BoardPacker {
            per_side,
            width,
            masks,
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
        let mut x = board.packed();
        // Every pit fits when no byte has a bit at or above `width`.
        if x & !(((1 << self.width) - 1) * ONES) != 0 {
            return None;
        }
        // Each lane of 2^(s+4) bits: its low half, and its high half moved
        // down next to it.
        let w = self.width;
        for (step, &mask) in self.masks.iter().enumerate() {
            let half = 8u32 << step;
            x = (x & mask) | ((x >> half) & mask) << (w << step);
        }
        // (2P pits of `width` bits: at most 63 bits, so the cast loses nothing.)
        Some(x as u64)
    }

    /// The board that [`BoardPacker::pack`] made `bits` from; the top bit is
    /// ignored.
    #[inline]
    pub fn unpack(&self, bits: u64) -> Board {
        let mut x = u128::from(bits & !Self::SPARE_BIT);
        let w = self.width;
        // The steps of `pack` backwards: each lane's high part back up to the
        // lane's upper half.
        for (step, &mask) in self.masks.iter().enumerate().rev() {
            let half = 8u32 << step;
            x = (x & mask) | ((x >> (w << step)) & mask) << half;
        }
        // (Pits beyond 2P were zero when packed, so they come back zero.)
        Board::from_packed(x, self.per_side)
    }
}

/// One in every byte.
const ONES: u128 = u128::MAX / 0xFF;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Index;

    #[test]
    fn every_board_of_small_levels_round_trips() {
        for per_side in [2u8, 3, 4, 6, 8] {
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
