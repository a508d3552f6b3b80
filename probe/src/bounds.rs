//! `--repetition any`: the bounds that hold under every repetition rule, read
//! from the bound levels that `awari-solve --repetition any` builds.
//!
//! Each level of such a build is two files, `<level>.lower.awl` and
//! `<level>.upper.awl` (see [`awari_dbformat::Bounds`] for what the bounds
//! mean). A stored board's bounds are read from its level; a board no level
//! stores (its opponent row full, e.g. a start) is valued by one ply. Above
//! the levels built nothing is searched: a missing level is an error naming
//! its file and the command that builds it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use awari_dbformat::file::{bound_path, LevelId, LevelReader, EXTENSION};
use awari_dbformat::{one_ply_bounds, Board, Bound, Bounds, Index, Move, Outcome, RuleSet, Rules};

use crate::error::ProbeError;

/// The bound files in `dir`, identified by name (`<level>.lower.awl`,
/// `<level>.upper.awl`; other files are ignored and none is opened), sorted
/// by rule set, pits per side, seeds and bound (lower first).
///
/// # Errors
/// [`ProbeError::Db`] naming `dir` when it cannot be read.
pub fn scan_bound_files(dir: &Path) -> Result<Vec<(LevelId, Bound, PathBuf)>, ProbeError> {
    let io = |source| {
        ProbeError::Db(awari_dbformat::Error::Io {
            path: dir.to_path_buf(),
            source,
        })
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let Some((id, bound)) = name.to_str().and_then(bound_file_level) else {
            continue;
        };
        if entry.path().is_file() {
            out.push((id, bound, entry.path()));
        }
    }
    out.sort_by_key(|(id, bound, _)| {
        (
            id.rules.set(),
            id.rules.pits(),
            id.seeds,
            *bound == Bound::Upper,
        )
    });
    Ok(out)
}

/// The level and bound a file name written by
/// [`LevelId::bound_file_name`] stands for, or `None` for any other name.
fn bound_file_level(name: &str) -> Option<(LevelId, Bound)> {
    Bound::BOTH.into_iter().find_map(|bound| {
        let suffix = format!(".{}.{EXTENSION}", bound.name());
        let stem = name.strip_suffix(&suffix)?;
        let id = LevelId::from_file_name(&format!("{stem}.{EXTENSION}"))?;
        (id.bound_file_name(bound) == name).then_some((id, bound))
    })
}

/// What the bounds decide for the mover, given the seeds already captured:
/// see [`outcome`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundsOutcome {
    /// The same result under every repetition rule.
    Decided(Outcome),
    /// Win, draw or loss depends on how the rule ends endless play.
    Depends,
}

impl BoundsOutcome {
    /// `win`, `draw`, `loss` or `depends` (the `"result"` of the JSON answers).
    pub fn name(self) -> &'static str {
        match self {
            BoundsOutcome::Decided(o) => o.name(),
            BoundsOutcome::Depends => "depends",
        }
    }
}

/// The result for the mover of a board with `bounds` when the mover has
/// captured `captured.0` seeds and the opponent `captured.1`: with
/// `d = captured.0 - captured.1`, a win when `d + lower > 0`, a loss when
/// `d + upper < 0`, a draw when `d + lower == 0 == d + upper`, else
/// [`BoundsOutcome::Depends`].
pub fn outcome(bounds: Bounds, captured: (u32, u32)) -> BoundsOutcome {
    let d = i64::from(captured.0) - i64::from(captured.1);
    let (low, high) = (
        d + i64::from(bounds.lower.get()),
        d + i64::from(bounds.upper.get()),
    );
    if low > 0 {
        BoundsOutcome::Decided(Outcome::Win)
    } else if high < 0 {
        BoundsOutcome::Decided(Outcome::Loss)
    } else if low == 0 && high == 0 {
        BoundsOutcome::Decided(Outcome::Draw)
    } else {
        BoundsOutcome::Depends
    }
}

/// One legal move with its bounds for the player who makes it
/// ([`Bounds::of_move`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveBounds {
    /// The move (pit, capture, child).
    pub mov: Move,
    /// Its bounds for the mover.
    pub bounds: Bounds,
}

/// Everything the bound levels say about one position. (No move is marked
/// best: a move that reaches a bound by one ply may only go round a cycle.)
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundsAnalysis {
    /// The position.
    pub board: Board,
    /// Its bounds for the mover.
    pub bounds: Bounds,
    /// Every legal move, in pit order.
    pub moves: Vec<MoveBounds>,
}

/// The bound levels (`--repetition any`) of one rule set and board size in a
/// database directory. Levels are opened (memory-mapped) on first use and
/// shared; usable from many threads at once.
///
/// ```no_run
/// use awari_dbformat::{Board, Rules};
/// use awari_probe::BoundsTablebase;
///
/// let tb = BoundsTablebase::open("db", Rules::default())?;
/// let board: Board = "1 1 1 1 1 2 / 4 2 3 0 0 0".parse()?;
/// let b = tb.bounds(&board)?;
/// println!("between {} and {}", b.lower, b.upper);
/// # Ok::<(), awari_probe::ProbeError>(())
/// ```
pub struct BoundsTablebase {
    dir: PathBuf,
    rules: Rules,
    index: &'static Index,
    /// The files present, by seed count: lower, upper.
    paths: BTreeMap<u32, [Option<PathBuf>; 2]>,
    /// Opened files, by seed count: lower, upper.
    opened: Vec<[Opened; 2]>,
}

/// A file opened on first use, or the error opening it.
type Opened = OnceLock<Result<Arc<LevelReader>, String>>;

/// 0 for the lower bound, 1 for the upper.
fn slot(bound: Bound) -> usize {
    match bound {
        Bound::Lower => 0,
        Bound::Upper => 1,
    }
}

impl BoundsTablebase {
    /// Opens the bound levels of `rules` in `dir`. Nothing is read yet.
    ///
    /// # Errors
    /// [`ProbeError::Database`] when the directory cannot be listed or holds
    /// no bound level of these rules (the message names the command that
    /// builds them).
    pub fn open(dir: impl AsRef<Path>, rules: Rules) -> Result<BoundsTablebase, ProbeError> {
        let dir = dir.as_ref().to_path_buf();
        let mut paths: BTreeMap<u32, [Option<PathBuf>; 2]> = BTreeMap::new();
        for (id, bound, path) in scan_bound_files(&dir)? {
            if id.rules == rules {
                paths.entry(id.seeds).or_default()[slot(bound)] = Some(path);
            }
        }
        let Some(&top) = paths.keys().last() else {
            return Err(ProbeError::Database {
                reason: format!(
                    "no bound levels (--repetition any) for {rules}; build them with `awari-solve --db {} --rules {} --pits {} --max-seeds N --repetition any`",
                    dir.display(),
                    rules.set(),
                    rules.pits()
                ),
                dir,
            });
        };
        Ok(BoundsTablebase {
            dir,
            rules,
            index: Index::for_pits(rules.pits()),
            paths,
            opened: (0..=top).map(|_| Default::default()).collect(),
        })
    }

    /// Opens `dir` for boards of `pits` pits per side, with `rules` if given,
    /// else the one rule set whose bound levels are present for that size.
    ///
    /// # Errors
    /// [`ProbeError::Database`] when no bound level is present for the size,
    /// or those of several rule sets are and none was chosen.
    pub fn open_for(
        dir: impl AsRef<Path>,
        rules: Option<RuleSet>,
        pits: u8,
    ) -> Result<BoundsTablebase, ProbeError> {
        let dir = dir.as_ref();
        if let Some(set) = rules {
            return BoundsTablebase::open(dir, Rules::new(set, pits)?);
        }
        let mut sets: Vec<RuleSet> = scan_bound_files(dir)?
            .into_iter()
            .filter(|(id, _, _)| id.rules.pits() == pits)
            .map(|(id, _, _)| id.rules.set())
            .collect();
        sets.dedup();
        match sets.as_slice() {
            [one] => BoundsTablebase::open(dir, Rules::new(*one, pits)?),
            [] => Err(ProbeError::Database {
                dir: dir.to_path_buf(),
                reason: format!(
                    "no bound levels (--repetition any) for {pits} pits per side; build them with `awari-solve --db {} --pits {pits} --max-seeds N --repetition any`",
                    dir.display()
                ),
            }),
            many => Err(ProbeError::Database {
                dir: dir.to_path_buf(),
                reason: format!(
                    "holds the bound levels of several rule sets ({}); choose one with --rules",
                    many.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ")
                ),
            }),
        }
    }

    /// The rules of these levels.
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The levels with both bound files present, ascending.
    pub fn levels(&self) -> Vec<u32> {
        self.paths
            .iter()
            .filter(|(_, [l, u])| l.is_some() && u.is_some())
            .map(|(&n, _)| n)
            .collect()
    }

    /// The largest n such that both bound files of every level 0..=n are
    /// present, or `None` when level 0 lacks one.
    pub fn complete_up_to(&self) -> Option<u32> {
        let levels = self.levels();
        levels
            .iter()
            .enumerate()
            .take_while(|(k, &n)| *k as u32 == n)
            .last()
            .map(|(_, &n)| n)
    }

    /// The file of `bound` of level `seeds`, opened on first use.
    ///
    /// # Errors
    /// [`ProbeError::MissingBoundLevel`] naming the file when it is not
    /// present; a file error when it cannot be opened (corrupt, another level,
    /// another kind of values).
    pub fn level(&self, seeds: u32, bound: Bound) -> Result<Arc<LevelReader>, ProbeError> {
        let id = LevelId::new(self.rules, seeds);
        let missing = || ProbeError::MissingBoundLevel {
            seeds,
            rules: self.rules,
            dir: self.dir.clone(),
            file: bound_path(&self.dir, id, bound),
        };
        let path = self
            .paths
            .get(&seeds)
            .and_then(|p| p[slot(bound)].as_ref())
            .ok_or_else(missing)?;
        let cell = &self.opened[seeds as usize][slot(bound)];
        let opened = cell.get_or_init(|| {
            LevelReader::open_bound(path, id, bound)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        });
        match opened {
            Ok(reader) => Ok(reader.clone()),
            // Open again to return the real error value.
            Err(_) => Err(LevelReader::open_bound(path, id, bound)
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

    /// The bounds of a stored board, read from the two files of its level.
    fn stored_bounds(&self, board: &Board) -> Result<Bounds, ProbeError> {
        let i = self.index.try_rank(board)?;
        let seeds = board.seeds();
        // Both files first, so that a missing one is named before any read.
        let lower = self.level(seeds, Bound::Lower)?;
        let upper = self.level(seeds, Bound::Upper)?;
        Ok(Bounds {
            lower: lower.get(i)?,
            upper: upper.get(i)?,
        })
    }

    /// The bounds of any position for its mover: read from its level when
    /// stored, else (a start position, or any board whose opponent row is
    /// full) by one ply ([`one_ply_bounds`]).
    ///
    /// # Errors
    /// A missing bound level ([`ProbeError::MissingBoundLevel`]), a board of
    /// another size, or an unreadable level file.
    pub fn bounds(&self, board: &Board) -> Result<Bounds, ProbeError> {
        self.check_size(board)?;
        if board.is_stored() {
            self.stored_bounds(board)
        } else {
            one_ply_bounds(self.rules, board, |child| self.bounds(child))
        }
    }

    /// The bounds of a position and of every legal move. For a stored board
    /// the moves must give the stored bounds by one ply.
    ///
    /// # Errors
    /// As [`BoundsTablebase::bounds`]; [`awari_dbformat::Error::Corrupt`]
    /// when a stored board's bounds disagree with its moves.
    pub fn analyse(&self, board: &Board) -> Result<BoundsAnalysis, ProbeError> {
        self.check_size(board)?;
        let mut moves = Vec::new();
        for m in self.rules.legal_moves(board).iter() {
            moves.push(MoveBounds {
                mov: *m,
                bounds: Bounds::of_move(m.captured, m.turn, self.bounds(&m.child)?),
            });
        }
        let bounds = match self.rules.terminal_value(board) {
            Some(v) => Bounds::exact(v),
            None => Bounds {
                lower: moves.iter().map(|m| m.bounds.lower).max().expect("a move"),
                upper: moves.iter().map(|m| m.bounds.upper).max().expect("a move"),
            },
        };
        if board.is_stored() {
            let stored = self.stored_bounds(board)?;
            if stored != bounds {
                let id = LevelId::new(self.rules, board.seeds());
                return Err(ProbeError::Db(awari_dbformat::Error::Corrupt {
                    path: bound_path(&self.dir, id, Bound::Lower),
                    reason: format!(
                        "board {board} is stored with bounds {stored} but its moves give {bounds}; run awari-probe verify --repetition any"
                    ),
                }));
            }
        }
        Ok(BoundsAnalysis {
            board: *board,
            bounds,
            moves,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use awari_dbformat::file::{write_level, write_level_as, WriteOptions};
    use awari_dbformat::Score;

    /// The bounds of levels 0..=`max_seeds`, lower and upper in index
    /// order, computed naively: from -n and +n, every board's one-ply bounds
    /// again and again until nothing changes (the least lower and greatest
    /// upper solution).
    fn naive_bounds(rules: Rules, max_seeds: u32) -> Vec<[Vec<i8>; 2]> {
        let index = Index::for_pits(rules.pits());
        let mut levels: Vec<[Vec<i8>; 2]> = Vec::new();
        for n in 0..=max_seeds {
            let boards: Vec<Board> = index.boards(n).collect();
            let size = boards.len();
            let mut now = [vec![-(n as i8); size], vec![n as i8; size]];
            loop {
                let mut next = [Vec::with_capacity(size), Vec::with_capacity(size)];
                for b in &boards {
                    let got = one_ply_bounds(rules, b, |c| -> Result<Bounds, ()> {
                        let i = index.rank(c).expect("stored") as usize;
                        let level = if c.seeds() == n {
                            &now
                        } else {
                            &levels[c.seeds() as usize]
                        };
                        Ok(Bounds {
                            lower: Score::new(level[0][i]),
                            upper: Score::new(level[1][i]),
                        })
                    })
                    .unwrap();
                    next[0].push(got.lower.get());
                    next[1].push(got.upper.get());
                }
                if next == now {
                    break;
                }
                now = next;
            }
            levels.push(now);
        }
        levels
    }

    /// Writes the bound files of `levels` into `dir`.
    fn write_bounds(dir: &Path, rules: Rules, levels: &[[Vec<i8>; 2]]) {
        for (n, level) in levels.iter().enumerate() {
            for bound in Bound::BOTH {
                let id = LevelId::new(rules, n as u32);
                let values = &level[slot(bound)];
                write_level_as(dir, id, values, bound.stored(), WriteOptions::default()).unwrap();
            }
        }
    }

    #[test]
    fn stored_boards_read_their_bounds_and_others_take_one_ply() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let rules = Rules::new(RuleSet::Awari, 3).unwrap();
        let levels = naive_bounds(rules, 7);
        write_bounds(dir, rules, &levels);
        let scores = awari_solver::solve_in_memory(rules, 7);
        let tb = BoundsTablebase::open_for(dir, None, 3).unwrap();
        assert_eq!(tb.levels(), (0..=7).collect::<Vec<_>>());
        assert_eq!(tb.complete_up_to(), Some(7));
        let index = Index::for_pits(3);
        let mut exact = 0;
        for n in 0..=7u32 {
            for (i, board) in index.boards(n).enumerate() {
                let b = tb.bounds(&board).unwrap();
                let want = (levels[n as usize][0][i], levels[n as usize][1][i]);
                assert_eq!((b.lower.get(), b.upper.get()), want, "{board}");
                assert!(b.contains(Score::new(scores[n as usize][i])), "{board}");
                exact += usize::from(b.is_exact());
                let a = tb.analyse(&board).unwrap();
                assert_eq!(a.bounds, b);
            }
        }
        assert!(exact > 0);
        for text in ["1 1 1 / 1 1 1", "2 1 1 / 1 1 1", "0 0 1 / 2 2 2"] {
            let board: Board = text.parse().unwrap();
            let by_one_ply = one_ply_bounds(rules, &board, |c| tb.bounds(c)).unwrap();
            assert_eq!(tb.bounds(&board).unwrap(), by_one_ply, "{text}");
            let a = tb.analyse(&board).unwrap();
            assert_eq!(a.bounds, by_one_ply);
            assert_eq!(a.moves.len(), rules.legal_moves(&board).len());
        }
        let six: Board = "1 1 1 1 1 1 / 1 1 1 1 1 1".parse().unwrap();
        assert!(matches!(
            tb.bounds(&six),
            Err(ProbeError::WrongSize { board: 6, .. })
        ));
    }

    #[test]
    fn a_missing_bound_file_is_named_with_the_command_that_builds_it() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let rules = Rules::new(RuleSet::Abapa, 3).unwrap();
        write_bounds(dir, rules, &naive_bounds(rules, 4));
        std::fs::remove_file(dir.join("abapa-p3-n3.upper.awl")).unwrap();
        let tb = BoundsTablebase::open(dir, rules).unwrap();
        assert_eq!(tb.complete_up_to(), Some(2));
        let err = tb
            .bounds(&"1 1 1 / 0 0 0".parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("abapa-p3-n3.upper.awl is missing"), "{err}");
        assert!(err.contains("--max-seeds 3 --repetition any"), "{err}");
        assert!(err.contains("never searched"), "{err}");
        // A level above those built: the same.
        let err = tb
            .bounds(&"3 3 0 / 0 0 0".parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("abapa-p3-n6.lower.awl is missing"), "{err}");
    }

    #[test]
    fn scores_are_not_bounds() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let rules = Rules::new(RuleSet::Awari, 3).unwrap();
        let id = LevelId::new(rules, 2);
        let values = vec![0; id.boards() as usize];
        write_level(dir, id, &values, WriteOptions::default()).unwrap();
        let err = BoundsTablebase::open(dir, rules).err().unwrap().to_string();
        assert!(err.contains("--repetition any"), "{err}");
        // A file of scores under a bound's name is refused when read.
        std::fs::rename(
            dir.join(id.file_name()),
            dir.join(id.bound_file_name(Bound::Lower)),
        )
        .unwrap();
        let tb = BoundsTablebase::open(dir, rules).unwrap();
        let err = tb.level(2, Bound::Lower).err().unwrap().to_string();
        assert!(err.contains("lower bounds"), "{err}");
    }

    /// The bound file names read back; the names of even-split levels and
    /// others are left alone.
    #[test]
    fn bound_file_names_read_back() {
        let id = LevelId::new(Rules::new(RuleSet::Abapa, 3).unwrap(), 7);
        for bound in Bound::BOTH {
            assert_eq!(
                bound_file_level(&id.bound_file_name(bound)),
                Some((id, bound))
            );
        }
        for other in [
            id.file_name(),
            "abapa-p3-n7.middle.awl".into(),
            "abapa-p3-n07.lower.awl".into(),
            "abapa-p3-n7.lower.awl.partial".into(),
        ] {
            assert_eq!(bound_file_level(&other), None, "{other}");
        }
    }

    #[test]
    fn outcome_is_decided_only_when_both_bounds_agree() {
        let b = |l: i8, u: i8| Bounds {
            lower: Score::new(l),
            upper: Score::new(u),
        };
        let name = |bounds, captured| outcome(bounds, captured).name();
        assert_eq!(name(b(1, 3), (0, 0)), "win");
        assert_eq!(name(b(-3, -1), (0, 0)), "loss");
        assert_eq!(name(b(0, 0), (0, 0)), "draw");
        assert_eq!(name(b(0, 2), (0, 0)), "depends");
        assert_eq!(name(b(-2, 0), (0, 0)), "depends");
        assert_eq!(name(b(-2, 2), (3, 0)), "win");
        assert_eq!(name(b(-2, 2), (0, 3)), "loss");
        assert_eq!(name(b(-2, -2), (2, 0)), "draw");
        assert_eq!(name(b(-2, 2), (1, 1)), "depends");
    }
}
