//! A directory of level files, opened lazily, answering questions about positions.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use awari_dbformat::file::{self, LevelId, LevelReader, Stored};
use awari_dbformat::level::Values;
use awari_dbformat::{
    levels_captures_reach, Board, Index, Move, Outcome, RuleSet, Rules, Score, Turn,
};

use crate::error::ProbeError;

/// A database directory for one rule set and board size.
///
/// Levels are opened (memory-mapped) on first use and shared; a `Tablebase` can be
/// used from many threads at once.
///
/// ```no_run
/// use awari_probe::Tablebase;
/// use awari_dbformat::{Board, Rules};
///
/// let tb = Tablebase::open("db", Rules::default())?;
/// let board: Board = "1 1 1 1 1 2 / 4 2 3 0 0 0".parse()?;
/// let analysis = tb.analyse(&board)?;
/// println!("value {}, best moves {:?}", analysis.value, analysis.best);
/// # Ok::<(), awari_probe::ProbeError>(())
/// ```
pub struct Tablebase {
    dir: PathBuf,
    rules: Rules,
    index: &'static Index,
    /// The files present, by seed count.
    paths: BTreeMap<u32, PathBuf>,
    /// Opened levels, by seed count.
    opened: Vec<OnceLock<Result<Arc<LevelReader>, String>>>,
    /// Levels decoded whole into memory (see [`Tablebase::preload`]), by seed count.
    decoded: Vec<OnceLock<Option<Values>>>,
    /// Levels claimed for decoding (see [`Tablebase::decoded_level`]).
    decoding: Vec<std::sync::atomic::AtomicBool>,
    /// Bytes still allowed for decoded levels.
    preload_budget: std::sync::atomic::AtomicU64,
}

/// One legal move of a position with its value for the mover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveValue {
    /// The move (pit, capture, child).
    pub mov: Move,
    /// Its value for the mover: captured seeds minus the child's value (or plus,
    /// when the turn stays).
    pub value: Score,
    /// True when no move is worth more.
    pub best: bool,
}

/// Everything a database says about one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The position.
    pub board: Board,
    /// Its value for the mover.
    pub value: Score,
    /// Every legal move, in pit order.
    pub moves: Vec<MoveValue>,
    /// The pits of the best moves.
    pub best: Vec<u8>,
}

/// One step of a principal variation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PvStep {
    /// The position before the move, seen from its mover.
    pub board: Board,
    /// The move played (the first best move).
    pub mov: Move,
}

/// Why a principal variation stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PvEnd {
    /// The last position has no legal move: the game is over.
    GameOver,
    /// The last position occurred before: play would go on for ever (value 0).
    Repetition,
    /// The length limit was reached.
    Limit,
}

impl PvEnd {
    /// The name of the ending in the JSON answers (`pv_end`) and the text of
    /// `score`: `game over`, `repetition` or `limit`.
    pub fn name(self) -> &'static str {
        match self {
            PvEnd::GameOver => "game over",
            PvEnd::Repetition => "repetition",
            PvEnd::Limit => "limit",
        }
    }
}

/// A principal variation: best moves from a position to the end of the game or
/// to the first repeated position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pv {
    /// The moves, in order.
    pub steps: Vec<PvStep>,
    /// The position after the last move, seen from its mover.
    pub last: Board,
    /// Whether the root's mover is to move in `last`.
    pub root_to_move: bool,
    /// Seeds captured along the way by the root's mover and by the opponent.
    pub captured: (u32, u32),
    /// Why it stops.
    pub end: PvEnd,
}

impl Tablebase {
    /// Opens the level files of `rules` in `dir`. Nothing is read yet.
    ///
    /// # Errors
    /// [`ProbeError::Database`] when the directory cannot be listed or holds no
    /// level of these rules.
    pub fn open(dir: impl AsRef<Path>, rules: Rules) -> Result<Tablebase, ProbeError> {
        let dir = dir.as_ref().to_path_buf();
        let found = file::scan_dir(&dir)?;
        let paths: BTreeMap<u32, PathBuf> = found
            .into_iter()
            .filter(|(id, _)| id.rules == rules)
            .map(|(id, path)| (id.seeds, path))
            .collect();
        if paths.is_empty() {
            return Err(ProbeError::Database {
                dir,
                reason: format!("no level files for {rules}; build some with awari-solve"),
            });
        }
        let top = *paths.keys().last().expect("not empty") as usize;
        Ok(Tablebase {
            dir,
            rules,
            index: Index::for_pits(rules.pits()),
            paths,
            opened: (0..=top).map(|_| OnceLock::new()).collect(),
            decoded: (0..=top).map(|_| OnceLock::new()).collect(),
            decoding: (0..=top).map(|_| Default::default()).collect(),
            preload_budget: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Opens `dir` for boards of `pits` pits per side, with `rules` if given, else
    /// the one rule set present for that size.
    ///
    /// # Errors
    /// [`ProbeError::Database`] when no level is present for the size, or several
    /// rule sets are and none was chosen.
    pub fn open_for(
        dir: impl AsRef<Path>,
        rules: Option<RuleSet>,
        pits: u8,
    ) -> Result<Tablebase, ProbeError> {
        let dir = dir.as_ref();
        if let Some(set) = rules {
            return Tablebase::open(dir, Rules::new(set, pits)?);
        }
        let mut sets: Vec<RuleSet> = file::scan_dir(dir)?
            .into_iter()
            .filter(|(id, _)| id.rules.pits() == pits)
            .map(|(id, _)| id.rules.set())
            .collect();
        sets.sort();
        sets.dedup();
        match sets.as_slice() {
            [one] => Tablebase::open(dir, Rules::new(*one, pits)?),
            [] => Err(ProbeError::Database {
                dir: dir.to_path_buf(),
                reason: format!("no level files for {pits} pits per side; build some with awari-solve --pits {pits}"),
            }),
            many => Err(ProbeError::Database {
                dir: dir.to_path_buf(),
                reason: format!(
                    "holds several rule sets ({}); choose one with --rules",
                    many.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ")
                ),
            }),
        }
    }

    /// The rules of this database.
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The levels present, ascending.
    pub fn levels(&self) -> Vec<u32> {
        self.paths.keys().copied().collect()
    }

    /// The largest n such that every level 0..=n is present (a database complete up
    /// to n seeds), or `None` when level 0 is missing.
    pub fn complete_up_to(&self) -> Option<u32> {
        let mut top = None;
        for n in 0.. {
            if !self.paths.contains_key(&n) {
                break;
            }
            top = Some(n);
        }
        top
    }

    /// True when the databases alone answer `board`: [`Tablebase::answers_level`]
    /// of its seed count. Other boards get a search ([`crate::search`]).
    pub fn covers(&self, board: &Board) -> bool {
        self.answers_level(board.seeds())
    }

    /// True when the databases alone answer every board of `seeds` seeds:
    /// that level is present, and so is every level from 0 to `seeds - 2`.
    /// Level `seeds - 1` is never needed (a capture takes at least two seeds),
    /// so the start of a game built with `awari-solve --start S` is answered
    /// without level 2PS - 1, which that build leaves out.
    pub fn answers_level(&self, seeds: u32) -> bool {
        self.paths.contains_key(&seeds)
            && (seeds < 2 || self.complete_up_to().is_some_and(|n| n + 2 >= seeds))
    }

    /// The level file of `seeds` seeds, opened on first use.
    ///
    /// # Errors
    /// [`ProbeError::MissingLevel`] when it is not present; a file error when it
    /// cannot be opened (corrupt, truncated, other rules).
    pub fn level(&self, seeds: u32) -> Result<Arc<LevelReader>, ProbeError> {
        let missing = || ProbeError::MissingLevel {
            seeds,
            rules: self.rules,
            dir: self.dir.clone(),
        };
        let path = self.paths.get(&seeds).ok_or_else(missing)?;
        let slot = self.opened.get(seeds as usize).ok_or_else(missing)?;
        let opened = slot.get_or_init(|| {
            LevelReader::open_expecting(
                path,
                LevelId {
                    rules: self.rules,
                    seeds,
                },
            )
            .map(Arc::new)
            .map_err(|e| e.to_string())
        });
        match opened {
            Ok(reader) => Ok(reader.clone()),
            // Open again to return the real error value.
            Err(_) => Err(LevelReader::open_expecting(
                path,
                LevelId {
                    rules: self.rules,
                    seeds,
                },
            )
            .err()
            .map_or_else(missing, ProbeError::Db)),
        }
    }

    fn check_size(&self, board: &Board) -> Result<(), ProbeError> {
        if board.per_side() != self.rules.pits() {
            return Err(ProbeError::WrongSize {
                board: board.per_side(),
                database: self.rules.pits(),
            });
        }
        Ok(())
    }

    /// The score of a stored board, read from its level: the stored value,
    /// or for a level of lower bounds the larger of it and the board's best
    /// capture (recursively, from the lower levels).
    fn stored_score(&self, board: &Board) -> Result<Score, ProbeError> {
        let i = self.index.try_rank(board)?;
        let seeds = board.seeds();
        if let Some(values) = self.decoded_level(seeds)? {
            return Ok(Score::new(values[i as usize]));
        }
        let reader = self.level(seeds)?;
        let value = reader.get(i)?;
        file::resolve(reader.stored(), self.rules, board, value, |child| {
            self.stored_score(child)
        })
    }

    /// Lets up to `bytes` of memory hold whole decoded levels: a level is then
    /// decoded in one go (in parallel) the first time it is used, if it fits, and
    /// every later lookup is a plain memory read. A level of lower bounds is
    /// also resolved, board by board through its captures, after the levels
    /// below it, which pays only for very many lookups (figures in
    /// `docs/performance.md`). 0 (the default) turns it off. The answers are
    /// the same with or without it.
    pub fn preload(&self, bytes: u64) {
        self.preload_budget
            .store(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// The decoded scores of level `seeds` when preloading allows it (lower
    /// bounds resolved); `None` while another caller is decoding it.
    ///
    /// One caller claims a level and decodes it; meanwhile the others, which
    /// may be this same thread (rayon runs other work while it waits for the
    /// decode's own parallel parts, and that work may look a board up), get
    /// `None` and look boards up in the file, rather than wait for a
    /// decode that could be waiting for them.
    fn decoded_level(&self, seeds: u32) -> Result<Option<&Values>, ProbeError> {
        use std::sync::atomic::Ordering::{AcqRel, Relaxed};
        let Some(slot) = self.decoded.get(seeds as usize) else {
            return Ok(None);
        };
        if let Some(done) = slot.get() {
            return Ok(done.as_ref());
        }
        if self.preload_budget.load(Relaxed) == 0
            || self.decoding[seeds as usize].swap(true, AcqRel)
        {
            return Ok(None);
        }
        let decoded = self.decode_level(seeds);
        let values = match decoded {
            Ok(values) => values,
            Err(e) => {
                // Read the level board by board from now on.
                let _ = slot.set(None);
                return Err(e);
            }
        };
        let _ = slot.set(values);
        Ok(slot.get().and_then(Option::as_ref))
    }

    /// Level `seeds` decoded whole and resolved, when it fits in what is left
    /// of the preload budget (see [`Tablebase::decoded_level`]).
    fn decode_level(&self, seeds: u32) -> Result<Option<Values>, ProbeError> {
        use std::sync::atomic::Ordering::Relaxed;
        let reader = self.level(seeds)?;
        if reader.stored() == Stored::LowerBounds {
            self.preload_below(seeds)?;
        }
        let size = reader.boards();
        let fits = self
            .preload_budget
            .fetch_update(Relaxed, Relaxed, |left| left.checked_sub(size))
            .is_ok();
        if !fits {
            return Ok(None);
        }
        let mut values = reader.decode_all()?;
        self.resolve_scores(seeds, 0, &mut values)?;
        Ok(Some(values))
    }

    /// Decodes whole the levels below `seeds - 1` (those a capture from level
    /// `seeds` reaches) that preloading allows, from the bottom up, so that
    /// resolving level `seeds` finds its captures in memory.
    fn preload_below(&self, seeds: u32) -> Result<(), ProbeError> {
        for lower in levels_captures_reach(seeds) {
            if self.paths.contains_key(&lower) {
                self.decoded_level(lower)?;
            }
        }
        Ok(())
    }

    /// Turns the stored values of boards `first .. first + values.len()` of
    /// level `seeds`, as [`LevelReader::decode_range`] gives them, into the
    /// boards' scores: lower bounds are resolved through the boards' captures
    /// (in parallel; the lower levels are preloaded when
    /// [`Tablebase::preload`] allows, else looked up board by board). Values
    /// of a level of scores are left as they are.
    ///
    /// # Errors
    /// A missing or unreadable lower level.
    pub fn resolve_scores(
        &self,
        seeds: u32,
        first: u64,
        values: &mut [i8],
    ) -> Result<(), ProbeError> {
        if self.level(seeds)?.stored() == Stored::Scores {
            return Ok(());
        }
        self.preload_below(seeds)?;
        // With every level below decoded, look the captures up in memory.
        let mut decoded = Vec::new();
        for lower in levels_captures_reach(seeds) {
            if self.paths.contains_key(&lower) {
                decoded.push(self.decoded_level(lower)?);
            } else {
                decoded.push(None);
            }
        }
        if decoded.iter().all(Option::is_some) {
            let lower = |s: u32| &decoded[s as usize].expect("every level below is decoded")[..];
            file::resolve_level_in(LevelId::new(self.rules, seeds), first, values, lower, &[]);
            return Ok(());
        }
        file::resolve_level(LevelId::new(self.rules, seeds), first, values, |child| {
            self.stored_score(child)
        })
    }

    /// The value of any position for its mover: read from its level when stored,
    /// else (a start position, or any board whose opponent row is full) by one ply.
    ///
    /// # Errors
    /// A missing level, a board of another size, or an unreadable level file.
    pub fn score(&self, board: &Board) -> Result<Score, ProbeError> {
        self.check_size(board)?;
        if board.is_stored() {
            self.stored_score(board)
        } else {
            awari_dbformat::one_ply(self.rules, board, |child| self.stored_score(child))
        }
    }

    /// The value of a move: its capture and its child's value.
    fn move_value(&self, m: &Move) -> Result<Score, ProbeError> {
        Ok(m.value(self.stored_score(&m.child)?))
    }

    /// The value of a position, every legal move with its value, and the best moves.
    ///
    /// # Errors
    /// As [`Tablebase::score`].
    pub fn analyse(&self, board: &Board) -> Result<Analysis, ProbeError> {
        self.check_size(board)?;
        let moves = self.rules.legal_moves(board);
        let mut values = Vec::with_capacity(moves.len());
        for m in moves.iter() {
            values.push((*m, self.move_value(m)?));
        }
        let value = match self.rules.terminal_value(board) {
            Some(v) => v,
            None => values.iter().map(|(_, v)| *v).max().expect("a move exists"),
        };
        // For a stored board, the database's own value must agree with its moves.
        if board.is_stored() {
            let stored = self.stored_score(board)?;
            if stored != value {
                return Err(ProbeError::Db(awari_dbformat::Error::Corrupt {
                    path: self.paths[&board.seeds()].clone(),
                    reason: format!(
                        "board {board} is stored as {stored} but its moves give {value}; run awari-probe verify"
                    ),
                }));
            }
        }
        let moves: Vec<MoveValue> = values
            .into_iter()
            .map(|(mov, v)| MoveValue {
                mov,
                value: v,
                best: v == value,
            })
            .collect();
        let best = moves.iter().filter(|m| m.best).map(|m| m.mov.pit).collect();
        Ok(Analysis {
            board: *board,
            value,
            moves,
            best,
        })
    }

    /// Win, draw or loss for the mover when the mover has captured `captured.0`
    /// seeds and the opponent `captured.1`.
    ///
    /// # Errors
    /// As [`Tablebase::score`].
    pub fn outcome(&self, board: &Board, captured: (u32, u32)) -> Result<Outcome, ProbeError> {
        Ok(self.score(board)?.outcome(captured.0, captured.1))
    }

    /// A principal variation from `board`: the first best move at every step, until
    /// the game ends, a position repeats, or `limit` moves were played.
    ///
    /// The values along it agree: the root's value equals the captures of the root's
    /// mover minus the opponent's along the way, plus the value of the last position
    /// for the root's mover.
    ///
    /// # Errors
    /// As [`Tablebase::score`].
    pub fn principal_variation(&self, board: &Board, limit: usize) -> Result<Pv, ProbeError> {
        let mut seen = HashSet::new();
        let mut steps = Vec::new();
        let mut current = *board;
        let mut root_to_move = true;
        let mut captured = (0u32, 0u32);
        let end = loop {
            if !seen.insert((current, root_to_move)) {
                break PvEnd::Repetition;
            }
            if steps.len() >= limit {
                break PvEnd::Limit;
            }
            let analysis = self.analyse(&current)?;
            let Some(best) = analysis.moves.iter().find(|m| m.best) else {
                break PvEnd::GameOver;
            };
            let m = best.mov;
            if root_to_move {
                captured.0 += u32::from(m.captured);
            } else {
                captured.1 += u32::from(m.captured);
            }
            steps.push(PvStep {
                board: current,
                mov: m,
            });
            if m.turn == Turn::Passes {
                root_to_move = !root_to_move;
            }
            current = m.child;
        };
        Ok(Pv {
            steps,
            last: current,
            root_to_move,
            captured,
            end,
        })
    }
}
