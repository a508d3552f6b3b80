//! The solver's counts over all boards against Lincke's published tables.
//!
//! Source: T. R. Lincke, "Exploring the Computational Limits of Large Exhaustive
//! Search Problems", ETH Diss. 14701, 2002, Appendix B, transcribed in
//! `tests/data/lincke_counts.txt` of this repository (rules `awari`, 6 pits per side).

use std::collections::BTreeMap;
use std::path::PathBuf;

use awari_dbformat::Levels;
use awari_dbformat::{Board, Index, Rules, Score};
use awari_solver::{solve_in_memory, stats};

fn lincke_table() -> BTreeMap<u32, BTreeMap<i8, u64>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/lincke_counts.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut table = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let mut words = line.split_whitespace();
        let n: u32 = words.next().unwrap().parse().unwrap();
        let counts = words
            .map(|w| {
                let (v, c) = w.split_once(':').unwrap();
                (v.parse().unwrap(), c.parse().unwrap())
            })
            .collect();
        table.insert(n, counts);
    }
    table
}

#[test]
fn counts_over_all_boards_match_lincke_appendix_b() {
    let rules = Rules::default();
    let table = lincke_table();
    assert_eq!(table.len(), 13, "levels 0..=12 in the data file");
    let levels = solve_in_memory(rules, 12);
    let mut lower = Levels::new(6);
    for (n, values) in levels.iter().enumerate() {
        let n = n as u32;
        let stored = stats::count_stored(values);
        let all = stats::count_all(rules, n, values, &lower, &stored, None);
        assert_eq!(all, table[&n], "level {n}");
        lower.insert(n, values.clone());
    }
}

#[test]
fn published_positions_get_their_published_values() {
    let rules = Rules::default();
    let levels = solve_in_memory(rules, 18);
    let index = Index::for_pits(6);
    let value = |b: &Board| Score::new(levels[b.seeds() as usize][index.rank(b).unwrap() as usize]);

    // README of the 2024 Romein–Bal database publication: value 0, moves A..F
    // worth -1 -1 -2 -2 -2 0 (F captures 3).
    let b: Board = "1 1 1 1 1 2 / 4 2 3 0 0 0".parse().unwrap();
    assert_eq!(value(&b), Score::new(0));
    let move_values: Vec<i8> = rules
        .legal_moves(&b)
        .iter()
        .map(|m| m.value(value(&m.child)).get())
        .collect();
    assert_eq!(move_values, [-1, -1, -2, -2, -2, 0]);

    // Lincke, Fig. A.2: value -2; E captures 5 and is worth -2, F is worth -6.
    let b: Board = "0 0 6 0 3 5 / 2 1 1 0 0 0".parse().unwrap();
    assert_eq!(value(&b), Score::new(-2));
    let moves: Vec<(u8, u8, i8)> = rules
        .legal_moves(&b)
        .iter()
        .map(|m| (m.pit, m.captured, m.value(value(&m.child)).get()))
        .collect();
    assert_eq!(moves, [(4, 5, -2), (5, 0, -6)]);
}
