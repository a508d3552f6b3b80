//! `awari-probe info`: the level files of a database directory.

use std::path::PathBuf;
use std::process::ExitCode;

use awari_dbformat::file::{scan_dir, LevelId, LevelReader};
use awari_dbformat::Bound;
use awari_probe::bounds::scan_bound_files;

use super::count::thousands;
use super::CmdResult;

/// List the level files of a database: rule set, pits per side, seeds, boards,
/// bytes, bits per board and value encoding; with --check, whether every
/// checksum of each file holds (exit status 1 when any file fails to open or
/// to check). The bound files of `awari-solve --repetition any`
/// (`<level>.lower.awl`, `<level>.upper.awl`) are listed after their level's
/// scores, stored as lower or upper bounds under any repetition rule.
///
/// Example: awari-probe info --db db --check
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The database directory.
    #[arg(long, default_value = "db")]
    pub db: PathBuf,
    /// Verify the whole-file and every block checksum (reads every byte).
    #[arg(long)]
    pub check: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What is known about one level file.
struct Row {
    id: LevelId,
    /// The bound a `--repetition any` file holds; `None` for scores.
    bound: Option<Bound>,
    path: PathBuf,
    /// The open reader, or the error opening it.
    reader: Result<LevelReader, String>,
    /// With --check: `Ok` or the first checksum that failed.
    check: Option<Result<(), String>>,
}

impl Row {
    fn ok(&self) -> bool {
        self.reader.is_ok() && !matches!(self.check, Some(Err(_)))
    }

    fn json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "rules": self.id.rules.set().name(),
            "pits": self.id.rules.pits(),
            "seeds": self.id.seeds,
            "path": self.path.display().to_string(),
        });
        if let Some(bound) = self.bound {
            v["repetition"] = "any".into();
            v["bound"] = bound.name().into();
        }
        match &self.reader {
            Ok(r) => {
                v["boards"] = r.boards().into();
                v["bytes"] = r.file_bytes().into();
                v["bits_per_board"] = bits(r).into();
                v["encoding"] = r.encoding_description().into();
                v["stored"] = r.stored().name().into();
                v["block_boards"] = r.block_boards().into();
                v["segment_boards"] = r.segment_boards().into();
                v["zstd_level"] = r.compression_level().into();
            }
            Err(e) => v["error"] = e.clone().into(),
        }
        if let Some(check) = &self.check {
            v["checksums_ok"] = check.is_ok().into();
            if let Err(e) = check {
                v["error"] = e.clone().into();
            }
        }
        v
    }
}

fn bits(r: &LevelReader) -> f64 {
    r.file_bytes() as f64 * 8.0 / r.boards().max(1) as f64
}

/// Prints the table; see [`Args`].
pub(crate) fn run(args: Args) -> CmdResult {
    let rows = read_rows(&args)?;
    let all_ok = rows.iter().all(Row::ok);
    let readers: Vec<&LevelReader> = rows.iter().filter_map(|r| r.reader.as_ref().ok()).collect();
    let boards: u64 = readers.iter().map(|r| r.boards()).sum();
    let bytes: u64 = readers.iter().map(|r| r.file_bytes()).sum();
    if args.json {
        let out = serde_json::json!({
            "db": args.db.display().to_string(),
            "levels": rows.iter().map(Row::json).collect::<Vec<_>>(),
            "boards": boards,
            "bytes": bytes,
            "bits_per_board": if boards > 0 { bytes as f64 * 8.0 / boards as f64 } else { 0.0 },
            "checked": args.check,
            "ok": all_ok,
        });
        println!("{out}");
    } else if rows.is_empty() {
        println!("no level files in {}", args.db.display());
    } else {
        print_table(&rows, args.check, boards, bytes);
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The level files of the database (scores, then each level's lower and
/// upper bounds), opened, and checked with `--check`.
fn read_rows(args: &Args) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let row = |id, bound, path, reader: awari_dbformat::Result<LevelReader>| Row {
        id,
        bound,
        path,
        reader: reader.map_err(|e| e.to_string()),
        check: None,
    };
    let mut rows: Vec<Row> = scan_dir(&args.db)?
        .into_iter()
        .map(|(id, path)| {
            let reader = LevelReader::open_expecting(&path, id);
            row(id, None, path, reader)
        })
        .collect();
    for (id, bound, path) in scan_bound_files(&args.db)? {
        let reader = LevelReader::open_bound(&path, id, bound);
        rows.push(row(id, Some(bound), path, reader));
    }
    // Each level's scores, then its lower and upper bounds.
    rows.sort_by_key(|r| {
        (
            r.id.rules.set(),
            r.id.rules.pits(),
            r.id.seeds,
            r.bound.map(|b| b == Bound::Upper),
        )
    });
    if args.check {
        for row in &mut rows {
            if let Ok(r) = &row.reader {
                row.check = Some(r.verify_checksums().map_err(|e| e.to_string()));
            }
        }
    }
    Ok(rows)
}

/// The table for people: a line per file, then the totals.
fn print_table(rows: &[Row], check: bool, boards: u64, bytes: u64) {
    println!(
        "{:<20} {:>4} {:>5} {:>16} {:>14} {:>8}  {:<18}{:<13}{}",
        "rules",
        "pits",
        "seeds",
        "boards",
        "bytes",
        "bits",
        "encoding",
        "stored",
        if check { " checksums" } else { "" }
    );
    for row in rows {
        let (set, pits, seeds) = (row.id.rules.set().name(), row.id.rules.pits(), row.id.seeds);
        match &row.reader {
            Ok(r) => {
                let check = match &row.check {
                    None => String::new(),
                    Some(Ok(())) => " ok".into(),
                    Some(Err(e)) => format!(" FAILED: {e}"),
                };
                println!(
                    "{set:<20} {pits:>4} {seeds:>5} {:>16} {:>14} {:>8.3}  {:<18}{:<13}{check}",
                    thousands(r.boards()),
                    thousands(r.file_bytes()),
                    bits(r),
                    r.encoding_description(),
                    r.stored().name(),
                );
            }
            Err(e) => println!("{set:<20} {pits:>4} {seeds:>5} unreadable: {e}"),
        }
    }
    if boards > 0 {
        println!(
            "{} level files, {} boards, {} bytes, {:.3} bits per board",
            rows.len(),
            thousands(boards),
            thousands(bytes),
            bytes as f64 * 8.0 / boards as f64
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::scratch;
    use awari_dbformat::file::{write_level, WriteOptions};
    use awari_dbformat::Rules;

    #[test]
    fn check_fails_on_a_damaged_file() {
        let scratch = scratch("info");
        let dir = scratch.path();
        let args = |check| Args {
            db: dir.to_path_buf(),
            check,
            json: true,
        };
        for seeds in 0..=5 {
            let id = LevelId::new(Rules::default(), seeds);
            write_level(
                dir,
                id,
                &vec![0; id.boards() as usize],
                WriteOptions::default(),
            )
            .unwrap();
        }
        let ok = format!("{:?}", ExitCode::SUCCESS);
        assert_eq!(format!("{:?}", run(args(true)).unwrap()), ok);
        // Damage the last byte of level 5 (inside its last block).
        let path = dir.join("awari-p6-n5.awl");
        let mut bytes = std::fs::read(&path).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(
            format!("{:?}", run(args(false)).unwrap()),
            ok,
            "opening checks no block"
        );
        assert_eq!(
            format!("{:?}", run(args(true)).unwrap()),
            format!("{:?}", ExitCode::from(1))
        );
        assert!(run(Args {
            db: dir.join("missing"),
            check: false,
            json: false
        })
        .is_err());
    }
}
