//! Partitioned solves against the one-partition solve: the same values, free
//! bits, certificates (generations) and stage counts, byte for byte, for
//! every rule set.

use awari_dbformat::Levels;
use awari_dbformat::{Index, RuleSet, Rules};
use awari_solver::cells::CellLayout;
use awari_solver::retro::{self, SolveOptions, SolvedLevel};

/// Every level up to `max`, each solved once per option set; panics at the
/// first level where one differs from the first option set's.
fn assert_same(rules: Rules, max: u32, variants: &[SolveOptions]) {
    let index = Index::for_pits(rules.pits());
    let hidden = indicatif::ProgressBar::hidden();
    let mut lower = Levels::new(rules.pits());
    for n in 0..=max {
        let solved: Vec<SolvedLevel> = variants
            .iter()
            .map(|options| retro::solve_level(rules, n, &lower, &hidden, options).unwrap())
            .collect();
        let (first, rest) = solved.split_first().unwrap();
        for (other, options) in rest.iter().zip(&variants[1..]) {
            let what = format!("{rules}: level {n} with {options:?}");
            if let Some(i) = (0..first.values.len()).find(|&i| first.values[i] != other.values[i]) {
                let board = index.unrank(n, i as u64).unwrap();
                panic!(
                    "{what}: board {board} (index {i}) {} instead of {}",
                    other.values[i], first.values[i]
                );
            }
            assert!(first.free[..] == other.free[..], "{what}: free bits differ");
            let (a, b) = (&first.generations, &other.generations);
            assert_eq!(a.is_some(), b.is_some(), "{what}");
            if let (Some(a), Some(b)) = (a, b) {
                assert!(a[..] == b[..], "{what}: generations differ");
            }
            let counts = |s: &SolvedLevel| -> Vec<(u32, u64, u64, u32)> {
                let stages = s.stages.iter();
                stages
                    .map(|s| (s.k, s.wins, s.losses, s.generations))
                    .collect()
            };
            assert_eq!(counts(first), counts(other), "{what}: stages differ");
            let parts = other.partitions.count() as u64;
            assert!(parts <= options.partitions, "{what}: {parts} partitions");
            if n >= 6 && options.partitions > 1 {
                assert!(
                    parts > 1,
                    "{what}: a level of {} boards in one partition",
                    index.level_size(n)
                );
                let sent: u64 = other.stages.iter().map(|s| s.sent_updates).sum();
                assert!(sent > 0, "{what}: no update crossed partitions");
            }
        }
        lower.insert(
            n,
            std::sync::Arc::new(solved.into_iter().next().unwrap().values),
        );
    }
}

fn partitioned(partitions: u64) -> SolveOptions {
    SolveOptions {
        partitions,
        record_generations: true,
        ..SolveOptions::default()
    }
}

#[test]
fn one_three_sixteen_and_sixty_four_partitions_solve_alike_six_pits() {
    for set in RuleSet::ALL {
        let rules = Rules::new(set, 6).unwrap();
        let variants: Vec<_> = [1, 3, 16, 64].map(partitioned).into();
        assert_same(rules, 12, &variants);
    }
}

#[test]
fn partitions_solve_alike_with_four_and_three_pits() {
    for set in RuleSet::ALL {
        let variants: Vec<_> = [1, 3, 16, 64].map(partitioned).into();
        assert_same(Rules::new(set, 4).unwrap(), 14, &variants);
        assert_same(Rules::new(set, 3).unwrap(), 14, &variants);
    }
}

#[test]
fn partitions_solve_alike_without_lists_and_in_wide_cells() {
    // Without lists every decision goes through the marks; wide cells are
    // those of the levels above 31 seeds.
    for set in RuleSet::ALL {
        let rules = Rules::new(set, 6).unwrap();
        let variants = [
            partitioned(1),
            SolveOptions {
                list_entries: Some(0),
                ..partitioned(7)
            },
            SolveOptions {
                layout: Some(CellLayout::Wide),
                list_entries: Some(1),
                ..partitioned(5)
            },
        ];
        assert_same(rules, 10, &variants);
    }
}

#[test]
fn partitions_on_disk_solve_alike_and_leave_no_work_directory() {
    let scratch = tempfile::tempdir().unwrap();
    let on_disk = |partitions: u64| SolveOptions {
        level_dir: Some(scratch.path().join(format!("work-{partitions}"))),
        checkpoint_seconds: 0.0,
        ..partitioned(partitions)
    };
    for set in [RuleSet::Awari, RuleSet::GrandSlamReplay] {
        let rules = Rules::new(set, 6).unwrap();
        // (Two of 16 mapped at once: partitions unmapped and mapped again.)
        let two_resident = SolveOptions {
            resident_partitions: 2,
            ..on_disk(16)
        };
        let variants = [partitioned(1), on_disk(1), on_disk(3), two_resident];
        assert_same(rules, 11, &variants);
    }
    let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "work directories left: {left:?}");
}

#[test]
fn the_initial_pass_with_its_lookups_sorted_solves_alike() {
    // Windows of 1,000 lookups (a window is at least one chunk of boards),
    // of 100,000 (a few chunks, each a group of its own) and of 10 million
    // (one window a level, in groups of chunks), in memory and on disk.
    let scratch = tempfile::tempdir().unwrap();
    for set in RuleSet::ALL {
        let rules = Rules::new(set, 6).unwrap();
        let sorted = |max: usize, partitions: u64| SolveOptions {
            sorted_lookups: Some(max),
            ..partitioned(partitions)
        };
        let on_disk = SolveOptions {
            level_dir: Some(scratch.path().join(format!("work-{set}"))),
            checkpoint_seconds: 0.0,
            ..sorted(1000, 3)
        };
        let variants = [
            partitioned(1),
            sorted(1000, 1),
            sorted(10_000_000, 1),
            sorted(100_000, 3),
            sorted(1000, 16),
            on_disk,
        ];
        assert_same(rules, 12, &variants);
    }
}

#[test]
fn split_cells_solve_alike_in_memory_and_in_files() {
    // The split cells (a nibble and a bit a board in the words, B and the
    // values in cold bytes beside) against the packed ones: in memory and
    // in files (the words too during the initial pass, or not), in one
    // partition and in several, with full lists, none and one board a
    // generation, and with the lookups sorted.
    let scratch = tempfile::tempdir().unwrap();
    for (set, pits, max) in RuleSet::ALL
        .into_iter()
        .flat_map(|set| [(set, 6, 12), (set, 4, 12), (set, 3, 14)])
    {
        let rules = Rules::new(set, pits).unwrap();
        let split = |partitions: u64| SolveOptions {
            layout: Some(CellLayout::Split),
            ..partitioned(partitions)
        };
        let in_files = |partitions: u64| SolveOptions {
            cold_dir: Some(
                scratch
                    .path()
                    .join(format!("cold-{set}-{pits}-{partitions}")),
            ),
            words_in_file_at_init: true,
            ..split(partitions)
        };
        let variants = [
            partitioned(1),
            split(1),
            in_files(1),
            in_files(5),
            SolveOptions {
                words_in_file_at_init: false,
                ..in_files(2)
            },
            SolveOptions {
                list_entries: Some(0),
                ..split(3)
            },
            SolveOptions {
                list_entries: Some(1),
                sorted_lookups: Some(1000),
                ..in_files(1)
            },
        ];
        assert_same(rules, max, &variants);
    }
    // Every file of cold bytes went with its state, and its directory.
    let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "cold files left: {left:?}");
}

#[test]
fn split_cells_solve_alike_with_eight_pits() {
    // Eight quiet moves: the counter's largest value, and boards too full
    // for the lists.
    for set in [RuleSet::Awari, RuleSet::Abapa, RuleSet::CrossWari] {
        let split = SolveOptions {
            layout: Some(CellLayout::Split),
            ..partitioned(1)
        };
        assert_same(Rules::new(set, 8).unwrap(), 9, &[partitioned(1), split]);
    }
}
