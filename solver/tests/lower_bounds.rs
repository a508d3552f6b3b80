//! Level files of lower bounds (`awari_dbformat::file::bounds`): the solver's
//! free bits against a forward computation, and files that read back, once
//! resolved through the captures, as exactly the solved scores.

use std::sync::Arc;

use awari_dbformat::file::{
    self, write_level, write_level_bounded, LevelId, LevelReader, Stored, WriteOptions,
};
use awari_dbformat::level::Values;
use awari_dbformat::{Index, RuleSet, Rules, Score};
use awari_solver::retro::SolveOptions;
use awari_solver::solve_levels;

/// Every level up to `max` with its free bits; with at most `list_entries`
/// frontier list entries per generation when given.
fn solve_levels_within(
    rules: Rules,
    max: u32,
    list_entries: Option<u64>,
) -> Vec<(Arc<Values>, Vec<u64>)> {
    let options = SolveOptions {
        list_entries,
        ..SolveOptions::default()
    };
    solve_levels(rules, max, &options)
}

fn is_free(free: &[u64], i: usize) -> bool {
    free[i / 64] >> (i % 64) & 1 == 1
}

/// A board is free exactly when it has a legal capture and the best of them
/// is worth its value: checked with forward moves ([`Rules::legal_moves`]),
/// not with the solver's capture pass.
fn check_free_bits(rules: Rules, levels: &[(Arc<Values>, Vec<u64>)]) {
    let index = Index::for_pits(rules.pits());
    for (n, (values, free)) in levels.iter().enumerate() {
        for (i, board) in index.boards(n as u32).enumerate() {
            let best = rules
                .legal_moves(&board)
                .iter()
                .filter(|m| !m.is_quiet())
                .map(|m| {
                    let child = &levels[m.child.seeds() as usize].0;
                    m.value(Score::new(child[index.rank(&m.child).unwrap() as usize]))
                })
                .max();
            let expected = best == Some(Score::new(values[i]));
            assert_eq!(
                is_free(free, i),
                expected,
                "{rules}: level {n} board {board} (value {}, best capture {best:?})",
                values[i]
            );
        }
    }
}

#[test]
fn free_bits_mark_exactly_the_boards_a_capture_resolves() {
    for set in RuleSet::ALL {
        check_free_bits(
            Rules::new(set, 6).unwrap(),
            &solve_levels_within(Rules::new(set, 6).unwrap(), 10, None),
        );
        let rules = Rules::new(set, 4).unwrap();
        check_free_bits(rules, &solve_levels_within(rules, 12, None));
        // Without frontier lists, boards are decided through marks instead.
        check_free_bits(rules, &solve_levels_within(rules, 10, Some(0)));
    }
    // With 8 pits a side, boards with a pit of 8 or 9 seeds do not pack for
    // the lists (3 bits a pit) and are marked: their free bits too.
    let rules = Rules::new(RuleSet::Awari, 8).unwrap();
    check_free_bits(rules, &solve_levels_within(rules, 9, None));
}

#[test]
fn lower_bounds_read_back_as_the_scores_once_resolved() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let options = WriteOptions {
        block_boards: 4096,
        segment_boards: 512,
        zstd_level: 3,
        ..WriteOptions::default()
    };
    for set in RuleSet::ALL {
        for (pits, max) in [(4u8, 12u32), (6, 10)] {
            let rules = Rules::new(set, pits).unwrap();
            let index = Index::for_pits(pits);
            let levels = solve_levels_within(rules, max, None);
            for (n, (values, free)) in levels.iter().enumerate() {
                let id = LevelId::new(rules, n as u32);
                let path = write_level_bounded(dir, id, values, free, options).unwrap();
                let reader = LevelReader::open_expecting(&path, id).unwrap();
                assert_eq!(reader.stored(), Stored::LowerBounds);
                let mut read = reader.decode_all().unwrap();
                for i in 0..values.len() {
                    assert!(read[i] <= values[i], "{id:?} board {i} above its score");
                    if !is_free(free, i) {
                        assert_eq!(read[i], values[i], "{id:?} board {i} is not free");
                    }
                }
                // One board at a time, as a lookup does.
                for (i, board) in index.boards(n as u32).enumerate().step_by(7) {
                    let score = file::resolve(
                        Stored::LowerBounds,
                        rules,
                        &board,
                        reader.get(i as u64).unwrap(),
                        |child| {
                            let level = &levels[child.seeds() as usize].0;
                            Ok::<_, ()>(Score::new(level[index.rank(child).unwrap() as usize]))
                        },
                    )
                    .unwrap();
                    assert_eq!(score, Score::new(values[i]), "{id:?} board {i}");
                }
                // The whole level at once, as the solver and verify do.
                file::resolve_level(LevelId::new(rules, n as u32), 0, &mut read, |child| {
                    let level = &levels[child.seeds() as usize].0;
                    Ok::<_, ()>(Score::new(level[index.rank(child).unwrap() as usize]))
                })
                .unwrap();
                assert!(read[..] == values[..], "{id:?} resolves to other values");
            }
        }
    }
}

#[test]
fn lower_bounds_make_real_levels_smaller() {
    // Level 14 of 6-pit awari: a capture reaches the score of about a third
    // of the boards; the file of lower bounds takes about 2.1 bits per board
    // where the file of scores takes about 2.8.
    let scratch = tempfile::tempdir().unwrap();
    let rules = Rules::default();
    let levels = solve_levels_within(rules, 14, None);
    let (values, free) = &levels[14];
    let id = LevelId::new(rules, 14);
    let free_share = free.iter().map(|w| w.count_ones()).sum::<u32>() as f64 / values.len() as f64;
    assert!((0.25..0.45).contains(&free_share), "{free_share}");
    let options = WriteOptions::default();
    let exact = scratch.path().join("exact");
    std::fs::create_dir(&exact).unwrap();
    let scores = write_level(&exact, id, values, options).unwrap();
    let bounds = write_level_bounded(scratch.path(), id, values, free, options).unwrap();
    let size = |p: &std::path::Path| std::fs::metadata(p).unwrap().len() as f64;
    let ratio = size(&bounds) / size(&scores);
    assert!(
        ratio < 0.85,
        "lower bounds take {ratio:.3} of the scores' bytes"
    );
}
