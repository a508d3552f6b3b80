//! A cache hint for the hot loops of the solver and the verifier.
//!
//! Both touch a board's bytes anywhere in a level (a parent, a child, a capture's
//! child in a lower level), so each access is a cache miss. They first collect a
//! few such places and [`prefetch`] them, and only then read or update them, so
//! that the misses overlap instead of following one another.

/// Asks the processor to bring the cache line holding `target` closer, without
/// waiting for it. A hint only: it never faults and changes nothing; on targets
/// other than x86-64 it does nothing.
#[inline(always)]
pub fn prefetch<T>(target: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults and reads nothing.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((target as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = target;
}
