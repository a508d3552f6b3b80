//! `give_back_free_heap` returns freed heap memory to the system. Alone in
//! its test binary: the resident size it measures is the whole process's.

mod common;
use common::resident_anonymous;

#[test]
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn freed_heap_memory_stops_being_resident() {
    const MIB: u64 = 1 << 20;
    // 96 MiB in pieces small enough for the heap (not mapped apart), written
    // so that they are resident, then a small block above them that keeps
    // the heap from shrinking by itself when they are freed: what a level's
    // lists and buffers leave behind.
    let pieces: Vec<Vec<u8>> = (0..96 * 64).map(|i| vec![i as u8 | 1; 16 << 10]).collect();
    let pin = Box::new([7u8; 64]);
    drop(pieces);
    let Some(before) = resident_anonymous() else {
        return; // no /proc: nothing to measure
    };
    awari_solver::memory::give_back_free_heap();
    let after = resident_anonymous().expect("read before");
    assert!(
        before >= after + 32 * MIB,
        "resident {} MiB before, {} MiB after giving back the free heap",
        before / MIB,
        after / MIB
    );
    assert_eq!(pin[63], 7);
}
