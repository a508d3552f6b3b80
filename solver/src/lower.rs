//! The finished lower levels, decoded, as the solver reads them: in memory,
//! or in files of scores mapped so that the page cache holds what memory
//! allows (for levels whose lower levels do not fit in the budget).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use awari_dbformat::{Board, Index, Score};

use awari_dbformat::level::Values;
use awari_dbformat::memory::huge::HugeArray;

use crate::error::SolveError;
use crate::mapped;

/// The values of finished levels, one signed byte per stored board in index order.
///
/// The solver looks up a capture's child here once per capturing move, at random,
/// so the levels are kept decoded (1 byte per board) rather than compressed.
#[derive(Clone)]
pub struct LowerLevels {
    index: &'static Index,
    levels: Vec<Option<Arc<Values>>>,
}

impl LowerLevels {
    /// No level loaded yet, for boards of `per_side` pits per side.
    pub fn new(per_side: u8) -> LowerLevels {
        LowerLevels {
            index: Index::for_pits(per_side),
            levels: Vec::new(),
        }
    }

    /// Adds (or replaces) the values of level `seeds`.
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

    /// True when level `seeds` is loaded.
    pub fn has(&self, seeds: u32) -> bool {
        self.levels.get(seeds as usize).is_some_and(|l| l.is_some())
    }

    /// The values of level `seeds`, if loaded.
    pub fn level(&self, seeds: u32) -> Option<&Arc<Values>> {
        self.levels.get(seeds as usize).and_then(|l| l.as_ref())
    }

    /// The bytes held by all loaded levels.
    pub fn bytes(&self) -> u64 {
        self.levels.iter().flatten().map(|l| l.len() as u64).sum()
    }

    /// The value of a stored board of a loaded level.
    ///
    /// # Panics
    /// When the board's level is not loaded or the board is not stored; the build
    /// loads every level a capture can reach before solving a level.
    #[inline]
    pub fn score(&self, board: &Board) -> Score {
        Score::new(*self.slot(board))
    }

    /// Where the value of a stored board of a loaded level is kept, so that a
    /// caller can prefetch it and read it later.
    ///
    /// # Panics
    /// As [`LowerLevels::score`].
    #[inline]
    pub fn slot(&self, board: &Board) -> &i8 {
        let i = self.index.rank(board).expect("a child is always stored");
        &self.level_of(board)[i as usize]
    }

    /// [`LowerLevels::slot`] for boards of `P` pits per side, the levels'
    /// own ([`Index::rank_sized`]).
    ///
    /// # Panics
    /// As [`LowerLevels::score`].
    #[inline]
    pub fn slot_sized<const P: usize>(&self, board: &Board) -> &i8 {
        let i = self
            .index
            .rank_sized::<P>(board)
            .expect("a child is always stored");
        &self.level_of(board)[i as usize]
    }

    /// Where the value of board `i` (its index) of loaded level `seeds` is
    /// kept.
    ///
    /// # Panics
    /// When the level is not loaded or has no board `i`.
    #[inline]
    pub fn slot_at(&self, seeds: u32, i: u64) -> &i8 {
        &self.loaded(seeds)[i as usize]
    }

    /// Advises that the values of boards `range` of loaded level `seeds`
    /// are read soon (their file's pages read ahead: see
    /// [`awari_dbformat::memory::huge::HugeArray::will_need`]).
    pub fn will_need(&self, seeds: u32, range: std::ops::Range<u64>) {
        self.loaded(seeds).will_need(range);
    }

    /// The values of `board`'s level, which must be loaded.
    #[inline]
    fn level_of(&self, board: &Board) -> &Values {
        self.loaded(board.seeds())
    }

    /// The values of level `seeds`, which must be loaded.
    #[inline]
    fn loaded(&self, seeds: u32) -> &Values {
        self.levels[seeds as usize]
            .as_ref()
            .expect("a capture reached a level that is not loaded")
    }
}

/// The scores of a level of `boards` boards in file `path`, one signed byte
/// per board in index order (the layout `awari-probe export` writes),
/// mapped: as found when it has that size and is newer than `source` (the
/// level file the scores come from), else made anew by `fill` (always
/// without a `source`).
///
/// The file is filled under a temporary name, synced and renamed, so a
/// file at `path` is always complete.
///
/// # Errors
/// What `fill` returns, or [`SolveError::Io`] naming the file that cannot be
/// made, written or mapped (a full disk).
pub fn scores_in_file(
    path: &Path,
    boards: u64,
    source: Option<&Path>,
    fill: impl FnOnce(&mut [i8]) -> Result<(), SolveError>,
) -> Result<Values, SolveError> {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let current = std::fs::metadata(path).is_ok_and(|m| m.len() == boards)
        && match (source.map(modified), modified(path)) {
            (Some(Some(made)), Some(scores)) => scores >= made,
            _ => false,
        };
    // Scores are read at random (by capture and by parent): see
    // `HugeArray::advise_random` for why it is said before the first access.
    let random = |array: HugeArray| {
        array.advise_random();
        Values::from_array(array)
    };
    if current {
        return Ok(random(mapped::open(path)?));
    }
    let tmp = path.with_extension("scores.tmp");
    let mut values = random(mapped::create(&tmp, boards as usize)?);
    fill(&mut values)?;
    File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(mapped::io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(mapped::io(path))?;
    Ok(values)
}
