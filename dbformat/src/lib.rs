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
//! - [`file`](mod@crate::file): the level file format (compressed, checksummed, memory-mapped).
//! - [`huge`]: per-board arrays in huge pages (a level's values, a certificate).
//! - [`memory`]: the memory this machine has, sizes for people.
//! - [`resident`]: a ceiling on the resident set, held by giving back the
//!   pages of arrays mapped from files.
//! - [`cache::prefetch`]: the cache hint of the solver's and verifier's hot loops.
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

pub mod board;
pub mod cache;
pub mod error;
pub mod file;
pub mod finder;
pub mod huge;
pub mod index;
pub mod mapped;
pub mod memory;
pub mod moves;
pub mod packed;
pub mod parents;
pub mod ranks;
pub mod resident;
pub mod rules;
pub mod score;
mod sowing;

pub use board::{parse_pit, pit_label, Board};
pub use error::{Error, Result};
pub use finder::BoardFinder;
pub use index::{Index, LevelIter, Tile, TileBoards, UnstoredRow};
pub use moves::{Gain, Move, MoveList, Turn};
pub use packed::BoardPacker;
pub use parents::Parents;
pub use rules::{RuleSet, Rules, MAX_PITS, MAX_SEEDS, MIN_PITS};
pub use score::{Outcome, Score};
