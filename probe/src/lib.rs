//! Perfect-play answers from Awari databases built by `awari-solve`.
//!
//! Open a directory with [`Tablebase::open`], then ask for a position's value
//! ([`Tablebase::score`]), every move with its value ([`Tablebase::analyse`]), a
//! principal variation ([`Tablebase::principal_variation`]) or the result for the
//! seeds already captured ([`Tablebase::outcome`]). Boards that no level stores (a
//! start position, or any board whose opponent row is full) are valued by one ply.
//! [`verify`] checks a whole level without trusting the solver.
//! [`BoundsTablebase`] answers the same questions under `--repetition any`:
//! the bounds that hold under every repetition rule ([`bounds`]).
//!
//! ```no_run
//! use awari_dbformat::{Board, Rules};
//! use awari_probe::Tablebase;
//!
//! let tb = Tablebase::open("db", Rules::default())?;
//! let board: Board = "0 0 6 0 3 5 / 2 1 1 0 0 0".parse()?;
//! assert_eq!(tb.score(&board)?.get(), -2); // Lincke, Fig. A.2
//! # Ok::<(), awari_probe::ProbeError>(())
//! ```

pub mod bounds;
pub mod error;
pub mod json;
pub mod search;
pub mod tablebase;
pub mod verify;

pub use bounds::{BoundsAnalysis, BoundsOutcome, BoundsTablebase, MoveBounds};
pub use error::ProbeError;
pub use tablebase::{Analysis, MoveValue, Pv, PvEnd, PvStep, Tablebase};
