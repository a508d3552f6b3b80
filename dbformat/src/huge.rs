//! Large zeroed arrays backed by anonymous memory with transparent huge pages
//! requested (`madvise(MADV_HUGEPAGE)`), and the two kinds of per-board arrays
//! kept in them: a level's [`Values`] and a certificate's [`Generations`].
//!
//! The solver and the verifier touch per-board bytes anywhere in a level; with
//! 4 KiB pages nearly every such access also misses the TLB. architecture.md
//! measured random byte updates at ~41 M/s with normal pages and ~68 M/s with
//! huge pages on this machine, so every large array of theirs lives in one of
//! these. (On Linux with transparent huge pages in `madvise` mode, a plain
//! `Vec` gets none.)

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicI8, AtomicU16, AtomicU64, AtomicU8};

use memmap2::{Advice, MmapMut};

/// A zeroed byte array of fixed length, in huge pages where the system allows.
pub struct HugeArray {
    map: Option<MmapMut>,
    len: usize,
    /// Mapped from a file (and registered with [`crate::resident`]).
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
    /// ([`crate::resident`]).
    pub fn from_map(map: MmapMut) -> HugeArray {
        let len = map.len();
        crate::resident::register(map.as_ptr() as usize, len);
        HugeArray {
            map: (len > 0).then_some(map),
            len,
            from_file: true,
        }
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
        const PAGE: usize = 4096;
        if let (Some(map), true) = (&self.map, self.from_file) {
            let start = range.start / PAGE * PAGE;
            let end = range.end.min(self.len);
            if end > start {
                let _ = map.advise_range(Advice::WillNeed, start, end - start);
            }
        }
    }

    /// The array as `len / size_of::<T>()` values of `T` (a tail too short for
    /// one is left out).
    ///
    /// # Safety
    /// Every bit pattern of `T`'s size must be a valid `T` (integers, and
    /// atomics of integers, which have their integer's layout).
    unsafe fn view<T>(&self) -> &[T] {
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
    unsafe fn view_mut<T>(&mut self) -> &mut [T] {
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
            crate::resident::unregister(address);
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
                crate::resident::register(map.as_ptr() as usize, map.len().min(len));
            }
        }
        self.len = len;
    }
}

impl Drop for HugeArray {
    fn drop(&mut self) {
        if let (true, Some(map)) = (self.from_file, &self.map) {
            crate::resident::unregister(map.as_ptr() as usize);
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

/// One number of type `T` per board of a level, in index order, in huge pages.
pub struct PerBoard<T: Plain> {
    array: HugeArray,
    of: PhantomData<T>,
}

/// The values of a solved level, one signed byte per board in index order, kept
/// in huge pages because later levels read them at random.
pub type Values = PerBoard<i8>;

/// The generation in which each board of a solved level was decided (within its
/// threshold stage), one `u16` per board in index order: the content of a
/// certificate file ([`crate::file::certificate`]).
pub type Generations = PerBoard<u16>;

/// The numbers a [`PerBoard`] may hold.
///
/// # Safety
/// Every bit pattern of the type's size must be a valid value (plain integers).
pub unsafe trait Plain: Copy {}
// SAFETY: integers are valid for any bits.
unsafe impl Plain for i8 {}
// SAFETY: as above.
unsafe impl Plain for u16 {}

impl<T: Plain> PerBoard<T> {
    /// Zero for each of `boards` boards.
    ///
    /// # Errors
    /// The system's error when it refuses the memory.
    pub fn try_zeroed(boards: u64) -> std::io::Result<PerBoard<T>> {
        let bytes = boards as usize * std::mem::size_of::<T>();
        Ok(PerBoard::from_array(HugeArray::try_zeroed(bytes)?))
    }

    /// Zero for each of `boards` boards.
    ///
    /// # Panics
    /// When the system refuses the memory (see [`HugeArray::zeroed`]).
    pub fn zeroed(boards: u64) -> PerBoard<T> {
        PerBoard::try_zeroed(boards).expect("anonymous memory for a per-board array")
    }

    /// Takes over an array of bytes (a tail too short for one `T` is left out).
    pub fn from_array(array: HugeArray) -> PerBoard<T> {
        PerBoard {
            array,
            of: PhantomData,
        }
    }

    /// Advises the kernel that the numbers of boards `range` are read soon
    /// ([`HugeArray::will_need`]).
    pub fn will_need(&self, range: std::ops::Range<u64>) {
        let size = std::mem::size_of::<T>();
        self.array
            .will_need(range.start as usize * size..range.end as usize * size);
    }

    /// The bytes of the numbers (and of a tail too short for one), to be
    /// moved whole: sent to other processes, say.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.array
    }
}

impl Generations {
    /// The entries as atomics, for the solver's threads.
    pub fn as_atomic(&self) -> &[AtomicU16] {
        // SAFETY: an atomic integer is valid for any bits.
        unsafe { self.array.view() }
    }
}

impl<T: Plain> Deref for PerBoard<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `T` is valid for any bits (`Plain`).
        unsafe { self.array.view() }
    }
}

impl<T: Plain> DerefMut for PerBoard<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as above.
        unsafe { self.array.view_mut() }
    }
}

impl<T: Plain> std::fmt::Debug for PerBoard<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PerBoard<{}>({} boards)",
            std::any::type_name::<T>(),
            self.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_start_zeroed_and_keep_what_is_written() {
        let mut values = Values::try_zeroed(5_000_000).unwrap();
        assert_eq!(values.len(), 5_000_000);
        assert!(values.iter().all(|&v| v == 0));
        values[4_999_999] = -7;
        values[0] = 3;
        assert_eq!((values[0], values[4_999_999]), (3, -7));

        let mut generations = Generations::try_zeroed(3).unwrap();
        generations.copy_from_slice(&[1, 65535, 2]);
        assert_eq!(generations[..], [1, 65535, 2]);
        let atomic = generations.as_atomic();
        assert_eq!(atomic[1].load(std::sync::atomic::Ordering::Relaxed), 65535);

        // Empty arrays have empty views, of every type.
        let empty = HugeArray::zeroed(0);
        assert!(empty.as_i8().is_empty() && empty.as_atomic_u64().is_empty());
        assert!(Values::try_zeroed(0).unwrap().is_empty());
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
