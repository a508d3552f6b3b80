//! Verification by shares ([`check_share`]) against one process
//! ([`check_level_with`]): ranks as threads of this process, each holding
//! only its share of every level, must find the same counts and name the
//! same boards, with and without certificates, for true levels and for
//! levels with wrong values (a win the moves cannot reach, changed values
//! past the limit). `tests/tests/mpi.rs` runs the same under `mpirun`.

use std::sync::Arc;

use awari_dbformat::cluster::threads::ThreadRank;
use awari_dbformat::cluster::{Ranks, Shares};
use awari_dbformat::level::Values;
use awari_dbformat::{Index, RuleSet, Rules};
use awari_probe::verify::{check_level_with, check_share, Aids, LevelCheck, Levels};

mod common;
use common::drawn_board_with_drawn_children;

/// Levels `0..n` and level `n` with its certificate, as the solver gives them.
fn solved(rules: Rules, n: u32) -> (Vec<Arc<Values>>, Vec<i8>, Vec<u16>) {
    let lower = awari_solver::solve_in_memory(rules, n - 1);
    let mut below = Levels::new(rules.pits());
    for (seeds, values) in lower.iter().enumerate() {
        below.insert(seeds as u32, values.clone());
    }
    let options = awari_solver::retro::SolveOptions {
        record_generations: true,
        ..Default::default()
    };
    let hidden = indicatif::ProgressBar::hidden();
    let solved = awari_solver::retro::solve_level(rules, n, &below, &hidden, &options)
        .expect("an in-memory solve has no disk to fail");
    let certificate = solved.generations.expect("recorded").to_vec();
    (lower, solved.values.to_vec(), certificate)
}

/// The check of level `n` (`values`) by `ranks` ranks as threads, each
/// holding its share of `lower` and of `values` (and of `certificate`).
fn by_shares(
    rules: Rules,
    lower: &[Arc<Values>],
    values: &[i8],
    certificate: Option<&[u16]>,
    ranks: usize,
    limit: usize,
) -> Vec<LevelCheck> {
    let n = lower.len() as u32;
    std::thread::scope(|s| {
        let handles: Vec<_> = ThreadRank::job(ranks)
            .into_iter()
            .map(|rank| {
                s.spawn(move || {
                    let me = rank.rank();
                    let mut levels = Levels::new(rules.pits());
                    let mut held = 0;
                    for (seeds, whole) in lower.iter().map(|v| &v[..]).chain([values]).enumerate() {
                        let shares = Shares::even(whole.len() as u64, ranks);
                        let mine = shares.range(me);
                        let part = &whole[mine.start as usize..mine.end as usize];
                        let mut share = Values::zeroed(part.len() as u64);
                        share.copy_from_slice(part);
                        held += part.len();
                        levels.insert_shared(seeds as u32, shares, me, Arc::new(share));
                    }
                    if ranks > 1 {
                        let all = lower.iter().map(|v| v.len()).sum::<usize>() + values.len();
                        assert!(held < all, "rank {me} holds every board");
                    }
                    let mine = levels.share(n).unwrap();
                    let certificate =
                        certificate.map(|c| &c[mine.start as usize..mine.end as usize]);
                    check_share(&rank, rules, n, &levels, certificate, limit, &|_| {})
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Checks level `n` (`values`) in one process and by shares under 1, 2 and
/// 3 ranks, with and without `certificate`: every rank's result must be the
/// one process's. Returns the one process's check without the certificate.
fn same_as_one_process(
    rules: Rules,
    lower: &[Arc<Values>],
    values: &[i8],
    certificate: &[u16],
    limit: usize,
) -> LevelCheck {
    let n = lower.len() as u32;
    let mut levels = Levels::new(rules.pits());
    for (seeds, v) in lower.iter().enumerate() {
        levels.insert(seeds as u32, v.clone());
    }
    let mut plain = None;
    for cert in [None, Some(certificate)] {
        let aids = Aids {
            certificate: cert,
            ..Aids::default()
        };
        let one = check_level_with(rules, n, values, &levels, aids, limit, &|_| {});
        for ranks in 1..=3 {
            for (rank, shared) in by_shares(rules, lower, values, cert, ranks, limit)
                .into_iter()
                .enumerate()
            {
                let what = format!(
                    "{rules:?} level {n}, {ranks} ranks, rank {rank}, certificate {}",
                    cert.is_some()
                );
                assert_eq!(shared.boards, one.boards, "{what}");
                assert_eq!(shared.recurrence_errors, one.recurrence_errors, "{what}");
                assert_eq!(shared.unproven, one.unproven, "{what}");
                assert_eq!(shared.certified, one.certified, "{what}");
                assert_eq!(shared.mismatches, one.mismatches, "{what}");
            }
        }
        plain.get_or_insert(one);
    }
    plain.unwrap()
}

#[test]
fn shares_check_true_and_wrong_levels_as_one_process_does() {
    let rules = Rules::default();
    let n = 11;
    let (lower, values, certificate) = solved(rules, n);
    let truth = same_as_one_process(rules, &lower, &values, &certificate, 10);
    assert!(truth.ok(), "{truth:?}");

    // A draw made a win: a recurrence error, and unproven.
    let drawn = drawn_board_with_drawn_children(rules, n, &values);
    let mut wrong = values.clone();
    wrong[drawn as usize] = 2;
    let check = same_as_one_process(rules, &lower, &wrong, &certificate, 10);
    assert!(
        check.recurrence_errors >= 1 && check.unproven >= 1,
        "{check:?}"
    );
    assert!(check.mismatches.iter().any(|m| m.index == drawn));

    // Many values changed, across every share: more mismatches than the
    // limit keeps, and out of range.
    let mut many = values.clone();
    for i in (0..many.len()).step_by(many.len() / 40) {
        many[i] = if many[i] == 0 { 3 } else { 0 };
    }
    let last = many.len() - 1;
    many[last] = 100;
    for limit in [0, 3, 100] {
        let check = same_as_one_process(rules, &lower, &many, &certificate, limit);
        assert!(check.recurrence_errors >= 20, "{check:?}");
    }
}

#[test]
fn shares_check_another_rule_set_as_one_process_does() {
    let rules = Rules::new(RuleSet::Abapa, 6).unwrap();
    let n = 10;
    let (lower, values, certificate) = solved(rules, n);
    let truth = same_as_one_process(rules, &lower, &values, &certificate, 10);
    assert!(truth.ok(), "{truth:?}");
    let mut wrong = values.clone();
    let won = values.iter().position(|&v| v > 0).unwrap();
    wrong[won] = -wrong[won];
    let check = same_as_one_process(rules, &lower, &wrong, &certificate, 10);
    assert!(!check.ok(), "{check:?}");
}

/// A level stored as lower bounds (every board its capture settles given
/// the lowest value) is turned back into its scores by the shares, each
/// rank asking the others for its captures' children.
#[test]
fn shares_resolve_lower_bounds_to_the_scores() {
    use awari_dbformat::file::best_capture;
    use awari_dbformat::{MoveList, Score};
    use awari_probe::verify::resolve_share;

    let rules = Rules::default();
    let n = 12;
    let lower = awari_solver::solve_in_memory(rules, n);
    let (scores, lower) = (lower[n as usize].to_vec(), &lower[..n as usize]);
    let mut whole = Levels::new(rules.pits());
    for (seeds, v) in lower.iter().enumerate() {
        whole.insert(seeds as u32, v.clone());
    }
    let index = Index::for_pits(rules.pits());
    let mut settled = 0;
    let stored: Vec<i8> = index
        .boards_from(n, 0)
        .zip(&scores)
        .map(|(board, &score)| {
            let mut captures = MoveList::new();
            let child = |b: &awari_dbformat::Board| Ok::<_, ()>(whole.score(b));
            match best_capture(rules, &board, &mut captures, child).unwrap() {
                Some(c) if c == Score::new(score) => {
                    settled += 1;
                    -(n as i8)
                }
                _ => score,
            }
        })
        .collect();
    assert!(settled > 1000, "{settled} boards settled by a capture");
    for ranks in 1..=3 {
        let resolved: Vec<Vec<i8>> = std::thread::scope(|s| {
            let handles: Vec<_> = ThreadRank::job(ranks)
                .into_iter()
                .map(|rank| {
                    let stored = &stored;
                    s.spawn(move || {
                        let me = rank.rank();
                        let mut levels = Levels::new(rules.pits());
                        for (seeds, v) in lower.iter().enumerate() {
                            let shares = Shares::even(v.len() as u64, ranks);
                            let mine = shares.range(me);
                            let mut share = Values::zeroed(mine.end - mine.start);
                            share.copy_from_slice(&v[mine.start as usize..mine.end as usize]);
                            levels.insert_shared(seeds as u32, shares, me, Arc::new(share));
                        }
                        let mine = Shares::even(stored.len() as u64, ranks).range(me);
                        let mut values = stored[mine.start as usize..mine.end as usize].to_vec();
                        resolve_share(&rank, rules, n, mine, &mut values, &levels);
                        values
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(resolved.concat(), scores, "{ranks} ranks");
    }
}
