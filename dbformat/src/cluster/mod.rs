//! The processes that solve a level together: one ([`OneProcess`]), or the
//! ranks of an MPI job (`mpi::MpiRanks`, with the `mpi` feature).
//!
//! Each rank owns a run of a level's partitions ([`Ranks::owner`]) and works
//! only those; everything the ranks must agree on goes through the few
//! collective operations of [`Ranks`]:
//!
//! - the initial pass reads each capture's child from the lower levels,
//!   which are shared out: each rank holds its share of each ([`Shares`],
//!   the partitions it solved the level in), and a window of lookups sorted
//!   by child is sent to the ranks that hold them, which answer with their
//!   scores ([`Ranks::exchange`], [`Ranks::exchange_bytes`]);
//! - after each generation, the updates for other ranks' partitions are
//!   exchanged ([`Ranks::exchange`]), and the ranks agree on whether any
//!   work is left ([`Ranks::sum`]): the end of a stage is the first round in
//!   which no rank has a frontier and no update was sent;
//! - at the end of a level, each rank keeps its share of the level's values
//!   for the levels above, and the ranks write the level together: each
//!   encodes the blocks of its share and rank 0 appends them to the file
//!   ([`crate::file::shared`], [`send_to_root_in_order`]).
//!
//! The generations are the same as in one process with the same partitions,
//! so the values, the free bits and the certificate are too, and the ranks
//! write the file one process would (the tests compare them byte for byte:
//! under `mpirun`, and with ranks as threads of one process, [`threads`]).
//!
//! Without a certificate, nothing in the files depends on the generation a
//! board is decided in, so the ranks may run their generations apart: each
//! sends its updates as messages of their own ([`Ranks::send`]) and takes
//! those that reach it between two of its generations, and the end of a
//! stage is found by counting the messages ([`Termination`]), with no
//! collective operation in between.

pub mod lookup;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod shares;
pub mod termination;
pub mod threads;

pub use shares::{Shares, SHARE_ALIGN};
pub use termination::Termination;

use serde::{Deserialize, Serialize};

/// What one rank did for a level: its share of the work and of the
/// traffic between ranks (in the level's JSON line, `"ranks"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankFigures {
    /// The rank.
    pub rank: u64,
    /// The boards of its partitions.
    pub boards: u64,
    /// Updates it sent to other ranks' partitions.
    pub updates_sent: u64,
    /// Bytes it sent to other ranks (updates, and its part of the level).
    pub bytes_sent: u64,
    /// Bytes it received from them.
    pub bytes_received: u64,
    /// Non-empty messages it sent to other ranks (of updates, lookups or
    /// their answers), and received.
    pub messages_sent: u64,
    /// (See `messages_sent`.)
    pub messages_received: u64,
    /// Seconds in collective operations: waiting for the other ranks, and
    /// moving the data.
    pub seconds_waiting: f64,
    /// Its peak resident memory (VmHWM) once the level was written: the
    /// most it held so far (0 where unknown, and before it is set).
    #[serde(default)]
    pub peak_resident_bytes: u64,
}

impl RankFigures {
    /// The figures as numbers, for [`Ranks::all_gather`] (seconds in
    /// microseconds).
    fn to_numbers(self) -> [u64; 8] {
        [
            self.rank,
            self.boards,
            self.updates_sent,
            self.bytes_sent,
            self.bytes_received,
            self.messages_sent,
            self.messages_received,
            (self.seconds_waiting * 1e6) as u64,
        ]
    }

    fn from_numbers(n: &[u64]) -> RankFigures {
        RankFigures {
            rank: n[0],
            boards: n[1],
            updates_sent: n[2],
            bytes_sent: n[3],
            bytes_received: n[4],
            messages_sent: n[5],
            messages_received: n[6],
            seconds_waiting: n[7] as f64 / 1e6,
            peak_resident_bytes: 0,
        }
    }

    /// What was done between `before` and `self` (cumulative figures).
    pub fn since(self, before: RankFigures) -> RankFigures {
        RankFigures {
            rank: self.rank,
            boards: self.boards - before.boards,
            updates_sent: self.updates_sent - before.updates_sent,
            bytes_sent: self.bytes_sent - before.bytes_sent,
            bytes_received: self.bytes_received - before.bytes_received,
            messages_sent: self.messages_sent - before.messages_sent,
            messages_received: self.messages_received - before.messages_received,
            seconds_waiting: self.seconds_waiting - before.seconds_waiting,
            peak_resident_bytes: self.peak_resident_bytes,
        }
    }
}

/// Every rank's `figures`, by rank, on every rank.
pub fn gather_figures(ranks: &dyn Ranks, figures: RankFigures) -> Vec<RankFigures> {
    ranks
        .all_gather(&figures.to_numbers())
        .chunks(8)
        .map(RankFigures::from_numbers)
        .collect()
}

/// The most bytes a rank sends rank 0 in one round of
/// [`send_to_root_in_order`] when writing a level or its certificate (4
/// MiB: a round takes a few times that on either side, whatever the share).
pub const TO_ROOT_PIECE: u64 = 1 << 22;

/// Sends each rank's bytes to rank 0, one rank after the other (all of
/// rank 1's, then rank 2's, ...), in pieces of at most `piece` bytes, so
/// that no message outgrows MPI's `int` counts and one piece is all the
/// memory a round takes. Rank r sends `lengths[r]` bytes (the same
/// `lengths` on every rank; rank 0's own are not sent); `read(range)` gives
/// this rank's bytes `range`; on rank 0, `write(r, bytes)` takes the next
/// bytes of rank r. Every rank calls it.
///
/// # Errors
/// The first error of `read` or `write` (on one rank: the job then fails
/// at its next collective operation).
pub fn send_to_root_in_order<E>(
    ranks: &dyn Ranks,
    lengths: &[u64],
    piece: u64,
    mut read: impl FnMut(std::ops::Range<u64>) -> Result<Vec<u8>, E>,
    mut write: impl FnMut(usize, &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let me = ranks.rank();
    let piece = piece.max(1);
    for (r, &length) in lengths.iter().enumerate().skip(1) {
        for start in (0..length).step_by(piece as usize) {
            let mut outgoing = vec![Vec::new(); ranks.size()];
            if me == r {
                outgoing[0] = read(start..(start + piece).min(length))?;
            }
            let received = ranks.exchange_bytes(outgoing);
            if me == 0 {
                write(r, &received[r])?;
            }
        }
    }
    Ok(())
}

/// What a message between two ranks carries, outside the collective
/// operations (its MPI tag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// Updates for partitions of the receiving rank.
    Updates = 1,
    /// [`Termination`]: rank 0 asks for a rank's counts of messages.
    Probe = 2,
    /// [`Termination`]: a rank's counts, sent and received, to rank 0.
    Reply = 3,
    /// [`Termination`]: the work is over on every rank.
    Done = 4,
}

impl Tag {
    /// The tag numbered `n`, if any.
    pub fn from_number(n: i32) -> Option<Tag> {
        [Tag::Updates, Tag::Probe, Tag::Reply, Tag::Done]
            .into_iter()
            .find(|&t| t as i32 == n)
    }
}

/// A message one rank sent another ([`Ranks::send`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The rank that sent it.
    pub from: usize,
    /// What it carries.
    pub tag: Tag,
    /// Its words.
    pub words: Vec<u64>,
}

/// The processes of a solve, and the operations between them. Every rank
/// calls each collective operation in the same order (they are MPI
/// collectives); only the thread that drives the solve calls any of them.
pub trait Ranks {
    /// This process's rank, `0..size`.
    fn rank(&self) -> usize;

    /// The number of ranks.
    fn size(&self) -> usize;

    /// The sum of `x` over all ranks, on every rank.
    fn sum(&self, x: u64) -> u64 {
        self.sums(&[x])[0]
    }

    /// The sums of each of `xs` over all ranks (of the same length on every
    /// rank), on every rank, in one collective operation.
    fn sums(&self, xs: &[u64]) -> Vec<u64>;

    /// Sends `outgoing[r]` to rank `r` (its own entry stays empty) and
    /// returns what each rank sent this one, by rank.
    fn exchange(&self, outgoing: Vec<Vec<u64>>) -> Vec<Vec<u64>>;

    /// [`Ranks::exchange`] of bytes: the answers to lookups, say.
    fn exchange_bytes(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>>;

    /// Everyone's `numbers` (of the same length on every rank), one after
    /// the other by rank, on every rank.
    fn all_gather(&self, numbers: &[u64]) -> Vec<u64>;

    /// Everyone's `bytes` (of any length), by rank, on every rank.
    fn all_gather_bytes(&self, bytes: &[u8]) -> Vec<Vec<u8>>;

    /// Sends `words` (at least one) to rank `to`, another rank, without
    /// waiting for it to take them: the message is kept until it has (see
    /// [`Ranks::settle`]). Messages from one rank to another arrive in the
    /// order they were sent.
    fn send(&self, to: usize, tag: Tag, words: Vec<u64>);

    /// A message sent to this rank and not taken yet, if one has arrived.
    fn try_receive(&self) -> Option<Message>;

    /// The next message sent to this rank, waiting until one arrives (the
    /// time counts as waiting).
    fn receive(&self) -> Message;

    /// Waits until every message this rank sent has been taken by its
    /// receiver, and lets go of them.
    fn settle(&self);

    /// The bytes of the messages this rank sent that their receivers may
    /// not have taken yet (those taken are let go first).
    fn unsettled_bytes(&self) -> u64;

    /// The traffic of this rank so far (`boards` and `updates_sent` are
    /// left to the solve).
    fn figures(&self) -> RankFigures {
        RankFigures {
            rank: self.rank() as u64,
            ..RankFigures::default()
        }
    }

    /// The rank that owns partition `p` of `count`: ranks own runs of
    /// partitions, as equal as they can be.
    fn owner(&self, p: usize, count: usize) -> usize {
        p * self.size() / count
    }

    /// True when this rank owns partition `p` of `count`.
    fn owns(&self, p: usize, count: usize) -> bool {
        self.owner(p, count) == self.rank()
    }

    /// True on rank 0, which writes the files and prints.
    fn is_root(&self) -> bool {
        self.rank() == 0
    }
}

/// The processes of this run: the ranks of the MPI job with the `mpi`
/// feature (one rank when started without `mpirun`), else this process
/// alone ([`OneProcess`]).
///
/// # Errors
/// With the `mpi` feature, when MPI cannot be initialized with threads
/// beside the one calling it.
pub fn start() -> Result<Box<dyn Ranks>, String> {
    #[cfg(feature = "mpi")]
    {
        let ranks = mpi::MpiRanks::initialize().ok_or_else(|| {
            "MPI could not be initialized with threads beside the one calling it".to_string()
        })?;
        Ok(Box::new(ranks))
    }
    #[cfg(not(feature = "mpi"))]
    Ok(Box::new(OneProcess))
}

/// A solve by this process alone: every operation is the identity.
#[derive(Clone, Copy, Debug, Default)]
pub struct OneProcess;

impl Ranks for OneProcess {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn sums(&self, xs: &[u64]) -> Vec<u64> {
        xs.to_vec()
    }

    fn exchange(&self, outgoing: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
        debug_assert!(outgoing.iter().all(Vec::is_empty));
        vec![Vec::new()]
    }

    fn exchange_bytes(&self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        debug_assert!(outgoing.iter().all(Vec::is_empty));
        vec![Vec::new()]
    }

    fn all_gather(&self, numbers: &[u64]) -> Vec<u64> {
        numbers.to_vec()
    }

    fn all_gather_bytes(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        vec![bytes.to_vec()]
    }

    /// # Panics
    /// Always: one process has no other rank to send to.
    fn send(&self, to: usize, _tag: Tag, _words: Vec<u64>) {
        panic!("one process has no rank {to} to send to");
    }

    fn try_receive(&self) -> Option<Message> {
        None
    }

    /// # Panics
    /// Always: no other rank could send one, so it would wait for ever.
    fn receive(&self) -> Message {
        panic!("one process waits for a message no rank can send");
    }

    fn settle(&self) {}

    fn unsettled_bytes(&self) -> u64 {
        0
    }
}
