//! The solver's errors for files it makes besides levels. The arrays in
//! files themselves are [`awari_dbformat::memory::mapped`].

use std::path::Path;

pub use awari_dbformat::memory::mapped::{allocate, create, open};

use crate::error::SolveError;

/// The error of `path` from an I/O error.
pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SolveError + '_ {
    move |source| SolveError::Io {
        path: path.to_path_buf(),
        source,
    }
}
