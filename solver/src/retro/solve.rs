//! Solving one level, phase by phase: its partitions set up (in memory, or
//! in files of the level's directory with the checkpoint found there), the
//! initial pass run or resumed ([`super::checkpoint`]), the stages run
//! ([`super::stage_loop`]), and the level's values assembled from its
//! partitions' ([`super::assemble`]).

use awari_dbformat::cluster::{OneProcess, Ranks};
use awari_dbformat::file::LevelId;
use awari_dbformat::Levels;
use awari_dbformat::{with_pits, Index, Rules};
use indicatif::ProgressBar;

use super::checkpoint::{self, Checkpoints};
use super::cold::ColdBytes;
use super::stage::Step;
use super::state::State;
use super::store::{self, DiskStore, LevelState, Manifest, Store};
use super::{assemble, default_list_entries, exchange, identity, layout_for, stage_loop};
use super::{Partitions, SolveOptions, SolvedLevel};
use crate::cells::{CellLayout, Narrow, Packing, Split, Wide};
use crate::error::SolveError;

/// What [`solve`] is asked: the arguments of [`super::solve_level`].
#[derive(Clone, Copy)]
pub(super) struct Job<'a> {
    pub rules: Rules,
    pub seeds: u32,
    pub lower: &'a Levels,
    pub progress: &'a ProgressBar,
    pub options: &'a SolveOptions,
    pub layout: CellLayout,
    pub ranks: &'a dyn Ranks,
    /// Stop after the initial pass ([`super::initialise_on_disk`]).
    pub init_only: bool,
}

impl<'a> Job<'a> {
    /// Level `seeds` solved in full in one process, in the cell layout
    /// `options` asks for.
    pub fn new(
        rules: Rules,
        seeds: u32,
        lower: &'a Levels,
        progress: &'a ProgressBar,
        options: &'a SolveOptions,
    ) -> Job<'a> {
        Job {
            rules,
            seeds,
            lower,
            progress,
            options,
            layout: layout_for(seeds, options),
            ranks: &OneProcess,
            init_only: false,
        }
    }
}

/// Runs `job` in its cell layout. The initial pass and the propagation are
/// compiled for one cell layout and one board size at a time (see
/// `awari_dbformat::Parents`).
pub(super) fn run(job: Job) -> Result<Option<SolvedLevel>, SolveError> {
    match job.layout {
        CellLayout::Narrow => with_pits!(job.rules.pits(), P => solve::<Narrow, P>(job)),
        CellLayout::Wide => with_pits!(job.rules.pits(), P => solve::<Wide, P>(job)),
        CellLayout::Split => with_pits!(job.rules.pits(), P => solve::<Split, P>(job)),
    }
}

/// A level being solved: what was asked, and how the level is cut.
pub(super) struct Level<'a> {
    pub rules: Rules,
    pub seeds: u32,
    pub index: &'static Index,
    /// The boards of the level.
    pub boards: u64,
    pub lower: &'a Levels,
    pub progress: &'a ProgressBar,
    pub options: &'a SolveOptions,
    pub ranks: &'a dyn Ranks,
    /// At least one partition per rank.
    pub partitions: Partitions,
    /// What the level's directory holds before any stage
    /// ([`super::identity`]).
    pub identity: Manifest,
}

impl<'a> Level<'a> {
    fn new(job: &Job<'a>) -> Level<'a> {
        let index = Index::for_pits(job.rules.pits());
        let boards = index.level_size(job.seeds);
        let wanted = job.options.partitions.max(job.ranks.size() as u64);
        // (Under MPI, whole blocks of the level file: each rank keeps its
        // partitions' values as its share of the level.)
        let partitions = if job.ranks.size() > 1 {
            Partitions::aligned(boards, wanted, job.options.share_align)
        } else {
            Partitions::new(boards, wanted)
        };
        Level {
            rules: job.rules,
            seeds: job.seeds,
            index,
            boards,
            lower: job.lower,
            progress: job.progress,
            options: job.options,
            ranks: job.ranks,
            partitions,
            identity: identity(
                LevelId::new(job.rules, job.seeds),
                job.options,
                job.layout,
                partitions,
            ),
        }
    }

    /// The number of partitions.
    pub fn count(&self) -> usize {
        self.partitions.count()
    }

    /// Whether partition `p` is this rank's (all are in one process).
    pub fn owns(&self, p: usize) -> bool {
        self.ranks.owns(p, self.count())
    }

    /// This rank's partitions, in order.
    pub fn own_partitions(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.count()).filter(|&p| self.owns(p))
    }

    /// Partition `state` at generation `generation` of stage `k`.
    pub fn step<'s, L: Packing>(
        &'s self,
        state: &'s State<L>,
        k: i8,
        generation: u32,
    ) -> Step<'s, L> {
        Step {
            rules: self.rules,
            seeds: self.seeds,
            index: self.index,
            state,
            k,
            generation,
            progress: self.progress,
        }
    }
}

/// Solves `job` in cells of layout `L`, for boards of `P` pits per side
/// (the rules' own); `None` when only the initial pass was asked.
fn solve<L: Packing, const P: usize>(job: Job) -> Result<Option<SolvedLevel>, SolveError> {
    let level = Level::new(&job);
    let traffic_before = level.ranks.figures();
    let (mut work, resumed) = set_up::<L>(&level, job.init_only)?;
    let start = checkpoint::start::<L, P>(&level, &mut work, resumed.as_ref(), job.init_only)?;
    let Some(start) = start else {
        return Ok(None);
    };
    // Resumed from the files themselves: their copy, before they change.
    if let Store::Disk(disk) = &mut work.store {
        disk.ensure_copy()?;
    }
    for state in &mut work.states {
        state.words_to_memory()?;
    }
    // (What the initial pass freed goes back before the stages.)
    awari_dbformat::memory::resident::give_back_free_heap();
    let mut checkpoints = Checkpoints::new(start.last_checkpoint_seconds);
    let mut stages = start.stages;
    let updates_to_ranks = stage_loop::run_stages::<L, P>(
        &level,
        &mut work,
        start.first_k,
        &mut stages,
        start.init_seconds,
        &mut checkpoints,
    )?;
    checkpoint::finish(&level, &mut work, &stages, start.init_seconds)?;
    level.progress.set_message("done");
    let ((values, free, generations), first) = assemble::level_values(&level, work)?;
    Ok(Some(SolvedLevel {
        values,
        first,
        ranks: exchange::rank_figures(&level, traffic_before, updates_to_ranks),
        free,
        stages,
        init_seconds: start.init_seconds,
        generations,
        partitions: level.partitions,
        resumed_from_stage: resumed.filter(|m| !m.is_initial()).map(|m| m.next_k),
        resumed_initial_boards: start.resumed_initial_boards,
    }))
}

/// The level's partitions: their cells in memory, or in files of the
/// level's directory (opened there with the checkpoint it holds, if any,
/// which is returned too). Another rank's partitions get their range only.
fn set_up<L: Packing>(
    level: &Level,
    init_only: bool,
) -> Result<(LevelState<L>, Option<Manifest>), SolveError> {
    let (store, resumed) = open_store::<L>(level, init_only)?;
    if L::SPLIT && !matches!(store, Store::Memory) {
        return Err(SolveError::Invalid(format!(
            "level {}: the split cells keep their words in memory, not in a work directory",
            level.seeds
        )));
    }
    let list_entries = level
        .options
        .list_entries
        .unwrap_or_else(|| default_list_entries(level.boards));
    let lists_each = list_entries.div_ceil(level.count() as u64);
    let pits = level.rules.pits();
    let states = (0..level.count())
        .map(|p| {
            let range = level.partitions.range(p);
            Ok(match store {
                _ if !level.owns(p) => State::unloaded(range, 0, pits),
                Store::Memory if L::SPLIT => {
                    let boards = range.end - range.start;
                    let state =
                        State::new(range, lists_each, pits, level.options.record_generations);
                    match &level.options.cold_dir {
                        Some(dir) => {
                            let cold = ColdBytes::in_file(&dir.join(format!("cold-{p}")), boards)?;
                            let state = state.with_cold(cold);
                            // The words too in a file until the initial pass is done.
                            if level.options.words_in_file_at_init {
                                state.with_words_in_file(&dir.join(format!("words-{p}")))?
                            } else {
                                state
                            }
                        }
                        None => state.with_cold(ColdBytes::in_memory(boards)),
                    }
                }
                Store::Memory => {
                    State::new(range, lists_each, pits, level.options.record_generations)
                }
                Store::Disk(_) => State::unloaded(range, lists_each, pits),
            })
        })
        .collect::<Result<_, SolveError>>()?;
    Ok((LevelState { store, states }, resumed))
}

/// Where the partitions' cells live: in memory without a work directory,
/// else in its files (with the checkpoint found there, if any).
fn open_store<L: Packing>(
    level: &Level,
    init_only: bool,
) -> Result<(Store, Option<Manifest>), SolveError> {
    let Some(dir) = &level.options.level_dir else {
        return Ok((Store::Memory, None));
    };
    let partitions = level.partitions;
    // (Under MPI, files for this rank's partitions only.)
    let word_bytes = |p: usize| {
        let range = partitions.range(p);
        level
            .owns(p)
            .then(|| State::<L>::word_bytes(range.end - range.start))
    };
    let open = || {
        DiskStore::open(
            dir,
            level.identity.clone(),
            partitions,
            word_bytes,
            level.options.resident_partitions,
            // (After the initial pass alone, the checkpoint's copy is
            // made when the level goes on: see `initialise_on_disk`.)
            if init_only { 1 } else { store::COPIES },
        )
    };
    let (mut disk, mut resumed) = open()?;
    if !ranks_resume_together(level, resumed.as_ref()) {
        drop(disk);
        store::clear_dir(dir)?;
        (disk, resumed) = open()?;
    }
    Ok((Store::Disk(Box::new(disk)), resumed))
}

/// Whether the ranks may resume level `level` from the states their
/// directories hold (this rank's `resumed`): each from its part of the
/// initial pass, or all from a checkpoint after the same stage. A rank
/// stopped while the others made a checkpoint leaves them apart: then the
/// level starts over in every rank (rank 0 says so). In one process, always.
fn ranks_resume_together(level: &Level, resumed: Option<&Manifest>) -> bool {
    let ranks = level.ranks;
    if ranks.size() == 1 {
        return true;
    }
    // 0 for the initial pass (none of it done, or part), else 1 + the
    // next stage.
    let point = resumed
        .filter(|m| !m.is_initial())
        .map_or(0, |m| 1 + u64::from(m.next_k));
    let points = ranks.all_gather(&[point]);
    let together = points.iter().all(|&p| p == points[0]);
    if !together && ranks.is_root() {
        // (On stderr even with --json, where no progress bar shows.)
        level.progress.suspend(|| {
            eprintln!(
                "level {}: the ranks' checkpoints are of different stages (a rank stopped \
                 while the others made one): the level starts over",
                level.seeds
            )
        });
    }
    together
}
