//! Large zeroed arrays backed by anonymous memory with transparent huge pages
//! requested (`madvise(MADV_HUGEPAGE)`).
//!
//! The solver touches its per-board state and the lower levels at random; with
//! 4 KiB pages nearly every access also misses the TLB. architecture.md measured
//! random byte updates at ~41 M/s with normal pages and ~68 M/s with huge pages
//! on this machine, so every large array of the solver lives in one of these.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicI8, AtomicU16, AtomicU64, AtomicU8};

use memmap2::{Advice, MmapMut};

/// A zeroed byte array of fixed length, in huge pages where the system allows.
pub struct HugeArray {
    map: Option<MmapMut>,
    len: usize,
}

impl HugeArray {
    /// `len` zero bytes.
    ///
    /// # Panics
    /// When the system refuses the memory (the build checks the budget first).
    pub fn zeroed(len: usize) -> HugeArray {
        if len == 0 {
            return HugeArray { map: None, len };
        }
        let map = MmapMut::map_anon(len).expect("anonymous memory for the solver state");
        // Advice only: where huge pages are unavailable the array still works.
        let _ = map.advise(Advice::HugePage);
        HugeArray {
            map: Some(map),
            len,
        }
    }

    /// A copy of `values` in huge pages.
    pub fn copy_of(values: &[i8]) -> HugeArray {
        let mut array = HugeArray::zeroed(values.len());
        for (d, &s) in array.iter_mut().zip(values) {
            *d = s as u8;
        }
        array
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

    /// The bytes as `len / 2` 16-bit atomics (native byte order).
    pub fn as_atomic_u16(&self) -> &[AtomicU16] {
        // SAFETY: as above.
        unsafe { self.view() }
    }

    /// The bytes as `len / 8` 64-bit atomics (native byte order), for reading
    /// eight bytes at once.
    pub fn as_atomic_u64(&self) -> &[AtomicU64] {
        // SAFETY: as above.
        unsafe { self.view() }
    }

    /// The bytes as `len / 2` 16-bit numbers (native byte order).
    pub fn as_u16(&self) -> &[u16] {
        // SAFETY: an integer is valid for any bits.
        unsafe { self.view() }
    }

    /// The bytes as signed values.
    pub fn as_i8(&self) -> &[i8] {
        // SAFETY: as above.
        unsafe { self.view() }
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

/// The values of a solved level, one signed byte per board in index order, kept
/// in huge pages because later levels read them at random.
pub struct Values(HugeArray);

impl Values {
    /// A copy of `values`.
    pub fn copy_of(values: &[i8]) -> Values {
        Values(HugeArray::copy_of(values))
    }

    /// Takes over an array of value bytes.
    pub fn from_array(array: HugeArray) -> Values {
        Values(array)
    }
}

impl Deref for Values {
    type Target = [i8];
    fn deref(&self) -> &[i8] {
        self.0.as_i8()
    }
}

/// The generation in which each board of a solved level was decided (within its
/// threshold stage), one `u16` per board in index order: the content of a
/// certificate file ([`awari_dbformat::file::certificate`]).
pub struct Generations(HugeArray);

impl Generations {
    /// Zero for each of `boards` boards.
    pub fn zeroed(boards: u64) -> Generations {
        Generations(HugeArray::zeroed(2 * boards as usize))
    }

    /// The entries as atomics, for the solver's threads.
    pub fn as_atomic(&self) -> &[AtomicU16] {
        self.0.as_atomic_u16()
    }
}

impl Deref for Generations {
    type Target = [u16];
    fn deref(&self) -> &[u16] {
        self.0.as_u16()
    }
}
