//! Boards packed into 63 bits, for long lists of boards of one size.
//!
//! A [`Board`] takes 17 bytes, room for the largest board there is. A list
//! of many boards of one size (the solver's frontier holds up to one board in
//! 32 of a level) can take each in one `u64`: every pit in a fixed number of
//! bits, `63 / 2P` of them (5 for the 6-pit game, so up to 31 seeds a pit),
//! and the top bit left to the list's owner. A board with a pit too full for
//! that does not pack; the owner keeps it some other way.

use crate::board::{Board, MAX_BOARD_PITS};

/// Packs and unpacks the boards of one number of pits per side.
#[derive(Clone, Copy, Debug)]
pub struct BoardPacker {
    per_side: u8,
    /// Bits per pit.
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
            width: 63 / pits,
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
        let mut bits = 0;
        let mut over = 0;
        for (k, &seeds) in board.pits().iter().enumerate() {
            let seeds = u64::from(seeds);
            // (No branch per pit: one test of every pit's overflow at the end.)
            over |= seeds >> self.width;
            bits |= seeds << (self.width * k as u32);
        }
        (over == 0).then_some(bits)
    }

    /// The board that [`BoardPacker::pack`] made `bits` from; the top bit is
    /// ignored.
    #[inline]
    pub fn unpack(&self, bits: u64) -> Board {
        let mask = (1u64 << self.width) - 1;
        let mut pits = [0u8; MAX_BOARD_PITS];
        for (k, pit) in pits[..2 * self.per_side as usize].iter_mut().enumerate() {
            *pit = ((bits >> (self.width * k as u32)) & mask) as u8;
        }
        Board::from_array(pits, self.per_side)
    }
}

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

    #[test]
    fn widths_fill_63_bits() {
        assert_eq!(BoardPacker::new(6).max_pit_seeds(), 31);
        assert_eq!(BoardPacker::new(4).max_pit_seeds(), 127);
        assert_eq!(BoardPacker::new(8).max_pit_seeds(), 7);
        let full = Board::new(&[31, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 31]).unwrap();
        let packer = BoardPacker::new(6);
        assert_eq!(packer.unpack(packer.pack(&full).unwrap()), full);
        let over = Board::new(&[32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        assert_eq!(packer.pack(&over), None);
    }
}
