//! Property tests of the game model (issue 2): the index is a bijection in the
//! order of docs/rules.md, the level iterator agrees with it, moves conserve seeds and
//! agree with a plain transcription of docs/rules.md, and un-moves are exactly the
//! parents of a board.
//!
//! Random boards have P = 2..=8 pits per side and a small total (at most 30
//! seeds), occasionally up to 48 on the 6-pit board. Seeds are spread unevenly so
//! that long sowings (whole laps) and capture chains both occur.

use std::collections::{HashMap, HashSet};

use awari_dbformat::{
    with_pits, Board, Index, Move, MoveList, RuleSet, Rules, Turn, MAX_PITS, MIN_PITS,
};
use proptest::collection::vec;
use proptest::prelude::*;

// ---------------------------------------------------------------- strategies

/// Seeds for one pit: often empty or small, sometimes a long sowing.
fn pit_seeds() -> impl Strategy<Value = u8> {
    prop_oneof![
        3 => Just(0u8),
        4 => 1u8..=3,
        2 => 4u8..=12,
        1 => 13u8..=30,
    ]
}

/// A board with `pits` pits per side (a range) and at most `max_total` seeds.
/// The total is capped by walking the pits from a random one, so no pit is
/// favoured.
fn board_with(pits: std::ops::RangeInclusive<u8>, max_total: u32) -> BoxedStrategy<Board> {
    pits.prop_flat_map(move |p| {
        let n = 2 * usize::from(p);
        (vec(pit_seeds(), n), 0..n)
    })
    .prop_map(move |(mut counts, first)| {
        let n = counts.len();
        let mut budget = max_total;
        for k in 0..n {
            let c = &mut counts[(first + k) % n];
            *c = (*c).min(budget as u8);
            budget -= u32::from(*c);
        }
        Board::new(&counts).expect("a valid board")
    })
    .boxed()
}

/// The random boards of the move properties.
fn boards() -> BoxedStrategy<Board> {
    prop_oneof![
        9 => board_with(MIN_PITS..=MAX_PITS, 30),
        1 => board_with(6..=6, 48),
    ]
    .boxed()
}

fn rule_sets() -> impl Strategy<Value = RuleSet> {
    prop::sample::select(RuleSet::ALL.to_vec())
}

/// A level of the `pits`-pit index and an index in it, often at the ends.
fn level_and_index(pits: u8, max_seeds: u32) -> impl Strategy<Value = (u32, u64)> {
    (0..=max_seeds).prop_flat_map(move |n| {
        let size = Index::for_pits(pits).level_size(n);
        let i = prop_oneof![6 => 0..size, 1 => Just(0), 1 => Just(size - 1)];
        (Just(n), i)
    })
}

fn rules_for(set: RuleSet, board: &Board) -> Rules {
    Rules::new(set, board.per_side()).expect("supported board size")
}

/// The index order of docs/rules.md as a sort key: (pit 2P-1, pit 2P-2, ..., pit 0).
fn order_key(board: &Board) -> Vec<u8> {
    board.pits().iter().rev().copied().collect()
}

// ------------------------------------------------- docs/rules.md, written plainly

/// What docs/rules.md says a move does, seed by seed, without shortcuts: `None` for
/// an empty pit, else `(child, captured, turn, restricted)` where `restricted`
/// says the rule set allows the move only if every move is restricted.
fn reference_move(set: RuleSet, board: &Board, pit: usize) -> Option<(Board, u8, Turn, bool)> {
    let p = usize::from(board.per_side());
    let n = 2 * p;
    let mut sown = board.pits().to_vec();
    let mut hand = sown[pit];
    if hand == 0 {
        return None;
    }
    sown[pit] = 0;
    // Cross-wari sows an odd count clockwise: one step is then - 1.
    let clockwise = set == RuleSet::CrossWari && hand % 2 == 1;
    let next = |k: usize| {
        if clockwise {
            (k + n - 1) % n
        } else {
            (k + 1) % n
        }
    };
    let back = |k: usize| {
        if clockwise {
            (k + 1) % n
        } else {
            (k + n - 1) % n
        }
    };
    let mut last = pit;
    while hand > 0 {
        last = next(last);
        if last != pit {
            sown[last] += 1;
            hand -= 1;
        }
    }
    // The capture walks back along the sowing's path from the last pit.
    let mut after = sown.clone();
    let mut captured = 0;
    let mut k = last;
    while k >= p && (after[k] == 2 || after[k] == 3) {
        captured += after[k];
        after[k] = 0;
        k = back(k);
    }
    let empty = |row: &[u8]| row.iter().all(|&s| s == 0);
    let leaves_opponent_empty = empty(&after[p..]);
    let grand_slam = captured > 0 && leaves_opponent_empty;
    let does_not_feed = empty(&sown[p..]);
    let board_of = |pits: &[u8]| Board::new(pits).unwrap();
    let (played, captured, turn, restricted) = match set {
        RuleSet::Awari => (after, captured, Turn::Passes, leaves_opponent_empty),
        RuleSet::Abapa | RuleSet::CrossWari if grand_slam => (sown, 0, Turn::Passes, false),
        RuleSet::Abapa | RuleSet::CrossWari | RuleSet::GrandSlamCaptures => {
            (after, captured, Turn::Passes, does_not_feed)
        }
        RuleSet::GrandSlamReplay if grand_slam => (after, captured, Turn::Stays, false),
        RuleSet::GrandSlamReplay => (after, captured, Turn::Passes, does_not_feed),
    };
    let played = board_of(&played);
    let child = match turn {
        Turn::Passes => played.swapped(),
        Turn::Stays => played,
    };
    Some((child, captured, turn, restricted))
}

/// The legal moves by docs/rules.md: restricted moves only when every move is.
fn reference_moves(set: RuleSet, board: &Board) -> Vec<Move> {
    let all: Vec<_> = (0..usize::from(board.per_side()))
        .filter_map(|pit| reference_move(set, board, pit).map(|m| (pit, m)))
        .collect();
    let any_free = all.iter().any(|(_, m)| !m.3);
    all.into_iter()
        .filter(|(_, m)| !m.3 || !any_free)
        .map(|(pit, (child, captured, turn, _))| Move {
            pit: pit as u8,
            captured,
            child,
            turn,
        })
        .collect()
}

// ------------------------------------------------------------------ the index

proptest! {
    /// rank(unrank(i)) == i on the 6-pit board, every level 0..=48; unrank gives a
    /// stored 6-pit board with the level's seed count.
    #[test]
    fn rank_inverts_unrank_for_six_pits((n, i) in level_and_index(6, 48)) {
        let ix = Index::for_pits(6);
        let b = ix.unrank(n, i).unwrap();
        prop_assert_eq!(b.per_side(), 6);
        prop_assert_eq!(b.seeds(), n);
        prop_assert!(b.is_stored(), "{:?} has a full opponent row", b);
        prop_assert_eq!(ix.rank(&b), Some(i));
    }

    /// The same for the other board sizes at smaller levels.
    #[test]
    fn rank_inverts_unrank_for_other_sizes(
        (p, n, i) in (MIN_PITS..=MAX_PITS)
            .prop_flat_map(|p| level_and_index(p, 30).prop_map(move |(n, i)| (p, n, i)))
    ) {
        let ix = Index::for_pits(p);
        let b = ix.unrank(n, i).unwrap();
        prop_assert_eq!(b.per_side(), p);
        prop_assert_eq!(b.seeds(), n);
        prop_assert!(b.is_stored());
        prop_assert_eq!(ix.rank(&b), Some(i));
    }

    /// The numbering is the order of docs/rules.md: lexicographic on (pit 2P-1, ..., pit 0).
    #[test]
    fn index_order_is_the_order_of_the_spec(
        (n, i) in level_and_index(6, 48),
        j in any::<u64>(),
    ) {
        let ix = Index::for_pits(6);
        let j = j % ix.level_size(n);
        let (a, b) = (ix.unrank(n, i).unwrap(), ix.unrank(n, j).unwrap());
        prop_assert_eq!(i.cmp(&j), order_key(&a).cmp(&order_key(&b)), "{:?} {:?}", a, b);
    }

    /// A random board ranks iff it is stored, and unranks back to itself.
    #[test]
    fn random_boards_rank_iff_stored(b in boards()) {
        let ix = Index::for_pits(b.per_side());
        match ix.rank(&b) {
            Some(i) => {
                prop_assert!(b.is_stored());
                prop_assert!(i < ix.level_size(b.seeds()));
                prop_assert_eq!(ix.unrank(b.seeds(), i).unwrap(), b);
            }
            None => prop_assert!(!b.is_stored(), "{:?} is stored but has no rank", b),
        }
    }

    /// The ranking of the solver's hot loops, for one board size, agrees with
    /// the general one on random boards, stored or not.
    #[test]
    fn sized_rank_matches_rank(b in boards()) {
        let ix = Index::for_pits(b.per_side());
        let sized = with_pits!(b.per_side(), P => ix.rank_sized::<P>(&b));
        prop_assert_eq!(sized, ix.rank(&b), "{:?}", b);
    }

    /// The level iterator from a random start walks the boards unrank gives, in
    /// order, and stops exactly at the end of the level.
    #[test]
    fn iterator_from_a_random_start_matches_unrank((n, start) in level_and_index(6, 48)) {
        let ix = Index::for_pits(6);
        let size = ix.level_size(n);
        let mut visited = 0u64;
        let mut previous: Option<Board> = None;
        for (k, b) in ix.boards_from(n, start).take(200).enumerate() {
            let i = start + k as u64;
            prop_assert_eq!(b, ix.unrank(n, i).unwrap(), "index {} of level {}", i, n);
            if let Some(prev) = previous {
                prop_assert!(order_key(&prev) < order_key(&b));
            }
            previous = Some(b);
            visited += 1;
        }
        prop_assert_eq!(visited, (size - start).min(200));
        // Near the end the iterator yields exactly what is left.
        let tail = size.saturating_sub(37);
        prop_assert_eq!(ix.boards_from(n, tail).count() as u64, size - tail);
    }
}

/// The full iterator of every small level (at most 100,000 boards) of every board
/// size visits exactly `level_size` boards, each stored, with the level's seeds,
/// in strictly increasing spec order, and the k-th has rank k.
#[test]
fn full_iterator_visits_each_small_level_exactly_once() {
    for p in MIN_PITS..=MAX_PITS {
        let ix = Index::for_pits(p);
        for n in (0..=48).take_while(|&n| ix.level_size(n) <= 100_000) {
            let mut count = 0u64;
            let mut previous: Option<Vec<u8>> = None;
            for b in ix.boards(n) {
                assert!(b.is_stored() && b.seeds() == n, "P={p} n={n}: {b:?}");
                assert_eq!(ix.rank(&b), Some(count), "P={p} n={n}: {b:?}");
                let key = order_key(&b);
                if let Some(prev) = &previous {
                    assert!(*prev < key, "P={p} n={n}: {b:?} out of order");
                }
                previous = Some(key);
                count += 1;
            }
            assert_eq!(count, ix.level_size(n), "P={p} n={n}");
            assert_eq!(ix.boards(n).size_hint().0 as u64, ix.level_size(n));
        }
    }
}

// ------------------------------------------------------------------ the moves

proptest! {
    /// Legal moves are exactly those of the plain transcription of docs/rules.md (same
    /// pits, captures, children and turns), and `play` agrees with `legal_moves`.
    #[test]
    fn moves_follow_the_rules_as_written(set in rule_sets(), b in boards()) {
        let rules = rules_for(set, &b);
        let got: Vec<Move> = rules.legal_moves(&b).iter().copied().collect();
        prop_assert_eq!(&got, &reference_moves(set, &b), "{} on {:?}", set, b);
        for pit in 0..usize::from(b.per_side()) {
            match got.iter().find(|m| usize::from(m.pit) == pit) {
                Some(m) => prop_assert_eq!(rules.play(&b, pit).unwrap(), *m),
                None => prop_assert!(rules.play(&b, pit).is_err(), "{} {:?} pit {}", set, b, pit),
            }
        }
        prop_assert!(rules.play(&b, usize::from(b.per_side())).is_err());
    }

    /// `quiet_child` gives exactly the children of the legal quiet moves.
    #[test]
    fn quiet_child_matches_legal_moves(set in rule_sets(), b in boards()) {
        let rules = rules_for(set, &b);
        let moves = rules.legal_moves(&b);
        for pit in 0..=usize::from(b.per_side()) {
            let expected = moves.get(pit).filter(|m| m.is_quiet()).map(|m| m.child);
            prop_assert_eq!(rules.quiet_child(&b, pit), expected, "{} {:?} pit {}", set, b, pit);
        }
    }

    /// The solver's shortcut (quiet moves counted without sowing) agrees with
    /// counting and filtering the legal moves.
    #[test]
    fn quiet_count_and_captures_match_legal_moves(set in rule_sets(), b in boards()) {
        let rules = rules_for(set, &b);
        let moves = rules.legal_moves(&b);
        // A list that held other moves before: they must all be replaced.
        let full = Board::new(&vec![4; 2 * usize::from(b.per_side())]).unwrap();
        let mut captures = rules.legal_moves(&full);
        let quiet = rules.quiet_moves_and_captures(&b, &mut captures);
        prop_assert_eq!(quiet as usize, moves.iter().filter(|m| m.is_quiet()).count());
        let expected: Vec<Move> = moves.iter().filter(|m| !m.is_quiet()).copied().collect();
        let got: Vec<Move> = captures.iter().copied().collect();
        prop_assert_eq!(got, expected);
    }

    /// The pits of the quiet moves, found without sowing, and their children,
    /// sown without looking for captures, are those of the legal moves.
    #[test]
    fn quiet_pits_and_children_match_legal_moves(set in rule_sets(), b in boards()) {
        let rules = rules_for(set, &b);
        let moves = rules.legal_moves(&b);
        let mut captures = MoveList::new();
        let quiet = with_pits!(b.per_side(), P => rules.quiet_pits_and_captures_sized::<P>(&b, &mut captures));
        let expected: u32 = moves.iter().filter(|m| m.is_quiet()).map(|m| 1 << m.pit).sum();
        prop_assert_eq!(quiet, expected, "{} {:?}", set, b);
        for m in moves.iter().filter(|m| m.is_quiet()) {
            prop_assert_eq!(rules.known_quiet_child(&b, usize::from(m.pit)), m.child);
        }
        let got: Vec<Move> = captures.iter().copied().collect();
        let expected: Vec<Move> = moves.iter().filter(|m| !m.is_quiet()).copied().collect();
        prop_assert_eq!(got, expected);
    }

    /// Every legal move conserves seeds, empties its start pit, keeps the board
    /// size, and the mover has a move iff its row has a seed.
    #[test]
    fn playing_a_move_conserves_seeds(set in rule_sets(), b in boards()) {
        let rules = rules_for(set, &b);
        let moves = rules.legal_moves(&b);
        prop_assert_eq!(moves.is_empty(), b.mover_row_empty(), "{:?}", b);
        prop_assert_eq!(rules.terminal_value(&b).is_some(), b.mover_row_empty());
        for m in moves.iter() {
            prop_assert_eq!(m.child.seeds() + u32::from(m.captured), b.seeds(), "{} {:?} {:?}", set, b, m);
            prop_assert_eq!(m.child.per_side(), b.per_side());
            // The start pit, seen from the player who just moved, is empty.
            let mover_view = match m.turn {
                Turn::Passes => m.child.swapped(),
                Turn::Stays => m.child,
            };
            prop_assert_eq!(mover_view.pit(usize::from(m.pit)), 0);
            if m.turn == Turn::Passes {
                prop_assert!(m.child.is_stored(), "a child is always stored: {:?}", m);
            }
            prop_assert!(m.turn == Turn::Passes || set == RuleSet::GrandSlamReplay);
        }
    }

    /// Each legal non-capturing move's child lists (parent, pit) among its
    /// un-moves, and every un-move of that child replays to it.
    #[test]
    fn quiet_moves_are_found_by_unmoves(set in rule_sets(), b in boards()) {
        let rules = rules_for(set, &b);
        for m in rules.legal_moves(&b).iter().filter(|m| m.captured == 0) {
            prop_assert_eq!(m.turn, Turn::Passes);
            let parents = rules.unmoves(&m.child);
            prop_assert!(
                parents.contains(&(b, usize::from(m.pit))),
                "{}: {:?} pit {} -> {:?}, but unmoves gave {:?}", set, b, m.pit, m.child, parents
            );
            check_unmoves_replay(rules, &m.child)?;
        }
    }

    /// Every un-move of a random board replays to it without capture.
    #[test]
    fn unmoves_of_random_boards_replay(set in rule_sets(), b in boards()) {
        check_unmoves_replay(rules_for(set, &b), &b)?;
    }
}

/// Every (parent, pit) of `rules.unmoves(child)` is distinct, has the child's
/// seeds, and `rules.play(parent, pit)` is legal, captures nothing, passes the
/// turn and gives `child`.
fn check_unmoves_replay(rules: Rules, child: &Board) -> Result<(), TestCaseError> {
    let parents = rules.unmoves(child);
    let distinct: HashSet<_> = parents.iter().collect();
    prop_assert_eq!(
        distinct.len(),
        parents.len(),
        "duplicate un-moves of {:?}",
        child
    );
    for (parent, pit) in parents {
        prop_assert_eq!(parent.seeds(), child.seeds());
        let m = rules.play(&parent, pit);
        prop_assert!(
            m.is_ok(),
            "{}: un-move {:?} pit {} of {:?} is illegal: {:?}",
            rules,
            parent,
            pit,
            child,
            m
        );
        let m = m.unwrap();
        prop_assert_eq!(m.captured, 0);
        prop_assert_eq!(m.turn, Turn::Passes);
        prop_assert_eq!(
            m.child,
            *child,
            "{}: un-move {:?} pit {}",
            rules,
            parent,
            pit
        );
    }
    Ok(())
}

/// In small levels, for every rule set, the un-moves of each stored board are
/// exactly the quiet legal moves leading to it, found by playing every board of
/// the level (stored or not) forward.
#[test]
fn unmoves_are_exactly_the_quiet_parents_in_small_levels() {
    for (p, max_seeds) in [(2u8, 12u32), (3, 9), (4, 7), (6, 5)] {
        let ix = Index::for_pits(p);
        for set in RuleSet::ALL {
            let rules = Rules::new(set, p).unwrap();
            for n in 0..=max_seeds {
                let mut parents: HashMap<Board, HashSet<(Board, usize)>> = HashMap::new();
                for b in ix.boards(n).chain(ix.unstored_boards(n)) {
                    for m in rules.legal_moves(&b).iter().filter(|m| m.captured == 0) {
                        parents
                            .entry(m.child)
                            .or_default()
                            .insert((b, usize::from(m.pit)));
                    }
                }
                for b in ix.boards(n) {
                    let got: HashSet<_> = rules.unmoves(&b).into_iter().collect();
                    let want = parents.remove(&b).unwrap_or_default();
                    assert_eq!(got, want, "{rules}: un-moves of {b:?}");
                }
                assert!(
                    parents.is_empty(),
                    "children that are not stored: {parents:?}"
                );
            }
        }
    }
}

proptest! {
    /// The notation a board prints reads back as the same board.
    #[test]
    fn notation_round_trips(b in boards()) {
        prop_assert_eq!(b.to_notation().parse::<Board>().unwrap(), b);
        prop_assert_eq!(b.to_string().parse::<Board>().unwrap(), b);
    }
}
