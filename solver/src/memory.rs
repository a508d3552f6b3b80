//! The memory budget: sizes written by people, and what the machine has.

pub use awari_dbformat::cli::parse_size;
pub use awari_dbformat::memory::{
    available, default_budget, format_size, free_disk, peak_resident,
};

/// Gives the heap's free pages back to the system.
///
/// The allocator keeps memory a level freed (frontier lists, the writer's
/// buffers: about 200 MiB after level 23 of awari) for later use, so it
/// stays resident and counts again on top of the next level's state, which
/// is mapped apart. Called between levels. (glibc's `malloc_trim`; nothing
/// elsewhere.)
pub fn give_back_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns unused pages of the heap to the
    // system; it takes no pointers and is safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Has the allocator give large blocks (1 MiB or more) their own mappings,
/// returned to the system when freed, and trim the heap's free top as it
/// goes. glibc otherwise raises both thresholds as a program frees large
/// blocks, and its per-thread heaps then keep what a level's writing freed
/// resident through the next level's solve (35 MiB at level 24 of 6-pit
/// awari, which [`give_back_free_heap`] does not reach: it is the free top
/// of those heaps). Once per process is enough; elsewhere it does nothing.
pub fn free_large_blocks_at_once() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; any value is valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

/// The bytes this process has read from and written to storage so far
/// (`read_bytes` and `write_bytes` of `/proc/self/io`: what went to the
/// disks, not what the page cache answered), if known.
pub(crate) fn disk_io() -> Option<(u64, u64)> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = io.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((field("read_bytes:")?, field("write_bytes:")?))
}

/// Checks that `dir` (or the nearest existing directory above it) has at
/// least `needed` bytes free, where the system tells.
///
/// # Errors
/// [`crate::error::SolveError::Disk`] with what level `seeds` writes there (`what`).
pub(crate) fn check_free_disk(
    seeds: u32,
    dir: &std::path::Path,
    what: &'static str,
    needed: u64,
) -> Result<(), crate::error::SolveError> {
    match free_disk(dir) {
        Some(free) if free < needed => Err(crate::error::SolveError::Disk {
            seeds,
            dir: dir.to_path_buf(),
            what,
            needed: format_size(needed),
            available: format_size(free),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_for_people() {
        // (Sizes are read by awari_dbformat::cli::parse_size, tested there.)
        assert_eq!(format_size(3 << 29), "1.5 GiB");
        assert_eq!(format_size(10), "10 bytes");
    }

    #[test]
    fn free_disk_and_io_are_read_where_linux_tells_them() {
        if cfg!(all(target_os = "linux", target_env = "gnu")) {
            assert!(free_disk(std::path::Path::new(".")).is_some_and(|b| b > 0));
            assert!(disk_io().is_some());
        }
        // A path still to be made: the file system it would be made on.
        if cfg!(unix) {
            assert!(free_disk(std::path::Path::new("/no/such/dir")).is_some());
        }
    }
}
