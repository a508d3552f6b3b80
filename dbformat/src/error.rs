//! The one error type of this crate.

use std::path::{Path, PathBuf};

/// Everything that can go wrong in `awari-dbformat`: bad input from a person,
/// an impossible request, or a level file that cannot be trusted.
///
/// Every variant carries what failed (the text, the board, the file) so that a
/// message printed to a user says exactly what to fix.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A board written by a person could not be read.
    #[error("cannot read board {input:?}: {reason}")]
    Notation {
        /// The text as given.
        input: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A rule set name or a board size that this crate does not know.
    #[error("invalid rules: {0}")]
    Rules(String),
    /// A move that cannot be played on a board.
    #[error("illegal move {pit} on {board}: {reason}")]
    IllegalMove {
        /// The board, in notation.
        board: String,
        /// The pit, as a letter A.. of the mover's row.
        pit: String,
        /// Why the move is illegal.
        reason: String,
    },
    /// A repetition rule name that this crate does not know.
    #[error("unknown repetition rule {input:?}; expected even-split or any")]
    Repetition {
        /// The text as given.
        input: String,
    },
    /// A board that no database stores (its opponent row has no empty pit).
    #[error("board {board} is not stored in any database: the opponent's row has no empty pit (only a start-like position can look like this; value it by one ply)")]
    NotStored {
        /// The board, in notation.
        board: String,
    },
    /// An index outside a level.
    #[error("index {index} is outside level {seeds}, which holds {boards} boards (0..{boards})")]
    IndexOutOfRange {
        /// The seed count of the level.
        seeds: u32,
        /// The index asked for.
        index: u64,
        /// The number of boards in the level.
        boards: u64,
    },
    /// A size written by a person (`512M`, `20G`) that could not be read.
    #[error("{input:?} is not a size; write e.g. 512M, 20G or 20GiB")]
    Size {
        /// The text as given.
        input: String,
    },
    /// A seed count beyond what this crate can index.
    #[error("{seeds} seeds is more than the {max} this build can index")]
    TooManySeeds {
        /// The seed count asked for.
        seeds: u32,
        /// The largest supported seed count.
        max: u32,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A level file whose bytes cannot be trusted (truncated, corrupted, not a level file).
    #[error("{}: corrupt level file: {reason}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A sound level file that is not the one asked for (other rules, pits or seeds).
    #[error("{}: expected {expected}, but the file holds {found}", path.display())]
    WrongLevel {
        /// The file.
        path: PathBuf,
        /// What the caller asked for.
        expected: String,
        /// What the header says.
        found: String,
    },
    /// A level file written by a newer or unknown version of the format.
    #[error("{}: unsupported level file: {reason}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// What is not supported.
        reason: String,
    },
}

impl Error {
    /// The [`Error::Io`] of `path` from an I/O error, for `map_err`:
    /// `fs::write(&path, bytes).map_err(Error::io(&path))`.
    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// What is wrong with bytes that should be part of a level file, found
/// where the file is not known (the decoders of the models and blocks):
/// the reader that called them reports it as [`Error::Corrupt`], with the
/// file's path and where in the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Malformed(pub String);

/// [`Malformed`] from a format string, as `format!` takes it.
macro_rules! malformed {
    ($($arg:tt)*) => {
        $crate::error::Malformed(format!($($arg)*))
    };
}
pub(crate) use malformed;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
