//! The game: the board, the rule sets, the moves forward (sowing and
//! captures) and backward (a board's parents within its level), and what a
//! database stores of a position (its [`Score`]).
//!
//! - [`board`]: [`Board`], the seeds in each pit seen from the player to move.
//! - [`rules`]: [`Rules`] and [`RuleSet`], the rule sets and the board size.
//! - [`moves`]: [`Rules::legal_moves`] and [`Rules::play`], a [`Move`]'s
//!   child, capture and [`Gain`].
//! - `sowing`: where the seeds of a pit land (the moves' hot loop).
//! - [`parents`]: [`Rules::unmoves`], the boards one quiet move before a board.
//! - [`score`]: [`Score`], a position's value, and [`Outcome`], what it
//!   means once the seeds already captured are known.

pub mod board;
pub mod moves;
pub mod parents;
pub mod rules;
pub mod score;
mod sowing;

pub use board::{parse_pit, pit_label, Board};
pub use moves::{Gain, Move, MoveList, Turn};
pub use parents::Parents;
pub use rules::{check_seeds, RuleSet, Rules, MAX_PITS, MAX_SEEDS, MIN_PITS};
pub use score::{Outcome, Score};
