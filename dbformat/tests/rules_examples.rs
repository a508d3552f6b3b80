//! Example tests of the rules (issue 2), as tables of hand-checked cases taken
//! from `docs/rules.md`.
//!
//! Boards are written in pit order, the mover's row first (`A B C D E F / a b c
//! d e f`). An expected result is written as the board right after the move *as
//! the mover sees it*; the child a move returns is that board seen from the next
//! player: rows swapped (`Turn::Passes`), except after a grand slam under
//! `grand-slam-replay`, where the capturer moves again (`Turn::Stays`).
//!
//! Cross-Wari sows a pit of an odd count clockwise: a case whose sowing is
//! odd has a Cross-Wari twin of its own, counted by hand the other way round.

use awari_dbformat::{parse_pit, Board, Error, Move, RuleSet, Rules, Score, Turn};

use RuleSet::{
    Abapa, Awari, CrossWari as Cross, GrandSlamCaptures as Captures, GrandSlamReplay as Replay,
};

const ALL: &[RuleSet] = &RuleSet::ALL;
/// The rule sets that sow every pit counterclockwise (all but cross-wari).
const CCW: &[RuleSet] = &[Awari, Abapa, Captures, Replay];
/// The rule sets under which a grand slam is legal.
const SLAM_LEGAL: &[RuleSet] = &[Abapa, Captures, Replay, Cross];
/// The rule sets under which a grand slam captures nothing.
const SLAM_VOID: &[RuleSet] = &[Abapa, Cross];

/// The two published positions of docs/rules.md.
const FIG_README: &str = "1 1 1 1 1 2 / 4 2 3 0 0 0";
const FIG_LINCKE: &str = "0 0 6 0 3 5 / 2 1 1 0 0 0";

/// What playing a pit does.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// `Rules::play` refuses the move.
    Illegal,
    /// The move captures `captured` seeds and leaves `after` (seen from the mover);
    /// the turn passes.
    Passes { captured: u8, after: &'static str },
    /// As `Passes`, but the mover moves again (grand slam, `grand-slam-replay`).
    Stays { captured: u8, after: &'static str },
}

use Expect::{Illegal, Passes, Stays};

struct Case {
    what: &'static str,
    sets: &'static [RuleSet],
    board: &'static str,
    pit: char,
    expect: Expect,
}

const fn case(
    what: &'static str,
    sets: &'static [RuleSet],
    board: &'static str,
    pit: char,
    expect: Expect,
) -> Case {
    Case {
        what,
        sets,
        board,
        pit,
        expect,
    }
}

#[rustfmt::skip]
const MOVES: &[Case] = &[
    // docs/rules.md, README of the 2024 publication: every pit is legal, F captures 3.
    case("README A", CCW, FIG_README, 'A', Passes { captured: 0, after: "0 2 1 1 1 2 / 4 2 3 0 0 0" }),
    case("README B", CCW, FIG_README, 'B', Passes { captured: 0, after: "1 0 2 1 1 2 / 4 2 3 0 0 0" }),
    case("README C", CCW, FIG_README, 'C', Passes { captured: 0, after: "1 1 0 2 1 2 / 4 2 3 0 0 0" }),
    case("README D", CCW, FIG_README, 'D', Passes { captured: 0, after: "1 1 1 0 2 2 / 4 2 3 0 0 0" }),
    case("README E", CCW, FIG_README, 'E', Passes { captured: 0, after: "1 1 1 1 0 3 / 4 2 3 0 0 0" }),
    case("README F captures b only", ALL, FIG_README, 'F', Passes { captured: 3, after: "1 1 1 1 1 0 / 5 0 3 0 0 0" }),
    // Cross-wari: one seed goes clockwise, from A into the opponent's f.
    case("README A, clockwise into f", &[Cross], FIG_README, 'A', Passes { captured: 0, after: "0 1 1 1 1 2 / 4 2 3 0 0 1" }),
    case("README B, clockwise into A", &[Cross], FIG_README, 'B', Passes { captured: 0, after: "2 0 1 1 1 2 / 4 2 3 0 0 0" }),
    case("README E, clockwise into D", &[Cross], FIG_README, 'E', Passes { captured: 0, after: "1 1 1 2 0 2 / 4 2 3 0 0 0" }),

    // docs/rules.md, Lincke Fig. A.2: E captures 5, F nothing; C takes the whole row.
    case("Lincke E", CCW, FIG_LINCKE, 'E', Passes { captured: 5, after: "0 0 6 0 0 6 / 0 0 1 0 0 0" }),
    case("Lincke F", CCW, FIG_LINCKE, 'F', Passes { captured: 0, after: "0 0 6 0 3 0 / 3 2 2 1 1 0" }),
    case("Lincke E (3), clockwise: D, C, B", &[Cross], FIG_LINCKE, 'E', Passes { captured: 0, after: "0 1 7 1 0 5 / 2 1 1 0 0 0" }),
    case("Lincke F (5), clockwise: E to A", &[Cross], FIG_LINCKE, 'F', Passes { captured: 0, after: "1 1 7 1 4 0 / 2 1 1 0 0 0" }),
    case("Lincke C, grand slam forbidden", &[Awari], FIG_LINCKE, 'C', Illegal),
    case("Lincke C (6, counterclockwise), grand slam captures nothing", SLAM_VOID, FIG_LINCKE, 'C', Passes { captured: 0, after: "0 0 0 1 4 6 / 3 2 2 0 0 0" }),
    case("Lincke C, grand slam captures", &[Captures], FIG_LINCKE, 'C', Passes { captured: 7, after: "0 0 0 1 4 6 / 0 0 0 0 0 0" }),
    case("Lincke C, grand slam and move again", &[Replay], FIG_LINCKE, 'C', Stays { captured: 7, after: "0 0 0 1 4 6 / 0 0 0 0 0 0" }),

    // Long sowings skip the start pit, which is empty afterwards.
    case("11 seeds: one lap, ends in b, the pit before the start", CCW, "0 0 11 0 0 0 / 0 0 0 0 0 0", 'C', Passes { captured: 0, after: "1 1 0 1 1 1 / 1 1 1 1 1 1" }),
    case("11 seeds clockwise: one lap, ends in D, the pit after the start", &[Cross], "0 0 11 0 0 0 / 0 0 0 0 0 0", 'C', Passes { captured: 0, after: "1 1 0 1 1 1 / 1 1 1 1 1 1" }),
    case("11 seeds from A end in f and capture it", CCW, "11 0 0 0 0 0 / 0 0 0 0 0 1", 'A', Passes { captured: 2, after: "0 1 1 1 1 1 / 1 1 1 1 1 0" }),
    case("11 seeds from A clockwise end in B: f keeps its 2", &[Cross], "11 0 0 0 0 0 / 0 0 0 0 0 1", 'A', Passes { captured: 0, after: "0 1 1 1 1 1 / 1 1 1 1 1 2" }),
    case("12 seeds: a lap, skip A, end in B", ALL, "12 0 0 0 0 0 / 1 0 0 0 0 0", 'A', Passes { captured: 0, after: "0 2 1 1 1 1 / 2 1 1 1 1 1" }),
    case("12 seeds: a lap, skip F, end in a and capture it", ALL, "0 0 0 0 0 12 / 0 0 0 0 0 0", 'F', Passes { captured: 2, after: "1 1 1 1 1 0 / 0 1 1 1 1 1" }),
    case("22 seeds: two laps end in f; the chain stops at a (4)", ALL, "22 0 0 0 0 0 / 2 0 0 0 0 0", 'A', Passes { captured: 10, after: "0 2 2 2 2 2 / 4 0 0 0 0 0" }),
    case("23 seeds: two laps, skip A twice, end in B", CCW, "23 0 0 0 0 0 / 0 0 0 0 0 0", 'A', Passes { captured: 0, after: "0 3 2 2 2 2 / 2 2 2 2 2 2" }),
    case("23 seeds clockwise: two laps, skip A twice, f makes 3 and is taken", &[Cross], "23 0 0 0 0 0 / 0 0 0 0 0 0", 'A', Passes { captured: 3, after: "0 2 2 2 2 2 / 2 2 2 2 2 0" }),
    case("25 seeds: two laps, then a, b, c make 3 each", CCW, "0 0 0 0 0 25 / 0 0 0 0 0 0", 'F', Passes { captured: 9, after: "2 2 2 2 2 0 / 0 0 0 2 2 2" }),
    case("25 seeds clockwise: two laps, then E, D, C", &[Cross], "0 0 0 0 0 25 / 0 0 0 0 0 0", 'F', Passes { captured: 0, after: "2 2 3 3 3 0 / 2 2 2 2 2 2" }),
    case("33 seeds: exactly three laps, end in E", CCW, "0 0 0 0 0 33 / 0 0 0 0 0 0", 'F', Passes { captured: 0, after: "3 3 3 3 3 0 / 3 3 3 3 3 3" }),
    case("33 seeds clockwise: three laps end in a; the walk back to f is a grand slam, void", &[Cross], "0 0 0 0 0 33 / 0 0 0 0 0 0", 'F', Passes { captured: 0, after: "3 3 3 3 3 0 / 3 3 3 3 3 3" }),
    case("2 pits, 3 seeds: one lap ends in b", CCW, "3 0 / 0 1", 'A', Passes { captured: 2, after: "0 1 / 1 0" }),
    case("2 pits, 3 seeds clockwise: b, a, B", &[Cross], "3 0 / 0 1", 'A', Passes { captured: 0, after: "0 1 / 1 2" }),
    case("8 pits, 17 seeds: a lap, skip H, end in b", CCW, "0 0 0 0 0 0 0 17 / 0 0 0 0 0 0 0 0", 'H', Passes { captured: 4, after: "1 1 1 1 1 1 1 0 / 0 0 1 1 1 1 1 1" }),
    case("8 pits, 17 seeds clockwise: a lap, skip H, end in F", &[Cross], "0 0 0 0 0 0 0 17 / 0 0 0 0 0 0 0 0", 'H', Passes { captured: 0, after: "1 1 1 1 1 2 2 0 / 1 1 1 1 1 1 1 1" }),

    // Capture chains run backwards through the opponent's 2s and 3s and stop at
    // the first other pit, or at the mover's row.
    case("chain d, c stops at b (1); a (2) is not taken", ALL, "0 0 0 0 0 4 / 1 0 2 1 0 0", 'F', Passes { captured: 5, after: "0 0 0 0 0 0 / 2 1 0 0 0 0" }),
    case("chain c, b stops at a (4)", CCW, "0 0 0 0 0 3 / 3 1 1 0 0 0", 'F', Passes { captured: 4, after: "0 0 0 0 0 0 / 4 0 0 0 0 0" }),
    case("3 seeds clockwise from F stay in the mover's row", &[Cross], "0 0 0 0 0 3 / 3 1 1 0 0 0", 'F', Passes { captured: 0, after: "0 0 1 1 1 0 / 3 1 1 0 0 0" }),
    case("chain b, a stops at the mover's F (2)", CCW, "0 0 0 0 3 1 / 1 1 0 0 0 1", 'E', Passes { captured: 4, after: "0 0 0 0 0 2 / 0 0 0 0 0 1" }),
    case("3 seeds clockwise from E: D, C, B", &[Cross], "0 0 0 0 3 1 / 1 1 0 0 0 1", 'E', Passes { captured: 0, after: "0 1 1 1 0 1 / 1 1 0 0 0 1" }),
    // Cross-wari's clockwise chains walk back clockwise's way: e, then f.
    case("clockwise chain e, f stops at the mover's A; d (2) is not taken", &[Cross], "0 3 0 0 0 0 / 0 0 0 2 2 1", 'B', Passes { captured: 5, after: "1 0 0 0 0 0 / 0 0 0 2 0 0" }),
    case("clockwise chain e stops at f (4)", &[Cross], "0 0 0 5 0 0 / 0 0 0 0 1 3", 'D', Passes { captured: 2, after: "1 1 1 0 0 0 / 0 0 0 0 0 4" }),
    case("counterclockwise (4 seeds) under cross-wari, chain d, c", &[Cross], "0 0 0 0 0 4 / 1 0 2 1 0 0", 'F', Passes { captured: 5, after: "0 0 0 0 0 0 / 2 1 0 0 0 0" }),
    case("last seed in the mover's own B (2): no capture", ALL, "1 1 0 0 0 8 / 0 1 1 1 1 1", 'F', Passes { captured: 0, after: "2 2 0 0 0 0 / 1 2 2 2 2 2" }),

    // Grand slams under each rule set.
    case("only move is a grand slam: forced", &[Awari], "0 0 0 0 3 0 / 1 1 0 0 0 0", 'E', Passes { captured: 4, after: "0 0 0 0 0 1 / 0 0 0 0 0 0" }),
    case("only move is a grand slam", &[Abapa], "0 0 0 0 3 0 / 1 1 0 0 0 0", 'E', Passes { captured: 0, after: "0 0 0 0 0 1 / 2 2 0 0 0 0" }),
    case("only move is a grand slam", &[Captures], "0 0 0 0 3 0 / 1 1 0 0 0 0", 'E', Passes { captured: 4, after: "0 0 0 0 0 1 / 0 0 0 0 0 0" }),
    case("only move is a grand slam", &[Replay], "0 0 0 0 3 0 / 1 1 0 0 0 0", 'E', Stays { captured: 4, after: "0 0 0 0 0 1 / 0 0 0 0 0 0" }),
    case("grand slam while A is possible", &[Awari], "1 0 0 0 0 2 / 1 1 0 0 0 0", 'F', Illegal),
    case("grand slam while A is possible", SLAM_VOID, "1 0 0 0 0 2 / 1 1 0 0 0 0", 'F', Passes { captured: 0, after: "1 0 0 0 0 0 / 2 2 0 0 0 0" }),
    case("grand slam while A is possible", &[Captures], "1 0 0 0 0 2 / 1 1 0 0 0 0", 'F', Passes { captured: 4, after: "1 0 0 0 0 0 / 0 0 0 0 0 0" }),
    case("grand slam while A is possible", &[Replay], "1 0 0 0 0 2 / 1 1 0 0 0 0", 'F', Stays { captured: 4, after: "1 0 0 0 0 0 / 0 0 0 0 0 0" }),
    case("the alternative to the grand slam", CCW, "1 0 0 0 0 2 / 1 1 0 0 0 0", 'A', Passes { captured: 0, after: "0 1 0 0 0 2 / 1 1 0 0 0 0" }),
    case("the alternative to the grand slam, clockwise", &[Cross], "1 0 0 0 0 2 / 1 1 0 0 0 0", 'A', Passes { captured: 0, after: "0 0 0 0 0 2 / 1 1 0 0 0 1" }),
    case("a clockwise grand slam captures nothing", &[Cross], "1 0 0 0 0 0 / 0 0 0 0 0 1", 'A', Passes { captured: 0, after: "0 0 0 0 0 0 / 0 0 0 0 0 2" }),

    // An empty opponent row must be fed when a move can feed it.
    case("E does not feed while F does", CCW, "0 0 0 0 1 1 / 0 0 0 0 0 0", 'E', Illegal),
    case("F feeds a", CCW, "0 0 0 0 1 1 / 0 0 0 0 0 0", 'F', Passes { captured: 0, after: "0 0 0 0 1 0 / 1 0 0 0 0 0" }),
    case("no move feeds (clockwise, into D): E is played", &[Cross], "0 0 0 0 1 1 / 0 0 0 0 0 0", 'E', Passes { captured: 0, after: "0 0 0 1 0 1 / 0 0 0 0 0 0" }),
    case("F (1) does not feed while E (2) does", &[Cross], "0 0 0 0 2 1 / 0 0 0 0 0 0", 'F', Illegal),
    case("A (1) feeds f, clockwise", &[Cross], "1 0 0 0 0 2 / 0 0 0 0 0 0", 'A', Passes { captured: 0, after: "0 0 0 0 0 2 / 0 0 0 0 0 1" }),
    case("no move feeds: A is played", ALL, "2 1 0 0 0 0 / 0 0 0 0 0 0", 'A', Passes { captured: 0, after: "0 2 1 0 0 0 / 0 0 0 0 0 0" }),
    case("no move feeds: B is played", CCW, "2 1 0 0 0 0 / 0 0 0 0 0 0", 'B', Passes { captured: 0, after: "2 0 1 0 0 0 / 0 0 0 0 0 0" }),
    case("no move feeds: B is played, clockwise", &[Cross], "2 1 0 0 0 0 / 0 0 0 0 0 0", 'B', Passes { captured: 0, after: "3 0 0 0 0 0 / 0 0 0 0 0 0" }),
    // A feeds every opponent pit with 2 and then takes them all: a grand slam.
    case("feed-and-slam A beside non-feeding B", &[Awari], "22 1 0 0 0 0 / 0 0 0 0 0 0", 'A', Passes { captured: 12, after: "0 3 2 2 2 2 / 0 0 0 0 0 0" }),
    case("non-feeding B beside a grand slam", &[Awari], "22 1 0 0 0 0 / 0 0 0 0 0 0", 'B', Passes { captured: 0, after: "22 0 1 0 0 0 / 0 0 0 0 0 0" }),
    case("feed-and-slam A", SLAM_VOID, "22 1 0 0 0 0 / 0 0 0 0 0 0", 'A', Passes { captured: 0, after: "0 3 2 2 2 2 / 2 2 2 2 2 2" }),
    case("feed-and-slam A", &[Captures], "22 1 0 0 0 0 / 0 0 0 0 0 0", 'A', Passes { captured: 12, after: "0 3 2 2 2 2 / 0 0 0 0 0 0" }),
    case("feed-and-slam A", &[Replay], "22 1 0 0 0 0 / 0 0 0 0 0 0", 'A', Stays { captured: 12, after: "0 3 2 2 2 2 / 0 0 0 0 0 0" }),
    case("B does not feed while A does", SLAM_LEGAL, "22 1 0 0 0 0 / 0 0 0 0 0 0", 'B', Illegal),

    // A mover with an empty row has no move.
    case("empty mover row", ALL, "0 0 0 0 0 0 / 1 2 0 0 0 3", 'A', Illegal),
    case("empty mover row", ALL, "0 0 0 0 0 0 / 1 2 0 0 0 3", 'F', Illegal),
];

fn board(text: &str) -> Board {
    text.parse()
        .unwrap_or_else(|e| panic!("test board {text:?}: {e}"))
}

fn rules(set: RuleSet, board: &Board) -> Rules {
    Rules::new(set, board.per_side()).unwrap()
}

fn pit(letter: char, board: &Board) -> usize {
    parse_pit(&letter.to_string(), board.per_side()).unwrap()
}

#[test]
fn every_move_of_the_table() {
    for c in MOVES {
        let b = board(c.board);
        for &set in c.sets {
            let label = format!("{} [{set}: {} plays {}]", c.what, c.board, c.pit);
            let played = rules(set, &b).play(&b, pit(c.pit, &b));
            let (captured, after, turn) = match c.expect {
                Illegal => {
                    assert!(
                        matches!(played, Err(Error::IllegalMove { .. })),
                        "{label}: expected illegal, got {played:?}"
                    );
                    continue;
                }
                Passes { captured, after } => (captured, board(after), Turn::Passes),
                Stays { captured, after } => (captured, board(after), Turn::Stays),
            };
            let m = played.unwrap_or_else(|e| panic!("{label}: {e}"));
            let child = match turn {
                Turn::Passes => after.swapped(),
                Turn::Stays => after,
            };
            assert_eq!(m.pit as usize, pit(c.pit, &b), "{label}");
            assert_eq!(m.captured, captured, "{label}: captured");
            assert_eq!(m.turn, turn, "{label}: turn");
            assert_eq!(m.child, child, "{label}: child");
            assert_eq!(
                b.seeds(),
                after.seeds() + u32::from(captured),
                "{label}: the case loses seeds"
            );
            assert_eq!(
                after.pit(m.pit as usize),
                0,
                "{label}: the start pit is not empty"
            );
        }
    }
}

/// The legal moves of a position, as the letters of their pits.
#[rustfmt::skip]
const LEGAL: &[(&str, &[RuleSet], &str)] = &[
    (FIG_README, ALL, "ABCDEF"),
    (FIG_LINCKE, &[Awari], "EF"),
    (FIG_LINCKE, SLAM_LEGAL, "CEF"),
    // After Lincke's C under grand-slam-replay the capturer moves again and must
    // feed: D (one seed into E) does not.
    ("0 0 0 1 4 6 / 0 0 0 0 0 0", &[Replay], "EF"),
    ("0 0 0 0 3 0 / 1 1 0 0 0 0", ALL, "E"),
    ("1 0 0 0 0 2 / 1 1 0 0 0 0", &[Awari], "A"),
    ("1 0 0 0 0 2 / 1 1 0 0 0 0", SLAM_LEGAL, "AF"),
    ("0 0 0 0 1 1 / 0 0 0 0 0 0", CCW, "F"),
    // Cross-wari: E and F both sow one seed clockwise, into their own row.
    ("0 0 0 0 1 1 / 0 0 0 0 0 0", &[Cross], "EF"),
    ("0 0 0 0 2 1 / 0 0 0 0 0 0", &[Cross], "E"),
    ("1 0 0 0 0 2 / 0 0 0 0 0 0", CCW, "F"),
    ("1 0 0 0 0 2 / 0 0 0 0 0 0", &[Cross], "AF"),
    ("2 1 0 0 0 0 / 0 0 0 0 0 0", ALL, "AB"),
    ("22 1 0 0 0 0 / 0 0 0 0 0 0", &[Awari], "AB"),
    ("22 1 0 0 0 0 / 0 0 0 0 0 0", SLAM_LEGAL, "A"),
    ("0 0 0 0 0 0 / 1 2 0 0 0 3", ALL, ""),
    ("0 0 0 0 0 0 / 0 0 0 0 0 0", ALL, ""),
];

#[test]
fn legal_move_sets() {
    for &(text, sets, want) in LEGAL {
        let b = board(text);
        for &set in sets {
            let rules = rules(set, &b);
            let got: String = rules.legal_moves(&b).iter().map(Move::label).collect();
            assert_eq!(got, want, "{set}: legal moves of {text}");
            // `play` accepts exactly these pits.
            for p in 0..usize::from(b.per_side()) {
                let legal = want.contains(awari_dbformat::pit_label(p, b.per_side().into()));
                assert_eq!(rules.play(&b, p).is_ok(), legal, "{set}: {text} pit {p}");
            }
        }
    }
}

/// The value of `board` when the game ends within `plies` moves whatever is
/// played, else `None` (a plain negamax; only for tiny endings).
fn value_within(rules: Rules, board: &Board, plies: u32) -> Option<i8> {
    if let Some(v) = rules.terminal_value(board) {
        return Some(v.get());
    }
    if plies == 0 {
        return None;
    }
    let mut best = None;
    for m in rules.legal_moves(board).iter() {
        let child = value_within(rules, &m.child, plies - 1)?;
        let v = m.value(Score::new(child)).get();
        best = best.max(Some(v));
    }
    best
}

/// Moves after which the game ends within a few plies, with the value of the move
/// for the mover (captured seeds plus what the ending gives).
#[rustfmt::skip]
const ENDINGS: &[(&str, &str, &[RuleSet], char, i8)] = &[
    // No move feeds the empty row: the move is played, the opponent cannot move,
    // and the mover takes the 3 seeds.
    ("no move feeds", "2 1 0 0 0 0 / 0 0 0 0 0 0", CCW, 'A', 3),
    ("no move feeds", "2 1 0 0 0 0 / 0 0 0 0 0 0", CCW, 'B', 3),
    // Cross-wari: the game ends the same way, and the 3 seeds go to no one.
    ("no move feeds, nobody takes the rest", "2 1 0 0 0 0 / 0 0 0 0 0 0", &[Cross], 'A', 0),
    ("no move feeds, nobody takes the rest", "2 1 0 0 0 0 / 0 0 0 0 0 0", &[Cross], 'B', 0),
    ("no move feeds, nobody takes the rest", "0 0 0 0 1 1 / 0 0 0 0 0 0", &[Cross], 'F', 0),
    // Cross-wari: A takes f (2) clockwise; the opponent's E cannot feed: 2 + 0.
    ("a capture, then no move feeds", "1 0 0 0 0 0 / 0 0 0 0 1 1", &[Cross], 'A', 2),
    // Lincke's C under grand-slam-captures: 7 captured and the 11 left: all 18.
    ("Lincke C", FIG_LINCKE, &[Captures], 'C', 18),
    // A forced grand slam captures 4 and the mover takes the seed left.
    ("forced grand slam", "0 0 0 0 3 0 / 1 1 0 0 0 0", &[Awari, Captures], 'E', 5),
    // grand-slam-replay: the capturer must feed with F; the opponent then keeps it.
    ("grand slam, replay feeds", "0 0 0 0 3 0 / 1 1 0 0 0 0", &[Replay], 'E', 3),
    // grand-slam-replay: the capturer cannot feed, the game ends, it takes its A.
    ("grand slam, replay cannot feed", "1 0 0 0 0 2 / 1 1 0 0 0 0", &[Captures, Replay], 'F', 5),
    // Awari, both moves starve the opponent: both give the mover all 23 seeds.
    ("two starving moves", "22 1 0 0 0 0 / 0 0 0 0 0 0", &[Awari], 'A', 23),
    ("two starving moves", "22 1 0 0 0 0 / 0 0 0 0 0 0", &[Awari], 'B', 23),
];

#[test]
fn forced_endings_give_the_remaining_seeds() {
    for &(what, text, sets, letter, want) in ENDINGS {
        let b = board(text);
        for &set in sets {
            let rules = rules(set, &b);
            let m = rules.play(&b, pit(letter, &b)).unwrap();
            let child = value_within(rules, &m.child, 3)
                .unwrap_or_else(|| panic!("{what} [{set}]: the game does not end"));
            assert_eq!(
                m.value(Score::new(child)).get(),
                want,
                "{what} [{set}]: {text} plays {letter}"
            );
        }
    }
}

#[test]
fn a_mover_with_an_empty_row_loses_the_rest() {
    for set in RuleSet::ALL {
        let b = board("0 0 0 0 0 0 / 1 2 0 0 0 3");
        let rules = rules(set, &b);
        assert!(rules.legal_moves(&b).is_empty(), "{set}");
        // Under cross-wari the 6 seeds go to no one: the game's end is worth 0.
        let rest = if set == Cross { 0 } else { -6 };
        assert_eq!(rules.terminal_value(&b), Some(Score::new(rest)), "{set}");
        assert_eq!(rules.terminal_value(&board(FIG_README)), None, "{set}");
        // The empty board: nothing left to take.
        let empty = board("0 0 0 0 0 0 / 0 0 0 0 0 0");
        assert_eq!(rules.terminal_value(&empty), Some(Score::new(0)), "{set}");
    }
}

/// The child is literally the board seen from the next mover.
#[test]
fn children_are_seen_from_the_next_mover() {
    let b = board(FIG_README);
    let f = Rules::default().play(&b, 5).unwrap();
    assert_eq!(f.child, board("5 0 3 0 0 0 / 1 1 1 1 1 0"));
    let b = board(FIG_LINCKE);
    let c = Rules::new(Replay, 6).unwrap().play(&b, 2).unwrap();
    assert_eq!(c.child, board("0 0 0 1 4 6 / 0 0 0 0 0 0"));
    assert_eq!(
        c.value(Score::new(-3)),
        Score::new(4),
        "turn stays: 7 + (-3)"
    );
    assert_eq!(
        f.value(Score::new(-3)),
        Score::new(6),
        "turn passes: 3 - (-3)"
    );
}

/// An illegal move says why.
#[test]
fn illegal_moves_say_why() {
    #[rustfmt::skip]
    let cases: &[(RuleSet, &str, usize, &str)] = &[
        (Awari, FIG_LINCKE, 2, "leave the opponent without seeds"),
        (Abapa, "0 0 0 0 1 1 / 0 0 0 0 0 0", 4, "another move would feed it"),
        (Awari, FIG_LINCKE, 0, "the pit is empty"),
        (Awari, FIG_LINCKE, 6, "not a pit of the mover's row"),
    ];
    for &(set, text, p, needle) in cases {
        let b = board(text);
        let err = rules(set, &b).play(&b, p).unwrap_err().to_string();
        assert!(err.contains(needle), "{set} {text} pit {p}: {err}");
        assert!(err.contains(&b.to_notation()), "{err} names the board");
    }
}
