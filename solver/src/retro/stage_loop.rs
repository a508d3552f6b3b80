//! The stage loop: the threshold stages from the first to run down to 1,
//! each seeded in every partition, then propagated generation by
//! generation over the partitions.
//!
//! Each partition with a frontier visits it, sending updates to the
//! others' boxes; the updates of a generation are applied, as decisions of
//! that generation, before their partition's visit in the next one. A
//! partition's visit reads and writes its own state only, so each partition
//! can take its updates just before its own next visit (one mapping for
//! both on disk), with two sets of boxes: the ones being taken (sent in the
//! last generation) and the ones being filled. (One partition's steps:
//! [`super::stage`].)
//!
//! Under MPI the ranks either keep their generations in step, exchanging
//! their updates after each (needed for a certificate, and with their
//! partitions on disk), or, with their partitions in memory and no
//! certificate, run them apart ([`StageLoop::propagate_apart`]).

use std::time::Instant;

use awari_dbformat::cluster::{Message, Tag, Termination};

use super::batch::{Mailbox, Outbox};
use super::checkpoint::Checkpoints;
use super::exchange::{boxes_by_rank, exchange_mail, next_piece, partition_runs, PIECE_UPDATES};
use super::mail::{Delivery, Mail};
use super::solve::Level;
use super::stage::{self, Decided, Frontier};
use super::store::{LevelState, Store};
use super::{Partitions, SolveOptions, Stage};
use crate::cells::Packing;
use crate::error::SolveError;

/// Updates an outbox holds before it posts them to the partitions' boxes.
const OUTBOX_UPDATES: usize = 1 << 20;

/// Runs the stages of `level` from `first_k` down to 1, pushing each with
/// any decision onto `stages` (which holds those done before), with a
/// checkpoint after those `checkpoints` asks. Returns the updates this
/// rank sent to others.
///
/// # Errors
/// A partition's file, a file of spilled mail or a checkpoint that cannot
/// be read or written.
pub(super) fn run_stages<L: Packing, const P: usize>(
    level: &Level,
    work: &mut LevelState<L>,
    first_k: u32,
    stages: &mut Vec<Stage>,
    init_seconds: f64,
    checkpoints: &mut Checkpoints,
) -> Result<u64, SolveError> {
    let io_start = crate::memory::disk_io();
    let mail = MailBoxes::new(level.options, level.partitions, &work.store)?;
    let mail_dir = match work.store {
        Store::Memory => level.options.mail_dir.as_ref(),
        Store::Disk(_) => None,
    };
    let mut stage_loop = StageLoop::<L, P> {
        level,
        work,
        mail: &mail,
        frontiers: (0..level.count()).map(|_| Frontier::default()).collect(),
        io_start,
        updates_to_ranks: 0,
    };
    for k in (1..=first_k as i8).rev() {
        if let Some(stage) = stage_loop.run_stage(k)? {
            stages.push(stage);
        }
        checkpoints.after_stage(level, stage_loop.work, k, stages, init_seconds)?;
    }
    if let Some(dir) = mail_dir {
        // (Empty: each box's file goes once read.)
        std::fs::remove_dir_all(dir).map_err(awari_dbformat::Error::io(dir))?;
    }
    Ok(stage_loop.updates_to_ranks)
}

/// The two sets of boxes that carry the updates between partitions, and
/// the updates an outbox holds.
struct MailBoxes {
    sets: [Mail; 2],
    outbox_updates: usize,
}

impl MailBoxes {
    /// In memory; on disk, and in memory under MPI with a directory for
    /// it (`options.mail_dir`), each set holds at most half the mail
    /// `options.mail_bytes` has room for (the rest spills to files of the
    /// directory), and an outbox's updates are memory of the mail's share
    /// too.
    ///
    /// # Errors
    /// The mail's directory that cannot be made.
    fn new(
        options: &SolveOptions,
        partitions: Partitions,
        store: &Store,
    ) -> Result<MailBoxes, SolveError> {
        let dir = match store {
            Store::Disk(disk) => Some(disk.dir().to_path_buf()),
            Store::Memory => options.mail_dir.clone(),
        };
        let Some(dir) = dir else {
            return Ok(MailBoxes {
                sets: [Mail::in_memory(partitions), Mail::in_memory(partitions)],
                outbox_updates: OUTBOX_UPDATES,
            });
        };
        std::fs::create_dir_all(&dir).map_err(awari_dbformat::Error::io(&dir))?;
        let cap = (options.mail_bytes / 2 / 8).max(1) as usize;
        Ok(MailBoxes {
            sets: [
                Mail::spilling(partitions, cap, &dir, "a"),
                Mail::spilling(partitions, cap, &dir, "b"),
            ],
            outbox_updates: (options.mail_bytes / 8 / 8).clamp(1024, OUTBOX_UPDATES as u64)
                as usize,
        })
    }

    /// The boxes taken and the boxes filled in generation `round`.
    fn for_round(&self, round: u32) -> (&Mail, &Mail) {
        if round % 2 == 1 {
            (&self.sets[0], &self.sets[1])
        } else {
            (&self.sets[1], &self.sets[0])
        }
    }

    /// The updates spilled to files so far.
    fn spilled(&self) -> u64 {
        self.sets[0].spilled() + self.sets[1].spilled()
    }
}

/// The stage loop under way.
struct StageLoop<'a, L: Packing, const P: usize> {
    level: &'a Level<'a>,
    work: &'a mut LevelState<L>,
    mail: &'a MailBoxes,
    /// Each partition's frontier.
    frontiers: Vec<Frontier>,
    /// What the process had read and written when the stages started.
    io_start: Option<(u64, u64)>,
    /// The updates sent to other ranks.
    updates_to_ranks: u64,
}

impl<L: Packing, const P: usize> StageLoop<'_, L, P> {
    /// Runs stage `k`: seeding, then propagation. Returns the stage, unless
    /// it decided nothing.
    fn run_stage(&mut self, k: i8) -> Result<Option<Stage>, SolveError> {
        let level = self.level;
        level.progress.set_message(format!("stage {k}"));
        let started = Instant::now();
        let mut decided = self.seed(k)?;
        let seeding_seconds = started.elapsed().as_secs_f64();
        let spilled_before = self.mail.spilled();
        let (generations, sent_updates) = self.propagate(k, &mut decided)?;
        let totals = level.ranks.sums(&[decided.wins, decided.losses]);
        let decided = Decided {
            wins: totals[0],
            losses: totals[1],
        };
        Ok((decided.total() > 0).then(|| Stage {
            k: k as u32,
            wins: decided.wins,
            losses: decided.losses,
            generations,
            seeding_seconds,
            propagation_seconds: started.elapsed().as_secs_f64() - seeding_seconds,
            sent_updates,
            spilled_updates: self.mail.spilled() - spilled_before,
        }))
    }

    /// Seeds stage `k` in this rank's partitions, every frontier made new.
    fn seed(&mut self, k: i8) -> Result<Decided, SolveError> {
        let level = self.level;
        let mut decided = Decided::default();
        for (p, frontier) in self.frontiers.iter_mut().enumerate() {
            frontier.new_stage();
            if level.owns(p) {
                decided += self.work.with(p, |state| {
                    stage::seed(state, k, level.seeds, level.progress)
                })??;
            }
        }
        Ok(decided)
    }

    /// Propagates stage `k` generation by generation until no rank has a
    /// frontier or updates in transit, adding the decisions to `decided`.
    /// Returns the generations and the updates sent between partitions.
    fn propagate(&mut self, k: i8, decided: &mut Decided) -> Result<(u32, u64), SolveError> {
        if self.apart() {
            return self.propagate_apart(k, decided);
        }
        let ranks = self.level.ranks;
        let mut generations = 0;
        let mut sent_updates = 0;
        // The updates in the boxes being taken, and whether some rank's
        // partitions have a frontier (sums over the ranks, so that every
        // rank sees the same answers).
        let mut pending = 0;
        let mut busy = ranks.sum(u64::from(self.busy_here())) > 0;
        while pending > 0 || busy {
            let round = generations + 1;
            let visited = self.generation(k, round, generations, pending > 0, decided)?;
            // What the ranks did this round, in one sum (one collective
            // operation a generation besides the exchange).
            let totals =
                ranks.sums(&[u64::from(visited.0), visited.1, u64::from(self.busy_here())]);
            let (visited, sent, busy_now) = (totals[0], totals[1], totals[2]);
            if visited > 0 {
                generations = round;
            }
            sent_updates += sent;
            pending = sent;
            busy = busy_now > 0;
        }
        Ok((generations, sent_updates))
    }

    /// Whether the ranks run their generations apart: with several ranks,
    /// their partitions in memory, and no certificate (whose generations
    /// must be one process's; nothing else in the files depends on the
    /// generation a board is decided in).
    fn apart(&self) -> bool {
        let level = self.level;
        level.ranks.size() > 1
            && matches!(self.work.store, Store::Memory)
            && !level.options.record_generations
    }

    /// Propagates stage `k` with this rank's generations run apart from the
    /// others' ([`StageLoop::apart`]), adding the decisions to `decided`.
    /// While its partitions have work, the rank visits generation after
    /// generation, sending the updates for other ranks' partitions as
    /// messages after each, and taking those that reached it before the
    /// next (as decisions of the generation it visited last: they join the
    /// frontier of its next). Idle, it waits for a message. The stage ends
    /// when no rank has work and every message has been taken
    /// ([`Termination`]). Returns the most generations a rank visited, and
    /// the updates sent between partitions.
    fn propagate_apart(&mut self, k: i8, decided: &mut Decided) -> Result<(u32, u64), SolveError> {
        let ranks = self.level.ranks;
        let mut end = Termination::new();
        let (mut round, mut generations, mut sent_updates) = (0, 0, 0);
        // Updates this rank's partitions sent each other in its last
        // generation, taken before their visits in the next.
        let mut pending = false;
        loop {
            while let Some(message) = ranks.try_receive() {
                self.receive_apart(message, k, round, &mut end, decided)?;
            }
            if pending || self.busy_here() {
                round += 1;
                let (visited, sent) = self.visits(k, round, round - 1, pending, decided)?;
                if visited {
                    generations = round;
                }
                let (_, filled) = self.mail.for_round(round);
                let to_ranks = self.send_apart(filled, k, round, &mut end, decided)?;
                self.updates_to_ranks += to_ranks;
                sent_updates += sent;
                pending = sent > to_ranks;
                continue;
            }
            if end.idle(ranks) {
                break;
            }
            let message = ranks.receive();
            self.receive_apart(message, k, round, &mut end, decided)?;
        }
        ranks.settle();
        let all = ranks.all_gather(&[u64::from(generations), sent_updates]);
        let most = all.iter().step_by(2).max().copied().unwrap_or(0);
        Ok((most as u32, all.iter().skip(1).step_by(2).sum()))
    }

    /// Takes `message` from another rank, received after this rank's
    /// generation `round` of stage `k`: a part of the search for the end
    /// of the stage, or updates, which its partitions take as decisions of
    /// that generation (added to `decided`).
    fn receive_apart(
        &mut self,
        message: Message,
        k: i8,
        round: u32,
        end: &mut Termination,
        decided: &mut Decided,
    ) -> Result<(), SolveError> {
        if end.take(&message) {
            return Ok(());
        }
        debug_assert_eq!(message.tag, Tag::Updates);
        end.taken();
        let partitions = self.level.partitions;
        for run in partition_runs(partitions, &message.words) {
            *decided += self.take_run(partitions.of(run[0] >> 1), k, round, run)?;
        }
        Ok(())
    }

    /// Sends the updates of generation `round` of stage `k` in `filled` for
    /// other ranks' partitions to those ranks, in messages of at most
    /// [`PIECE_UPDATES`] for each rank, counted in `end`. The messages not yet taken by
    /// their receivers hold at most half the mail's memory
    /// ([`SolveOptions::mail_bytes`]) besides the one being sent: past
    /// that, the rank takes the messages that reach it (adding their
    /// decisions to `decided`) until its receivers have taken enough of its
    /// own. Returns the updates sent.
    ///
    /// # Errors
    /// A file of spilled mail that cannot be read or removed.
    fn send_apart(
        &mut self,
        filled: &Mail,
        k: i8,
        round: u32,
        end: &mut Termination,
        decided: &mut Decided,
    ) -> Result<u64, SolveError> {
        let level = self.level;
        let ranks = level.ranks;
        let most_unsettled = level.options.mail_bytes / 2;
        let (mut boxes, totals) = boxes_by_rank(ranks, filled, level.partitions);
        for (to, boxes) in boxes.iter_mut().enumerate() {
            let mut next = 0;
            loop {
                while ranks.unsettled_bytes() > most_unsettled {
                    match ranks.try_receive() {
                        Some(message) => self.receive_apart(message, k, round, end, decided)?,
                        None => std::thread::yield_now(),
                    }
                }
                let piece = next_piece(boxes, &mut next, PIECE_UPDATES)?;
                if piece.is_empty() {
                    break;
                }
                ranks.send(to, Tag::Updates, piece);
                end.sent();
            }
        }
        Ok(totals.iter().sum())
    }

    /// Generation `round` of stage `k` in this rank's partitions
    /// ([`StageLoop::visits`]), then, under MPI, the exchange of the
    /// updates for other ranks' partitions. Returns whether any partition
    /// visited its frontier, and the updates sent.
    fn generation(
        &mut self,
        k: i8,
        round: u32,
        last: u32,
        pending: bool,
        decided: &mut Decided,
    ) -> Result<(bool, u64), SolveError> {
        let visited = self.visits(k, round, last, pending, decided)?;
        if self.level.ranks.size() > 1 {
            let (_, filled) = self.mail.for_round(round);
            self.updates_to_ranks += self.exchange(k, round, filled, decided)?;
        }
        Ok(visited)
    }

    /// Generation `round` of stage `k` in this rank's partitions,
    /// alternately up and down (so that the partition worked last, still
    /// mapped on disk, is the next one worked): each takes the updates
    /// sent to it in generation `last` (when any are `pending`), then
    /// visits its frontier. Returns whether any partition visited one, and
    /// the updates sent.
    fn visits(
        &mut self,
        k: i8,
        round: u32,
        last: u32,
        pending: bool,
        decided: &mut Decided,
    ) -> Result<(bool, u64), SolveError> {
        let level = self.level;
        let (taken, filled) = self.mail.for_round(round);
        let (mut visited, mut sent) = (false, 0);
        let count = level.count();
        let order: Vec<usize> = if round % 2 == 1 {
            (0..count).collect()
        } else {
            (0..count).rev().collect()
        };
        for p in order.into_iter().filter(|&p| level.owns(p)) {
            if pending {
                *decided += self.take(p, taken.take(p), k, last)?;
            }
            if !self.frontiers[p].has_work(&self.work.states[p]) {
                continue;
            }
            visited = true;
            let (visit_decided, visit_sent) = self.visit(p, k, round, filled)?;
            *decided += visit_decided;
            sent += visit_sent;
        }
        Ok((visited, sent))
    }

    /// Sends the updates of generation `round` of stage `k` for other
    /// ranks' partitions (in `filled`) to them, and takes theirs: in
    /// memory, this rank's partitions take them at once, as they would
    /// before their visits in the next round (the same generation, into
    /// the same frontier), adding the decisions to `decided`; on disk, they
    /// wait in `filled` for that. Returns the updates sent.
    fn exchange(
        &mut self,
        k: i8,
        round: u32,
        filled: &Mail,
        decided: &mut Decided,
    ) -> Result<u64, SolveError> {
        let level = self.level;
        let in_memory = matches!(self.work.store, Store::Memory);
        exchange_mail(
            level.ranks,
            filled,
            level.partitions,
            PIECE_UPDATES,
            |p, updates| {
                if in_memory {
                    *decided += self.take_run(p, k, round, updates)?;
                    Ok(())
                } else {
                    filled.post(updates.to_vec())
                }
            },
        )
    }

    /// Partition `p` takes `updates` (all for its boards), as decisions of
    /// generation `generation` of stage `k`.
    fn take_run(
        &mut self,
        p: usize,
        k: i8,
        generation: u32,
        updates: &[u64],
    ) -> Result<Decided, SolveError> {
        self.take_pieces(p, k, generation, |apply| {
            apply(updates);
            Ok(())
        })
    }

    /// Partition `p` takes the updates of `delivery`, as decisions of
    /// generation `generation` of stage `k`.
    fn take(
        &mut self,
        p: usize,
        delivery: Delivery,
        k: i8,
        generation: u32,
    ) -> Result<Decided, SolveError> {
        if delivery.is_empty() {
            return Ok(Decided::default());
        }
        self.take_pieces(p, k, generation, |apply| delivery.each_piece(apply))
    }

    /// Partition `p` takes the pieces of updates `pieces` hands to the
    /// function it is given, as decisions of generation `generation` of
    /// stage `k` (its state at hand for all of them).
    fn take_pieces(
        &mut self,
        p: usize,
        k: i8,
        generation: u32,
        pieces: impl FnOnce(&mut dyn FnMut(&[u64])) -> Result<(), SolveError>,
    ) -> Result<Decided, SolveError> {
        let level = self.level;
        let frontier = &self.frontiers[p];
        self.work.with(p, |state| {
            let step = level.step(state, k, generation);
            let mut decided = Decided::default();
            pieces(&mut |updates| decided += stage::take_updates::<L, P>(&step, frontier, updates))
                .map(|()| decided)
        })?
    }

    /// Partition `p` visits generation `round` of stage `k`, its updates
    /// for other partitions posted to `filled`. Returns its decisions and
    /// the updates it sent.
    fn visit(
        &mut self,
        p: usize,
        k: i8,
        round: u32,
        filled: &Mail,
    ) -> Result<(Decided, u64), SolveError> {
        let level = self.level;
        if let Store::Disk(_) = self.work.store {
            let message = disk_message(k, round, p, level.count(), self.io_start);
            level.progress.set_message(message);
        }
        let outbox = Outbox::new(filled, self.mail.outbox_updates);
        let frontier = &mut self.frontiers[p];
        let decided = self.work.with(p, |state| {
            stage::visit::<L, P>(&level.step(state, k, round), frontier, &outbox)
        })?;
        outbox.flush()?;
        Ok((decided, outbox.sent()))
    }

    /// Whether some partition of this rank has a frontier.
    fn busy_here(&self) -> bool {
        self.level
            .own_partitions()
            .any(|p| self.frontiers[p].has_work(&self.work.states[p]))
    }
}

/// The progress message of a level on disk: where the solve is, and what
/// it has read and written since `io_start`.
fn disk_message(
    k: i8,
    generation: u32,
    p: usize,
    count: usize,
    io_start: Option<(u64, u64)>,
) -> String {
    let io = match (io_start, crate::memory::disk_io()) {
        (Some((r0, w0)), Some((r1, w1))) => format!(
            ", read {} written {}",
            crate::memory::format_size(r1.saturating_sub(r0)),
            crate::memory::format_size(w1.saturating_sub(w0))
        ),
        _ => String::new(),
    };
    format!("stage {k} gen {generation} partition {}/{count}{io}", p + 1)
}
