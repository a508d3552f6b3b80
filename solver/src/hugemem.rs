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

    /// The bytes as atomics, for updates shared between threads.
    pub fn as_atomic_u8(&self) -> &[AtomicU8] {
        // SAFETY: AtomicU8 has the size and alignment of u8, and every access to
        // the array while this borrow lives goes through the atomics.
        unsafe { std::slice::from_raw_parts(self.as_ptr().cast::<AtomicU8>(), self.len) }
    }

    /// The bytes as signed atomics.
    pub fn as_atomic_i8(&self) -> &[AtomicI8] {
        // SAFETY: as for `as_atomic_u8`; AtomicI8 has the layout of i8.
        unsafe { std::slice::from_raw_parts(self.as_ptr().cast::<AtomicI8>(), self.len) }
    }

    /// The bytes as `len / 2` 16-bit atomics (native byte order).
    pub fn as_atomic_u16(&self) -> &[AtomicU16] {
        // SAFETY: the memory is page aligned (or the slice empty), AtomicU16 has
        // the layout of u16, and every access while this borrow lives goes
        // through the atomics.
        let ptr = self.as_ptr().cast::<AtomicU16>();
        assert!(self.len == 0 || ptr.is_aligned());
        unsafe { std::slice::from_raw_parts(ptr, self.len / 2) }
    }

    /// The bytes as `len / 8` 64-bit atomics (native byte order; a tail of fewer
    /// than 8 bytes is left out), for reading eight bytes at once.
    pub fn as_atomic_u64(&self) -> &[AtomicU64] {
        // SAFETY: the memory is page aligned (or the slice empty) and AtomicU64
        // has the layout of u64.
        let ptr = self.as_ptr().cast::<AtomicU64>();
        assert!(self.len == 0 || ptr.is_aligned());
        unsafe { std::slice::from_raw_parts(ptr, self.len / 8) }
    }

    /// The bytes as `len / 2` 16-bit numbers (native byte order).
    pub fn as_u16(&self) -> &[u16] {
        // SAFETY: as for `as_atomic_u16`.
        let ptr = self.as_ptr().cast::<u16>();
        assert!(self.len == 0 || ptr.is_aligned());
        unsafe { std::slice::from_raw_parts(ptr, self.len / 2) }
    }

    /// The bytes as signed values.
    pub fn as_i8(&self) -> &[i8] {
        // SAFETY: i8 and u8 have the same layout.
        unsafe { std::slice::from_raw_parts(self.as_ptr().cast::<i8>(), self.len) }
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
