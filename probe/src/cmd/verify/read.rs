//! Reading the levels one by one, from the lowest: each decoded (into
//! memory or its file), its lower bounds resolved, and checked when it is
//! one to check (in one process; under `mpirun`, see `shares`).

use std::error::Error;
use std::sync::Arc;
use std::time::Instant;

use awari_dbformat::capture_reaches;
use awari_dbformat::file::{self, LevelId, LevelReader};
use awari_dbformat::level::{Generations, Values};
use awari_dbformat::{levels_captures_reach, Rules};
use awari_probe::verify::{self, LevelCheck, Levels};
use awari_probe::Tablebase;

use super::plan::Placement;
use super::report::print_level;
use super::{missing_level, Checked};

/// What reading and checking the levels needs to know.
pub(super) struct Job<'a> {
    /// The database.
    pub(super) tb: &'a Tablebase,
    /// The levels present in the database.
    pub(super) present: &'a [u32],
    /// The levels to check.
    pub(super) wanted: &'a [u32],
    /// The largest level to check.
    pub(super) top: u32,
    /// Where the levels read are kept.
    pub(super) placement: &'a Placement,
    /// The most mismatching boards kept per level.
    pub(super) limit: usize,
    /// Show a progress bar for each level checked.
    pub(super) bars: bool,
    /// Print each level's line as it is checked.
    pub(super) talk: bool,
}

impl Job<'_> {
    /// Reads every level up to the top one: the checked ones, and those
    /// below the first that captures reach (taken as correct). Returns the
    /// checks, and the levels read.
    pub(super) fn run(&self) -> Result<(Vec<Checked>, Levels), Box<dyn Error>> {
        let mut levels = Levels::new(self.tb.rules().pits());
        let mut checks: Vec<Checked> = Vec::new();
        for seeds in 0..=self.top {
            self.level(seeds, &mut levels, &mut checks)?;
        }
        Ok((checks, levels))
    }

    /// Reads level `seeds` into `levels` when it is needed, and checks it
    /// (pushing onto `checks`) when it is one to check. A level that
    /// is checked but cannot be read is reported and counted as failed.
    fn level(
        &self,
        seeds: u32,
        levels: &mut Levels,
        checks: &mut Vec<Checked>,
    ) -> Result<(), Box<dyn Error>> {
        let rules = self.tb.rules();
        let needed_below = capture_reaches(self.top, seeds);
        let check = self.wanted.contains(&seeds);
        if !check && !needed_below {
            return Ok(());
        }
        if !check && !self.present.contains(&seeds) {
            return Err(missing_level(self.tb, seeds).into());
        }
        // Opened here, not kept by the tablebase: the file is unmapped
        // once decoded.
        let id = LevelId::new(rules, seeds);
        let reader = LevelReader::open_expecting(&file::level_path(self.tb.dir(), id), id)?;
        // Captures reach every level below seeds - 1; one that could not be
        // read (reported above) leaves this level without its children.
        if let Some(unread) = levels_captures_reach(seeds).find(|&s| !levels.has(s)) {
            let reason = format!("level {unread}, which its captures reach, could not be read");
            if !check {
                return Err(format!("level {seeds} is needed but {reason}").into());
            }
            eprintln!("awari-probe: level {seeds}: not checked: {reason}");
            checks.push((empty_check(seeds, reader.boards()), false, 0.0));
            return Ok(());
        }
        let t = Instant::now();
        let checksums_ok = reader.verify_checksums().is_ok();
        let (decoded, certificate) = self.decode(reader, seeds, check, levels);
        let values = match decoded.values {
            Ok(v) => Arc::new(v),
            Err(e) if check => {
                eprintln!("awari-probe: level {seeds}: {e}");
                checks.push((empty_check(seeds, decoded.boards), false, 0.0));
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        if check {
            let result = self.check(seeds, &values, levels, certificate, decoded.boards)?;
            let secs = t.elapsed().as_secs_f64();
            if self.talk {
                print_level(&result, checksums_ok, secs);
            }
            checks.push((result, checksums_ok, secs));
        }
        levels.insert(seeds, values);
        Ok(())
    }

    /// Decodes level `seeds` from `reader`, and reads its certificate when it
    /// is `check`ed in memory. The file is closed at the end: its pages,
    /// mapped while decoding, are not needed again.
    fn decode(
        &self,
        reader: LevelReader,
        seeds: u32,
        check: bool,
        levels: &Levels,
    ) -> (Decoded, Option<Generations>) {
        let (rules, placement) = (self.tb.rules(), self.placement);
        let in_memory = matches!(placement, Placement::Memory);
        // The certificate (one zstd frame, read by one thread) while the level
        // is decoded (in parallel). What is checked is the scores the file
        // gives: lower bounds resolved through the captures (levels below,
        // already read).
        let (values, certificate) = rayon::join(
            || placement.decode(&reader, levels),
            || {
                (check && in_memory).then(|| {
                    read_certificate(
                        self.tb.dir(),
                        LevelId::new(rules, seeds),
                        0..reader.boards(),
                    )
                })
            },
        );
        let boards = reader.boards();
        (Decoded { values, boards }, certificate.flatten())
    }

    /// Checks level `seeds` of `boards` boards, its `values` decoded, over
    /// the `levels` below, with its certificate when there is one.
    fn check(
        &self,
        seeds: u32,
        values: &Values,
        levels: &Levels,
        certificate: Option<Generations>,
        boards: u64,
    ) -> Result<LevelCheck, awari_dbformat::Error> {
        let rules: Rules = self.tb.rules();
        let bar =
            awari_dbformat::cli::level_bar(self.bars, "verify level", seeds, values.len() as u64);
        let aids = verify::Aids {
            certificate: certificate.as_deref(),
            progress: self.placement.progress(seeds, boards)?,
        };
        let result =
            verify::check_level_with(rules, seeds, values, levels, aids, self.limit, &|n| {
                bar.inc(n)
            });
        bar.finish_and_clear();
        Ok(result)
    }
}

/// A level decoded: its values (scores), or why they could not be read,
/// and its number of boards.
struct Decoded {
    values: Result<Values, awari_dbformat::Error>,
    boards: u64,
}

/// The check of a level that could not be read.
pub(super) fn empty_check(seeds: u32, boards: u64) -> LevelCheck {
    LevelCheck {
        seeds,
        boards,
        recurrence_errors: 0,
        unproven: 0,
        certified: false,
        mismatches: Vec::new(),
    }
}

/// The generations of boards `range` of the certificate beside a level,
/// when there is a sound one. A missing one is normal (levels built without
/// `--certificate`, imported levels); a corrupt one is reported and set
/// aside: the proof search does without it.
pub(super) fn read_certificate(
    dir: &std::path::Path,
    id: LevelId,
    range: std::ops::Range<u64>,
) -> Option<Generations> {
    let path = file::certificate_path(dir, id);
    if !path.exists() {
        return None;
    }
    match file::read_certificate_range(&path, id, range) {
        Ok(generations) => Some(generations),
        Err(e) => {
            eprintln!(
                "awari-probe: warning: {e}; verifying level {} without it",
                id.seeds
            );
            None
        }
    }
}
