//! `free_large_blocks_at_once` keeps the allocator from holding large freed
//! blocks resident. Alone in its test binary: it changes the allocator of
//! the whole process, and the resident size it measures is the process's.

mod common;
use common::resident_anonymous;

#[test]
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn large_blocks_freed_by_a_worker_thread_stop_being_resident() {
    const MIB: u64 = 1 << 20;
    awari_solver::memory::free_large_blocks_at_once();
    // A large block freed first: left to itself, glibc then raises its
    // thresholds to that size, as after a level's writing.
    drop(std::hint::black_box(vec![1u8; 24 << 20]));
    // Blocks of 2 MiB in a thread of their own (its own glibc heap), written
    // so that they are resident, then freed: what a level's writer leaves.
    let (before, after) = std::thread::spawn(|| {
        let blocks: Vec<Vec<u8>> = (0..16).map(|i| vec![i as u8 | 1; 2 << 20]).collect();
        let before = resident_anonymous();
        drop(blocks);
        (before, resident_anonymous())
    })
    .join()
    .unwrap();
    let (Some(before), Some(after)) = (before, after) else {
        return; // no /proc: nothing to measure
    };
    assert!(
        before >= after + 24 * MIB,
        "resident {} MiB with the blocks, {} MiB once they are freed",
        before / MIB,
        after / MIB
    );
}
