//! A level finished by the ranks of an MPI job together: each holds its
//! share of the level solved (`awari_dbformat::cluster::Shares`) and none
//! the whole, so they write its certificate and file together (rank 0
//! appends what the others send), count its statistics together (each its
//! share, summed), and each keeps its share for the levels above.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use awari_dbformat::cluster::{send_to_root_in_order, Ranks, TO_ROOT_PIECE};
use awari_dbformat::file::shared::{write_level_shared, Share};
use awari_dbformat::file::{self, CertificateWriter, Stored};
use awari_dbformat::level::Generations;
use awari_dbformat::{with_pits, Gain, Index, Levels, MoveList, Rules, Score};
use indicatif::ProgressBar;
use rayon::prelude::*;

use super::budget::{plan_share, LevelPlan, Reach};
use super::level::Written;
use super::{Build, Held};
use crate::error::SolveError;
use crate::retro::{self, SolveOptions, SolvedLevel, UnstoredBoards};
use crate::stats::{self, Counts};

/// Unstored boards valued by one window of [`count_by_ranks`] (their quiet
/// moves' lookups, up to six a board of 16 bytes, are held at once: at
/// most 6 MiB).
const COUNT_WINDOW: u64 = 1 << 16;

impl Build<'_> {
    /// How this rank solves its share of level `seeds` (`boards` boards)
    /// within its own `--memory`, holding `lower_bytes` of the lower levels'
    /// shares ([`plan_share`]), on disk in every rank if in any (the ranks
    /// keep their generations in step then), each rank with as many
    /// partitions as the rank that needs the most.
    ///
    /// # Errors
    /// A share that does not fit in the budget even on disk (refused by
    /// the rank that plans it, which fails the job).
    pub(super) fn plan_share_with_ranks(
        &self,
        seeds: u32,
        boards: u64,
        lower_bytes: u64,
        reach: Reach,
    ) -> Result<LevelPlan, SolveError> {
        let ranks = self.ranks;
        let size = ranks.size() as u64;
        let mut options = self.options.clone();
        let mut plan = plan_share(seeds, boards, size, lower_bytes, reach, &options)?;
        if ranks.sum(u64::from(plan.on_disk)) > 0 && !plan.on_disk {
            options.on_disk = true;
            plan = plan_share(seeds, boards, size, lower_bytes, reach, &options)?;
        }
        if options.partitions.is_none() {
            let most = ranks.all_gather(&[plan.partitions]).into_iter().max();
            plan.partitions = most.unwrap_or(plan.partitions);
        }
        Ok(plan)
    }

    /// Writes level `seeds`, of which this rank holds its share `solved`,
    /// with the other ranks: its certificate (when recorded) and its file,
    /// then its statistics; keeps the share for the levels above. Returns
    /// what the report needs on rank 0, `None` on the others.
    ///
    /// # Errors
    /// A file that cannot be written or read.
    pub(super) fn write_by_ranks(
        &self,
        held: &mut Held,
        seeds: u32,
        solved: SolvedLevel,
        solve_options: &SolveOptions,
        bar: &ProgressBar,
    ) -> Result<Option<Written>, SolveError> {
        let (ranks, options, id) = (self.ranks, self.options, self.id(seeds));
        let shares = solved.partitions.shares(ranks.size());
        let mine = shares.range(ranks.rank());
        debug_assert_eq!(solved.first, mine.start);
        bar.set_message("writing");
        // The certificate goes before the level: the level's rename marks
        // it complete.
        if let Some(generations) = &solved.generations {
            let boards: Vec<u64> = (0..ranks.size())
                .map(|r| shares.range(r).end - shares.range(r).start)
                .collect();
            write_certificate_by_ranks(ranks, &options.dir, id, &boards, generations)?;
        }
        let share = Share {
            boards: mine.clone(),
            scores: &solved.values,
            free: Some(solved.free.as_u64()),
        };
        let stored = match options.stored {
            Stored::LowerBounds => Stored::LowerBounds,
            _ => Stored::Scores,
        };
        let path = write_level_shared(ranks, &options.dir, id, stored, share, options.write)?;
        let values = Arc::new(solved.values);
        // The level's share joins the lower levels: the unstored boards'
        // quiet moves ask for their children in it.
        bar.set_message("counting");
        let rank = ranks.rank();
        held.lower
            .insert_shared(seeds, shares.clone(), rank, values.clone());
        // (Under MPI the initial pass values the unstored boards' captures
        // when they are counted.)
        let unstored_path = solve_options.unstored_captures.as_deref();
        let counted_all = unstored_path.is_some();
        let (counts_stored, counts_all) = count_by_ranks(
            ranks,
            self.plan.rules,
            seeds,
            &held.lower,
            &values,
            mine,
            unstored_path,
        )?;
        // The level file is whole and named: this rank's partitions on disk
        // can go (their values, mapped, stay until the share is dropped).
        retro::remove_level_dir(solve_options)?;
        match unstored_path {
            Some(path) => retro::remove_unstored_captures(path)?,
            // (The level's directory goes once empty, as with that file:
            // the last rank to be done removes it.)
            None => {
                let _ = std::fs::remove_dir(self.level_dir(seeds));
            }
        }
        // A share kept for the levels above is held packed, in 6 bits a
        // board of 8 up to level 31: the shares of the lower levels are a
        // third of a rank's memory.
        if self.read_above(seeds) {
            drop(values);
            held.lower.pack(seeds);
        } else {
            held.lower.remove(seeds);
        }
        Ok(path.map(|path| Written {
            path,
            counts_stored,
            counts_all,
            unstored_in_pass: counted_all,
            quiet_after_writing: false,
        }))
    }
}

/// Writes the certificate of level `id` into `dir` from every rank's share
/// of its generations (each rank's `boards`; this rank's `generations`):
/// rank 0 pushes its own, then each other rank's as it arrives, in pieces
/// of at most [`TO_ROOT_PIECE`] bytes (even: no generation is cut).
///
/// # Errors
/// A certificate that cannot be written (on rank 0).
fn write_certificate_by_ranks(
    ranks: &dyn Ranks,
    dir: &Path,
    id: file::LevelId,
    boards: &[u64],
    generations: &Generations,
) -> Result<(), SolveError> {
    let mut writer = if ranks.is_root() {
        let mut writer = CertificateWriter::new(dir, id)?;
        writer.push(generations)?;
        Some(writer)
    } else {
        None
    };
    let read = |bytes: Range<u64>| -> Result<Vec<u8>, SolveError> {
        let (from, to) = ((bytes.start / 2) as usize, (bytes.end / 2) as usize);
        Ok(generations[from..to]
            .iter()
            .flat_map(|g| g.to_le_bytes())
            .collect())
    };
    let write = |_: usize, bytes: &[u8]| -> Result<(), SolveError> {
        let order: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect();
        writer.as_mut().expect("rank 0 writes").push(&order)?;
        Ok(())
    };
    let lengths: Vec<u64> = boards.iter().map(|&n| 2 * n).collect();
    send_to_root_in_order(ranks, &lengths, TO_ROOT_PIECE, read, write)?;
    if let Some(writer) = writer {
        writer.finish()?;
    }
    Ok(())
}

/// The counts over the stored boards of level `seeds` and, when the
/// initial pass valued the unstored boards' captures (into this rank's file
/// `unstored_path`), over all its boards, by the ranks together, on every
/// rank: each counts its share of the stored boards (`values`, boards
/// `mine`) and the unstored boards that go with it, valued by one ply:
/// their captures from that file, their quiet moves' children asked of the
/// ranks that hold them (`lower` holds this rank's share of the level), or
/// their own end. The histograms are summed.
///
/// # Errors
/// A file of captures that cannot be read.
fn count_by_ranks(
    ranks: &dyn Ranks,
    rules: Rules,
    seeds: u32,
    lower: &Levels,
    values: &[i8],
    mine: Range<u64>,
    unstored_path: Option<&Path>,
) -> Result<(Counts, Option<Counts>), SolveError> {
    let Some(unstored_path) = unstored_path else {
        let sums = ranks.sums(&stats::histogram(values));
        return Ok((stats::counts_of_histogram(&sums), None));
    };
    let index = Index::for_pits(rules.pits());
    let unstored = UnstoredBoards::of(index, seeds);
    let boards = unstored.first_with(mine.start)..unstored.first_with(mine.end);
    let mut best = retro::read_unstored_range(unstored_path, boards.clone())?;
    let mut at = boards.start;
    // (Every rank takes part in every round, until none has boards left.)
    while retro::more_to_ask(ranks, at < boards.end) {
        let end = (at + COUNT_WINDOW).min(boards.end);
        let window = &mut best[(at - boards.start) as usize..(end - boards.start) as usize];
        let mut quiet = with_pits!(rules.pits(), P => {
            quiet_lookups::<P>(rules, index, seeds, &unstored, at..end, window)
        });
        quiet.par_sort_unstable_by_key(|l| l.0);
        let scores = retro::children_scores(ranks, lower, quiet.iter().map(|l| l.0));
        for (&(_, b), &score) in quiet.iter().zip(&scores) {
            let value = Gain::QUIET.value(Score::new(score)).get();
            window[b as usize] = window[b as usize].max(value);
        }
        at = end;
    }
    let mut histograms = stats::histogram(values).to_vec();
    histograms.extend_from_slice(&stats::histogram(&best));
    let sums = ranks.sums(&histograms);
    let all: Vec<u64> = (0..256).map(|b| sums[b] + sums[256 + b]).collect();
    assert_eq!(
        sums[256 + retro::NO_CAPTURE as u8 as usize],
        0,
        "every unstored board of level {seeds} has a value"
    );
    Ok((
        stats::counts_of_histogram(&sums[..256]),
        Some(stats::counts_of_histogram(&all)),
    ))
}

/// The lookups of the quiet moves' children of unstored boards `boards`
/// (in level `seeds`: (the child's key, the board's place among `boards`)),
/// and each board that ends the game set to its value in `best` (its
/// captures, none, are in `best` already for the others), in pieces of
/// whole rows, a task each.
fn quiet_lookups<const P: usize>(
    rules: Rules,
    index: &Index,
    seeds: u32,
    unstored: &UnstoredBoards,
    boards: Range<u64>,
    best: &mut [i8],
) -> Vec<(u64, u32)> {
    let first = boards.start;
    let pieces = unstored.pieces(boards, 1 << 12);
    // (Each piece's lookups, and its boards that end the game.)
    type Found = (Vec<(u64, u32)>, Vec<(u32, i8)>);
    let found: Vec<Found> = pieces
        .into_par_iter()
        .map(|piece| {
            let mut lookups = Vec::new();
            let mut ends = Vec::new();
            let mut captures = MoveList::new();
            let count = (piece.end - piece.start) as usize;
            let at = (piece.start - first) as u32;
            for (k, board) in unstored.boards_from(piece.start).take(count).enumerate() {
                let b = at + k as u32;
                if let Some(v) = rules.terminal_value(&board) {
                    ends.push((b, v.get()));
                    continue;
                }
                let mut quiet = rules.quiet_pits_and_captures_sized::<P>(&board, &mut captures);
                while quiet != 0 {
                    let pit = quiet.trailing_zeros() as usize;
                    quiet &= quiet - 1;
                    let child = rules.known_quiet_child(&board, pit);
                    let i = index.rank_sized::<P>(&child).expect("a child is stored");
                    lookups.push((retro::child_key(seeds, i), b));
                }
            }
            (lookups, ends)
        })
        .collect();
    let mut all = Vec::new();
    for (lookups, ends) in found {
        all.extend_from_slice(&lookups);
        for (b, v) in ends {
            best[b as usize] = v;
        }
    }
    all
}
