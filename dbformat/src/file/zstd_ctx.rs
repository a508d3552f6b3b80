//! Per-thread zstd contexts, so that compressing or decompressing a block does
//! not allocate a new context each time (a level-19 context is megabytes).

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
pub fn decompress_exact(frame: &[u8], out: &mut [u8]) -> Result<(), String> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?);
        }
        let decompressor = slot.as_mut().expect("set above");
        let expected = out.len();
        match decompressor.decompress_to_buffer(frame, out) {
            Ok(n) if n == expected => Ok(()),
            Ok(n) => Err(format!("decompresses to {n} bytes, expected {expected}")),
            Err(e) => Err(format!("does not decompress ({e})")),
        }
    })
}
