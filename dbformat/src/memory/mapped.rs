//! Arrays in files, mapped shared: what is written goes to the page cache
//! and on to the file, so the process holds as much of an array as memory
//! can spare, not all of it. The partitions of a level on disk, the values
//! of a level assembled from them, lower levels kept in files, and the
//! levels a verification reads within a small budget live in such arrays.
//!
//! While a [`crate::memory::resident::Watch`] lives, their pages are given back when
//! the resident set goes over its ceiling.

use std::fs::{File, OpenOptions};
use std::path::Path;

use memmap2::MmapMut;

use crate::memory::huge::HugeArray;
use crate::{Error, Result};

/// A new file `path` of `bytes` zero bytes (replacing any), mapped.
///
/// Its blocks are allocated up front where the file system can, so that a
/// write through the mapping never meets a full disk (which would kill the
/// process with a bus error, not return an error).
///
/// # Errors
/// [`Error::Io`] naming `path` when it cannot be made, allocated (a full
/// disk) or mapped.
pub fn create(path: &Path, bytes: usize) -> Result<HugeArray> {
    allocate(path, bytes)?;
    open(path)
}

/// The existing file `path`, mapped for reading and writing.
///
/// # Errors
/// [`Error::Io`] naming `path` when it cannot be opened or mapped.
pub fn open(path: &Path) -> Result<HugeArray> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(Error::io(path))?;
    // SAFETY: the file is this process's own (in its work directory);
    // nothing else changes or truncates it while it is mapped.
    let map = unsafe { MmapMut::map_mut(&file) }.map_err(Error::io(path))?;
    Ok(HugeArray::from_map(map))
}

/// Makes file `path` of `bytes` zero bytes, its blocks allocated.
///
/// # Errors
/// [`Error::Io`] naming `path`.
pub fn allocate(path: &Path, bytes: usize) -> Result<()> {
    let file = File::create(path).map_err(Error::io(path))?;
    file.set_len(bytes as u64).map_err(Error::io(path))?;
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if bytes > 0 {
        use std::os::unix::io::AsRawFd;
        // SAFETY: a valid descriptor and a range within the file.
        let err = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, bytes as libc::off_t) };
        // (A file system without it allocates as pages are written.)
        if err != 0 && err != libc::EOPNOTSUPP && err != libc::EINVAL {
            return Err(Error::io(path)(std::io::Error::from_raw_os_error(err)));
        }
    }
    Ok(())
}
