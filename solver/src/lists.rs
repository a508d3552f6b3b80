//! The frontier lists: a fixed pool of chunks that one generation fills and
//! the next empties.
//!
//! The boards a generation decides during propagation go onto a list for the
//! next one (see [`crate::retro`]). Those lists used to be heap vectors, one
//! per grant; freed and made again every generation, in two threads' arenas,
//! they left the allocator holding some 40% more than the lists themselves
//! (17 MiB over 46 at level 24 of 6-pit awari; 290 MiB with one arena). A
//! [`ListPool`] is one anonymous mapping of exactly the entries allowed, so
//! the lists never hold more than their allowance, and their memory goes
//! back to the system when the level ends.
//!
//! The pool is cut into chunks of [`LIST_GRANT`] entries. A task takes a
//! chunk, fills it from the start and reports the part it filled; what it
//! leaves unfilled is kept for the next task on the same thread, so each
//! generation leaves at most one chunk per thread part-filled. The next
//! generation visits the filled part of each chunk as one task and then
//! returns the chunk to the pool, where the boards that task decides may
//! already go. So the pool is shared by the generation being visited and the
//! one being made: a generation may list as many boards as the pool holds,
//! less what is not visited yet, where two fixed halves allowed one half
//! (at level 22 of awari, lists of one board in 128 per generation solved
//! some 6% slower than one in 64).

use std::ops::Range;
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use awari_dbformat::memory::huge::HugeArray;

/// Entries of a chunk, the most a task takes from the pool at a time.
pub const LIST_GRANT: usize = 1024;

/// The list entries of the generation being visited and the one being made;
/// see the module docs.
pub struct ListPool {
    entries: HugeArray,
    /// Entries per chunk: [`LIST_GRANT`], or fewer in a pool smaller than that.
    chunk: usize,
    /// The chunks no generation holds, by number.
    free: Mutex<Vec<usize>>,
    /// Per worker thread: the unfilled rest of the chunk it is filling.
    leftovers: Vec<Mutex<Range<usize>>>,
}

impl ListPool {
    /// A pool of at most `capacity` entries (8 bytes each), in whole chunks.
    /// Its memory becomes resident only as entries are written.
    ///
    /// # Panics
    /// When the system refuses the memory (the solver checks its budget first).
    pub fn new(capacity: usize) -> ListPool {
        let chunk = LIST_GRANT.min(capacity).max(1);
        let chunks = capacity / chunk;
        let threads = rayon::current_num_threads() + 1;
        ListPool {
            entries: HugeArray::zeroed(8 * chunks * chunk),
            chunk,
            // Taken from the end: the lowest chunks first.
            free: Mutex::new((0..chunks).rev().collect()),
            leftovers: (0..threads).map(|_| Mutex::new(0..0)).collect(),
        }
    }

    /// The entries, written by the task that holds their chunk and read once
    /// the generation that wrote them has ended.
    #[inline]
    pub fn entries(&self) -> &[AtomicU64] {
        self.entries.as_atomic_u64()
    }

    /// A range of entries for the calling task alone: the rest of the chunk
    /// this thread is filling, or a chunk from the pool; `None` when the pool
    /// has none left.
    pub fn grant(&self) -> Option<Range<usize>> {
        let mut leftover = lock(self.leftover());
        if !leftover.is_empty() {
            return Some(std::mem::replace(&mut *leftover, 0..0));
        }
        let chunk = lock(&self.free).pop()?;
        Some(chunk * self.chunk..(chunk + 1) * self.chunk)
    }

    /// Keeps the unfilled rest of a grant for the next task on this thread.
    pub fn give_back(&self, rest: Range<usize>) {
        if !rest.is_empty() {
            *lock(self.leftover()) = rest;
        }
    }

    /// Ends a generation's making: the chunks part-filled are now its list,
    /// to be visited, and no task fills them further.
    pub fn end_generation(&self) {
        for leftover in &self.leftovers {
            *lock(leftover) = 0..0;
        }
    }

    /// Returns to the pool the chunk of `piece` (one of [`ListPool::pieces`]),
    /// once its entries have been read.
    pub fn release(&self, piece: Range<usize>) {
        lock(&self.free).push(piece.start / self.chunk);
    }

    /// The filled segments of a generation as the pieces the next generation
    /// visits: the filled part of each chunk, one task each. (A chunk is
    /// filled from its start by one thread at a time, so its segments join
    /// into one range from the start of the chunk.)
    pub fn pieces(&self, mut segments: Vec<Range<usize>>) -> Vec<Range<usize>> {
        segments.retain(|segment| !segment.is_empty());
        segments.sort_unstable_by_key(|segment| segment.start);
        let mut pieces: Vec<Range<usize>> = Vec::new();
        for segment in segments {
            debug_assert_eq!(segment.start / self.chunk, (segment.end - 1) / self.chunk);
            match pieces.last_mut() {
                Some(last) if last.end == segment.start && segment.start % self.chunk != 0 => {
                    last.end = segment.end;
                }
                _ => pieces.push(segment),
            }
        }
        debug_assert!(pieces.iter().all(|p| p.start % self.chunk == 0));
        pieces
    }

    fn leftover(&self) -> &Mutex<Range<usize>> {
        let thread = rayon::current_thread_index().map_or(0, |t| t + 1);
        &self.leftovers[thread % self.leftovers.len()]
    }
}

/// Locks a mutex of the pool (no task panics while holding one).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: usize = LIST_GRANT;

    #[test]
    fn chunks_are_handed_out_once_and_come_back_when_visited() {
        let pool = ListPool::new(2 * G + 10); // two whole chunks
        let first = pool.grant().unwrap();
        assert_eq!(first, 0..G);
        // The unfilled rest is the next grant on this thread.
        pool.give_back(100..G);
        assert_eq!(pool.grant().unwrap(), 100..G);
        assert_eq!(pool.grant().unwrap(), G..2 * G);
        assert_eq!(pool.grant(), None);
        // A chunk visited returns to the pool for the generation being made.
        pool.release(0..100);
        assert_eq!(pool.grant().unwrap(), 0..G);
        assert_eq!(pool.grant(), None);
        // A generation's end forgets the part-filled chunk of each thread.
        pool.give_back(G + 5..2 * G);
        pool.end_generation();
        assert_eq!(pool.grant(), None);
        // No room at all: never a grant; a tiny pool has one tiny chunk.
        assert_eq!(ListPool::new(0).grant(), None);
        let tiny = ListPool::new(1);
        assert_eq!(tiny.grant().unwrap(), 0..1);
        assert_eq!(tiny.grant(), None);
    }

    #[test]
    fn segments_join_into_one_piece_per_chunk() {
        let pool = ListPool::new(4 * G);
        // Chunk 0 filled by three tasks in turn, chunk 1 whole, chunk 3 in part.
        let segments = vec![
            3 * G..3 * G + 5,
            10..300,
            0..10,
            G..2 * G,
            2 * G..2 * G,
            300..G,
        ];
        assert_eq!(
            pool.pieces(segments),
            vec![0..G, G..2 * G, 3 * G..3 * G + 5]
        );
        assert!(pool.pieces(Vec::new()).is_empty());
    }
}
