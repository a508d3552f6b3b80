//! Unit tests of the level file format: round trips, naming, the writer's
//! checks and clean-up. Corruption is tested in `tests/file_corruption.rs`.

use super::*;
use crate::game::rules::{RuleSet, Rules};
use crate::game::score::Score;

/// A fresh empty directory under the system temp dir, removed (with what it
/// holds) when dropped.
pub(crate) fn scratch_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("awari-file-test-{name}-"))
        .tempdir()
        .unwrap()
}

fn id(set: RuleSet, pits: u8, seeds: u32) -> LevelId {
    LevelId::new(Rules::new(set, pits).unwrap(), seeds)
}

/// Values in range that look a little like real ones: mostly small, often
/// equal to a neighbour, with some extremes.
fn values(id: LevelId) -> Vec<i8> {
    let n = id.seeds as i64;
    Index::for_pits(id.rules.pits())
        .boards(id.seeds)
        .enumerate()
        .map(|(i, b)| {
            let x = i as i64 * 2_654_435_761 % 97;
            let v = if x < 10 {
                n
            } else if x < 15 {
                -n
            } else {
                (i64::from(b.pit(0)) - i64::from(b.pit(3))).clamp(-n, n)
            };
            v as i8
        })
        .collect()
}

fn small_options() -> WriteOptions {
    WriteOptions {
        block_boards: 100,
        segment_boards: 100,
        zstd_level: 3,
        encoding: EncodingChoice::Auto,
    }
}

#[test]
fn file_names_round_trip() {
    for set in RuleSet::ALL {
        for pits in [2u8, 6, 8] {
            for seeds in [0u32, 16, 48] {
                let level = id(set, pits, seeds);
                let name = level.file_name();
                assert_eq!(LevelId::from_file_name(&name), Some(level), "{name}");
            }
        }
    }
    assert_eq!(id(RuleSet::Awari, 6, 16).file_name(), "awari-p6-n16.awl");
    assert_eq!(
        id(RuleSet::GrandSlamCaptures, 4, 9).file_name(),
        "grand-slam-captures-p4-n9.awl"
    );
    for bad in [
        "awari-p6-n16.awl.partial",
        "awari-p6-n16",
        "awari-p6-n016.awl",
        "awari-p9-n16.awl",
        "oware-p6-n16.awl",
        "awari-p6-n99.awl",
        "awari-n16-p6.awl",
        "scores.16",
    ] {
        assert_eq!(LevelId::from_file_name(bad), None, "{bad}");
    }
}

#[test]
fn boards_match_the_index() {
    assert_eq!(id(RuleSet::Awari, 6, 16).boards(), 12_685_179);
    assert_eq!(id(RuleSet::Awari, 6, 1).boards(), 12);
}

#[test]
fn write_then_read_every_encoding() {
    let scratch = scratch_dir("round-trip");

    let dir = scratch.path();
    for (level, choice) in [
        (id(RuleSet::Awari, 6, 7), EncodingChoice::Raw),
        (id(RuleSet::Awari, 6, 7), EncodingChoice::ContextRank(1)),
        (id(RuleSet::Abapa, 6, 7), EncodingChoice::ContextRank(3)),
        (id(RuleSet::Awari, 6, 8), EncodingChoice::Auto),
        (id(RuleSet::Awari, 3, 9), EncodingChoice::ContextRank(3)),
        (id(RuleSet::Awari, 2, 5), EncodingChoice::Auto),
        (id(RuleSet::Awari, 6, 0), EncodingChoice::Auto),
    ] {
        let v = values(level);
        let options = WriteOptions {
            encoding: choice,
            ..small_options()
        };
        let path = write_level(dir, level, &v, options).unwrap();
        assert_eq!(path, level_path(dir, level));
        let reader = LevelReader::open_expecting(&path, level).unwrap();
        assert_eq!(reader.id(), level);
        assert_eq!(reader.boards(), v.len() as u64);
        assert_eq!(reader.file_bytes(), std::fs::metadata(&path).unwrap().len());
        assert_eq!(
            reader.decode_all().unwrap()[..],
            v[..],
            "{level} {choice:?}"
        );
        reader.verify_checksums().unwrap();
        for (i, &x) in v.iter().enumerate().step_by(7) {
            assert_eq!(reader.get(i as u64).unwrap(), Score::new(x));
        }
        let err = reader.get(v.len() as u64).unwrap_err();
        assert!(matches!(err, Error::IndexOutOfRange { .. }), "{err}");
    }
}

/// Free bits for `n` boards: board `i` is free when `pick(i)`.
fn free_bits(n: usize, pick: impl Fn(usize) -> bool) -> Vec<u64> {
    let mut free = vec![0u64; n.div_ceil(64)];
    for i in (0..n).filter(|&i| pick(i)) {
        free[i / 64] |= 1 << (i % 64);
    }
    free
}

#[test]
fn lower_bounds_never_exceed_the_score_and_are_the_score_where_not_free() {
    let scratch = scratch_dir("bounds");
    let dir = scratch.path();
    for level in [
        id(RuleSet::Awari, 6, 9),
        id(RuleSet::GrandSlamReplay, 4, 8),
        id(RuleSet::Awari, 2, 7),
    ] {
        let v = values(level);
        let free = free_bits(v.len(), |i| i % 3 != 0);
        for options in [small_options(), WriteOptions::default()] {
            let path = write_level_bounded(dir, level, &v, &free, options).unwrap();
            let reader = LevelReader::open_expecting(&path, level).unwrap();
            assert_eq!(reader.stored(), Stored::LowerBounds);
            let stored = reader.decode_all().unwrap();
            let mut lowered = 0;
            for (i, (&s, &x)) in stored.iter().zip(&v).enumerate() {
                if i % 3 == 0 {
                    assert_eq!(s, x, "board {i} of {level:?} is not free");
                } else {
                    assert!(s <= x, "board {i} of {level:?}: {s} above its score {x}");
                    lowered += usize::from(s < x);
                }
                assert_eq!(reader.get(i as u64).unwrap(), Score::new(s));
            }
            assert!(
                lowered > 0,
                "{level:?}: no free board was given another value"
            );
        }
    }
}

#[test]
fn choosing_while_encoding_makes_the_file_of_choosing_first() {
    use super::writer::{write_bounded, Walks};
    let scratch = scratch_dir("one-walk");
    let (one, two) = (scratch.path().join("one"), scratch.path().join("two"));
    std::fs::create_dir_all(&one).unwrap();
    std::fs::create_dir_all(&two).unwrap();
    let mut context_ans = 0;
    for level in [
        id(RuleSet::Awari, 6, 9),
        id(RuleSet::Abapa, 5, 8),
        id(RuleSet::GrandSlamReplay, 4, 8),
        id(RuleSet::Awari, 2, 7),
    ] {
        let v = values(level);
        let free = free_bits(v.len(), |i| i % 5 != 2);
        for options in [small_options(), WriteOptions::default()] {
            let a = write_bounded(&one, level, &v, &free, options, Walks::One).unwrap();
            let b = write_bounded(&two, level, &v, &free, options, Walks::Two).unwrap();
            let bytes = std::fs::read(&a).unwrap();
            assert!(
                bytes == std::fs::read(&b).unwrap(),
                "{level:?} {options:?}: the files differ"
            );
            let reader = LevelReader::open_expecting(&a, level).unwrap();
            context_ans += usize::from(reader.encoding() == Encoding::ContextAns);
        }
    }
    // The one walk is only taken with context-ans models.
    assert!(context_ans >= 4, "{context_ans} files in context-ans");
}

#[test]
fn a_level_of_free_boards_makes_a_smaller_file() {
    let scratch = scratch_dir("bounds-size");
    let dir = scratch.path();
    let level = id(RuleSet::Awari, 6, 12);
    let v = values(level);
    let scores = write_level(dir, level, &v, WriteOptions::default()).unwrap();
    let scores_bytes = std::fs::metadata(&scores).unwrap().len();
    // (On these made-up values a free board's choice spoils its successors'
    // contexts: with half the boards free the file grows. Real levels gain,
    // see the solver's tests.)
    let free = free_bits(v.len(), |_| true);
    let bounds = write_level_bounded(dir, level, &v, &free, WriteOptions::default()).unwrap();
    let bounds_bytes = std::fs::metadata(&bounds).unwrap().len();
    assert!(
        bounds_bytes < scores_bytes,
        "{bounds_bytes} bytes of lower bounds, {scores_bytes} of scores"
    );
}

#[test]
fn streaming_in_odd_pieces_equals_write_level() {
    let scratch = scratch_dir("streaming");

    let dir = scratch.path();
    let level = id(RuleSet::Awari, 6, 8);
    let v = values(level);
    let mut writer = LevelWriter::create(dir, level, small_options()).unwrap();
    let temp = writer.temp_path().to_path_buf();
    assert!(temp.exists());
    let mut at = 0;
    for piece in [1usize, 0, 99, 101, 5000, 7, 64 * 100, 12345]
        .iter()
        .cycle()
    {
        let end = (at + piece).min(v.len());
        writer.push(&v[at..end]).unwrap();
        at = end;
        if at == v.len() {
            break;
        }
    }
    let path = writer.finish().unwrap();
    assert!(!temp.exists());
    let reader = LevelReader::open(&path).unwrap();
    assert_eq!(reader.decode_all().unwrap()[..], v[..]);
    reader.verify_checksums().unwrap();
}

#[test]
fn many_table_flushes_and_a_short_last_block() {
    // 75,504 boards in blocks of 3: more entries than one table flush holds.
    let scratch = scratch_dir("table-flush");

    let dir = scratch.path();
    let level = id(RuleSet::Awari, 6, 8);
    let v = values(level);
    let options = WriteOptions {
        block_boards: 3,
        segment_boards: 3,
        zstd_level: 1,
        encoding: EncodingChoice::Raw,
    };
    let path = write_level(dir, level, &v, options).unwrap();
    let reader = LevelReader::open(&path).unwrap();
    assert_eq!(reader.blocks(), 25_168);
    assert_eq!(reader.decode_all().unwrap()[..], v[..]);
    assert_eq!(reader.get(75_503).unwrap(), Score::new(v[75_503]));
}

/// Context-ans blocks cut into segments read back whole, in ranges and board
/// by board, including a short last block with a short last segment; the
/// file says version 2. Uncut blocks keep version 1.
#[test]
fn segmented_blocks_round_trip() {
    let scratch = scratch_dir("segments");

    let dir = scratch.path();
    for (pits, seeds) in [(6u8, 9u32), (4, 11), (3, 14)] {
        let level = id(RuleSet::Awari, pits, seeds);
        let v = values(level);
        for (block_boards, segment_boards) in [(400, 100), (1024, 256), (300, 300)] {
            let options = WriteOptions {
                block_boards,
                segment_boards,
                zstd_level: 3,
                encoding: EncodingChoice::ContextAns(3),
            };
            let path = write_level(dir, level, &v, options).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            let version = u16::from_le_bytes([bytes[8], bytes[9]]);
            assert_eq!(version, if segment_boards < block_boards { 2 } else { 1 });
            let reader = LevelReader::open(&path).unwrap();
            assert_eq!(reader.segment_boards(), segment_boards);
            assert_eq!(reader.decode_all().unwrap()[..], v[..], "{level:?}");
            let mid = v.len() / 3;
            assert_eq!(
                reader.decode_range(mid as u64, 777).unwrap(),
                &v[mid..mid + 777]
            );
            // Every board of the first and last blocks, and a spread between.
            let last = v.len() - 1;
            let picks = (0..block_boards as usize + 5)
                .chain((0..v.len()).step_by(97))
                .chain(last.saturating_sub(block_boards as usize)..=last);
            let fresh = LevelReader::open(&path).unwrap();
            for i in picks.filter(|&i| i < v.len()) {
                assert_eq!(fresh.get(i as u64).unwrap(), Score::new(v[i]), "board {i}");
            }
            assert!(fresh.verify_checksums().is_ok());
        }
    }
}

#[test]
fn writer_rejects_wrong_counts_and_values_and_cleans_up() {
    let scratch = scratch_dir("writer-checks");

    let dir = scratch.path();
    let level = id(RuleSet::Awari, 6, 4);
    let v = values(level);

    let mut writer = LevelWriter::create(dir, level, small_options()).unwrap();
    let temp = writer.temp_path().to_path_buf();
    writer.push(&v[..100]).unwrap();
    let err = writer.finish().unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }));
    assert!(err.to_string().contains("only 100 of the 1365"), "{err}");
    assert!(err.to_string().contains(".partial"), "{err}");
    assert!(!temp.exists(), "the temporary file is removed");
    assert!(!level_path(dir, level).exists());

    let mut writer = LevelWriter::create(dir, level, small_options()).unwrap();
    let err = writer.push(&[0, 5]).unwrap_err();
    assert!(
        err.to_string()
            .contains("value 5 of board 1 is outside -4..=4"),
        "{err}"
    );
    drop(writer);
    assert!(!temp.exists(), "dropping a writer removes its file");

    let mut writer = LevelWriter::create(dir, level, small_options()).unwrap();
    writer.push(&v).unwrap();
    let err = writer.push(&[0]).unwrap_err();
    assert!(err.to_string().contains("1366 values pushed"), "{err}");

    let err = write_level(dir, level, &v[1..], small_options()).unwrap_err();
    assert!(err.to_string().contains("1364 values given"), "{err}");

    let bad = WriteOptions {
        block_boards: 0,
        segment_boards: 0,
        zstd_level: 3,
        encoding: EncodingChoice::Auto,
    };
    assert!(LevelWriter::create(dir, level, bad).is_err());
    for segment_boards in [0, 30, 200] {
        let bad = WriteOptions {
            segment_boards,
            ..small_options()
        };
        let err = LevelWriter::create(dir, level, bad).unwrap_err();
        assert!(err.to_string().contains("boards per segment"), "{err}");
    }
    let too_big = LevelId::new(Rules::default(), 65);
    let err = LevelWriter::create(dir, too_big, small_options()).unwrap_err();
    assert!(matches!(err, Error::TooManySeeds { .. }), "{err}");
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        0,
        "nothing left behind"
    );
}

#[test]
fn create_in_a_missing_directory_names_the_file() {
    let scratch = scratch_dir("missing");
    let dir = scratch.path().join("no-such-dir");
    let err = LevelWriter::create(&dir, id(RuleSet::Awari, 6, 3), small_options()).unwrap_err();
    assert!(matches!(err, Error::Io { .. }));
    assert!(err.to_string().contains("awari-p6-n3.awl.partial"), "{err}");
}

#[test]
fn scan_dir_lists_level_files_only_sorted() {
    let scratch = scratch_dir("scan");

    let dir = scratch.path();
    let levels = [
        id(RuleSet::Awari, 6, 3),
        id(RuleSet::Awari, 6, 1),
        id(RuleSet::Abapa, 4, 2),
        id(RuleSet::Awari, 4, 2),
    ];
    for level in levels {
        write_level(dir, level, &values(level), small_options()).unwrap();
    }
    std::fs::write(dir.join("awari-p6-n5.awl.partial"), b"x").unwrap();
    std::fs::write(dir.join("notes.txt"), b"x").unwrap();
    std::fs::create_dir(dir.join("awari-p6-n9.awl")).unwrap();
    let found: Vec<LevelId> = scan_dir(dir).unwrap().into_iter().map(|(l, _)| l).collect();
    assert_eq!(
        found,
        vec![levels[3], levels[1], levels[0], levels[2]],
        "awari before abapa, then pits, then seeds"
    );
    let err = scan_dir(&dir.join("nope")).unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn readers_are_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<LevelReader>();
    let scratch = scratch_dir("threads");

    let dir = scratch.path();
    let level = id(RuleSet::Awari, 6, 9);
    let v = values(level);
    let path = write_level(dir, level, &v, small_options()).unwrap();
    let reader = LevelReader::open(&path).unwrap();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (reader, v) = (&reader, &v);
            s.spawn(move || {
                let mut i = t;
                for _ in 0..20_000 {
                    i = i
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407)
                        % v.len() as u64;
                    assert_eq!(reader.get(i).unwrap().get(), v[i as usize]);
                }
            });
        }
    });
}

#[test]
fn raw_blocks_hold_the_published_bytes() {
    // With the raw encoding a block decompresses to exactly the scores.n bytes.
    let scratch = scratch_dir("raw-bytes");

    let dir = scratch.path();
    let level = id(RuleSet::Awari, 6, 5);
    let v = values(level);
    let options = WriteOptions {
        encoding: EncodingChoice::Raw,
        ..small_options()
    };
    let path = write_level(dir, level, &v, options).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let layout = layout::parse(&bytes, &path).unwrap();
    let (start, end) = layout.block_range(&bytes, 1);
    let block = zstd::bulk::decompress(&bytes[start..end], 100).unwrap();
    let expected: Vec<u8> = v[100..200].iter().map(|&x| x as u8).collect();
    assert_eq!(block, expected);
}

#[test]
fn decode_range_matches_single_lookups() {
    let scratch = scratch_dir("range");

    let dir = scratch.path();
    let level = id(RuleSet::Awari, 6, 9);
    let v = values(level);
    let path = write_level(dir, level, &v, small_options()).unwrap();
    let reader = LevelReader::open(&path).unwrap();
    for (first, len) in [
        (0u64, 0usize),
        (0, 1),
        (99, 2),
        (150, 1000),
        (v.len() as u64 - 7, 7),
    ] {
        let got = reader.decode_range(first, len).unwrap();
        assert_eq!(
            got,
            &v[first as usize..first as usize + len],
            "{first}+{len}"
        );
    }
    let err = reader.decode_range(v.len() as u64 - 1, 2).unwrap_err();
    assert!(matches!(err, Error::IndexOutOfRange { .. }), "{err}");
}

#[test]
fn training_blocks_must_be_whole_blocks_before_any_push() {
    let scratch = scratch_dir("train-on");

    let dir = scratch.path();
    let level = id(RuleSet::Awari, 6, 6);
    let v = values(level);
    let mut writer = LevelWriter::create(dir, level, small_options()).unwrap();
    assert!(
        writer.train_on(&[(50, &v[50..150])]).is_err(),
        "not on a boundary"
    );
    assert!(
        writer.train_on(&[(100, &v[100..150])]).is_err(),
        "short block"
    );
    let last = (v.len() / 100 * 100) as u64;
    writer
        .train_on(&[(0, &v[..100]), (last, &v[last as usize..])])
        .unwrap();
    writer.push(&v).unwrap();
    assert!(writer.train_on(&[(0, &v[..100])]).is_err(), "after a push");
    let path = writer.finish().unwrap();
    assert_eq!(
        LevelReader::open(&path).unwrap().decode_all().unwrap()[..],
        v[..]
    );
}

#[test]
fn auto_prefers_a_context_encoding_when_neighbours_agree() {
    // Values that depend only on pits 3.. agree with neighbours 1 and 2.
    let scratch = scratch_dir("auto");

    let dir = scratch.path();
    let level = id(RuleSet::Awari, 6, 10);
    let v: Vec<i8> = Index::for_pits(6)
        .boards(10)
        .map(|b| (b.pits()[3..].iter().map(|&s| i32::from(s) * 7).sum::<i32>() % 21 - 10) as i8)
        .collect();
    let uncut = WriteOptions {
        segment_boards: 16384,
        ..WriteOptions::default()
    };
    let path = write_level(dir, level, &v, uncut).unwrap();
    let reader = LevelReader::open(&path).unwrap();
    assert_ne!(reader.encoding(), Encoding::Raw);
    assert_eq!(reader.decode_all().unwrap()[..], v[..]);
    // Blocks cut into segments ask for quick lookups: never context-rank,
    // whose lookups decompress whole blocks.
    for values in [v.clone(), values(level)] {
        let path = write_level(dir, level, &values, WriteOptions::default()).unwrap();
        let reader = LevelReader::open(&path).unwrap();
        assert_ne!(reader.encoding(), Encoding::ContextRank);
        assert_eq!(reader.decode_all().unwrap()[..], values[..]);
    }
}

#[test]
fn repetition_bounds_have_their_own_files_and_are_never_read_as_scores() {
    use crate::level::Bound;
    let scratch = scratch_dir("repetition");
    let dir = scratch.path();
    let level = id(RuleSet::Abapa, 6, 7);
    let v = values(level);
    let scores = write_level(dir, level, &v, small_options()).unwrap();
    for bound in Bound::BOTH {
        let path = write_level_as(dir, level, &v, bound.stored(), small_options()).unwrap();
        assert_eq!(path, bound_path(dir, level, bound));
        assert_eq!(
            path.file_name().unwrap(),
            &*format!("abapa-p6-n7.{}.awl", bound.name())
        );
        let reader = LevelReader::open_bound(&path, level, bound).unwrap();
        assert_eq!(reader.decode_all().unwrap().to_vec(), v);
        // A bound is refused where scores or the other bound are expected.
        let err = LevelReader::open_expecting(&path, level)
            .unwrap_err()
            .to_string();
        assert!(err.contains("even-split"), "{err}");
        let other = if bound == Bound::Lower {
            Bound::Upper
        } else {
            Bound::Lower
        };
        assert!(LevelReader::open_bound(&path, level, other).is_err());
        // And scores where a bound is expected.
        let err = LevelReader::open_bound(&scores, level, bound)
            .unwrap_err()
            .to_string();
        assert!(err.contains("scores"), "{err}");
        // The header says version 4 and what the values are.
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 4);
        assert_eq!(bytes[92], bound.stored().code());
    }
    // The bound files do not count as levels in a directory.
    let names: Vec<_> = scan_dir(dir).unwrap().into_iter().map(|(l, _)| l).collect();
    assert_eq!(names, vec![level]);
}
