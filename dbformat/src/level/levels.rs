//! Decoded levels by seed count, as every reader of captures holds them.

use std::sync::Arc;

use crate::game::{Board, Score};
use crate::index::Index;
use crate::level::Values;

/// The scores of decoded levels, one signed byte per stored board in index
/// order, by seed count.
///
/// The solver's initial pass and the verifier's recurrence look a capture's
/// child up here once per capturing move, at random, so levels are kept
/// decoded (1 byte per board, in memory or in a mapped file of scores)
/// rather than compressed.
#[derive(Clone)]
pub struct Levels {
    index: &'static Index,
    levels: Vec<Option<Arc<Values>>>,
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
        let s = seeds as usize;
        if self.levels.len() <= s {
            self.levels.resize(s + 1, None);
        }
        self.levels[s] = Some(values);
    }

    /// Forgets level `seeds` (to give its memory back).
    pub fn remove(&mut self, seeds: u32) {
        if let Some(slot) = self.levels.get_mut(seeds as usize) {
            *slot = None;
        }
    }

    /// True when level `seeds` is held.
    pub fn has(&self, seeds: u32) -> bool {
        self.get(seeds).is_some()
    }

    /// The scores of level `seeds`, if held.
    pub fn get(&self, seeds: u32) -> Option<&Arc<Values>> {
        self.levels.get(seeds as usize).and_then(|l| l.as_ref())
    }

    /// The bytes held by all levels.
    pub fn bytes(&self) -> u64 {
        self.levels.iter().flatten().map(|l| l.len() as u64).sum()
    }

    /// The score of a stored board of a held level.
    ///
    /// # Panics
    /// When the board's level is not held or the board is not stored; the
    /// callers load every level a capture can reach first.
    #[inline]
    pub fn score(&self, board: &Board) -> Score {
        Score::new(*self.slot(board))
    }

    /// Where the score of a stored board of a held level is kept, so that a
    /// caller can prefetch it and read it later.
    ///
    /// # Panics
    /// As [`Levels::score`].
    #[inline]
    pub fn slot(&self, board: &Board) -> &i8 {
        let i = self.index.rank(board).expect("a child is always stored");
        &self.held(board.seeds())[i as usize]
    }

    /// [`Levels::slot`] for boards of `P` pits per side, the levels' own
    /// ([`Index::rank_sized`]).
    ///
    /// # Panics
    /// As [`Levels::score`].
    #[inline]
    pub fn slot_sized<const P: usize>(&self, board: &Board) -> &i8 {
        let i = self
            .index
            .rank_sized::<P>(board)
            .expect("a child is always stored");
        &self.held(board.seeds())[i as usize]
    }

    /// Where the score of board `i` (its index) of held level `seeds` is kept.
    ///
    /// # Panics
    /// When the level is not held or has no board `i`.
    #[inline]
    pub fn slot_at(&self, seeds: u32, i: u64) -> &i8 {
        &self.held(seeds)[i as usize]
    }

    /// Advises that the scores of boards `range` of held level `seeds` are
    /// read soon (their file's pages read ahead: see
    /// [`crate::memory::huge::HugeArray::will_need`]).
    pub fn will_need(&self, seeds: u32, range: std::ops::Range<u64>) {
        self.held(seeds).will_need(range);
    }

    /// Reads the scores of boards `range` of held level `seeds` into memory
    /// now ([`crate::memory::huge::HugeArray::populate`]).
    pub fn populate(&self, seeds: u32, range: std::ops::Range<u64>) {
        self.held(seeds).populate(range);
    }

    /// Reads the scores of held level `seeds` into the page cache now, not
    /// mapped ([`crate::memory::huge::HugeArray::cache`]); nothing for a
    /// level in memory.
    pub fn cache(&self, seeds: u32) {
        let level = self.held(seeds);
        level.cache(0..level.len() as u64);
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

    /// The scores of level `seeds`, which must be held.
    #[inline]
    fn held(&self, seeds: u32) -> &Values {
        self.levels
            .get(seeds as usize)
            .and_then(|l| l.as_deref())
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
        assert_eq!(*levels.slot_at(2, 3), -2);
        let board = Index::for_pits(6).unrank(2, 3).unwrap();
        assert_eq!(levels.score(&board), Score::new(-2));
        levels.remove(2);
        assert!(!levels.has(2) && levels.bytes() == 0);
    }

    #[test]
    #[should_panic(expected = "wrong size")]
    fn a_level_of_the_wrong_size_is_refused() {
        Levels::new(6).insert(2, Arc::new(Values::zeroed(1)));
    }
}
