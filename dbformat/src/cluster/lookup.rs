//! Lookups into values shared out among the ranks: each rank asks the
//! owners of the keys it needs and answers what the others ask of its own,
//! in one round of two exchanges (the keys out, the answers back).

use rayon::prelude::*;

use super::Ranks;

/// The answer to each of `keys`, in order, found in one round with the
/// other ranks, who ask theirs meanwhile: a key this rank owns
/// (`owner(key)` is its rank) is answered here by `answer`, the others are
/// asked of their owners, which answer them with the same function. A key
/// repeated in a row is asked once.
///
/// Every rank calls it in the same round (with no keys, to answer only).
///
/// # Panics
/// When `owner` names no rank, or `answer` panics on a key it is asked.
pub fn ask_owners(
    ranks: &dyn Ranks,
    keys: &[u64],
    owner: impl Fn(u64) -> usize,
    answer: impl Fn(u64) -> u64 + Sync,
) -> Vec<u64> {
    let me = ranks.rank();
    // 1. The keys each other rank owns, in order, each run of equal keys once.
    let mut asks = vec![Vec::new(); ranks.size()];
    let mut last = None;
    for &key in keys {
        if last != Some(key) {
            last = Some(key);
            let owner = owner(key);
            if owner != me {
                asks[owner].push(key);
            }
        }
    }
    // 2. What the others ask, answered here.
    let asked = ranks.exchange(asks);
    let answers = asked
        .into_iter()
        .map(|keys| keys.par_iter().map(|&k| answer(k)).collect())
        .collect();
    let answered = ranks.exchange(answers);
    // 3. Each key's answer: this rank's found here, the others' taken from
    // their owners' answers in the order asked.
    let mut taken = vec![0usize; ranks.size()];
    let mut found = Vec::with_capacity(keys.len());
    let mut last: Option<(u64, u64)> = None;
    for &key in keys {
        let a = match last {
            Some((k, a)) if k == key => a,
            _ => {
                let owner = owner(key);
                let a = if owner == me {
                    answer(key)
                } else {
                    let a = answered[owner][taken[owner]];
                    taken[owner] += 1;
                    a
                };
                last = Some((key, a));
                a
            }
        };
        found.push(a);
    }
    debug_assert!(taken.iter().zip(&answered).all(|(&t, a)| t == a.len()));
    found
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
                            let owner = |k: u64| (k % size as u64) as usize;
                            let answer = |k: u64| k * 1000 + me;
                            ask_owners(&rank, &keys, owner, answer)
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
        assert_eq!(
            ask_owners(&OneProcess, &[5, 5, 6], |_| 0, |k| k + 1),
            [6, 6, 7]
        );
    }
}
