//! Telling parents: the updates of one propagation task, applied in batches,
//! and the updates for boards of other partitions, sent as batches too.

use std::ops::Range;
use std::sync::atomic::{AtomicU16, Ordering::Relaxed};
use std::sync::Mutex;

use awari_dbformat::level::Generations;
use awari_dbformat::memory::cache::prefetch;
use awari_dbformat::{Parents, Rules};

use super::state::{with_free, State, DONE};
use crate::cells::{Cell, Packing};
use crate::error::SolveError;

/// The bit of a list entry that says its board is lost (a packed board leaves
/// it clear).
pub(super) const LOST: u64 = awari_dbformat::BoardPacker::SPARE_BIT;

/// An update for a board of another partition: the parent's level index
/// shifted up by one, and the low bit set when the child that tells it is
/// lost.
#[inline]
pub(super) fn remote_update(q: u64, child_in_loss: bool) -> u64 {
    q << 1 | u64::from(child_in_loss)
}

/// Where the updates for other partitions go: held here and handed to a
/// [`Mailbox`] once more than `cap` are held, and at the end of a visit.
pub(super) struct Outbox<'a> {
    held: Mutex<Vec<u64>>,
    cap: usize,
    mailbox: &'a dyn Mailbox,
    failed: Mutex<Option<SolveError>>,
    /// Updates sent so far.
    sent: std::sync::atomic::AtomicU64,
}

/// What receives the batches for other partitions.
pub(crate) trait Mailbox: Sync {
    /// Takes `updates`, in any order, each for a board of some partition
    /// other than the one being worked.
    ///
    /// # Errors
    /// A batch that cannot be kept (a full disk).
    fn post(&self, updates: Vec<u64>) -> Result<(), SolveError>;
}

impl<'a> Outbox<'a> {
    /// An outbox that holds at most about `cap` updates before posting them.
    pub(super) fn new(mailbox: &'a dyn Mailbox, cap: usize) -> Outbox<'a> {
        Outbox {
            held: Mutex::new(Vec::new()),
            cap: cap.max(1),
            mailbox,
            failed: Mutex::new(None),
            sent: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Adds a task's updates.
    pub(super) fn send(&self, mut updates: Vec<u64>) {
        if updates.is_empty() {
            return;
        }
        self.sent.fetch_add(updates.len() as u64, Relaxed);
        let full = {
            let mut held = lock(&self.held);
            if held.is_empty() {
                std::mem::swap(&mut *held, &mut updates);
            } else {
                held.extend_from_slice(&updates);
            }
            (held.len() >= self.cap).then(|| std::mem::take(&mut *held))
        };
        if let Some(updates) = full {
            self.post(updates);
        }
    }

    /// Posts what is held; returns the first error of any post.
    pub(super) fn flush(&self) -> Result<(), SolveError> {
        let held = std::mem::take(&mut *lock(&self.held));
        if !held.is_empty() {
            self.post(held);
        }
        match lock(&self.failed).take() {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// The updates sent so far.
    pub(super) fn sent(&self) -> u64 {
        self.sent.load(Relaxed)
    }

    fn post(&self, updates: Vec<u64>) {
        if let Err(err) = self.mailbox.post(updates) {
            lock(&self.failed).get_or_insert(err);
        }
    }
}

/// Locks a mutex (no task panics while holding one).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Parent updates of one propagation task, applied in batches.
///
/// A parent lies anywhere in the level, so telling it is a cache miss; done one
/// at a time, right after ranking the parent, the task would wait out every miss.
/// Instead the parents of a few frontier boards are collected, their words are
/// prefetched as they are collected, and the updates are applied together, when
/// most of the words have arrived. Updates within a generation commute (counters
/// only fall, decided boards only join the next generation), so the order does
/// not matter. Parents in other partitions are not told here: their updates
/// are collected ([`remote_update`]) and sent when the task ends.
pub(super) struct ParentBatch<'a, L: Packing, const P: usize> {
    state: &'a State<L>,
    /// The stored parents of a board, ranked.
    parents_of: Parents,
    k: i8,
    /// The generation boards decided here belong to, and where it is recorded.
    generation: u16,
    recorded: Option<&'a [AtomicU16]>,
    /// The dirty map and the mark of the next generation.
    next: usize,
    next_mark: u8,
    /// `(parent's local index, parent's [`Board::packed`] pits or 0 when
    /// unknown, whether the child that told it is lost)`. (Pits rather than
    /// a `Board`: the copy of a `Board` just made from its pits went through
    /// memory and stalled.)
    ///
    /// [`Board::packed`]: awari_dbformat::Board::packed
    parents: Vec<(u64, u128, bool)>,
    /// Updates for parents in other partitions.
    pub(super) remote: Vec<u64>,
    /// The entries of the pool of lists (`state.lists`) this task has filled
    /// for the next generation, one segment per grant
    /// (so that the next generation's tasks take at most a grant each).
    segments: Vec<Range<usize>>,
    /// The unfilled part of this task's grant.
    grant: Range<usize>,
    pub(super) wins: u64,
    pub(super) losses: u64,
}

impl<'a, L: Packing, const P: usize> ParentBatch<'a, L, P> {
    /// Parents collected before the batch is applied: enough to cover the memory
    /// latency, few enough that the prefetched lines are still in the cache.
    const SIZE: usize = 48;

    /// A batch for threshold `k` whose decisions belong to `generation` (as
    /// recorded) and are marked in dirty map `next` with `next_mark`.
    pub(super) fn new(
        state: &'a State<L>,
        rules: Rules,
        k: i8,
        generation: u32,
        next: usize,
        next_mark: u8,
    ) -> ParentBatch<'a, L, P> {
        ParentBatch {
            state,
            parents_of: Parents::new(rules),
            k,
            generation: generation.min(u32::from(u16::MAX)) as u16,
            recorded: state.generations.as_ref().map(Generations::as_atomic),
            next,
            next_mark,
            parents: Vec::with_capacity(Self::SIZE + 2 * awari_dbformat::MAX_PITS as usize * 8),
            remote: Vec::new(),
            segments: Vec::new(),
            grant: 0..0,
            wins: 0,
            losses: 0,
        }
    }

    /// Collects the stored parents of frontier board `child` (its pits,
    /// [`Board::packed`]; lost or not), and applies the batch when it is full.
    ///
    /// [`Board::packed`]: awari_dbformat::Board::packed
    #[inline]
    pub(super) fn tell_parents_of(&mut self, child: u128, lost: bool) {
        let parents_of = self.parents_of;
        parents_of.for_each::<P>(child, |q, parent| self.push(q, parent, lost));
        if self.is_full() {
            self.apply();
        }
    }

    /// Collects an update that another partition sent for local board `i`
    /// (its pits unknown, so a board it decides is marked, not listed).
    #[inline]
    pub(super) fn tell_local(&mut self, i: u64, child_in_loss: bool) {
        prefetch(self.state.word_of(i));
        self.parents.push((i, 0, child_in_loss));
        if self.is_full() {
            self.apply();
        }
    }

    #[inline]
    fn push(&mut self, q: u64, parent: u128, child_in_loss: bool) {
        let Some(i) = self.state.local(q) else {
            self.remote.push(remote_update(q, child_in_loss));
            return;
        };
        prefetch(self.state.word_of(i));
        // A parent of a lost board is nearly always decided (a win) and then
        // records its generation; other parents seldom are.
        if let (Some(recorded), true) = (self.recorded, child_in_loss) {
            prefetch(&recorded[i as usize]);
        }
        self.parents.push((i, parent, child_in_loss));
    }

    fn is_full(&self) -> bool {
        self.parents.len() >= Self::SIZE
    }

    /// True when one more decided board may go onto the list (taking a
    /// grant from the pool of lists when this task has none).
    #[inline(always)]
    fn may_list(&mut self) -> bool {
        !self.grant.is_empty() || self.take_grant()
    }

    /// Takes a grant from the pool of lists, if any is left; true if so.
    #[cold]
    #[inline(never)]
    fn take_grant(&mut self) -> bool {
        match self.state.lists.grant() {
            Some(grant) => {
                self.segments.push(grant.start..grant.start);
                self.grant = grant;
                true
            }
            None => false,
        }
    }

    /// The segments of the next generation's list this task filled, and its
    /// updates for other partitions; the unfilled rest of its grant goes to
    /// the next task on this thread.
    pub(super) fn finish(self) -> (Vec<Range<usize>>, Vec<u64>) {
        self.state.lists.give_back(self.grant);
        let mut segments = self.segments;
        segments.retain(|segment| !segment.is_empty());
        (segments, self.remote)
    }

    /// Marks or lists a board just decided (its nibble already says so):
    /// `listed` is its list entry when it goes onto a list.
    fn decided(&mut self, i: u64, listed: Option<u64>) {
        if let Some(recorded) = self.recorded {
            recorded[i as usize].store(self.generation, Relaxed);
        }
        if let Some(entry) = listed {
            let at = self.grant.start;
            self.state.lists.entries()[at].store(entry, Relaxed);
            self.grant.start += 1;
            self.segments.last_mut().expect("a segment per grant").end = at + 1;
        } else {
            self.state.mark_dirty(self.next, i);
        }
    }

    /// The list entry of the board of pits `parent` when it goes onto a list
    /// if decided: its pits are known (not 0), it packs, and the pool has
    /// room.
    #[inline(always)]
    fn entry(&mut self, parent: u128, lost: bool) -> Option<u64> {
        if parent == 0 {
            return None;
        }
        let packed = self.state.packer.pack_pits(parent)?;
        self.may_list()
            .then_some(packed | if lost { LOST } else { 0 })
    }

    /// Tells every collected parent; see `super::stage::propagate`.
    pub(super) fn apply(&mut self) {
        let (state, k) = (self.state, self.k);
        let parents = std::mem::take(&mut self.parents);
        for &(i, parent, child_in_loss) in &parents {
            // A board decided here is listed (nibble DONE: it needs no finding)
            // when it packs and the pool has room, else marked for the next
            // generation.
            if child_in_loss {
                // The parent can move into a lost position: it wins k. (It is
                // nearly always undecided, so its entry is made beforehand.)
                let listed = self.entry(parent, false);
                let nibble = if listed.is_some() {
                    DONE
                } else {
                    self.next_mark
                };
                let won = Cell {
                    value: L::won(k),
                    nibble,
                };
                if state
                    .update(i, |c| (c.nibble <= 8).then_some(won))
                    .is_some()
                {
                    self.decided(i, listed);
                    self.wins += 1;
                }
            } else {
                // One more quiet child in W; when none is left and the captures
                // give at most -k, the parent loses k (and a capture reaches
                // that value when B(q) is exactly -k). The parent is marked;
                // when it can be listed instead, its mark becomes DONE (an OR on
                // the word just swapped: marks of the next generation are not
                // looked for before this generation ends).
                let mark = self.next_mark;
                let old = state.update(i, |c| match c.nibble {
                    1 if L::lossable(c.value, k) => Some(Cell {
                        value: L::lost(k),
                        nibble: with_free(mark, L::free_loss(c.value, k)),
                    }),
                    1..=8 => Some(Cell {
                        nibble: c.nibble - 1,
                        ..c
                    }),
                    _ => None,
                });
                // Decided here iff the counter was 1 and B(q) <= -k.
                if old.is_some_and(|c| c.nibble == 1 && L::lossable(c.value, k)) {
                    let listed = self.entry(parent, true);
                    if listed.is_some() {
                        state.set_done(i, mark);
                    }
                    self.decided(i, listed);
                    self.losses += 1;
                }
            }
        }
        self.parents = parents;
        self.parents.clear();
    }
}
