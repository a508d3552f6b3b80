//! `awari-solve`: builds perfect-play Awari databases.

use std::path::PathBuf;
use std::process::ExitCode;

use awari_dbformat::file::WriteOptions;
use awari_dbformat::{Repetition, RuleSet, Rules};
use awari_solver::bounds::{self, BoundReport};
use awari_solver::build::{self, Cells, LevelReport, Options, Plan};
use awari_solver::memory::{self, format_size};
use clap::Parser;

/// Build perfect-play Awari databases by retrograde analysis, level by level.
///
/// Level n holds the value of every stored board with n seeds (the seeds the
/// mover will still capture minus the opponent's, with perfect play). Each level
/// needs the levels below it; missing levels are built in order from 0, and a
/// build that was stopped resumes at the first missing level.
///
/// Examples:
///   awari-solve --max-seeds 20                 # levels 0..=20 into ./db
///   awari-solve --start 2 --rules abapa         # all a 2-seeds-per-pit game needs
///   awari-solve --pits 4 --start 3 --db db4     # the 4-pit game with 3 seeds per pit
/// `--cells`: see [`Cells`].
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum CellsArg {
    Auto,
    Packed,
    Split,
}

#[derive(Parser)]
#[command(name = "awari-solve", version, about, long_about, verbatim_doc_comment)]
struct Cli {
    /// The database directory (created if missing).
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// The rule set: awari, abapa, grand-slam-captures or grand-slam-replay.
    #[arg(long, default_value = "awari")]
    rules: RuleSet,
    /// Pits per side (2 to 8).
    #[arg(long, default_value_t = 6)]
    pits: u8,
    /// Build every level from 0 up to this many seeds [default: 20].
    #[arg(long, conflicts_with = "start")]
    max_seeds: Option<u32>,
    /// Build every level a game starting with this many seeds per pit needs
    /// (e.g. --start 4 for the full 48-seed game on 6 pits).
    #[arg(long)]
    start: Option<u32>,
    /// Worker threads [default: one per core].
    #[arg(long)]
    threads: Option<usize>,
    /// The memory a level may use, e.g. 16G or 512M [default: 85% of available memory].
    /// When it is short, the solver keeps smaller frontier lists (slower, same
    /// values); a level that will not fit even so is refused before any work on it.
    #[arg(long, value_parser = parse_memory)]
    memory: Option<u64>,
    /// zstd compression level of the level files (1 to 22).
    #[arg(long)]
    compression: Option<i32>,
    /// Also write a certificate beside each level built (`<level>.cert`: the
    /// generation in which each board was decided), with which
    /// `awari-probe verify` proves the values in one forward pass instead of
    /// searching for the proofs. Costs 2 bytes per board while solving and about
    /// half a byte per board on disk (docs/performance.md); it is checked,
    /// never trusted.
    #[arg(long)]
    certificate: bool,
    /// Store every board's exact score (format version 1 or 2). By default a
    /// board whose best move is a capture may store a lower bound instead,
    /// which codes cheaper (version 3: files about a quarter smaller; a lookup
    /// then also looks up the board's captures).
    #[arg(long)]
    exact: bool,
    /// Solve each level in this many partitions of its index range, each
    /// with a state of its own, the updates between them sent in batches
    /// (the files are the same for any number) [default: 1 when the level
    /// fits in --memory, else as few as fit, their cells on disk].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096))]
    partitions: Option<u64>,
    /// Keep the partitions' cells in files of the work directory (as many
    /// mapped at once as --memory allows) and the lower levels in files of
    /// scores, even when the level would fit in memory; a level on disk makes
    /// checkpoints and resumes from the last one when the build is run again.
    #[arg(long)]
    on_disk: bool,
    /// For a level on disk: give the lower levels' files of scores back
    /// while its stages run (their room goes to the checkpoint) and read the
    /// level files again after; for the last level in memory: count its
    /// statistics before writing its file, the scores given back between.
    /// Done anyway when the disk cannot hold both.
    #[arg(long)]
    spare_disk: bool,
    /// The directory for the partitions on disk (a subdirectory per level,
    /// removed when it is complete) [default: DB/work].
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// With the partitions on disk: the least seconds between two
    /// checkpoints [default: 60, and 9 times as long as the last checkpoint
    /// took, so that they take at most about a tenth of the time]
    #[arg(long)]
    checkpoint_seconds: Option<f64>,
    /// The cells a level is solved in: `packed` (1.333 bytes a board, 1.6
    /// above 31 seeds, all at random), `split` (0.667 bytes a board at
    /// random, and a byte a board read and written in order, in memory or in
    /// a file of the work directory) or `auto` (packed when the level fits in
    /// --memory so, else split with that byte in a file, else packed on disk).
    /// The files are the same whichever.
    #[arg(long, value_enum, default_value = "auto")]
    cells: CellsArg,
    /// Also count the values of every board of each level, stored or not
    /// (Lincke's tables: the boards whose opponent row is full are valued one
    /// ply ahead), into its statistics file's `counts_all`. Costs passes over
    /// the level's moves and the lower levels: about a fifth of the build
    /// at 33 seeds and above. Without it only the stored boards are counted.
    #[arg(long)]
    count_all: bool,
    /// Build nothing: print how each level would be built within the budget
    /// (in memory or on disk, partitions, memory, disk, estimated time).
    #[arg(long)]
    plan: bool,
    /// With --plan: plan for this many ranks (MPI processes, each with
    /// --memory and --threads of its own, each holding a share of every
    /// level), as `mpirun -n RANKS awari-solve` would build; memory and disk
    /// are then each rank's [default: the ranks of the job, 1 outside mpirun].
    #[arg(long, requires = "plan", value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    ranks: Option<u64>,
    /// Print one JSON object per level on stdout instead of a table (no progress bars).
    #[arg(long)]
    json: bool,
    /// How endless play is valued: `even-split` (the seeds on the board
    /// shared equally, one exact score per board: Romein and Bal's rule) or
    /// `any` (for each board a lower and an upper bound that hold under
    /// every rule sharing the seeds on the board in any way, such as
    /// own-side seeds at a repetition; two files per level,
    /// `<level>.lower.awl` and `<level>.upper.awl`, solved in memory).
    #[arg(long, default_value = "even-split")]
    repetition: Repetition,
}

fn parse_memory(text: &str) -> Result<u64, String> {
    memory::parse_size(text).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    awari_dbformat::cli::quiet_on_closed_pipe();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("awari-solve: error: {err}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    let rules = Rules::new(cli.rules, cli.pits)?;
    let ranks = awari_dbformat::cluster::start()?;
    // Rank 0 alone shows progress and prints.
    let root = ranks.is_root();
    if let Some(threads) = cli.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()?;
    }
    let plan = match cli.start {
        Some(0) => return Err("--start needs at least 1 seed per pit".into()),
        Some(s) => Plan::for_start(rules, s),
        None => Plan::up_to(rules, cli.max_seeds.unwrap_or(20)),
    };
    let options = build_options(&cli, root);
    if cli.repetition == Repetition::Any {
        if ranks.size() > 1 {
            return Err(
                "--repetition any builds in one process: each level is solved in memory \
                 (about 8.5 bytes a board, and 2 bytes a board of each lower level)"
                    .into(),
            );
        }
        if cli.plan {
            print_plan(&bounds::plan_bounds(&plan, &options), cli.json);
            return Ok(());
        }
        return run_bounds(&cli, &plan, &options);
    }
    if cli.plan {
        if root {
            let planned_ranks = cli.ranks.unwrap_or(ranks.size() as u64);
            print_plan(
                &build::plan_levels(&plan, &options, planned_ranks),
                cli.json,
            );
        }
        return Ok(());
    }
    let talk = !cli.json && root;
    if talk {
        let processes = match ranks.size() {
            1 => String::new(),
            n => format!("{n} ranks, "),
        };
        eprintln!(
            "awari-solve: {rules}, levels {}..={} into {} ({processes}{} threads, memory budget {})",
            plan.levels.first().unwrap_or(&0),
            plan.levels.last().unwrap_or(&0),
            cli.db.display(),
            rayon::current_num_threads(),
            format_size(options.memory)
        );
        println!("{}", LevelReport::table_heading());
    }
    let (mut boards, mut seconds, mut built) = (0u64, 0f64, 0);
    build::build_on(&plan, &options, ranks.as_ref(), |r: &LevelReport| {
        if cli.json {
            println!("{}", r.json_line());
        } else {
            println!("{}", r.table_row());
        }
        if r.status == "built" {
            boards += r.boards;
            seconds += r.seconds;
            built += 1;
        }
    })?;
    if talk {
        println!(
            "done: {built} level(s) built, {boards} boards in {seconds:.1} s ({:.2} M boards/s); database in {}",
            boards as f64 / seconds.max(1e-9) / 1e6,
            cli.db.display()
        );
    }
    Ok(())
}

/// The build's options from the command line (`progress` only on rank 0,
/// `root`, and not with `--json`).
fn build_options(cli: &Cli, root: bool) -> Options {
    let mut write = WriteOptions::default();
    if let Some(level) = cli.compression {
        write.zstd_level = level;
    }
    Options {
        dir: cli.db.clone(),
        memory: cli.memory.unwrap_or_else(memory::default_budget),
        progress: !cli.json && root,
        write,
        certificate: cli.certificate,
        stored: if cli.exact {
            awari_dbformat::file::Stored::Scores
        } else {
            awari_dbformat::file::Stored::LowerBounds
        },
        partitions: cli.partitions,
        on_disk: cli.on_disk,
        spare_disk: cli.spare_disk,
        work_dir: cli.work_dir.clone(),
        checkpoint_seconds: cli.checkpoint_seconds,
        cells: match cli.cells {
            CellsArg::Auto => Cells::Auto,
            CellsArg::Packed => Cells::Packed,
            CellsArg::Split => Cells::Split,
        },
        rank_mail_bytes: None,
        count_all: cli.count_all,
    }
}

/// Builds the levels of `plan` under `--repetition any`, printing a row (or
/// a JSON line) per level and a summary.
fn run_bounds(cli: &Cli, plan: &Plan, options: &Options) -> Result<(), Box<dyn std::error::Error>> {
    let talk = !cli.json;
    if talk {
        eprintln!(
            "awari-solve: {}, bounds under any repetition rule, levels {}..={} into {} ({} threads, memory budget {})",
            plan.rules,
            plan.levels.first().unwrap_or(&0),
            plan.levels.last().unwrap_or(&0),
            cli.db.display(),
            rayon::current_num_threads(),
            format_size(options.memory)
        );
        println!("{}", BoundReport::table_heading());
    }
    let (mut boards, mut seconds, mut exact, mut built) = (0u64, 0f64, 0u64, 0);
    bounds::build_bounds(plan, options, |r: &BoundReport| {
        if cli.json {
            println!("{}", serde_json::to_string(r).expect("a report serialises"));
        } else {
            println!("{}", r.table_row());
        }
        if r.status == "built" {
            boards += r.boards;
            seconds += r.seconds;
            exact += r.exact_boards;
            built += 1;
        }
    })?;
    if talk {
        println!(
            "done: {built} level(s) built, {boards} boards in {seconds:.1} s ({:.2} M boards/s), \
             {:.1}% of them exact under every repetition rule; database in {}",
            boards as f64 / seconds.max(1e-9) / 1e6,
            100.0 * exact as f64 / boards.max(1) as f64,
            cli.db.display()
        );
    }
    Ok(())
}

/// Prints the plan of each level: a table, or one JSON object per level.
fn print_plan(rows: &[build::PlannedLevel], json: bool) {
    if json {
        for row in rows {
            println!("{}", serde_json::to_string(row).expect("serialisable"));
        }
        return;
    }
    println!(
        "{:>5} {:>15}  {:<8} {:>10} {:>6} {:>10} {:>10} {:>12}",
        "seeds", "boards", "where", "partitions", "mapped", "memory", "disk", "est. time"
    );
    let (mut total, mut todo) = (0.0, 0);
    for r in rows {
        let place = match (&r.refused, r.present, r.on_disk) {
            (_, true, _) => "present",
            (Some(_), _, _) => "REFUSED",
            (None, _, true) if r.spare_disk => "disk**",
            (None, _, true) => "disk",
            (None, _, false) if r.split && r.cold_in_file => "split",
            (None, _, false) if r.split => "split-mem",
            (None, _, false) if r.lower_levels_in_files => "memory*",
            (None, _, false) => "memory",
        };
        if r.present || r.refused.is_some() {
            println!("{:>5} {:>15}  {place}", r.seeds, r.boards);
        } else {
            total += r.estimated_seconds;
            todo += 1;
            println!(
                "{:>5} {:>15}  {:<8} {:>10} {:>6} {:>10} {:>10} {:>12}",
                r.seeds,
                r.boards,
                place,
                r.partitions,
                r.resident_partitions
                    .map_or("all".to_string(), |k| k.to_string()),
                format_size(r.memory_bytes),
                format_size(r.disk_bytes),
                format_duration(r.estimated_seconds)
            );
        }
    }
    for r in rows {
        if let Some(why) = &r.refused {
            println!("level {}: {why}", r.seeds);
        }
    }
    if let Some(r) = rows.first().filter(|r| r.ranks > 1) {
        println!(
            "{} ranks: each holds a share of every level; memory and disk are each rank's",
            r.ranks
        );
    }
    println!(
        "{todo} level(s) to build, about {} in all (* the lower levels read from files; \
         ** and their files given back while the stages run, read again after; \
         the times are estimates from the rates measured on 2 cores, docs/scaling.md)",
        format_duration(total)
    );
}

/// Seconds as "45 s", "12 min" or "3.4 h".
fn format_duration(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}
