//! The game model and the database format of the `awari` workspace.
//!
//! - [`Board`]: the seeds in each pit, seen from the player to move, with a
//!   notation for people (`1 1 1 1 1 2 / 4 2 3 0 0 0`) and a two-row drawing.
//! - [`Rules`] and [`RuleSet`]: the four "starving" rule sets of `docs/rules.md` and the
//!   number of pits per side (2 to 8).
//! - [`Rules::legal_moves`], [`Rules::play`], [`Rules::unmoves`]: sowing and
//!   captures forward, and the parents of a board within its level.
//! - [`Index`]: ranks and unranks the stored boards of a level in the order of
//!   the published Romein–Bal files; [`LevelIter`] walks a level in that order,
//!   and [`BoardFinder`] finds boards of nearby indices.
//! - [`Score`] and [`Outcome`]: what a database stores, and what it means once the
//!   seeds already captured are known.
//! - [`level`]: levels decoded, one score per board ([`Values`], [`Levels`]),
//!   and the value of a board by one ply over its children ([`one_ply`]).
//! - [`file`](mod@crate::file): the level file format (compressed, checksummed, memory-mapped).
//! - [`memory`]: huge-page arrays, arrays mapped from files, the resident
//!   ceiling, the memory this machine has.
//! - [`cluster`]: the processes that solve a level together (one, or the
//!   ranks of an MPI job).
//! - [`cli`]: what the two command-line tools share (sizes, progress bars).
//!
//! The folders follow the subsystems: `game/` (the rules of a move),
//! `index/` (where a board is stored), `level/` and `file/` (what a level
//! holds, in memory and on disk), `memory/` and `cluster/` (how large
//! levels are held and shared). `docs/architecture.md` is the map.
//!
//! ```
//! use awari_dbformat::{Board, Index, Rules};
//!
//! let rules = Rules::default(); // awari, 6 pits per side
//! let board: Board = "1 1 1 1 1 2 / 4 2 3 0 0 0".parse()?;
//! assert_eq!(Index::for_pits(6).rank(&board), Some(588_953));
//! let f = rules.play(&board, 5)?; // F captures 3
//! assert_eq!(f.captured, 3);
//! # Ok::<(), awari_dbformat::Error>(())
//! ```

pub mod cli;
pub mod cluster;
pub mod error;
pub mod file;
pub mod game;
pub mod index;
pub mod level;
pub mod memory;

pub use error::{Error, Result};
pub use game::{
    check_seeds, parse_pit, pit_label, Board, Gain, Move, MoveList, Outcome, Parents, RuleSet,
    Rules, Score, Turn, MAX_PITS, MAX_SEEDS, MIN_PITS,
};
pub use index::{BoardFinder, BoardPacker, Index, LevelIter, Tile, TileBoards, UnstoredRow};
pub use level::{
    capture_reaches, levels_captures_reach, one_ply, one_ply_bounds, Bound, Bounds, Levels,
    Repetition, Values,
};
