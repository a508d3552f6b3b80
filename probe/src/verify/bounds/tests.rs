//! The check of bounds on small levels made here by a plain fixpoint, then
//! changed.

use std::sync::Arc;

use awari_dbformat::{one_ply_bounds, Bounds, Index, RuleSet, Rules, Score, Values};

use super::{check_bound_level, BoundLevels, Check};

/// The lower and upper bounds of a level, index order.
type Pair = (Vec<i8>, Vec<i8>);

/// Levels `0..=top` of `rules` by whole rounds over each level (Jacobi)
/// from `-n` / `+n` until nothing changes: the least lower and greatest
/// upper bounds. Returns each level's bounds.
fn solve(rules: Rules, top: u32) -> (BoundLevels, Vec<Pair>) {
    let index = Index::for_pits(rules.pits());
    let mut below = BoundLevels::new(rules.pits());
    let mut all = Vec::new();
    for n in 0..=top {
        let boards: Vec<_> = index.boards(n).collect();
        let mut lower = vec![-(n as i8); boards.len()];
        let mut upper = vec![n as i8; boards.len()];
        loop {
            let next: Vec<Bounds> = boards
                .iter()
                .map(|b| {
                    let r = one_ply_bounds(rules, b, |c| {
                        Ok::<_, ()>(if c.seeds() == n {
                            let i = index.rank(c).unwrap() as usize;
                            Bounds {
                                lower: Score::new(lower[i]),
                                upper: Score::new(upper[i]),
                            }
                        } else {
                            below.bounds(c)
                        })
                    });
                    r.unwrap()
                })
                .collect();
            let l: Vec<i8> = next.iter().map(|b| b.lower.get()).collect();
            let u: Vec<i8> = next.iter().map(|b| b.upper.get()).collect();
            if l == lower && u == upper {
                break;
            }
            (lower, upper) = (l, u);
        }
        below.insert(n, values(&lower), values(&upper));
        all.push((lower, upper));
    }
    (below, all)
}

fn values(v: &[i8]) -> Arc<Values> {
    let mut out = Values::zeroed(v.len() as u64);
    out.copy_from_slice(v);
    Arc::new(out)
}

fn rules(set: RuleSet) -> Rules {
    Rules::new(set, 3).unwrap()
}

#[test]
fn sound_levels_pass_under_every_rule_set() {
    for set in [
        RuleSet::Awari,
        RuleSet::Abapa,
        RuleSet::GrandSlamReplay,
        RuleSet::CrossWari,
    ] {
        let rules = rules(set);
        let (below, levels) = solve(rules, 8);
        let mut inexact = 0;
        for (n, (lower, upper)) in levels.iter().enumerate() {
            let c = check_bound_level(rules, n as u32, lower, upper, &below, 10, &());
            assert!(c.ok(), "{set:?} level {n}: {c:?}");
            assert_eq!(c.boards, lower.len() as u64);
            inexact += c.boards - c.exact;
        }
        // Endless play matters somewhere, or the test shows little.
        assert!(inexact > 0, "{set:?}: every bound exact");
    }
}

#[test]
fn a_changed_bound_is_named() {
    let rules = rules(RuleSet::Awari);
    let (below, levels) = solve(rules, 7);
    let n = 7u32;
    let (lower, upper) = &levels[n as usize];
    // A board whose bounds differ: raise its lower bound, and separately
    // lower its upper bound.
    let i = (0..lower.len()).find(|&i| lower[i] < upper[i]).unwrap();
    for (bound, raised) in [("lower", true), ("upper", false)] {
        let (mut l, mut u) = (lower.clone(), upper.clone());
        if raised {
            l[i] += 1;
        } else {
            u[i] -= 1;
        }
        let c = check_bound_level(rules, n, &l, &u, &below, 100, &());
        assert!(!c.ok());
        assert!(c.recurrence_errors >= 1 && c.unforced >= 1, "{c:?}");
        let named: Vec<_> = c
            .mismatches
            .iter()
            .filter(|m| m.index == i as u64 && m.bound == bound)
            .collect();
        assert!(named.iter().any(|m| m.check == Check::Recurrence), "{c:?}");
        let forced = named.iter().find(|m| m.check == Check::Forced).unwrap();
        assert!(forced.reason.contains("only"), "{}", forced.reason);
    }
}

#[test]
fn swapped_bounds_satisfy_the_recurrence_but_are_not_forced() {
    // The recurrence is symmetric in the two bounds, so the upper bounds
    // as lower ones and the other way round satisfy it on every level;
    // only the sweeps (and the order) tell.
    let rules = rules(RuleSet::Awari);
    let (_, levels) = solve(rules, 8);
    let mut swapped = BoundLevels::new(3);
    let mut failed = 0;
    for (n, (lower, upper)) in levels.iter().enumerate() {
        let c = check_bound_level(rules, n as u32, upper, lower, &swapped, 10, &());
        assert_eq!(c.recurrence_errors, 0, "level {n}: {c:?}");
        assert_eq!(c.out_of_range, 0);
        let inexact = lower.iter().zip(upper).filter(|(l, u)| l != u).count() as u64;
        assert_eq!(c.crossed, inexact, "level {n}");
        // On the first level with inexact bounds the levels below are
        // exact, so the sweeps find the true bounds: each of those boards
        // fails twice. (Above, they work from swapped levels, whose unique
        // solution may be the swapped one.)
        if inexact > 0 && failed == 0 {
            assert_eq!(c.unforced, 2 * inexact, "level {n}");
            let m = c
                .mismatches
                .iter()
                .find(|m| m.check == Check::Forced)
                .unwrap();
            assert!(m.reason.contains("by a finite strategy"), "{}", m.reason);
            failed += 1;
        }
        swapped.insert(n as u32, values(upper), values(lower));
    }
    assert!(failed > 0);
}

#[test]
fn a_value_out_of_range_is_reported_not_a_panic() {
    let rules = rules(RuleSet::Awari);
    let (below, levels) = solve(rules, 5);
    let (mut lower, upper) = levels[5].clone();
    lower[3] = 100;
    let c = check_bound_level(rules, 5, &lower, &upper, &below, 10, &());
    assert_eq!(c.out_of_range, 1, "{c:?}");
    assert_eq!(c.mismatches[0].check, Check::Range);
    assert!(!c.ok());
}

/// Boards of level `n` whose bounds are trivial (`-n`, `+n`) and that can
/// take `-n + 1` and `n - 1` instead with the recurrence still holding on
/// the whole level: a set closed enough that its boards only justify each
/// other (a ring of endless play). Greedy: start from every trivial board
/// and drop boards until the changed level satisfies the recurrence.
/// Returns the set, and the changed bounds.
fn ring(
    rules: Rules,
    n: u32,
    lower: &[i8],
    upper: &[i8],
    below: &BoundLevels,
) -> (Vec<usize>, Vec<i8>, Vec<i8>) {
    let index = Index::for_pits(rules.pits());
    let boards: Vec<_> = index.boards(n).collect();
    let m = n as i8;
    let mut inside: Vec<bool> = (0..boards.len())
        .map(|i| m > 0 && lower[i] == -m && upper[i] == m)
        .collect();
    loop {
        let (mut l, mut u) = (lower.to_vec(), upper.to_vec());
        for i in 0..boards.len() {
            if inside[i] {
                (l[i], u[i]) = (-m + 1, m - 1);
            }
        }
        let mut dropped = false;
        for (i, b) in boards.iter().enumerate() {
            let want = one_ply_bounds(rules, b, |c| {
                Ok::<_, ()>(if c.seeds() == n {
                    let j = index.rank(c).unwrap() as usize;
                    Bounds {
                        lower: Score::new(l[j]),
                        upper: Score::new(u[j]),
                    }
                } else {
                    below.bounds(c)
                })
            })
            .unwrap();
            if (want.lower.get(), want.upper.get()) == (l[i], u[i]) {
                continue;
            }
            // A board of the set drops out; one outside it drops the
            // quiet children that changed it.
            dropped = true;
            if inside[i] {
                inside[i] = false;
            } else {
                for mv in rules.legal_moves(b).iter().filter(|mv| mv.is_quiet()) {
                    inside[index.rank(&mv.child).unwrap() as usize] = false;
                }
            }
        }
        if !dropped {
            let set = (0..boards.len()).filter(|&i| inside[i]).collect();
            return (set, l, u);
        }
    }
}

#[test]
fn a_ring_that_satisfies_the_recurrence_is_not_forced() {
    // (Levels 2 and 3 of the 3-pit games have rings of 7 and about 20
    // boards.)
    let mut rings = 0;
    for set in [RuleSet::Awari, RuleSet::Abapa, RuleSet::GrandSlamReplay] {
        let rules = rules(set);
        let (below, levels) = solve(rules, 6);
        for (n, (lower, upper)) in levels.iter().enumerate() {
            let n = n as u32;
            let (ring, l, u) = ring(rules, n, lower, upper, &below);
            if !ring.is_empty() {
                rings += 1;
                let c = check_bound_level(rules, n, &l, &u, &below, 1000, &());
                assert_eq!(c.recurrence_errors + c.crossed + c.out_of_range, 0, "{c:?}");
                assert_eq!(c.unforced, 2 * ring.len() as u64, "{c:?}");
                let named: Vec<usize> = c.mismatches.iter().map(|m| m.index as usize).collect();
                assert!(ring.iter().all(|i| named.contains(i)), "{c:?}");
            }
        }
    }
    assert!(rings > 0);
}
