//! Partitions: a level's index range cut into consecutive pieces, each
//! solved with a state of its own.
//!
//! Every partition but the last holds the same number of boards, a multiple
//! of 64 (so that a partition's free bits are whole words of the level's).
//! One partition is the whole level, as the in-memory solver has always
//! solved it.

use std::ops::Range;

use awari_dbformat::cluster::shares::aligned_size;
use awari_dbformat::cluster::Shares;
#[cfg(doc)]
use awari_dbformat::cluster::SHARE_ALIGN;

/// The partitions of one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partitions {
    boards: u64,
    size: u64,
    /// `u64::MAX / size`: [`Partitions::of`] multiplies by it instead of
    /// dividing (it runs for every update that crosses partitions).
    reciprocal: u64,
}

impl Partitions {
    /// The level's `boards` boards in at most `wanted` partitions (at least
    /// one) of equal size but the last, a multiple of 64 boards each. A
    /// level too small for `wanted` gets fewer ([`Partitions::count`]).
    pub fn new(boards: u64, wanted: u64) -> Partitions {
        Partitions::aligned(boards, wanted, 64)
    }

    /// [`Partitions::new`] with partitions of a multiple of `align` boards
    /// (itself a multiple of 64): under MPI, [`SHARE_ALIGN`], so that the
    /// ranks' shares of the level are whole blocks of its file.
    pub fn aligned(boards: u64, wanted: u64, align: u64) -> Partitions {
        debug_assert!(align.is_multiple_of(64));
        let size = aligned_size(boards, wanted, align);
        Partitions {
            boards,
            size,
            reciprocal: u64::MAX / size,
        }
    }

    /// The number of partitions (at least 1).
    pub fn count(&self) -> usize {
        self.boards.div_ceil(self.size).max(1) as usize
    }

    /// The boards of all partitions together.
    pub fn boards(&self) -> u64 {
        self.boards
    }

    /// The boards of every partition but perhaps the last.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The level indices of partition `p`.
    ///
    /// # Panics
    /// When `p` is not below [`Partitions::count`].
    pub fn range(&self, p: usize) -> Range<u64> {
        assert!(p < self.count(), "partition {p} of {}", self.count());
        let start = p as u64 * self.size;
        start..(start + self.size).min(self.boards)
    }

    /// The ranks' shares of the level: the runs of partitions each owns.
    pub fn shares(&self, ranks: usize) -> Shares {
        Shares::of_partitions(self.boards, self.size, self.count(), ranks)
    }

    /// The partition that holds level index `q`.
    #[inline]
    pub fn of(&self, q: u64) -> usize {
        // `q * reciprocal / 2^64` is `q / size` or one less (the reciprocal
        // is short of `2^64 / size` by less than one): one step corrects it.
        let guess = ((u128::from(q) * u128::from(self.reciprocal)) >> 64) as u64;
        let p = guess + u64::from((guess + 1) * self.size <= q);
        debug_assert_eq!(p, q / self.size);
        p as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_cover_the_level_once_in_order() {
        for boards in [1, 63, 64, 65, 1000, 80_233] {
            for wanted in [1, 2, 3, 16, 64, 5000] {
                let parts = Partitions::new(boards, wanted);
                assert!(parts.count() as u64 <= wanted.max(1));
                let mut next = 0;
                for p in 0..parts.count() {
                    let range = parts.range(p);
                    assert_eq!(range.start, next);
                    assert!(!range.is_empty());
                    assert_eq!(range.start % 64, 0);
                    assert_eq!(parts.of(range.start), p);
                    assert_eq!(parts.of(range.end - 1), p);
                    next = range.end;
                }
                assert_eq!(next, boards);
            }
        }
    }

    #[test]
    fn the_partition_of_an_index_is_its_quotient_by_the_size() {
        let mut x = 12345u64;
        for size in [64, 128, 960, 64 * 999_999, 7_130_000_000 / 64 * 64] {
            let parts = Partitions::new(size * 3000, 3000);
            assert_eq!(parts.size(), size);
            for _ in 0..100_000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let q = (x >> 20) % parts.boards();
                for q in [q, q / size * size, (q / size * size).saturating_sub(1)] {
                    assert_eq!(parts.of(q), (q / size) as usize, "{q} / {size}");
                }
            }
        }
    }
}
