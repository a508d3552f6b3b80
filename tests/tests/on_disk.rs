//! End-to-end: levels solved in partitions kept on disk (`--on-disk`) write
//! the same files as levels solved in memory, and a build killed in the middle
//! of a level (in its stages, or in its initial pass) resumes from its last
//! checkpoint to the same files.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use awari_tests::{binary, database_files, json_lines, ok_stdout, run, scratch};
use serde_json::Value;

/// Levels 0..=18 of the 6-pit game solved in memory, with certificates and
/// the counts over all boards: the files and counts every on-disk build
/// here must reproduce.
fn reference() -> &'static PathBuf {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = scratch("disk-reference");
        let d = dir.to_str().unwrap();
        ok_stdout(&run(
            "awari-solve",
            &[
                "--db",
                d,
                "--max-seeds",
                "18",
                "--certificate",
                "--count-all",
            ],
        ));
        dir
    })
}

fn assert_same_as_reference(dir: &Path, count: usize) {
    let files = database_files(dir);
    let reference = database_files(reference());
    assert_eq!(files.len(), count, "{:?}", files.keys());
    for (name, bytes) in &files {
        assert!(
            reference[name] == *bytes,
            "{name} differs from the in-memory build"
        );
    }
}

#[test]
fn levels_on_disk_in_four_partitions_write_the_same_files() {
    let dir = scratch("on-disk");
    let d = dir.to_str().unwrap();
    let out = ok_stdout(&run(
        "awari-solve",
        &[
            "--db",
            d,
            "--max-seeds",
            "16",
            "--on-disk",
            "--partitions",
            "4",
            "--checkpoint-seconds",
            "0",
            "--certificate",
            "--json",
        ],
    ));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 17);
    let last = &lines[16];
    assert_eq!(last["seeds"], 16);
    assert_eq!(last["on_disk"], true, "{last}");
    assert_eq!(last["partitions"], 4, "{last}");
    assert!(last["resumed_from_stage"].is_null(), "{last}");
    let sent: u64 = last["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sent_updates"].as_u64().unwrap())
        .sum();
    assert!(sent > 0, "no update crossed partitions: {last}");
    // 17 levels and their certificates, byte for byte.
    assert_same_as_reference(&dir, 34);
    assert!(
        !dir.join("work").exists(),
        "the work directory outlives the build"
    );
}

#[test]
fn a_build_killed_mid_level_on_disk_resumes_from_its_checkpoint() {
    let dir = scratch("disk-resume");
    let d = dir.to_str().unwrap();
    // Levels 0..=16 as built in memory; 17 and 18 on disk.
    copy_reference_levels(&dir, 16);
    let args = [
        "--db",
        d,
        "--max-seeds",
        "18",
        "--on-disk",
        "--partitions",
        "4",
        "--checkpoint-seconds",
        "0",
        "--json",
    ];
    let mut child = Command::new(binary("awari-solve"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill -9 once level 18 has a checkpoint past two stages.
    wait_for_level_18(&dir.join("work"), &mut child, two_stages_done);
    // Without --spare-disk the lower levels' scores stay in files throughout
    // (the test below asserts the opposite with it).
    let scores = scores_files(&dir.join("work"));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        scores.len() >= 17,
        "scores not held in the stages: {scores:?}"
    );
    assert!(
        !dir.join("awari-p6-n18.awl").exists(),
        "no partial level may stand as a level"
    );

    let lines = json_lines(&ok_stdout(&run("awari-solve", &args)));
    let level18 = lines.iter().find(|l| l["seeds"] == 18).unwrap();
    assert_eq!(level18["status"], "built");
    let resumed = level18["resumed_from_stage"].as_u64();
    assert!(
        resumed.is_some_and(|k| k < 18),
        "level 18 started over: {level18}"
    );
    assert_same_as_reference(&dir, 19);
}

#[test]
fn a_budget_too_small_for_memory_sends_the_level_and_the_lower_levels_to_disk() {
    let dir = scratch("disk-budget");
    let d = dir.to_str().unwrap();
    // Level 18 in memory with levels 0..=16 needs about 180 MB; in the
    // packed cells (not the split ones, which would fit) it goes to disk.
    let out = ok_stdout(&run(
        "awari-solve",
        &[
            "--db",
            d,
            "--max-seeds",
            "18",
            "--memory",
            "120M",
            "--cells",
            "packed",
            "--json",
        ],
    ));
    let lines = json_lines(&out);
    let last = &lines[18];
    assert_eq!(last["on_disk"], true, "{last}");
    assert!(last["partitions"].as_u64().unwrap() > 1, "{last}");
    assert_eq!(last["lower_levels_in_files"], true, "{last}");
    assert_same_as_reference(&dir, 19);
    assert!(
        !dir.join("work").exists(),
        "the scores files outlive the build"
    );
}

#[test]
fn a_budget_too_small_for_the_packed_cells_solves_the_level_in_the_split_cells() {
    // Level 18 (33 M boards) in 120M: 44 MB of packed cells do not fit
    // beside the rest (64 MiB for the process, 33 MB for the writer), the
    // 22 MB of split words do; their byte a board goes to a file of the
    // work directory, and the level's values are made there.
    let dir = scratch("split-budget");
    let d = dir.to_str().unwrap();
    let out = ok_stdout(&run(
        "awari-solve",
        &["--db", d, "--max-seeds", "18", "--memory", "120M", "--json"],
    ));
    let lines = json_lines(&out);
    let last = &lines[18];
    assert_eq!(last["status"], "built", "{last}");
    assert_eq!(last["on_disk"], false, "{last}");
    assert_eq!(last["split"], true, "{last}");
    let peak = last["peak_memory_bytes"].as_u64().unwrap();
    assert!(peak > 0 && peak <= 120 << 20, "peak {peak} over 120 MiB");
    assert_same_as_reference(&dir, 19);
    assert!(
        !dir.join("work").exists(),
        "the work directory outlives the build"
    );
}

#[test]
fn quiet_moves_counted_once_the_file_is_written_give_the_counts_of_the_build_in_memory() {
    // Level 20 (80 M boards) alone in 150M, on disk, its values assembled
    // in a file: beside the writer, the room left would value its unstored
    // boards' quiet moves in two passes over those values; once the file is
    // written and the free bits are given back, in one. The counts and the
    // file are those of the build in memory.
    let (memory, budget) = (scratch("quiet-in-memory"), scratch("quiet-after-writing"));
    // Level 20's report of a build into `dir`, with `extra` arguments.
    let level_20 = |dir: &Path, extra: &[&str]| {
        let args = ["--db", dir.to_str().unwrap(), "--max-seeds", "20", "--json"];
        let args = [&args[..], &["--count-all"]].concat();
        let out = ok_stdout(&run("awari-solve", &[&args[..], extra].concat()));
        json_lines(&out)[20].clone()
    };
    let expected = &level_20(&memory, &[]);
    // (Levels 0..=19 copied with their statistics: only level 20 is built.)
    for entry in std::fs::read_dir(&memory).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap();
        if path.is_file() && !name.to_string_lossy().starts_with("awari-p6-n20.") {
            std::fs::copy(&path, budget.join(name)).unwrap();
        }
    }
    let level = &level_20(&budget, &["--memory", "150M"]);
    assert_eq!(level["status"], "built", "{level}");
    assert_eq!(level["quiet_moves_after_writing"], true, "{level}");
    assert_eq!(expected["quiet_moves_after_writing"], false, "{expected}");
    assert_eq!(level["counts_all"], expected["counts_all"]);
    assert_eq!(level["counts_stored"], expected["counts_stored"]);
    let (built, reference) = (database_files(&budget), database_files(&memory));
    let name = "awari-p6-n20.awl";
    assert!(
        built[name] == reference[name],
        "{name} differs from the in-memory build"
    );
}

#[test]
fn the_last_level_short_of_disk_counts_before_writing_and_gives_the_scores_back() {
    // Level 18, the last, in the split cells with its lower levels in files:
    // --spare-disk (as a disk that cannot hold the scores beside the level
    // file) counts its statistics first, gives the scores back, then writes
    // its file. The plan says so and needs no more disk (less where the
    // level file outgrows the words); the files and the counts are those
    // of the build in memory.
    let dir = scratch("split-count-first");
    let d = dir.to_str().unwrap();
    let args = [
        "--db",
        d,
        "--max-seeds",
        "18",
        "--memory",
        "120M",
        "--count-all",
        "--json",
    ];
    let plan = |extra: &[&str]| {
        let out = ok_stdout(&run(
            "awari-solve",
            &[&args[..], &["--plan"], extra].concat(),
        ));
        json_lines(&out)[18].clone()
    };
    let (usual, sparing) = (plan(&[]), plan(&["--spare-disk"]));
    assert_eq!(usual["count_before_writing"], false, "{usual}");
    assert_eq!(sparing["count_before_writing"], true, "{sparing}");
    assert_eq!(sparing["split"], true, "{sparing}");
    let (usual, sparing) = (usual["disk_bytes"].as_u64(), sparing["disk_bytes"].as_u64());
    assert!(sparing <= usual, "{sparing:?} over {usual:?}");
    let out = ok_stdout(&run(
        "awari-solve",
        &[&args[..], &["--spare-disk"]].concat(),
    ));
    let last = &json_lines(&out)[18];
    assert_eq!(last["split"], true, "{last}");
    assert_eq!(last["lower_levels_in_files"], true, "{last}");
    assert_eq!(last["counts_all"], reference_counts_all(18), "{last}");
    assert_same_as_reference(&dir, 19);
    assert!(
        !dir.join("work").exists(),
        "the work directory outlives the build"
    );
}

#[test]
fn a_stopped_runs_scratch_for_the_level_is_cleared_before_it_is_built() {
    // Level 18 in the split cells, its bytes in a file of its work
    // directory, where a killed run left its scratch (no checkpoint):
    // cleared before the disk is planned (a killed level 36 left 23 GB
    // there, and the rerun was refused for want of disk), the files those
    // of the build in memory, nothing left behind.
    let dir = scratch("split-stale-scratch");
    let d = dir.to_str().unwrap();
    copy_reference_levels(&dir, 17);
    let stale = dir.join("work").join("awari-p6-n18.work");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("cold-0"), vec![7u8; 1 << 20]).unwrap();
    std::fs::write(stale.join("words-0"), vec![7u8; 1 << 20]).unwrap();
    std::fs::write(stale.join("left-by-the-killed-run"), b"x").unwrap();
    let out = ok_stdout(&run(
        "awari-solve",
        &["--db", d, "--max-seeds", "18", "--memory", "120M", "--json"],
    ));
    let last = &json_lines(&out)[18];
    assert_eq!(last["status"], "built", "{last}");
    assert_eq!(last["split"], true, "{last}");
    assert_same_as_reference(&dir, 19);
    assert!(
        !dir.join("work").exists(),
        "the work directory outlives the build"
    );
}

#[test]
fn the_split_cells_beside_lower_levels_in_memory_stay_within_the_budget() {
    // Level 18 in 160M: levels 0..=16 (30 MB) stay in memory, the packed
    // cells (44 MB) do not fit beside them, the split words (22 MB) do.
    // Their words (during the initial pass) and values (after) are mapped
    // from files, whose pages are held under the ceiling too (without
    // that, level 24 in 900M peaked at 992 MiB).
    let dir = scratch("split-lower-in-memory");
    let d = dir.to_str().unwrap();
    let out = ok_stdout(&run(
        "awari-solve",
        &["--db", d, "--max-seeds", "18", "--memory", "160M", "--json"],
    ));
    let last = &json_lines(&out)[18];
    assert_eq!(last["split"], true, "{last}");
    assert_eq!(last["lower_levels_in_files"], false, "{last}");
    let peak = last["peak_memory_bytes"].as_u64().unwrap();
    assert!(peak > 0 && peak <= 160 << 20, "peak {peak} over 160 MiB");
    assert_same_as_reference(&dir, 19);
}

#[test]
fn a_level_in_memory_reading_its_lower_levels_from_files_stays_within_the_budget() {
    // Level 22 in 400M: its cells in memory (the plan counts 379 MiB), the
    // 262 MiB of levels 0..=20 read at random from files of scores through
    // the room left. The threads map their pages faster than the watch
    // sees them; the initial pass holds them under the ceiling as it goes
    // (without: peaks of 424 and 427 MiB).
    let dir = scratch("files-budget");
    let d = dir.to_str().unwrap();
    ok_stdout(&run("awari-solve", &["--db", d, "--max-seeds", "21"]));
    let out = ok_stdout(&run(
        "awari-solve",
        &["--db", d, "--max-seeds", "22", "--memory", "400M", "--json"],
    ));
    let level22 = &json_lines(&out)[22];
    assert_eq!(level22["status"], "built", "{level22}");
    assert_eq!(level22["on_disk"], false, "{level22}");
    assert_eq!(level22["lower_levels_in_files"], true, "{level22}");
    let peak = level22["peak_memory_bytes"].as_u64().unwrap();
    assert!(peak > 0 && peak <= 400 << 20, "peak {peak} over 400 MiB");
}

#[test]
fn statistics_missing_beside_levels_present_are_counted_within_the_budget() {
    // Level files without their statistics (a run stopped between the two,
    // or files copied in): the build counts them, in shares of the room the
    // budget leaves, to the counts of the build that wrote them.
    let dir = scratch("disk-missing-stats");
    let d = dir.to_str().unwrap();
    copy_reference_levels(&dir, 17);
    let out = ok_stdout(&run(
        "awari-solve",
        &[
            "--db",
            d,
            "--max-seeds",
            "18",
            "--memory",
            "120M",
            "--cells",
            "packed",
            "--count-all",
            "--json",
        ],
    ));
    let lines = json_lines(&out);
    for seeds in [16, 17] {
        let line = &lines[seeds as usize];
        assert_eq!(line["status"], "present", "{line}");
        assert_eq!(line["counts_all"], reference_counts_all(seeds), "{line}");
    }
    assert_eq!(lines[18]["lower_levels_in_files"], true, "{}", lines[18]);
    assert_same_as_reference(&dir, 19);
}

#[test]
fn the_plan_says_how_each_level_would_be_built_and_builds_nothing() {
    let dir = scratch("plan");
    let d = dir.to_str().unwrap();
    let plan = |extra: &[&str]| -> Vec<Value> {
        let mut args = vec!["--db", d, "--max-seeds", "18", "--plan", "--json"];
        args.extend_from_slice(extra);
        json_lines(&ok_stdout(&run("awari-solve", &args)))
    };
    let roomy = plan(&[]);
    assert_eq!(roomy.len(), 19);
    assert!(roomy
        .iter()
        .all(|l| l["on_disk"] == false && l["present"] == false));
    // Short of memory: the split cells, their bytes in a file; in the
    // packed cells, on disk in partitions.
    let split = &plan(&["--memory", "120M"])[18];
    assert_eq!(split["split"], true, "{split}");
    assert_eq!(split["cold_in_file"], true, "{split}");
    assert_eq!(split["on_disk"], false, "{split}");
    assert!(
        split["memory_bytes"].as_u64().unwrap() <= 120 << 20,
        "{split}"
    );
    let tight = plan(&["--memory", "120M", "--cells", "packed"]);
    let level18 = &tight[18];
    assert_eq!(level18["on_disk"], true, "{level18}");
    assert!(level18["partitions"].as_u64().unwrap() > 1, "{level18}");
    assert!(
        level18["memory_bytes"].as_u64().unwrap() <= 120 << 20,
        "{level18}"
    );
    assert!(level18["disk_bytes"].as_u64().unwrap() > 0, "{level18}");
    // Shared by 4 ranks (MPI), each holding a quarter of every level in
    // its own 120M: level 18 fits in memory, a partition a rank.
    let shared = &plan(&["--memory", "120M", "--cells", "packed", "--ranks", "4"])[18];
    assert_eq!(shared["ranks"], 4, "{shared}");
    assert_eq!(shared["on_disk"], false, "{shared}");
    assert_eq!(shared["partitions"], 4, "{shared}");
    assert!(
        shared["memory_bytes"].as_u64() < level18["memory_bytes"].as_u64(),
        "{shared}"
    );
    let refused = plan(&["--memory", "1M"]);
    let why = refused[18]["refused"].as_str().expect("refused");
    assert!(why.contains("needs about"), "{why}");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "the plan wrote files"
    );
    // Over a complete database, every level is present.
    let d = reference().to_str().unwrap();
    let args = ["--db", d, "--max-seeds", "18", "--plan", "--json"];
    let present = json_lines(&ok_stdout(&run("awari-solve", &args)));
    assert!(present.iter().all(|l| l["present"] == true));
}

#[test]
fn a_level_sparing_the_disk_gives_the_scores_back_and_resumes_to_the_same_files() {
    let dir = scratch("disk-spare");
    let d = dir.to_str().unwrap();
    let args = [
        "--db",
        d,
        "--max-seeds",
        "18",
        "--on-disk",
        "--spare-disk",
        // (A budget beyond the machine leaves the page cache no room: the
        // initial pass then reads the lower levels in sorted order.)
        "--memory",
        "1000G",
        "--partitions",
        "3",
        "--checkpoint-seconds",
        "0",
        "--count-all",
        "--json",
    ];
    let plan = json_lines(&ok_stdout(&run(
        "awari-solve",
        &[&args[..], &["--plan"]].concat(),
    )));
    // (Level 0 has no lower level.)
    assert!(
        plan[1..].iter().all(|r| r["spare_disk"] == true),
        "{plan:?}"
    );
    // Levels 0..=17 as the command builds them, then 18 killed mid-stage.
    let mut first = args;
    first[3] = "17";
    let built = json_lines(&ok_stdout(&run("awari-solve", &first)));
    assert!(
        built.iter().all(|l| l["resumed_from_stage"].is_null()),
        "a level built from the start says it resumed: {built:?}"
    );
    assert!(
        built[2..].iter().all(|l| l["sorted_lookups"] == true),
        "{built:?}"
    );
    // The unstored boards' captures valued in the sorted windows, and
    // every level's statistics the reference's.
    for line in &built[6..] {
        assert_eq!(line["unstored_captures_in_initial_pass"], true, "{line}");
    }
    for line in &built {
        let seeds = line["seeds"].as_u64().unwrap() as u32;
        assert_eq!(line["counts_all"], reference_counts_all(seeds), "{line}");
    }
    let mut child = Command::new(binary("awari-solve"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let work = dir.join("work");
    wait_for_level_18(&work, &mut child, two_stages_done);
    // While the stages run, no file of scores takes the disk.
    let scores = scores_files(&work);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(scores.is_empty(), "scores held in the stages: {scores:?}");

    let lines = json_lines(&ok_stdout(&run("awari-solve", &args)));
    let level18 = lines.iter().find(|l| l["seeds"] == 18).unwrap();
    assert_eq!(level18["status"], "built");
    assert!(
        level18["resumed_from_stage"]
            .as_u64()
            .is_some_and(|k| k < 18),
        "level 18 started over: {level18}"
    );
    assert!(
        level18["counts_all"] == reference_counts_all(18),
        "{level18}"
    );
    // (Their file stayed in the level's directory through the kill.)
    assert_eq!(
        level18["unstored_captures_in_initial_pass"], true,
        "{level18}"
    );
    let files = database_files(&dir);
    let reference = database_files(reference());
    for s in 0..=18 {
        let name = format!("awari-p6-n{s}.awl");
        assert!(files[&name] == reference[&name], "{name} differs");
    }
    assert!(!work.exists(), "the work directory outlives the build");
}

#[test]
fn a_build_killed_in_its_initial_pass_resumes_the_pass_to_the_same_files() {
    let dir = scratch("disk-resume-initial");
    let (args, mut child) = start_level_18_in_64_partitions(&dir);
    let work = dir.join("work");
    wait_for_level_18(&work, &mut child, |m| m["checkpoint"] == "initial");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // (Read once the build is dead: the state the rerun finds.)
    let manifest = manifest_of_18(&work);
    assert_eq!(
        manifest["checkpoint"], "initial",
        "the pass ended before the kill: {manifest}"
    );
    let initialised: u64 = manifest["initialised"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap())
        .sum();
    let boards = manifest["boards"].as_u64().unwrap();
    assert!(0 < initialised && initialised < boards, "{manifest}");

    let level18 = rerun_to_the_reference_files(&dir, &args);
    assert_eq!(level18["resumed_initial_boards"], initialised, "{level18}");
    assert!(level18["resumed_from_stage"].is_null(), "{level18}");
    // The unstored boards' captures too went on from the checkpoint, in
    // the file the stopped pass left.
    assert_eq!(
        level18["unstored_captures_in_initial_pass"], true,
        "{level18}"
    );
}

#[test]
fn a_build_killed_while_it_writes_a_level_resumes_at_the_writing() {
    let dir = scratch("disk-resume-write");
    let (args, mut child) = start_level_18_in_64_partitions(&dir);
    let work = dir.join("work");
    // Every stage done, the values assembled, the level file under way.
    let partial = dir.join("awari-p6-n18.awl.partial");
    let started = Instant::now();
    while !partial.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "no level file"
        );
        assert!(child.try_wait().unwrap().is_none(), "the build ended early");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        !dir.join("awari-p6-n18.awl").exists(),
        "the level was written before the kill"
    );
    assert_eq!(manifest_of_18(&work)["next_k"], 0);

    let level18 = rerun_to_the_reference_files(&dir, &args);
    assert_eq!(level18["resumed_from_stage"], 0, "{level18}");
}

/// Starts building level 18 on disk over the reference levels 0..=17 copied
/// into `dir`: 64 partitions, a checkpoint whenever one may be made (in the
/// initial pass after each partition: a window of sorted lookups each, with
/// --spare-disk in a budget beyond the machine). Returns the arguments, for
/// the rerun, and the running build.
fn start_level_18_in_64_partitions(dir: &Path) -> (Vec<String>, std::process::Child) {
    copy_reference_levels(dir, 17);
    let args: Vec<String> = [
        "--db",
        dir.to_str().unwrap(),
        "--max-seeds",
        "18",
        "--on-disk",
        "--spare-disk",
        "--memory",
        "1000G",
        "--partitions",
        "64",
        "--checkpoint-seconds",
        "0",
        "--count-all",
        "--json",
    ]
    .map(String::from)
    .to_vec();
    let child = Command::new(binary("awari-solve"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (args, child)
}

/// Runs the build of `args` again in `dir` after a kill and checks that it
/// ends as the reference build did: level 18 built, its statistics and the
/// files of levels 0..=18 the reference's, the work directory gone.
/// Returns level 18's JSON line.
fn rerun_to_the_reference_files(dir: &Path, args: &[String]) -> Value {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let lines = json_lines(&ok_stdout(&run("awari-solve", &args)));
    let level18 = lines.iter().find(|l| l["seeds"] == 18).unwrap().clone();
    assert_eq!(level18["status"], "built");
    assert!(
        level18["counts_all"] == reference_counts_all(18),
        "{level18}"
    );
    let files = database_files(dir);
    let reference = database_files(reference());
    for s in 0..=18 {
        let name = format!("awari-p6-n{s}.awl");
        assert!(files[&name] == reference[&name], "{name} differs");
    }
    assert!(
        !dir.join("work").exists(),
        "the work directory outlives the build"
    );
    level18
}

/// The `counts_all` of level `seeds` in the reference build's statistics.
fn reference_counts_all(seeds: u32) -> Value {
    let path = reference().join(format!("awari-p6-n{seeds}.stats.json"));
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["counts_all"].clone()
}

/// The files of scores in work directory `work`.
fn scores_files(work: &Path) -> Vec<String> {
    std::fs::read_dir(work)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".scores"))
        .collect()
}

/// Copies the level files 0..=`max` of the reference build into `dir`.
fn copy_reference_levels(dir: &Path, max: u32) {
    for (name, bytes) in database_files(reference()) {
        let seeds: u32 = name
            .trim_start_matches("awari-p6-n")
            .split('.')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        if seeds <= max && name.ends_with(".awl") {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
}

/// Level 18's manifest in work directory `work` (`Null` when none can be read).
fn manifest_of_18(work: &Path) -> Value {
    let manifest = work.join("awari-p6-n18.work").join("manifest.json");
    std::fs::read_to_string(manifest)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .unwrap_or(Value::Null)
}

/// Whether `manifest` counts two stages done.
fn two_stages_done(manifest: &Value) -> bool {
    manifest["stages"].as_array().map_or(0, Vec::len) >= 2
}

/// Waits until level 18's manifest in work directory `work` is `ready`,
/// `child` (the build) still running.
fn wait_for_level_18(work: &Path, child: &mut std::process::Child, ready: fn(&Value) -> bool) {
    let started = Instant::now();
    while !ready(&manifest_of_18(work)) {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "level 18 never made the checkpoint waited for"
        );
        assert!(child.try_wait().unwrap().is_none(), "the build ended early");
        std::thread::sleep(Duration::from_millis(10));
    }
}
