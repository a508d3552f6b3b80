//! A ceiling on the process's resident memory, held by giving back the pages
//! of arrays mapped from files.
//!
//! A level on disk keeps its partitions, its lower levels' scores and its
//! assembled values in files mapped shared ([`HugeArray::from_map`]). Every
//! page of such a mapping that the process touches stays in its resident set
//! until it is unmapped, although the kernel could drop it at any time (a
//! clean page) or write it back (a dirty one): without a ceiling, a pass over
//! the lower levels at random makes them all resident, over the budget the
//! user set. So while a [`Watch`] lives, a thread reads the resident set
//! every millisecond, and when it is over the ceiling, the pages of every
//! array mapped from a file are given back (`madvise(MADV_DONTNEED)`): their
//! content stays in the page cache and the file, and the next access maps it
//! again (a minor fault while it is still cached). The passes themselves
//! need no hooks.
//!
//! [`HugeArray::from_map`]: crate::memory::huge::HugeArray::from_map

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The ceiling of the live [`Watch`] in bytes (`u64::MAX`: none).
static CEILING: AtomicU64 = AtomicU64::new(u64::MAX);

/// The arrays mapped from files: (address, length), each registered while
/// it lives.
static FILE_MAPS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Times the pages were given back since the process started.
static RELEASES: AtomicU64 = AtomicU64::new(0);

/// How often the watch reads the resident set. Between two readings a pass
/// maps at most a few mebibytes of file pages, which the ceiling leaves room
/// for ([`Watch::new`]); a reading costs a few microseconds.
const PERIOD: Duration = Duration::from_millis(1);

/// Holds the resident set under a ceiling while it lives (see the module
/// docs); dropping it stops the watching thread.
pub struct Watch {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watch {
    /// Starts holding the resident set under `bytes`: from now on, whenever
    /// it is read over them, the pages of the arrays mapped from files are
    /// given back. One watch at a time: a new one replaces the ceiling of
    /// the last.
    pub fn new(bytes: u64) -> Watch {
        CEILING.store(bytes, Relaxed);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("resident-watch".into())
            .spawn(move || {
                while !stopped.load(Relaxed) {
                    std::thread::sleep(PERIOD);
                    if resident_bytes().is_some_and(|r| r > bytes) {
                        release_file_pages();
                    }
                }
            })
            .ok();
        Watch { stop, thread }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        CEILING.store(u64::MAX, Relaxed);
    }
}

/// Room for the pages of files mapped between two readings of the resident
/// set: the passes read it after every [`FAULTS_BETWEEN_READINGS`] page
/// faults of a thread ([`hold`]), each of which maps at most 64 KiB, so two
/// threads map at most 16 MiB unseen; the watch's thread, for writes in
/// order, less.
pub const UNSEEN_PAGES_BYTES: u64 = 32 << 20;

/// The resident set at which a [`Watch`] under a memory budget of `budget`
/// bytes gives back the pages of mapped files: the budget, less a sixteenth
/// and room for the pages mapped unseen between two readings. The one
/// formula of the solver's and the verifier's watches.
pub fn ceiling_for(budget: u64) -> u64 {
    budget.saturating_sub(budget / 16 + UNSEEN_PAGES_BYTES)
}

/// The bytes of mapped files a pass may read at random under the ceiling of
/// the live [`Watch`], with `beside` bytes more to be touched meanwhile:
/// three quarters of what the ceiling leaves once the file pages are given
/// back (the rest for pages mapped between two readings), and at least a
/// sixteenth of the ceiling, so that passes stay few. `None` without a
/// watch: one pass reads all.
pub fn room(beside: u64) -> Option<u64> {
    left_under_ceiling(beside).map(|(ceiling, left)| (left / 4 * 3).max(ceiling / 16))
}

/// Like [`room`], for a pass that alone maps files while it runs and whose
/// heap does not grow meanwhile (such as the statistics' count of a level's
/// quiet moves once its file is written): all the ceiling leaves but a
/// thirty-second of it, at least a sixteenth. `None` without a watch.
pub fn room_for_one_reader(beside: u64) -> Option<u64> {
    left_under_ceiling(beside)
        .map(|(ceiling, left)| left.saturating_sub(ceiling / 32).max(ceiling / 16))
}

/// The ceiling of the live [`Watch`] and what it leaves beside the resident
/// set and `beside` bytes, once the file pages are given back.
fn left_under_ceiling(beside: u64) -> Option<(u64, u64)> {
    ceiling().map(|ceiling| {
        release_file_pages();
        let now = resident_bytes().unwrap_or(0);
        (ceiling, ceiling.saturating_sub(now + beside))
    })
}

/// The ceiling of the live [`Watch`], if any.
pub fn ceiling() -> Option<u64> {
    let bytes = CEILING.load(Relaxed);
    (bytes != u64::MAX).then_some(bytes)
}

/// The process's resident set in bytes (Linux: `/proc/self/statm`; `None`
/// elsewhere).
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Gives the free memory of the heap back to the system. The allocator
/// keeps what a phase freed for the next (a rank's initial pass leaves
/// tens of mebibytes of windows), so a process whose phases peak apart
/// would otherwise hold the sum of their peaks. Nothing but on glibc.
pub fn give_back_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's own.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Gives back the resident pages of every array mapped from a file; their
/// content is kept (in the page cache, and in the file once written back).
pub fn release_file_pages() {
    release_all(&FILE_MAPS.lock().unwrap_or_else(|e| e.into_inner()));
}

/// Gives back the pages of `maps` (the registered mappings, locked).
fn release_all(maps: &[(usize, usize)]) {
    RELEASES.fetch_add(1, Relaxed);
    for &(address, len) in maps {
        release(address, len);
    }
}

/// Holds the ceiling of the live [`Watch`] from inside a pass that reads
/// mapped files at random: called every few boards, it gives back the file
/// pages when the resident set is over the ceiling, and while another
/// thread gives them back, it waits.
///
/// The watch's thread alone cannot hold a pass like that: every read of a
/// page not mapped maps the cached pages around it too (64 KiB), so two
/// threads map tens of mebibytes in the millisecond between two of its
/// readings, and more while it gives the pages back (11-18 ms at level 22
/// of a verification). Here each thread reads the resident set after every
/// [`FAULTS_BETWEEN_READINGS`] page faults of its own (a cheap count from
/// the system), so it maps at most that many times 64 KiB unseen. Does
/// nothing without a watch.
pub fn hold() {
    if let Some(ceiling) = ceiling() {
        hold_under(ceiling);
    }
}

/// [`hold`] with the ceiling given.
fn hold_under(ceiling: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::cell::Cell;
        thread_local!(static SEEN: Cell<u64> = const { Cell::new(0) });
        // (Where the count is unknown, the resident set is read every time.)
        if let Some(faults) = thread_faults() {
            if faults.saturating_sub(SEEN.get()) < FAULTS_BETWEEN_READINGS {
                return;
            }
            SEEN.set(faults);
        }
    }
    if resident_bytes().is_some_and(|r| r > ceiling) {
        // One thread gives the pages back; the others wait on the lock and
        // find the resident set under the ceiling after it.
        let maps = FILE_MAPS.lock().unwrap_or_else(|e| e.into_inner());
        if resident_bytes().is_some_and(|r| r > ceiling) {
            release_all(&maps);
        }
    }
}

/// The page faults between two readings of the resident set by [`hold`]:
/// at most 8 MiB mapped unseen per thread.
pub const FAULTS_BETWEEN_READINGS: u64 = 128;

/// The minor page faults of the calling thread so far, if known.
#[cfg(target_os = "linux")]
fn thread_faults() -> Option<u64> {
    // SAFETY: getrusage fills in the plain struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    (unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } == 0)
        .then_some(usage.ru_minflt as u64)
}

/// How many times file pages were given back ([`release_file_pages`]).
pub fn releases() -> u64 {
    RELEASES.load(Relaxed)
}

/// Gives back the pages of one shared file mapping.
fn release(address: usize, len: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: `address..address + len` is a live shared mapping of a file
    // (registered by `register`, removed before it is unmapped). For such a
    // mapping MADV_DONTNEED only unmaps the pages: dirty ones stay dirty in
    // the page cache, and the next access maps the same content again, so
    // nothing any borrow sees changes.
    unsafe {
        libc::madvise(address as *mut libc::c_void, len, libc::MADV_DONTNEED);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (address, len);
}

/// Registers a shared file mapping at `address` of `len` bytes, to be given
/// back when over the ceiling.
pub(crate) fn register(address: usize, len: usize) {
    if len > 0 {
        let mut maps = FILE_MAPS.lock().unwrap_or_else(|e| e.into_inner());
        maps.push((address, len));
    }
}

/// Forgets the mapping at `address` (before it is unmapped).
pub(crate) fn unregister(address: usize) {
    let mut maps = FILE_MAPS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(at) = maps.iter().position(|&(a, _)| a == address) {
        maps.swap_remove(at);
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::memory::huge::HugeArray;

    /// The resident bytes of the mapping that starts at `address`, from
    /// `/proc/self/smaps` (so that other tests' memory does not count).
    fn rss_of(address: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let header = format!("{address:x}-");
        let block = smaps.split_once(&header).expect("the mapping is listed").1;
        let line = block.lines().find(|l| l.starts_with("Rss:")).unwrap();
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib * 1024
    }

    /// The tests give back every file mapping of the process: one at a time.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    #[test]
    fn file_pages_given_back_keep_their_content() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("array");
        let len = 16 << 20;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.set_len(len as u64).unwrap();
        // SAFETY: the test's own file, not changed elsewhere.
        let map = unsafe { memmap2::MmapMut::map_mut(&file) }.unwrap();
        let mut array = HugeArray::from_map(map);
        let address = array.as_ptr() as usize;
        for (i, b) in array.iter_mut().enumerate() {
            *b = (i % 253) as u8;
        }
        assert_eq!(rss_of(address), len as u64);
        release_file_pages();
        assert_eq!(rss_of(address), 0);
        // The dirty pages were kept: the content reads back, and reaches the file.
        assert!(array.iter().enumerate().all(|(i, &b)| b == (i % 253) as u8));
        assert_eq!(rss_of(address), len as u64);
        drop(array);
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.iter().enumerate().all(|(i, &b)| b == (i % 253) as u8));
        let maps = FILE_MAPS.lock().unwrap();
        assert!(maps.iter().all(|&(a, _)| a != address), "unregistered");
    }

    #[test]
    fn a_file_read_into_the_cache_is_left_unmapped_with_its_content() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("array");
        // More than one step of `HugeArray::cache`, and not a whole number.
        let len = (130 << 20) + 12_345;
        let mut array = crate::memory::mapped::create(&path, len).unwrap();
        let address = array.as_ptr() as usize;
        for (i, b) in array.iter_mut().enumerate() {
            *b = (i % 249) as u8;
        }
        // Written through the mapping and not yet on disk: unmapped, the
        // dirty pages keep their bytes.
        array.cache(0..len);
        assert_eq!(rss_of(address), 0, "the resident set does not keep them");
        assert!(array.iter().enumerate().all(|(i, &b)| b == (i % 249) as u8));
        drop(array);
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.iter().enumerate().all(|(i, &b)| b == (i % 249) as u8));
    }

    #[test]
    fn a_pass_that_holds_the_ceiling_gives_the_pages_back_itself() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("array");
        let len = 64 << 20;
        let mut array = crate::memory::mapped::create(&path, len).unwrap();
        let address = array.as_ptr() as usize;
        array.fill(1);
        assert_eq!(rss_of(address), len as u64);
        // Fewer faults than a reading waits for: nothing is given back.
        hold_under(1);
        let before = releases();
        hold_under(1);
        assert_eq!(releases(), before);
        // Read pages 64 KiB apart (one fault each), more than that many.
        release_file_pages();
        let faults = 2 * FAULTS_BETWEEN_READINGS as usize;
        let sum: u64 = array
            .iter()
            .step_by(64 << 10)
            .take(faults)
            .map(|&b| u64::from(b))
            .sum();
        assert_eq!(sum, faults as u64);
        assert!(rss_of(address) > 0);
        let before = releases();
        hold_under(1);
        assert!(
            releases() > before,
            "the resident set was read and found over"
        );
        assert_eq!(rss_of(address), 0);
    }
}
