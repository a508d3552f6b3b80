//! Large zeroed arrays backed by anonymous memory with transparent huge pages
//! requested (`madvise(MADV_HUGEPAGE)`). The per-board arrays kept in them, a
//! level's values and a certificate's generations, are
//! [`crate::level::Values`] and [`crate::level::Generations`].
//!
//! The solver and the verifier touch per-board bytes anywhere in a level; with
//! 4 KiB pages nearly every such access also misses the TLB. architecture.md
//! measured random byte updates at ~41 M/s with normal pages and ~68 M/s with
//! huge pages on this machine, so every large array of theirs lives in one of
//! these. (On Linux with transparent huge pages in `madvise` mode, a plain
//! `Vec` gets none.)

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicI8, AtomicU64, AtomicU8};

use memmap2::{Advice, MmapMut};

/// A zeroed byte array of fixed length, in huge pages where the system allows.
pub struct HugeArray {
    map: Option<MmapMut>,
    len: usize,
    /// Mapped from a file (and registered with [`crate::memory::resident`]).
    from_file: bool,
}

impl HugeArray {
    /// `len` zero bytes.
    ///
    /// # Panics
    /// When the system refuses the memory (the solver checks its budget first;
    /// see [`HugeArray::try_zeroed`] for a caller that cannot).
    pub fn zeroed(len: usize) -> HugeArray {
        HugeArray::try_zeroed(len).expect("anonymous memory for a per-board array")
    }

    /// `len` zero bytes.
    ///
    /// # Errors
    /// The system's error when it refuses the memory.
    pub fn try_zeroed(len: usize) -> std::io::Result<HugeArray> {
        if len == 0 {
            return Ok(HugeArray {
                map: None,
                len,
                from_file: false,
            });
        }
        let map = MmapMut::map_anon(len)?;
        // Advice only: where huge pages are unavailable the array still works.
        let _ = map.advise(Advice::HugePage);
        Ok(HugeArray {
            map: Some(map),
            len,
            from_file: false,
        })
    }

    /// The bytes of a mapping made elsewhere (a file's, mapped shared, so
    /// that what is written goes to the file), as an array of its length.
    /// Huge pages are not asked for: the page cache holds file pages. Its
    /// pages are given back when the process is over its resident ceiling
    /// ([`crate::memory::resident`]).
    pub fn from_map(map: MmapMut) -> HugeArray {
        let len = map.len();
        crate::memory::resident::register(map.as_ptr() as usize, len);
        HugeArray {
            map: (len > 0).then_some(map),
            len,
            from_file: true,
        }
    }

    /// Whether the array is a file's mapping ([`HugeArray::from_map`]),
    /// whose pages the page cache holds, rather than memory of its own.
    pub fn is_from_file(&self) -> bool {
        self.from_file
    }

    /// Advises the kernel that the array is read at random (`MADV_RANDOM`,
    /// advice only: nothing changes where it is not taken). For an array
    /// mapped from a file this matters to the resident set: the page cache
    /// then holds its pages singly, not in the large folios of a sequential
    /// read, so a read at random maps tens of kibibytes, not a mebibyte or
    /// more. Best given before the array is first written or read.
    pub fn advise_random(&self) {
        if let Some(map) = &self.map {
            let _ = map.advise(Advice::Random);
        }
    }

    /// Advises the kernel that bytes `range` of an array mapped from a file
    /// are read soon (`MADV_WILLNEED`: their pages are read ahead in large
    /// reads, without waiting for them); advice only, and none for an array
    /// in memory.
    pub fn will_need(&self, range: std::ops::Range<usize>) {
        if let Some((map, start, len)) = self.file_pages(range) {
            let _ = map.advise_range(Advice::WillNeed, start, len);
        }
    }

    /// Reads bytes `range` of an array mapped from a file into memory now,
    /// in large reads, and maps them (`MADV_POPULATE_READ`, Linux 5.14 and
    /// later): for a pass that then reads them at random, which page by
    /// page would wait on the disk for each. Returns when they are read;
    /// nothing for an array in memory, or where the system cannot.
    pub fn populate(&self, range: std::ops::Range<usize>) {
        if let Some((map, start, len)) = self.file_pages(range) {
            // Advised `Random` (as arrays mapped from files are), the range
            // would be faulted in a page at a time (256 MiB: 5.4 s here,
            // against 0.19 s advised `Sequential`).
            let _ = map.advise_range(Advice::Sequential, start, len);
            #[cfg(target_os = "linux")]
            let _ = map.advise_range(Advice::PopulateRead, start, len);
            let _ = map.advise_range(Advice::Random, start, len);
        }
    }

    /// Reads bytes `range` of an array mapped from a file into the page
    /// cache now, in large reads, without keeping them mapped: a step at a
    /// time is read in ([`HugeArray::populate`]) and unmapped again
    /// (`MADV_DONTNEED`, which leaves a file's pages in the page cache), so
    /// the resident set grows by one step at most. For a pass about to read
    /// the range at random: its faults then find the pages in the cache
    /// instead of each waiting on the disk. Nothing for an array in memory.
    pub fn cache(&self, range: std::ops::Range<usize>) {
        /// Bytes read in and unmapped at a time.
        const STEP: usize = 64 << 20;
        let Some((map, start, len)) = self.file_pages(range) else {
            return;
        };
        let mut at = start;
        while at < start + len {
            let step = STEP.min(start + len - at);
            self.populate(at..at + step);
            // SAFETY: the pages of a shared file mapping are unmapped only;
            // the file (and the page cache) keeps their bytes, and the next
            // access maps them again with the same content. Advice only:
            // failing, the pages stay mapped, within the resident watch.
            #[cfg(unix)]
            unsafe {
                let _ = map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, at, step);
            }
            at += step;
        }
    }

    /// The mapping of an array mapped from a file, and the start (rounded
    /// down to a page) and length of bytes `range` of it; `None` for an
    /// array in memory or an empty range.
    fn file_pages(&self, range: std::ops::Range<usize>) -> Option<(&MmapMut, usize, usize)> {
        const PAGE: usize = 4096;
        let map = self.map.as_ref().filter(|_| self.from_file)?;
        let start = range.start / PAGE * PAGE;
        let end = range.end.min(self.len);
        (end > start).then_some((map, start, end - start))
    }

    /// The array as `len / size_of::<T>()` values of `T` (a tail too short for
    /// one is left out).
    ///
    /// # Safety
    /// Every bit pattern of `T`'s size must be a valid `T` (integers, and
    /// atomics of integers, which have their integer's layout).
    pub(crate) unsafe fn view<T>(&self) -> &[T] {
        let count = self.len / std::mem::size_of::<T>();
        if count == 0 {
            return &[];
        }
        let ptr = self.as_ptr().cast::<T>();
        // An anonymous mapping starts on a page boundary.
        assert!(ptr.is_aligned());
        // SAFETY: `count` values lie within the mapping, which is initialised
        // (zeroed at least) and aligned; any bit pattern is a `T` (caller).
        unsafe { std::slice::from_raw_parts(ptr, count) }
    }

    /// Like [`HugeArray::view`], mutable.
    ///
    /// # Safety
    /// As for [`HugeArray::view`]: every bit pattern of `T`'s size is a `T`.
    pub(crate) unsafe fn view_mut<T>(&mut self) -> &mut [T] {
        let count = self.len / std::mem::size_of::<T>();
        if count == 0 {
            return &mut [];
        }
        let ptr = self.as_mut_ptr().cast::<T>();
        assert!(ptr.is_aligned());
        // SAFETY: as in `view`, and `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(ptr, count) }
    }

    /// The bytes as atomics, for updates shared between threads (every access
    /// while this borrow lives goes through them).
    pub fn as_atomic_u8(&self) -> &[AtomicU8] {
        // SAFETY: an atomic integer is valid for any bits.
        unsafe { self.view() }
    }

    /// The bytes as signed atomics.
    pub fn as_atomic_i8(&self) -> &[AtomicI8] {
        // SAFETY: as above.
        unsafe { self.view() }
    }

    /// The bytes as `len / 8` 64-bit atomics (native byte order), for reading
    /// eight bytes at once.
    pub fn as_atomic_u64(&self) -> &[AtomicU64] {
        // SAFETY: as above.
        unsafe { self.view() }
    }

    /// The bytes as signed values.
    pub fn as_i8(&self) -> &[i8] {
        // SAFETY: as above.
        unsafe { self.view() }
    }

    /// The bytes as `len / 8` 64-bit words (native byte order).
    pub fn as_u64(&self) -> &[u64] {
        // SAFETY: as above.
        unsafe { self.view() }
    }

    /// Keeps the first `len` bytes and gives the memory of the rest back to
    /// the system (on Linux; elsewhere the array only looks shorter). For an
    /// array whose content was compacted into its start, so that a new array
    /// is not needed beside it.
    ///
    /// # Panics
    /// When `len` is more than the array's length.
    pub fn shrink(&mut self, len: usize) {
        assert!(len <= self.len, "shrink grows the array");
        let address = self.map.as_ref().map(|m| m.as_ptr() as usize);
        if let (true, Some(address)) = (self.from_file, address) {
            crate::memory::resident::unregister(address);
        }
        if len == 0 {
            self.map = None;
        } else if let Some(map) = &mut self.map {
            #[cfg(target_os = "linux")]
            // SAFETY: the mapping shrinks in place (a file's mapping stays
            // within its file); nothing borrows it (`&mut self`). On failure
            // it keeps its size, which is only memory not returned.
            let _ = unsafe { map.remap(len, memmap2::RemapOptions::new()) };
            #[cfg(not(target_os = "linux"))]
            let _ = map;
            if self.from_file {
                crate::memory::resident::register(map.as_ptr() as usize, map.len().min(len));
            }
        }
        self.len = len;
    }
}

impl Drop for HugeArray {
    fn drop(&mut self) {
        if let (true, Some(map)) = (self.from_file, &self.map) {
            crate::memory::resident::unregister(map.as_ptr() as usize);
        }
    }
}

impl Deref for HugeArray {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.map {
            Some(m) => &m[..self.len],
            None => &[],
        }
    }
}

impl DerefMut for HugeArray {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &mut self.map {
            Some(m) => &mut m[..self.len],
            None => &mut [],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_arrays_have_empty_views_of_every_type() {
        let empty = HugeArray::zeroed(0);
        assert!(empty.as_i8().is_empty() && empty.as_atomic_u64().is_empty());
    }

    #[test]
    fn an_array_in_memory_is_not_given_back_by_cache() {
        // `MADV_DONTNEED` on anonymous memory would zero it.
        let mut array = HugeArray::zeroed(3 << 20);
        array.fill(7);
        array.cache(0..3 << 20);
        assert!(array.iter().all(|&b| b == 7));
    }

    #[test]
    fn shrinking_keeps_the_start() {
        let mut array = HugeArray::zeroed(3 << 20);
        for (i, b) in array.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        array.shrink(1_000_003);
        assert_eq!(array.len(), 1_000_003);
        assert!(array.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
        assert_eq!(array.as_u64().len(), 1_000_003 / 8);
        array.shrink(0);
        assert!(array.is_empty() && array.as_u64().is_empty());
    }
}
