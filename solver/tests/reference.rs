//! The solver against a deliberately simple, independent reference solver.
//!
//! The reference uses forward moves only: for each threshold k it sweeps every
//! board of the level until nothing changes (a board is in W_k when a capture
//! reaches k or a child is in L_k; in L_k when its captures give at most -k and
//! every child is in W_k). No un-moves, no counters, no generations.

use std::sync::Arc;

use awari_dbformat::level::Values;
use awari_dbformat::{Index, RuleSet, Rules};
use awari_solver::cells::CellLayout;
use awari_solver::retro::SolveOptions;
use awari_solver::{solve_in_memory, solve_levels};

/// Values of every level up to `max`, by the reference algorithm.
fn reference(rules: Rules, max: u32) -> Vec<Vec<i8>> {
    let index = Index::for_pits(rules.pits());
    let mut levels: Vec<Vec<i8>> = Vec::new();
    for n in 0..=max {
        let boards: Vec<_> = index.boards(n).collect();
        let rank = |b: &awari_dbformat::Board| index.rank(b).unwrap() as usize;
        // Best capture (or terminal value) and quiet children, from forward moves.
        let mut best = vec![None::<i8>; boards.len()];
        let mut quiet: Vec<Vec<usize>> = vec![Vec::new(); boards.len()];
        for (i, b) in boards.iter().enumerate() {
            if let Some(v) = rules.terminal_value(b) {
                best[i] = Some(v.get());
            }
            let moves = rules.legal_moves(b);
            for m in moves.iter() {
                if m.is_quiet() {
                    quiet[i].push(rank(&m.child));
                } else {
                    let lower = &levels[m.child.seeds() as usize];
                    let v = m
                        .value(awari_dbformat::Score::new(lower[rank(&m.child)]))
                        .get();
                    best[i] = Some(best[i].map_or(v, |b| b.max(v)));
                }
            }
        }
        // value[i]: Some(v) once decided.
        let mut value = vec![None::<i8>; boards.len()];
        for k in (1..=n as i8).rev() {
            loop {
                let mut changed = false;
                for i in 0..boards.len() {
                    if value[i].is_some() {
                        continue;
                    }
                    let b = best[i].unwrap_or(i8::MIN);
                    let win = b >= k || quiet[i].iter().any(|&c| value[c].is_some_and(|v| v <= -k));
                    let loss =
                        b <= -k && quiet[i].iter().all(|&c| value[c].is_some_and(|v| v >= k));
                    if win {
                        value[i] = Some(k);
                        changed = true;
                    } else if loss {
                        value[i] = Some(-k);
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
        }
        levels.push(value.into_iter().map(|v| v.unwrap_or(0)).collect());
    }
    levels
}

fn compare(rules: Rules, max: u32) {
    compare_with(rules, max, solve_in_memory(rules, max));
}

/// Every level up to `max`, solved with frontier lists of at most
/// `list_entries` boards per generation (as a small memory budget asks).
fn solve_with_lists(rules: Rules, max: u32, list_entries: u64) -> Vec<Arc<Values>> {
    let options = SolveOptions {
        list_entries: Some(list_entries),
        ..SolveOptions::default()
    };
    solve_levels(rules, max, &options)
        .into_iter()
        .map(|(values, _)| values)
        .collect()
}

fn compare_with(rules: Rules, max: u32, fast: Vec<Arc<Values>>) {
    let slow = reference(rules, max);
    let index = Index::for_pits(rules.pits());
    for n in 0..=max as usize {
        assert_eq!(fast[n].len(), slow[n].len());
        if let Some(i) = (0..slow[n].len()).find(|&i| fast[n][i] != slow[n][i]) {
            let board = index.unrank(n as u32, i as u64).unwrap();
            panic!(
                "{rules}: level {n} board {board} (index {i}): solver {} reference {}",
                fast[n][i], slow[n][i]
            );
        }
    }
}

#[test]
fn six_pits_every_rule_set_up_to_10_seeds() {
    for set in RuleSet::ALL {
        compare(Rules::new(set, 6).unwrap(), 10);
    }
}

#[test]
fn three_pits_every_rule_set_up_to_12_seeds() {
    for set in RuleSet::ALL {
        compare(Rules::new(set, 3).unwrap(), 12);
    }
}

#[test]
fn four_pits_every_rule_set_up_to_12_seeds() {
    for set in RuleSet::ALL {
        compare(Rules::new(set, 4).unwrap(), 12);
    }
}

#[test]
fn fewer_frontier_lists_give_the_same_values() {
    // No lists at all (every decided board marked and unranked again), and
    // lists of one board per generation (nearly all marked).
    for entries in [0, 1] {
        for set in RuleSet::ALL {
            let rules = Rules::new(set, 4).unwrap();
            compare_with(rules, 10, solve_with_lists(rules, 10, entries));
        }
    }
}

#[test]
fn wide_cells_give_the_same_values() {
    // Levels above 31 seeds are solved in wide cells (12 bits a board); solve
    // small ones that way too, with full lists and with none, and compare.
    for entries in [None, Some(0)] {
        for set in RuleSet::ALL {
            let rules = Rules::new(set, 4).unwrap();
            let options = SolveOptions {
                layout: Some(CellLayout::Wide),
                list_entries: entries,
                ..SolveOptions::default()
            };
            let wide = solve_levels(rules, 10, &options)
                .into_iter()
                .map(|(values, _)| values)
                .collect();
            compare_with(rules, 10, wide);
        }
    }
}

#[test]
fn eight_pits_with_pits_too_full_for_the_lists_up_to_9_seeds() {
    // With 8 pits a side a listed board packs 3 bits a pit (awari_dbformat::
    // BoardPacker): boards with a pit of 8 or 9 seeds go by marks instead.
    for set in [RuleSet::Awari, RuleSet::Abapa, RuleSet::CrossWari] {
        compare(Rules::new(set, 8).unwrap(), 9);
    }
}
