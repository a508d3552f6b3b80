//! The memory planning of `verify`: whether the levels it reads fit in
//! memory, or go into files of a work directory, mapped.

use std::path::PathBuf;

use awari_dbformat::capture_reaches;
use awari_dbformat::file::{self, LevelId, LevelReader};
use awari_dbformat::level::scores::{decode_scores, decode_scores_into};
use awari_dbformat::memory::huge::HugeArray;
use awari_dbformat::memory::resident::{self, ceiling_for, UNSEEN_PAGES_BYTES};
use awari_dbformat::memory::{self, format_size, mapped, PROCESS_BYTES};
use awari_dbformat::{Levels, Values};

/// Where the levels a verification reads are kept, planned before any work.
pub(super) enum Placement {
    /// Decoded in memory.
    Memory,
    /// Decoded into files of scores (one byte per board) in a work
    /// directory, mapped shared; a [`resident::Watch`] gives their pages
    /// back whenever the resident set goes over the ceiling, and the page
    /// cache keeps what the machine can spare. The proof search's progress
    /// is a file there too, and certificates are not read (the search does
    /// without them). The directory is removed at the end.
    Files {
        /// The work directory.
        dir: PathBuf,
        /// The directories made for it, the deepest first: removed at the
        /// end when empty.
        made: Vec<PathBuf>,
    },
}

impl Drop for Placement {
    fn drop(&mut self) {
        if let Placement::Files { dir, made } = self {
            let _ = std::fs::remove_dir_all(dir);
            for made in made {
                let _ = std::fs::remove_dir(made);
            }
        }
    }
}

impl Placement {
    /// Decodes the level of `reader` into its scores, in memory or in its
    /// file: lower bounds are resolved through the captures, whose children
    /// `levels` holds (in files, in passes that fit the resident ceiling).
    pub(super) fn decode(
        &self,
        reader: &LevelReader,
        levels: &Levels,
    ) -> Result<Values, awari_dbformat::Error> {
        match self {
            Placement::Memory => decode_scores(reader, levels, None),
            Placement::Files { dir, .. } => {
                let path = dir.join(format!("level-{}.scores", reader.id().seeds));
                let array = mapped::create(&path, reader.boards() as usize)?;
                // Read at random, by capture and by parent: see
                // `HugeArray::advise_random` for why before the first access.
                array.advise_random();
                let mut values = Values::from_array(array);
                decode_scores_into(reader, levels, &mut values, resident::room(0))?;
                Ok(values)
            }
        }
    }

    /// The proof search's progress array for level `seeds` of `boards`
    /// boards: `None` in memory (the search makes its own).
    pub(super) fn progress(
        &self,
        seeds: u32,
        boards: u64,
    ) -> Result<Option<HugeArray>, awari_dbformat::Error> {
        match self {
            Placement::Memory => Ok(None),
            Placement::Files { dir, .. } => {
                let path = dir.join(format!("progress-{seeds}"));
                let array = mapped::create(&path, boards as usize)?;
                array.advise_random();
                Ok(Some(array))
            }
        }
    }
}

/// Plans where the levels go within `budget`: in memory when
/// `in_memory` bytes ([`memory_needed`]) fit (and `on_disk` is not asked), else in
/// files of `work_dir`, when its file system has room for them and the
/// budget for the largest level file (mapped while it is decoded) beside
/// the rest of the process.
///
/// # Errors
/// What is needed and what there is, when neither fits.
pub(super) fn plan(
    tb: &awari_probe::Tablebase,
    wanted: &[u32],
    top: u32,
    in_memory: u64,
    budget: u64,
    on_disk: bool,
    work_dir: PathBuf,
) -> Result<Placement, String> {
    if !on_disk && in_memory <= budget {
        return Ok(Placement::Memory);
    }
    let index = awari_dbformat::Index::for_pits(tb.rules().pits());
    let read = levels_read(wanted, top);
    let largest_file = read
        .iter()
        .map(|&n| level_file_bytes(tb, n))
        .max()
        .unwrap_or(0);
    // What stays mapped besides the files the watch gives back.
    let in_files = PROCESS_BYTES + largest_file;
    if in_files > ceiling_for(budget) {
        return Err(format!(
            "verifying up to level {top} needs about {} of memory in memory, or {} with the \
             levels in files (the largest level file, mapped while it is decoded, and room \
             for the rest); the budget is {} (--memory)",
            format_size(in_memory),
            format_size((in_files + UNSEEN_PAGES_BYTES) * 16 / 15),
            format_size(budget)
        ));
    }
    let disk: u64 = read.iter().map(|&n| index.level_size(n)).sum::<u64>()
        + wanted
            .iter()
            .map(|&n| index.level_size(n))
            .max()
            .unwrap_or(0);
    if let Some(free) = memory::free_disk(&work_dir) {
        if free < disk {
            return Err(format!(
                "verifying up to level {top} in a budget of {} keeps the levels it reads in \
                 files (one byte per board) and needs about {} free in {}, but {} are free; \
                 free some space, choose another --work-dir, or give more --memory (in \
                 memory it needs about {})",
                format_size(budget),
                format_size(disk),
                work_dir.display(),
                format_size(free),
                format_size(in_memory)
            ));
        }
    }
    let made = work_dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(PathBuf::from)
        .collect();
    std::fs::create_dir_all(&work_dir).map_err(|e| {
        format!(
            "{}: {e} (the work directory for the levels in files; choose another with --work-dir)",
            work_dir.display()
        )
    })?;
    Ok(Placement::Files {
        dir: work_dir,
        made,
    })
}

/// The levels read to verify `wanted` up to `top`: the checked ones and
/// those their captures reach.
fn levels_read(wanted: &[u32], top: u32) -> Vec<u32> {
    (0..=top)
        .filter(|&n| wanted.contains(&n) || capture_reaches(top, n))
        .collect()
}

/// The size of level `n`'s file, 0 when it cannot be read.
fn level_file_bytes(tb: &awari_probe::Tablebase, n: u32) -> u64 {
    let path = file::level_path(tb.dir(), LevelId::new(tb.rules(), n));
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The memory verifying `wanted` (up to `top`) takes: one byte per board of
/// every level read (the checked ones and those their captures reach) and
/// its file (mapped while it is decoded), a progress byte per board of the
/// largest checked level, and two bytes per board of its certificate when
/// there is one. (Level 22 over levels 0..=21: planned 736 MiB, 688 MiB
/// measured.)
pub(super) fn memory_needed(tb: &awari_probe::Tablebase, wanted: &[u32], top: u32) -> u64 {
    let index = awari_dbformat::Index::for_pits(tb.rules().pits());
    let read: u64 = levels_read(wanted, top)
        .into_iter()
        .map(|n| index.level_size(n) + level_file_bytes(tb, n))
        .sum();
    let largest = wanted
        .iter()
        .map(|&n| index.level_size(n))
        .max()
        .unwrap_or(0);
    let certified = wanted
        .iter()
        .any(|&n| file::certificate_path(tb.dir(), LevelId::new(tb.rules(), n)).exists());
    read + largest + if certified { 2 * largest } else { 0 } + PROCESS_BYTES
}
