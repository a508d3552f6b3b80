//! End-to-end: `awari-solve` built with the `mpi` feature, run by `mpirun`
//! with 1 to 4 ranks (oversubscribed on a 2-core machine), writes the files
//! one process writes, with their shares in memory or out of core; a rank
//! killed mid-build fails the job with a message naming it, and the same
//! command then resumes to the same files (out of core, from the ranks'
//! checkpoint within the level).
//!
//! `awari-probe verify` under `mpirun`, each rank holding only its shares,
//! passes on the same levels, with or without certificates, and names a
//! board whose value was changed, as the single process does.
//!
//! These need OpenMPI and the MPI builds of both binaries, which
//! `scripts/test.sh` installs and builds, then runs them with
//! `AWARI_MPI_BIN=DIR cargo test --release -p awari-tests --test mpi -- --ignored`
//! (DIR: where `awari-solve` and `awari-probe` built with `mpi` are).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use awari_dbformat::RuleSet;
use awari_tests::{database_files, ok_stdout, run, scratch};
use serde_json::Value;

/// The MPI build of binary `name` (`awari-solve`, `awari-probe`).
fn mpi_binary(name: &str) -> PathBuf {
    let dir = std::env::var("AWARI_MPI_BIN")
        .expect("AWARI_MPI_BIN: where the binaries built with the mpi feature are");
    // Cargo runs the tests in this crate's folder; a relative AWARI_MPI_BIN
    // is read from the workspace root, where the command was typed.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = workspace.join(dir).join(name);
    assert!(path.exists(), "{} is missing", path.display());
    path
}

fn mpi_solve() -> PathBuf {
    mpi_binary("awari-solve")
}

/// `mpirun -n RANKS BINARY ARGS`, allowed to run as root (as CI does).
fn mpirun_of(ranks: usize, binary: PathBuf, args: &[&str]) -> Command {
    let mut command = Command::new("mpirun");
    command
        .args(["-n", &ranks.to_string(), "--oversubscribe"])
        .arg(binary)
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    command
}

/// `mpirun -n RANKS awari-solve ARGS`, each rank on one thread.
fn mpirun(ranks: usize, args: &[&str]) -> Command {
    let mut command = mpirun_of(ranks, mpi_solve(), args);
    command.args(["--threads", "1"]);
    command
}

fn output(mut command: Command) -> Output {
    command.output().expect("mpirun runs")
}

#[test]
#[ignore = "needs OpenMPI and AWARI_MPI_SOLVE (scripts/test.sh)"]
fn one_to_four_ranks_write_the_files_of_one_process() {
    for set in RuleSet::ALL {
        let dir = scratch(&format!("mpi-{}", set.name()));
        let one = dir.join("one");
        let common = ["--rules", set.name(), "--max-seeds", "14", "--certificate"];
        let mut args = vec!["--db", one.to_str().unwrap()];
        args.extend(common);
        ok_stdout(&run("awari-solve", &args));
        let expected = database_files(&one);
        assert_eq!(expected.len(), 30, "{set}: 15 levels and certificates");
        for ranks in 1..=4 {
            let db = dir.join(format!("ranks-{ranks}"));
            let mut args = vec!["--db", db.to_str().unwrap(), "--json"];
            args.extend(common);
            let out = output(mpirun(ranks, &args));
            let stdout = ok_stdout(&out);
            assert!(
                database_files(&db) == expected,
                "{set}, {ranks} ranks: files differ"
            );
            // One JSON line per level, from rank 0 only.
            let lines: Vec<Value> = stdout
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(lines.len(), 15, "{set}, {ranks} ranks:\n{stdout}");
            let top = &lines[14];
            if ranks == 1 {
                assert!(top.get("ranks").is_none(), "{top}");
                continue;
            }
            let figures = top["ranks"].as_array().expect("per-rank figures");
            assert_eq!(figures.len(), ranks, "{top}");
            let boards: u64 = figures.iter().map(|r| r["boards"].as_u64().unwrap()).sum();
            assert_eq!(boards, top["boards"].as_u64().unwrap(), "{top}");
            let sent: u64 = figures
                .iter()
                .map(|r| r["updates_sent"].as_u64().unwrap())
                .sum();
            assert!(sent > 0, "no update crossed ranks: {top}");
        }
    }
}

#[test]
#[ignore = "needs OpenMPI and AWARI_MPI_SOLVE (scripts/test.sh)"]
fn ranks_apart_write_the_files_of_one_process() {
    // Without certificates the ranks run their generations apart, their
    // updates sent as messages of their own.
    for set in RuleSet::ALL {
        let dir = scratch(&format!("mpi-apart-{}", set.name()));
        let one = dir.join("one");
        let common = ["--rules", set.name(), "--max-seeds", "14"];
        let mut args = vec!["--db", one.to_str().unwrap()];
        args.extend(common);
        ok_stdout(&run("awari-solve", &args));
        let expected = database_files(&one);
        assert_eq!(expected.len(), 15, "{set}: 15 levels");
        for ranks in [2, 3] {
            let db = dir.join(format!("ranks-{ranks}"));
            let mut args = vec!["--db", db.to_str().unwrap()];
            args.extend(common);
            ok_stdout(&output(mpirun(ranks, &args)));
            assert!(
                database_files(&db) == expected,
                "{set}, {ranks} ranks apart: files differ"
            );
        }
    }
}

/// The process of rank `rank` of an MPI job whose command line names `dir`.
fn rank_process(dir: &Path, rank: usize) -> Option<u32> {
    let wanted = format!("OMPI_COMM_WORLD_RANK={rank}");
    let dir = dir.to_str().unwrap();
    std::fs::read_dir("/proc").ok()?.find_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        let has =
            |bytes: &[u8], text: &str| bytes.split(|&b| b == 0).any(|part| part == text.as_bytes());
        let name = mpi_solve().file_name().unwrap().to_owned();
        let is_solver = cmdline
            .split(|&b| b == 0)
            .next()
            .is_some_and(|exe| exe.ends_with(name.as_encoded_bytes()));
        (is_solver && has(&cmdline, dir) && has(&environ, &wanted)).then_some(pid)
    })
}

#[test]
#[ignore = "needs OpenMPI and AWARI_MPI_SOLVE (scripts/test.sh)"]
fn a_killed_rank_fails_the_job_by_name_and_the_rerun_resumes() {
    let dir = scratch("mpi-killed");
    let one = dir.join("one");
    ok_stdout(&run(
        "awari-solve",
        &["--db", one.to_str().unwrap(), "--max-seeds", "18"],
    ));
    let db = dir.join("two-ranks");
    let args = ["--db", db.to_str().unwrap(), "--max-seeds", "18", "--json"];
    let job = mpirun(2, &args);
    // Once level 14 is written, rank 1 is killed in the levels above it.
    let written = || db.join("awari-p6-n14.awl").exists();
    kill_rank_1_when(job, &db, written, "level 14");
    assert!(
        !db.join("awari-p6-n18.awl").exists(),
        "rank 1 was killed after the last level"
    );
    // The same command resumes from the levels written, to the same files.
    let out = ok_stdout(&output(mpirun(2, &args)));
    let present = out.lines().filter(|l| l.contains("\"present\"")).count();
    assert!(present >= 15, "levels 0..=14 were kept:\n{out}");
    assert!(
        database_files(&db) == database_files(&one),
        "the resumed files differ"
    );
}

/// Starts the MPI job `job` building into `db`, waits (at most two
/// minutes) for `ready` to hold of it (`what`: what it waits for), then
/// kills its rank 1. Checks that the job fails naming the rank; returns
/// what it printed on stdout.
fn kill_rank_1_when(mut job: Command, db: &Path, ready: impl Fn() -> bool, what: &str) -> String {
    let job = job
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun starts");
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < Duration::from_secs(120), "no {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = rank_process(db, 1).expect("rank 1 is running");
    let killed = Command::new("kill").args(["-9", &pid.to_string()]).status();
    assert!(killed.unwrap().success());
    let out = job.wait_with_output().unwrap();
    assert!(!out.status.success(), "the job went on without rank 1");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rank 1"), "the failure names the rank: {err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The JSON lines of a build's report, by level.
fn levels_reported(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

#[test]
#[ignore = "needs OpenMPI and AWARI_MPI_BIN (scripts/test.sh)"]
fn ranks_out_of_core_write_the_files_of_one_process_and_resume_mid_level() {
    let dir = scratch("mpi-out-of-core");
    let one = dir.join("one");
    ok_stdout(&run(
        "awari-solve",
        &["--db", one.to_str().unwrap(), "--max-seeds", "18"],
    ));
    // 96 MiB a rank: levels 17 and 18 do not fit beside the packed shares
    // of the levels below, so each rank keeps its share in files of its
    // own, with a checkpoint after every stage.
    let db = dir.join("two-ranks");
    let args = [
        "--db",
        db.to_str().unwrap(),
        "--max-seeds",
        "18",
        "--memory",
        "96M",
        "--checkpoint-seconds",
        "0",
        "--json",
    ];
    // Planned first, by the build of one process, for 2 ranks.
    let planned = ok_stdout(&run(
        "awari-solve",
        &[&args[..], &["--plan", "--ranks", "2"]].concat(),
    ));
    let planned = levels_reported(&planned);
    let job = mpirun(2, &args);
    // Rank 1 is killed in level 18, once it has a checkpoint after a stage.
    let manifest = db.join("work/awari-p6-n18.work/rank-1/manifest.json");
    let checkpointed = || {
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            return false;
        };
        let Ok(found) = serde_json::from_str::<Value>(&text) else {
            return false;
        };
        found["checkpoint"] == "checkpoint" && found["next_k"].as_u64() < Some(18)
    };
    let out = kill_rank_1_when(job, &db, checkpointed, "checkpoint in level 18");
    let first = levels_reported(&out);
    assert!(
        first
            .iter()
            .any(|l| l["seeds"] == 17 && l["on_disk"] == true),
        "level 17 was not built on disk:\n{out}"
    );
    // Each level as planned: in memory or on disk, and there in as many
    // partitions. (In memory a small level has fewer than planned: the
    // ranks' shares are whole blocks of its file.)
    for built in &first {
        let plan = &planned[built["seeds"].as_u64().unwrap() as usize];
        assert_eq!(
            plan["on_disk"], built["on_disk"],
            "planned {plan}, built {built}"
        );
        if built["on_disk"] == true {
            assert_eq!(
                plan["partitions"], built["partitions"],
                "planned {plan}, built {built}"
            );
        }
    }
    assert!(
        !db.join("awari-p6-n18.awl").exists(),
        "level 18 was written"
    );
    // A copy in which rank 1's checkpoint is a stage behind rank 0's, as
    // when a rank is stopped while the others make theirs.
    let apart = dir.join("apart");
    let copied = Command::new("cp").arg("-r").args([&db, &apart]).status();
    assert!(copied.unwrap().success());
    let manifest = apart.join("work/awari-p6-n18.work/rank-1/manifest.json");
    let mut found: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    found["next_k"] = (found["next_k"].as_u64().unwrap() + 1).into();
    std::fs::write(&manifest, found.to_string()).unwrap();
    // The same command resumes level 18 from the ranks' checkpoint.
    let out = ok_stdout(&output(mpirun(2, &args)));
    let level_18 = levels_reported(&out)
        .into_iter()
        .find(|l| l["seeds"] == 18)
        .expect("level 18 reported");
    assert_eq!(level_18["on_disk"], true, "{level_18}");
    // Each rank within its budget, at its peak so far.
    let peaks: Vec<u64> = level_18["ranks"]
        .as_array()
        .expect("the ranks' figures")
        .iter()
        .map(|r| r["peak_resident_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(peaks.len(), 2, "{level_18}");
    assert!(
        peaks.iter().all(|&peak| peak > 0 && peak <= 100 << 20),
        "{peaks:?}"
    );
    assert!(
        level_18["resumed_from_stage"].as_u64() < Some(18),
        "level 18 did not resume from a checkpoint: {level_18}"
    );
    assert!(
        database_files(&db) == database_files(&one),
        "the files of the ranks out of core differ"
    );
    assert!(
        !db.join("work/awari-p6-n18.work").exists(),
        "work left behind"
    );
    // Their checkpoints apart, the ranks start level 18 over.
    let apart_args = [&["--db", apart.to_str().unwrap()], &args[2..]].concat();
    let out = output(mpirun(2, &apart_args));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let level_18 = levels_reported(&ok_stdout(&out))
        .into_iter()
        .find(|l| l["seeds"] == 18)
        .expect("level 18 reported");
    assert_eq!(level_18["resumed_from_stage"], Value::Null, "{level_18}");
    assert!(err.contains("starts over"), "{err}");
    assert!(
        database_files(&apart) == database_files(&one),
        "the files of the ranks started over differ"
    );
}

#[test]
#[ignore = "needs OpenMPI and AWARI_MPI_BIN (scripts/test.sh)"]
fn verify_under_mpirun_passes_and_names_a_changed_value() {
    let dir = scratch("mpi-verify");
    let db = dir.join("db");
    let d = db.to_str().unwrap();
    ok_stdout(&run("awari-solve", &["--db", d, "--max-seeds", "16"]));
    let verify = |ranks: usize, d: &str| {
        output(mpirun_of(
            ranks,
            mpi_binary("awari-probe"),
            &["verify", "--db", d, "--json"],
        ))
    };
    let alone: Value = serde_json::from_str(&ok_stdout(&run(
        "awari-probe",
        &["verify", "--db", d, "--json"],
    )))
    .unwrap();
    let levels = |v: &Value| -> Vec<(u64, u64, bool)> {
        v["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                let n = |k: &str| l[k].as_u64().unwrap();
                (n("seeds"), n("boards"), l["checksums"].as_bool().unwrap())
            })
            .collect()
    };
    // Every board of every level, once: what one process holds.
    let boards: u64 = levels(&alone).iter().map(|l| l.1).sum();
    for ranks in [2, 3] {
        let out = verify(ranks, d);
        let v: Value = serde_json::from_str(&ok_stdout(&out)).unwrap();
        assert_eq!(v["ok"], true, "{ranks} ranks: {v}");
        assert_eq!(levels(&v), levels(&alone), "{ranks} ranks: {v}");
        // Each rank held its share of the levels, no more: together, each
        // board once; the levels below the top packed, in fewer bytes.
        let field = |name: &str| -> Vec<u64> {
            let ranks = v["ranks"].as_array().unwrap().iter();
            ranks.map(|r| r[name].as_u64().unwrap()).collect()
        };
        let (held, bytes) = (field("share_boards"), field("share_bytes"));
        assert_eq!(held.len(), ranks, "{v}");
        assert_eq!(held.iter().sum::<u64>(), boards, "{v}");
        assert!(held.iter().all(|&h| h < boards * 2 / ranks as u64), "{v}");
        assert!(held.iter().zip(&bytes).all(|(h, b)| b < h), "{v}");
    }
    // The start position of one seed a pit (levels 0..=12 checked), and
    // levels with their certificates, as one process says.
    let start = |ranks: usize| {
        let args = ["verify", "--db", d, "--start", "1", "--json"];
        let out = match ranks {
            1 => run("awari-probe", &args),
            _ => output(mpirun_of(ranks, mpi_binary("awari-probe"), &args)),
        };
        let v: Value = serde_json::from_str(&ok_stdout(&out)).unwrap();
        (v["value"].clone(), v["verdict"].clone(), v["moves"].clone())
    };
    assert_eq!(start(2), start(1));
    let certified = dir.join("certified");
    let cd = certified.to_str().unwrap();
    ok_stdout(&run(
        "awari-solve",
        &["--db", cd, "--max-seeds", "13", "--certificate"],
    ));
    let v: Value = serde_json::from_str(&ok_stdout(&output(mpirun_of(
        3,
        mpi_binary("awari-probe"),
        &["verify", "--db", cd, "--json"],
    ))))
    .unwrap();
    assert_eq!(v["ok"], true, "{v}");
    let by_certificate = v["levels"].as_array().unwrap().iter();
    assert!(
        by_certificate.clone().all(|l| l["certified"] == true),
        "{v}"
    );

    // One value of level 14 changed (export, edit, import: the checksums hold).
    let changed = dir.join("changed");
    std::fs::create_dir_all(&changed).unwrap();
    for entry in std::fs::read_dir(&db).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, changed.join(path.file_name().unwrap())).unwrap();
    }
    let c = changed.to_str().unwrap();
    let raw = changed.join("scores.14");
    let raw = raw.to_str().unwrap();
    ok_stdout(&run(
        "awari-probe",
        &["export", "--db", c, "--seeds", "14", raw],
    ));
    let mut bytes = std::fs::read(raw).unwrap();
    let target = 654_321usize;
    bytes[target] = if bytes[target] == 0 { 2 } else { 0 };
    std::fs::write(raw, &bytes).unwrap();
    ok_stdout(&run(
        "awari-probe",
        &["import", "--db", c, "--seeds", "14", raw],
    ));
    std::fs::remove_file(raw).unwrap();
    let out = verify(2, c);
    assert!(!out.status.success(), "a changed value passed");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false, "{v}");
    let alone = run("awari-probe", &["verify", "--db", c, "--json"]);
    let alone: Value = serde_json::from_slice(&alone.stdout).unwrap();
    assert_eq!(v["mismatches"], alone["mismatches"], "{v}");
    let named = v["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["seeds"] == 14 && m["index"] == target as u64);
    assert!(named, "board {target} of level 14 not named: {v}");
}
