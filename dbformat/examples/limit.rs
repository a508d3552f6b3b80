//! The memory-bound limit of this machine for a retrograde solve: random
//! byte read-modify-writes over a large array in huge pages, on every core,
//! in millions a second.
//!
//! A board of a level solve costs about ten such accesses (its captures'
//! children read in lower levels, its parents told in its own level), so a
//! tenth of this figure is the boards per second that a solve with
//! scattered accesses can reach. `scripts/bench-limit.sh` runs it before and
//! after a build and prints the ratio.
//!
//! ```text
//! cargo run --release -p awari-dbformat --example limit -- [GiB] [M updates per thread]
//! ```
//! (defaults 4 and 100: about 5 seconds). Prints one number, M updates/s.

use std::time::Instant;

use awari_dbformat::memory::huge::HugeArray;

fn main() {
    let mut args = std::env::args().skip(1);
    let gib: f64 = args
        .next()
        .map_or(4.0, |a| a.parse().expect("GiB, a number"));
    let millions: u64 = args
        .next()
        .map_or(100, |a| a.parse().expect("M updates, a whole number"));
    let len = (gib * (1u64 << 30) as f64) as usize;
    let mut array = HugeArray::zeroed(len);
    // Touch every page first: the figure is for memory already mapped.
    for page in array.chunks_mut(4096) {
        page[0] = 1;
    }
    let bytes = array.as_atomic_u8();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = millions * 1_000_000;
    let start = Instant::now();
    std::thread::scope(|scope| {
        for t in 0..threads {
            scope.spawn(move || {
                // xorshift64: the places are random, as a solve's parents are.
                let mut x = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(t as u64 + 1);
                for _ in 0..per_thread {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let b = &bytes[(x % len as u64) as usize];
                    // A plain read and write, not an atomic add: the solver's
                    // own updates are of that kind where threads own their
                    // places, and an atomic add would measure the bus lock.
                    let v = b.load(std::sync::atomic::Ordering::Relaxed);
                    b.store(v.wrapping_add(1), std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{:.1}",
        (per_thread * threads as u64) as f64 / seconds / 1e6
    );
}
