//! A level decoded into its scores: from its file (lower bounds resolved
//! through the captures, in passes that fit the room under the resident
//! ceiling), into memory or into a file of scores.

use std::fs::File;
use std::ops::Range;
use std::path::Path;

use crate::error::{Error, Result};
use crate::file::{resolve_level_in, LevelReader, Stored};
use crate::level::{levels_captures_reach, Levels, Values};
use crate::memory::huge::HugeArray;
use crate::memory::{mapped, resident};

/// The boards of the levels one pass reads: for each seed count, a range of
/// indices (empty: none).
pub type Share = Vec<Range<u64>>;

/// The passes that read the values of levels of `sizes[s]` boards (seed
/// count `s`), each reading at most `room` of them (one byte per board) and
/// at least one board: the levels cut into pieces in order, the pieces
/// packed into passes as they come. With `room` `None`, one pass reads all.
pub fn passes(sizes: &[u64], room: Option<u64>) -> Vec<Share> {
    let none = || vec![0..0; sizes.len()];
    let Some(room) = room.map(|r| r.max(1)) else {
        return vec![sizes.iter().map(|&n| 0..n).collect()];
    };
    let mut passes = vec![none()];
    let mut left = room;
    for (s, &n) in sizes.iter().enumerate() {
        let mut at = 0;
        while at < n {
            if left == 0 {
                passes.push(none());
                left = room;
            }
            let take = left.min(n - at);
            passes.last_mut().expect("one pass at least")[s] = at..at + take;
            at += take;
            left -= take;
        }
    }
    passes
}

/// Decodes the level of `reader` into `out`, one score per board in index
/// order: a file of lower bounds is resolved through the boards' captures,
/// whose children are read from `levels` (which must hold every level
/// [`levels_captures_reach`]).
///
/// With `room` (bytes, see [`resident::room`]), the captures' children are
/// read in passes over shares of the lower levels that each fit it, the
/// file pages given back after each: under a resident ceiling, reading them
/// all at once would give back and fault in the same pages again and again.
/// The scores are the same in any number of passes (a capture only raises
/// a board's value).
///
/// # Errors
/// A corrupt level file ([`LevelReader::decode_into`]).
///
/// # Panics
/// When `out` is not one byte per board, or `levels` lacks a level a
/// capture reaches.
pub fn decode_scores_into(
    reader: &LevelReader,
    levels: &Levels,
    out: &mut [i8],
    room: Option<u64>,
) -> Result<()> {
    reader.decode_into(out)?;
    resolve_scores(reader, levels, out, room);
    Ok(())
}

/// [`decode_scores_into`] into a new array in memory.
///
/// # Errors
/// A corrupt level file, or memory the system refuses ([`Error::Io`]).
///
/// # Panics
/// As [`decode_scores_into`].
pub fn decode_scores(reader: &LevelReader, levels: &Levels, room: Option<u64>) -> Result<Values> {
    let mut values = reader.decode_all()?;
    resolve_scores(reader, levels, &mut values, room);
    Ok(values)
}

/// Raises the stored values `out` of the level of `reader` to their
/// scores when the file stores lower bounds (see [`decode_scores_into`]).
fn resolve_scores(reader: &LevelReader, levels: &Levels, out: &mut [i8], room: Option<u64>) {
    if reader.stored() != Stored::LowerBounds {
        return;
    }
    let id = reader.id();
    let sizes: Vec<u64> = levels_captures_reach(id.seeds)
        .map(|s| levels.get(s).map_or(0, |level| level.len() as u64))
        .collect();
    let lower = |s| {
        let level = levels.get(s).expect("the levels captures reach are held");
        &level[..]
    };
    for share in passes(&sizes, room) {
        if room.is_some() {
            // The share's pages in large reads, before the captures read
            // them at random.
            for (s, range) in levels_captures_reach(id.seeds).zip(&share) {
                if !range.is_empty() {
                    levels.populate(s, range.clone());
                }
            }
        }
        resolve_level_in(id, 0, out, lower, &share);
        if room.is_some() {
            resident::release_file_pages();
        }
    }
}

/// The scores of a level of `boards` boards in file `path`, one signed byte
/// per board in index order (the layout `awari-probe export` writes),
/// mapped: as found when it has that size and is newer than `source` (the
/// level file the scores come from), else made anew by `fill` (always
/// without a `source`).
///
/// The file is filled under a temporary name, synced and renamed, so a
/// file at `path` is always complete.
///
/// # Errors
/// What `fill` returns, or [`Error::Io`] naming the file that cannot be
/// made, written or mapped (a full disk).
pub fn scores_in_file<E: From<Error>>(
    path: &Path,
    boards: u64,
    source: Option<&Path>,
    fill: impl FnOnce(&mut [i8]) -> std::result::Result<(), E>,
) -> std::result::Result<Values, E> {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let current = std::fs::metadata(path).is_ok_and(|m| m.len() == boards)
        && match (source.map(modified), modified(path)) {
            (Some(Some(made)), Some(scores)) => scores >= made,
            _ => false,
        };
    // Scores are read at random (by capture and by parent): see
    // `HugeArray::advise_random` for why it is said before the first access.
    let random = |array: HugeArray| {
        array.advise_random();
        Values::from_array(array)
    };
    if current {
        return Ok(random(mapped::open(path)?));
    }
    let tmp = path.with_extension("scores.tmp");
    let mut values = random(mapped::create(&tmp, boards as usize)?);
    fill(&mut values)?;
    File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(Error::io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(Error::io(path))?;
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_read_every_board_once_within_the_room() {
        let sizes = [1, 0, 5, 12, 3];
        for room in 1..=25 {
            let all = passes(&sizes, Some(room));
            for (s, &n) in sizes.iter().enumerate() {
                let mut read: Vec<u64> = all.iter().flat_map(|p| p[s].clone()).collect();
                read.sort_unstable();
                assert_eq!(read, (0..n).collect::<Vec<_>>(), "room {room}, level {s}");
            }
            for pass in &all {
                let bytes: u64 = pass.iter().map(|r| r.end - r.start).sum();
                assert!(bytes <= room && bytes > 0, "room {room}: a pass of {bytes}");
            }
            let total: u64 = sizes.iter().sum();
            assert_eq!(all.len() as u64, total.div_ceil(room), "room {room}");
        }
        assert_eq!(passes(&sizes, None).len(), 1);
    }
}
