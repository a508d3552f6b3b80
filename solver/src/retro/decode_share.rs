//! A rank's share of a level read from its file, under MPI: a build that
//! resumes (or goes on above levels written before) holds no lower level
//! whole, so a level file of lower bounds cannot be resolved as one
//! process resolves it ([`awari_dbformat::level::scores`]). Each rank
//! decodes the blocks of its share, then raises each board to its best
//! capture with the children asked of the ranks that hold them, in windows
//! of lookups sorted by child, as the initial pass asks ([`super::owners`]).

use std::ops::Range;

use awari_dbformat::cluster::Ranks;
use awari_dbformat::file::{LevelReader, Stored};
use awari_dbformat::level::Values;
use awari_dbformat::{with_pits, Index, Levels};

use super::init;
use super::owners::more_to_ask;
use crate::error::SolveError;

/// Boards of a window of [`decode_share`] (their captures' lookups, about
/// one a board at 16 bytes each, are held at once).
const WINDOW_BOARDS: u64 = 1 << 21;

/// The scores of boards `share` of the level of `reader`, this rank's
/// share: their stored values, raised to their best captures when the file
/// stores lower bounds, the captures' children asked of the ranks that hold
/// them in `lower` (every rank holds its share of every level a capture
/// reaches). Every rank calls it together, for the same level.
///
/// # Errors
/// A corrupt level file.
///
/// # Panics
/// When `lower` lacks a level a capture reaches.
pub(crate) fn decode_share(
    reader: &LevelReader,
    lower: &Levels,
    ranks: &dyn Ranks,
    share: Range<u64>,
) -> Result<Values, SolveError> {
    let boards = share.end - share.start;
    let mut values = Values::zeroed(boards);
    values.copy_from_slice(&reader.decode_range(share.start, boards as usize)?);
    if reader.stored() != Stored::LowerBounds {
        return Ok(values);
    }
    let id = reader.id();
    let index = Index::for_pits(id.rules.pits());
    let mut at = share.start;
    // (Every rank takes part in every round, with nothing to ask once its
    // share is done, until no rank has anything left.)
    while more_to_ask(ranks, at < share.end) {
        let end = (at + WINDOW_BOARDS).min(share.end);
        let lookups = with_pits!(id.rules.pits(), P => {
            init::sorted_capture_lookups::<P>(id.rules, index, id.seeds, at..end)
        });
        let window = &mut values[(at - share.start) as usize..(end - share.start) as usize];
        let (best, _) = init::best_captures_asked(ranks, lower, &lookups, window.len(), 0);
        for (value, best) in window.iter_mut().zip(best) {
            *value = (*value).max(best.into_inner());
        }
        at = end;
    }
    Ok(values)
}
