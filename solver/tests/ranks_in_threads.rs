//! The build under several ranks without MPI, as threads of this process
//! ([`ThreadRank`]): what the solver does with several ranks is all here: each rank holding its share
//! of the lower levels and asking the others for the children of its
//! captures, rank 0 gathering the level's shares to write it, and a build
//! that goes on above levels written before decoding its shares with the
//! others. The files must be byte for byte those of one process.
//! (`tests/tests/mpi.rs` runs the same under `mpirun`.)

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use awari_dbformat::cluster::threads::ThreadRank;
use awari_dbformat::cluster::Ranks;
use awari_dbformat::file::{Stored, WriteOptions};
use awari_dbformat::{RuleSet, Rules};
use awari_solver::build::{build, build_on, Cells, LevelReport, Options, Plan};

fn options(dir: &Path) -> Options {
    Options {
        dir: dir.to_path_buf(),
        memory: 1 << 30,
        progress: false,
        write: WriteOptions::default(),
        certificate: true,
        stored: Stored::LowerBounds,
        partitions: None,
        on_disk: false,
        spare_disk: false,
        work_dir: None,
        checkpoint_seconds: None,
        cells: Cells::Auto,
        rank_mail_bytes: None,
        count_all: true,
    }
}

/// Every file of directory `dir` (none in subdirectories, which must be
/// gone) by name, with its bytes; the statistics by their counts only.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        assert!(
            entry.file_type().unwrap().is_file(),
            "{name} left in {dir:?}"
        );
        let bytes = std::fs::read(entry.path()).unwrap();
        let bytes = if name.ends_with(".json") {
            // (Times and ranks' figures differ; the counts must not.)
            let report: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            serde_json::to_vec(&[&report["counts_stored"], &report["counts_all"]]).unwrap()
        } else {
            bytes
        };
        files.insert(name, bytes);
    }
    files
}

/// The files of `plan` built by one process in `one` under `scratch`
/// (`count_all`: [`Options::count_all`]), with certificates or not.
fn files_of_one_process(
    plan: &Plan,
    scratch: &Path,
    count_all: bool,
    certificate: bool,
) -> BTreeMap<String, Vec<u8>> {
    let one = scratch.join("one");
    let options = Options {
        count_all,
        certificate,
        ..options(&one)
    };
    build(plan, &options, |_| {}).unwrap();
    files(&one)
}

/// Builds `plan` into `dir` with `ranks` threads as ranks, with
/// certificates (so that the ranks keep their generations in step).
fn build_with_ranks(plan: &Plan, dir: &Path, ranks: usize) {
    build_with_ranks_holding(plan, dir, ranks, None, true, true);
}

/// [`build_with_ranks`], each rank holding at most `mail_bytes` of the
/// updates in transit in memory (the rest in its files), counting all
/// boards or not (`count_all`), with certificates or not (without, the
/// ranks run their generations apart). Returns the updates the ranks put
/// in their files.
fn build_with_ranks_holding(
    plan: &Plan,
    dir: &Path,
    ranks: usize,
    mail_bytes: Option<u64>,
    count_all: bool,
    certificate: bool,
) -> u64 {
    let options = Options {
        rank_mail_bytes: mail_bytes,
        count_all,
        certificate,
        ..options(dir)
    };
    build_with_ranks_of(plan, &options, ranks)
}

/// Builds `plan` with `options` and `ranks` threads as ranks. Returns the
/// updates the ranks put in their files.
fn build_with_ranks_of(plan: &Plan, options: &Options, ranks: usize) -> u64 {
    let reports = reports_with_ranks_of(plan, options, ranks);
    let stages = reports.iter().flat_map(|r| &r.stages);
    stages.map(|s| s.spilled_updates).sum()
}

/// Builds `plan` with `options` and `ranks` threads as ranks. Returns rank
/// 0's reports of the levels built.
fn reports_with_ranks_of(plan: &Plan, options: &Options, ranks: usize) -> Vec<LevelReport> {
    let reports = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for rank in ThreadRank::job(ranks) {
            let (plan, reports) = (&plan, &reports);
            scope.spawn(move || {
                let keep = |report: &LevelReport| reports.lock().unwrap().push(report.clone());
                build_on(plan, options, &rank, keep)
                    .unwrap_or_else(|e| panic!("rank {}: {e}", rank.rank()))
            });
        }
    });
    reports.into_inner().unwrap()
}

#[test]
fn ranks_in_threads_write_the_files_of_one_process() {
    for set in RuleSet::ALL {
        let rules = Rules::new(set, 6).unwrap();
        let plan = Plan::up_to(rules, 12);
        let scratch = tempfile::tempdir().unwrap();
        let expected = files_of_one_process(&plan, scratch.path(), true, true);
        assert_eq!(
            expected.len(),
            3 * 13,
            "{set}: levels, certificates, statistics"
        );
        for ranks in [2, 3, 4] {
            let dir = scratch.path().join(format!("ranks-{ranks}"));
            build_with_ranks(&plan, &dir, ranks);
            assert!(
                files(&dir) == expected,
                "{set}, {ranks} ranks: files differ"
            );
        }
    }
}

#[test]
fn ranks_whose_mail_goes_to_files_write_the_files_of_one_process() {
    // 64 bytes of updates in memory: nearly every generation's mail goes
    // to the ranks' files and is read back in pieces for the exchange.
    // (Only the stored boards counted: the ranks sum their shares' counts.)
    let rules = Rules::default();
    let plan = Plan::up_to(rules, 13);
    let scratch = tempfile::tempdir().unwrap();
    for certificate in [true, false] {
        let expected = files_of_one_process(&plan, scratch.path(), false, certificate);
        for ranks in [2, 3] {
            let dir = scratch.path().join(format!("ranks-{ranks}-{certificate}"));
            let spilled =
                build_with_ranks_holding(&plan, &dir, ranks, Some(64), false, certificate);
            assert!(spilled > 0, "{ranks} ranks: no update went to a file");
            assert!(
                files(&dir) == expected,
                "{ranks} ranks, certificate {certificate}: files differ"
            );
        }
        std::fs::remove_dir_all(scratch.path().join("one")).unwrap();
    }
}

#[test]
fn ranks_apart_write_the_files_of_one_process() {
    // Without certificates, the ranks run their generations apart, each
    // taking the others' updates when they arrive: the stages must still
    // decide every board as one process does.
    for set in RuleSet::ALL {
        let rules = Rules::new(set, 6).unwrap();
        let plan = Plan::up_to(rules, 12);
        let scratch = tempfile::tempdir().unwrap();
        let expected = files_of_one_process(&plan, scratch.path(), true, false);
        assert_eq!(expected.len(), 2 * 13, "{set}: levels, statistics");
        for ranks in [2, 3, 4] {
            let dir = scratch.path().join(format!("ranks-{ranks}"));
            build_with_ranks_holding(&plan, &dir, ranks, None, true, false);
            assert!(
                files(&dir) == expected,
                "{set}, {ranks} ranks: files differ"
            );
        }
        // Several partitions a rank: a rank's partitions send each other
        // updates too, which it takes between its own generations.
        let dir = scratch.path().join("partitions");
        let options = Options {
            partitions: Some(7),
            certificate: false,
            ..options(&dir)
        };
        build_with_ranks_of(&plan, &options, 3);
        assert!(
            files(&dir) == expected,
            "{set}, 3 ranks of 7 partitions: files differ"
        );
    }
}

#[test]
fn ranks_go_on_above_levels_written_before() {
    // The levels above 9 built again by ranks that read levels 0..=9
    // from their files (shared out in even cuts, not as they were solved),
    // by as many ranks as built them and by others.
    let rules = Rules::default();
    let plan = Plan::up_to(rules, 13);
    let scratch = tempfile::tempdir().unwrap();
    let expected = files_of_one_process(&plan, scratch.path(), true, true);
    for (first, then) in [(3, 3), (2, 4), (4, 1)] {
        let dir = scratch.path().join(format!("ranks-{first}-{then}"));
        build_with_ranks(&Plan::up_to(rules, 9), &dir, first);
        build_with_ranks(&plan, &dir, then);
        assert!(
            files(&dir) == expected,
            "{first} ranks, then {then}: files differ"
        );
    }
}

#[test]
fn ranks_with_their_shares_on_disk_write_the_files_of_one_process() {
    // Each rank keeps its partitions in files of its own directory, with a
    // checkpoint after every stage (the ranks agree on each), in step
    // with or without certificates; one or several partitions a rank.
    let rules = Rules::default();
    let plan = Plan::up_to(rules, 13);
    let scratch = tempfile::tempdir().unwrap();
    for certificate in [true, false] {
        let expected = files_of_one_process(&plan, scratch.path(), true, certificate);
        for (ranks, partitions) in [(2, None), (3, None), (2, Some(5))] {
            let dir = scratch.path().join(format!("ranks-{ranks}-{certificate}"));
            let options = Options {
                on_disk: true,
                partitions,
                certificate,
                checkpoint_seconds: Some(0.0),
                ..options(&dir)
            };
            let reports = reports_with_ranks_of(&plan, &options, ranks);
            assert_eq!(reports.len(), 14);
            assert!(reports.iter().all(|r| r.on_disk), "a level in memory");
            let peaks = reports.iter().flat_map(|r| &r.ranks);
            assert!(peaks.map(|f| f.peak_resident_bytes).all(|peak| peak > 0));
            assert!(
                files(&dir) == expected,
                "{ranks} ranks of {partitions:?} partitions on disk, certificate \
                 {certificate}: files differ"
            );
        }
        std::fs::remove_dir_all(scratch.path().join("one")).unwrap();
    }
}
