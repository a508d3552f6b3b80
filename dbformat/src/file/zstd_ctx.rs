//! Per-thread zstd contexts, so that compressing or decompressing a block does
//! not allocate a new context each time (a level-19 context is megabytes).

use crate::error::{malformed, Malformed};
use std::cell::RefCell;

thread_local! {
    static COMPRESSOR: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Compresses `data` at zstd level `level` with this thread's context.
///
/// # Errors
/// The zstd error, as an I/O error (only on allocation failure in practice).
pub fn compress(data: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let stale = match slot.as_ref() {
            Some((l, _)) => *l != level,
            None => true,
        };
        if stale {
            *slot = Some((level, zstd::bulk::Compressor::new(level)?));
        }
        let (_, compressor) = slot.as_mut().expect("set above");
        compressor.compress(data)
    })
}

/// Decompresses one zstd frame into `out`, which must be exactly as long as
/// the frame's content; returns a description of the problem otherwise.
pub fn decompress_exact(frame: &[u8], out: &mut [u8]) -> Result<(), Malformed> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new().map_err(|e| malformed!("{e}"))?);
        }
        let decompressor = slot.as_mut().expect("set above");
        let expected = out.len();
        match decompressor.decompress_to_buffer(frame, out) {
            Ok(n) if n == expected => Ok(()),
            Ok(n) => Err(malformed!("decompresses to {n} bytes, expected {expected}")),
            Err(e) => Err(malformed!("does not decompress ({e})")),
        }
    })
}

/// Drops the zstd contexts of every thread of the current rayon pool (and of
/// the calling thread), giving their memory back: a compressing context of
/// a high level holds tens of megabytes, which a long build would otherwise
/// carry into the next level's solve.
pub fn release_contexts() {
    let release = || {
        COMPRESSOR.with(|cell| cell.borrow_mut().take());
        DECOMPRESSOR.with(|cell| cell.borrow_mut().take());
    };
    rayon::broadcast(|_| release());
    release();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_released_are_made_again() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let first = compress(&data, 19).unwrap();
        release_contexts();
        COMPRESSOR.with(|cell| assert!(cell.borrow().is_none(), "released"));
        assert_eq!(compress(&data, 19).unwrap(), first);
        let mut out = vec![0; data.len()];
        decompress_exact(&first, &mut out).unwrap();
        release_contexts();
        decompress_exact(&first, &mut out).unwrap();
        assert_eq!(out, data);
    }
}
