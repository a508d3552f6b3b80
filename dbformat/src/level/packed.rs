//! Scores held in as few bits as their level needs, and the place a score is
//! kept, whether in a byte or in packed bits.
//!
//! A board of `n` seeds scores `-n..=n`: 2n + 1 values, so 6 bits for the
//! levels up to 31 seeds where a byte holds 8. Under MPI a rank holds its
//! shares of the lower levels for as long as the levels above read them, and
//! they are a third of its memory (`docs/scaling.md`, "The memory of a
//! rank"); held packed they take a quarter less or more. A capture's child is
//! still read with one access at random: a score spans at most two adjacent
//! bytes.

use crate::game::Score;
use crate::memory::cache::prefetch;
use crate::memory::huge::HugeArray;

/// The scores of a run of boards of level `seeds`, each in
/// [`PackedScores::width`] bits, board `k` at bit `k * width` (least
/// significant bits first), as `score + seeds`.
pub struct PackedScores {
    /// Bits per score.
    width: u32,
    /// What is added to a score to store it (the level's seeds): stored
    /// numbers are `0..=2 * seeds`.
    bias: i16,
    /// The boards held.
    len: u64,
    /// The bits, and one byte more, so that the two bytes a score may span
    /// can always be read.
    bytes: HugeArray,
}

impl PackedScores {
    /// The bits a score of a board of `seeds` seeds takes: the fewest that
    /// hold `0..=2 * seeds` (1 for level 0).
    ///
    /// # Panics
    /// When `seeds` is above 127, past what a [`Score`] holds.
    pub fn width(seeds: u32) -> u32 {
        assert!(seeds <= 127, "a score of level {seeds} does not fit a byte");
        (u32::BITS - (2 * seeds).leading_zeros()).max(1)
    }

    /// The bytes [`PackedScores::pack`] takes for `boards` boards of level
    /// `seeds` (what a plan counts before they are packed).
    ///
    /// # Panics
    /// As [`PackedScores::width`].
    pub fn bytes_for(seeds: u32, boards: u64) -> u64 {
        (boards * u64::from(PackedScores::width(seeds))).div_ceil(8) + 1
    }

    /// Packs `scores`, those of boards of level `seeds` in order; `None`
    /// when a score lies outside `-seeds..=seeds`, which no board of the
    /// level has (a damaged file: such scores are left as they are, for
    /// the verifier to report).
    ///
    /// # Panics
    /// When the memory is refused.
    pub fn pack(seeds: u32, scores: &[i8]) -> Option<PackedScores> {
        let width = PackedScores::width(seeds);
        let bias = seeds as i16;
        let len = scores.len() as u64;
        let mut bytes = HugeArray::zeroed(PackedScores::bytes_for(seeds, len) as usize);
        // Whole 64-bit words are filled and written out as they complete.
        let (mut word, mut filled, mut at) = (0u64, 0u32, 0usize);
        for &score in scores {
            let stored = i16::from(score) + bias;
            if !(0..=2 * bias).contains(&stored) {
                return None;
            }
            let stored = stored as u64;
            word |= stored << filled;
            filled += width;
            if filled >= 64 {
                bytes[at..at + 8].copy_from_slice(&word.to_le_bytes());
                at += 8;
                filled -= 64;
                // The bits of this score that did not fit the word.
                word = if filled == 0 {
                    0
                } else {
                    stored >> (width - filled)
                };
            }
        }
        let tail = filled.div_ceil(8) as usize;
        bytes[at..at + tail].copy_from_slice(&word.to_le_bytes()[..tail]);
        Some(PackedScores {
            width,
            bias,
            len,
            bytes,
        })
    }

    /// The boards held.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when no board is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes the scores take in memory.
    pub fn bytes(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Where the score of board `k` (of those held, from 0) is kept.
    ///
    /// # Panics
    /// When `k` is not below [`PackedScores::len`].
    #[inline]
    pub fn slot(&self, k: u64) -> Slot<'_> {
        assert!(k < self.len, "board {k} of {} packed", self.len);
        let bit = k * u64::from(self.width);
        let at = (bit / 8) as usize;
        let pair = self.bytes[at..at + 2].try_into().expect("two bytes");
        Slot::Packed {
            pair,
            shift: (bit % 8) as u8,
            mask: ((1u16 << self.width) - 1) as u8,
            bias: self.bias as u8,
        }
    }

    /// The score of board `k` (of those held, from 0).
    ///
    /// # Panics
    /// As [`PackedScores::slot`].
    pub fn score(&self, k: u64) -> Score {
        self.slot(k).score()
    }
}

/// Where one board's score is kept: to prefetch it, then read it after the
/// other misses of a batch have been asked for.
#[derive(Clone, Copy, Debug)]
pub enum Slot<'a> {
    /// A score in a byte of its own.
    Byte(&'a i8),
    /// A score in packed bits: `mask` of the bits of the two bytes `pair`
    /// (little-endian) from bit `shift`, as `score + bias`
    /// ([`PackedScores`]).
    Packed {
        pair: &'a [u8; 2],
        shift: u8,
        mask: u8,
        bias: u8,
    },
}

impl Slot<'_> {
    /// The score kept here.
    #[inline]
    pub fn score(self) -> Score {
        match self {
            Slot::Byte(byte) => Score::new(*byte),
            Slot::Packed {
                pair,
                shift,
                mask,
                bias,
            } => {
                let stored = (u16::from_le_bytes(*pair) >> shift) as u8 & mask;
                Score::new((i16::from(stored) - i16::from(bias)) as i8)
            }
        }
    }

    /// Asks the processor for the cache line of the score
    /// ([`crate::memory::cache::prefetch`]). (A score that spans two lines
    /// has its first prefetched; the second is the next line, which the
    /// processor's own prefetcher tends to bring.)
    #[inline]
    pub fn prefetch(self) {
        match self {
            Slot::Byte(byte) => prefetch(byte),
            Slot::Packed { pair, .. } => prefetch(pair),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_level_takes_the_bits_of_its_range() {
        let widths: Vec<u32> = [0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 48, 63, 64, 127]
            .iter()
            .map(|&n| PackedScores::width(n))
            .collect();
        assert_eq!(widths, [1, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 7, 8, 8]);
        for n in 0..=127 {
            let w = PackedScores::width(n);
            assert!(2 * n < 1 << w && (w == 1 || 2 * n >= 1 << (w - 1)), "{n}");
        }
    }

    #[test]
    fn the_extremes_of_every_level_come_back() {
        for seeds in 0..=127u32 {
            let n = seeds as i8;
            let scores: Vec<i8> = (0..200).map(|k| [-n, n, 0, n / 2, -n / 3][k % 5]).collect();
            let packed = PackedScores::pack(seeds, &scores).unwrap();
            assert_eq!(packed.len(), 200);
            let width = u64::from(PackedScores::width(seeds));
            assert_eq!(packed.bytes(), (200 * width).div_ceil(8) + 1);
            assert_eq!(packed.bytes(), PackedScores::bytes_for(seeds, 200));
            for (k, &s) in scores.iter().enumerate() {
                assert_eq!(
                    packed.score(k as u64),
                    Score::new(s),
                    "level {seeds} board {k}"
                );
            }
        }
    }

    #[test]
    fn a_score_out_of_its_level_is_not_packed() {
        assert!(PackedScores::pack(3, &[0, 1, -4]).is_none());
        assert!(PackedScores::pack(3, &[4]).is_none());
        assert!(PackedScores::pack(0, &[0, 0, 1]).is_none());
        assert!(PackedScores::pack(3, &[-3, 3]).is_some());
    }

    #[test]
    #[should_panic(expected = "board 5 of 5")]
    fn a_board_past_the_end_is_not_read() {
        let packed = PackedScores::pack(3, &[0, 1, -3, 2, 3]).unwrap();
        packed.score(5);
    }

    proptest! {
        #[test]
        fn packed_scores_read_back_as_bytes_do(
            (seeds, scores) in (0u32..=48).prop_flat_map(|seeds| {
                let n = seeds as i8;
                (Just(seeds), proptest::collection::vec(-n..=n, 0..700))
            })
        ) {
            let packed = PackedScores::pack(seeds, &scores).unwrap();
            prop_assert_eq!(packed.len(), scores.len() as u64);
            prop_assert_eq!(packed.is_empty(), scores.is_empty());
            for (k, &s) in scores.iter().enumerate() {
                prop_assert_eq!(packed.slot(k as u64).score(), Slot::Byte(&s).score());
            }
        }
    }
}
