//! What the ranks of an MPI job exchange besides their sums: the updates
//! for each other's partitions between two generations, and, once the level
//! is solved, what each rank did. (In one process there is nothing to
//! exchange.)
//!
//! The updates go in rounds of at most [`PIECE_UPDATES`] a rank sends, so
//! that the memory an exchange takes stays a few mebibytes however large
//! the generation, and each rank hands what it receives on at once (in
//! memory, its partitions take them there and then: nothing waits in a
//! box for the next generation).

use awari_dbformat::cluster::{gather_figures, RankFigures, Ranks};

use super::mail::{Delivery, Mail};
use super::partition::Partitions;
use super::solve::Level;
use crate::error::SolveError;

/// Updates a rank sends in one round of an exchange, over all the ranks it
/// sends to (1 MiB).
pub(super) const PIECE_UPDATES: usize = 1 << 17;

/// Sends the updates in `mail` for other ranks' partitions (of
/// `partitions`) to those ranks, in rounds of at most `piece` updates from
/// each rank, and hands the updates the others send this one to
/// `received(p, updates)`, a run for one partition `p` at a time. Returns
/// the number of updates sent.
///
/// # Errors
/// The first error of `received` (the job then fails at the next
/// collective operation of the others).
pub(super) fn exchange_mail(
    ranks: &dyn Ranks,
    mail: &Mail,
    partitions: Partitions,
    piece: usize,
    mut received: impl FnMut(usize, &[u64]) -> Result<(), SolveError>,
) -> Result<u64, SolveError> {
    let size = ranks.size();
    // Each rank's updates, and the box the next round starts in.
    let (mut boxes, totals) = boxes_by_rank(ranks, mail, partitions);
    let sent = totals.iter().sum::<u64>();
    // Each destination gets an equal part of a round's piece.
    let per_rank = (piece / size.saturating_sub(1).max(1)).max(1);
    let my_rounds = totals.iter().map(|&n| n.div_ceil(per_rank as u64)).max();
    let rounds = ranks.all_gather(&[my_rounds.unwrap_or(0)]);
    let rounds = rounds.into_iter().max().unwrap_or(0);
    let mut next = vec![0usize; size];
    for _ in 0..rounds {
        let outgoing = (0..size)
            .map(|r| next_piece(&mut boxes[r], &mut next[r], per_rank))
            .collect::<Result<Vec<_>, _>>()?;
        for updates in ranks.exchange(outgoing) {
            // A rank's updates may be for several of this rank's
            // partitions, each partition's together (its boxes are read
            // one after the other): handed on run by run, as they lie.
            for run in partition_runs(partitions, &updates) {
                received(partitions.of(run[0] >> 1), run)?;
            }
        }
    }
    Ok(sent)
}

/// The boxes of `mail` for other ranks' partitions (of `partitions`), taken
/// and grouped by the rank that owns them (in memory, or in their files
/// past the mail's cap), with the updates each rank's boxes hold.
pub(super) fn boxes_by_rank(
    ranks: &dyn Ranks,
    mail: &Mail,
    partitions: Partitions,
) -> (Vec<Vec<Delivery>>, Vec<u64>) {
    let (size, count) = (ranks.size(), partitions.count());
    let mut boxes: Vec<Vec<Delivery>> = (0..size).map(|_| Vec::new()).collect();
    let mut totals = vec![0u64; size];
    for p in (0..count).filter(|&p| !ranks.owns(p, count)) {
        let delivery = mail.take(p);
        if !delivery.is_empty() {
            totals[ranks.owner(p, count)] += delivery.len();
            boxes[ranks.owner(p, count)].push(delivery);
        }
    }
    (boxes, totals)
}

/// `updates` cut into the runs of consecutive updates for one partition.
pub(super) fn partition_runs(
    partitions: Partitions,
    updates: &[u64],
) -> impl Iterator<Item = &[u64]> {
    updates.chunk_by(move |a, b| partitions.of(a >> 1) == partitions.of(b >> 1))
}

/// The next at most `max` updates of `boxes` from box `next`, which moves
/// past the boxes emptied (their memory goes back, their files are
/// removed).
///
/// # Errors
/// A box's file that cannot be read or removed.
pub(super) fn next_piece(
    boxes: &mut [Delivery],
    next: &mut usize,
    max: usize,
) -> Result<Vec<u64>, SolveError> {
    let mut piece = Vec::new();
    while piece.len() < max && *next < boxes.len() {
        if boxes[*next].read_into(&mut piece, max)? {
            boxes[*next] = Delivery::default();
            *next += 1;
        }
    }
    Ok(piece)
}

/// What each rank did for `level`, by rank, since its traffic was `before`
/// (this one sent `updates_sent` updates to others); empty in one process.
pub(super) fn rank_figures(
    level: &Level,
    before: RankFigures,
    updates_sent: u64,
) -> Vec<RankFigures> {
    if level.ranks.size() <= 1 {
        return Vec::new();
    }
    let boards = level
        .own_partitions()
        .map(|p| level.partitions.range(p))
        .map(|r| r.end - r.start)
        .sum();
    let mine = RankFigures {
        boards,
        updates_sent,
        ..level.ranks.figures().since(before)
    };
    gather_figures(level.ranks, mine)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retro::batch::Mailbox;

    #[test]
    fn runs_cut_updates_where_their_partition_changes() {
        let partitions = Partitions::new(1000, 4);
        assert!(partitions.count() > 2);
        let size = partitions.range(0).end;
        // Boards of partitions 0, 0, 1, 2, 2, 0: four runs (the last
        // partition 0 again, as updates from two boxes' rounds may be).
        let boards = [0, size - 1, size, 2 * size, 2 * size + 1, 1];
        let updates: Vec<u64> = boards.iter().map(|&q| q << 1 | 1).collect();
        let runs: Vec<&[u64]> = partition_runs(partitions, &updates).collect();
        let lengths: Vec<usize> = runs.iter().map(|r| r.len()).collect();
        assert_eq!(lengths, [2, 1, 2, 1]);
        assert_eq!(runs.concat(), updates);
        for run in runs {
            assert!(run
                .iter()
                .all(|u| partitions.of(u >> 1) == partitions.of(run[0] >> 1)));
        }
        assert_eq!(partition_runs(partitions, &[]).count(), 0);
    }

    #[test]
    fn pieces_cover_the_boxes_in_order_memory_and_files() {
        let dir = std::env::temp_dir().join(format!("awari-exchange-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let partitions = Partitions::new(100, 4);
        assert!(partitions.count() > 1);
        // A cap of 3 updates: boxes go to their files past it.
        let mail = Mail::spilling(partitions, 3, &dir, "t");
        let updates: Vec<u64> = (0..100u64).map(|q| q << 1).collect();
        for chunk in updates.chunks(2) {
            mail.post(chunk.to_vec()).unwrap();
        }
        assert!(mail.spilled() > 0);
        let mut boxes: Vec<Delivery> = (0..partitions.count()).map(|p| mail.take(p)).collect();
        assert_eq!(boxes.iter().map(Delivery::len).sum::<u64>(), 100);
        let (mut next, mut all) = (0, Vec::new());
        loop {
            let piece = next_piece(&mut boxes, &mut next, 7).unwrap();
            if piece.is_empty() {
                break;
            }
            assert!(piece.len() <= 7);
            all.extend(piece);
        }
        all.sort_unstable();
        assert_eq!(all, updates);
        // The files were removed as they were read.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir(&dir).unwrap();
    }
}
