//! Lookups into values shared out among the ranks: each rank asks the
//! owners of the keys it needs and answers what the others ask of its own,
//! in one round of two exchanges (the keys out, the answers back).

use rayon::prelude::*;

use super::Ranks;

/// What a rank holds of values shared out: which rank holds each key, and
/// the answer to a key this rank holds.
pub trait Held: Sync {
    /// The rank that holds `key`.
    fn owner(&self, key: u64) -> usize;

    /// The answer to `key`, which this rank holds.
    fn answer(&self, key: u64) -> u64;

    /// Asks the cache for what [`Held::answer`] of `key` will read (a hint:
    /// the answers are read at random, a few keys ahead).
    fn prefetch(&self, _key: u64) {}
}

/// Keys whose answers are asked of the cache ahead of reading them.
const AHEAD: usize = 8;

/// The answer to each of `keys`, in order, found in one round with the
/// other ranks, who ask theirs meanwhile: a key this rank holds is
/// answered here, the others are asked of the ranks that hold them
/// ([`Held::owner`]), which answer them in turn. A key repeated in a row
/// is asked once.
///
/// Every rank calls it in the same round (with no keys, to answer only).
///
/// # Panics
/// When [`Held::owner`] names no rank, or [`Held::answer`] panics on a key
/// it is asked.
pub fn ask_owners(ranks: &dyn Ranks, keys: &[u64], held: &impl Held) -> Vec<u64> {
    let me = ranks.rank();
    // 1. By key: its owner, or none for a repeat of the key before it; and
    // the keys each other rank holds, in order.
    let mut owners = Vec::with_capacity(keys.len());
    let mut asks = vec![Vec::new(); ranks.size()];
    let mut last = None;
    for &key in keys {
        if last == Some(key) {
            owners.push(REPEAT);
            continue;
        }
        last = Some(key);
        let owner = held.owner(key);
        owners.push(owner);
        if owner != me {
            asks[owner].push(key);
        }
    }
    // 2. What the others ask, answered here.
    let asked = ranks.exchange(asks);
    let answers = asked
        .into_iter()
        .map(|keys| answer_all(held, &keys))
        .collect();
    let answered = ranks.exchange(answers);
    // 3. Each key's answer: this rank's found here, the others' taken from
    // their owners' answers in the order asked.
    let mut taken = vec![0usize; ranks.size()];
    let mut found: Vec<u64> = Vec::with_capacity(keys.len());
    for (k, (&key, &owner)) in keys.iter().zip(&owners).enumerate() {
        if let Some(&ahead) = keys.get(k + AHEAD) {
            if owners[k + AHEAD] == me {
                held.prefetch(ahead);
            }
        }
        let a = match owner {
            REPEAT => *found.last().expect("a repeat follows its key"),
            o if o == me => held.answer(key),
            o => {
                taken[o] += 1;
                answered[o][taken[o] - 1]
            }
        };
        found.push(a);
    }
    debug_assert!(taken.iter().zip(&answered).all(|(&t, a)| t == a.len()));
    found
}

/// A key that repeats the one before it (step 1 of [`ask_owners`]).
const REPEAT: usize = usize::MAX;

/// The answers to `keys`, which this rank holds, in parallel pieces, each
/// asking the cache a few keys ahead.
fn answer_all(held: &impl Held, keys: &[u64]) -> Vec<u64> {
    keys.par_chunks(1 << 12)
        .flat_map_iter(|piece| {
            piece.iter().enumerate().map(move |(k, &key)| {
                if let Some(&ahead) = piece.get(k + AHEAD) {
                    held.prefetch(ahead);
                }
                held.answer(key)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::threads::ThreadRank;
    use crate::cluster::OneProcess;

    #[test]
    fn every_key_is_answered_by_its_owner_in_the_order_asked() {
        // Keys 0..300 owned by key % ranks; the answer says who gave it.
        for size in 1..=3 {
            let found: Vec<Vec<u64>> = std::thread::scope(|s| {
                let handles: Vec<_> = ThreadRank::job(size)
                    .into_iter()
                    .map(|rank| {
                        s.spawn(move || {
                            let me = rank.rank() as u64;
                            // Each rank asks a different, repeating list.
                            let keys: Vec<u64> =
                                (0..300).map(|k| (k * (me + 7) / 2) % 300).collect();
                            ask_owners(&rank, &keys, &ByRemainder { size, me })
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (me, found) in found.iter().enumerate() {
                let keys = (0..300).map(|k| (k * (me as u64 + 7) / 2) % 300);
                for (key, a) in keys.zip(found) {
                    assert_eq!(*a, key * 1000 + key % size as u64, "{size} ranks");
                }
            }
        }
        let alone = ByRemainder { size: 1, me: 0 };
        assert_eq!(
            ask_owners(&OneProcess, &[5, 5, 6], &alone),
            [5000, 5000, 6000]
        );
    }

    /// Key k held by rank k % size, whose answer says who gave it.
    struct ByRemainder {
        size: usize,
        me: u64,
    }

    impl Held for ByRemainder {
        fn owner(&self, key: u64) -> usize {
            (key % self.size as u64) as usize
        }

        fn answer(&self, key: u64) -> u64 {
            key * 1000 + self.me
        }
    }
}
