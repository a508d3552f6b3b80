//! The retrograde loop: solving one level from the finished levels below it.
//!
//! Values are found by thresholds, from the extremes inwards (Romein & Bal's
//! "counter" form of the window algorithm). For k = n, n-1, ..., 1 the sets
//! `W_k = {v >= k}` and `L_k = {v <= -k}` only grow as k falls:
//!
//! - `B(p)`, the best value among p's capturing moves (or `-n` when p has no move;
//!   none under cross-wari, where such a board is worth 0 and is never decided),
//!   comes from the lower levels and is computed once, in the initial pass.
//! - p enters `W_k` when `B(p) >= k` or some quiet (non-capturing) child is in `L_k`.
//! - p enters `L_k` when `B(p) <= -k` and every quiet child is already in `W_k`.
//!   A per-board counter of quiet children not yet in W carries over from one k
//!   to the next, because W only grows.
//! - A board that enters W at stage k has value k, L at stage k has value -k;
//!   what is left after stage 1 is 0 (endless play, or an exact 0).
//!
//! Within a stage, decisions spread in generations: the boards decided in one
//! generation (the frontier) are visited once, and each of their same-level
//! parents (un-moves) is told. Each board is decided once and each quiet edge is
//! followed at most twice per level, so a level costs O(boards x moves).
//!
//! ## State: 1.333 bytes per board
//! Each board has a [`Cell`](crate::cells::Cell) of 10 bits, six to a 64-bit word ([`crate::cells`];
//! 12 bits, five to a word, above 31 seeds):
//! - its value: `B(p)` (or the layout's [`Layout::NO_EXIT`]) until p is
//!   decided, then p's value;
//! - its nibble: the counter `0..=8` while undecided, `DONE` once decided and
//!   visited, or one of two frontier marks (`MARK_A`, `MARK_B`) while
//!   decided but not yet visited. Keeping the frontier in the nibble costs no
//!   memory; a small bitmap of dirty blocks (one bit per [`BLOCK_WORDS`] words)
//!   keeps the scan for marks short.
//!
//! Value and nibble share a word, so a board is decided by one
//! compare-and-swap that sets both, and telling a parent touches one cache line.
//!
//! "Free": whether p's value is `B(p)`, so that a capture reaches it and the
//! level file may store a lower bound instead ([`awari_dbformat::file::bounds`]).
//! It is known when p is decided (a board seeded from `B`, except one without
//! moves; a loss whose `B` is exactly `-k`) and lost once the value is
//! overwritten, so the decided codes keep it: each of `DONE` and the two
//! marks has a free twin with bit 2 clear (`FREE_BIT`). The decided codes
//! are 9..=15, the undecided ones 0..=8. A board left undecided (value 0)
//! is free when its `B` is 0.
//!
//! ## Frontier lists
//! A board found by a mark must be unranked before its parents can be made,
//! and unranking costs more than all the rest of a visit. Boards decided during
//! propagation are found by un-moving a child, so their board is at hand: they
//! go onto a list of the next generation instead, their nibble set to
//! `DONE` or its free twin (a loss is marked by the swap that decides it,
//! then turned to `DONE` by an OR once listed): one `u64` each, the board
//! packed ([`BoardPacker`](awari_dbformat::BoardPacker)) and the top bit set when it is lost (a board with
//! a pit too full to pack is marked). The lists of the generation being
//! visited and the one being made share room for two boards in [`LIST_SHARE`]
//! of the level (8 bytes each; fewer when the memory
//! budget asks, see [`SolveOptions::list_entries`]), in a fixed pool of chunks that
//! tasks fill and the next generation empties (`lists`); past
//! that, decisions fall back to marks (slower, and the values are the same:
//! see the tests with short lists).
//! Boards seeded from `B` are found by a sweep over the indices and
//! keep using marks; those are found in index order, so the next one is
//! mostly in the opponent's row of the last ([`awari_dbformat::BoardFinder`]).
//!
//! ## Partitions
//! A level's index range may be cut into partitions ([`Partitions`]), each
//! with a state of its own (cells, dirty maps, lists, summaries). A parent
//! in the partition being visited is told at once; one in another partition
//! gets an update (its index and whether the child is lost), sent in
//! batches sorted by destination and applied by its partition between two
//! generations. Every generation thus decides the same boards as with one
//! partition, so the values, the free bits and the certificate are the
//! same for any number of partitions (the tests compare them byte for
//! byte). A parent lies in the partition of its mover's row, which sowing
//! has little to do with the child's, so with K partitions about (K-1)/K
//! of the updates cross ([`Stage::sent_updates`] counts them).
//!
//! ## Threads
//! The initial pass and the stage seeding own disjoint index ranges and store
//! plainly. Propagation updates parents anywhere in the level, so a parent's
//! cell is changed by compare-and-swap on its word: the swap that moves a board
//! from "undecided" to "decided" is the single point where it is decided, so a
//! board is decided once whatever the number of threads. The values found do not
//! depend on the order of work: the output is identical for any thread count.

mod batch;
mod init;
mod mail;
mod partition;
mod stage;
mod state;
mod store;

pub use partition::Partitions;
pub use state::BLOCK_WORDS;
pub(crate) use store::dir_bytes;

use std::path::PathBuf;
use std::time::Instant;

use awari_dbformat::huge::{Generations, HugeArray, Values};
use awari_dbformat::{with_pits, Index, Rules};
use indicatif::ProgressBar;

use crate::cells::{CellLayout, Layout, Narrow, Wide};
use crate::error::SolveError;
use crate::lower::LowerLevels;
use awari_dbformat::ranks::{gather_figures, OneProcess, RankFigures, Ranks};
use batch::{Mailbox, Outbox};
use mail::{Delivery, Mail};
use stage::{Decided, Frontier};
use state::State;
use store::{DiskStore, Manifest};

/// The share of a level's boards the frontier lists may hold per generation
/// when memory allows (see [`default_list_entries`]): a pool of
/// [`LIVE_GENERATIONS`] boards in this many, 0.125 bytes per board, so that
/// the narrow state and the lists stay within 1.5 bytes per board. (Lists
/// of one board in 64, 128 and 256 and none at all are compared in
/// docs/performance.md.)
pub const LIST_SHARE: u64 = 128;
/// The bytes of one frontier list entry (a board and whether it is lost).
pub const LIST_ENTRY_BYTES: u64 = std::mem::size_of::<u64>() as u64;
/// The generations whose frontier lists are alive at once: the one being
/// visited and the one being made. Their pool holds this many times the
/// entries of one generation.
pub const LIVE_GENERATIONS: u64 = 2;

/// The bytes of solver state per board of a level of `seeds` seeds that
/// cannot be done without: the cells (1.333 up to 31 seeds, 1.6 above).
pub fn fixed_state_bytes_per_board(seeds: u32) -> f64 {
    CellLayout::for_seeds(seeds).bytes_per_board()
}

/// The frontier list entries per generation by default in a level of
/// `boards` boards: one board in [`LIST_SHARE`] (the pool holds
/// [`LIVE_GENERATIONS`] times as many).
pub fn default_list_entries(boards: u64) -> u64 {
    boards / LIST_SHARE
}

/// The bytes of solver state per board for level `seeds` of `boards` boards
/// whose lists may hold `list_entries` per generation: the fixed state plus
/// the pool of lists of two generations (the one being visited and the
/// next), full.
pub fn state_bytes_per_board(seeds: u32, boards: u64, list_entries: u64) -> f64 {
    fixed_state_bytes_per_board(seeds)
        + (LIVE_GENERATIONS * list_entries * LIST_ENTRY_BYTES) as f64 / boards.max(1) as f64
}

/// The bytes per board of the recorded generations (a certificate), when asked for.
pub const GENERATION_BYTES_PER_BOARD: f64 = 2.0;

/// What happened at one threshold stage.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Stage {
    /// The threshold k.
    pub k: u32,
    /// Boards found to have value +k.
    pub wins: u64,
    /// Boards found to have value -k.
    pub losses: u64,
    /// Generations of propagation at this stage (the longest chain of decisions).
    pub generations: u32,
    /// Seconds of seeding (finding the boards whose captures decide them).
    #[serde(default)]
    pub seeding_seconds: f64,
    /// Seconds of propagation.
    #[serde(default)]
    pub propagation_seconds: f64,
    /// Updates that went from one partition to another (0 with one
    /// partition), 8 bytes each.
    #[serde(default)]
    pub sent_updates: u64,
    /// Of those, the updates that waited in files of the work directory (a
    /// level on disk, past the memory its plan has for them): written once
    /// and read once, 8 bytes each.
    #[serde(default)]
    pub spilled_updates: u64,
}

/// A solved level: one value per stored board, in index order, and how it went.
pub struct SolvedLevel {
    /// What each rank did, by rank (empty in one process).
    pub ranks: Vec<RankFigures>,
    /// The values, one signed byte per board in index order.
    pub values: Values,
    /// One bit per board (bit `i % 64` of word `i / 64` of
    /// [`HugeArray::as_u64`]), set when a capture reaches the board's value:
    /// the level file may store a lower bound.
    pub free: HugeArray,
    /// One entry per stage with any decision, from k = n down.
    pub stages: Vec<Stage>,
    /// Seconds spent in the initial pass (captures and counters).
    pub init_seconds: f64,
    /// When asked for: the generation of its stage in which each board was
    /// decided (0 when seeded, and for value 0), the level's certificate.
    pub generations: Option<Generations>,
    /// The partitions the level was solved in.
    pub partitions: Partitions,
    /// When the level was resumed from a checkpoint in its work directory:
    /// the threshold of the first stage run after it (the level's own seed
    /// count when only the initial pass had been done, 0 when every stage
    /// had been).
    pub resumed_from_stage: Option<u32>,
    /// The boards whose initial pass a stopped run had done and this one
    /// took from its checkpoint (0 when the initial pass ran whole here, or
    /// was done before: see `resumed_from_stage`).
    pub resumed_initial_boards: u64,
}

/// How a level is solved. The values, the free bits and the generations are
/// the same whatever the options; they change the memory and the time.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// The cell layout; `None`: the smallest that holds the level
    /// ([`CellLayout::for_seeds`]). Tests solve small levels in the wide
    /// layout of big ones.
    pub layout: Option<CellLayout>,
    /// Whether to record in which generation each board was decided
    /// ([`SolvedLevel::generations`], [`GENERATION_BYTES_PER_BOARD`] more
    /// while solving).
    pub record_generations: bool,
    /// Frontier list entries per generation over the whole level
    /// ([`LIST_ENTRY_BYTES`] each, in a pool of [`LIVE_GENERATIONS`] times
    /// as many); `None`: [`default_list_entries`]. Fewer cost time, not
    /// correctness: the boards that do not fit are marked and unranked
    /// again, and the values are the same for any number, 0 included.
    pub list_entries: Option<u64>,
    /// The partitions wanted ([`Partitions::new`]; 1: the whole level in one
    /// state, the fastest when it fits).
    pub partitions: u64,
    /// Where the partitions' cells live: `None`, in memory; a directory,
    /// in files there, at most `resident_partitions` of them mapped at a
    /// time, with checkpoints to
    /// resume from (see the docs of the `store` module in the source). The
    /// directory is the level's own: a checkpoint of the same level found
    /// there is resumed, anything else removed; it is removed when the
    /// level is solved, unless `keep_work_dir`.
    pub work_dir: Option<PathBuf>,
    /// With a work directory: keep it when the level is solved, its files
    /// named as the state after the last stage, for the caller to remove
    /// ([`remove_work_dir`]) once the values are safe (the build: once the
    /// level file is written). Solved again meanwhile, the level resumes
    /// there and only assembles its values.
    pub keep_work_dir: bool,
    /// With a work directory: a checkpoint is made after the initial pass,
    /// and at the end of each stage that ends at least this many seconds
    /// after the last checkpoint.
    pub checkpoint_seconds: f64,
    /// With a work directory: a stage's checkpoint also waits this many
    /// times as long as the last checkpoint took (0: not at all). A
    /// checkpoint copies every partition's files (21 GiB at level 36, about
    /// two minutes here), so with 9 the checkpoints take at most about a
    /// tenth of the stages' time, however large the level.
    pub checkpoint_cost_multiple: f64,
    /// With a work directory: the partitions kept mapped at once (at least
    /// one); the one mapped longest ago is unmapped to map another. Each
    /// mapping pages its partition in again, so fewer cost time.
    pub resident_partitions: usize,
    /// With a work directory: the bytes of updates in transit between
    /// partitions held in memory (8 per update); the rest wait in files of
    /// the work directory.
    pub mail_bytes: u64,
    /// The initial pass reads the captures' children in their order, at
    /// most this many lookups held at once (16 bytes each); `None`: as the
    /// boards are generated. Sorted is the way for lower levels in files
    /// larger than the page cache; the cells are the same either way.
    pub sorted_lookups: Option<usize>,
}

impl Default for SolveOptions {
    fn default() -> SolveOptions {
        SolveOptions {
            layout: None,
            record_generations: false,
            list_entries: None,
            partitions: 1,
            work_dir: None,
            keep_work_dir: false,
            checkpoint_seconds: 60.0,
            checkpoint_cost_multiple: 0.0,
            resident_partitions: usize::MAX,
            mail_bytes: u64::MAX,
            sorted_lookups: None,
        }
    }
}

/// Solves the level of `seeds` seeds under `rules`.
///
/// `lower` must hold every level below `seeds - 1` (a capture takes at
/// least two seeds). `progress` is advanced by one per board initialised and
/// one per board decided; its length is not touched.
///
/// # Errors
/// Only with a work directory: a file there that cannot be made, mapped or
/// written, or too little free space ([`SolveError::Disk`], before any
/// work). The last checkpoint is then left to resume from.
///
/// # Panics
/// When `options.layout` cannot hold the values of level `seeds`, or the
/// system refuses the memory (the build plans its budget first).
pub fn solve_level(
    rules: Rules,
    seeds: u32,
    lower: &LowerLevels,
    progress: &ProgressBar,
    options: &SolveOptions,
) -> Result<SolvedLevel, SolveError> {
    solve_level_on(rules, seeds, lower, progress, options, &OneProcess)
}

/// [`solve_level`] by the ranks `ranks` together (see [`awari_dbformat::ranks`]):
/// each works its own partitions (at least one partition per rank), and
/// every rank returns the whole level.
///
/// # Errors
/// As [`solve_level`]; [`SolveError::Invalid`] for a level on disk with
/// more than one rank (not built yet).
pub fn solve_level_on(
    rules: Rules,
    seeds: u32,
    lower: &LowerLevels,
    progress: &ProgressBar,
    options: &SolveOptions,
    ranks: &dyn Ranks,
) -> Result<SolvedLevel, SolveError> {
    if ranks.size() > 1 && options.work_dir.is_some() {
        return Err(SolveError::Invalid(format!(
            "level {seeds} does not fit in the memory budget, and levels on disk are not \
             built for more than one rank yet: give each rank more --memory"
        )));
    }
    let layout = layout_for(seeds, options);
    assert!(
        layout.holds(seeds),
        "{layout:?} cells cannot hold level {seeds}"
    );
    let job = Job {
        rules,
        seeds,
        lower,
        progress,
        options,
        layout,
        ranks,
        init_only: false,
    };
    Ok(run(job)?.expect("a level solved in full"))
}

/// Runs the initial pass of level `seeds` on disk (`options.work_dir`
/// must be set) and leaves its partitions' files in the work directory as
/// the state to resume from, without copying them; the lower levels are
/// not read again when [`solve_level`] goes on from there with the same
/// options (and may be given back meanwhile: the build does so when its
/// disk is short). Nothing is done when the work directory holds a
/// checkpoint of the level already; a pass a stopped run checkpointed
/// part of goes on from there. Returns the boards taken from that
/// checkpoint (0 when the pass ran whole).
///
/// # Errors
/// As [`solve_level`]; [`SolveError::Invalid`] without a work directory.
pub fn initialise_on_disk(
    rules: Rules,
    seeds: u32,
    lower: &LowerLevels,
    progress: &ProgressBar,
    options: &SolveOptions,
) -> Result<u64, SolveError> {
    let Some(dir) = &options.work_dir else {
        return Err(SolveError::Invalid(format!(
            "level {seeds}: an initial pass on disk needs a work directory"
        )));
    };
    let layout = layout_for(seeds, options);
    let boards = Index::for_pits(rules.pits()).level_size(seeds);
    let wanted = identity(
        rules,
        seeds,
        options,
        layout,
        Partitions::new(boards, options.partitions),
    );
    let resumed = DiskStore::initialised(dir, &wanted);
    let job = Job {
        rules,
        seeds,
        lower,
        progress,
        options,
        layout,
        ranks: &OneProcess,
        init_only: true,
    };
    run(job).map(|_| resumed)
}

/// Removes `options.work_dir`, if set and present (the level it holds is
/// solved and its values are safe: see [`SolveOptions::keep_work_dir`]).
///
/// # Errors
/// A directory that cannot be removed.
pub fn remove_work_dir(options: &SolveOptions) -> Result<(), SolveError> {
    match &options.work_dir {
        Some(dir) if dir.exists() => std::fs::remove_dir_all(dir).map_err(crate::mapped::io(dir)),
        _ => Ok(()),
    }
}

/// Whether `options.work_dir` holds a checkpoint of level `seeds` as
/// `options` would solve it in one process (its initial pass done): solving
/// it then reads no lower level.
pub fn has_checkpoint(rules: Rules, seeds: u32, options: &SolveOptions) -> bool {
    let Some(dir) = &options.work_dir else {
        return false;
    };
    let layout = layout_for(seeds, options);
    let boards = Index::for_pits(rules.pits()).level_size(seeds);
    let partitions = Partitions::new(boards, options.partitions);
    let wanted = identity(rules, seeds, options, layout, partitions);
    DiskStore::resumable(dir, &wanted)
}

/// What a work directory must hold for level `seeds` cut in `partitions`
/// with `options` to resume from it: its manifest before any stage.
fn identity(
    rules: Rules,
    seeds: u32,
    options: &SolveOptions,
    layout: CellLayout,
    partitions: Partitions,
) -> Manifest {
    Manifest {
        version: store::VERSION,
        rules: rules.set().name().to_string(),
        pits: rules.pits(),
        seeds,
        boards: partitions.boards(),
        partition_size: partitions.size(),
        layout: format!("{layout:?}"),
        record_generations: options.record_generations,
        next_k: seeds,
        stages: Vec::new(),
        init_seconds: 0.0,
        checkpoint: String::new(),
        initialised: Vec::new(),
    }
}

/// The cell layout `options` asks for level `seeds`: its own, else the
/// smallest that holds the level.
fn layout_for(seeds: u32, options: &SolveOptions) -> CellLayout {
    options
        .layout
        .unwrap_or_else(|| CellLayout::for_seeds(seeds))
}

/// Runs `job` in its cell layout. The initial pass and the propagation are
/// compiled for one cell layout and one board size at a time (see
/// `awari_dbformat::Parents`).
fn run(job: Job) -> Result<Option<SolvedLevel>, SolveError> {
    match job.layout {
        CellLayout::Narrow => with_pits!(job.rules.pits(), P => solve::<Narrow, P>(job)),
        CellLayout::Wide => with_pits!(job.rules.pits(), P => solve::<Wide, P>(job)),
    }
}

/// What [`solve`] is asked: the arguments of [`solve_level`].
#[derive(Clone, Copy)]
struct Job<'a> {
    rules: Rules,
    seeds: u32,
    lower: &'a LowerLevels,
    progress: &'a ProgressBar,
    options: &'a SolveOptions,
    layout: CellLayout,
    ranks: &'a dyn Ranks,
    /// Stop after the initial pass ([`initialise_on_disk`]).
    init_only: bool,
}

/// Updates an outbox holds before it posts them to the partitions' boxes.
const OUTBOX_UPDATES: usize = 1 << 20;

/// Where the partitions' cells are between visits.
enum Store {
    /// In memory, always at hand.
    Memory,
    /// In files, mapped while their partition is worked.
    Disk(Box<DiskStore>),
}

impl Store {
    /// Runs `f` on partition `p` of `states`, its cells (and generations)
    /// at hand.
    fn with<L: Layout, R>(
        &mut self,
        p: usize,
        states: &mut [State<L>],
        f: impl FnOnce(&State<L>) -> R,
    ) -> Result<R, SolveError> {
        if let Store::Disk(disk) = self {
            disk.make_resident(p, states)?;
        }
        Ok(f(&states[p]))
    }
}

/// Solves `job` in cells of layout `L`, for boards of `P` pits per side
/// (the rules' own); `None` when only the initial pass was asked.
fn solve<L: Layout, const P: usize>(job: Job) -> Result<Option<SolvedLevel>, SolveError> {
    let Job {
        rules,
        seeds,
        lower,
        progress,
        options,
        layout,
        ranks,
        init_only,
    } = job;
    let index = Index::for_pits(rules.pits());
    let boards = index.level_size(seeds);
    let partitions = Partitions::new(boards, options.partitions.max(ranks.size() as u64));
    let count = partitions.count();
    // This rank's partitions (all of them in one process).
    let owned = |p: usize| ranks.owns(p, count);
    let traffic_before = ranks.figures();
    let mut updates_to_ranks = 0;
    let list_entries = options
        .list_entries
        .unwrap_or_else(|| default_list_entries(boards));
    let lists_each = list_entries.div_ceil(count as u64);
    let identity = identity(rules, seeds, options, layout, partitions);
    let (mut store, resumed) = match &options.work_dir {
        None => (Store::Memory, None),
        Some(dir) => {
            let word_bytes = |p: usize| {
                let range = partitions.range(p);
                State::<L>::word_bytes(range.end - range.start)
            };
            let (disk, resumed) = DiskStore::open(
                dir,
                identity.clone(),
                partitions,
                word_bytes,
                options.resident_partitions,
                // (After the initial pass alone, the checkpoint's copy is
                // made when the level goes on: see `initialise_on_disk`.)
                if init_only { 1 } else { store::COPIES },
            )?;
            (Store::Disk(Box::new(disk)), resumed)
        }
    };
    let mut states: Vec<State<L>> = (0..count)
        .map(|p| match store {
            // Another rank's partition: its range only.
            _ if !owned(p) => State::unloaded(partitions.range(p), 0, rules.pits()),
            Store::Memory => State::new(
                partitions.range(p),
                lists_each,
                rules.pits(),
                options.record_generations,
            ),
            Store::Disk(_) => State::unloaded(partitions.range(p), lists_each, rules.pits()),
        })
        .collect();

    // The initial pass, or the checkpoint that follows it.
    let mut resumed_initial_boards = 0;
    // How long the last checkpoint took (see `checkpoint_cost_multiple`).
    let mut last_checkpoint_seconds = 0.0;
    let (first_k, mut stages, init_seconds) = match (&resumed, &mut store) {
        (Some(manifest), Store::Disk(disk)) if !manifest.is_initial() => {
            restore_summaries(disk, &mut states)?;
            let decided: u64 = manifest.stages.iter().map(|s| s.wins + s.losses).sum();
            progress.inc(boards + decided);
            let first_k = manifest.next_k;
            (first_k, manifest.stages.clone(), manifest.init_seconds)
        }
        _ => {
            // From where a stopped run left the pass, if it did.
            let (mut initialised, seconds_before) = match (&resumed, &mut store) {
                (Some(manifest), Store::Disk(disk)) => {
                    restore_summaries(disk, &mut states)?;
                    (manifest.initialised.clone(), manifest.init_seconds)
                }
                _ => (vec![0; count], 0.0),
            };
            if initialised.len() != count {
                return Err(SolveError::Invalid(format!(
                    "level {seeds}: a checkpoint of the initial pass for {} partitions, not {count}",
                    initialised.len()
                )));
            }
            resumed_initial_boards = initialised.iter().sum();
            progress.inc(resumed_initial_boards);
            let started = Instant::now();
            let mut last_checkpoint = Instant::now();
            let on_disk = matches!(store, Store::Disk(_));
            for p in (0..count).filter(|&p| owned(p)) {
                if let Store::Disk(disk) = &mut store {
                    disk.make_resident(p, &mut states)?;
                }
                let states = &states;
                let from = initialised[p];
                // On disk, the boards done are checkpointed as the pass goes
                // (at most every `checkpoint_seconds`): a level whose pass
                // takes hours does not start it over when stopped.
                let mut after_window = |done: u64| -> Result<(), SolveError> {
                    initialised[p] = done;
                    let Store::Disk(disk) = &mut store else {
                        return Ok(());
                    };
                    if last_checkpoint.elapsed().as_secs_f64() < options.checkpoint_seconds
                        || initialised.iter().sum::<u64>() == boards
                    {
                        return Ok(());
                    }
                    let summaries: Vec<u64> =
                        states.iter().flat_map(|s| s.summary_values()).collect();
                    let manifest = Manifest {
                        init_seconds: seconds_before + started.elapsed().as_secs_f64(),
                        initialised: initialised.clone(),
                        ..identity.clone()
                    };
                    disk.name_initialised(&summaries, manifest)?;
                    last_checkpoint = Instant::now();
                    Ok(())
                };
                let pass = init::Pass {
                    rules,
                    seeds,
                    index,
                    lower,
                    state: &states[p],
                    progress,
                };
                init::initialise::<L, P>(
                    &pass,
                    options.sorted_lookups,
                    on_disk,
                    from,
                    &mut after_window,
                )?;
            }
            let init_seconds = seconds_before + started.elapsed().as_secs_f64();
            let manifest = Manifest {
                init_seconds,
                ..identity.clone()
            };
            if init_only {
                // The files named, not copied: the copy is made when the
                // level goes on, once the lower levels are given back.
                if let Store::Disk(disk) = &mut store {
                    let summaries: Vec<u64> =
                        states.iter().flat_map(|s| s.summary_values()).collect();
                    disk.name_files(&summaries, manifest)?;
                }
                return Ok(None);
            }
            let checkpoint_started = Instant::now();
            checkpoint(&mut store, &states, manifest)?;
            last_checkpoint_seconds = checkpoint_started.elapsed().as_secs_f64();
            (seeds, Vec::new(), init_seconds)
        }
    };
    if init_only {
        return Ok(None);
    }
    // Resumed from the files themselves: their copy, before they change.
    if let Store::Disk(disk) = &mut store {
        disk.ensure_copy()?;
    }
    let mut last_checkpoint = Instant::now();
    let io_start = crate::memory::disk_io();

    let mails = match &store {
        Store::Disk(disk) => {
            // Each set of boxes holds at most half the mail the budget has room for.
            let cap = (options.mail_bytes / 2 / 8).max(1) as usize;
            let dir = disk.dir();
            [
                Mail::spilling(partitions, cap, dir, "a"),
                Mail::spilling(partitions, cap, dir, "b"),
            ]
        }
        Store::Memory => [Mail::in_memory(partitions), Mail::in_memory(partitions)],
    };
    // (An outbox's updates are memory of the mail's share too.)
    let outbox_updates = match &store {
        Store::Disk(_) => (options.mail_bytes / 8 / 8).clamp(1024, OUTBOX_UPDATES as u64) as usize,
        Store::Memory => OUTBOX_UPDATES,
    };
    let mut frontiers: Vec<Frontier> = (0..count).map(|_| Frontier::default()).collect();
    for k in (1..=first_k as i8).rev() {
        progress.set_message(format!("stage {k}"));
        let started = Instant::now();
        let mut decided = Decided::default();
        for (p, frontier) in frontiers.iter_mut().enumerate() {
            frontier.new_stage();
            if owned(p) {
                decided += store.with(p, &mut states, |state| {
                    stage::seed(state, k, seeds, progress)
                })?;
            }
        }
        let seeding_seconds = started.elapsed().as_secs_f64();
        // Generation by generation: each partition with a frontier visits
        // it, sending updates to the others' boxes; the updates of a
        // generation are applied, as decisions of that generation, before
        // their partition's visit in the next one. A partition's visit reads
        // and writes its own state only, so each partition can take its
        // updates just before its own next visit (one mapping for both on
        // disk), with two sets of boxes: the ones being taken (sent in the
        // last generation) and the ones being filled.
        let mut generations = 0;
        let mut sent_updates = 0;
        let spilled_before = mails[0].spilled() + mails[1].spilled();
        let mut pending = 0; // updates in the boxes being taken
                             // Whether some rank's partitions have a frontier (a sum over the
                             // ranks, so that every rank sees the same answer, as for `pending`).
        let busy_here = (0..count)
            .filter(|&p| owned(p))
            .any(|p| frontiers[p].has_work(&states[p]));
        let mut busy = ranks.sum(u64::from(busy_here)) > 0;
        loop {
            if pending == 0 && !busy {
                break;
            }
            let round = generations + 1;
            let (taken, filled) = if round % 2 == 1 {
                (&mails[0], &mails[1])
            } else {
                (&mails[1], &mails[0])
            };
            let mut visited = false;
            let mut sent = 0;
            // Alternately up and down, so that the partition worked last
            // (still mapped, on disk) is the next one worked.
            let order: Vec<usize> = if round % 2 == 1 {
                (0..count).collect()
            } else {
                (0..count).rev().collect()
            };
            for p in order.into_iter().filter(|&p| owned(p)) {
                let delivery = if pending > 0 {
                    taken.take(p)
                } else {
                    Delivery::default()
                };
                if !delivery.is_empty() {
                    let frontier = &frontiers[p];
                    decided += store.with(p, &mut states, |state| {
                        let step = stage::Step {
                            rules,
                            seeds,
                            index,
                            state,
                            k,
                            generation: generations,
                            progress,
                        };
                        let mut decided = Decided::default();
                        delivery
                            .each_piece(|updates| {
                                decided += stage::take_updates::<L, P>(&step, frontier, updates)
                            })
                            .map(|()| decided)
                    })??;
                }
                if !frontiers[p].has_work(&states[p]) {
                    continue;
                }
                visited = true;
                if let Store::Disk(_) = store {
                    progress.set_message(disk_message(k, round, p, count, io_start));
                }
                let outbox = Outbox::new(filled, outbox_updates);
                let frontier = &mut frontiers[p];
                decided += store.with(p, &mut states, |state| {
                    let step = stage::Step {
                        rules,
                        seeds,
                        index,
                        state,
                        k,
                        generation: round,
                        progress,
                    };
                    stage::visit::<L, P>(&step, frontier, &outbox)
                })?;
                outbox.flush()?;
                sent += outbox.sent();
            }
            if ranks.size() > 1 {
                // The updates for other ranks' partitions go to them, into
                // the boxes they take in the next round.
                updates_to_ranks += exchange_mail(ranks, filled, count)?;
            }
            // What the ranks did this round, in one sum (one collective
            // operation a generation besides the exchange).
            let busy_here = (0..count)
                .filter(|&p| owned(p))
                .any(|p| frontiers[p].has_work(&states[p]));
            let totals = ranks.sums(&[u64::from(visited), sent, u64::from(busy_here)]);
            let (visited, sent, busy_now) = (totals[0], totals[1], totals[2]);
            if visited > 0 {
                generations = round;
            }
            sent_updates += sent;
            pending = sent;
            busy = busy_now > 0;
        }
        let totals = ranks.sums(&[decided.wins, decided.losses]);
        let decided = Decided {
            wins: totals[0],
            losses: totals[1],
        };
        if decided.total() > 0 {
            stages.push(Stage {
                k: k as u32,
                wins: decided.wins,
                losses: decided.losses,
                generations,
                seeding_seconds,
                propagation_seconds: started.elapsed().as_secs_f64() - seeding_seconds,
                sent_updates,
                spilled_updates: mails[0].spilled() + mails[1].spilled() - spilled_before,
            });
        }
        let spacing = options
            .checkpoint_seconds
            .max(options.checkpoint_cost_multiple * last_checkpoint_seconds);
        if k > 1 && last_checkpoint.elapsed().as_secs_f64() >= spacing {
            let manifest = Manifest {
                next_k: k as u32 - 1,
                stages: stages.clone(),
                init_seconds,
                ..identity.clone()
            };
            progress.set_message(format!("checkpoint after stage {k}"));
            let checkpoint_started = Instant::now();
            checkpoint(&mut store, &states, manifest)?;
            last_checkpoint_seconds = checkpoint_started.elapsed().as_secs_f64();
            last_checkpoint = Instant::now();
        }
    }
    // Every stage done: the partitions' files become the state to resume
    // from, and the checkpoint's copy gives its room to the level's
    // assembled values.
    if let Store::Disk(disk) = &mut store {
        let summaries: Vec<u64> = states.iter().flat_map(|s| s.summary_values()).collect();
        let manifest = Manifest {
            next_k: 0,
            stages: stages.clone(),
            init_seconds,
            ..identity.clone()
        };
        disk.finish(&summaries, manifest)?;
    }
    progress.set_message("done");
    let (values, free, generations) = match store {
        Store::Memory if ranks.size() > 1 => {
            // Each rank's own partitions in arrays of zeros, then the whole
            // level on every rank.
            let (mut values, mut free, mut generations) = assemble(
                states,
                seeds,
                boards,
                owned,
                |_, _| Ok(()),
                |_, bytes| Ok(HugeArray::zeroed(bytes)),
            )?;
            ranks.or_bytes(values.bytes_mut());
            ranks.or_bytes(&mut free);
            if options.record_generations {
                // (Made here by a rank that owns no partition: every rank
                // must take part.)
                let g = generations.get_or_insert_with(|| Generations::zeroed(boards));
                ranks.or_bytes(g.bytes_mut());
            }
            Ok((values, free, generations))
        }
        Store::Memory => assemble(
            states,
            seeds,
            boards,
            |_| true,
            |_, _| Ok(()),
            |_, bytes| Ok(HugeArray::zeroed(bytes)),
        ),
        Store::Disk(disk) => {
            // The level's arrays in files too, so that they take the page
            // cache, not memory the budget has no room for.
            let assembled = assemble(
                states,
                seeds,
                boards,
                |_| true,
                |p, state| disk.load(p, state),
                |name, bytes| disk.array(name, bytes),
            )?;
            if !options.keep_work_dir {
                disk.remove()?;
            }
            Ok(assembled)
        }
    }?;
    let ranks_figures = if ranks.size() > 1 {
        let boards = (0..count)
            .filter(|&p| owned(p))
            .map(|p| partitions.range(p))
            .map(|r| r.end - r.start)
            .sum();
        let mine = RankFigures {
            boards,
            updates_sent: updates_to_ranks,
            ..ranks.figures().since(traffic_before)
        };
        gather_figures(ranks, mine)
    } else {
        Vec::new()
    };
    Ok(Some(SolvedLevel {
        values,
        ranks: ranks_figures,
        free,
        stages,
        init_seconds,
        generations,
        partitions,
        resumed_from_stage: resumed.filter(|m| !m.is_initial()).map(|m| m.next_k),
        resumed_initial_boards,
    }))
}

/// Sets the summaries of `states` to those saved with the state `disk`
/// resumes from.
///
/// # Errors
/// A file of summaries that cannot be read, or of the wrong size.
fn restore_summaries<L: Layout>(
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

/// Sends the updates in `mail` for other ranks' partitions (of `count`) to
/// those ranks, and puts the updates they sent into the boxes of this
/// rank's own. Each rank's updates for another come sorted (its boxes are
/// taken sorted, in partition order, and partitions are runs of indices).
/// Returns the number of updates sent.
fn exchange_mail(ranks: &dyn Ranks, mail: &Mail, count: usize) -> Result<u64, SolveError> {
    let mut outgoing = vec![Vec::new(); ranks.size()];
    for p in (0..count).filter(|&p| !ranks.owns(p, count)) {
        outgoing[ranks.owner(p, count)].extend(mail.take(p).into_updates());
    }
    let sent = outgoing.iter().map(|o| o.len() as u64).sum();
    for updates in ranks.exchange(outgoing) {
        if !updates.is_empty() {
            mail.post(updates)?;
        }
    }
    Ok(sent)
}

/// The progress message of a level on disk: where the solve is, and what
/// it has read and written since `io_start`.
fn disk_message(
    k: i8,
    generation: u32,
    p: usize,
    count: usize,
    io_start: Option<(u64, u64)>,
) -> String {
    let io = match (io_start, crate::memory::disk_io()) {
        (Some((r0, w0)), Some((r1, w1))) => format!(
            ", read {} written {}",
            crate::memory::format_size(r1.saturating_sub(r0)),
            crate::memory::format_size(w1.saturating_sub(w0))
        ),
        _ => String::new(),
    };
    format!("stage {k} gen {generation} partition {}/{count}{io}", p + 1)
}

/// Makes a checkpoint of the partitions in a work directory (none with the
/// partitions in memory).
fn checkpoint<L: Layout>(
    store: &mut Store,
    states: &[State<L>],
    manifest: Manifest,
) -> Result<(), SolveError> {
    match store {
        Store::Memory => Ok(()),
        Store::Disk(disk) => {
            let summaries: Vec<u64> = states.iter().flat_map(|s| s.summary_values()).collect();
            disk.checkpoint(&summaries, manifest)
        }
    }
}

/// The values, free bits and generations of the whole level from those of
/// its partitions (in order) that are `ours`, each made at hand by `load`
/// first, into arrays of zeros that `array(name, bytes)` makes; a single
/// partition in memory gives its own arrays.
fn assemble<L: Layout>(
    mut states: Vec<State<L>>,
    seeds: u32,
    boards: u64,
    ours: impl Fn(usize) -> bool,
    load: impl Fn(usize, &mut State<L>) -> Result<(), SolveError>,
    array: impl Fn(&str, usize) -> Result<HugeArray, SolveError>,
) -> Result<(Values, HugeArray, Option<Generations>), SolveError> {
    let in_memory = states
        .iter()
        .all(|s| s.words.len() == State::<L>::word_bytes(s.size));
    if states.len() == 1 && in_memory && ours(0) {
        let mut state = states.pop().expect("one partition");
        let generations = state.generations.take();
        let (values, free) = state.into_values(seeds);
        return Ok((values, free, generations));
    }
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
        let (start, end) = (range.start as usize, range.end as usize);
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
