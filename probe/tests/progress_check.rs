//! The progress half of `check_level`: a drawn board given a winning value has
//! no sequence of moves that reaches it, so besides the recurrence error it must
//! be counted as unproven; the true values pass both halves.

use awari_dbformat::Rules;
use awari_probe::verify::{check_level, check_level_with, Aids, Levels};

mod common;
use common::drawn_board_with_drawn_children;

#[test]
fn a_draw_turned_into_a_win_is_unproven() {
    let rules = Rules::default();
    let n = 10;
    let mut levels = Levels::new(rules.pits());
    for (seeds, values) in awari_solver::solve_in_memory(rules, n).iter().enumerate() {
        levels.insert(seeds as u32, values.clone());
    }
    let values = levels.get(n).expect("level 10").to_vec();
    let truth = check_level(rules, n, &values, &levels, 10, &|_| {});
    assert!(truth.ok(), "{truth:?}");

    // A drawn board with quiet moves only, all into drawn boards: nothing but
    // the (false) claim can make it a win.
    let drawn = drawn_board_with_drawn_children(rules, n, &values);
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

/// The same checks with certificates: the solver's own proves the true level in
/// one pass; a wrong, forged or empty one is set aside and changes nothing.
#[test]
fn certificates_prove_true_levels_and_change_no_result() {
    let rules = Rules::default();
    let n = 10;
    let mut levels = Levels::new(rules.pits());
    let lower = awari_solver::solve_in_memory(rules, n - 1);
    for (seeds, values) in lower.iter().enumerate() {
        levels.insert(seeds as u32, values.clone());
    }
    let mut below = awari_dbformat::Levels::new(rules.pits());
    for (seeds, values) in lower.iter().enumerate() {
        below.insert(seeds as u32, values.clone());
    }
    let hidden = indicatif::ProgressBar::hidden();
    let solved = awari_solver::retro::solve_level(
        rules,
        n,
        &below,
        &hidden,
        &awari_solver::retro::SolveOptions {
            record_generations: true,
            ..Default::default()
        },
    )
    .expect("an in-memory solve has no disk to fail");
    let values = solved.values.to_vec();
    let certificate = solved.generations.expect("recorded").to_vec();

    let with = check_level_with(
        rules,
        n,
        &values,
        &levels,
        with_certificate(&certificate),
        10,
        &|_| {},
    );
    assert!(with.ok() && with.certified, "{with:?}");

    // Forged certificates: all equal (no board proves another), and scrambled.
    let flat = vec![7u16; values.len()];
    let scrambled: Vec<u16> = (0..values.len())
        .map(|i| certificate[(i * 7919) % values.len()])
        .collect();
    let drawn = drawn_board_with_drawn_children(rules, n, &values);
    let mut wrong = values.clone();
    wrong[drawn as usize] = 1;
    for level in [&values, &wrong] {
        let plain = check_level(rules, n, level, &levels, 10, &|_| {});
        for cert in [&certificate, &flat, &scrambled] {
            let check = check_level_with(
                rules,
                n,
                level,
                &levels,
                with_certificate(cert),
                10,
                &|_| {},
            );
            assert_eq!(check.ok(), plain.ok());
            assert_eq!(check.recurrence_errors, plain.recurrence_errors);
            assert_eq!(check.unproven, plain.unproven);
            assert_eq!(check.mismatches, plain.mismatches);
        }
    }
    let flat_check = check_level_with(
        rules,
        n,
        &values,
        &levels,
        with_certificate(&flat),
        10,
        &|_| {},
    );
    assert!(flat_check.ok() && !flat_check.certified);
    let wrong_check = check_level_with(
        rules,
        n,
        &wrong,
        &levels,
        with_certificate(&certificate),
        10,
        &|_| {},
    );
    assert!(!wrong_check.certified && wrong_check.unproven >= 1);
}

/// The aids of a check: the certificate alone.
fn with_certificate(certificate: &[u16]) -> Aids<'_> {
    Aids {
        certificate: Some(certificate),
        ..Aids::default()
    }
}
