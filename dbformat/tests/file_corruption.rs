//! A damaged level file gives an error naming the file and what is wrong —
//! never a panic, never a wrong value.
//!
//! The byte offsets used here are those of the layout table in the docs of
//! `awari_dbformat::file`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use awari_dbformat::file::{
    layout, write_level, write_level_bounded, Encoding, EncodingChoice, LevelId, LevelReader,
    Model, Stored, WriteOptions,
};
use awari_dbformat::{Error, Index, RuleSet, Rules};
use proptest::prelude::*;

const BLOCK: u32 = 1000;
/// Boards per segment in the segmented context-ans images.
const SEGMENT: u32 = 250;

/// A fresh empty directory, removed (with what it holds) when dropped.
fn scratch_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("awari-corruption-{name}-"))
        .tempdir()
        .unwrap()
}

fn level(set: RuleSet, pits: u8, seeds: u32) -> LevelId {
    LevelId::new(Rules::new(set, pits).unwrap(), seeds)
}

/// In-range values with some structure, for level `id`.
fn values(id: LevelId) -> Vec<i8> {
    let n = id.seeds as i32;
    Index::for_pits(id.rules.pits())
        .boards(id.seeds)
        .map(|b| {
            (i32::from(b.pit(0)) - i32::from(b.pit(2)) + i32::from(b.pit(5))).clamp(-n, n) as i8
        })
        .collect()
}

/// Writes level `id` into `dir` and returns its path and values.
fn write(dir: &Path, id: LevelId, choice: EncodingChoice) -> (PathBuf, Vec<i8>) {
    write_in_segments(dir, id, choice, BLOCK)
}

/// Like [`write`], with context-ans blocks cut into segments of `segment`
/// boards (`BLOCK` for none).
fn write_in_segments(
    dir: &Path,
    id: LevelId,
    choice: EncodingChoice,
    segment: u32,
) -> (PathBuf, Vec<i8>) {
    let v = values(id);
    let options = WriteOptions {
        block_boards: BLOCK,
        segment_boards: segment,
        zstd_level: 3,
        encoding: choice,
    };
    let path = write_level(dir, id, &v, options).unwrap();
    (path, v)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Recomputes every checksum of a file image, so that a test can reach the
/// checks behind them. Whatever does not fit the image is left alone.
fn fix_checksums(b: &mut [u8]) {
    if b.len() < 128 {
        return;
    }
    let model_len = u64_at(b, 40) as usize;
    let table = u64_at(b, 48) as usize;
    let blocks_at = u64_at(b, 56) as usize;
    let blocks = u64_at(b, 32) as usize;
    let sane = model_len < b.len()
        && table == 128 + model_len
        && table <= blocks_at
        && blocks_at <= b.len()
        && blocks < b.len()
        && table + 12 * blocks + 8 <= blocks_at;
    if sane {
        let model_crc = crc32fast::hash(&b[128..table]);
        b[76..80].copy_from_slice(&model_crc.to_le_bytes());
        // Block checksums first (they are part of the table).
        for i in 0..blocks {
            let start = u64_at(b, table + 8 * i) as usize;
            let end = u64_at(b, table + 8 * (i + 1)) as usize;
            if start <= end && end <= b.len() {
                let crc = crc32fast::hash(&b[start..end]);
                let at = table + 8 * (blocks + 1) + 4 * i;
                b[at..at + 4].copy_from_slice(&crc.to_le_bytes());
            }
        }
        let table_crc = crc32fast::hash(&b[table..blocks_at]);
        b[80..84].copy_from_slice(&table_crc.to_le_bytes());
    }
    let body = crc32fast::hash(&b[128..]);
    b[84..88].copy_from_slice(&body.to_le_bytes());
    let header = crc32fast::hash(&b[..124]);
    b[124..128].copy_from_slice(&header.to_le_bytes());
}

/// Opens `bytes` written to `path`; the error it must give.
fn open_err(path: &Path, bytes: &[u8]) -> Error {
    std::fs::write(path, bytes).unwrap();
    LevelReader::open(path).expect_err("a damaged file must not open")
}

fn assert_corrupt(err: &Error, path: &Path, what: &str) {
    assert!(matches!(err, Error::Corrupt { .. }), "not Corrupt: {err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains(&path.display().to_string()),
        "no path in: {msg}"
    );
    assert!(msg.contains(what), "{msg:?} does not say {what:?}");
}

#[test]
fn truncated_files() {
    let scratch = scratch_dir("truncated");

    let dir = scratch.path();
    let (path, _) = write(dir, level(RuleSet::Awari, 6, 8), EncodingChoice::Auto);
    let good = std::fs::read(&path).unwrap();
    let damaged = dir.join("damaged.awl");
    for len in [good.len() - 1, good.len() / 2, 200, 128] {
        let err = open_err(&damaged, &good[..len]);
        assert_corrupt(
            &err,
            &damaged,
            &format!(
                "truncated: header says {} bytes, the file has {len}",
                good.len()
            ),
        );
    }
    for len in [127, 10, 0] {
        let err = open_err(&damaged, &good[..len]);
        assert_corrupt(
            &err,
            &damaged,
            &format!("truncated: {len} bytes, shorter than the 128-byte header"),
        );
    }
    let mut longer = good.clone();
    longer.push(0);
    let err = open_err(&damaged, &longer);
    assert_corrupt(&err, &damaged, "1 bytes too many");
}

#[test]
fn a_flipped_bit_anywhere_in_the_header_is_caught() {
    let scratch = scratch_dir("header-bits");

    let dir = scratch.path();
    let (path, _) = write(dir, level(RuleSet::Awari, 6, 7), EncodingChoice::Auto);
    let good = std::fs::read(&path).unwrap();
    let damaged = dir.join("damaged.awl");
    for byte in 0..128 {
        for bit in [0, 3, 7] {
            let mut b = good.clone();
            b[byte] ^= 1 << bit;
            let err = open_err(&damaged, &b);
            let msg = err.to_string();
            assert!(msg.contains("damaged.awl"), "{msg}");
            match byte {
                0..=7 => assert_corrupt(&err, &damaged, "not a level file: magic"),
                8..=11 => assert!(matches!(err, Error::Unsupported { .. }), "{msg}"),
                _ => assert_corrupt(&err, &damaged, "header checksum mismatch"),
            }
        }
    }
}

#[test]
fn magic_and_version() {
    let scratch = scratch_dir("magic");

    let dir = scratch.path();
    let (path, _) = write(dir, level(RuleSet::Awari, 6, 5), EncodingChoice::Auto);
    let good = std::fs::read(&path).unwrap();
    let damaged = dir.join("damaged.awl");

    let mut b = good.clone();
    b[..8].copy_from_slice(b"PK\x03\x04ZIP!");
    assert_corrupt(
        &open_err(&damaged, &b),
        &damaged,
        "not a level file: magic is \"PK",
    );

    let mut b = good.clone();
    b[8..10].copy_from_slice(&5u16.to_le_bytes());
    fix_checksums(&mut b);
    let err = open_err(&damaged, &b);
    assert!(matches!(err, Error::Unsupported { .. }), "{err:?}");
    assert!(
        err.to_string().contains(
            "damaged.awl: unsupported level file: format version 5; this build reads versions 1 to 4"
        ),
        "{err}"
    );

    // Version 4 says in byte 92 which bound of --repetition any it holds; a
    // file of scores, or of lower bounds (code 1), called version 4 does not.
    for code in [0u8, 1] {
        let mut b = good.clone();
        b[8..10].copy_from_slice(&4u16.to_le_bytes());
        b[92] = code;
        fix_checksums(&mut b);
        assert_corrupt(
            &open_err(&damaged, &b),
            &damaged,
            &format!("stored-values code {code} in a version 4 file"),
        );
    }
    // And a version 3 file cannot hold them.
    let mut b = good.clone();
    b[8..10].copy_from_slice(&3u16.to_le_bytes());
    b[92] = 2;
    fix_checksums(&mut b);
    assert_corrupt(
        &open_err(&damaged, &b),
        &damaged,
        "stored-values code 2 in a version 3 file",
    );

    // Version 3 says in byte 92 that its values are lower bounds; a file of
    // scores called version 3 does not.
    let mut b = good.clone();
    b[8..10].copy_from_slice(&3u16.to_le_bytes());
    fix_checksums(&mut b);
    assert_corrupt(
        &open_err(&damaged, &b),
        &damaged,
        "stored-values code 0 in a version 3 file",
    );

    // Version 2 names the boards per segment in bytes 88..92; a version 1
    // file called version 2 has none there.
    let mut b = good.clone();
    b[8..10].copy_from_slice(&2u16.to_le_bytes());
    fix_checksums(&mut b);
    assert_corrupt(
        &open_err(&damaged, &b),
        &damaged,
        "0 boards per segment in 1000-board",
    );

    let mut b = good.clone();
    b[10..12].copy_from_slice(&256u16.to_le_bytes());
    let err = open_err(&damaged, &b);
    assert!(err.to_string().contains("header of 256 bytes"), "{err}");
}

#[test]
fn a_file_of_lower_bounds_says_so_in_version_3() {
    let scratch = scratch_dir("bounds");
    let dir = scratch.path();
    for segment in [BLOCK, SEGMENT] {
        let id = level(RuleSet::Awari, 6, 6);
        let v = values(id);
        let free = vec![u64::MAX; v.len().div_ceil(64)];
        let options = WriteOptions {
            block_boards: BLOCK,
            segment_boards: segment,
            zstd_level: 3,
            encoding: EncodingChoice::Auto,
        };
        let path = write_level_bounded(dir, id, &v, &free, options).unwrap();
        let reader = LevelReader::open(&path).unwrap();
        assert_eq!(reader.stored(), Stored::LowerBounds);
        let good = std::fs::read(&path).unwrap();
        assert_eq!(good[8..10], 3u16.to_le_bytes());
        assert_eq!(good[92], 1);

        let damaged = dir.join("damaged.awl");
        let mut b = good.clone();
        b[92] = 2;
        fix_checksums(&mut b);
        assert_corrupt(
            &open_err(&damaged, &b),
            &damaged,
            "stored-values code 2 in a version 3 file",
        );
        // Read as version 2, the file would claim to hold scores; byte 92 is
        // then reserved and must be zero.
        let mut b = good.clone();
        b[8..10].copy_from_slice(&2u16.to_le_bytes());
        fix_checksums(&mut b);
        let err = open_err(&damaged, &b);
        assert!(matches!(err, Error::Corrupt { .. }), "{err:?}");
    }
}

#[test]
fn header_fields_are_checked_behind_the_checksum() {
    let scratch = scratch_dir("fields");

    let dir = scratch.path();
    let (path, _) = write(dir, level(RuleSet::Awari, 6, 8), EncodingChoice::Auto);
    let good = std::fs::read(&path).unwrap();
    let damaged = dir.join("damaged.awl");
    // (offset, new bytes there, what the error must say)
    let cases: Vec<(usize, Vec<u8>, &str)> = vec![
        (12, vec![9], "unknown rule set code 9"),
        (13, vec![9], "9 pits per side"),
        (14, vec![7], "unknown value encoding code 7"),
        (
            15,
            vec![7],
            "compression code 7 does not go with the context-ans encoding",
        ),
        (
            16,
            9u32.to_le_bytes().to_vec(),
            "level 9 with 6 pits per side has 167596",
        ),
        (16, 99u32.to_le_bytes().to_vec(), "99 seeds"),
        (20, 0u32.to_le_bytes().to_vec(), "0 boards per block"),
        (
            24,
            75_505u64.to_le_bytes().to_vec(),
            "header says 75505 boards",
        ),
        (32, 7u64.to_le_bytes().to_vec(), "header says 7 blocks"),
        (40, u64::MAX.to_le_bytes().to_vec(), "do not fit"),
        (48, 1u64.to_le_bytes().to_vec(), "do not fit"),
        (56, 1u64.to_le_bytes().to_vec(), "do not fit"),
        (100, vec![1], "reserved header bytes"),
    ];
    for (at, new, what) in cases {
        let mut b = good.clone();
        b[at..at + new.len()].copy_from_slice(&new);
        let len = b.len() as u64;
        b[64..72].copy_from_slice(&len.to_le_bytes());
        // Only the header checksum is repaired: the field itself must be caught.
        let crc = crc32fast::hash(&b[..124]);
        b[124..128].copy_from_slice(&crc.to_le_bytes());
        assert_corrupt(&open_err(&damaged, &b), &damaged, what);
    }
}

#[test]
fn a_flipped_bit_in_the_offset_table_or_model_is_caught() {
    let scratch = scratch_dir("table-bits");

    let dir = scratch.path();
    let (path, _) = write(
        dir,
        level(RuleSet::Awari, 6, 8),
        EncodingChoice::ContextRank(2),
    );
    let good = std::fs::read(&path).unwrap();
    let damaged = dir.join("damaged.awl");
    let model_len = u64_at(&good, 40) as usize;
    let table = u64_at(&good, 48) as usize;
    let blocks_at = u64_at(&good, 56) as usize;
    assert!(model_len > 0, "the context-rank encoding has a model");
    for at in (table..blocks_at).step_by(5) {
        let mut b = good.clone();
        b[at] ^= 0x10;
        assert_corrupt(
            &open_err(&damaged, &b),
            &damaged,
            "offset table checksum mismatch",
        );
    }
    for at in (128..128 + model_len).step_by(3) {
        let mut b = good.clone();
        b[at] ^= 0x01;
        assert_corrupt(
            &open_err(&damaged, &b),
            &damaged,
            "model section checksum mismatch",
        );
    }
}

#[test]
fn offsets_out_of_order_are_caught_behind_the_checksum() {
    let scratch = scratch_dir("offsets");

    let dir = scratch.path();
    let (path, _) = write(dir, level(RuleSet::Awari, 6, 8), EncodingChoice::Raw);
    let good = std::fs::read(&path).unwrap();
    let damaged = dir.join("damaged.awl");
    let table = u64_at(&good, 48) as usize;
    let swap = |b: &mut Vec<u8>, i: usize, value: u64| {
        b[table + 8 * i..table + 8 * i + 8].copy_from_slice(&value.to_le_bytes());
        fix_checksums(b);
    };
    let first = u64_at(&good, table);
    let mut b = good.clone();
    swap(&mut b, 0, first + 1);
    assert_corrupt(&open_err(&damaged, &b), &damaged, "offset table entry 0");
    let mut b = good.clone();
    swap(&mut b, 3, u64_at(&good, table + 8 * 2));
    assert_corrupt(&open_err(&damaged, &b), &damaged, "offset table entry 3");
    let mut b = good.clone();
    swap(&mut b, 76, 1 << 40);
    assert_corrupt(&open_err(&damaged, &b), &damaged, "offset table entry 76");
}

#[test]
fn a_flipped_bit_inside_a_block_fails_that_block_only() {
    let scratch = scratch_dir("block-bits");

    let dir = scratch.path();
    for choice in [EncodingChoice::Raw, EncodingChoice::ContextRank(3)] {
        let (path, v) = write(dir, level(RuleSet::Awari, 6, 8), choice);
        let mut b = std::fs::read(&path).unwrap();
        let table = u64_at(&b, 48) as usize;
        let block5 = u64_at(&b, table + 8 * 5) as usize;
        let block6 = u64_at(&b, table + 8 * 6) as usize;
        b[(block5 + block6) / 2] ^= 0x04;
        std::fs::write(&path, &b).unwrap();
        let reader = LevelReader::open(&path).expect("the header and table are intact");
        let err = reader.get(5 * u64::from(BLOCK) + 17).unwrap_err();
        assert_corrupt(&err, &path, "block 5 (boards 5000..) checksum mismatch");
        assert_eq!(
            reader.get(4 * u64::from(BLOCK)).unwrap().get(),
            v[4000],
            "other blocks still read"
        );
        assert_eq!(reader.get(6 * u64::from(BLOCK)).unwrap().get(), v[6000]);
        assert_corrupt(&reader.decode_all().unwrap_err(), &path, "block 5");
        assert_corrupt(
            &reader.verify_checksums().unwrap_err(),
            &path,
            "whole-file checksum mismatch",
        );
    }
}

#[test]
fn a_block_with_a_valid_checksum_but_bad_content_is_corrupt() {
    let scratch = scratch_dir("bad-content");

    let dir = scratch.path();
    let id = level(RuleSet::Awari, 6, 8);
    let (path, v) = write(dir, id, EncodingChoice::Raw);
    let good = std::fs::read(&path).unwrap();
    let table = u64_at(&good, 48) as usize;
    let blocks = u64_at(&good, 32) as usize;
    let offsets: Vec<usize> = (0..=blocks)
        .map(|i| u64_at(&good, table + 8 * i) as usize)
        .collect();
    // Rebuild the file with block 2 replaced by `frame`, shifting later offsets.
    let rebuild = |frame: &[u8]| -> Vec<u8> {
        let mut b = good[..offsets[2]].to_vec();
        b.extend_from_slice(frame);
        b.extend_from_slice(&good[offsets[3]..]);
        let delta = frame.len() as i64 - (offsets[3] - offsets[2]) as i64;
        for i in 3..=blocks {
            let o = (offsets[i] as i64 + delta) as u64;
            b[table + 8 * i..table + 8 * i + 8].copy_from_slice(&o.to_le_bytes());
        }
        let len = b.len() as u64;
        b[64..72].copy_from_slice(&len.to_le_bytes());
        fix_checksums(&mut b);
        b
    };
    let block2: Vec<u8> = v[2000..3000].iter().map(|&x| x as u8).collect();

    // The fix-up itself is sound: the same content reads back.
    std::fs::write(&path, rebuild(&zstd::bulk::compress(&block2, 1).unwrap())).unwrap();
    let reader = LevelReader::open(&path).unwrap();
    assert_eq!(reader.decode_all().unwrap()[..], v[..]);
    reader.verify_checksums().unwrap();
    drop(reader);

    let mut out_of_range = block2.clone();
    out_of_range[17] = 100;
    let mut short = block2.clone();
    short.pop();
    for (frame, what) in [
        (
            zstd::bulk::compress(&out_of_range, 1).unwrap(),
            "value 100 at board 2017 is outside -8..=8",
        ),
        (
            zstd::bulk::compress(&short, 1).unwrap(),
            "decompresses to 999 bytes, expected 1000",
        ),
        (b"not a zstd frame".to_vec(), "block 2: does not decompress"),
    ] {
        std::fs::write(&path, rebuild(&frame)).unwrap();
        let reader = LevelReader::open(&path).unwrap();
        assert_corrupt(&reader.get(2017).unwrap_err(), &path, what);
        assert_corrupt(&reader.get(2000).unwrap_err(), &path, what);
        assert_corrupt(&reader.decode_all().unwrap_err(), &path, what);
        reader
            .verify_checksums()
            .expect("the checksums were repaired; the values are what is wrong");
        assert_eq!(reader.get(1999).unwrap().get(), v[1999]);
    }
}

/// A segment directory whose lengths overrun the block, or a segment cut
/// short, is corruption found by the lookups that need it; the other
/// segments and blocks still read.
#[test]
fn a_damaged_segment_directory_is_corrupt() {
    let scratch = scratch_dir("segments");

    let dir = scratch.path();
    let id = level(RuleSet::Awari, 6, 8);
    let (path, truth) = write_in_segments(dir, id, EncodingChoice::ContextAns(3), SEGMENT);
    let good = std::fs::read(&path).unwrap();
    assert_eq!(
        u16::from_le_bytes([good[8], good[9]]),
        2,
        "segmented: version 2"
    );
    assert_eq!(
        u32::from_le_bytes(good[88..92].try_into().unwrap()),
        SEGMENT
    );
    let block0 = u64_at(&good, u64_at(&good, 48) as usize) as usize;
    let damaged = dir.join("damaged.awl");

    // Segment 0's length made huge: the lengths overrun block 0.
    let mut b = good.clone();
    b[block0..block0 + 2].copy_from_slice(&u16::MAX.to_le_bytes());
    fix_checksums(&mut b);
    std::fs::write(&damaged, &b).unwrap();
    let reader = LevelReader::open(&damaged).unwrap();
    for i in [0u64, 300, 999] {
        let err = reader.get(i).unwrap_err();
        assert_corrupt(&err, &damaged, "segment lengths add up to");
    }
    assert_eq!(reader.get(1000).unwrap().get(), truth[1000]);
    assert!(reader.decode_all().is_err());

    // Segment 0 said to be 2 bytes longer: its stream does not end where it
    // should, and segment 1 starts 2 bytes late.
    let mut b = good.clone();
    let len0 = u16::from_le_bytes([b[block0], b[block0 + 1]]);
    b[block0..block0 + 2].copy_from_slice(&(len0 + 2).to_le_bytes());
    fix_checksums(&mut b);
    std::fs::write(&damaged, &b).unwrap();
    let reader = LevelReader::open(&damaged).unwrap();
    let err = reader.decode_all().unwrap_err();
    assert_corrupt(&err, &damaged, "block 0");
    for i in 0..2000u64 {
        if let Ok(s) = reader.get(i) {
            assert!(i32::from(s.get()).abs() <= 8);
        }
    }
}

#[test]
fn another_rule_set_or_board_size_is_the_wrong_level() {
    let scratch = scratch_dir("wrong-level");

    let dir = scratch.path();
    let expected = level(RuleSet::Awari, 6, 6);
    for other in [
        level(RuleSet::Abapa, 6, 6),
        level(RuleSet::CrossWari, 6, 6),
        level(RuleSet::Awari, 4, 6),
        level(RuleSet::Awari, 6, 7),
    ] {
        let (path, _) = write(dir, other, EncodingChoice::Auto);
        let err = LevelReader::open_expecting(&path, expected).unwrap_err();
        assert!(matches!(err, Error::WrongLevel { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(
            msg.contains(&format!(
                "expected awari, 6 pits per side, 6 seeds, but the file holds {}",
                other.describe()
            )),
            "{msg}"
        );
        // Renamed to the expected name, it is still recognised by its header.
        let renamed = dir.join(expected.file_name());
        std::fs::rename(&path, &renamed).unwrap();
        let err = LevelReader::open_expecting(&renamed, expected).unwrap_err();
        assert!(matches!(err, Error::WrongLevel { .. }), "{err:?}");
    }
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let scratch = scratch_dir("missing");

    let dir = scratch.path();
    let path = dir.join("awari-p6-n3.awl");
    let err = LevelReader::open(&path).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("awari-p6-n3.awl"), "{err}");
}

/// A valid file image to mutate in the property tests (written once).
fn sample_image((choice, segment): (EncodingChoice, u32)) -> Vec<u8> {
    static IMAGES: [OnceLock<Vec<u8>>; 4] = [const { OnceLock::new() }; 4];
    let k = match (choice, segment) {
        (EncodingChoice::Raw, _) => 0,
        (EncodingChoice::ContextRank(_), _) => 1,
        (_, BLOCK) => 2,
        _ => 3,
    };
    IMAGES[k]
        .get_or_init(|| {
            let scratch = scratch_dir(&format!("image-{k}"));

            let dir = scratch.path();
            let (path, _) = write_in_segments(dir, level(RuleSet::Awari, 4, 6), choice, segment);
            std::fs::read(path).unwrap()
        })
        .clone()
}

/// The three encodings, by number, context-ans with and without segments.
fn encoding(k: u8) -> (EncodingChoice, u32) {
    match k % 4 {
        0 => (EncodingChoice::Raw, BLOCK),
        1 => (EncodingChoice::ContextRank(3), BLOCK),
        2 => (EncodingChoice::ContextAns(3), BLOCK),
        _ => (EncodingChoice::ContextAns(3), SEGMENT),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn parsing_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = layout::parse(&bytes, Path::new("fuzz.awl"));
    }

    #[test]
    fn parsing_a_damaged_header_and_table_never_panics(
        edits in proptest::collection::vec((0usize..2048, any::<u8>()), 1..12),
        repair in any::<bool>(),
        which in any::<u8>(),
        cut in proptest::option::of(0usize..4096),
    ) {
        let choice = encoding(which);
        let mut b = sample_image(choice);
        let head = (u64_at(&b, 56) as usize).min(b.len());
        for (at, x) in edits {
            let at = at % head;
            b[at] ^= x;
        }
        if let Some(cut) = cut {
            b.truncate(cut.min(b.len()));
        }
        if repair && b.len() >= 128 {
            fix_checksums(&mut b);
        }
        let _ = layout::parse(&b, Path::new("fuzz.awl"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// The model parser, fed arbitrary orders behind a plausible prefix and a
    /// valid zstd frame (so that it gets past decompression).
    #[test]
    fn parsing_arbitrary_models_never_panics(
        neighbours in prop_oneof![Just(3u8), 0u8..5],
        pit0_classes in prop_oneof![Just(4u8), 0u8..10],
        alphabet in prop_oneof![Just(13u16), 0u16..20],
        entries in proptest::collection::vec(
            (0u32..30000, proptest::collection::vec(0u8..15, 0..15)), 0..10),
        extra in proptest::collection::vec(any::<u8>(), 0..4),
        claimed in proptest::option::of(any::<u32>()),
    ) {
        let count = entries.len() as u32 + u32::from(extra.first().copied().unwrap_or(0) % 2);
        let mut body = Vec::new();
        for (ctx, list) in &entries {
            body.extend_from_slice(&ctx.to_le_bytes());
            body.push(list.len() as u8);
            body.extend_from_slice(list);
        }
        body.extend_from_slice(&extra[extra.len().min(1)..]);
        let id = level(RuleSet::Awari, 6, 6);
        let mut raw = vec![neighbours, pit0_classes];
        raw.extend_from_slice(&alphabet.to_le_bytes());
        raw.extend_from_slice(&count.to_le_bytes());
        raw.extend_from_slice(&body);
        let mut section = claimed.unwrap_or(raw.len() as u32).to_le_bytes().to_vec();
        section.extend_from_slice(&zstd::bulk::compress(&raw, 1).unwrap());
        if let Ok(model) = Model::parse(Encoding::ContextRank, id, &section) {
            // A model that parses decodes any bytes without panicking.
            let bytes: Vec<u8> = body.iter().map(|&x| x % 16).collect();
            let mut out = vec![0i8; bytes.len()];
            if model.decode_block(id, 0, &bytes, &mut out).is_ok() {
                prop_assert!(out.iter().all(|&v| i32::from(v).abs() <= 6));
            }
        }
        let _ = Model::parse(Encoding::ContextRank, id, &body);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// The rANS model parser and decoder, fed tables that are often valid
    /// (frequencies made to add up) and streams of arbitrary bytes.
    #[test]
    fn arbitrary_ans_models_and_streams_never_panic(
        pit0_classes in prop_oneof![Just(4u8), 0u8..10],
        tables in proptest::collection::vec(
            (0u32..30000, proptest::collection::btree_set(0u8..13, 1..13), any::<bool>()), 1..6),
        stream in proptest::collection::vec(any::<u8>(), 0..64),
        len in 0usize..300,
    ) {
        let id = level(RuleSet::Awari, 6, 6);
        let mut raw = vec![3, pit0_classes, 13, 0];
        raw.extend_from_slice(&(tables.len() as u32).to_le_bytes());
        for (ctx, symbols, exact) in &tables {
            raw.extend_from_slice(&ctx.to_le_bytes());
            raw.push(symbols.len() as u8);
            // Frequencies adding up to 2^14 with the unlisted ones at 1, or not.
            let budget = (1u32 << 14) - (13 - symbols.len() as u32);
            let each = budget / symbols.len() as u32;
            for (k, &s) in symbols.iter().enumerate() {
                let mut f = each;
                if k == 0 {
                    f += budget - each * symbols.len() as u32;
                }
                if !exact && k == 0 {
                    f += 1;
                }
                raw.push(s);
                raw.extend_from_slice(&(f as u16).to_le_bytes());
            }
        }
        let mut section = (raw.len() as u32).to_le_bytes().to_vec();
        section.extend_from_slice(&zstd::bulk::compress(&raw, 1).unwrap());
        if let Ok(model) = Model::parse(Encoding::ContextAns, id, &section) {
            let mut out = vec![0i8; len];
            if model.decode_block(id, 100, &stream, &mut out).is_ok() {
                prop_assert!(out.iter().all(|&v| i32::from(v).abs() <= 6));
            }
            let mut prefix = vec![0i8; len / 2];
            let _ = model.decode_frame(id, 100, &stream, len, len, &mut prefix);
            // The same bytes as a block of segments: a directory that may not fit.
            for segment in [1, 7, 64] {
                let _ = model.decode_frame(id, 100, &stream, len, segment, &mut prefix);
                let mut part = vec![0i8; segment.min(len)];
                let k = len.div_ceil(segment).saturating_sub(1);
                let _ = model.decode_segment(id, 100, &stream, len, segment, k, &mut part);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Whatever is damaged, the reader either refuses the file, fails a lookup,
    /// or returns exactly the values written.
    #[test]
    fn a_damaged_file_never_reads_wrong_values(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        repair in any::<bool>(),
        which in any::<u8>(),
    ) {
        let id = level(RuleSet::Awari, 4, 6);
        let truth = values(id);
        let choice = encoding(which);
        let mut b = sample_image(choice);
        for (at, x) in edits {
            let at = at % b.len();
            b[at] ^= x.max(1);
        }
        if repair {
            fix_checksums(&mut b);
        }
        let scratch = scratch_dir("never-wrong");

        let dir = scratch.path();
        let path = dir.join("damaged.awl");
        std::fs::write(&path, &b).unwrap();
        if let Ok(reader) = LevelReader::open(&path) {
            if let Ok(all) = reader.decode_all() {
                if reader.id() == id {
                    // Undetected only if the repaired damage left the values intact
                    // or lies in a field that does not change them.
                    if all[..] != truth[..] {
                        // A repaired image may legitimately encode other in-range values;
                        // they must at least be in range.
                        prop_assert!(repair, "unrepaired damage changed values silently");
                        prop_assert!(all.iter().all(|&x| i32::from(x).abs() <= 6));
                    }
                }
            }
            for i in [0u64, 1, 17, 999, 1000, 2000] {
                if let Ok(s) = reader.get(i) {
                    prop_assert!(i32::from(s.get()).abs() <= reader.id().seeds as i32);
                }
            }
        }
    }
}
