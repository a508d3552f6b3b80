//! Checkpoints and resuming: where a level's stages start (after a
//! checkpoint found in its directory, or after the initial pass, itself
//! resumed from where a stopped run left it and checkpointed as it goes),
//! when a stage makes a checkpoint, and the state named once every stage
//! is done. With the partitions in memory there is nothing to resume and
//! no checkpoint is made. (The files themselves: [`super::store`].)

use std::time::Instant;

use super::solve::Level;
use super::state::State;
use super::store::{summaries, DiskStore, LevelState, Manifest, Store};
use super::unstored::UnstoredCaptures;
use super::Stage;
use super::{init, owners};
use crate::cells::Packing;
use crate::error::SolveError;

/// Where the stages of a level start.
pub(super) struct Start {
    /// The threshold of the first stage to run.
    pub first_k: u32,
    /// The stages done before it.
    pub stages: Vec<Stage>,
    /// The seconds of the initial pass, over every run that did part of it.
    pub init_seconds: f64,
    /// The boards whose initial pass a stopped run had done and this one
    /// took from its checkpoint.
    pub resumed_initial_boards: u64,
    /// How long the checkpoint after the initial pass took (0 when none
    /// was made here).
    pub last_checkpoint_seconds: f64,
}

/// Makes `work` ready for its stages: resumed from `resumed`, the
/// checkpoint found in the level's directory, when its initial pass is
/// done; else with the initial pass run (from where `resumed` left it, if
/// anywhere) and checkpointed. `None` with `init_only` (the files of the
/// initial pass named, not copied: the copy is made when the level goes
/// on, once the lower levels are given back).
///
/// # Errors
/// A checkpoint that cannot be read or written, or one of the initial
/// pass for another number of partitions.
pub(super) fn start<L: Packing, const P: usize>(
    level: &Level,
    work: &mut LevelState<L>,
    resumed: Option<&Manifest>,
    init_only: bool,
) -> Result<Option<Start>, SolveError> {
    let start = match (resumed, &mut work.store) {
        (Some(manifest), Store::Disk(disk)) if !manifest.is_initial() => {
            restore_summaries(disk, &mut work.states)?;
            let decided: u64 = manifest.stages.iter().map(|s| s.wins + s.losses).sum();
            level.progress.inc(level.boards + decided);
            Start {
                first_k: manifest.next_k,
                stages: manifest.stages.clone(),
                init_seconds: manifest.init_seconds,
                resumed_initial_boards: 0,
                last_checkpoint_seconds: 0.0,
            }
        }
        _ => match initial_pass::<L, P>(level, work, resumed, init_only)? {
            Some(start) => start,
            None => return Ok(None),
        },
    };
    Ok((!init_only).then_some(start))
}

/// The initial pass over this rank's partitions, from where a stopped run
/// left it (`resumed`, its checkpoint, if any), then checkpointed (named
/// only, with `init_only`, and `None` returned).
fn initial_pass<L: Packing, const P: usize>(
    level: &Level,
    work: &mut LevelState<L>,
    resumed: Option<&Manifest>,
    init_only: bool,
) -> Result<Option<Start>, SolveError> {
    let count = level.count();
    let (initialised, seconds_before) = match (resumed, &mut work.store) {
        (Some(manifest), Store::Disk(disk)) => {
            restore_summaries(disk, &mut work.states)?;
            (manifest.initialised.clone(), manifest.init_seconds)
        }
        _ => (vec![0; count], 0.0),
    };
    if initialised.len() != count {
        return Err(SolveError::Invalid(format!(
            "level {}: a checkpoint of the initial pass for {} partitions, not {count}",
            level.seeds,
            initialised.len()
        )));
    }
    let resumed_initial_boards = initialised.iter().sum();
    level.progress.inc(resumed_initial_boards);
    let init_seconds = run_initial_pass::<L, P>(level, work, initialised, seconds_before)?;
    let manifest = Manifest {
        init_seconds,
        ..level.identity.clone()
    };
    if init_only {
        if let Store::Disk(disk) = &mut work.store {
            disk.name_files(&summaries(&work.states), manifest)?;
        }
        return Ok(None);
    }
    let checkpoint_started = Instant::now();
    work.checkpoint(manifest)?;
    Ok(Some(Start {
        first_k: level.seeds,
        stages: Vec::new(),
        init_seconds,
        resumed_initial_boards,
        last_checkpoint_seconds: checkpoint_started.elapsed().as_secs_f64(),
    }))
}

/// Runs the initial pass of each of this rank's partitions from the boards
/// `initialised` already (each from its first); returns its seconds, with
/// the `seconds_before` of the runs that did the rest. The unstored boards'
/// captures are valued beside it where the options ask
/// ([`super::SolveOptions::unstored_captures`]) and the pass either starts
/// here or goes on with their file.
fn run_initial_pass<L: Packing, const P: usize>(
    level: &Level,
    work: &mut LevelState<L>,
    initialised: Vec<u64>,
    seconds_before: f64,
) -> Result<f64, SolveError> {
    let started = Instant::now();
    let options = level.options;
    // (Under MPI the lower levels are shared out: the captures are looked
    // up in sorted windows, asked of the ranks that hold them.)
    let shared = level.ranks.size() > 1;
    let sorted_lookups = options.sorted_lookups;
    let unstored = match &options.unstored_captures {
        Some(path) if sorted_lookups.is_some() => {
            let fresh = initialised.iter().all(|&n| n == 0);
            UnstoredCaptures::open(path, level.index, level.seeds, fresh)?
        }
        _ => None,
    };
    let mut windows = InitWindows {
        initialised,
        seconds_before,
        started,
        last_checkpoint: Instant::now(),
    };
    let on_disk = matches!(work.store, Store::Disk(_));
    for p in level.own_partitions() {
        if let Store::Disk(disk) = &mut work.store {
            disk.make_resident(p, &mut work.states)?;
        }
        let LevelState { store, states } = &mut *work;
        let states = &*states;
        let from = windows.initialised[p];
        let mut after_window = |done: u64| windows.done(level, p, done, store, states);
        let pass = init::Pass {
            rules: level.rules,
            seeds: level.seeds,
            index: level.index,
            lower: level.lower,
            state: &states[p],
            progress: level.progress,
            unstored: unstored.as_ref(),
        };
        let ranks = level.ranks;
        init::initialise::<L, P>(
            &pass,
            ranks,
            sorted_lookups,
            on_disk,
            from,
            &mut after_window,
        )?;
    }
    if shared {
        // This rank's windows are done; the others may still ask.
        owners::answer_until_all_done(level.ranks, level.lower);
    }
    // (Under MPI each rank's file holds the unstored boards that go with
    // its share: each counts them.)
    if let Some(unstored) = unstored {
        unstored.finish()?;
    }
    Ok(seconds_before + started.elapsed().as_secs_f64())
}

/// How far the initial pass is, partition by partition. On disk, the boards
/// done are checkpointed as the pass goes (at most every
/// `checkpoint_seconds`): a level whose pass takes hours does not start it
/// over when stopped.
struct InitWindows {
    /// The boards of each partition, from its first, whose pass is done.
    initialised: Vec<u64>,
    /// The seconds of the pass in the runs before this one.
    seconds_before: f64,
    /// When this run's pass started.
    started: Instant,
    last_checkpoint: Instant,
}

impl InitWindows {
    /// Partition `p` has `done` boards initialised: a checkpoint of the
    /// pass under way when one is due (not when the pass is complete: the
    /// checkpoint after it follows).
    fn done<L: Packing>(
        &mut self,
        level: &Level,
        p: usize,
        done: u64,
        store: &mut Store,
        states: &[State<L>],
    ) -> Result<(), SolveError> {
        self.initialised[p] = done;
        let Store::Disk(disk) = store else {
            return Ok(());
        };
        if self.last_checkpoint.elapsed().as_secs_f64() < level.options.checkpoint_seconds
            || self.initialised.iter().sum::<u64>() == level.boards
        {
            return Ok(());
        }
        let manifest = Manifest {
            init_seconds: self.seconds_before + self.started.elapsed().as_secs_f64(),
            initialised: self.initialised.clone(),
            ..level.identity.clone()
        };
        disk.name_initialised(&summaries(states), manifest)?;
        self.last_checkpoint = Instant::now();
        Ok(())
    }
}

/// When the stages make their checkpoints: at the end of a stage that ends
/// at least `checkpoint_seconds` after the last checkpoint, and
/// `checkpoint_cost_multiple` times as long as that one took
/// ([`super::SolveOptions`]).
pub(super) struct Checkpoints {
    /// When the last checkpoint was made (or the stages started).
    last: Instant,
    /// How long it took.
    last_seconds: f64,
}

impl Checkpoints {
    /// The stages start now, the last checkpoint having taken
    /// `last_seconds`.
    pub fn new(last_seconds: f64) -> Checkpoints {
        Checkpoints {
            last: Instant::now(),
            last_seconds,
        }
    }

    /// After stage `k`, with `stages` done: a checkpoint of `work` when one
    /// is due (never after the last stage: the state is named by
    /// [`finish`]).
    ///
    /// # Errors
    /// As [`DiskStore::checkpoint`].
    pub fn after_stage<L: Packing>(
        &mut self,
        level: &Level,
        work: &mut LevelState<L>,
        k: i8,
        stages: &[Stage],
        init_seconds: f64,
    ) -> Result<(), SolveError> {
        let options = level.options;
        let spacing = options
            .checkpoint_seconds
            .max(options.checkpoint_cost_multiple * self.last_seconds);
        let due = k > 1 && self.last.elapsed().as_secs_f64() >= spacing;
        // (Under MPI with the partitions on disk, every rank makes one when
        // any is due: their checkpoints are of the same stage.)
        let due = match work.store {
            Store::Disk(_) if level.ranks.size() > 1 => level.ranks.sum(u64::from(due)) > 0,
            _ => due,
        };
        if !due {
            return Ok(());
        }
        let manifest = after_stages(level, k as u32 - 1, stages, init_seconds);
        level
            .progress
            .set_message(format!("checkpoint after stage {k}"));
        let started = Instant::now();
        work.checkpoint(manifest)?;
        self.last_seconds = started.elapsed().as_secs_f64();
        self.last = Instant::now();
        Ok(())
    }
}

/// Every stage done: the partitions' files become the state to resume
/// from, and the checkpoint's copy gives its room to the level's
/// assembled values (nothing with the partitions in memory).
///
/// # Errors
/// As [`DiskStore::finish`].
pub(super) fn finish<L: Packing>(
    level: &Level,
    work: &mut LevelState<L>,
    stages: &[Stage],
    init_seconds: f64,
) -> Result<(), SolveError> {
    if let Store::Disk(disk) = &mut work.store {
        let manifest = after_stages(level, 0, stages, init_seconds);
        disk.finish(&summaries(&work.states), manifest)?;
    }
    Ok(())
}

/// The manifest of the level with `stages` done, `next_k` the next.
fn after_stages(level: &Level, next_k: u32, stages: &[Stage], init_seconds: f64) -> Manifest {
    Manifest {
        next_k,
        stages: stages.to_vec(),
        init_seconds,
        ..level.identity.clone()
    }
}

/// Sets the summaries of `states` to those saved with the state `disk`
/// resumes from.
///
/// # Errors
/// A file of summaries that cannot be read, or of the wrong size.
fn restore_summaries<L: Packing>(
    disk: &DiskStore,
    states: &mut [State<L>],
) -> Result<(), SolveError> {
    let lengths: Vec<usize> = states.iter().map(|s| s.summaries.len()).collect();
    let all = disk.summaries(lengths.iter().sum())?;
    let mut at = 0;
    for (state, len) in states.iter_mut().zip(lengths) {
        state.set_summaries(&all[at..at + len]);
        at += len;
    }
    Ok(())
}
