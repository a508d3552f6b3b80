//! The steps of a threshold stage in one partition: seeding it from `B`,
//! visiting one generation of its frontier, and taking the updates that
//! other partitions sent.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use awari_dbformat::{BoardFinder, Index, Rules};
use indicatif::ProgressBar;
use rayon::prelude::*;

use super::batch::{Outbox, ParentBatch, LOST};
use super::state::{
    may_hold, split_written, with_free, with_written, State, BLOCK_WORDS, DONE, FREE_BIT, MARK_A,
    MARK_B, SUMMARY_WORDS,
};
use crate::cells::{Cell, Packing};
use crate::error::SolveError;

/// Words of the dirty map per task that visits marked boards: 64 of 64
/// blocks each, some 200,000 boards in the narrow layout. (A task per word
/// made up to 125,000 tasks a generation at level 24, each with a batch and
/// a segment of list of its own.)
const DIRTY_WORDS_PER_TASK: usize = 64;

/// Updates from other partitions applied per task.
const INCOMING_PER_TASK: usize = 1 << 14;

/// Wins and losses found.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Decided {
    pub wins: u64,
    pub losses: u64,
}

impl Decided {
    pub fn total(self) -> u64 {
        self.wins + self.losses
    }
}

impl std::ops::AddAssign for Decided {
    fn add_assign(&mut self, other: Decided) {
        self.wins += other.wins;
        self.losses += other.losses;
    }
}

/// Seeds stage `k` of level `seeds` in `state`: boards whose own captures
/// reach +k, or whose captures give exactly -k and whose quiet children are
/// all in W already, are decided and marked for the first generation. (A
/// board with B < -k and a zero counter was decided at an earlier stage.)
pub(super) fn seed<L: Packing>(
    state: &State<L>,
    k: i8,
    seeds: u32,
    progress: &ProgressBar,
) -> Result<Decided, SolveError> {
    if L::SPLIT {
        let decided = seed_split(state, k, seeds);
        progress.inc(decided.total());
        state.check_cold()?;
        return Ok(decided);
    }
    let wins = AtomicU64::new(0);
    let losses = AtomicU64::new(0);
    let mark = MARK_A;
    let (plus_k, minus_k) = (L::any_value_equal(k), L::any_value_equal(-k));
    state.chunks().for_each(|(start, boards, words)| {
        let (mut w, mut l) = (0, 0);
        // Only this task touches the chunk while seeding: plain loads and stores.
        // Runs of words where no undecided board holds ±k are skipped whole.
        let runs = words.chunks(SUMMARY_WORDS).zip(state.summaries_from(start));
        for (r, (run, summary)) in runs.enumerate() {
            if !may_hold(summary.load(Relaxed), k) {
                continue;
            }
            for (m, word) in run.iter().enumerate() {
                let old = word.load(Relaxed);
                // Most words hold no value ±k, and one test skips them.
                if !plus_k(old) && !minus_k(old) {
                    continue;
                }
                let first = start + ((r * SUMMARY_WORDS + m) as u64) * L::PER_WORD;
                let end = start + boards as u64;
                let (new, won, lost) = seed_word(state, old, first..end, k, seeds, mark);
                word.store(new, Relaxed);
                (w, l) = (w + won, l + lost);
            }
        }
        wins.fetch_add(w, Relaxed);
        losses.fetch_add(l, Relaxed);
    });
    let decided = Decided {
        wins: wins.into_inner(),
        losses: losses.into_inner(),
    };
    progress.inc(decided.total());
    Ok(decided)
}

/// [`seed`] in the split cells, which also writes the values of the boards
/// stage `k + 1` decided (`DONE` until then) into their cold bytes, with
/// their free bits, and turns them `WRITTEN`. An undecided board whose `B`
/// is `-k` and whose counter is not zero gets its bit set: it is lost as
/// soon as its counter falls to zero. A task reads and writes its chunk's
/// cold bytes only when its summaries say a board may hold `±k` or a word
/// holds a board to write.
fn seed_split<L: Packing>(state: &State<L>, k: i8, seeds: u32) -> Decided {
    state
        .chunks()
        .map_init(Vec::new, |cold, (start, boards, words)| {
            let summaries = state.summaries_from(start);
            let runs = words.len().div_ceil(SUMMARY_WORDS);
            let may_seed = summaries[..runs]
                .iter()
                .any(|s| may_hold(s.load(Relaxed), k));
            let to_write = words
                .iter()
                .any(|w| L::fields_with_nibble(w.load(Relaxed), 0, DONE) != 0);
            if !may_seed && !to_write {
                return Decided::default();
            }
            cold.resize(boards, 0);
            state.cold().read(start, cold);
            let decided = seed_split_chunk(state, start, words, cold, k, seeds);
            // (Seeding changes only words: only values written change bytes.)
            if to_write {
                state.cold().write(start, cold);
            }
            decided
        })
        .reduce(Decided::default, |mut a, b| {
            a += b;
            a
        })
}

/// [`seed_split`] in one chunk: its `words` and its `cold` bytes, read and
/// changed here (only this task touches them while seeding). The boards
/// to look at are found a word at a time: those `DONE` by a test on the
/// word, those whose `B` is `±k` by a test on eight bytes at once
/// ([`bytes_equal`]); most words have neither.
fn seed_split_chunk<L: Packing>(
    state: &State<L>,
    start: u64,
    words: &[AtomicU64],
    cold: &mut [u8],
    k: i8,
    seeds: u32,
) -> Decided {
    let mut decided = Decided::default();
    let per_word = L::PER_WORD as usize;
    let at_k = bytes_equal(cold, k as u8, (-k) as u8);
    for (w, word) in words.iter().enumerate() {
        let old = word.load(Relaxed);
        let first = w * per_word;
        let done = L::fields_with_nibble(old, 0, DONE);
        let near = bits_at(&at_k, first, per_word);
        if done == 0 && near == 0 {
            continue;
        }
        let mut new = old;
        let mut seeded = false;
        for s in 0..per_word {
            let j = first + s;
            let shift = s as u32 * L::BITS;
            if j >= cold.len() || (done >> shift & 1 == 0 && near >> s & 1 == 0) {
                continue;
            }
            let cell = L::decode(old, shift);
            if cell.nibble == DONE {
                // Decided at stage k + 1: its value goes to its byte.
                cold[j] = split_written(k + 1, cell.value < 0, cold[j] as i8, seeds);
                new = with_written::<L>(new, shift, cell);
            } else if cell.nibble <= 8 {
                let seed = if cold[j] as i8 == k {
                    decided.wins += 1;
                    Some(L::won(k))
                } else if cell.nibble == 0 {
                    // B = -k, every quiet child in W.
                    decided.losses += 1;
                    Some(L::lost(k))
                } else {
                    // B = -k: lost once its counter falls to zero.
                    new = L::replace(new, shift, Cell { value: -1, ..cell });
                    None
                };
                if let Some(value) = seed {
                    new = L::replace(
                        new,
                        shift,
                        Cell {
                            value,
                            nibble: MARK_A,
                        },
                    );
                    seeded = true;
                }
            }
        }
        if new != old {
            word.store(new, Relaxed);
        }
        if seeded {
            state.mark_dirty(0, start + first as u64);
        }
    }
    decided
}

/// One bit per byte of `bytes` (bit `j % 64` of word `j / 64`), set when
/// the byte is `a` or `b`: eight bytes tested at once.
fn bytes_equal(bytes: &[u8], a: u8, b: u8) -> Vec<u64> {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let (a, b) = (
        u64::from(a) * 0x0101_0101_0101_0101,
        u64::from(b) * 0x0101_0101_0101_0101,
    );
    // The top bit of each zero byte of v, exactly (no carry crosses bytes).
    let zero_bytes = |v: u64| !(((v & LOW7) + LOW7) | v | LOW7);
    let mut bits = vec![0u64; bytes.len().div_ceil(64)];
    for (g, group) in bytes.chunks(8).enumerate() {
        let mut eight = [0u8; 8];
        eight[..group.len()].copy_from_slice(group);
        let v = u64::from_le_bytes(eight);
        let mut tops = zero_bytes(v ^ a) | zero_bytes(v ^ b);
        if group.len() < 8 {
            tops &= (1u64 << (8 * group.len())) - 1;
        }
        // The top bits of the eight bytes, gathered into the top byte.
        let found = ((tops >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
        bits[g / 8] |= found << (8 * (g % 8));
    }
    bits
}

/// The `count` (at most 64) bits of `bits` from bit `first` on, in the low
/// bits.
#[inline]
fn bits_at(bits: &[u64], first: usize, count: usize) -> u64 {
    let (word, shift) = (first / 64, first % 64);
    let low = bits.get(word).map_or(0, |&w| w >> shift);
    let high = match (shift, bits.get(word + 1)) {
        (0, _) | (_, None) => 0,
        (_, Some(&w)) => w << (64 - shift),
    };
    (low | high) & (u64::MAX >> (64 - count))
}

/// Seeds stage `k` in one word of cells, `old`, whose first board is
/// `boards.start` (boards from `boards.end` on lie past the task): an
/// undecided board whose captures reach `k` wins `k`, one whose captures give
/// `-k` and whose quiet children are all in W loses `k`, and each gets
/// `mark`, the first generation's (or its free twin). Returns the new word
/// and the wins and losses.
///
/// The fields are tested all at once ([`Packing::fields_with_value`]): which
/// boards of a word are seeded is as good as random, and a branch per field
/// was mispredicted accordingly. Only their nibbles change.
#[inline]
fn seed_word<L: Packing>(
    state: &State<L>,
    old: u64,
    boards: Range<u64>,
    k: i8,
    seeds: u32,
    mark: u8,
) -> (u64, u64, u64) {
    // The fields of this task's boards (a partition's last word may have fewer).
    let fields = boards.end.saturating_sub(boards.start).min(L::PER_WORD);
    let ours = L::FIELD_ONES
        & u64::MAX
            .checked_shr(64 - fields as u32 * L::BITS)
            .unwrap_or(0);
    let wins = L::fields_with_value(old, k) & L::undecided_fields(old) & ours;
    // A zero counter: every quiet child is in W.
    let losses = L::fields_with_value(old, -k) & L::fields_with_nibble(old, 0, 0) & ours;
    if wins | losses == 0 {
        return (old, 0, 0);
    }
    // A capture reaches the value, unless the board has no move at all
    // (B = -n; any capture gives more): always so for a win (k > 0).
    let win_code = u64::from(with_free(mark, true));
    let loss_code = u64::from(with_free(mark, k as u32 != seeds));
    let new = (old & !((wins | losses) * 0xF)) | (wins * win_code) | (losses * loss_code);
    // (All the boards of a word lie in one dirty block.)
    state.mark_dirty(0, boards.start);
    (
        new,
        u64::from(wins.count_ones()),
        u64::from(losses.count_ones()),
    )
}

/// Where a partition's frontier stands between two generations: which of
/// its two dirty maps and marks belong to the generation to visit next, and
/// the segments of its frontier list.
///
/// Each stage starts at parity 0 (seeding marks with [`MARK_A`] in map 0);
/// each visit turns the parity over.
#[derive(Debug, Default)]
pub(super) struct Frontier {
    parity: usize,
    lists: Vec<Range<usize>>,
}

impl Frontier {
    /// The frontier of a stage before any generation: what seeding marked.
    pub fn new_stage(&mut self) {
        debug_assert!(
            self.lists.is_empty(),
            "the last stage ended with an empty frontier"
        );
        self.parity = 0;
        self.lists.clear();
    }

    /// The mark of the generation to visit next.
    fn mark(&self) -> u8 {
        [MARK_A, MARK_B][self.parity]
    }

    /// True when `state` holds boards of the next generation to visit.
    pub fn has_work<L: Packing>(&self, state: &State<L>) -> bool {
        !self.lists.is_empty() || state.any_dirty(self.parity)
    }
}

/// A partition at one generation of stage `k`: what the steps of that
/// generation ([`take_updates`], [`visit`]) read.
pub(super) struct Step<'a, L: Packing> {
    pub rules: Rules,
    /// The level's seed count.
    pub seeds: u32,
    pub index: &'a Index,
    /// The partition's state.
    pub state: &'a State<L>,
    /// The threshold of the stage.
    pub k: i8,
    /// The generation the decisions are recorded as.
    pub generation: u32,
    /// Advanced by one per board decided.
    pub progress: &'a ProgressBar,
}

/// Applies `updates` ([`super::batch::remote_update`]s, every one for
/// a board of `step.state`) as decisions of `step.generation`: a board they
/// decide joins `frontier` (marked: its pits are not at hand).
pub(super) fn take_updates<L: Packing, const P: usize>(
    step: &Step<L>,
    frontier: &Frontier,
    updates: &[u64],
) -> Decided {
    let Step {
        rules,
        state,
        k,
        generation,
        ..
    } = *step;
    let (map, mark) = (frontier.parity, frontier.mark());
    let decided = updates
        .par_chunks(INCOMING_PER_TASK)
        .map(|updates| {
            let mut batch = ParentBatch::<L, P>::new(state, rules, k, generation, map, mark);
            for &u in updates {
                let i = state.local(u >> 1).expect("an update for this partition");
                batch.tell_local(i, u & 1 != 0);
            }
            batch.apply();
            let decided = Decided {
                wins: batch.wins,
                losses: batch.losses,
            };
            let (segments, remote) = batch.finish();
            debug_assert!(segments.is_empty() && remote.is_empty());
            decided
        })
        .reduce(Decided::default, |mut a, b| {
            a += b;
            a
        });
    step.progress.inc(decided.total());
    decided
}

/// Visits one generation (`step.generation`) of stage `step.k` in
/// `step.state`: every board of `frontier` tells its parents, and the
/// parents it decides make the next frontier. Updates for parents in other
/// partitions go to `outbox`. Returns the decisions.
///
/// With one partition, visiting generation after generation until the
/// frontier is empty solves the stage; with many, the driver delivers the
/// outboxes' updates between two generations ([`take_updates`]), so that
/// every board is decided in the same generation as with one.
pub(super) fn visit<L: Packing, const P: usize>(
    step: &Step<L>,
    frontier: &mut Frontier,
    outbox: &Outbox,
) -> Decided {
    let (current, next) = (frontier.parity, 1 - frontier.parity);
    let visit = Visit {
        step,
        outbox,
        next,
        wins: AtomicU64::new(0),
        losses: AtomicU64::new(0),
    };
    let mut segments = visit.listed::<P>(std::mem::take(&mut frontier.lists));
    segments.extend(visit.marked::<P>(current));
    let pool = &step.state.lists;
    pool.end_generation();
    frontier.lists = pool.pieces(segments);
    frontier.parity = next;
    Decided {
        wins: visit.wins.into_inner(),
        losses: visit.losses.into_inner(),
    }
}

/// One generation's visit under way: where it sends, and what it decided.
struct Visit<'a, L: Packing> {
    step: &'a Step<'a, L>,
    outbox: &'a Outbox<'a>,
    /// The parity of the next generation (its dirty map and mark).
    next: usize,
    wins: AtomicU64,
    losses: AtomicU64,
}

impl<L: Packing> Visit<'_, L> {
    /// A batch of parents to tell, deciding for the next generation.
    fn batch<const P: usize>(&self) -> ParentBatch<'_, L, P> {
        let Step {
            rules,
            state,
            k,
            generation,
            ..
        } = *self.step;
        let next_mark = [MARK_A, MARK_B][self.next];
        ParentBatch::new(state, rules, k, generation, self.next, next_mark)
    }

    /// Counts what `batch` decided, sends its updates for other partitions
    /// and returns its segments of the next generation's list.
    fn finish<const P: usize>(&self, batch: ParentBatch<L, P>) -> Vec<Range<usize>> {
        if batch.wins + batch.losses > 0 {
            self.wins.fetch_add(batch.wins, Relaxed);
            self.losses.fetch_add(batch.losses, Relaxed);
            self.step.progress.inc(batch.wins + batch.losses);
        }
        let (segments, remote) = batch.finish();
        self.outbox.send(remote);
        segments
    }

    /// Visits the listed boards of `lists`, a segment (at most one grant)
    /// per task; returns the next generation's segments.
    fn listed<const P: usize>(&self, lists: Vec<Range<usize>>) -> Vec<Range<usize>> {
        let state = self.step.state;
        let (packer, pool) = (state.packer, &state.lists);
        lists
            .into_par_iter()
            .flat_map_iter(|segment| {
                let mut batch = self.batch::<P>();
                for entry in &pool.entries()[segment.clone()] {
                    let entry = entry.load(Relaxed);
                    batch.tell_parents_of(packer.unpack_pits(entry), entry & LOST != 0);
                }
                // Read: the chunk may take the boards this generation lists.
                pool.release(segment);
                batch.apply();
                self.finish(batch)
            })
            .collect()
    }

    /// Visits the boards marked in dirty map `current`, one task per
    /// [`DIRTY_WORDS_PER_TASK`] words of the map; returns the next
    /// generation's segments.
    fn marked<const P: usize>(&self, current: usize) -> Vec<Range<usize>> {
        self.step.state.dirty[current]
            .par_chunks(DIRTY_WORDS_PER_TASK)
            .enumerate()
            .map(|(task, dirty)| {
                // Most words are clear in most generations: read before
                // writing, and make no batch (an allocation) for nothing.
                if dirty.iter().all(|bits| bits.load(Relaxed) == 0) {
                    return Vec::new();
                }
                let mut batch = self.batch::<P>();
                let mut finder = BoardFinder::<P>::new(self.step.index, self.step.seeds);
                for (d, bits) in dirty.iter().enumerate() {
                    if bits.load(Relaxed) == 0 {
                        continue;
                    }
                    let mut bits = bits.swap(0, Relaxed);
                    let dirty_index = task * DIRTY_WORDS_PER_TASK + d;
                    while bits != 0 {
                        let block = dirty_index * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        self.block(block, current, &mut finder, &mut batch);
                    }
                }
                batch.apply();
                self.finish(batch)
            })
            .flatten_iter()
            .collect()
    }

    /// Tells `batch` the parents of the boards of dirty block `block` that
    /// bear generation `current`'s mark, and marks them done.
    fn block<const P: usize>(
        &self,
        block: usize,
        current: usize,
        finder: &mut BoardFinder<'_, P>,
        batch: &mut ParentBatch<L, P>,
    ) {
        let state = self.step.state;
        let words = state.words();
        let cur_mark = [MARK_A, MARK_B][current];
        let first = block * BLOCK_WORDS;
        let last = (first + BLOCK_WORDS).min(words.len());
        // Marked boards of the block. Other threads may change the words
        // meanwhile, but never a cell with this generation's mark (they
        // touch undecided boards, and turn their own new marks of the next
        // generation to DONE), so one load per word is enough.
        for (w, word) in (first..last).zip(&words[first..last]) {
            let word = word.load(Relaxed);
            let mut marked = L::fields_with_nibble(word, FREE_BIT, cur_mark);
            while marked != 0 {
                let shift = marked.trailing_zeros();
                marked &= marked - 1;
                let cell = L::decode(word, shift);
                let i = w as u64 * L::PER_WORD + u64::from(shift / L::BITS);
                state.set_done(i, cur_mark);
                let board = finder
                    .board(state.start + i)
                    .expect("index within the level");
                batch.tell_parents_of(board.packed(), cell.value < 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn bytes_equal_finds_exactly_the_bytes(
            bytes in prop::collection::vec(prop_oneof![Just(0u8), Just(3), Just(253), Just(128), any::<u8>()], 0..300),
            a in prop_oneof![Just(3u8), Just(0), Just(128), any::<u8>()],
            b in prop_oneof![Just(253u8), Just(127), any::<u8>()],
            first in 0usize..300,
            count in 1usize..=64,
        ) {
            let bits = bytes_equal(&bytes, a, b);
            for (j, &byte) in bytes.iter().enumerate() {
                prop_assert_eq!(bits[j / 64] >> (j % 64) & 1 == 1, byte == a || byte == b, "byte {}", j);
            }
            let got = bits_at(&bits, first, count);
            for s in 0..count {
                let j = first + s;
                let expected = j < bytes.len() && (bytes[j] == a || bytes[j] == b);
                prop_assert_eq!(got >> s & 1 == 1, expected, "bit {} from {}", s, first);
            }
        }
    }
}
