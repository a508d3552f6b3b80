//! Checking a level: the first pass, then, unless the certificate proves
//! every value, the proof search and what it leaves unproven.

use awari_dbformat::memory::huge::HugeArray;
use awari_dbformat::{Index, Rules};

use super::first_pass::first_pass;
use super::levels::derive;
use super::prover::{prove, reset, unproven_boards};
use super::{Level, LevelCheck, Levels, Mismatch};

/// Checks every stored board of level `seeds` (`values`, index order) against its
/// children (`values` and `lower`, which must hold levels `0..=seeds-2`), and
/// proves every non-zero value reachable. Keeps at most `limit` mismatches.
/// `tick(n)` is called as boards are checked (for a progress bar).
///
/// Returns the counts of boards checked, recurrence errors and unproven
/// values; [`LevelCheck::ok`] says whether the level holds. The values
/// must be scores: a lower bound that is not its board's score counts as a
/// recurrence error.
///
/// # Panics
/// When `values` does not have one value per stored board of the level,
/// or `lower` lacks a level that a capture reaches.
pub fn check_level(
    rules: Rules,
    seeds: u32,
    values: &[i8],
    lower: &Levels,
    limit: usize,
    tick: &(dyn Fn(u64) + Sync),
) -> LevelCheck {
    check_level_with(rules, seeds, values, lower, Aids::default(), limit, tick)
}

/// What a level's check may be given besides its values, none of which
/// changes its result.
#[derive(Default)]
pub struct Aids<'a> {
    /// The level's certificate: the generation in which the solver decided
    /// each board (see the module docs, "Certificates"). One that proves
    /// every value saves the proof search; one that does not (wrong, forged,
    /// or of a level with errors) is set aside.
    pub certificate: Option<&'a [u16]>,
    /// Where the proof search keeps its byte per board: an array of exactly
    /// one byte per board of the level, such as a file the caller mapped
    /// ([`awari_dbformat::memory::mapped`]) to keep it out of memory. A new array in
    /// memory when `None`.
    pub progress: Option<HugeArray>,
}

/// Like [`check_level`], with what `aids` gives.
///
/// # Panics
/// As [`check_level`]; also when `aids.progress` is not one byte per board.
pub fn check_level_with(
    rules: Rules,
    seeds: u32,
    values: &[i8],
    lower: &Levels,
    aids: Aids,
    limit: usize,
    tick: &(dyn Fn(u64) + Sync),
) -> LevelCheck {
    let certificate = aids.certificate.filter(|c| c.len() == values.len());
    let level = Level {
        rules,
        seeds,
        index: Index::for_pits(rules.pits()),
        values,
        lower,
    };

    // 1. The recurrence and the range of every value, and with a certificate,
    // the proofs it gives. When it proves every value, that is all.
    if let Some(generations) = certificate {
        let first = first_pass(&level, Some(generations), None, tick);
        if first.uncertified == 0 {
            tick(values.len() as u64 - values.len() as u64 / 2);
            return certified(&level, first.mismatches, limit);
        }
    }
    // A certificate that does not prove the level is set aside: the search
    // below runs as without it, its first pass again but unshown (the
    // progress bar has counted one).
    let shown: &(dyn Fn(u64) + Sync) = if certificate.is_some() { &|_| {} } else { tick };

    // Per board: a counter of proofs still needed, or PROVEN / DONE (in huge
    // pages: the proof search reads and updates it at random).
    let mut progress = aids
        .progress
        .unwrap_or_else(|| HugeArray::zeroed(values.len()));
    assert_eq!(progress.len(), values.len(), "one progress byte per board");
    reset(&mut progress);
    let progress = progress.as_atomic_u8();
    let first = first_pass(&level, None, Some(progress), shown);

    // 2. Progress: every proven board tells its parents (see the module docs).
    prove(&level, progress, tick);

    // 3. What is left unproven.
    searched(&level, first.mismatches, &unproven_boards(progress), limit)
}

/// The check of a level whose certificate proved every value: the first
/// pass's `mismatches` (recurrence errors), at most `limit` of them kept.
fn certified(level: &Level, mut mismatches: Vec<Mismatch>, limit: usize) -> LevelCheck {
    let recurrence_errors = mismatches.len() as u64;
    mismatches.truncate(limit);
    LevelCheck {
        seeds: level.seeds,
        boards: level.values.len() as u64,
        recurrence_errors,
        unproven: 0,
        certified: true,
        mismatches,
    }
}

/// The check of a level after the proof search: the first pass's
/// `mismatches` (recurrence errors) and the boards left unproven, at most
/// `limit` of them kept, in index order.
fn searched(
    level: &Level,
    mut mismatches: Vec<Mismatch>,
    unproven: &[u64],
    limit: usize,
) -> LevelCheck {
    let recurrence_errors = mismatches.len() as u64;
    for &i in unproven {
        if mismatches.len() >= limit.max(1) * 2 {
            break;
        }
        if mismatches.iter().any(|m| m.index == i) {
            continue;
        }
        let board = level.board(i);
        let (rules, index, values, lower) = (level.rules, level.index, level.values, level.lower);
        let derived = derive(rules, index, &board, values, lower).get();
        let reason =
            "no progress: no sequence of moves reaches this value; endless play would give 0";
        mismatches.push(level.mismatch(&board, i, derived, reason.into()));
    }
    mismatches.sort_by_key(|m| m.index);
    mismatches.truncate(limit);
    LevelCheck {
        seeds: level.seeds,
        boards: level.values.len() as u64,
        recurrence_errors,
        unproven: unproven.len() as u64,
        certified: false,
        mismatches,
    }
}
