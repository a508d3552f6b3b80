//! The progress half of `check_level`: a drawn board given a winning value has
//! no sequence of moves that reaches it, so besides the recurrence error it must
//! be counted as unproven; the true values pass both halves.

use std::sync::Arc;

use awari_dbformat::{Index, Rules};
use awari_probe::verify::{check_level, Levels};

#[test]
fn a_draw_turned_into_a_win_is_unproven() {
    let rules = Rules::default();
    let index = Index::for_pits(rules.pits());
    let n = 10;
    let mut levels = Levels::default();
    for (seeds, values) in awari_solver::solve_in_memory(rules, n).iter().enumerate() {
        levels.insert(seeds as u32, Arc::from(&values[..]));
    }
    let values = levels.get(n).expect("level 10").to_vec();
    let truth = check_level(rules, n, &values, &levels, 10, &|_| {});
    assert!(truth.ok(), "{truth:?}");

    // A drawn board with quiet moves only, all into drawn boards: nothing but
    // the (false) claim can make it a win.
    let drawn = (0..values.len() as u64)
        .find(|&i| {
            let moves = rules.legal_moves(&index.unrank(n, i).unwrap());
            values[i as usize] == 0
                && !moves.is_empty()
                && moves
                    .iter()
                    .all(|m| m.is_quiet() && values[index.rank(&m.child).unwrap() as usize] == 0)
        })
        .expect("such a board in level 10");
    // (A false loss is not a progress failure: the recurrence alone catches it.)
    for fake in [1i8, 2] {
        let mut corrupted = values.clone();
        corrupted[drawn as usize] = fake;
        let check = check_level(rules, n, &corrupted, &levels, 10, &|_| {});
        assert!(!check.ok());
        assert!(check.recurrence_errors >= 1, "value {fake}: {check:?}");
        assert!(check.unproven >= 1, "value {fake}: {check:?}");
        assert_eq!(check.mismatches[0].index, drawn);
    }
}
