//! [`Ranks`] over MPI (the `mpi` crate on the system's OpenMPI): the ranks
//! of `mpirun -n R awari-solve ...`.
//!
//! The operations are MPI collectives, called by the thread that drives the
//! solve ([`Threading::Funneled`]; the rayon workers never call MPI). Their
//! callers keep each message within MPI's `int` counts (large arrays go to
//! rank 0 in pieces: [`super::send_to_root_in_order`]).
//!
//! Messages outside the collectives ([`Ranks::send`]) are MPI's immediate
//! sends: each keeps its words until its receiver took them, and the
//! receiver finds them by probing any rank.
//!
//! A rank that dies takes the job down: OpenMPI's default error handler
//! aborts every rank, and `mpirun` names the one that failed. The levels
//! written before stay, and the same command resumes from them.

use std::cell::{Cell, RefCell};
use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::{Threading, Universe};
use mpi::point_to_point::{MatchedReceiveVec, Message as Matched, Status};
use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

use super::{Message, RankFigures, Ranks, Tag};

/// The ranks of the MPI job this process belongs to.
pub struct MpiRanks {
    world: SimpleCommunicator,
    /// The traffic so far (`boards` and `updates_sent` unused).
    traffic: Cell<RankFigures>,
    /// The messages sent that their receivers may not have taken yet.
    in_flight: RefCell<Vec<InFlight>>,
    // Dropped last: finalizes MPI.
    _universe: Universe,
}

/// A message sent, until it is known to be taken: its request, and its
/// words (a box of this process's, which MPI reads until then).
struct InFlight {
    request: Request<'static, [u64], StaticScope>,
    words: *mut [u64],
}

impl InFlight {
    /// Sends `words` to `to`, tagged `tag`.
    fn send(world: &SimpleCommunicator, to: usize, tag: Tag, words: Vec<u64>) -> InFlight {
        let words = Box::into_raw(words.into_boxed_slice());
        // SAFETY: the box lives until the request completes (`free`).
        let buffer: &'static [u64] = unsafe { &*words };
        let to = world.process_at_rank(to as i32);
        let request = to.immediate_send_with_tag(StaticScope, buffer, tag as i32);
        InFlight { request, words }
    }

    /// Whether the receiver took it: then its words are let go, else it is
    /// given back.
    fn test(self) -> Result<(), InFlight> {
        let InFlight { request, words } = self;
        match request.test() {
            Ok(_) => {
                free(words);
                Ok(())
            }
            Err(request) => Err(InFlight { request, words }),
        }
    }

    /// Waits until the receiver took it, and lets go of its words.
    fn wait(self) {
        let InFlight { request, words } = self;
        request.wait_without_status();
        free(words);
    }
}

/// Lets go of the words of a completed send.
fn free(words: *mut [u64]) {
    // SAFETY: made by `Box::into_raw` in `InFlight::send`, and the request
    // that read them is complete (MPI no longer reads them).
    drop(unsafe { Box::from_raw(words) });
}

impl MpiRanks {
    /// Initializes MPI, or `None` when it was initialized already or the
    /// library cannot let other threads run beside the one calling it.
    pub fn initialize() -> Option<MpiRanks> {
        let (universe, threading) = mpi::initialize_with_threading(Threading::Funneled)?;
        if threading < Threading::Funneled {
            return None;
        }
        let world = universe.world();
        // A rank that panics must take the job down, as one that dies does:
        // unwound, it would wait in `MPI_Finalize` while the others wait
        // for it at their next collective, for ever.
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            report(info);
            std::process::abort();
        }));
        Some(MpiRanks {
            traffic: Cell::new(RankFigures {
                rank: world.rank() as u64,
                ..RankFigures::default()
            }),
            in_flight: RefCell::new(Vec::new()),
            world,
            _universe: universe,
        })
    }

    /// Runs the collective `f`, counting its time as waiting.
    fn timed<R>(&self, f: impl FnOnce() -> R) -> R {
        let started = Instant::now();
        let result = f();
        self.count(|t| t.seconds_waiting += started.elapsed().as_secs_f64());
        result
    }

    /// Sends `outgoing[r]` to rank `r` and returns what each rank sent this
    /// one, by rank: first how many each sends each (one all-to-all), then
    /// the items themselves (one all-to-all of varying counts).
    fn exchange_of<T: Equivalence + Copy + Default>(&self, outgoing: Vec<Vec<T>>) -> Vec<Vec<T>> {
        let size = self.size();
        debug_assert_eq!(outgoing.len(), size);
        let count = |n: usize| {
            Count::try_from(n).expect("fewer than 2^31 items for one rank in one exchange")
        };
        let send_counts: Vec<Count> = outgoing.iter().map(|o| count(o.len())).collect();
        let mut receive_counts = vec![0 as Count; size];
        self.timed(|| {
            self.world
                .all_to_all_into(&send_counts[..], &mut receive_counts[..])
        });
        let nonempty = |counts: &[Count]| counts.iter().filter(|&&n| n > 0).count() as u64;
        let width = std::mem::size_of::<T>() as u64;
        let bytes = |counts: &[Count]| width * counts.iter().map(|&n| n as u64).sum::<u64>();
        self.count(|t| {
            t.messages_sent += nonempty(&send_counts);
            t.messages_received += nonempty(&receive_counts);
            t.bytes_sent += bytes(&send_counts);
            t.bytes_received += bytes(&receive_counts);
        });
        // (Never an empty vector's dangling pointer: for bytes it is 1,
        // which OpenMPI takes for `MPI_IN_PLACE`.)
        let total_sent = send_counts.iter().map(|&n| n as usize).sum::<usize>();
        let mut send: Vec<T> = Vec::with_capacity(total_sent.max(1));
        for o in &outgoing {
            send.extend_from_slice(o);
        }
        let send_displacements = displacements(&send_counts);
        let receive_displacements = displacements(&receive_counts);
        let total = receive_counts.iter().map(|&n| n as usize).sum();
        let mut received = Vec::with_capacity(usize::max(total, 1));
        received.resize(total, T::default());
        {
            let sent = Partition::new(&send[..], &send_counts[..], &send_displacements[..]);
            let mut into = PartitionMut::new(
                &mut received[..],
                &receive_counts[..],
                &receive_displacements[..],
            );
            self.timed(|| self.world.all_to_all_varcount_into(&sent, &mut into));
        }
        (0..size)
            .map(|r| {
                let at = receive_displacements[r] as usize;
                received[at..at + receive_counts[r] as usize].to_vec()
            })
            .collect()
    }

    /// Adds to the traffic.
    fn count(&self, add: impl FnOnce(&mut RankFigures)) {
        let mut t = self.traffic.get();
        add(&mut t);
        self.traffic.set(t);
    }

    /// Receives the message `matched` found by a probe (with its status).
    fn take(&self, matched: (Matched, Status)) -> Message {
        let (words, status) = matched.matched_receive_vec::<u64>();
        self.count(|t| {
            t.messages_received += 1;
            t.bytes_received += 8 * words.len() as u64;
        });
        Message {
            from: status.source_rank() as usize,
            tag: Tag::from_number(status.tag()).expect("a tag this program sends"),
            words,
        }
    }

    /// Lets go of the messages sent that their receivers took.
    fn reap(&self) {
        let mut in_flight = self.in_flight.borrow_mut();
        let sent = std::mem::take(&mut *in_flight);
        in_flight.extend(sent.into_iter().filter_map(|m| m.test().err()));
    }
}

impl Drop for MpiRanks {
    fn drop(&mut self) {
        self.settle();
    }
}

impl Ranks for MpiRanks {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn sums(&self, xs: &[u64]) -> Vec<u64> {
        let mut totals = vec![0u64; xs.len()];
        self.timed(|| {
            self.world
                .all_reduce_into(xs, &mut totals[..], SystemOperation::sum())
        });
        totals
    }

    fn all_gather(&self, numbers: &[u64]) -> Vec<u64> {
        let mut all = vec![0u64; numbers.len() * self.size()];
        self.timed(|| self.world.all_gather_into(numbers, &mut all[..]));
        all
    }

    fn all_gather_bytes(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let count = |n: u64| Count::try_from(n).expect("fewer than 2^31 bytes from one rank");
        let lengths = self.all_gather(&[bytes.len() as u64]);
        let counts: Vec<Count> = lengths.iter().map(|&n| count(n)).collect();
        let displacements = displacements(&counts);
        let mut all = vec![0u8; lengths.iter().sum::<u64>() as usize];
        {
            let mut into = PartitionMut::new(&mut all[..], &counts[..], &displacements[..]);
            self.timed(|| self.world.all_gather_varcount_into(bytes, &mut into));
        }
        (0..self.size())
            .map(|r| {
                let at = displacements[r] as usize;
                all[at..at + counts[r] as usize].to_vec()
            })
            .collect()
    }

    fn figures(&self) -> RankFigures {
        self.traffic.get()
    }

    fn exchange(&self, outgoing: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        self.exchange_of(outgoing)
    }

    fn exchange_bytes(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        self.exchange_of(outgoing)
    }

    fn send(&self, to: usize, tag: Tag, words: Vec<u64>) {
        assert!(to != self.rank() && to < self.size() && !words.is_empty());
        Count::try_from(words.len()).expect("fewer than 2^31 words in one message");
        self.reap();
        self.count(|t| {
            t.messages_sent += 1;
            t.bytes_sent += 8 * words.len() as u64;
        });
        let sent = InFlight::send(&self.world, to, tag, words);
        self.in_flight.borrow_mut().push(sent);
    }

    fn try_receive(&self) -> Option<Message> {
        let matched = self.world.any_process().immediate_matched_probe()?;
        Some(self.take(matched))
    }

    fn receive(&self) -> Message {
        let matched = self.timed(|| self.world.any_process().matched_probe());
        self.take(matched)
    }

    fn settle(&self) {
        let in_flight = std::mem::take(&mut *self.in_flight.borrow_mut());
        self.timed(|| in_flight.into_iter().for_each(InFlight::wait));
    }

    fn unsettled_bytes(&self) -> u64 {
        self.reap();
        let in_flight = self.in_flight.borrow();
        in_flight.iter().map(|m| 8 * m.words.len() as u64).sum()
    }
}

/// Where each of a message's parts of `counts` items starts.
fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0, |at, &n| {
            let here = *at;
            *at += n;
            Some(here)
        })
        .collect()
}
