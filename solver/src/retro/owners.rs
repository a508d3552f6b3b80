//! Captures looked up in lower levels shared out among the ranks of an MPI
//! job ([`awari_dbformat::cluster::Shares`]): each rank holds a share of
//! every lower level, so the children a window of its captures reaches are
//! asked of the ranks that hold them, and it answers what the others ask of
//! its own shares. One *round* is two exchanges, the children out and their
//! scores back; every rank takes part in every round (they are collective),
//! with an empty window once it has none left ([`answer_until_all_done`]).
//!
//! Where the shares are files, the children go sorted (the windows sort
//! their lookups by child): each distinct child is asked once, and the
//! owner reads its share in order. Where they are in memory, the windows
//! are not sorted and the owner reads at random, as fast there: a child
//! asked by consecutive lookups is still asked once.

use awari_dbformat::cluster::Ranks;
use awari_dbformat::Levels;
use rayon::prelude::*;

use super::init::split_key;

/// The score of each of `children` (keys of `super::init`'s lookups:
/// [`super::init::child_key`]; sorted, or in any order for shares in
/// memory), in one
/// round with the other ranks, who ask theirs meanwhile: the children in
/// this rank's shares of `lower` are read here, the others asked of their
/// owners; what the others ask is read from this rank's shares.
///
/// Every rank calls it in the same round.
///
/// # Panics
/// When a child's level is not held, or (asked by another rank) a child
/// lies outside this rank's share of it.
pub(crate) fn children_scores(
    ranks: &dyn Ranks,
    lower: &Levels,
    children: impl Iterator<Item = u64> + Clone,
) -> Vec<i8> {
    let me = ranks.rank();
    // 1. The distinct children each other rank holds, in order.
    let mut asks = vec![Vec::new(); ranks.size()];
    let mut last = None;
    for child in children.clone() {
        if last != Some(child) {
            last = Some(child);
            let owner = owner_of(lower, child);
            if owner != me {
                asks[owner].push(child);
            }
        }
    }
    // 2. What the others ask, answered from this rank's shares.
    let asked = ranks.exchange(asks);
    let answers = asked
        .into_iter()
        .map(|keys| keys.par_iter().map(|&k| score_at(lower, k) as u8).collect())
        .collect();
    let answered = ranks.exchange_bytes(answers);
    // 3. Each child's score: this rank's read here, the others' taken from
    // their owners' answers in the order asked.
    let mut taken = vec![0usize; ranks.size()];
    let mut scores = Vec::with_capacity(children.size_hint().0);
    let mut last: Option<(u64, i8)> = None;
    for child in children {
        let score = match last {
            Some((c, score)) if c == child => score,
            _ => {
                let owner = owner_of(lower, child);
                let score = if owner == me {
                    score_at(lower, child)
                } else {
                    let score = answered[owner][taken[owner]] as i8;
                    taken[owner] += 1;
                    score
                };
                last = Some((child, score));
                score
            }
        };
        scores.push(score);
    }
    debug_assert!(taken.iter().zip(&answered).all(|(&t, a)| t == a.len()));
    scores
}

/// Takes part in rounds of [`children_scores`] with nothing to ask,
/// answering the other ranks, until no rank has anything left to ask (each
/// round starts with [`more_to_ask`]).
pub(super) fn answer_until_all_done(ranks: &dyn Ranks, lower: &Levels) {
    while more_to_ask(ranks, false) {
        children_scores(ranks, lower, std::iter::empty());
    }
}

/// Whether any rank has a window to ask about in this round (`mine`: this
/// one has): the start of every round, on every rank.
pub(crate) fn more_to_ask(ranks: &dyn Ranks, mine: bool) -> bool {
    ranks.sum(u64::from(mine)) > 0
}

/// The rank that holds `child`.
#[inline]
fn owner_of(lower: &Levels, child: u64) -> usize {
    let (level, i) = split_key(child);
    lower.owner(level, i)
}

/// The score of `child`, held by this rank.
#[inline]
fn score_at(lower: &Levels, child: u64) -> i8 {
    let (level, i) = split_key(child);
    lower.slot_at(level, i).score().get()
}
