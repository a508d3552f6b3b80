//! What the ranks of an MPI job exchange besides their sums: the updates
//! for each other's partitions between two generations, and, once the level
//! is solved, what each rank did. (In one process there is nothing to
//! exchange.)

use awari_dbformat::cluster::{gather_figures, RankFigures, Ranks};

use super::batch::Mailbox;
use super::mail::Mail;
use super::solve::Level;
use crate::error::SolveError;

/// Sends the updates in `mail` for other ranks' partitions (of `count`) to
/// those ranks, and puts the updates they sent into the boxes of this
/// rank's own. Returns the number of updates sent.
pub(super) fn exchange_mail(
    ranks: &dyn Ranks,
    mail: &Mail,
    count: usize,
) -> Result<u64, SolveError> {
    let mut outgoing = vec![Vec::new(); ranks.size()];
    for p in (0..count).filter(|&p| !ranks.owns(p, count)) {
        outgoing[ranks.owner(p, count)].extend(mail.take(p).into_updates());
    }
    let sent = outgoing.iter().map(|o| o.len() as u64).sum();
    for updates in ranks.exchange(outgoing) {
        if !updates.is_empty() {
            mail.post(updates)?;
        }
    }
    Ok(sent)
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
