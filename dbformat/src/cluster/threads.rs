//! Ranks as threads of one process: each rank a thread, each collective
//! operation a meeting of the threads at a barrier. What MPI adds
//! (processes, a network) is left out; what the ranks do together is all
//! here, so that the code that runs under `mpirun` can be tested in any
//! test run, without MPI ([`ThreadRank::job`]). A message from one rank to
//! another goes to a queue of the receiver's. A rank that panics breaks
//! the job: the others panic at their next meeting or wait for a message,
//! as `mpirun` takes a job down when a rank dies.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::{Message, Ranks, Tag};

/// Where the ranks of one job meet: what each leaves for the others.
struct Meeting {
    gate: Gate,
    /// By rank: the numbers it gives to a gathering.
    numbers: Mutex<Vec<Vec<u64>>>,
    /// By sender, then receiver: what an exchange sends.
    words: Mutex<Vec<Vec<Vec<u64>>>>,
    bytes: Mutex<Vec<Vec<Vec<u8>>>>,
    /// By receiver: the messages sent to it and not taken yet.
    queues: Vec<Queue>,
}

/// The messages sent to one rank, and where it waits for them.
#[derive(Default)]
struct Queue {
    messages: Mutex<VecDeque<Message>>,
    arrived: Condvar,
}

/// One rank of a job of threads: give each to its own thread.
pub struct ThreadRank {
    rank: usize,
    size: usize,
    meeting: Arc<Meeting>,
}

impl ThreadRank {
    /// The ranks of a job of `size` threads.
    pub fn job(size: usize) -> Vec<ThreadRank> {
        let meeting = Arc::new(Meeting {
            gate: Gate::default(),
            numbers: Mutex::new(vec![Vec::new(); size]),
            words: Mutex::new(vec![vec![Vec::new(); size]; size]),
            bytes: Mutex::new(vec![vec![Vec::new(); size]; size]),
            queues: (0..size).map(|_| Queue::default()).collect(),
        });
        (0..size)
            .map(|rank| ThreadRank {
                rank,
                size,
                meeting: meeting.clone(),
            })
            .collect()
    }

    /// Leaves `outgoing` in `slots`, and takes what the others left for
    /// this rank, once all have left theirs.
    fn swap<T: Default>(&self, slots: &Mutex<Vec<Vec<T>>>, outgoing: Vec<T>) -> Vec<T> {
        assert_eq!(outgoing.len(), self.size);
        lock(slots)[self.rank] = outgoing;
        self.meeting.gate.wait(self.size);
        let received = {
            let mut slots = lock(slots);
            (0..self.size)
                .map(|from| std::mem::take(&mut slots[from][self.rank]))
                .collect()
        };
        // (No one leaves the next exchange's before all have taken this one.)
        self.meeting.gate.wait(self.size);
        received
    }
}

impl Ranks for ThreadRank {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn sums(&self, xs: &[u64]) -> Vec<u64> {
        let all = self.all_gather(xs);
        (0..xs.len())
            .map(|i| all.iter().skip(i).step_by(xs.len()).sum())
            .collect()
    }

    fn exchange(&self, outgoing: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        self.swap(&self.meeting.words, outgoing)
    }

    fn exchange_bytes(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        self.swap(&self.meeting.bytes, outgoing)
    }

    fn all_gather(&self, numbers: &[u64]) -> Vec<u64> {
        lock(&self.meeting.numbers)[self.rank] = numbers.to_vec();
        self.meeting.gate.wait(self.size);
        let all = lock(&self.meeting.numbers).concat();
        self.meeting.gate.wait(self.size);
        all
    }

    fn all_gather_bytes(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let outgoing = vec![bytes.to_vec(); self.size];
        self.exchange_bytes(outgoing)
    }

    fn send(&self, to: usize, tag: Tag, words: Vec<u64>) {
        assert!(to != self.rank && to < self.size && !words.is_empty());
        let queue = &self.meeting.queues[to];
        lock(&queue.messages).push_back(Message {
            from: self.rank,
            tag,
            words,
        });
        queue.arrived.notify_all();
    }

    fn try_receive(&self) -> Option<Message> {
        lock(&self.meeting.queues[self.rank].messages).pop_front()
    }

    /// # Panics
    /// When a rank of the job panicked.
    fn receive(&self) -> Message {
        let queue = &self.meeting.queues[self.rank];
        let mut messages = lock(&queue.messages);
        loop {
            if let Some(message) = messages.pop_front() {
                return message;
            }
            assert!(
                !self.meeting.gate.is_broken(),
                "another rank of the job failed"
            );
            // (Woken by a message, or now and then to see whether the job
            // broke.)
            let wait = std::time::Duration::from_millis(100);
            messages = queue
                .arrived
                .wait_timeout(messages, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// (A message is in its receiver's queue as soon as it is sent.)
    fn settle(&self) {}

    /// The bytes of the messages this rank sent that their receivers have
    /// not taken yet.
    fn unsettled_bytes(&self) -> u64 {
        let mut bytes = 0;
        for queue in &self.meeting.queues {
            let messages = lock(&queue.messages);
            let mine = messages.iter().filter(|m| m.from == self.rank);
            bytes += mine.map(|m| 8 * m.words.len() as u64).sum::<u64>();
        }
        bytes
    }
}

impl Drop for ThreadRank {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.meeting.gate.break_job();
        }
    }
}

/// Where the threads of a job wait for each other (a barrier that a rank
/// that panics breaks).
#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
    turn: Condvar,
}

#[derive(Default)]
struct GateState {
    /// The threads waiting for this meeting.
    waiting: usize,
    /// The meetings held so far.
    meetings: u64,
    /// A rank panicked.
    broken: bool,
}

impl Gate {
    /// Waits until all `size` threads are here.
    ///
    /// # Panics
    /// When a rank of the job panicked.
    fn wait(&self, size: usize) {
        let mut state = lock(&self.state);
        assert!(!state.broken, "another rank of the job failed");
        let meeting = state.meetings;
        state.waiting += 1;
        if state.waiting == size {
            state.waiting = 0;
            state.meetings += 1;
            self.turn.notify_all();
            return;
        }
        while state.meetings == meeting && !state.broken {
            state = self.turn.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        assert!(!state.broken, "another rank of the job failed");
    }

    /// True when a rank of the job panicked.
    fn is_broken(&self) -> bool {
        lock(&self.state).broken
    }

    /// A rank panicked: the others stop at their next meeting.
    fn break_job(&self) {
        lock(&self.state).broken = true;
        self.turn.notify_all();
    }
}

/// `mutex` locked, even if a rank panicked while holding it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
