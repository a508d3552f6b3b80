//! The end of work the ranks do apart, found without stopping them.
//!
//! The ranks work and send each other messages of work ([`Tag::Updates`]);
//! a rank that has nothing to do waits for one. The work is over when every
//! rank is idle and no message of work is on its way, and no rank can see
//! that alone. The ranks count the messages of work they send and take, and
//! rank 0 sends waves of probes ([`Tag::Probe`]): a rank answers one
//! ([`Tag::Reply`]) with its two counts, and only while it is idle. When
//! two waves in a row give the same totals, and as many messages were
//! taken as sent, the work is over (Mattern's four-counter method, 1987):
//! a message taken after the first wave's answer would have been sent by a
//! rank that was at work after its own first answer, so it would have
//! been counted by the second wave. Rank 0 then tells every rank
//! ([`Tag::Done`]).
//!
//! A wave costs one message to each rank and one back, and the ranks never
//! wait for it: they answer between two pieces of work.

use super::{Message, Ranks, Tag};

/// The messages of work a rank has sent and taken so far, as a rank tells
/// them in a reply.
type Counts = [u64; 2];

/// One rank's part in finding the end of the work ([module docs](self)).
#[derive(Debug, Default)]
pub struct Termination {
    /// Messages of work this rank sent, and took.
    counts: Counts,
    /// Rank 0 asked for the counts, and this rank has not answered yet.
    asked: bool,
    /// On rank 0: the wave under way, the counts of each rank that
    /// answered (rank 0's own when it was idle).
    wave: Option<Vec<Option<Counts>>>,
    /// On rank 0: the totals of the last complete wave.
    last: Option<Counts>,
    /// The work is over.
    done: bool,
}

impl Termination {
    /// No message counted, no wave under way.
    pub fn new() -> Termination {
        Termination::default()
    }

    /// Counts a message of work this rank sent.
    pub fn sent(&mut self) {
        self.counts[0] += 1;
    }

    /// Counts a message of work this rank took.
    pub fn taken(&mut self) {
        self.counts[1] += 1;
    }

    /// Takes `message` if it belongs to the search for the end (a probe, a
    /// reply or the end itself), and returns whether it did. Messages of
    /// work are left to the caller, who counts them ([`Termination::taken`]).
    pub fn take(&mut self, message: &Message) -> bool {
        match message.tag {
            Tag::Updates => return false,
            Tag::Probe => self.asked = true,
            Tag::Reply => {
                let counts = [message.words[0], message.words[1]];
                let wave = self.wave.as_mut().expect("a reply answers a wave");
                wave[message.from] = Some(counts);
            }
            Tag::Done => self.done = true,
        }
        true
    }

    /// This rank is idle: it has no work, and took every message that had
    /// arrived. Answers rank 0's probe, if it asked; on rank 0, counts
    /// itself in the wave, and starts the next when one is complete, or
    /// ends the work. Returns whether the work is over (then the caller
    /// stops; every message of work has been taken).
    pub fn idle(&mut self, ranks: &dyn Ranks) -> bool {
        if self.done {
            return true;
        }
        if !ranks.is_root() {
            if std::mem::take(&mut self.asked) {
                ranks.send(0, Tag::Reply, self.counts.to_vec());
            }
            return false;
        }
        loop {
            let wave = self.wave.get_or_insert_with(|| {
                for r in 1..ranks.size() {
                    ranks.send(r, Tag::Probe, vec![0]);
                }
                vec![None; ranks.size()]
            });
            wave[0].get_or_insert(self.counts);
            let Some(answers) = wave.iter().copied().collect::<Option<Vec<Counts>>>() else {
                return false;
            };
            self.wave = None;
            let totals = answers
                .iter()
                .fold([0, 0], |t, c| [t[0] + c[0], t[1] + c[1]]);
            if totals[0] == totals[1] && self.last == Some(totals) {
                for r in 1..ranks.size() {
                    ranks.send(r, Tag::Done, vec![0]);
                }
                self.done = true;
                return true;
            }
            self.last = Some(totals);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::threads::ThreadRank;

    /// Each rank starts with some tokens of work; working a token may pass
    /// new ones (one fewer hop each time) to other ranks. Every rank must
    /// stop only once every token has been worked, and all must agree.
    #[test]
    fn ranks_stop_only_when_every_message_of_work_is_taken() {
        for size in [2, 3, 4] {
            for seed in 0..20u64 {
                let worked: Vec<u64> = std::thread::scope(|scope| {
                    let handles: Vec<_> = ThreadRank::job(size)
                        .into_iter()
                        .map(|rank| scope.spawn(move || work_tokens(&rank, seed)))
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap()).collect()
                });
                // Tokens are made by a fixed rule, so their number is known:
                // each rank starts with 3 tokens of 5 hops, and a token of h
                // hops makes two of h - 1.
                let per_start: u64 = (0..=5).map(|h| 1u64 << h).sum();
                assert_eq!(
                    worked.iter().sum::<u64>(),
                    3 * size as u64 * per_start,
                    "{size} ranks, seed {seed}: {worked:?}"
                );
            }
        }
    }

    /// Works tokens on `rank` until the end is found; returns the tokens
    /// worked here.
    fn work_tokens(rank: &ThreadRank, seed: u64) -> u64 {
        let mut end = Termination::new();
        let mut todo: Vec<u64> = vec![5; 3];
        let mut worked = 0;
        let mut random = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (rank.rank() as u64 + 1);
        let mut next = move || {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            random
        };
        // A message of work brings one token.
        let take = |end: &mut Termination, todo: &mut Vec<u64>, message: Message| {
            if !end.take(&message) {
                end.taken();
                todo.extend(message.words);
            }
        };
        loop {
            while let Some(message) = rank.try_receive() {
                take(&mut end, &mut todo, message);
            }
            if let Some(hops) = todo.pop() {
                worked += 1;
                if hops > 0 {
                    for _ in 0..2 {
                        let to =
                            (rank.rank() + 1 + next() as usize % (rank.size() - 1)) % rank.size();
                        rank.send(to, Tag::Updates, vec![hops - 1]);
                        end.sent();
                    }
                }
                if next() % 4 == 0 {
                    std::thread::yield_now();
                }
                continue;
            }
            if end.idle(rank) {
                break;
            }
            take(&mut end, &mut todo, rank.receive());
        }
        assert!(todo.is_empty(), "rank {} stopped with work", rank.rank());
        assert!(rank.try_receive().is_none(), "a message left behind");
        rank.settle();
        worked
    }
}
