//! Capture lookups read in the order of their children: the lower levels'
//! values of many captures at once, for levels in files larger than the
//! page cache.
//!
//! Read at random, each lookup into such a level would wait for the disk
//! (about 18,000 a second here, against 1.4 GB a second read in order). So
//! the lookups of a window of boards are collected first ([`Lookup`]),
//! sorted by child, and read in runs whose children's pages are read ahead
//! together ([`best_values`]). The initial pass of a level does this for its
//! boards (`retro::init`), the statistics for the unstored boards'
//! captures (`stats::Unstored::value_captures_sorted`).

use std::sync::atomic::AtomicI8;
use std::sync::atomic::Ordering::Relaxed;

use awari_dbformat::memory::resident;
use awari_dbformat::{Gain, Levels, Score};
use rayon::prelude::*;

/// A capture waiting for its child's value: the child (its level above
/// [`LEVEL_SHIFT`], its index below), the capturing board (its place in
/// its window) and what the capture adds.
#[derive(Clone, Copy)]
pub(crate) struct Lookup {
    /// The sort key: the child's level, then its index.
    pub child: u64,
    pub board: u32,
    pub gain: Gain,
}

impl Lookup {
    /// The lookup of a capture by board `board` (of its window) into
    /// board `index` of level `seeds`, adding `gain`.
    #[inline]
    pub fn new(seeds: u32, index: u64, board: u32, gain: Gain) -> Lookup {
        Lookup {
            child: u64::from(seeds) << LEVEL_SHIFT | index,
            board,
            gain,
        }
    }

    /// The level of the child.
    fn level(&self) -> u32 {
        (self.child >> LEVEL_SHIFT) as u32
    }

    /// The index of the child in its level.
    fn index(&self) -> u64 {
        self.child & INDEX_MASK
    }
}

/// Where a [`Lookup`]'s child level starts in its key (indices stay below
/// 2^42: level 48 has 2^37.6 boards).
const LEVEL_SHIFT: u32 = 42;

const INDEX_MASK: u64 = (1 << LEVEL_SHIFT) - 1;

/// Lookups read by one task of [`best_values`]; their children's pages are
/// read ahead together.
const LOOKUP_RUN: usize = 1 << 16;

/// The best value the captures of each of the `boards` boards of a window
/// give ([`i8::MIN`] for a board without one), from its `lookups` (sorted
/// by child), read in runs from the `lower` levels. (Atomic: the boards of
/// one run of children lie anywhere in the window.)
pub(crate) fn best_values(lower: &Levels, lookups: &[Lookup], boards: usize) -> Vec<AtomicI8> {
    let best: Vec<AtomicI8> = (0..boards).map(|_| AtomicI8::new(i8::MIN)).collect();
    lookups.par_chunks(LOOKUP_RUN).for_each(|run| {
        read_ahead(lower, run);
        for l in run {
            let value = l
                .gain
                .value(Score::new(*lower.slot_at(l.level(), l.index())));
            best[l.board as usize].fetch_max(value.get(), Relaxed);
        }
        // The pages read, held under the resident ceiling as they come.
        resident::hold();
    });
    best
}

/// Reads in the pages of the children of `run` (sorted by child), level
/// by level, before they are read: the span a run reaches in a level in
/// large reads now, when its lookups are dense enough there (at least one
/// per [`DENSE_SPAN`] bytes), else only advised (read ahead meanwhile).
/// (Faulted in a page at a time, at random, the reads of a level beyond the
/// page cache would wait on the disk for each: about 40 MB/s here, against
/// 1.3 GB/s read in order.)
fn read_ahead(lower: &Levels, run: &[Lookup]) {
    let mut from = 0;
    while from < run.len() {
        let level = run[from].level();
        let to = from + run[from..].partition_point(|l| l.level() == level);
        let (lo, hi) = (run[from].index(), run[to - 1].index());
        if hi - lo < (to - from) as u64 * DENSE_SPAN {
            lower.populate(level, lo..hi + 1);
        } else {
            lower.will_need(level, lo..hi + 1);
        }
        from = to;
    }
}

/// The bytes of a lower level per lookup below which [`read_ahead`] reads
/// in the whole span of a run: a page read in order costs about what a
/// 40th of a page read at random does.
const DENSE_SPAN: u64 = 16 << 10;
