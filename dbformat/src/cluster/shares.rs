//! A level shared out among the ranks: each rank holds the values of one
//! run of the level's boards, its *share*, and answers the others' lookups
//! into it. No rank holds a lower level whole, so the memory of each falls
//! as ranks are added.
//!
//! A rank's share is the run of partitions it solved the level in (ranks
//! own runs of partitions: [`super::Ranks::owner`]), so the values a rank
//! solved are the ones it keeps. Shares start on multiples of
//! [`SHARE_ALIGN`] boards, the level file's blocks, so that each rank's
//! blocks of the file are its own to encode or decode.

use std::ops::Range;

/// Shares start on multiples of this many boards: the blocks of a level
/// file as `awari-solve` writes it (`WriteOptions::default`).
pub const SHARE_ALIGN: u64 = 16384;

/// Where each rank's share of a level starts and ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shares {
    /// `starts[r]` is the first board of rank r's share; `starts[ranks]`
    /// the level's boards. A rank without a partition has an empty share.
    starts: Vec<u64>,
}

impl Shares {
    /// The shares of a level of `boards` boards cut into `count`
    /// partitions of `size` boards each (the last shorter), among `ranks`
    /// ranks that own runs of them as [`super::Ranks::owner`] has it.
    ///
    /// # Panics
    /// When `ranks` or `count` is 0, or the partitions do not cover the
    /// level.
    pub fn of_partitions(boards: u64, size: u64, count: usize, ranks: usize) -> Shares {
        assert!(
            ranks > 0 && count > 0,
            "at least one rank and one partition"
        );
        assert!(
            size * count as u64 >= boards && size * (count as u64 - 1) < boards.max(1),
            "{count} partitions of {size} boards do not cover {boards}"
        );
        // Rank r owns the partitions p with p * ranks / count == r: from
        // the first p with p * ranks >= r * count.
        let starts = (0..=ranks)
            .map(|r| {
                let first = (r * count).div_ceil(ranks) as u64;
                (first * size).min(boards)
            })
            .collect();
        Shares { starts }
    }

    /// The shares of a level of `boards` boards among `ranks` ranks, one
    /// partition each, of a multiple of [`SHARE_ALIGN`] boards (fewer
    /// partitions than ranks for a level of fewer blocks): how a level
    /// read from its file is shared.
    ///
    /// # Panics
    /// When `ranks` is 0.
    pub fn even(boards: u64, ranks: usize) -> Shares {
        let size = aligned_size(boards, ranks as u64, SHARE_ALIGN);
        let count = boards.div_ceil(size).max(1) as usize;
        Shares::of_partitions(boards, size, count, ranks)
    }

    /// The number of ranks.
    pub fn ranks(&self) -> usize {
        self.starts.len() - 1
    }

    /// The boards of the level.
    pub fn boards(&self) -> u64 {
        self.starts[self.ranks()]
    }

    /// The boards of rank `rank`'s share (empty for a rank without one).
    ///
    /// # Panics
    /// When `rank` is not below [`Shares::ranks`].
    pub fn range(&self, rank: usize) -> Range<u64> {
        self.starts[rank]..self.starts[rank + 1]
    }

    /// The rank whose share holds board `i`.
    ///
    /// # Panics
    /// When `i` is not a board of the level.
    pub fn owner(&self, i: u64) -> usize {
        assert!(i < self.boards(), "board {i} of {}", self.boards());
        // The last rank whose share starts at or before i (ranks with
        // empty shares start where the next one does, and are skipped).
        self.starts.partition_point(|&s| s <= i) - 1
    }
}

/// The boards of each of `wanted` partitions of a level of `boards` boards
/// (at least 1) rounded up to a multiple of `align` (and at least `align`):
/// every partition but the last holds this many.
pub fn aligned_size(boards: u64, wanted: u64, align: u64) -> u64 {
    boards
        .div_ceil(wanted.max(1))
        .next_multiple_of(align)
        .max(align)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_the_level_once_in_order_of_rank() {
        for boards in [1, 100, 16384, 16385, 1 << 20, 80_214_915] {
            for ranks in 1..=5 {
                for per_rank in [1, 2, 3] {
                    let wanted = ranks as u64 * per_rank;
                    let size = aligned_size(boards, wanted, SHARE_ALIGN);
                    let count = boards.div_ceil(size) as usize;
                    let shares = Shares::of_partitions(boards, size, count, ranks);
                    assert_eq!(shares.ranks(), ranks);
                    assert_eq!(shares.boards(), boards);
                    let mut next = 0;
                    for r in 0..ranks {
                        let range = shares.range(r);
                        assert_eq!(range.start, next, "{boards} boards, {ranks} ranks");
                        // (An empty share at the end starts at the end.)
                        assert!(range.start.is_multiple_of(SHARE_ALIGN) || range.start == boards);
                        for p in 0..count {
                            let start = p as u64 * size;
                            // The share holds exactly the partitions the rank owns.
                            let owned = p * ranks / count == r;
                            assert_eq!(range.contains(&start), owned, "partition {p}");
                        }
                        if !range.is_empty() {
                            assert_eq!(shares.owner(range.start), r);
                            assert_eq!(shares.owner(range.end - 1), r);
                        }
                        next = range.end;
                    }
                    assert_eq!(next, boards);
                }
            }
        }
    }

    #[test]
    fn an_even_share_is_one_aligned_partition_per_rank() {
        let shares = Shares::even(100_000, 3);
        assert_eq!(shares.range(0), 0..49_152);
        assert_eq!(shares.range(1), 49_152..98_304);
        assert_eq!(shares.range(2), 98_304..100_000);
        // A level of one block is rank 0's.
        let small = Shares::even(1000, 4);
        assert_eq!(small.range(0), 0..1000);
        assert!((1..4).all(|r| small.range(r).is_empty()));
        assert_eq!(small.owner(999), 0);
    }
}
