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
use awari_dbformat::{Gain, Index, Levels, MoveList, Score};
use rayon::prelude::*;

use super::init::LEVEL_SHIFT;
use super::owners::{children_scores, more_to_ask};
use crate::error::SolveError;

/// Boards of a window of [`decode_share`] (their captures' lookups, about
/// one a board at 16 bytes each, are held at once).
const WINDOW_BOARDS: u64 = 1 << 21;

/// Boards of a task collecting a window's lookups.
const PIECE_BOARDS: u64 = 1 << 16;

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
        let mut lookups = window_lookups(id.rules, index, id.seeds, at..end);
        lookups.par_sort_unstable_by_key(|l| l.0);
        let scores = children_scores(ranks, lower, lookups.iter().map(|l| l.0));
        let window = &mut values[(at - share.start) as usize..(end - share.start) as usize];
        for (&(_, board, gain), &score) in lookups.iter().zip(&scores) {
            let value = &mut window[board as usize];
            *value = (*value).max(gain.value(Score::new(score)).get());
        }
        at = end;
    }
    Ok(values)
}

/// The captures of boards `boards` of level `seeds`: (the child's key as
/// the initial pass makes it, the board's place in the window, what the
/// capture adds).
fn window_lookups(
    rules: awari_dbformat::Rules,
    index: &Index,
    seeds: u32,
    boards: Range<u64>,
) -> Vec<(u64, u32, Gain)> {
    let pieces: Vec<Range<u64>> = (boards.start..boards.end)
        .step_by(PIECE_BOARDS as usize)
        .map(|start| start..(start + PIECE_BOARDS).min(boards.end))
        .collect();
    let per_piece: Vec<Vec<(u64, u32, Gain)>> = pieces
        .into_par_iter()
        .map(|piece| {
            let mut lookups = Vec::new();
            let mut captures = MoveList::new();
            let count = (piece.end - piece.start) as usize;
            for (k, board) in index
                .boards_from(seeds, piece.start)
                .take(count)
                .enumerate()
            {
                rules.quiet_moves_and_captures(&board, &mut captures);
                let at = (piece.start - boards.start) as u32 + k as u32;
                for m in captures.iter() {
                    let i = index.rank(&m.child).expect("a capture's child is stored");
                    let key = u64::from(m.child.seeds()) << LEVEL_SHIFT | i;
                    lookups.push((key, at, m.gain()));
                }
            }
            lookups
        })
        .collect();
    per_piece.concat()
}
