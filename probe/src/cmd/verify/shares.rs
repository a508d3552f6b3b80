//! `verify` under `mpirun`: the ranks check each level together, each
//! holding only its share of the level and of every level below
//! ([`Shares::even`]), asking the others for the children it does not hold
//! ([`verify::check_share`]). Each rank decodes only the blocks of its
//! shares, checks only their checksums, and reads only its share of a
//! certificate; rank 0 prints.

use std::error::Error;
use std::sync::Arc;
use std::time::Instant;

use awari_dbformat::cluster::{Ranks, Shares};
use awari_dbformat::file::{self, LevelId, LevelReader, Stored};
use awari_dbformat::level::Values;
use awari_dbformat::memory::{self, format_size, PROCESS_BYTES};
use awari_dbformat::{capture_reaches, Board, Index, Levels};
use awari_probe::verify::{self, LevelCheck};
use awari_probe::Tablebase;

use super::read::{empty_check, read_certificate};
use super::report::{print_level, StartReport};
use super::{missing_level, Checked};

/// What the ranks check together.
pub(super) struct Job<'a> {
    /// The database.
    pub(super) tb: &'a Tablebase,
    /// The levels present in the database.
    pub(super) present: &'a [u32],
    /// The levels to check.
    pub(super) wanted: &'a [u32],
    /// The largest level to check.
    pub(super) top: u32,
    /// The ranks.
    pub(super) ranks: &'a dyn Ranks,
    /// The most mismatching boards kept per level.
    pub(super) limit: usize,
    /// Print each level's line (and show its bar) on rank 0.
    pub(super) talk: bool,
}

/// What each rank held: the boards of its shares, the bytes they took,
/// and its peak resident memory.
pub(super) type Held = Vec<[u64; 3]>;

impl Job<'_> {
    /// Checks every level wanted, reading the levels below that captures
    /// reach. Returns the checks (the same on every rank), this rank's
    /// shares, and what each rank held.
    pub(super) fn run(&self) -> Result<(Vec<Checked>, Levels, Held), Box<dyn Error>> {
        let mut levels = Levels::new(self.tb.rules().pits());
        let mut checks = Vec::new();
        for seeds in 0..=self.top {
            if self.wanted.contains(&seeds) || capture_reaches(self.top, seeds) {
                self.level(seeds, &mut levels, &mut checks)?;
            }
        }
        let peak = memory::peak_resident().unwrap_or(0);
        let all = self
            .ranks
            .all_gather(&[levels.boards(), levels.bytes(), peak]);
        let held = all.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        Ok((checks, levels, held))
    }

    /// Reads this rank's share of level `seeds` into `levels`, and checks
    /// the level with the others when it is wanted. A level whose share
    /// cannot be read on some rank is reported and counted as failed when
    /// it is checked, and is an error when it is only needed below.
    fn level(
        &self,
        seeds: u32,
        levels: &mut Levels,
        checks: &mut Vec<Checked>,
    ) -> Result<(), Box<dyn Error>> {
        let (rules, ranks) = (self.tb.rules(), self.ranks);
        let check = self.wanted.contains(&seeds);
        if !self.present.contains(&seeds) {
            return Err(missing_level(self.tb, seeds).into());
        }
        let t = Instant::now();
        let id = LevelId::new(rules, seeds);
        let read = LevelReader::open_expecting(&file::level_path(self.tb.dir(), id), id).and_then(
            |reader| {
                let shares = Shares::even(reader.boards(), ranks.size());
                let mine = shares.range(ranks.rank());
                let len = mine.end - mine.start;
                let sums = reader.verify_checksums_of(mine.start, len).is_ok();
                let values = reader.decode_range(mine.start, len as usize)?;
                Ok((reader.stored(), shares, values, sums))
            },
        );
        // Whether every rank read its share, and its checksums held.
        let failed = read.as_ref().map_or(1, |_| 0);
        let bad_sums = read.as_ref().map_or(0, |r| u64::from(!r.3));
        let sums = ranks.sums(&[failed, bad_sums]);
        let (stored, shares, decoded, _) = match read {
            Ok(read) if sums[0] == 0 => read,
            result => {
                let reason = match result {
                    Err(e) => e.to_string(),
                    Ok(_) => "another rank could not read its share".into(),
                };
                if !check {
                    return Err(format!("level {seeds} is needed but {reason}").into());
                }
                // (Each rank that failed says why; the others say nothing.)
                if failed == 1 {
                    eprintln!("awari-probe: level {seeds}: {reason}");
                }
                let boards = Index::for_pits(rules.pits()).level_size(seeds);
                checks.push((empty_check(seeds, boards), false, 0.0));
                return Ok(());
            }
        };
        let mine = shares.range(ranks.rank());
        let mut values = Values::zeroed(mine.end - mine.start);
        values.copy_from_slice(&decoded);
        drop(decoded);
        if stored == Stored::LowerBounds {
            verify::resolve_share(ranks, rules, seeds, mine.clone(), &mut values, levels);
        }
        levels.insert_shared(seeds, shares, ranks.rank(), Arc::new(values));
        if check {
            let certificate = read_certificate(self.tb.dir(), id, mine);
            let result = self.check(seeds, levels, certificate.as_deref());
            let secs = t.elapsed().as_secs_f64();
            let checksums_ok = sums[1] == 0;
            if self.talk && ranks.is_root() {
                print_level(&result, checksums_ok, secs);
            }
            checks.push((result, checksums_ok, secs));
        }
        // Kept for the levels above packed, in 6 bits a board of 8 up to
        // level 31 (or in bytes, as read, when a score is out of range).
        // (Not the top level: the memory its check freed may still be the
        // allocator's, and the packed copy would add to it.)
        if capture_reaches(self.top, seeds) {
            memory::resident::give_back_free_heap();
            levels.pack(seeds);
        }
        Ok(())
    }

    /// Checks level `seeds`, whose share `levels` holds, with the others.
    fn check(&self, seeds: u32, levels: &Levels, certificate: Option<&[u16]>) -> LevelCheck {
        let boards = Index::for_pits(self.tb.rules().pits()).level_size(seeds);
        let shown = self.talk && self.ranks.is_root();
        let bar = awari_dbformat::cli::level_bar(shown, "verify level", seeds, boards);
        // (Rank 0's share stands for all: the ranks go in step.)
        let scale = self.ranks.size() as u64;
        let tick = |n: u64| bar.inc(n * scale);
        let rules = self.tb.rules();
        let result = verify::check_share(
            self.ranks,
            rules,
            seeds,
            levels,
            certificate,
            self.limit,
            &tick,
        );
        bar.finish_and_clear();
        result
    }
}

/// The memory a rank takes to verify `wanted` (up to `top`) by shares among
/// `ranks`: its share of every level read, of the largest checked level's
/// progress and certificate, and the windows of lookups.
pub(super) fn memory_needed_by_shares(
    tb: &Tablebase,
    wanted: &[u32],
    top: u32,
    ranks: usize,
) -> u64 {
    // (The windows: about 6 lookups a board of 2^17 boards, 16 bytes each
    // with the answers, held twice while they are exchanged.)
    const WINDOWS: u64 = 64 << 20;
    let whole = super::plan::memory_needed(tb, wanted, top) - PROCESS_BYTES;
    whole.div_ceil(ranks as u64) + WINDOWS + PROCESS_BYTES
}

/// The refusal of a verification by shares that does not fit `budget`.
pub(super) fn too_large(needed: u64, budget: u64, ranks: usize) -> String {
    format!(
        "verifying by shares among {ranks} ranks needs about {} a rank, but the budget is {} \
         (--memory); raise it or run more ranks",
        format_size(needed),
        format_size(budget)
    )
}

/// The start position's value, the verdict, and every first move's value,
/// with `per_pit` seeds per pit, each move's child asked of the rank that
/// holds it. Every rank calls it together.
pub(super) fn start_report(
    ranks: &dyn Ranks,
    tb: &Tablebase,
    per_pit: u32,
    levels: &Levels,
) -> StartReport {
    let rules = tb.rules();
    let pits = vec![per_pit as u8; rules.board_pits()];
    let board = Board::new(&pits).expect("a start position is a valid board");
    let moves = rules.legal_moves(&board);
    let children: Vec<Board> = moves.iter().map(|m| m.child).collect();
    let answers = verify::scores_by_shares(ranks, levels, &children);
    let values: Vec<(u8, i8)> = moves
        .iter()
        .zip(answers)
        .map(|(m, score)| (m.pit, m.value(score).get()))
        .collect();
    // The start's value is its best move's (it is a board of the level
    // checked, whose every value its moves give).
    let no_move = rules.value_without_moves(board.seeds()).get();
    let value = values.iter().map(|&(_, v)| v).max().unwrap_or(no_move);
    (value, super::report::verdict(value), values)
}
