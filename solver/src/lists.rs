//! The frontier lists of one generation: a fixed block of memory that tasks
//! fill in grants.
//!
//! The boards a generation decides during propagation go onto a list for the
//! next one (see [`crate::retro`]). Those lists used to be heap vectors, one
//! per grant; freed and made again every generation, in two threads' arenas,
//! they left the allocator holding some 40% more than the lists themselves
//! (17 MiB over 46 at level 24 of 6-pit awari; 290 MiB with one arena). A
//! [`ListArena`] is one anonymous mapping of exactly the entries allowed,
//! reused every other generation, so the lists never hold more than their
//! allowance, and their memory goes back to the system when the level ends.
//!
//! A task takes a grant of up to [`LIST_GRANT`] entries, fills it from the
//! start and reports the part it filled as a segment. What it leaves unfilled
//! is kept for the next task on the same thread, so each generation loses at
//! most one grant per thread.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

use awari_dbformat::huge::HugeArray;

/// Entries a task takes from an arena at a time.
pub const LIST_GRANT: usize = 1024;

/// The list entries of one generation; see the module docs.
pub struct ListArena {
    entries: HugeArray,
    capacity: usize,
    /// Entries handed out in grants so far.
    taken: AtomicUsize,
    /// Per worker thread: the unfilled rest of its last grant.
    leftovers: Vec<Mutex<Range<usize>>>,
}

impl ListArena {
    /// An arena of `capacity` entries (8 bytes each). Its memory becomes
    /// resident only as entries are written.
    ///
    /// # Panics
    /// When the system refuses the memory (the solver checks its budget first).
    pub fn new(capacity: usize) -> ListArena {
        let threads = rayon::current_num_threads() + 1;
        ListArena {
            entries: HugeArray::zeroed(8 * capacity),
            capacity,
            taken: AtomicUsize::new(0),
            leftovers: (0..threads).map(|_| Mutex::new(0..0)).collect(),
        }
    }

    /// The entries, written by the tasks that hold their grants and read
    /// once the generation that wrote them has ended.
    #[inline]
    pub fn entries(&self) -> &[AtomicU64] {
        self.entries.as_atomic_u64()
    }

    /// Empties the arena for a new generation (the entries of the one before
    /// last have all been read).
    pub fn clear(&self) {
        self.taken.store(0, Relaxed);
        for leftover in &self.leftovers {
            *leftover.lock().expect("no task panics holding it") = 0..0;
        }
    }

    /// A range of entries for the calling task alone: the rest of this
    /// thread's last grant, or a new grant; `None` once the arena is spent.
    pub fn grant(&self) -> Option<Range<usize>> {
        let mut leftover = self.leftover().lock().expect("no task panics holding it");
        if !leftover.is_empty() {
            return Some(std::mem::replace(&mut *leftover, 0..0));
        }
        // Once the arena is spent, every decision comes here: a plain read
        // keeps the shared counter's line unwritten (and uncontended) then.
        if self.taken.load(Relaxed) >= self.capacity {
            return None;
        }
        let start = self.taken.fetch_add(LIST_GRANT, Relaxed);
        (start < self.capacity).then(|| start..(start + LIST_GRANT).min(self.capacity))
    }

    /// Keeps the unfilled rest of a grant for the next task on this thread.
    pub fn give_back(&self, rest: Range<usize>) {
        if !rest.is_empty() {
            *self.leftover().lock().expect("no task panics holding it") = rest;
        }
    }

    fn leftover(&self) -> &Mutex<Range<usize>> {
        let thread = rayon::current_thread_index().map_or(0, |t| t + 1);
        &self.leftovers[thread % self.leftovers.len()]
    }
}

/// The segments a generation filled, sorted, joined where they touch, and
/// cut into pieces of at most [`LIST_GRANT`] entries: one task each of the
/// next generation. (The marks of a generation are visited by up to one task
/// per 64 dirty blocks, each of which may fill a short segment; joined, they
/// make far fewer and evener tasks.)
pub fn tidy(mut segments: Vec<Range<usize>>) -> Vec<Range<usize>> {
    segments.sort_unstable_by_key(|segment| segment.start);
    let mut joined: Vec<Range<usize>> = Vec::new();
    for segment in segments.into_iter().filter(|s| !s.is_empty()) {
        match joined.last_mut() {
            Some(last) if last.end == segment.start => last.end = segment.end,
            _ => joined.push(segment),
        }
    }
    joined
        .into_iter()
        .flat_map(|segment| {
            segment
                .clone()
                .step_by(LIST_GRANT)
                .map(move |start| start..(start + LIST_GRANT).min(segment.end))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_segments_cover_the_same_entries_in_pieces_of_a_grant_at_most() {
        let g = LIST_GRANT;
        let segments = vec![
            3 * g..3 * g + 5,
            10..g,
            0..10,
            g..g + 1,
            2 * g..2 * g,
            g + 1..2 * g + 7,
        ];
        let tidied = tidy(segments.clone());
        assert_eq!(
            tidied,
            vec![0..g, g..2 * g, 2 * g..2 * g + 7, 3 * g..3 * g + 5]
        );
        let entries = |s: &[Range<usize>]| {
            let mut all: Vec<usize> = s.iter().flat_map(Clone::clone).collect();
            all.sort_unstable();
            all
        };
        assert_eq!(entries(&tidied), entries(&segments));
        assert!(tidy(Vec::new()).is_empty());
    }

    #[test]
    fn grants_cover_the_arena_once_and_leftovers_come_back() {
        let arena = ListArena::new(2 * LIST_GRANT + 10);
        let first = arena.grant().unwrap();
        assert_eq!(first, 0..LIST_GRANT);
        // The unfilled rest is the next grant on this thread.
        arena.give_back(100..LIST_GRANT);
        assert_eq!(arena.grant().unwrap(), 100..LIST_GRANT);
        assert_eq!(arena.grant().unwrap(), LIST_GRANT..2 * LIST_GRANT);
        // The last grant is cut at the capacity, then none.
        assert_eq!(arena.grant().unwrap(), 2 * LIST_GRANT..2 * LIST_GRANT + 10);
        assert_eq!(arena.grant(), None);
        assert_eq!(arena.grant(), None);
        // A new generation starts again from the beginning.
        arena.give_back(5..7);
        arena.clear();
        assert_eq!(arena.grant().unwrap(), 0..LIST_GRANT);
        // No room at all: never a grant.
        assert_eq!(ListArena::new(0).grant(), None);
    }
}
