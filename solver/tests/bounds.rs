//! The solver of `--repetition any` against a plain forward computation of
//! the same bounds, and against the even-split solver.
//!
//! The reference uses forward moves only: every lower bound starts at -n and
//! every upper bound at +n, and sweeps over the level raise the lower bounds
//! and lower the upper ones by the recurrence (a move worth
//! `captured - upper(child)` towards the lower bound, `captured -
//! lower(child)` towards the upper) until nothing changes: the least and the
//! greatest solutions. No un-moves, no counters, no stages.

use awari_dbformat::{one_ply_bounds, Bounds, Index, RuleSet, Rules, Score};
use awari_solver::bounds::solve_bounds_in_memory;
use awari_solver::solve_in_memory;

/// Lower and upper bounds of every level up to `max`, by the reference.
fn reference(rules: Rules, max: u32) -> Vec<(Vec<i8>, Vec<i8>)> {
    let index = Index::for_pits(rules.pits());
    let mut levels: Vec<(Vec<i8>, Vec<i8>)> = Vec::new();
    for n in 0..=max {
        let boards: Vec<_> = index.boards(n).collect();
        let mut lower = vec![-(n as i8); boards.len()];
        let mut upper = vec![n as i8; boards.len()];
        loop {
            let mut changed = false;
            for (i, b) in boards.iter().enumerate() {
                let x = one_ply_bounds(rules, b, |c| {
                    let j = index.rank(c).unwrap() as usize;
                    let (l, u) = if c.seeds() == n {
                        (lower[j], upper[j])
                    } else {
                        let (l, u) = &levels[c.seeds() as usize];
                        (l[j], u[j])
                    };
                    Ok::<_, ()>(Bounds {
                        lower: Score::new(l),
                        upper: Score::new(u),
                    })
                })
                .unwrap();
                // Only upwards for lower, only downwards for upper.
                if x.lower.get() > lower[i] {
                    lower[i] = x.lower.get();
                    changed = true;
                }
                if x.upper.get() < upper[i] {
                    upper[i] = x.upper.get();
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        levels.push((lower, upper));
    }
    levels
}

fn compare(rules: Rules, max: u32) {
    let fast = solve_bounds_in_memory(rules, max);
    let slow = reference(rules, max);
    let even = solve_in_memory(rules, max);
    let index = Index::for_pits(rules.pits());
    for n in 0..=max as usize {
        let (fl, fu) = &fast[n];
        let (sl, su) = &slow[n];
        for i in 0..sl.len() {
            let board = || index.unrank(n as u32, i as u64).unwrap();
            assert_eq!(
                (fl[i], fu[i]),
                (sl[i], su[i]),
                "{rules}: level {n} board {} (index {i}): solver (lower, upper), reference",
                board()
            );
            assert!(
                fl[i] <= even[n][i] && even[n][i] <= fu[i],
                "{rules}: level {n} board {}: even-split {} outside {}..{}",
                board(),
                even[n][i],
                fl[i],
                fu[i]
            );
        }
    }
}

#[test]
fn three_pits_every_rule_set_up_to_10_seeds() {
    for set in RuleSet::ALL {
        compare(Rules::new(set, 3).unwrap(), 10);
    }
}

#[test]
fn four_pits_every_rule_set_up_to_9_seeds() {
    for set in RuleSet::ALL {
        compare(Rules::new(set, 4).unwrap(), 9);
    }
}

#[test]
fn six_pits_every_rule_set_up_to_7_seeds() {
    for set in RuleSet::ALL {
        compare(Rules::new(set, 6).unwrap(), 7);
    }
}

#[test]
fn two_pits_every_rule_set_up_to_14_seeds() {
    for set in RuleSet::ALL {
        compare(Rules::new(set, 2).unwrap(), 14);
    }
}

#[test]
fn a_level_that_does_not_fit_is_planned_refused_and_refused_before_its_files() {
    use awari_dbformat::file::{bound_path, LevelId, Stored, WriteOptions};
    use awari_dbformat::Bound;
    use awari_solver::bounds::{build_bounds, plan_bounds};
    use awari_solver::build::{Options, Plan};
    use awari_solver::SolveError;

    let dir = tempfile::tempdir().unwrap();
    let rules = Rules::new(RuleSet::Abapa, 4).unwrap();
    let index = Index::for_pits(4);
    // Room for level 9 (8.5 bytes a board and the levels below), not for 10.
    let options = Options {
        dir: dir.path().to_path_buf(),
        memory: (64 << 20) + 12 * index.level_size(9),
        progress: false,
        write: WriteOptions::default(),
        certificate: false,
        stored: Stored::Scores,
        partitions: None,
        on_disk: false,
        spare_disk: false,
        work_dir: None,
        checkpoint_seconds: None,
        cells: Default::default(),
        rank_mail_bytes: None,
        count_all: false,
    };
    let plan = Plan::up_to(rules, 12);
    let planned = plan_bounds(&plan, &options);
    let refused: Vec<u32> = planned
        .iter()
        .filter(|p| p.refused.is_some())
        .map(|p| p.seeds)
        .collect();
    assert!(
        refused.contains(&12) && !refused.contains(&9),
        "{refused:?}"
    );
    let mut built = Vec::new();
    let err = build_bounds(&plan, &options, |r| built.push(r.seeds)).unwrap_err();
    assert!(matches!(err, SolveError::Memory { .. }), "{err}");
    // The levels that fit were built; the first that does not has no file.
    let first_refused = *refused.iter().min().unwrap();
    assert_eq!(built, (0..first_refused).collect::<Vec<_>>());
    let id = LevelId::new(rules, first_refused);
    assert!(!bound_path(dir.path(), id, Bound::Lower).exists());
    // Options of the even-split solver alone are refused with a message.
    let on_disk = Options {
        on_disk: true,
        ..options
    };
    let err = build_bounds(&plan, &on_disk, |_| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("--on-disk"), "{err}");
}
