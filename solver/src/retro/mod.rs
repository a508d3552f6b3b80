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
//! - its value: `B(p)` (or the layout's [`Packing::NO_EXIT`](crate::cells::Packing::NO_EXIT)) until p is
//!   decided, then p's value;
//! - its nibble: the counter `0..=8` while undecided, `DONE` once decided and
//!   visited, or one of two frontier marks (`MARK_A`, `MARK_B`) while
//!   decided but not yet visited. Keeping the frontier in the nibble costs no
//!   memory; a small bitmap of dirty blocks (one bit per `BLOCK_WORDS` words)
//!   keeps the scan for marks short.
//!
//! Value and nibble share a word, so a board is decided by one
//! compare-and-swap that sets both, and telling a parent touches one cache line.
//!
//! In the split cells ([`Split`](crate::cells::Split), 0.667 bytes per board)
//! the word keeps one bit of value: lost, or (undecided) `B(p) <= -k`.
//! `B(p)` and the values found lie in a byte per board beside (`cold`), which
//! the initial pass writes and each stage's seeding reads in order, writing
//! the values of the boards the stage before decided (`DONE`, then
//! `WRITTEN`) with their free bits. Propagation is the same code in either.
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
//! visited and the one being made share room for two boards in `LIST_SHARE`
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
//! batches to its partition's box and applied by its partition between two
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
//!
//! ## Where things are
//! - `solve`: one level, phase by phase (set up, initial pass, stages,
//!   assembly); `options`: [`SolveOptions`] and the memory per board.
//! - `init`: the initial pass over one partition; `owners`: its captures
//!   asked of the ranks that hold their lower levels' boards, under MPI;
//!   `checkpoint`: resuming a level and the checkpoints it makes.
//! - `stage_loop`: the stages and their generations over the partitions;
//!   `stage`: one partition's steps (seed, visit, take updates); `batch`:
//!   the parents told by a visit; `mail`: the updates between partitions;
//!   `exchange`: the same between the ranks of an MPI job.
//! - `state`: a partition's cells, dirty maps and summaries; `cold`: the
//!   split cells' bytes of `B` and values, in memory or in a file; `partition`:
//!   how a level is cut; `store`: where the cells live (memory, or the
//!   files of the level's directory); `assemble`: the level's values from
//!   its partitions'.

mod assemble;
mod batch;
mod checkpoint;
mod cold;
mod decode_share;
mod exchange;
mod init;
mod mail;
mod options;
mod owners;
mod partition;
mod solve;
mod stage;
mod stage_loop;
mod state;
mod store;
mod unstored;

pub(crate) use decode_share::decode_share;
pub(crate) use init::child_key;
pub use options::SolveOptions;
pub(crate) use options::{
    cell_bytes_per_board, default_list_entries, split_state_bytes_per_board, state_bytes_per_board,
    GENERATION_BYTES_PER_BOARD, LIST_ENTRY_BYTES, LIVE_GENERATIONS,
};
pub(crate) use owners::{children_scores, more_to_ask};
pub use partition::Partitions;
pub(crate) use store::{clear_without_checkpoint, dir_bytes};
pub(crate) use unstored::UnstoredBoards;
pub use unstored::{
    read_unstored_captures, read_unstored_range, remove_unstored_captures, NO_CAPTURE,
};

use awari_dbformat::file::LevelId;
use awari_dbformat::level::{Generations, Values};
use awari_dbformat::memory::huge::HugeArray;
use awari_dbformat::Levels;
use awari_dbformat::{Index, Rules};
use indicatif::ProgressBar;

use crate::cells::CellLayout;
use crate::error::SolveError;
use awari_dbformat::cluster::{OneProcess, RankFigures, Ranks};
use solve::{run, Job};
use store::{DiskStore, Manifest};

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
    /// The values, one signed byte per board in index order (from board
    /// `first`).
    pub values: Values,
    /// The board of the first of `values`, `free` and `generations`: 0, but
    /// under MPI, where each rank holds its share of the level only (see
    /// [`Partitions::shares`]).
    pub first: u64,
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
    lower: &Levels,
    progress: &ProgressBar,
    options: &SolveOptions,
) -> Result<SolvedLevel, SolveError> {
    solve_level_on(rules, seeds, lower, progress, options, &OneProcess)
}

/// [`solve_level`] by the ranks `ranks` together (see [`awari_dbformat::cluster`]):
/// each works its own partitions (at least one partition per rank), in
/// memory or on disk in its own `options.level_dir`, and returns its share
/// of the level ([`SolvedLevel::first`] on).
///
/// # Errors
/// As [`solve_level`].
pub(crate) fn solve_level_on(
    rules: Rules,
    seeds: u32,
    lower: &Levels,
    progress: &ProgressBar,
    options: &SolveOptions,
    ranks: &dyn Ranks,
) -> Result<SolvedLevel, SolveError> {
    // (The lower levels are shared out among the ranks: the captures are
    // asked of their owners, which takes sorted windows.)
    assert!(
        ranks.size() == 1 || options.sorted_lookups.is_some(),
        "several ranks look their captures up in sorted windows"
    );
    let job = Job::new(rules, seeds, lower, progress, options);
    assert!(
        job.layout.holds(seeds),
        "{:?} cells cannot hold level {seeds}",
        job.layout
    );
    Ok(run(Job { ranks, ..job })?.expect("a level solved in full"))
}

/// Runs the initial pass of level `seeds` on disk (`options.level_dir`
/// must be set) and leaves its partitions' files in the level directory as
/// the state to resume from, without copying them; the lower levels are
/// not read again when [`solve_level`] goes on from there with the same
/// options (and may be given back meanwhile: the build does so when its
/// disk is short). Nothing is done when the level directory holds a
/// checkpoint of the level already; a pass a stopped run checkpointed
/// part of goes on from there. Returns the boards taken from that
/// checkpoint (0 when the pass ran whole).
///
/// # Errors
/// As [`solve_level`]; [`SolveError::Invalid`] without a level directory.
pub(crate) fn initialise_on_disk(
    rules: Rules,
    seeds: u32,
    lower: &Levels,
    progress: &ProgressBar,
    options: &SolveOptions,
) -> Result<u64, SolveError> {
    let Some(dir) = &options.level_dir else {
        return Err(SolveError::Invalid(format!(
            "level {seeds}: an initial pass on disk needs a work directory"
        )));
    };
    let resumed = DiskStore::initialised(dir, &one_process_identity(rules, seeds, options));
    let job = Job::new(rules, seeds, lower, progress, options);
    run(Job {
        init_only: true,
        ..job
    })
    .map(|_| resumed)
}

/// Removes `options.level_dir`, if set and present (the level it holds is
/// solved and its values are safe: see [`SolveOptions::keep_level_dir`]).
///
/// # Errors
/// A directory that cannot be removed.
pub(crate) fn remove_level_dir(options: &SolveOptions) -> Result<(), SolveError> {
    match &options.level_dir {
        Some(dir) if dir.exists() => {
            std::fs::remove_dir_all(dir).map_err(awari_dbformat::Error::io(dir))?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Whether `options.level_dir` holds a checkpoint of level `seeds` as
/// `options` would solve it in one process (its initial pass done): solving
/// it then reads no lower level.
pub(crate) fn has_checkpoint(rules: Rules, seeds: u32, options: &SolveOptions) -> bool {
    let Some(dir) = &options.level_dir else {
        return false;
    };
    DiskStore::resumable(dir, &one_process_identity(rules, seeds, options))
}

/// What a level directory must hold for level `seeds` as `options` would
/// solve it in one process to resume from it.
fn one_process_identity(rules: Rules, seeds: u32, options: &SolveOptions) -> Manifest {
    let layout = layout_for(seeds, options);
    let boards = Index::for_pits(rules.pits()).level_size(seeds);
    let partitions = Partitions::new(boards, options.partitions);
    identity(LevelId::new(rules, seeds), options, layout, partitions)
}

/// What a level directory must hold for level `id` cut in `partitions`
/// with `options` to resume from it: its manifest before any stage.
fn identity(
    id: LevelId,
    options: &SolveOptions,
    layout: CellLayout,
    partitions: Partitions,
) -> Manifest {
    let LevelId { rules, seeds } = id;
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
