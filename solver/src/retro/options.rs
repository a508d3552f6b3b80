//! How a level is solved ([`SolveOptions`]), and the memory per board that
//! its state and frontier lists take.

use std::path::PathBuf;

use crate::cells::CellLayout;

/// The share of a level's boards the frontier lists may hold per generation
/// when memory allows (see [`default_list_entries`]): a pool of
/// [`LIVE_GENERATIONS`] boards in this many, 0.125 bytes per board, so that
/// the narrow state and the lists stay within 1.5 bytes per board. (Lists
/// of one board in 64, 128 and 256 and none at all are compared in
/// docs/performance.md.)
pub(crate) const LIST_SHARE: u64 = 128;
/// The bytes of one frontier list entry (a board and whether it is lost).
pub(crate) const LIST_ENTRY_BYTES: u64 = std::mem::size_of::<u64>() as u64;
/// The generations whose frontier lists are alive at once: the one being
/// visited and the one being made. Their pool holds this many times the
/// entries of one generation.
pub(crate) const LIVE_GENERATIONS: u64 = 2;

/// The bytes of solver state per board of a level of `seeds` seeds that
/// cannot be done without: the cells (1.333 up to 31 seeds, 1.6 above).
pub(crate) fn cell_bytes_per_board(seeds: u32) -> f64 {
    CellLayout::for_seeds(seeds).bytes_per_board()
}

/// The frontier list entries per generation by default in a level of
/// `boards` boards: one board in [`LIST_SHARE`] (the pool holds
/// [`LIVE_GENERATIONS`] times as many).
pub(crate) fn default_list_entries(boards: u64) -> u64 {
    boards / LIST_SHARE
}

/// The bytes of solver state per board for level `seeds` of `boards` boards
/// whose lists may hold `list_entries` per generation: the cells plus
/// the pool of lists of two generations (the one being visited and the
/// next), full.
pub(crate) fn state_bytes_per_board(seeds: u32, boards: u64, list_entries: u64) -> f64 {
    cell_bytes_per_board(seeds)
        + (LIVE_GENERATIONS * list_entries * LIST_ENTRY_BYTES) as f64 / boards.max(1) as f64
}

/// [`state_bytes_per_board`] in the split cells: their words (0.667
/// bytes per board; their byte a board of `B` and values apart) and the
/// lists.
pub(crate) fn split_state_bytes_per_board(boards: u64, list_entries: u64) -> f64 {
    CellLayout::Split.bytes_per_board()
        + (LIVE_GENERATIONS * list_entries * LIST_ENTRY_BYTES) as f64 / boards.max(1) as f64
}

/// The bytes per board of the recorded generations (a certificate), when asked for.
pub(crate) const GENERATION_BYTES_PER_BOARD: f64 = 2.0;

/// How a level is solved. The values, the free bits and the generations are
/// the same whatever the options; they change the memory and the time.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// The cell layout; `None`: the smallest that holds the level
    /// ([`CellLayout::for_seeds`]). Tests solve small levels in the wide
    /// layout of big ones.
    pub layout: Option<CellLayout>,
    /// Whether to record in which generation each board was decided
    /// ([`super::SolvedLevel::generations`], `GENERATION_BYTES_PER_BOARD` more
    /// while solving).
    pub record_generations: bool,
    /// Frontier list entries per generation over the whole level
    /// (`LIST_ENTRY_BYTES` each, in a pool of `LIVE_GENERATIONS` times
    /// as many); `None`: `default_list_entries`. Fewer cost time, not
    /// correctness: the boards that do not fit are marked and unranked
    /// again, and the values are the same for any number, 0 included.
    pub list_entries: Option<u64>,
    /// The partitions wanted ([`super::Partitions::new`]; 1: the whole level in one
    /// state, the fastest when it fits).
    pub partitions: u64,
    /// Where the partitions' cells live: `None`, in memory; a directory,
    /// in files there, at most `resident_partitions` of them mapped at a
    /// time, with checkpoints to
    /// resume from (see the docs of the `store` module in the source). The
    /// directory is the level's own: a checkpoint of the same level found
    /// there is resumed, anything else removed; it is removed when the
    /// level is solved, unless `keep_level_dir`. (Not the build's work
    /// directory, which holds a directory for each level on disk.)
    pub level_dir: Option<PathBuf>,
    /// With a level directory: keep it when the level is solved, its files
    /// named as the state after the last stage, for the caller to remove
    /// (`remove_level_dir`) once the values are safe (the build: once the
    /// level file is written). Solved again meanwhile, the level resumes
    /// there and only assembles its values.
    pub keep_level_dir: bool,
    /// With a level directory: a checkpoint is made after the initial pass,
    /// and at the end of each stage that ends at least this many seconds
    /// after the last checkpoint.
    pub checkpoint_seconds: f64,
    /// With a level directory: a stage's checkpoint also waits this many
    /// times as long as the last checkpoint took (0: not at all). A
    /// checkpoint copies every partition's files (21 GiB at level 36, about
    /// two minutes here), so with 9 the checkpoints take at most about a
    /// tenth of the stages' time, however large the level.
    pub checkpoint_cost_multiple: f64,
    /// With a level directory: the partitions kept mapped at once (at least
    /// one); the one mapped longest ago is unmapped to map another. Each
    /// mapping pages its partition in again, so fewer cost time.
    pub resident_partitions: usize,
    /// With a level directory: the bytes of updates in transit between
    /// partitions held in memory (8 per update); the rest wait in files of
    /// the work directory.
    pub mail_bytes: u64,
    /// In memory, under MPI: a directory of this rank's own where the
    /// updates in transit go past `mail_bytes` (most are for other ranks'
    /// partitions, a whole generation's until the exchange); `None`: they
    /// stay in memory. Removed when the stages end.
    pub mail_dir: Option<PathBuf>,
    /// The initial pass reads the captures' children in their order, at
    /// most this many lookups held at once (16 bytes each); `None`: as the
    /// boards are generated. Sorted is the way for lower levels in files
    /// larger than the page cache; the cells are the same either way.
    pub sorted_lookups: Option<usize>,
    /// With `sorted_lookups`, in one process: a file where the initial pass
    /// also values the captures of the level's unstored boards (every
    /// opponent pit holds a seed), in its windows, for the statistics (a
    /// byte a board, written under this name with `.partial` appended and
    /// renamed when the pass is whole: see the `unstored` module in the
    /// source). `None`: the statistics value them after the level.
    pub unstored_captures: Option<PathBuf>,
    /// In the split cells ([`CellLayout::Split`]): a directory for the
    /// files of their cold bytes (a byte a board, read and written in
    /// order; the files are removed with the state); `None`: in memory.
    pub cold_dir: Option<PathBuf>,
    /// With a `cold_dir`: the split cells' words too in a file there
    /// during the initial pass (copied to memory after it), so that its
    /// sorted lookups have the memory; `false`: in memory throughout.
    pub words_in_file_at_init: bool,
    /// Under MPI, the partitions hold a multiple of this many boards (a
    /// multiple of 64): the level file's blocks, so that each rank's share
    /// of the level is whole blocks, which it encodes itself
    /// ([`awari_dbformat::file::shared`]).
    pub share_align: u64,
}

impl Default for SolveOptions {
    fn default() -> SolveOptions {
        SolveOptions {
            layout: None,
            record_generations: false,
            list_entries: None,
            partitions: 1,
            level_dir: None,
            keep_level_dir: false,
            checkpoint_seconds: 60.0,
            checkpoint_cost_multiple: 0.0,
            resident_partitions: usize::MAX,
            mail_bytes: u64::MAX,
            mail_dir: None,
            sorted_lookups: None,
            unstored_captures: None,
            cold_dir: None,
            words_in_file_at_init: false,
            share_align: awari_dbformat::cluster::SHARE_ALIGN,
        }
    }
}
