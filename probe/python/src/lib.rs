//! `awari._awari`, the extension module of the Python package `awari`
//! (`probe/python/python/awari/`): boards, rules, databases, their search
//! and their solver, from Python. The API is described in docs/python.md and
//! typed in `python/awari/_awari.pyi`.
//!
//! Everything here calls the crate-root API of `awari-dbformat`,
//! `awari-probe` and `awari-solver`; the answers are those of the command
//! line (`awari-probe score --json`, `batch`, `awari-solve`, each also with
//! `--repetition any`), and the Python tests check that they are.

use std::path::PathBuf;
use std::time::Duration;

use awari_dbformat::{
    Board as RsBoard, Bound as DbBound, Bounds, Index, Repetition, RuleSet, Rules as RsRules, Turn,
};
use awari_probe::bounds::outcome as bounds_outcome;
use awari_probe::json::{answer_json, bounds_answer_json, search_json};
use awari_probe::search::{Limits, Searcher};
use awari_probe::{BoundsTablebase as RsBoundsTablebase, ProbeError, Tablebase as RsTablebase};
use numpy::ndarray::{Array2, ArrayView2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use rayon::prelude::*;

pyo3::create_exception!(
    awari,
    CorruptDatabase,
    PyException,
    "A level file that cannot be trusted: truncated, corrupted, of another version, or not the level asked for."
);
pyo3::create_exception!(
    awari,
    MissingLevel,
    PyFileNotFoundError,
    "A level the question needs is not in the database directory (or the directory holds none for these rules)."
);

/// The Python exception for an error of the board and file crate, with its message.
fn db_err(e: awari_dbformat::Error) -> PyErr {
    use awari_dbformat::Error as E;
    let message = e.to_string();
    match e {
        E::Corrupt { .. } | E::WrongLevel { .. } | E::Unsupported { .. } => {
            CorruptDatabase::new_err(message)
        }
        E::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(message)
        }
        E::Io { .. } => PyOSError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// The Python exception for a query's error, with the CLI's message.
fn probe_err(e: ProbeError) -> PyErr {
    match e {
        ProbeError::Db(e) => db_err(e),
        e @ (ProbeError::MissingLevel { .. } | ProbeError::Database { .. }) => {
            MissingLevel::new_err(e.to_string())
        }
        ProbeError::MissingBoundLevel {
            seeds,
            rules,
            ref dir,
            ..
        } => MissingLevel::new_err(format!(
            "{e}; from Python: awari.solve({:?}, max_seeds={seeds}, rules={:?}, pits={}, repetition=\"any\")",
            dir.display().to_string(),
            rules.set().name(),
            rules.pits()
        )),
        e @ ProbeError::WrongSize { .. } => PyValueError::new_err(e.to_string()),
        // (ProbeError is non-exhaustive in spirit: anything new is a plain error.)
        #[allow(unreachable_patterns)]
        e => PyException::new_err(e.to_string()),
    }
}

/// The same exception as `err`, its message prefixed with `prefix`.
fn prefixed(py: Python<'_>, err: PyErr, prefix: &str) -> PyErr {
    let message = format!("{prefix}{}", err.value(py));
    reworded(py, err, message)
}

/// The same exception as `err`, `suffix` added to its message.
fn suffixed(py: Python<'_>, err: PyErr, suffix: &str) -> PyErr {
    let message = format!("{}{suffix}", err.value(py));
    reworded(py, err, message)
}

/// An exception of the type of `err` with `message`.
fn reworded(py: Python<'_>, err: PyErr, message: String) -> PyErr {
    match err.get_type(py).call1((message,)) {
        Ok(value) => PyErr::from_value(value),
        Err(e) => e,
    }
}

/// Reads a rule set name.
fn rule_set(name: &str) -> PyResult<RuleSet> {
    name.parse::<RuleSet>().map_err(db_err)
}

/// Reads a repetition rule's name: `even-split` or `any` (ValueError
/// naming both otherwise).
fn repetition(name: &str) -> PyResult<Repetition> {
    name.parse::<Repetition>().map_err(|_| {
        PyValueError::new_err(format!(
            "unknown repetition rule {name:?}: expected \"even-split\" (endless play shares the seeds on the board equally: one exact value per board) or \"any\" (a lower and an upper bound per board that hold under every repetition rule)"
        ))
    })
}

/// A board from a `Board`, a string in the notation, or a sequence of ints.
fn to_board(obj: &Bound<'_, PyAny>) -> PyResult<RsBoard> {
    if let Ok(b) = obj.cast::<Board>() {
        return Ok(b.get().inner);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s.to_str()?.parse::<RsBoard>().map_err(db_err);
    }
    let pits: Vec<i64> = obj.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "a board is an awari.Board, a string such as \"1 1 1 1 1 2 / 4 2 3 0 0 0\" or a sequence of ints, not {}",
            obj.get_type().name().map_or("this".to_string(), |n| n.to_string())
        ))
    })?;
    board_from_ints(&pits)
}

/// A board from pit counts, which may be out of range (negative, huge).
fn board_from_ints(pits: &[i64]) -> PyResult<RsBoard> {
    let bad =
        |reason: String| PyValueError::new_err(format!("cannot read board {pits:?}: {reason}"));
    let mut bytes = Vec::with_capacity(pits.len());
    for &p in pits {
        if p < 0 {
            return Err(bad(format!("{p} is negative; a pit holds 0 or more seeds")));
        }
        // Board::new says how many fit a pit.
        bytes.push(u8::try_from(p).unwrap_or(u8::MAX));
    }
    RsBoard::new(&bytes).map_err(db_err)
}

/// `captured=(m, o)`: seeds already taken by the mover and by the opponent.
fn captured_pair(captured: (i64, i64)) -> PyResult<(u32, u32)> {
    let one = |n: i64| {
        u32::try_from(n).map_err(|_| {
            PyValueError::new_err(format!(
                "captured seeds are two counts of 0 or more, the mover's and the opponent's; got {captured:?}"
            ))
        })
    };
    Ok((one(captured.0)?, one(captured.1)?))
}

/// A JSON value as the Python object `json.loads` makes of it.
fn json_to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?
        .call_method1("loads", (value.to_string(),))
}

/// A board of Awari: the seeds in each pit, seen from the player to move.
///
/// Board("1 1 1 1 1 2 / 4 2 3 0 0 0") or Board([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0]):
/// the mover's pits A.. first, then the opponent's a.. (2 to 8 pits per side).
/// str() gives the notation; boards compare equal and hash by their pits.
#[pyclass(module = "awari", name = "Board", frozen, eq, hash, str)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Board {
    inner: RsBoard,
}

impl std::fmt::Display for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.inner.to_notation())
    }
}

#[pymethods]
impl Board {
    #[new]
    fn new(pits: &Bound<'_, PyAny>) -> PyResult<Board> {
        Ok(Board {
            inner: to_board(pits)?,
        })
    }

    fn __repr__(&self) -> String {
        format!("Board('{}')", self.inner.to_notation())
    }

    /// For pickle and copy.
    fn __getnewargs__(&self) -> (String,) {
        (self.inner.to_notation(),)
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __getitem__(&self, i: isize) -> PyResult<u8> {
        let n = self.inner.len() as isize;
        let at = if i < 0 { i + n } else { i };
        if !(0..n).contains(&at) {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "pit {i} of a board of {n} pits"
            )));
        }
        Ok(self.inner.pit(at as usize))
    }

    /// The pit counts in pit order, the mover's row first.
    #[getter]
    fn pits<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.pits())
    }

    /// The seeds on the board.
    #[getter]
    fn seeds(&self) -> u32 {
        self.inner.seeds()
    }

    /// Pits per side.
    #[getter]
    fn per_side(&self) -> u8 {
        self.inner.per_side()
    }

    /// True when a level stores this board (its opponent row has an empty pit).
    #[getter]
    fn is_stored(&self) -> bool {
        self.inner.is_stored()
    }

    /// The board's index in its level (the order of the Romein–Bal files),
    /// or None when no level stores it.
    #[getter]
    fn index(&self) -> Option<u64> {
        Index::for_pits(self.inner.per_side()).rank(&self.inner)
    }

    /// The same pits seen from the other player (rows swapped).
    fn swapped(&self) -> Board {
        Board {
            inner: self.inner.swapped(),
        }
    }

    /// The two-row drawing of the command line, the mover's row at the bottom.
    fn drawing(&self) -> String {
        self.inner.drawing()
    }
}

/// A legal move played: `rules.play(board, pit)`.
///
/// Unpacks as (child, captured, game_over).
#[pyclass(module = "awari", name = "Move", frozen, eq)]
#[derive(Clone, Copy, PartialEq, Eq)]
struct Move {
    /// The mover's pit, 0 for A.
    #[pyo3(get)]
    pit: u8,
    /// The position after the move, seen from the player who moves next
    /// (the opponent, unless `turn_passes` is False).
    #[pyo3(get)]
    child: Board,
    /// Seeds the move captured.
    #[pyo3(get)]
    captured: u8,
    /// True when the next mover has no legal move: the game is over.
    #[pyo3(get)]
    game_over: bool,
    /// False only under grand-slam-replay after a grand slam: the capturer
    /// moves again, and `child` is seen from the capturer.
    #[pyo3(get)]
    turn_passes: bool,
}

#[pymethods]
impl Move {
    /// The pit as a letter, A.. .
    #[getter]
    fn label(&self) -> String {
        awari_dbformat::pit_label(self.pit as usize, self.child.inner.per_side() as usize)
            .to_string()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let t = (Bound::new(py, self.child)?, self.captured, self.game_over).into_pyobject(py)?;
        Ok(t.as_any().try_iter()?.into_any())
    }

    fn __repr__(&self) -> String {
        format!(
            "Move(pit={}, child=Board('{}'), captured={}, game_over={}{})",
            self.pit,
            self.child.inner.to_notation(),
            self.captured,
            if self.game_over { "True" } else { "False" },
            if self.turn_passes {
                ""
            } else {
                ", turn_passes=False"
            }
        )
    }
}

/// A rule set and a board size: Rules(rules="awari", pits=6).
///
/// The rule sets are awari (Computer Olympiad), abapa, grand-slam-captures,
/// grand-slam-replay and cross-wari (docs/rules.md).
#[pyclass(module = "awari", name = "Rules", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Rules {
    inner: RsRules,
}

impl Rules {
    fn check(&self, board: &RsBoard) -> PyResult<()> {
        if board.per_side() != self.inner.pits() {
            return Err(PyValueError::new_err(format!(
                "the board has {} pits per side but the rules have {}",
                board.per_side(),
                self.inner.pits()
            )));
        }
        Ok(())
    }

    fn play_rs(&self, board: &RsBoard, pit: i64) -> PyResult<Move> {
        self.check(board)?;
        let pit = usize::try_from(pit).unwrap_or(usize::MAX);
        let m = self.inner.play(board, pit).map_err(db_err)?;
        Ok(Move {
            pit: m.pit,
            child: Board { inner: m.child },
            captured: m.captured,
            game_over: self.inner.legal_moves(&m.child).is_empty(),
            turn_passes: m.turn == Turn::Passes,
        })
    }
}

#[pymethods]
impl Rules {
    #[new]
    #[pyo3(signature = (rules = "awari", pits = 6))]
    fn new(rules: &str, pits: i64) -> PyResult<Rules> {
        let pits = u8::try_from(pits).unwrap_or(u8::MAX);
        Ok(Rules {
            inner: RsRules::new(rule_set(rules)?, pits).map_err(db_err)?,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Rules('{}', pits={})",
            self.inner.set().name(),
            self.inner.pits()
        )
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    /// The rule set's name.
    #[getter]
    fn name(&self) -> &'static str {
        self.inner.set().name()
    }

    /// Pits per side.
    #[getter]
    fn pits(&self) -> u8 {
        self.inner.pits()
    }

    /// The pits (0 for A) of the legal moves of `board`, ascending.
    fn legal_moves(&self, board: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        // (u32: a Vec<u8> would become bytes.)
        let board = to_board(board)?;
        self.check(&board)?;
        Ok(self
            .inner
            .legal_moves(&board)
            .iter()
            .map(|m| u32::from(m.pit))
            .collect())
    }

    /// Every legal move of `board`, played.
    fn moves(&self, board: &Bound<'_, PyAny>) -> PyResult<Vec<Move>> {
        let board = to_board(board)?;
        self.check(&board)?;
        self.inner
            .legal_moves(&board)
            .iter()
            .map(|m| self.play_rs(&board, i64::from(m.pit)))
            .collect()
    }

    /// Plays the move from the mover's `pit` (0 for A): a Move, which unpacks
    /// as (child, captured, game_over). ValueError when the move is illegal.
    fn play(&self, board: &Bound<'_, PyAny>, pit: i64) -> PyResult<Move> {
        let board = to_board(board)?;
        self.play_rs(&board, pit)
    }

    /// The start position with `seeds` seeds in every pit.
    #[pyo3(signature = (seeds = 4))]
    fn start(&self, seeds: i64) -> PyResult<Board> {
        board_from_ints(&vec![seeds; self.inner.board_pits()]).map(|inner| Board { inner })
    }

    /// How many boards level `seeds` stores.
    fn level_size(&self, seeds: u32) -> PyResult<u64> {
        check_seeds(seeds)?;
        Ok(Index::for_pits(self.inner.pits()).level_size(seeds))
    }

    /// The board of index `index` in level `seeds`.
    fn board_at(&self, seeds: u32, index: u64) -> PyResult<Board> {
        check_seeds(seeds)?;
        Index::for_pits(self.inner.pits())
            .unrank(seeds, index)
            .map(|inner| Board { inner })
            .map_err(db_err)
    }
}

fn check_seeds(seeds: u32) -> PyResult<()> {
    awari_dbformat::check_seeds(seeds).map_err(db_err)
}

/// The default length of a principal variation (`score --pv-limit`).
const PV_LIMIT: usize = 200;

/// An Awari database: the level files of one rule set and size in a directory.
///
/// Tablebase(path, rules="awari", pits=6); rules=None takes the one rule set
/// present. Levels are opened (memory-mapped) on first use.
#[pyclass(module = "awari", name = "Tablebase", frozen)]
struct Tablebase {
    inner: RsTablebase,
}

impl Tablebase {
    fn board(&self, obj: &Bound<'_, PyAny>) -> PyResult<RsBoard> {
        let board = to_board(obj)?;
        if board.per_side() != self.inner.rules().pits() {
            return Err(probe_err(ProbeError::WrongSize {
                board: board.per_side(),
                database: self.inner.rules().pits(),
            }));
        }
        Ok(board)
    }
}

#[pymethods]
impl Tablebase {
    #[new]
    #[pyo3(signature = (path, rules = Some("awari"), pits = 6))]
    fn new(py: Python<'_>, path: PathBuf, rules: Option<&str>, pits: i64) -> PyResult<Tablebase> {
        let set = rules.map(rule_set).transpose()?;
        let pits = u8::try_from(pits).unwrap_or(u8::MAX);
        if !path.is_dir() {
            return Err(PyFileNotFoundError::new_err(format!(
                "{}: no such database directory; build one with awari-solve or awari.solve",
                path.display()
            )));
        }
        let inner = py
            .detach(|| RsTablebase::open_for(&path, set, pits))
            .map_err(|e| {
                let bounds_here = matches!(e, ProbeError::Database { .. })
                    && RsBoundsTablebase::open_for(&path, set, pits).is_ok();
                let err = probe_err(e);
                if bounds_here {
                    suffixed(
                        py,
                        err,
                        "; it holds bound levels (--repetition any): open them with awari.BoundsTablebase",
                    )
                } else {
                    err
                }
            })?;
        Ok(Tablebase { inner })
    }

    fn __repr__(&self) -> String {
        format!(
            "Tablebase('{}', rules='{}', pits={})",
            self.inner.dir().display(),
            self.inner.rules().set().name(),
            self.inner.rules().pits()
        )
    }

    /// The database directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.inner.dir().to_path_buf()
    }

    /// The rules of the database.
    #[getter]
    fn rules(&self) -> Rules {
        Rules {
            inner: self.inner.rules(),
        }
    }

    /// How these levels value endless play: "even-split" (BoundsTablebase:
    /// "any").
    #[getter]
    fn repetition(&self) -> &'static str {
        Repetition::EvenSplit.name()
    }

    /// The levels (seed counts) present, ascending.
    #[getter]
    fn levels(&self) -> Vec<u32> {
        self.inner.levels()
    }

    /// The largest n such that levels 0..=n are all present, or None.
    #[getter]
    fn complete_up_to(&self) -> Option<u32> {
        self.inner.complete_up_to()
    }

    /// True when the levels alone answer `board` (else `search` searches).
    fn covers(&self, board: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.covers(&self.board(board)?))
    }

    /// Lets up to `bytes` of memory hold whole decoded levels (`batch
    /// --preload`): faster for very many lookups; the answers are the same.
    fn preload(&self, bytes: u64) {
        self.inner.preload(bytes);
    }

    /// The value of `board` for its mover: the seeds it will still capture
    /// minus the opponent's, with perfect play.
    fn score(&self, py: Python<'_>, board: &Bound<'_, PyAny>) -> PyResult<i8> {
        let board = self.board(board)?;
        py.detach(|| self.inner.score(&board))
            .map(|s| s.get())
            .map_err(probe_err)
    }

    /// Win, draw or loss ("win", "draw", "loss") for the mover with
    /// `captured=(m, o)` seeds already taken.
    #[pyo3(signature = (board, captured = (0, 0)))]
    fn result(
        &self,
        py: Python<'_>,
        board: &Bound<'_, PyAny>,
        captured: (i64, i64),
    ) -> PyResult<&'static str> {
        let board = self.board(board)?;
        let captured = captured_pair(captured)?;
        py.detach(|| self.inner.outcome(&board, captured))
            .map(|o| o.name())
            .map_err(probe_err)
    }

    /// Everything the levels say about `board`: the dict `awari-probe score
    /// --json` prints (value, result for `captured`, every move with its
    /// value and capture, best moves, a principal variation of at most
    /// `pv_limit` moves).
    #[pyo3(signature = (board, captured = (0, 0), pv_limit = PV_LIMIT))]
    fn analyse<'py>(
        &self,
        py: Python<'py>,
        board: &Bound<'py, PyAny>,
        captured: (i64, i64),
        pv_limit: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let board = self.board(board)?;
        let captured = captured_pair(captured)?;
        let json = py
            .detach(|| answer_json(&self.inner, &board, captured, pv_limit))
            .map_err(probe_err)?;
        json_to_py(py, &json)
    }

    /// The values of many boards at once: an integer array of shape (N, 2P),
    /// one board a row, gives an int8 array of N values. Runs on every core,
    /// without the GIL.
    fn scores<'py>(
        &self,
        py: Python<'py>,
        boards: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<i8>>> {
        let width = self.inner.rules().board_pits();
        let values = per_row(py, boards, width, |board| {
            self.inner.score(board).map(|s| s.get()).map_err(probe_err)
        })?;
        Ok(values.into_pyarray(py))
    }

    /// The answer of `awari-probe score --json --time T`: the levels' answer
    /// (as `analyse`) when they cover `board`, else a search for `time`
    /// seconds (None: no limit; `depth` plies at most) with the levels at its
    /// leaves, saying what it proved ("bound", "result_proven").
    #[pyo3(signature = (board, captured = (0, 0), time = Some(2.0), depth = None, hash = 64 << 20, threads = None, pv_limit = PV_LIMIT))]
    #[allow(clippy::too_many_arguments)]
    fn search<'py>(
        &self,
        py: Python<'py>,
        board: &Bound<'py, PyAny>,
        captured: (i64, i64),
        time: Option<f64>,
        depth: Option<u32>,
        hash: usize,
        threads: Option<usize>,
        pv_limit: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let board = self.board(board)?;
        let captured = captured_pair(captured)?;
        let time = time
            .map(|t| {
                Duration::try_from_secs_f64(t).map_err(|_| {
                    PyValueError::new_err(format!("time={t}: a search time is seconds, 0 or more"))
                })
            })
            .transpose()?;
        if time.is_none() && depth.is_none() {
            return Err(PyValueError::new_err(
                "a search needs a time or a depth limit (time=None and depth=None)",
            ));
        }
        if threads == Some(0) {
            return Err(PyValueError::new_err("threads=0: a search needs a thread"));
        }
        let limits = Limits {
            time,
            depth,
            hash_bytes: hash,
            threads: threads.unwrap_or(Limits::default().threads),
            ..Limits::default()
        };
        let json = py
            .detach(|| -> Result<serde_json::Value, ProbeError> {
                if self.inner.covers(&board) {
                    return answer_json(&self.inner, &board, captured, pv_limit);
                }
                let answer = Searcher::new(&self.inner, limits).answer(&board, captured)?;
                Ok(search_json(self.inner.rules(), &board, captured, &answer))
            })
            .map_err(probe_err)?;
        json_to_py(py, &json)
    }
}

/// A level's lower and upper bounds, two int8 arrays in index order.
type LevelArrays<'py> = (Bound<'py, PyArray1<i8>>, Bound<'py, PyArray1<i8>>);

/// The bound levels of `--repetition any` (built by `awari.solve(...,
/// repetition="any")` or `awari-solve --repetition any`) of one rule set and
/// size in a directory: for each board a lower and an upper bound on its
/// value that hold under every rule ending endless play by sharing the seeds
/// on the board (docs/rules.md).
///
/// BoundsTablebase(path, rules="awari", pits=6); rules=None takes the one
/// rule set present. Levels are opened (memory-mapped) on first use; nothing
/// is searched above them.
#[pyclass(module = "awari", name = "BoundsTablebase", frozen)]
struct BoundsTablebase {
    inner: RsBoundsTablebase,
}

impl BoundsTablebase {
    fn board(&self, obj: &Bound<'_, PyAny>) -> PyResult<RsBoard> {
        let board = to_board(obj)?;
        if board.per_side() != self.inner.rules().pits() {
            return Err(probe_err(ProbeError::WrongSize {
                board: board.per_side(),
                database: self.inner.rules().pits(),
            }));
        }
        Ok(board)
    }

    fn bounds_rs(&self, py: Python<'_>, board: &RsBoard) -> PyResult<Bounds> {
        py.detach(|| self.inner.bounds(board)).map_err(probe_err)
    }

    /// True when the levels present answer `board`: its own level for a
    /// stored board, else (by one ply, as `bounds` does) its children.
    fn covers_rs(&self, board: &RsBoard, present: &[u32]) -> bool {
        if board.is_stored() {
            present.binary_search(&board.seeds()).is_ok()
        } else {
            self.inner
                .rules()
                .legal_moves(board)
                .iter()
                .all(|m| self.covers_rs(&m.child, present))
        }
    }
}

#[pymethods]
impl BoundsTablebase {
    #[new]
    #[pyo3(signature = (path, rules = Some("awari"), pits = 6))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        rules: Option<&str>,
        pits: i64,
    ) -> PyResult<BoundsTablebase> {
        let set = rules.map(rule_set).transpose()?;
        let pits = u8::try_from(pits).unwrap_or(u8::MAX);
        if !path.is_dir() {
            return Err(PyFileNotFoundError::new_err(format!(
                "{}: no such database directory; build one with awari.solve(path, repetition=\"any\") or awari-solve --repetition any",
                path.display()
            )));
        }
        let inner = py
            .detach(|| RsBoundsTablebase::open_for(&path, set, pits))
            .map_err(|e| {
                let scores_here = matches!(e, ProbeError::Database { .. })
                    && RsTablebase::open_for(&path, set, pits).is_ok();
                let err = probe_err(e);
                if scores_here {
                    suffixed(
                        py,
                        err,
                        " (it holds even-split levels: open them with awari.Tablebase)",
                    )
                } else {
                    err
                }
            })?;
        Ok(BoundsTablebase { inner })
    }

    fn __repr__(&self) -> String {
        format!(
            "BoundsTablebase('{}', rules='{}', pits={})",
            self.inner.dir().display(),
            self.inner.rules().set().name(),
            self.inner.rules().pits()
        )
    }

    /// The database directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.inner.dir().to_path_buf()
    }

    /// The rules of the levels.
    #[getter]
    fn rules(&self) -> Rules {
        Rules {
            inner: self.inner.rules(),
        }
    }

    /// How these levels value endless play: "any" (Tablebase: "even-split").
    #[getter]
    fn repetition(&self) -> &'static str {
        Repetition::Any.name()
    }

    /// The levels (seed counts) with both bound files present, ascending.
    #[getter]
    fn levels(&self) -> Vec<u32> {
        self.inner.levels()
    }

    /// The largest n such that levels 0..=n are all present, or None.
    #[getter]
    fn complete_up_to(&self) -> Option<u32> {
        self.inner.complete_up_to()
    }

    /// True when the levels present answer `board` (else `bounds` raises
    /// MissingLevel: nothing is searched).
    fn covers(&self, board: &Bound<'_, PyAny>) -> PyResult<bool> {
        let board = self.board(board)?;
        Ok(self.covers_rs(&board, &self.inner.levels()))
    }

    /// `(lower, upper)` for the mover of `board`: the final difference (the
    /// seeds it will still capture minus the opponent's) it can make sure of
    /// when endless play would give every seed then on the board to the
    /// opponent, and the most the opponent can hold it to when endless play
    /// would give them all to the mover. Under every rule that ends endless
    /// play by sharing the seeds on the board (the even split, own-side
    /// seeds at a repetition, ...) the value lies between them; where they
    /// meet it is the same under all. Unstored boards (a start) by one ply.
    fn bounds(&self, py: Python<'_>, board: &Bound<'_, PyAny>) -> PyResult<(i8, i8)> {
        let board = self.board(board)?;
        let b = self.bounds_rs(py, &board)?;
        Ok((b.lower.get(), b.upper.get()))
    }

    /// True when the two bounds of `board` meet: its value is the same under
    /// every repetition rule.
    fn is_exact(&self, py: Python<'_>, board: &Bound<'_, PyAny>) -> PyResult<bool> {
        let board = self.board(board)?;
        Ok(self.bounds_rs(py, &board)?.is_exact())
    }

    /// "win", "draw" or "loss" when the bounds decide the game for the mover
    /// with `captured=(m, o)` seeds already taken (the same under every
    /// repetition rule), else "depends".
    #[pyo3(signature = (board, captured = (0, 0)))]
    fn result(
        &self,
        py: Python<'_>,
        board: &Bound<'_, PyAny>,
        captured: (i64, i64),
    ) -> PyResult<&'static str> {
        let board = self.board(board)?;
        let captured = captured_pair(captured)?;
        Ok(bounds_outcome(self.bounds_rs(py, &board)?, captured).name())
    }

    /// The dict `awari-probe score --repetition any --json` prints:
    /// "repetition", "board", "seeds", "lower", "upper", "exact", "moves"
    /// (each "pit", "label", "captured", "lower", "upper", "exact"; none is
    /// marked best) and, unless `captured` is None, "captured" and "result"
    /// ("win", "draw", "loss" or "depends").
    #[pyo3(signature = (board, captured = Some((0, 0))))]
    fn analyse<'py>(
        &self,
        py: Python<'py>,
        board: &Bound<'py, PyAny>,
        captured: Option<(i64, i64)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let board = self.board(board)?;
        let captured = captured.map(captured_pair).transpose()?;
        let json = py
            .detach(|| bounds_answer_json(&self.inner, &board, captured))
            .map_err(probe_err)?;
        json_to_py(py, &json)
    }

    /// The bounds of many boards at once: an integer array of shape
    /// (N, 2P), one board a row, gives an int8 array of shape (N, 2), lower
    /// then upper. Runs on every core, without the GIL.
    fn bounds_array<'py>(
        &self,
        py: Python<'py>,
        boards: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<i8>>> {
        let width = self.inner.rules().board_pits();
        let pairs = per_row(py, boards, width, |board| {
            self.inner
                .bounds(board)
                .map(|b| [b.lower.get(), b.upper.get()])
                .map_err(probe_err)
        })?;
        let rows = pairs.len();
        let flat: Vec<i8> = pairs.into_iter().flatten().collect();
        let array = Array2::from_shape_vec((rows, 2), flat)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(array.into_pyarray(py))
    }

    /// The whole of level `seeds`: `(lower, upper)`, two int8 arrays of
    /// `rules.level_size(seeds)` bounds in index order (the board of index i
    /// is `rules.board_at(seeds, i)`). MissingLevel when a file of the level
    /// is not there.
    fn level_bounds<'py>(&self, py: Python<'py>, seeds: u32) -> PyResult<LevelArrays<'py>> {
        check_seeds(seeds)?;
        let [lower, upper] = py
            .detach(|| -> Result<[Vec<i8>; 2], ProbeError> {
                // Both files first, so that a missing one is named before any work.
                let readers = [
                    self.inner.level(seeds, DbBound::Lower)?,
                    self.inner.level(seeds, DbBound::Upper)?,
                ];
                let mut out = [Vec::new(), Vec::new()];
                for (reader, values) in readers.iter().zip(out.iter_mut()) {
                    *values = vec![0i8; reader.boards() as usize];
                    reader.decode_into(values)?;
                }
                Ok(out)
            })
            .map_err(probe_err)?;
        Ok((lower.into_pyarray(py), upper.into_pyarray(py)))
    }
}

/// Answers every row of `boards` (an integer array of shape (N, `width`),
/// one board a row: any integer dtype, or nested lists) with `answer`, on
/// every core without the GIL. Fails with the error of the first row at
/// fault, prefixed `row r: `; ValueError or TypeError for an array of
/// another shape or of non-integers.
fn per_row<'py, T: Send + Copy + Default>(
    py: Python<'py>,
    boards: &Bound<'py, PyAny>,
    width: usize,
    answer: impl Fn(&RsBoard) -> PyResult<T> + Sync,
) -> PyResult<Vec<T>> {
    // The error of the first row at fault, if any.
    let run = |view: ArrayView2<'_, u8>| -> Result<Vec<T>, (usize, PyErr)> {
        let first_error = std::sync::Mutex::new(None::<(usize, PyErr)>);
        let values: Vec<T> = py.detach(|| {
            (0..view.nrows())
                .into_par_iter()
                .with_min_len(256)
                .map(|r| {
                    let row = view.row(r);
                    let value = match row.as_slice() {
                        Some(s) => RsBoard::new(s),
                        None => RsBoard::new(&row.to_vec()),
                    }
                    .map_err(db_err)
                    .and_then(|board| answer(&board));
                    value.unwrap_or_else(|err| {
                        let mut first = first_error.lock().unwrap_or_else(|e| e.into_inner());
                        if first.as_ref().is_none_or(|(at, _)| r < *at) {
                            *first = Some((r, err));
                        }
                        T::default()
                    })
                })
                .collect()
        });
        match first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(values),
        }
    };
    let np = py.import("numpy")?;
    let array = np.call_method1("asarray", (boards,))?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    if shape.len() != 2 || shape[1] != width {
        return Err(PyValueError::new_err(format!(
            "boards are an array of shape (N, {width}), one board of {} pits per side a row; got shape {shape:?}",
            width / 2
        )));
    }
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    if !(kind == "u" || kind == "i" || kind == "b") {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "boards are an array of integers, not of dtype {}",
            array.getattr("dtype")?.str()?
        )));
    }
    let result = if let Ok(a) = array.extract::<PyReadonlyArray2<'_, u8>>() {
        run(a.as_array())
    } else {
        // Other integer types: checked, then narrowed to bytes.
        let wide = np.call_method1("asarray", (&array, "int64"))?;
        let wide: PyReadonlyArray2<'_, i64> = wide.extract()?;
        let view = wide.as_array();
        if let Some(((r, _), &v)) = view.indexed_iter().find(|(_, &v)| !(0..=255).contains(&v)) {
            let row: Vec<i64> = view.row(r).to_vec();
            return Err(prefixed(
                py,
                board_from_ints(&row)
                    .err()
                    .unwrap_or_else(|| PyValueError::new_err(format!("{v} seeds in a pit"))),
                &format!("row {r}: "),
            ));
        }
        let narrow = view.mapv(|v| v as u8);
        run(narrow.view())
    };
    result.map_err(|(r, err)| prefixed(py, err, &format!("row {r}: ")))
}

/// Reads a size: a number of bytes, or a string such as "512M", "2G", "2GiB".
fn size_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(n) = obj.extract::<u64>() {
        return Ok(n);
    }
    let text: String = obj.extract().map_err(|_| {
        PyValueError::new_err("memory is a number of bytes or a size such as \"512M\" or \"2G\"")
    })?;
    awari_dbformat::cli::parse_size(&text).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Builds every missing level into the directory `path`, as `awari-solve`
/// does: levels 0..=max_seeds (20 by default), or those a game of `start`
/// seeds per pit needs. Prints its table to stderr (progress=False: nothing)
/// and returns one dict per level of the plan (the line of `awari-solve
/// --json`). `memory` caps what a level may use: bytes, or "512M", "2G"
/// (default 85% of the available memory). `repetition="any"` builds the
/// bound levels of `awari-solve --repetition any` (two files per level,
/// read with BoundsTablebase) instead of even-split values; `exact` and
/// `certificate` are for even-split levels. `count_all=True` also counts
/// every board of each level, stored or not, into its dict's `counts_all`
/// (Lincke's tables; `awari-solve --count-all`).
#[pyfunction]
#[pyo3(signature = (path, max_seeds = None, rules = "awari", pits = 6, memory = None, start = None, exact = false, certificate = false, progress = true, repetition = "even-split", count_all = false))]
#[allow(clippy::too_many_arguments)]
fn solve<'py>(
    py: Python<'py>,
    path: PathBuf,
    max_seeds: Option<u32>,
    rules: &str,
    pits: i64,
    memory: Option<&Bound<'py, PyAny>>,
    start: Option<u32>,
    exact: bool,
    certificate: bool,
    progress: bool,
    repetition: &str,
    count_all: bool,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    use awari_solver::build::Options;
    let repetition = self::repetition(repetition)?;
    let pits = u8::try_from(pits).unwrap_or(u8::MAX);
    let rules = RsRules::new(rule_set(rules)?, pits).map_err(db_err)?;
    let plan = solve_plan(rules, max_seeds, start)?;
    if repetition == Repetition::Any && certificate {
        return Err(PyValueError::new_err(
            "certificate=True is for even-split levels only: bound levels (repetition=\"any\") are checked by awari-probe verify --repetition any",
        ));
    }
    let memory = match memory {
        Some(m) => size_arg(m)?,
        None => awari_dbformat::memory::default_budget(),
    };
    let options = Options {
        dir: path.clone(),
        memory,
        progress,
        write: Default::default(),
        certificate,
        stored: if exact {
            awari_dbformat::file::Stored::Scores
        } else {
            awari_dbformat::file::Stored::LowerBounds
        },
        partitions: None,
        on_disk: false,
        spare_disk: false,
        work_dir: None,
        checkpoint_seconds: None,
        cells: Default::default(),
        rank_mail_bytes: None,
        count_all,
    };
    let reports = py.detach(|| {
        if progress {
            eprintln!(
                "awari.solve: {rules}{}, levels {}..={} into {} ({} threads, memory budget {})",
                if repetition == Repetition::Any {
                    ", bounds under any repetition rule"
                } else {
                    ""
                },
                plan.levels.first().unwrap_or(&0),
                plan.levels.last().unwrap_or(&0),
                path.display(),
                rayon::current_num_threads(),
                awari_dbformat::memory::format_size(memory)
            );
        }
        match repetition {
            Repetition::EvenSplit => solve_even_split(&plan, &options, progress),
            Repetition::Any => solve_bounds(&plan, &options, progress),
        }
    });
    let reports = reports.map_err(solve_err)?;
    reports.iter().map(|r| json_to_py(py, r)).collect()
}

/// The even-split build of `solve`: one JSON report per level.
fn solve_even_split(
    plan: &awari_solver::build::Plan,
    options: &awari_solver::build::Options,
    progress: bool,
) -> Result<Vec<serde_json::Value>, awari_solver::SolveError> {
    use awari_solver::build::{self, LevelReport};
    if progress {
        eprintln!("{}", LevelReport::table_heading());
    }
    let mut reports = Vec::new();
    build::build(plan, options, |r: &LevelReport| {
        if progress {
            eprintln!("{}", r.table_row());
        }
        reports.push(r.json_line());
    })
    .map(|()| reports)
}

/// The `repetition="any"` build of `solve` (`awari-solve --repetition
/// any`): one JSON report per level, its line of `--json`.
fn solve_bounds(
    plan: &awari_solver::build::Plan,
    options: &awari_solver::build::Options,
    progress: bool,
) -> Result<Vec<serde_json::Value>, awari_solver::SolveError> {
    use awari_solver::bounds::{build_bounds, BoundReport};
    if progress {
        eprintln!("{}", BoundReport::table_heading());
    }
    let mut reports = Vec::new();
    build_bounds(plan, options, |r: &BoundReport| {
        if progress {
            eprintln!("{}", r.table_row());
        }
        reports.push(
            serde_json::to_value(r).unwrap_or_else(
                |e| serde_json::json!({ "seeds": r.seeds, "error": e.to_string() }),
            ),
        );
    })
    .map(|()| reports)
}

/// The levels `solve` builds: up to `max_seeds` (20 by default), or those a
/// game of `start` seeds per pit needs.
fn solve_plan(
    rules: RsRules,
    max_seeds: Option<u32>,
    start: Option<u32>,
) -> PyResult<awari_solver::build::Plan> {
    use awari_solver::build::Plan;
    match (start, max_seeds) {
        (Some(_), Some(_)) => Err(PyValueError::new_err("give max_seeds or start, not both")),
        (Some(0), None) => Err(PyValueError::new_err("start needs at least 1 seed per pit")),
        (Some(s), None) => {
            check_seeds(s.saturating_mul(rules.board_pits() as u32))?;
            Ok(Plan::for_start(rules, s))
        }
        (None, n) => {
            let n = n.unwrap_or(20);
            check_seeds(n)?;
            Ok(Plan::up_to(rules, n))
        }
    }
}

/// The Python exception of a build's error.
fn solve_err(e: awari_solver::SolveError) -> PyErr {
    use awari_solver::SolveError;
    let message = e.to_string();
    match e {
        SolveError::Db(e) => db_err(e),
        SolveError::Memory { .. } => pyo3::exceptions::PyMemoryError::new_err(message),
        SolveError::Invalid(_) => PyValueError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}

/// The extension module; the package `awari` re-exports it.
#[pymodule]
fn _awari(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Board>()?;
    m.add_class::<Move>()?;
    m.add_class::<Rules>()?;
    m.add_class::<Tablebase>()?;
    m.add_class::<BoundsTablebase>()?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add("CorruptDatabase", m.py().get_type::<CorruptDatabase>())?;
    m.add("MissingLevel", m.py().get_type::<MissingLevel>())?;
    m.add(
        "REPETITIONS",
        Repetition::ALL.iter().map(|r| r.name()).collect::<Vec<_>>(),
    )?;
    m.add(
        "RULE_SETS",
        RuleSet::ALL.iter().map(|r| r.name()).collect::<Vec<_>>(),
    )?;
    m.add("MIN_PITS", awari_dbformat::MIN_PITS)?;
    m.add("MAX_PITS", awari_dbformat::MAX_PITS)?;
    m.add("MAX_SEEDS", awari_dbformat::MAX_SEEDS)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
