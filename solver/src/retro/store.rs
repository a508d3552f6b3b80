//! Where the partitions' cells live between visits: in memory, or in files
//! of a work directory, at most as many mapped at once as the budget allows
//! (the one mapped longest ago is unmapped first; the page cache keeps
//! whatever else memory allows), with checkpoints at stage boundaries that
//! a level resumes from.
//!
//! ## The work directory of a level
//! - `cells-P` (and `generations-P` with a certificate): partition P's words
//!   of cells (and its recorded generations), as in memory. They are
//!   allocated in full when made, so that a write through the mapping never
//!   meets a full disk (which would kill the process, not return an error).
//! - `summaries`: the partitions' summaries (little-endian `u64`s, partition
//!   after partition) when those files are themselves the state to resume
//!   from.
//! - `checkpoint/`: a copy of those files and summaries at the end of a
//!   stage, the state to resume from while the next stages change the
//!   files.
//! - `manifest.json`: what the level is ([`Manifest`]: rules, seeds,
//!   partitions, layout), the stage to run next, the stages done, and where
//!   the state to resume from is (`live`: the files themselves;
//!   `checkpoint`: the copy). It is written to a temporary name and renamed.
//!
//! ## Two copies, never less than one whole
//! A checkpoint first syncs the files and names them in the manifest
//! (`live`): nothing changes them until the copy is made, so the old copy
//! may be written over. Then it copies them into `checkpoint/`, syncs the
//! copy and names it (`checkpoint`); only then does the next stage change
//! the files. A process killed at any point, or stopped by a full disk,
//! thus always leaves one complete state named in the manifest, and the
//! level takes two copies of its cells on disk, not three. When the last
//! stage is done the files are named once more and the copy is removed, so
//! that its room serves the level's assembled values.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use awari_dbformat::level::Generations;
use awari_dbformat::memory::huge::HugeArray;
use awari_dbformat::Error;
use serde::{Deserialize, Serialize};

use super::partition::Partitions;
use super::state::State;
use super::Stage;
use crate::cells::Packing;
use crate::error::SolveError;
use awari_dbformat::memory::mapped::{self, allocate};

/// The version of the work directory's layout (a manifest of another
/// version is not resumed).
pub(super) const VERSION: u32 = 2;

/// What a work directory holds: the level, how it is cut, and how far it is.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Manifest {
    /// [`VERSION`].
    pub version: u32,
    /// The rule set's name and pits per side.
    pub rules: String,
    pub pits: u8,
    /// The level.
    pub seeds: u32,
    pub boards: u64,
    /// Boards per partition ([`Partitions::size`]).
    pub partition_size: u64,
    /// The cell layout's name.
    pub layout: String,
    pub record_generations: bool,
    /// The threshold of the next stage to run (0: every stage is done).
    pub next_k: u32,
    /// The stages done, as [`super::SolvedLevel::stages`].
    pub stages: Vec<Stage>,
    pub init_seconds: f64,
    /// Where the state this manifest describes is: [`LIVE`] or
    /// [`CHECKPOINT`], or [`INITIAL`] while the initial pass is under way
    /// (empty before the first checkpoint).
    pub checkpoint: String,
    /// With `checkpoint` [`INITIAL`]: the boards of each partition, from its
    /// first, whose initial pass is done and in the files (the summaries
    /// beside them hold theirs); the rest are still to be initialised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub initialised: Vec<u64>,
}

impl Manifest {
    /// True when `self`, read from a work directory, describes the same
    /// level, cut and kept the same way, as `wanted`.
    fn same_level(&self, wanted: &Manifest) -> bool {
        (
            self.version,
            &self.rules,
            self.pits,
            self.seeds,
            self.boards,
            self.partition_size,
            &self.layout,
            self.record_generations,
        ) == (
            wanted.version,
            &wanted.rules,
            wanted.pits,
            wanted.seeds,
            wanted.boards,
            wanted.partition_size,
            &wanted.layout,
            wanted.record_generations,
        )
    }
}

/// The partitions' cells in the files of a work directory.
pub(super) struct DiskStore {
    dir: PathBuf,
    /// Bytes of cells of each partition (`None`: another rank's, with no
    /// file here).
    word_bytes: Vec<Option<usize>>,
    /// Boards of each partition (for the generations' files).
    boards: Vec<u64>,
    record_generations: bool,
    /// The manifest of the last checkpoint.
    manifest: Manifest,
    /// The partitions mapped now, the one mapped longest ago first.
    mapped: VecDeque<usize>,
    /// At most this many mapped at once.
    resident: usize,
}

/// The free space a level on disk asks for: its files and their checkpoint.
pub(super) const COPIES: u64 = 2;

/// The manifest's `checkpoint` when the partitions' files themselves (and
/// `summaries` beside them) are the state to resume from.
const LIVE: &str = "live";

/// The manifest's `checkpoint`, and the directory, of the copy of the
/// partitions' files that is the state to resume from.
const CHECKPOINT: &str = "checkpoint";

/// The manifest's `checkpoint` while the initial pass is under way: the
/// partitions' files (and `summaries`) hold the boards of
/// [`Manifest::initialised`], the rest are initialised again on resuming.
pub(super) const INITIAL: &str = "initial";

impl Manifest {
    /// True when the state described is the initial pass under way.
    pub fn is_initial(&self) -> bool {
        self.checkpoint == INITIAL
    }

    /// True when a work directory with this manifest holds a state to
    /// resume from (its initial pass done, or part of it).
    fn resumes(&self) -> bool {
        [LIVE, CHECKPOINT, INITIAL].contains(&self.checkpoint.as_str())
    }
}

impl DiskStore {
    /// Opens work directory `dir` (made if missing) for the level `wanted`
    /// describes, cut into `partitions` with `word_bytes(p)` bytes of cells
    /// each (`None` for a partition another rank holds: no file for it
    /// here). When `dir` holds a checkpoint of that very level, its manifest
    /// is returned too, and the partitions' files are restored from the
    /// copy (or, when the files themselves are named, the copy is made
    /// again); anything else in `dir` is removed and the files made anew,
    /// zeroed. The directory must have room for `copies` copies of the
    /// files ([`COPIES`]: the files and their checkpoint; 1 when the
    /// checkpoint is made later, by [`DiskStore::ensure_copy`]).
    ///
    /// # Errors
    /// A directory or file that cannot be made, read or written, or too
    /// little free space for the copies ([`SolveError::Disk`]).
    pub fn open(
        dir: &Path,
        wanted: Manifest,
        partitions: Partitions,
        word_bytes: impl Fn(usize) -> Option<usize>,
        resident: usize,
        copies: u64,
    ) -> Result<(DiskStore, Option<Manifest>), SolveError> {
        fs::create_dir_all(dir).map_err(Error::io(dir))?;
        let count = partitions.count();
        let mut store = DiskStore {
            dir: dir.to_path_buf(),
            word_bytes: (0..count).map(word_bytes).collect(),
            boards: (0..count)
                .map(|p| partitions.range(p).end - partitions.range(p).start)
                .collect(),
            record_generations: wanted.record_generations,
            manifest: wanted,
            mapped: VecDeque::new(),
            resident: resident.max(1),
        };
        let found = store.read_manifest();
        let total = store.bytes();
        let resumed = match found {
            Some(found) if found.same_level(&store.manifest) && found.resumes() => {
                // Everything in the directory (the files, the copy, mail of
                // the run that stopped) is written over, truncated or
                // removed, so its room counts as free: a run stopped by a
                // full disk resumes once the room it lacked is freed.
                store.check_space(copies, total, dir_bytes(&store.dir))?;
                remove_mail(&store.dir)?;
                store.manifest = found.clone();
                if found.checkpoint == CHECKPOINT {
                    let from = store.dir.join(CHECKPOINT);
                    for name in store.file_names() {
                        copy(&from.join(&name), &store.dir.join(&name))?;
                    }
                }
                // (Named themselves, the files are copied by `ensure_copy`
                // before they change.)
                Some(found)
            }
            _ => {
                clear_dir(&store.dir)?;
                store.check_space(copies, total, 0)?;
                for (name, bytes) in store.files() {
                    allocate(&store.dir.join(name), bytes)?;
                }
                None
            }
        };
        Ok((store, resumed))
    }

    /// The work directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The bytes of all partitions' files.
    pub fn bytes(&self) -> u64 {
        self.files().iter().map(|(_, bytes)| *bytes as u64).sum()
    }

    /// Checks that the directory has room for `copies` more copies of the
    /// partitions' files (`total` bytes each) and 64 MiB, where `reused`
    /// bytes of files already there will be written over.
    fn check_space(&self, copies: u64, total: u64, reused: u64) -> Result<(), SolveError> {
        let what = "its partitions and their checkpoint";
        let needed = (copies * total + (64 << 20)).saturating_sub(reused);
        crate::memory::check_free_disk(self.manifest.seeds, &self.dir, what, needed)
    }

    /// The partitions' files and their sizes, in order.
    fn files(&self) -> Vec<(String, usize)> {
        let mut files = Vec::new();
        for (p, bytes) in self.word_bytes.iter().enumerate() {
            let Some(bytes) = *bytes else { continue };
            files.push((format!("cells-{p}"), bytes));
            if self.record_generations {
                files.push((format!("generations-{p}"), 2 * self.boards[p] as usize));
            }
        }
        files
    }

    fn file_names(&self) -> Vec<String> {
        self.files().into_iter().map(|(name, _)| name).collect()
    }

    fn read_manifest(&self) -> Option<Manifest> {
        read_manifest(&self.dir)
    }

    /// Whether work directory `dir` holds a state of the level `wanted`
    /// describes, its initial pass done, to resume from ([`DiskStore::open`]
    /// would resume it and read no lower level).
    pub fn resumable(dir: &Path, wanted: &Manifest) -> bool {
        read_manifest(dir)
            .is_some_and(|found| found.same_level(wanted) && found.resumes() && !found.is_initial())
    }

    /// The boards whose initial pass work directory `dir` holds, checkpointed
    /// part way, of the level `wanted` describes (0 when it holds none).
    pub fn initialised(dir: &Path, wanted: &Manifest) -> u64 {
        read_manifest(dir)
            .filter(|found| found.same_level(wanted) && found.is_initial())
            .map_or(0, |found| found.initialised.iter().sum())
    }

    /// Maps partition `p`'s files into `states[p]` unless they are mapped,
    /// first unmapping those of the partition mapped longest ago when as
    /// many as allowed are mapped.
    ///
    /// # Errors
    /// A file that cannot be opened or mapped.
    pub fn make_resident<L: Packing>(
        &mut self,
        p: usize,
        states: &mut [State<L>],
    ) -> Result<(), SolveError> {
        if self.mapped.contains(&p) {
            return Ok(());
        }
        while self.mapped.len() >= self.resident {
            let oldest = self.mapped.pop_front().expect("a mapped partition");
            self.unload(&mut states[oldest]);
        }
        self.load(p, &mut states[p])?;
        self.mapped.push_back(p);
        Ok(())
    }

    /// Maps partition `p`'s files into `state` (which holds none, or holds
    /// them already: then nothing is done).
    ///
    /// # Errors
    /// A file that cannot be opened or mapped.
    pub fn load<L: Packing>(&self, p: usize, state: &mut State<L>) -> Result<(), SolveError> {
        if self.mapped.contains(&p) {
            return Ok(());
        }
        state.words = self.map(&format!("cells-{p}"))?;
        if self.record_generations {
            let array = self.map(&format!("generations-{p}"))?;
            state.generations = Some(Generations::from_array(array));
        }
        Ok(())
    }

    /// Unmaps `state`'s files (what was written stays in the files).
    fn unload<L: Packing>(&self, state: &mut State<L>) {
        state.words = HugeArray::zeroed(0);
        state.generations = None;
    }

    fn map(&self, name: &str) -> Result<HugeArray, SolveError> {
        Ok(mapped::open(&self.dir.join(name))?)
    }

    /// A new file `name` of `bytes` zero bytes in the work directory,
    /// mapped (for the whole level's arrays when it is complete; the file
    /// goes with the directory, its pages stay mapped until dropped).
    ///
    /// # Errors
    /// A file that cannot be made or mapped (a full disk).
    pub fn array(&self, name: &str, bytes: usize) -> Result<HugeArray, SolveError> {
        Ok(mapped::create(&self.dir.join(name), bytes)?)
    }

    /// Makes a checkpoint of the partitions' files (read through the page
    /// cache, which mapped partitions write to) and their `summaries`, with
    /// `manifest` (whose `checkpoint` is set here): the files are synced
    /// and named as the state to resume from, then copied, and the copy is
    /// named (see the module's notes).
    ///
    /// # Errors
    /// A file that cannot be written (a full disk): the files, named
    /// already, are then the state to resume from.
    pub fn checkpoint(&mut self, summaries: &[u64], manifest: Manifest) -> Result<(), SolveError> {
        self.name_files(summaries, manifest.clone())?;
        self.copy_files(summaries, manifest)
    }

    /// Syncs the partitions' files and names them, with `summaries` and
    /// `manifest`, as the state to resume from (after the last stage: the
    /// values are assembled from them), and removes the checkpoint's copy.
    ///
    /// # Errors
    /// A file that cannot be synced, written or removed.
    pub fn finish(&mut self, summaries: &[u64], manifest: Manifest) -> Result<(), SolveError> {
        self.name_files(summaries, manifest)?;
        let copy = self.dir.join(CHECKPOINT);
        if copy.exists() {
            fs::remove_dir_all(&copy).map_err(Error::io(&copy))?;
        }
        Ok(())
    }

    /// When the partitions' files themselves are the state to resume from
    /// and stages are left to run (a run stopped while their copy was made,
    /// or after [`super::initialise_on_disk`]): makes their copy, so that
    /// the stages may change them.
    ///
    /// # Errors
    /// A file that cannot be read or written (a full disk): the files are
    /// then still the state to resume from.
    pub fn ensure_copy(&mut self) -> Result<(), SolveError> {
        if self.manifest.checkpoint != LIVE || self.manifest.next_k == 0 {
            return Ok(());
        }
        // Room for the copy, besides what a copy there already takes.
        let copy = dir_bytes(&self.dir.join(CHECKPOINT));
        self.check_space(1, self.bytes(), copy)?;
        let summaries = self.summaries_at(&self.dir.join("summaries"))?;
        self.copy_files(&summaries, self.manifest.clone())
    }

    /// Syncs the partitions' files, writes `summaries` beside them and
    /// names them in the manifest as the state to resume from.
    pub fn name_files(&mut self, summaries: &[u64], manifest: Manifest) -> Result<(), SolveError> {
        self.sync_and_name(summaries, manifest, LIVE)
    }

    /// Syncs the partitions' files, writes `summaries` beside them and
    /// names them, with `manifest` (its [`Manifest::initialised`] set), as
    /// the initial pass under way: a run stopped later resumes the initial
    /// pass from there.
    ///
    /// # Errors
    /// A file that cannot be synced or written (a full disk): the state
    /// named before is then still the one to resume from.
    pub fn name_initialised(
        &mut self,
        summaries: &[u64],
        manifest: Manifest,
    ) -> Result<(), SolveError> {
        self.sync_and_name(summaries, manifest, INITIAL)
    }

    fn sync_and_name(
        &mut self,
        summaries: &[u64],
        manifest: Manifest,
        checkpoint: &str,
    ) -> Result<(), SolveError> {
        for name in self.file_names() {
            let path = self.dir.join(&name);
            File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(Error::io(&path))?;
        }
        // (Written beside and renamed: the summaries named now stay whole
        // until the manifest names the new ones.)
        let tmp = self.dir.join("summaries.tmp");
        write_synced(&tmp, &summary_bytes(summaries))?;
        let path = self.dir.join("summaries");
        fs::rename(&tmp, &path).map_err(Error::io(&path))?;
        self.write_manifest(Manifest {
            checkpoint: checkpoint.to_string(),
            ..manifest
        })
    }

    /// Copies the partitions' files (named as the state to resume from, and
    /// unchanged since) and `summaries` into the checkpoint's directory,
    /// syncs them and names the copy in the manifest.
    fn copy_files(&mut self, summaries: &[u64], manifest: Manifest) -> Result<(), SolveError> {
        let to = self.dir.join(CHECKPOINT);
        fs::create_dir_all(&to).map_err(Error::io(&to))?;
        for name in self.file_names() {
            copy(&self.dir.join(&name), &to.join(&name))?;
        }
        write_synced(&to.join("summaries"), &summary_bytes(summaries))?;
        self.write_manifest(Manifest {
            checkpoint: CHECKPOINT.to_string(),
            ..manifest
        })
    }

    /// Writes `manifest` to a temporary name, syncs and renames it.
    fn write_manifest(&mut self, manifest: Manifest) -> Result<(), SolveError> {
        let text = serde_json::to_vec_pretty(&manifest).expect("a manifest serialises");
        let tmp = self.dir.join("manifest.json.tmp");
        write_synced(&tmp, &text)?;
        let path = self.dir.join("manifest.json");
        fs::rename(&tmp, &path).map_err(Error::io(&path))?;
        self.manifest = manifest;
        Ok(())
    }

    /// The summaries of the state resumed from, as saved.
    ///
    /// # Errors
    /// A file that cannot be read, or of the wrong size.
    pub fn summaries(&self, expected: usize) -> Result<Vec<u64>, SolveError> {
        let path = if self.manifest.checkpoint == CHECKPOINT {
            self.dir.join(CHECKPOINT).join("summaries")
        } else {
            self.dir.join("summaries")
        };
        let summaries = self.summaries_at(&path)?;
        if summaries.len() != expected {
            return Err(SolveError::Invalid(format!(
                "{}: {} summaries, {} expected",
                path.display(),
                summaries.len(),
                expected
            )));
        }
        Ok(summaries)
    }

    /// The summaries saved in file `path`.
    fn summaries_at(&self, path: &Path) -> Result<Vec<u64>, SolveError> {
        let bytes = fs::read(path).map_err(Error::io(path))?;
        if bytes.len() % 8 != 0 {
            return Err(SolveError::Invalid(format!(
                "{}: {} bytes of summaries, not a whole number of u64s",
                path.display(),
                bytes.len()
            )));
        }
        Ok(bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect())
    }

    /// Removes the work directory (the level is complete).
    ///
    /// # Errors
    /// A file that cannot be removed.
    pub fn remove(self) -> Result<(), SolveError> {
        fs::remove_dir_all(&self.dir).map_err(Error::io(&self.dir))?;
        Ok(())
    }
}

/// Where the partitions' cells are between visits.
pub(super) enum Store {
    /// In memory, always at hand.
    Memory,
    /// In files, mapped while their partition is worked.
    Disk(Box<DiskStore>),
}

/// The state of a level being solved: each partition's [`State`], and
/// where their cells live.
pub(super) struct LevelState<L: Packing> {
    pub store: Store,
    /// The partitions' states, in order (another rank's: its range only).
    pub states: Vec<State<L>>,
}

impl<L: Packing> LevelState<L> {
    /// Runs `f` on partition `p`, its cells (and generations) at hand.
    ///
    /// # Errors
    /// A partition's file that cannot be opened or mapped.
    pub fn with<R>(&mut self, p: usize, f: impl FnOnce(&State<L>) -> R) -> Result<R, SolveError> {
        if let Store::Disk(disk) = &mut self.store {
            disk.make_resident(p, &mut self.states)?;
        }
        Ok(f(&self.states[p]))
    }

    /// Makes a checkpoint of the partitions in the work directory, with
    /// `manifest` (nothing with the partitions in memory).
    ///
    /// # Errors
    /// As [`DiskStore::checkpoint`].
    pub fn checkpoint(&mut self, manifest: Manifest) -> Result<(), SolveError> {
        match &mut self.store {
            Store::Memory => Ok(()),
            Store::Disk(disk) => disk.checkpoint(&summaries(&self.states), manifest),
        }
    }
}

/// The summaries of every partition of `states`, in order, as a checkpoint
/// saves them.
pub(super) fn summaries<L: Packing>(states: &[State<L>]) -> Vec<u64> {
    states.iter().flat_map(|s| s.summary_values()).collect()
}

/// The manifest in work directory `dir`, if one can be read.
fn read_manifest(dir: &Path) -> Option<Manifest> {
    let text = fs::read_to_string(dir.join("manifest.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Removes work directory `dir` of a level about to be solved when it
/// holds no checkpoint (no manifest): what a stopped run left there (the
/// split cells' bytes and words, mail) is scratch, and its room the
/// level's. Returns whether there was one to remove.
///
/// # Errors
/// A directory that cannot be removed.
pub(crate) fn clear_without_checkpoint(dir: &Path) -> Result<bool, SolveError> {
    if !dir.is_dir() || dir.join("manifest.json").exists() {
        return Ok(false);
    }
    fs::remove_dir_all(dir).map_err(Error::io(dir))?;
    Ok(true)
}

/// The bytes of the files in `dir` and below (0 for what cannot be read).
pub(crate) fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&entry.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// The summaries as saved: little-endian `u64`s.
fn summary_bytes(summaries: &[u64]) -> Vec<u8> {
    summaries.iter().flat_map(|s| s.to_le_bytes()).collect()
}

/// Removes the files of spilled mail (`mail-…`) a stopped run left in `dir`.
fn remove_mail(dir: &Path) -> Result<(), SolveError> {
    for entry in fs::read_dir(dir).map_err(Error::io(dir))? {
        let entry = entry.map_err(Error::io(dir))?;
        if entry.file_name().to_string_lossy().starts_with("mail-") {
            let path = entry.path();
            fs::remove_file(&path).map_err(Error::io(&path))?;
        }
    }
    Ok(())
}

/// Empties directory `dir` of everything in it.
pub(super) fn clear_dir(dir: &Path) -> Result<(), SolveError> {
    for entry in fs::read_dir(dir).map_err(Error::io(dir))? {
        let path = entry.map_err(Error::io(dir))?.path();
        let removed = if path.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        removed.map_err(Error::io(&path))?;
    }
    Ok(())
}

/// Copies `from` to `to` and syncs the copy.
fn copy(from: &Path, to: &Path) -> Result<(), SolveError> {
    fs::copy(from, to).map_err(Error::io(to))?;
    File::open(to)
        .and_then(|f| f.sync_all())
        .map_err(Error::io(to))?;
    Ok(())
}

/// Writes `bytes` to `path` and syncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), SolveError> {
    let mut file = File::create(path).map_err(Error::io(path))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(Error::io(path))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_work_directory_without_checkpoint_is_cleared_one_with_it_kept() {
        let root = tempfile::tempdir().unwrap();
        let (scratch, resumable) = (root.path().join("a.work"), root.path().join("b.work"));
        for dir in [&scratch, &resumable] {
            fs::create_dir_all(dir).unwrap();
            fs::write(dir.join("cold-0"), [7u8; 4096]).unwrap();
        }
        fs::write(resumable.join("manifest.json"), "{}").unwrap();
        assert!(clear_without_checkpoint(&scratch).unwrap());
        assert!(!scratch.exists());
        assert!(!clear_without_checkpoint(&resumable).unwrap());
        assert!(resumable.join("cold-0").exists());
        assert!(!clear_without_checkpoint(&root.path().join("none")).unwrap());
    }

    fn manifest(boards: u64, partition_size: u64) -> Manifest {
        Manifest {
            version: VERSION,
            rules: "awari".to_string(),
            pits: 6,
            seeds: 20,
            boards,
            partition_size,
            layout: "Narrow".to_string(),
            record_generations: false,
            next_k: 20,
            stages: Vec::new(),
            init_seconds: 0.0,
            checkpoint: String::new(),
            initialised: Vec::new(),
        }
    }

    #[test]
    fn a_level_larger_than_the_free_disk_is_refused_before_any_file_is_made() {
        if crate::memory::free_disk(Path::new(".")).is_none() {
            return; // (No free-space figure on this platform: nothing to check.)
        }
        let dir = tempfile::tempdir().unwrap();
        let partitions = Partitions::new(1 << 20, 2);
        let wanted = manifest(1 << 20, partitions.size());
        // An exabyte of cells per partition.
        let err = DiskStore::open(dir.path(), wanted, partitions, |_| Some(1 << 60), 1, COPIES)
            .err()
            .expect("refused");
        assert!(matches!(err, SolveError::Disk { seeds: 20, .. }), "{err}");
        assert!(err.to_string().contains("needs"), "{err}");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_checkpoint_of_another_level_is_not_resumed() {
        let dir = tempfile::tempdir().unwrap();
        let partitions = Partitions::new(1 << 12, 2);
        let wanted = manifest(1 << 12, partitions.size());
        let (mut store, resumed) = open_level(dir.path(), wanted.clone());
        assert!(resumed.is_none());
        store
            .checkpoint(
                &[1, 2, 3],
                Manifest {
                    next_k: 7,
                    ..wanted.clone()
                },
            )
            .unwrap();
        // The same level resumes at stage 7, with its summaries.
        let (store, resumed) = open_level(dir.path(), wanted.clone());
        assert_eq!(resumed.map(|m| m.next_k), Some(7));
        assert_eq!(store.summaries(3).unwrap(), [1, 2, 3]);
        // Another rule set starts over.
        let other = Manifest {
            rules: "abapa".to_string(),
            ..wanted
        };
        let (_, resumed) = open_level(dir.path(), other);
        assert!(resumed.is_none());
        assert!(!dir.path().join("manifest.json").exists());
    }

    /// Opens a store of 2 partitions of 4096 bytes each in `dir`.
    fn open_small(dir: &Path) -> (DiskStore, Option<Manifest>) {
        let partitions = Partitions::new(1 << 12, 2);
        open_level(dir, manifest(1 << 12, partitions.size()))
    }

    /// Opens a store in `dir` for the level `wanted` describes, of 2
    /// partitions of 4096 bytes each.
    fn open_level(dir: &Path, wanted: Manifest) -> (DiskStore, Option<Manifest>) {
        let partitions = Partitions::new(wanted.boards, 2);
        DiskStore::open(dir, wanted, partitions, |_| Some(4096), 1, COPIES).unwrap()
    }

    fn at_stage(store: &DiskStore, next_k: u32) -> Manifest {
        Manifest {
            next_k,
            ..store.manifest.clone()
        }
    }

    #[test]
    fn a_level_stopped_while_its_copy_is_made_resumes_from_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = open_small(dir.path());
        fs::write(dir.path().join("cells-0"), [7u8; 4096]).unwrap();
        // Killed after the files were named, before the copy was complete.
        store.name_files(&[5, 6], at_stage(&store, 9)).unwrap();
        fs::create_dir(dir.path().join(CHECKPOINT)).unwrap();
        fs::write(dir.path().join(CHECKPOINT).join("cells-0"), [1u8; 10]).unwrap();
        drop(store);
        let (mut store, resumed) = open_small(dir.path());
        assert_eq!(resumed.map(|m| m.next_k), Some(9));
        assert_eq!(store.summaries(2).unwrap(), [5, 6]);
        // The copy is made again before anything changes the files.
        store.ensure_copy().unwrap();
        assert_eq!(store.summaries(2).unwrap(), [5, 6]);
        assert_eq!(store.manifest.checkpoint, CHECKPOINT);
        let copy = fs::read(dir.path().join(CHECKPOINT).join("cells-0")).unwrap();
        assert_eq!(copy, [7u8; 4096]);
        assert_eq!(fs::read(dir.path().join("cells-0")).unwrap(), [7u8; 4096]);
    }

    #[test]
    fn a_level_stopped_mid_stage_gets_its_files_back_from_the_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = open_small(dir.path());
        fs::write(dir.path().join("cells-1"), [3u8; 4096]).unwrap();
        store.checkpoint(&[1, 2], at_stage(&store, 7)).unwrap();
        // The next stage changes the files, and spills mail, then is killed.
        fs::write(dir.path().join("cells-1"), [4u8; 4096]).unwrap();
        fs::write(dir.path().join("mail-a-0"), [0u8; 64]).unwrap();
        drop(store);
        let (store, resumed) = open_small(dir.path());
        assert_eq!(resumed.map(|m| m.next_k), Some(7));
        assert_eq!(store.summaries(2).unwrap(), [1, 2]);
        assert_eq!(fs::read(dir.path().join("cells-1")).unwrap(), [3u8; 4096]);
        assert!(!dir.path().join("mail-a-0").exists());
    }

    #[test]
    fn an_initial_pass_stopped_part_way_resumes_from_the_boards_it_named() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = open_small(dir.path());
        let wanted = store.manifest.clone();
        fs::write(dir.path().join("cells-0"), [5u8; 4096]).unwrap();
        let part_way = Manifest {
            initialised: vec![700, 0],
            ..wanted.clone()
        };
        store.name_initialised(&[4, 0], part_way).unwrap();
        // Killed later in the pass, after more boards were written.
        fs::write(dir.path().join("cells-1"), [6u8; 4096]).unwrap();
        drop(store);
        // Not a state whose initial pass is done, but one to go on from.
        assert!(!DiskStore::resumable(dir.path(), &wanted));
        assert_eq!(DiskStore::initialised(dir.path(), &wanted), 700);
        let (store, resumed) = open_small(dir.path());
        let resumed = resumed.expect("resumed");
        assert!(resumed.is_initial());
        assert_eq!(resumed.initialised, [700, 0]);
        assert_eq!(store.summaries(2).unwrap(), [4, 0]);
        // The files are kept as they are (the pass writes the rest again).
        assert_eq!(fs::read(dir.path().join("cells-0")).unwrap(), [5u8; 4096]);
        assert!(!dir.path().join(CHECKPOINT).exists());
    }

    #[test]
    fn a_finished_level_keeps_its_files_and_not_their_copy() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = open_small(dir.path());
        fs::write(dir.path().join("cells-0"), [9u8; 4096]).unwrap();
        store.checkpoint(&[1, 2], at_stage(&store, 3)).unwrap();
        store.finish(&[8, 9], at_stage(&store, 0)).unwrap();
        assert!(!dir.path().join(CHECKPOINT).exists());
        drop(store);
        let (store, resumed) = open_small(dir.path());
        assert_eq!(resumed.map(|m| m.next_k), Some(0));
        assert_eq!(store.summaries(2).unwrap(), [8, 9]);
        assert_eq!(fs::read(dir.path().join("cells-0")).unwrap(), [9u8; 4096]);
        assert!(!dir.path().join(CHECKPOINT).exists());
    }
}
