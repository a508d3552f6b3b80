//! `awari-probe export`: a level in the published Romein–Bal layout.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use awari_dbformat::file::{bound_path, level_path, LevelReader};
use awari_dbformat::{Bound, Repetition};
use awari_probe::Tablebase;

use super::CmdResult;

/// Boards decoded and written per step (memory stays small for any level).
const CHUNK: usize = 1 << 22;

/// Write one level as the published databases do (`scores.N`): one signed
/// byte per board, in index order, nothing else.
///
/// With --repetition any --bound lower (or upper), the level's lower (or
/// upper) bounds under any repetition rule, in the same shape: one file per
/// bound, as `awari-solve --repetition any` stores them.
///
/// Example: awari-probe export --seeds 16 scores.16 --db db
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The file to write (replaced if it exists).
    pub out: PathBuf,
    #[command(flatten)]
    pub level: super::LevelFile,
    /// Print one JSON object: seeds, boards, bytes, path (and bound).
    #[arg(long)]
    pub json: bool,
    /// Memory for lower levels decoded whole, e.g. 2G: a level of lower bounds
    /// (the solver's default) needs the scores of its boards' captures, and
    /// looking them up one by one is far slower.
    #[arg(long, default_value = "4G", value_parser = awari_dbformat::cli::parse_size)]
    pub preload: u64,
    /// How endless play is valued: even-split (scores) or any (bounds; needs --bound).
    #[arg(long, default_value = "even-split")]
    pub repetition: Repetition,
    /// With --repetition any: the bound to write, lower or upper.
    #[arg(long, value_parser = parse_bound)]
    pub bound: Option<Bound>,
}

/// Reads `lower` or `upper`.
fn parse_bound(text: &str) -> Result<Bound, String> {
    Bound::BOTH
        .into_iter()
        .find(|b| b.name() == text.trim())
        .ok_or_else(|| format!("{text:?}: a bound is lower or upper"))
}

/// Writes the file; see [`Args`].
pub(crate) fn run(args: Args) -> CmdResult {
    let id = args.level.id()?;
    let (reader, tb) = match (args.repetition, args.bound) {
        (Repetition::EvenSplit, None) => {
            let reader = LevelReader::open_expecting(&level_path(&args.level.db, id), id)?;
            let tb = Tablebase::open(&args.level.db, id.rules)?;
            tb.preload(args.preload);
            (reader, Some(tb))
        }
        (Repetition::EvenSplit, Some(_)) => {
            return Err("--bound needs --repetition any".into());
        }
        (Repetition::Any, None) => {
            return Err("--repetition any needs --bound lower or --bound upper".into());
        }
        (Repetition::Any, Some(bound)) => {
            let path = bound_path(&args.level.db, id, bound);
            if !path.exists() {
                return Err(format!(
                    "{} is missing; build it with `awari-solve --db {} --rules {} --pits {} --max-seeds {} --repetition any`",
                    path.display(),
                    args.level.db.display(),
                    id.rules.set(),
                    id.rules.pits(),
                    id.seeds
                )
                .into());
            }
            (LevelReader::open_bound(&path, id, bound)?, None)
        }
    };
    export(&reader, tb.as_ref(), &args.out)?;
    if args.json {
        let mut out = serde_json::json!({
            "seeds": id.seeds,
            "boards": reader.boards(),
            "bytes": reader.boards(),
            "path": args.out.display().to_string(),
        });
        if let Some(bound) = args.bound {
            out["repetition"] = "any".into();
            out["bound"] = bound.name().into();
        }
        println!("{out}");
    } else {
        println!(
            "wrote {} ({} boards, one signed byte each) from {}",
            args.out.display(),
            reader.boards(),
            reader.path().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the score of every board of `reader`'s level to `out`, one signed
/// byte per board, through a temporary file renamed at the end (removed on
/// error). `tb`, the level's database, resolves lower bounds; without it the
/// stored values are written as they are (the bounds of `--repetition any`).
pub(crate) fn export(
    reader: &LevelReader,
    tb: Option<&Tablebase>,
    out: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut temp_name = out.as_os_str().to_owned();
    temp_name.push(".partial");
    let temp = PathBuf::from(temp_name);
    let result = write_values(reader, tb, &temp).and_then(|()| {
        std::fs::rename(&temp, out).map_err(|e| format!("{}: {e}", out.display()).into())
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

fn write_values(
    reader: &LevelReader,
    tb: Option<&Tablebase>,
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(io)?;
    let mut file = std::io::BufWriter::with_capacity(1 << 20, file);
    let boards = reader.boards();
    let mut first = 0u64;
    while first < boards {
        let len = (boards - first).min(CHUNK as u64) as usize;
        let mut values = reader.decode_range(first, len)?;
        if let Some(tb) = tb {
            tb.resolve_scores(reader.id().seeds, first, &mut values)?;
        }
        let bytes: Vec<u8> = values.iter().map(|&v| v as u8).collect();
        file.write_all(&bytes).map_err(io)?;
        first += len as u64;
    }
    let file = file.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::import;
    use crate::cmd::{scratch, LevelFile};
    use awari_dbformat::{Index, RuleSet};

    /// A fresh empty directory, removed (with what it holds) when dropped.
    /// Published-style bytes for a level: in range, with some structure.
    fn scores(pits: u8, seeds: u32) -> Vec<u8> {
        let n = seeds as i32;
        Index::for_pits(pits)
            .boards(seeds)
            .enumerate()
            .map(|(i, b)| {
                let v = if i % 11 == 0 {
                    -n
                } else {
                    i32::from(b.pit(1)) - i32::from(b.pit(pits as usize))
                };
                v.clamp(-n, n) as i8 as u8
            })
            .collect()
    }

    #[test]
    fn import_then_export_is_byte_identical() {
        let scratch = scratch("round-trip");

        let dir = scratch.path();
        for (set, pits, seeds) in [
            (RuleSet::Awari, 6, 9),
            (RuleSet::Abapa, 4, 12),
            (RuleSet::Awari, 6, 0),
        ] {
            let bytes = scores(pits, seeds);
            let input = dir.join(format!("scores.{seeds}"));
            std::fs::write(&input, &bytes).unwrap();
            let db = dir.join("db");
            std::fs::create_dir_all(&db).unwrap();
            import::run(import::Args {
                file: input.clone(),
                level: LevelFile {
                    seeds,
                    db: db.clone(),
                    rules: set,
                    pits,
                },
                json: true,
            })
            .unwrap();
            let out = dir.join(format!("exported.{seeds}"));
            run(Args {
                out: out.clone(),
                level: LevelFile {
                    seeds,
                    db: db.clone(),
                    rules: set,
                    pits,
                },
                json: false,
                preload: 0,
                repetition: Repetition::EvenSplit,
                bound: None,
            })
            .unwrap();
            assert_eq!(
                std::fs::read(&out).unwrap(),
                bytes,
                "{set} P={pits} n={seeds}"
            );
            assert!(!dir.join(format!("exported.{seeds}.partial")).exists());
        }
    }

    #[test]
    fn exporting_a_missing_level_names_the_file() {
        let scratch = scratch("missing");

        let dir = scratch.path();
        let err = run(Args {
            out: dir.join("scores.5"),
            level: LevelFile {
                seeds: 5,
                db: dir.to_path_buf(),
                rules: RuleSet::Awari,
                pits: 6,
            },
            json: false,
            preload: 0,
            repetition: Repetition::EvenSplit,
            bound: None,
        })
        .unwrap_err();
        assert!(err.to_string().contains("awari-p6-n5.awl"), "{err}");
        assert!(!dir.join("scores.5").exists());
    }
}
