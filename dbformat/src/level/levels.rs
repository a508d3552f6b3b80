//! Decoded levels by seed count, as every reader of captures holds them.

use std::sync::Arc;

use crate::cluster::Shares;
use crate::game::{Board, Score};
use crate::index::Index;
use crate::level::{PackedScores, Slot, Values};

/// The scores of decoded levels, one signed byte per stored board in index
/// order, by seed count: of each level the whole, or under MPI one rank's
/// share ([`crate::cluster::Shares`]), a run of its boards, which may be
/// held packed ([`Levels::pack`]).
///
/// The solver's initial pass and the verifier's recurrence look a capture's
/// child up here once per capturing move, at random, so levels are kept
/// decoded (1 byte per board, in memory or in a mapped file of scores, or
/// the bits of [`PackedScores`]) rather than compressed.
#[derive(Clone)]
pub struct Levels {
    index: &'static Index,
    levels: Vec<Option<Held>>,
}

/// The scores held of one level: of its boards from `first` on.
#[derive(Clone)]
struct Held {
    first: u64,
    values: Scores,
    /// Which rank holds which boards, for a level shared out.
    shares: Option<Arc<Shares>>,
}

/// How the scores of a level are held.
#[derive(Clone)]
enum Scores {
    /// A byte a board.
    Bytes(Arc<Values>),
    /// In the bits their level needs.
    Packed(Arc<PackedScores>),
}

impl Scores {
    /// The boards held.
    fn len(&self) -> u64 {
        match self {
            Scores::Bytes(values) => values.len() as u64,
            Scores::Packed(packed) => packed.len(),
        }
    }

    /// The memory (or file) the scores take.
    fn bytes(&self) -> u64 {
        match self {
            Scores::Bytes(values) => values.len() as u64,
            Scores::Packed(packed) => packed.bytes(),
        }
    }

    /// Where the score of board `k` of those held is kept.
    #[inline]
    fn slot(&self, k: u64) -> Slot<'_> {
        match self {
            Scores::Bytes(values) => Slot::Byte(&values[k as usize]),
            Scores::Packed(packed) => packed.slot(k),
        }
    }
}

impl Levels {
    /// No level yet, for boards of `per_side` pits per side.
    pub fn new(per_side: u8) -> Levels {
        Levels {
            index: Index::for_pits(per_side),
            levels: Vec::new(),
        }
    }

    /// Adds (or replaces) the scores of level `seeds`.
    ///
    /// # Panics
    /// When `values` does not hold exactly one value per stored board of the level.
    pub fn insert(&mut self, seeds: u32, values: Arc<Values>) {
        assert_eq!(
            values.len() as u64,
            self.index.level_size(seeds),
            "level {seeds} has the wrong size"
        );
        self.insert_share(seeds, 0, values);
    }

    /// Puts `held` in the place of level `seeds`.
    fn put(&mut self, seeds: u32, held: Held) {
        assert!(
            held.first + held.values.len() <= self.index.level_size(seeds),
            "boards {}.. of level {seeds} run past its end",
            held.first
        );
        let s = seeds as usize;
        if self.levels.len() <= s {
            self.levels.resize(s + 1, None);
        }
        self.levels[s] = Some(held);
    }

    /// Adds (or replaces) the scores of boards `first..first + values.len()`
    /// of level `seeds`: a rank's share of it.
    ///
    /// # Panics
    /// When the boards run past the end of the level.
    pub fn insert_share(&mut self, seeds: u32, first: u64, values: Arc<Values>) {
        let shares = None;
        self.put(
            seeds,
            Held {
                first,
                values: Scores::Bytes(values),
                shares,
            },
        );
    }

    /// Adds (or replaces) rank `rank`'s share of level `seeds`, `values`,
    /// the level being shared out as `shares` has it.
    ///
    /// # Panics
    /// When `values` does not hold one value per board of the share.
    pub fn insert_shared(&mut self, seeds: u32, shares: Shares, rank: usize, values: Arc<Values>) {
        let share = shares.range(rank);
        assert_eq!(
            values.len() as u64,
            share.end - share.start,
            "the share of rank {rank} of level {seeds} has the wrong size"
        );
        assert_eq!(shares.boards(), self.index.level_size(seeds));
        let held = Held {
            first: share.start,
            values: Scores::Bytes(values),
            shares: Some(Arc::new(shares)),
        };
        self.put(seeds, held);
    }

    /// Holds the scores of level `seeds` packed from now on, in the bits
    /// the level needs ([`PackedScores`]: 6 of 8 up to level 31), for a
    /// level kept a long time beside others, as a rank keeps its shares.
    /// Returns whether the level is now held packed: false when it is not
    /// held, or when a score lies outside `-seeds..=seeds` (kept in bytes,
    /// as it is, for the verifier to report).
    pub fn pack(&mut self, seeds: u32) -> bool {
        let Some(held) = self.levels.get_mut(seeds as usize).and_then(|l| l.as_mut()) else {
            return false;
        };
        if let Scores::Bytes(values) = &held.values {
            match PackedScores::pack(seeds, values) {
                Some(packed) => held.values = Scores::Packed(Arc::new(packed)),
                None => return false,
            }
        }
        true
    }

    /// The rank that holds board `i` of level `seeds`: 0 for a level held
    /// whole, or held by this process alone.
    ///
    /// # Panics
    /// When the level is not held.
    #[inline]
    pub fn owner(&self, seeds: u32, i: u64) -> usize {
        self.held(seeds).shares.as_ref().map_or(0, |s| s.owner(i))
    }

    /// Forgets level `seeds` (to give its memory back).
    pub fn remove(&mut self, seeds: u32) {
        if let Some(slot) = self.levels.get_mut(seeds as usize) {
            *slot = None;
        }
    }

    /// True when level `seeds` is held.
    pub fn has(&self, seeds: u32) -> bool {
        self.levels.get(seeds as usize).is_some_and(|l| l.is_some())
    }

    /// The scores held of level `seeds` (the whole level but under MPI:
    /// see [`Levels::share`]), a byte a board; `None` when the level is
    /// not held, or held packed ([`Levels::pack`]).
    pub fn get(&self, seeds: u32) -> Option<&Arc<Values>> {
        match &self.levels.get(seeds as usize)?.as_ref()?.values {
            Scores::Bytes(values) => Some(values),
            Scores::Packed(_) => None,
        }
    }

    /// The boards of level `seeds` whose scores are held (all of them but
    /// for a rank's share), if any.
    pub fn share(&self, seeds: u32) -> Option<std::ops::Range<u64>> {
        let held = self.levels.get(seeds as usize)?.as_ref()?;
        Some(held.first..held.first + held.values.len())
    }

    /// True when every level held is in memory, none read from a mapped
    /// file: a read at random costs a cache miss, never a wait for the disk.
    pub fn in_memory(&self) -> bool {
        self.levels.iter().flatten().all(|h| match &h.values {
            Scores::Bytes(values) => !values.is_from_file(),
            Scores::Packed(_) => true,
        })
    }

    /// The boards whose scores are held, over all levels.
    pub fn boards(&self) -> u64 {
        self.levels.iter().flatten().map(|h| h.values.len()).sum()
    }

    /// The bytes held by all levels (fewer than their boards for levels
    /// held packed).
    pub fn bytes(&self) -> u64 {
        self.levels.iter().flatten().map(|h| h.values.bytes()).sum()
    }

    /// The score of a stored board of a held level.
    ///
    /// # Panics
    /// When the board's level is not held or the board is not stored; the
    /// callers load every level a capture can reach first.
    #[inline]
    pub fn score(&self, board: &Board) -> Score {
        self.slot(board).score()
    }

    /// Where the score of a stored board of a held level is kept, so that a
    /// caller can prefetch it and read it later.
    ///
    /// # Panics
    /// As [`Levels::score`].
    #[inline]
    pub fn slot(&self, board: &Board) -> Slot<'_> {
        let i = self.index.rank(board).expect("a child is always stored");
        self.slot_at(board.seeds(), i)
    }

    /// [`Levels::slot`] for boards of `P` pits per side, the levels' own
    /// ([`Index::rank_sized`]).
    ///
    /// # Panics
    /// As [`Levels::score`].
    #[inline]
    pub fn slot_sized<const P: usize>(&self, board: &Board) -> Slot<'_> {
        let i = self
            .index
            .rank_sized::<P>(board)
            .expect("a child is always stored");
        self.slot_at(board.seeds(), i)
    }

    /// Where the score of board `i` (its index) of held level `seeds` is kept.
    ///
    /// # Panics
    /// When the level is not held or board `i` is not among the boards held.
    #[inline]
    pub fn slot_at(&self, seeds: u32, i: u64) -> Slot<'_> {
        let held = self.held(seeds);
        held.values.slot(i - held.first)
    }

    /// Advises that the scores of boards `range` of held level `seeds` are
    /// read soon (their file's pages read ahead: see
    /// [`crate::memory::huge::HugeArray::will_need`]); nothing for a level
    /// packed.
    pub fn will_need(&self, seeds: u32, range: std::ops::Range<u64>) {
        if let Some((values, range)) = self.bytes_of(seeds, range) {
            values.will_need(range);
        }
    }

    /// Reads the scores of boards `range` of held level `seeds` into memory
    /// now ([`crate::memory::huge::HugeArray::populate`]); nothing for a
    /// level packed.
    pub fn populate(&self, seeds: u32, range: std::ops::Range<u64>) {
        if let Some((values, range)) = self.bytes_of(seeds, range) {
            values.populate(range);
        }
    }

    /// Reads the scores of held level `seeds` into the page cache now, not
    /// mapped ([`crate::memory::huge::HugeArray::cache`]); nothing for a
    /// level in memory.
    pub fn cache(&self, seeds: u32) {
        if let Scores::Bytes(values) = &self.held(seeds).values {
            values.cache(0..values.len() as u64);
        }
    }

    /// The bytes of held level `seeds` and where boards `range` lie in
    /// them, for a level held a byte a board.
    fn bytes_of(
        &self,
        seeds: u32,
        range: std::ops::Range<u64>,
    ) -> Option<(&Values, std::ops::Range<u64>)> {
        let held = self.held(seeds);
        match &held.values {
            Scores::Bytes(values) => {
                Some((values, range.start - held.first..range.end - held.first))
            }
            Scores::Packed(_) => None,
        }
    }

    /// The value of any board of level `board.seeds()` by one ply
    /// ([`crate::level::one_ply`]): a stored board's children on its own
    /// level are read from `level` (that level's scores, index order), the
    /// others from the levels held.
    ///
    /// # Panics
    /// When a child's level is not held.
    pub fn one_ply(&self, rules: crate::Rules, board: &Board, level: &[i8]) -> Score {
        let own = board.seeds();
        let value = crate::level::one_ply(rules, board, |child| {
            Ok::<_, std::convert::Infallible>(if child.seeds() == own {
                let i = self.index.rank(child).expect("a child is stored");
                Score::new(level[i as usize])
            } else {
                self.score(child)
            })
        });
        match value {
            Ok(v) => v,
        }
    }

    /// The value of any board, stored or not: its score when stored, else by
    /// one ply over its children ([`Levels::one_ply`]), all from the levels
    /// held.
    ///
    /// # Panics
    /// When the board's level, or a level its moves reach, is not held.
    pub fn value_of(&self, rules: crate::Rules, board: &Board) -> Score {
        if board.is_stored() {
            return self.score(board);
        }
        let own = self.get(board.seeds()).expect("the board's level is held");
        self.one_ply(rules, board, own)
    }

    /// The scores held of level `seeds`, which must be held.
    #[inline]
    fn held(&self, seeds: u32) -> &Held {
        self.levels
            .get(seeds as usize)
            .and_then(|l| l.as_ref())
            .expect("a capture reached a level that is not held")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_is_held_until_removed() {
        let mut levels = Levels::new(6);
        assert!(!levels.has(2) && levels.get(2).is_none());
        let size = Index::for_pits(6).level_size(2);
        let mut values = Values::zeroed(size);
        values[3] = -2;
        levels.insert(2, Arc::new(values));
        assert!(levels.has(2) && !levels.has(1));
        assert_eq!(levels.bytes(), size);
        assert_eq!(levels.slot_at(2, 3).score(), Score::new(-2));
        let board = Index::for_pits(6).unrank(2, 3).unwrap();
        assert_eq!(levels.score(&board), Score::new(-2));
        levels.remove(2);
        assert!(!levels.has(2) && levels.bytes() == 0);
    }

    #[test]
    fn a_share_is_read_at_the_level_indices_of_its_boards() {
        let mut levels = Levels::new(6);
        let mut values = Values::zeroed(10);
        values[0] = 1;
        values[9] = -3;
        levels.insert_share(4, 100, Arc::new(values));
        assert_eq!(levels.share(4), Some(100..110));
        assert_eq!(
            (
                levels.slot_at(4, 100).score(),
                levels.slot_at(4, 109).score()
            ),
            (Score::new(1), Score::new(-3))
        );
        assert_eq!(levels.bytes(), 10);
        let whole = Index::for_pits(6).level_size(2);
        levels.insert(2, Arc::new(Values::zeroed(whole)));
        assert_eq!(levels.share(2), Some(0..whole));
        assert_eq!(levels.share(3), None);
        assert_eq!(levels.owner(4, 105), 0);
        // Rank 1 of 3, each holding a block of level 12.
        let boards = Index::for_pits(6).level_size(12);
        let shares = Shares::even(boards, 3);
        let mine = shares.range(1);
        let values = Values::zeroed(mine.end - mine.start);
        levels.insert_shared(12, shares, 1, Arc::new(values));
        assert_eq!(levels.share(12), Some(mine.clone()));
        assert_eq!(levels.owner(12, 0), 0);
        assert_eq!(levels.owner(12, mine.start), 1);
        assert_eq!(levels.owner(12, boards - 1), 2);
    }

    #[test]
    fn a_packed_share_reads_as_its_bytes() {
        let mut levels = Levels::new(6);
        let boards = Index::for_pits(6).level_size(9);
        let shares = Shares::even(boards, 2);
        let mine = shares.range(1);
        let len = mine.end - mine.start;
        let mut values = Values::zeroed(len);
        for (k, v) in values.iter_mut().enumerate() {
            *v = (k as i64 * 7 % 19 - 9) as i8;
        }
        let bytes = values.to_vec();
        levels.insert_shared(9, shares, 1, Arc::new(values));
        assert!(levels.get(9).is_some());
        assert!(levels.pack(9) && levels.pack(9), "packed, and packed again");
        assert!(levels.get(9).is_none(), "no bytes once packed");
        assert!(levels.has(9), "but held");
        assert_eq!(levels.share(9), Some(mine.clone()));
        assert_eq!(levels.bytes(), (len * 5).div_ceil(8) + 1, "5 bits a board");
        assert_eq!(levels.boards(), len);
        for (k, &v) in bytes.iter().enumerate() {
            let i = mine.start + k as u64;
            assert_eq!(levels.slot_at(9, i).score(), Score::new(v));
            assert_eq!(levels.owner(9, i), 1);
        }
        let board = Index::for_pits(6).unrank(9, mine.start + 5).unwrap();
        assert_eq!(levels.score(&board), Score::new(bytes[5]));
        assert!(!levels.pack(8), "a level not held");
    }

    #[test]
    fn a_level_with_a_score_out_of_range_stays_in_bytes() {
        let mut levels = Levels::new(6);
        let mut values = Values::zeroed(Index::for_pits(6).level_size(2));
        values[1] = 3;
        levels.insert(2, Arc::new(values));
        assert!(!levels.pack(2));
        assert_eq!(levels.slot_at(2, 1).score(), Score::new(3));
        assert!(levels.get(2).is_some());
    }

    #[test]
    #[should_panic]
    fn a_board_outside_the_share_is_not_read() {
        let mut levels = Levels::new(6);
        levels.insert_share(4, 100, Arc::new(Values::zeroed(10)));
        levels.slot_at(4, 110);
    }

    #[test]
    #[should_panic(expected = "wrong size")]
    fn a_level_of_the_wrong_size_is_refused() {
        Levels::new(6).insert(2, Arc::new(Values::zeroed(1)));
    }
}
