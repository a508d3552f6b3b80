//! `awari-probe import`: a published `scores.N` file into a level file.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use awari_dbformat::file::{
    spread_sample, LevelId, LevelReader, LevelWriter, WriteOptions, TRAIN_BOARDS,
};

use super::CmdResult;

/// Boards read and pushed per step (memory stays small for any level).
const CHUNK: usize = 1 << 22;

/// Turn a file in the published Romein–Bal layout (`scores.N`: one signed byte
/// per board, in index order) into a level file of the database directory.
/// The values are checked (size, range) and read back after writing.
///
/// Example: awari-probe import --seeds 16 scores.16 --db db
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The `scores.N` file to read.
    pub file: PathBuf,
    #[command(flatten)]
    pub level: super::LevelFile,
    /// Print one JSON object: seeds, boards, bytes, bits per board, path.
    #[arg(long)]
    pub json: bool,
}

/// Imports the file; see [`Args`].
pub(crate) fn run(args: Args) -> CmdResult {
    let id = args.level.id()?;
    std::fs::create_dir_all(&args.level.db)
        .map_err(|e| format!("{}: {e}", args.level.db.display()))?;
    let path = import(&args.file, &args.level.db, id, WriteOptions::default())?;
    let reader = LevelReader::open_expecting(&path, id)?;
    let bits = reader.file_bytes() as f64 * 8.0 / reader.boards().max(1) as f64;
    if args.json {
        let out = serde_json::json!({
            "seeds": id.seeds,
            "boards": reader.boards(),
            "bytes": reader.file_bytes(),
            "bits_per_board": bits,
            "encoding": reader.encoding_description(),
            "path": path.display().to_string(),
        });
        println!("{out}");
    } else {
        println!(
            "wrote {} ({} boards, {} bytes, {bits:.3} bits per board, {})",
            path.display(),
            reader.boards(),
            reader.file_bytes(),
            reader.encoding_description()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads `file` (one signed byte per board of level `id`) into a new level file
/// in `dir`, and returns its path. The encoding is chosen on blocks spread over
/// the whole file.
pub(crate) fn import(
    file: &Path,
    dir: &Path,
    id: LevelId,
    options: WriteOptions,
) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let io = |e: std::io::Error| format!("{}: {e}", file.display());
    let mut input = File::open(file).map_err(io)?;
    let len = input.metadata().map_err(io)?.len();
    let boards = id.boards();
    if len != boards {
        return Err(format!(
            "{}: {len} bytes, but level {} ({}) has {boards} boards; a published scores.{} file holds one signed byte per board",
            file.display(),
            id.seeds,
            id.rules,
            id.seeds
        )
        .into());
    }
    let seeds = id.seeds as i32;
    let check = |values: &[i8], first: u64| -> Result<(), String> {
        match values.iter().position(|&v| i32::from(v).abs() > seeds) {
            Some(i) => Err(format!(
                "{}: byte {} holds {}, outside -{seeds}..={seeds} for level {}",
                file.display(),
                first + i as u64,
                values[i],
                id.seeds
            )),
            None => Ok(()),
        }
    };
    let mut read = |first: u64, len: usize| -> Result<Vec<i8>, String> {
        let mut buf = vec![0u8; len];
        input.seek(SeekFrom::Start(first)).map_err(io)?;
        input.read_exact(&mut buf).map_err(io)?;
        let values: Vec<i8> = buf.into_iter().map(|b| b as i8).collect();
        check(&values, first)?;
        Ok(values)
    };

    let mut writer = LevelWriter::create(dir, id, options)?;
    // Probabilities want more data than the choice of encoding: 16 Mi boards.
    let ranges = spread_sample(boards, options.block_boards, 16 * TRAIN_BOARDS as u64);
    let mut sample = Vec::with_capacity(ranges.len());
    for r in &ranges {
        sample.push((r.start, read(r.start, (r.end - r.start) as usize)?));
    }
    let blocks: Vec<(u64, &[i8])> = sample.iter().map(|(s, v)| (*s, v.as_slice())).collect();
    writer.train_on(&blocks)?;
    let mut first = 0u64;
    while first < boards {
        let len = (boards - first).min(CHUNK as u64) as usize;
        writer.push(&read(first, len)?)?;
        first += len as u64;
    }
    Ok(writer.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::scratch;

    #[test]
    fn a_file_of_the_wrong_size_is_refused() {
        let scratch = scratch("import-size");
        let dir = scratch.path();
        let file = dir.join("scores.4");
        std::fs::write(&file, vec![0u8; 1364]).unwrap();
        let id = LevelId::new(awari_dbformat::Rules::default(), 4);
        let err = import(&file, dir, id, WriteOptions::default()).unwrap_err();
        assert!(
            err.to_string().contains(
                "scores.4: 1364 bytes, but level 4 (awari, 6 pits per side) has 1365 boards"
            ),
            "{err}"
        );
        let mut bytes = vec![0u8; 1365];
        bytes[700] = 5;
        std::fs::write(&file, bytes).unwrap();
        let err = import(&file, dir, id, WriteOptions::default()).unwrap_err();
        assert!(
            err.to_string().contains("byte 700 holds 5, outside -4..=4"),
            "{err}"
        );
        let left: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
        assert_eq!(left.len(), 1, "only the input file remains");
    }
}
