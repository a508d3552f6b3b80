//! One number per board of a level, in index order, in huge pages: a level's
//! [`Values`] (what the solver finds and the file stores) and a certificate's
//! [`Generations`].

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::AtomicU16;

use crate::memory::huge::HugeArray;

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

    /// Whether the numbers are a file's mapping, read through the page
    /// cache ([`HugeArray::is_from_file`]), rather than held in memory.
    pub fn is_from_file(&self) -> bool {
        self.array.is_from_file()
    }

    /// Advises the kernel that the numbers of boards `range` are read soon
    /// ([`HugeArray::will_need`]).
    pub fn will_need(&self, range: std::ops::Range<u64>) {
        let size = std::mem::size_of::<T>();
        self.array
            .will_need(range.start as usize * size..range.end as usize * size);
    }

    /// Reads the numbers of boards `range` into memory now
    /// ([`HugeArray::populate`]).
    pub fn populate(&self, range: std::ops::Range<u64>) {
        let size = std::mem::size_of::<T>();
        self.array
            .populate(range.start as usize * size..range.end as usize * size);
    }

    /// Reads the numbers of boards `range` into the page cache now, not
    /// mapped ([`HugeArray::cache`]).
    pub fn cache(&self, range: std::ops::Range<u64>) {
        let size = std::mem::size_of::<T>();
        self.array
            .cache(range.start as usize * size..range.end as usize * size);
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
        assert!(Values::try_zeroed(0).unwrap().is_empty());
    }
}
