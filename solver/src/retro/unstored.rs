//! The unstored boards' captures, valued beside the initial pass.
//!
//! The statistics over all boards of a level ([`crate::stats`]) value the
//! boards no file stores (every opponent pit holds a seed) by one ply, and
//! their captures read the same lower levels the initial pass reads. When
//! those levels are files larger than the page cache, the pass reads them
//! in windows of lookups sorted by child, and each window reads nearly all
//! of their pages: the unstored boards' lookups join the windows for a
//! fraction of the reads a pass of their own takes (level 36 here: four
//! passes over 3.16 G boards after the level was written, about 19
//! minutes).
//!
//! The unstored boards are shared out in proportion to the stored ones:
//! stored boards `a..b` of the level bring unstored boards
//! `a * U / N..b * U / N` (`N` stored, `U` unstored), so that the windows,
//! whatever their cut, value each unstored board once. A window writes its
//! unstored boards' best captures into a file (a byte each, in the order
//! of [`Index::unstored_boards`], [`NO_CAPTURE`] where none is valued),
//! named [`UnstoredCaptures::partial`] until the whole pass is done, then
//! renamed: a level resumed from a checkpoint of its initial pass goes on
//! with the file, and the statistics use only a whole one.

use std::fs::{self, File, OpenOptions};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use awari_dbformat::{Board, Error, Index, UnstoredRow};

use crate::error::SolveError;

/// The value of an unstored board none of whose captures is valued (it has
/// none, or it ends the game: its value is its own, found later).
pub const NO_CAPTURE: i8 = i8::MIN;

/// The unstored boards of a level, in order, and where they lie among the
/// stored ones (see the module's docs).
pub(crate) struct UnstoredBoards {
    /// The opponent rows of the unstored boards, in order.
    rows: Vec<UnstoredRow>,
    /// The first unstored board of each row.
    starts: Vec<u64>,
    /// The unstored boards.
    boards: u64,
    /// The stored boards.
    stored: u64,
}

impl UnstoredBoards {
    /// The unstored boards of level `seeds`.
    pub fn of(index: &Index, seeds: u32) -> UnstoredBoards {
        let rows: Vec<UnstoredRow> = index.unstored_rows(seeds).collect();
        let mut starts = Vec::with_capacity(rows.len());
        let mut boards = 0;
        for row in &rows {
            starts.push(boards);
            boards += row.len();
        }
        UnstoredBoards {
            rows,
            starts,
            boards,
            stored: index.level_size(seeds),
        }
    }

    /// The number of unstored boards.
    pub fn count(&self) -> u64 {
        self.boards
    }

    /// The opponent rows of the unstored boards, in order.
    pub fn rows(&self) -> &[UnstoredRow] {
        &self.rows
    }

    /// The first unstored board that goes with stored board `stored` (an
    /// index in the level, or the level's size for the end): the unstored
    /// boards of stored boards `a..b` are `first_with(a)..first_with(b)`.
    pub fn first_with(&self, stored: u64) -> u64 {
        (u128::from(stored) * u128::from(self.boards) / u128::from(self.stored)) as u64
    }

    /// `unstored` (indices among the unstored boards) cut at the rows'
    /// starts into pieces of at least `at_least` boards (but the last), so
    /// that each is generated from the start of a row but the first.
    pub fn pieces(&self, unstored: Range<u64>, at_least: u64) -> Vec<Range<u64>> {
        let mut pieces = Vec::new();
        let mut at = unstored.start;
        while at < unstored.end {
            let row = self.starts.partition_point(|&s| s < at + at_least);
            let next_row = self.starts.get(row).copied().unwrap_or(self.boards);
            let end = next_row.min(unstored.end);
            pieces.push(at..end);
            at = end;
        }
        pieces
    }

    /// The unstored boards from the `first`, in order.
    pub fn boards_from(&self, first: u64) -> impl Iterator<Item = Board> + '_ {
        let row = self
            .starts
            .partition_point(|&s| s <= first)
            .saturating_sub(1);
        let skip = first.saturating_sub(self.starts.get(row).copied().unwrap_or(0));
        self.rows[row.min(self.rows.len())..]
            .iter()
            .flat_map(|row| row.boards())
            .skip(skip as usize)
    }
}

/// The file of the unstored boards' best captures being written by an
/// initial pass, and where those boards lie among the level's (its
/// [`UnstoredBoards`], which it derefs to).
pub(crate) struct UnstoredCaptures {
    boards: UnstoredBoards,
    /// The file being written, its path, and its name once whole.
    file: File,
    path: PathBuf,
    complete: PathBuf,
}

impl std::ops::Deref for UnstoredCaptures {
    type Target = UnstoredBoards;

    fn deref(&self) -> &UnstoredBoards {
        &self.boards
    }
}

impl UnstoredCaptures {
    /// The file of level `seeds`'s unstored boards' captures, to be
    /// written to `complete`'s [`partial`](Self::partial) name: made anew
    /// (its boards unvalued) when `fresh`, else the one a stopped pass left,
    /// if any. `None` when not fresh and none is left (the statistics then
    /// value the captures themselves).
    ///
    /// # Errors
    /// A file that cannot be made or opened.
    pub fn open(
        complete: &Path,
        index: &Index,
        seeds: u32,
        fresh: bool,
    ) -> Result<Option<UnstoredCaptures>, SolveError> {
        let unstored = UnstoredBoards::of(index, seeds);
        let boards = unstored.count();
        let path = Self::partial(complete);
        let file = if fresh {
            let _ = fs::remove_file(complete);
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir).map_err(Error::io(dir))?;
            }
            let file = File::create(&path).map_err(Error::io(&path))?;
            file.set_len(boards).map_err(Error::io(&path))?;
            file
        } else {
            match OpenOptions::new().write(true).open(&path) {
                Ok(file) if file.metadata().is_ok_and(|m| m.len() == boards) => file,
                _ => return Ok(None),
            }
        };
        Ok(Some(UnstoredCaptures {
            boards: unstored,
            file,
            path,
            complete: complete.to_path_buf(),
        }))
    }

    /// The name of the file while the pass writes it: `complete` with
    /// `.partial` appended.
    pub fn partial(complete: &Path) -> PathBuf {
        let mut name = complete.as_os_str().to_owned();
        name.push(".partial");
        PathBuf::from(name)
    }

    /// Writes the best captures `values` of the unstored boards from the
    /// `first`.
    ///
    /// # Errors
    /// A write that fails (a full disk).
    pub fn write(&self, first: u64, values: Vec<i8>) -> Result<(), SolveError> {
        // (In place: the same allocation.)
        let bytes: Vec<u8> = values.into_iter().map(|v| v as u8).collect();
        self.file
            .write_all_at(&bytes, first)
            .map_err(Error::io(&self.path))?;
        Ok(())
    }

    /// Gives the file its complete name: every unstored board has been
    /// valued.
    ///
    /// # Errors
    /// A file that cannot be synced or renamed.
    pub fn finish(self) -> Result<(), SolveError> {
        self.file.sync_all().map_err(Error::io(&self.path))?;
        fs::rename(&self.path, &self.complete).map_err(Error::io(&self.complete))?;
        Ok(())
    }
}

/// The best captures of every unstored board of a level, read from the
/// whole file at `path` an initial pass wrote, if there is one.
///
/// # Errors
/// A file that cannot be read.
pub fn read_unstored_captures(path: &Path) -> Result<Option<Vec<i8>>, SolveError> {
    if !path.exists() {
        return Ok(None);
    }
    let bytes = fs::read(path).map_err(Error::io(path))?;
    Ok(Some(bytes.into_iter().map(|b| b as i8).collect()))
}

/// The best captures of unstored boards `boards` of a level, read from the
/// whole file at `path` an initial pass wrote (under MPI, a rank's file,
/// which holds the boards that go with its share).
///
/// # Errors
/// A file that cannot be read.
pub fn read_unstored_range(path: &Path, boards: Range<u64>) -> Result<Vec<i8>, SolveError> {
    let file = File::open(path).map_err(Error::io(path))?;
    let mut bytes = vec![0u8; (boards.end - boards.start) as usize];
    file.read_exact_at(&mut bytes, boards.start)
        .map_err(Error::io(path))?;
    Ok(bytes.into_iter().map(|b| b as i8).collect())
}

/// Removes the file at `path` an initial pass wrote, if there is one, and
/// its directory once empty (the level is written: the file is not needed
/// again).
///
/// # Errors
/// A file that cannot be removed.
pub fn remove_unstored_captures(path: &Path) -> Result<(), SolveError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(Error::io(path)(e).into());
        }
        _ => {}
    }
    if let Some(dir) = path.parent() {
        let _ = fs::remove_dir(dir);
    }
    Ok(())
}
