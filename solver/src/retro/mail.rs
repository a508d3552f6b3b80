//! The updates in transit between partitions held in memory: one box per
//! partition, filled by every other partition's outbox during a
//! generation and emptied before the next.

use std::sync::Mutex;

use rayon::slice::ParallelSliceMut;

use super::batch::{lock, Mailbox};
use super::partition::Partitions;
use crate::error::SolveError;

/// One box of updates per partition, in memory.
pub(super) struct MemoryMail {
    partitions: Partitions,
    boxes: Vec<Mutex<Vec<u64>>>,
}

impl MemoryMail {
    /// Empty boxes, one per partition of `partitions`.
    pub fn new(partitions: Partitions) -> MemoryMail {
        MemoryMail {
            partitions,
            boxes: (0..partitions.count())
                .map(|_| Mutex::new(Vec::new()))
                .collect(),
        }
    }

    /// Empties partition `p`'s box: its updates, sorted.
    pub fn take(&self, p: usize) -> Vec<u64> {
        let mut updates = std::mem::take(&mut *lock(&self.boxes[p]));
        updates.par_sort_unstable();
        updates
    }
}

impl Mailbox for MemoryMail {
    fn post(&self, updates: Vec<u64>) -> Result<(), SolveError> {
        // Sorted, so each partition's updates are one run.
        let mut rest = &updates[..];
        while let Some(&first) = rest.first() {
            let p = self.partitions.of(first >> 1);
            let end = self.partitions.range(p).end;
            let run = rest.partition_point(|&u| u >> 1 < end);
            lock(&self.boxes[p]).extend_from_slice(&rest[..run]);
            rest = &rest[run..];
        }
        Ok(())
    }
}
