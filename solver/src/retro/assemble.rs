//! The level's values, free bits and generations assembled from its
//! partitions', three ways: a single partition in memory gives its own
//! arrays; several in memory are copied into new ones (with several ranks,
//! each rank's own, its share of the level); on disk, they are copied into
//! files of the level's directory, which take the page cache, not memory
//! the budget has no room for.

use std::ops::Range;

#[cfg(doc)]
use awari_dbformat::cluster::Shares;
use awari_dbformat::level::{Generations, Values};
use awari_dbformat::memory::huge::HugeArray;

use super::solve::Level;
use super::state::State;
use super::store::{LevelState, Store};
use crate::cells::Packing;
use crate::error::SolveError;

/// A level's values, free bits and (when recorded) generations.
pub(super) type Assembled = (Values, HugeArray, Option<Generations>);

/// The values, free bits and generations of `level` from the partitions of
/// `work`, and the first board they hold: the whole level's (from board
/// 0), but under MPI each rank's share;
/// the level's directory is removed once they are read, unless the
/// options keep it.
///
/// # Errors
/// A partition's file that cannot be mapped, or a file of the level's
/// arrays that cannot be made (a full disk).
pub(super) fn level_values<L: Packing>(
    level: &Level,
    work: LevelState<L>,
) -> Result<(Assembled, u64), SolveError> {
    let LevelState { store, states } = work;
    let whole = 0..level.boards;
    match store {
        Store::Memory if level.ranks.size() > 1 => across_ranks(level, states),
        Store::Memory => Ok((in_memory(states, level, whole, |_| true)?, 0)),
        Store::Disk(disk) => {
            // (Under MPI, this rank's share, from the files of its own
            // partitions.)
            let span = if level.ranks.size() > 1 {
                let shares = level.partitions.shares(level.ranks.size());
                shares.range(level.ranks.rank())
            } else {
                whole
            };
            let first = span.start;
            let (values, free, mut generations) = assemble(
                states,
                level.seeds,
                span.clone(),
                |p| level.owns(p),
                |p, state| disk.load(p, state),
                |name, bytes| disk.array(name, bytes),
            )?;
            share_generations(level, &span, &mut generations);
            if !level.options.keep_level_dir {
                disk.remove()?;
            }
            Ok(((values, free, generations), first))
        }
    }
}

/// Under MPI: each rank's own partitions, its share of the level ([`Shares`],
/// a run of partitions), assembled: no rank holds the whole level (they
/// write it together: `awari_dbformat::file::shared`).
fn across_ranks<L: Packing>(
    level: &Level,
    states: Vec<State<L>>,
) -> Result<(Assembled, u64), SolveError> {
    let shares = level.partitions.shares(level.ranks.size());
    let span = shares.range(level.ranks.rank());
    let first = span.start;
    let own: Vec<usize> = level.own_partitions().collect();
    if let [only] = own[..] {
        // One partition, the whole share: its values made in place, as in
        // one process (no copy beside the cells).
        let mut states = states;
        let mut state = states.swap_remove(only);
        drop(states);
        debug_assert_eq!(state.range(), span);
        let generations = state.generations.take();
        let (values, free) = state.into_values(level.seeds)?;
        return Ok(((values, free, generations), first));
    }
    let (values, free, mut generations) =
        in_memory(states, level, span.clone(), |p| level.owns(p))?;
    share_generations(level, &span, &mut generations);
    Ok(((values, free, generations), first))
}

/// When `level` records generations, those of a rank's share `span`
/// (`generations`), made empty by a rank that owns no partition: every rank
/// takes part in writing the certificate.
fn share_generations(level: &Level, span: &Range<u64>, generations: &mut Option<Generations>) {
    if level.options.record_generations {
        generations.get_or_insert_with(|| Generations::zeroed(span.end - span.start));
    }
}

/// [`assemble`] of the partitions in memory that are `ours`, into arrays
/// for boards `span`.
fn in_memory<L: Packing>(
    states: Vec<State<L>>,
    level: &Level,
    span: Range<u64>,
    ours: impl Fn(usize) -> bool,
) -> Result<Assembled, SolveError> {
    assemble(
        states,
        level.seeds,
        span,
        ours,
        |_, _| Ok(()),
        |_, bytes| Ok(HugeArray::zeroed(bytes)),
    )
}

/// The values, free bits and generations of the level's boards `span`
/// (whole partitions, from a multiple of 64 boards) from those of its
/// partitions (in order) that are `ours`, each made at hand by `load`
/// first, into arrays of zeros that `array(name, bytes)` makes; a single
/// partition in memory gives its own arrays.
fn assemble<L: Packing>(
    mut states: Vec<State<L>>,
    seeds: u32,
    span: Range<u64>,
    ours: impl Fn(usize) -> bool,
    load: impl Fn(usize, &mut State<L>) -> Result<(), SolveError>,
    array: impl Fn(&str, usize) -> Result<HugeArray, SolveError>,
) -> Result<Assembled, SolveError> {
    let in_memory = states
        .iter()
        .all(|s| s.words.len() == State::<L>::word_bytes(s.size));
    if states.len() == 1 && in_memory && ours(0) {
        let mut state = states.pop().expect("one partition");
        let generations = state.generations.take();
        let (values, free) = state.into_values(seeds)?;
        return Ok((values, free, generations));
    }
    let boards = span.end - span.start;
    // The level's statistics read the values at random (a child of an
    // unstored board): see `HugeArray::advise_random`.
    let values = array("level-values", boards as usize)?;
    values.advise_random();
    let mut values = Values::from_array(values);
    let mut free = array("level-free", 8 * boards.div_ceil(64) as usize)?;
    let mut generations: Option<Generations> = None;
    for (p, mut state) in states.into_iter().enumerate() {
        if !ours(p) {
            continue;
        }
        load(p, &mut state)?;
        let range = state.range();
        debug_assert!(span.start <= range.start && range.end <= span.end);
        let (start, end) = (
            (range.start - span.start) as usize,
            (range.end - span.start) as usize,
        );
        if let Some(own) = state.generations.take() {
            if generations.is_none() {
                let bytes = 2 * boards as usize;
                generations = Some(Generations::from_array(array("level-generations", bytes)?));
            }
            let all = generations.as_mut().expect("made above");
            all[start..end].copy_from_slice(&own);
        }
        // Read, not made in place (as `State::into_values` does): a
        // partition's files stay the state to resume from until the level
        // file is written. A partition starts at a multiple of 64 boards:
        // its free words follow the ones before.
        let at = start / 8;
        let free_bytes = 8 * (end - start).div_ceil(64);
        state.values_into(
            seeds,
            &mut values[start..end],
            &mut free[at..at + free_bytes],
        );
    }
    Ok((values, free, generations))
}
