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
            return Ok(HugeArray { map: None, len });
        }
        let map = MmapMut::map_anon(len)?;
        // Advice only: where huge pages are unavailable the array still works.
        let _ = map.advise(Advice::HugePage);
        Ok(HugeArray {
            map: Some(map),
            len,
        })
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

    /// The bytes as signed values, to fill in.
    pub fn as_i8_mut(&mut self) -> &mut [i8] {
        // SAFETY: as above.
        unsafe { self.view_mut() }
    }

    /// The bytes as `len / 2` 16-bit numbers (native byte order), to fill in.
    pub fn as_u16_mut(&mut self) -> &mut [u16] {
        // SAFETY: as above.
        unsafe { self.view_mut() }
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
    /// Zero for each of `boards` boards.
    ///
    /// # Errors
    /// The system's error when it refuses the memory.
    pub fn try_zeroed(boards: u64) -> std::io::Result<Values> {
        Ok(Values(HugeArray::try_zeroed(boards as usize)?))
    }

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

impl DerefMut for Values {
    fn deref_mut(&mut self) -> &mut [i8] {
        self.0.as_i8_mut()
    }
}

impl std::fmt::Debug for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Values({} boards)", self.len())
    }
}

/// The generation in which each board of a solved level was decided (within its
/// threshold stage), one `u16` per board in index order: the content of a
/// certificate file ([`crate::file::certificate`]).
pub struct Generations(HugeArray);

impl Generations {
    /// Zero for each of `boards` boards.
    pub fn zeroed(boards: u64) -> Generations {
        Generations(HugeArray::zeroed(2 * boards as usize))
    }

    /// Zero for each of `boards` boards.
    ///
    /// # Errors
    /// The system's error when it refuses the memory.
    pub fn try_zeroed(boards: u64) -> std::io::Result<Generations> {
        Ok(Generations(HugeArray::try_zeroed(2 * boards as usize)?))
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

impl DerefMut for Generations {
    fn deref_mut(&mut self) -> &mut [u16] {
        self.0.as_u16_mut()
    }
}

impl std::fmt::Debug for Generations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Generations({} boards)", self.len())
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
}
