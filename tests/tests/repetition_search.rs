//! End-to-end: the bounds of `--repetition any` (issue 48) against an
//! independent computation from the rules alone.
//!
//! A forward search plays out the histories from each stored board of the
//! small levels, under rules that end the game at the first repetition of a
//! position (the same board, the same player to move) since the root:
//!
//! - [`Ending::OwnRows`] (OpenSpiel's `oware`): each player takes the seeds
//!   on its own side of the board;
//! - [`Ending::Deadlock`] (the Wari rules): the seeds are shared equally, an
//!   odd seed to the player who has captured more since the root (to nobody
//!   on a tie);
//! - [`Ending::AllToOpponent`] and [`Ending::AllToMover`]: every seed on the
//!   board to the root's opponent, or to the root's mover: the games the
//!   bounds describe (the side that needs a finite end gets nothing from a
//!   repetition), whose values must be `lower` and `upper` exactly.
//!
//! Only the game model of `awari-dbformat` is trusted (legal moves, captures,
//! the turn, the end of a game); nothing of the solver's. The level files are
//! built by the `awari-solve` binary (even-split and `--repetition any`, into
//! one directory) and read back with the file reader. For every rule set, on
//! every stored board of up to 5 seeds on 3 and 4 pits per side and up to 4
//! on 6 ([`SIZES`]): the values under the all-to-one endings are `lower` and
//! `upper`; those under own rows and deadlock lie within them, equal where
//! they meet; the even-split score lies within them too; and the files hold
//! what a naive computation of the bounds' definition gives ([`fixpoint`]).
//!
//! The search ([`histories::Search`]) is an alpha-beta search over
//! histories, exact: a window only prunes what cannot change the answer to
//! the question asked (is the value at least k, at most k, or what is it
//! within a range), and the questions are the files' claims, so a wrong
//! bound shows as an answer outside them. Two tables, both exact, keep it
//! affordable (see [`histories::Search`]); a test checks that they change no
//! value against the search that plays every history out move by move. A
//! root whose question needs more than [`BUDGET`] positions is skipped and
//! counted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use awari_dbformat::file::{self, LevelId, LevelReader, Stored};
use awari_dbformat::{Board, Bound, Bounds, Index, Move, RuleSet, Rules, Score, Turn};
use awari_tests::{ok_stdout, run, scratch};

/// The forward search over histories.
mod histories {
    use super::*;

    /// How a game ends at the first repetition of a position since the root.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Ending {
        /// Each player takes the seeds on its own side (OpenSpiel's `oware`).
        OwnRows,
        /// The seeds are shared equally, an odd seed to the player who has
        /// captured more since the root, to nobody on a tie.
        Deadlock,
        /// Every seed on the board to the root's opponent.
        AllToOpponent,
        /// Every seed on the board to the root's mover.
        AllToMover,
    }

    impl Ending {
        /// All four.
        pub const ALL: [Ending; 4] = [
            Ending::OwnRows,
            Ending::Deadlock,
            Ending::AllToOpponent,
            Ending::AllToMover,
        ];

        /// What the end depends on besides the board, for the root's mover:
        /// the captures' lead (0 at the root) for `Deadlock`; for the
        /// all-to-one endings +1 when the seeds go to the mover, else -1.
        fn root_context(self) -> i8 {
            match self {
                Ending::OwnRows | Ending::Deadlock => 0,
                Ending::AllToOpponent => -1,
                Ending::AllToMover => 1,
            }
        }

        /// The context of a move's child, for the child's mover, from the
        /// context of its parent: the lead grows by the capture and, like
        /// the beneficiary, is seen from the other side when the turn passes.
        fn child_context(self, context: i8, captured: u8, turn: Turn) -> i8 {
            let own = match self {
                Ending::OwnRows => return 0,
                Ending::Deadlock => context.saturating_add(captured as i8),
                Ending::AllToOpponent | Ending::AllToMover => context,
            };
            match turn {
                Turn::Passes => -own,
                Turn::Stays => own,
            }
        }

        /// The rest of the game for the mover of `board` when the game ends
        /// on it by repetition, with `context` as in [`Ending::root_context`].
        fn at_repetition(self, board: &Board, context: i8) -> i32 {
            let seeds = board.seeds() as i32;
            match self {
                Ending::OwnRows => row_seeds(board.mover_row()) - row_seeds(board.opponent_row()),
                Ending::Deadlock => (seeds % 2) * i32::from(context.signum()),
                Ending::AllToOpponent | Ending::AllToMover => i32::from(context) * seeds,
            }
        }

        /// The context a fresh game's value is remembered by: a lead beyond
        /// the seeds left decides the leader whatever happens, so it is cut
        /// to one more than them.
        fn memo_context(self, board: &Board, context: i8) -> i8 {
            match self {
                Ending::Deadlock => {
                    let limit = board.seeds() as i8 + 1;
                    context.clamp(-limit, limit)
                }
                _ => context,
            }
        }
    }

    fn row_seeds(row: &[u8]) -> i32 {
        row.iter().map(|&s| i32::from(s)).sum()
    }

    /// A search's node budget ran out.
    #[derive(Debug)]
    pub struct OverBudget;

    /// A set of the positions of one level, a bit each (`2 * rank + side`).
    type Positions = Vec<u64>;

    fn disjoint(a: &Positions, b: &Positions) -> bool {
        a.iter().zip(b).all(|(x, y)| x & y == 0)
    }

    fn add_all(to: &mut Positions, from: &Positions) {
        for (x, y) in to.iter_mut().zip(from) {
            *x |= y;
        }
    }

    /// What the search of a position within a level found.
    struct Searched {
        /// Fail-soft, for the window searched.
        value: i32,
        /// The depth of the shallowest earlier position that a repetition
        /// in the search met (`u32::MAX`: none).
        hit: u32,
        /// The positions of the level whose presence in the history the
        /// search asked about: the answer holds after any history that
        /// holds none of them and none of what the search met.
        asked: Positions,
    }

    /// A search of a position within a level whose answer held no matter
    /// the history before it, as long as that history held none of the
    /// positions it asked about.
    struct Entry {
        alpha: i32,
        beta: i32,
        value: i32,
        asked: Positions,
    }

    impl Entry {
        /// The entry's answer for the window `(alpha, beta)`, if it gives
        /// one: its value when exact, or a bound beyond the window.
        fn answer(&self, alpha: i32, beta: i32) -> Option<i32> {
            let v = self.value;
            let exact = self.alpha < v && v < self.beta;
            (exact || (v <= self.alpha && v <= alpha) || (v >= self.beta && v >= beta)).then_some(v)
        }
    }

    /// Entries kept at most per search (then forgotten all at once).
    const TABLE_ENTRIES: usize = 50_000;

    /// An alpha-beta search over the histories of one rule set under one
    /// ending. Values are the mover's captures from the position on (the
    /// end's share included) minus the opponent's, both playing perfectly.
    ///
    /// Two tables make it affordable, both exact. A capture removes seeds,
    /// so no earlier position can come back: the game after it is a fresh
    /// one whose value depends on its board and context only (`known`,
    /// intervals). Within a level, the search of a position depends on the
    /// history only through the positions it asked about; when none of
    /// those were in the history, the same search after another history
    /// that holds none of them either goes exactly the same way (`table`).
    pub struct Search {
        rules: Rules,
        ending: Ending,
        /// What is known of the value of a fresh game (after a capture, or
        /// from a root) from a board with a context, for the board's mover:
        /// an interval, exact when its ends meet.
        known: HashMap<(u128, i8), (i32, i32)>,
        /// Searches within a level, by board, side and context.
        table: HashMap<(u128, bool, i8), Entry>,
        /// The positions of the current history since its last capture,
        /// with who moves (false: the root's mover), and their depths.
        seen: HashMap<(u128, bool), u32>,
        /// The same, as sets by level (one history per level at a time:
        /// levels only go down).
        paths: Vec<Positions>,
        depth: u32,
        nodes: u64,
        budget: u64,
        /// A guess at each stored board's bounds, by level and rank, to try
        /// the likely best moves first (only the order of the moves depends
        /// on it, never a value).
        guide: Vec<Vec<Bounds>>,
        /// Whether `table` is used (else every history is played out move
        /// by move, for a check of the table).
        use_table: bool,
    }

    impl Search {
        /// A search of `rules` under `ending`, knowing nothing yet, trying
        /// moves in the order `guide` suggests (`guide[n][rank]`: a guess at
        /// the bounds of board `rank` of level `n`; any guess gives the same
        /// values).
        pub fn new(rules: Rules, ending: Ending, guide: Vec<Vec<Bounds>>) -> Search {
            let index = Index::for_pits(rules.pits());
            let paths = (0..guide.len() as u32)
                .map(|n| vec![0; (2 * index.level_size(n) as usize).div_ceil(64)])
                .collect();
            Search {
                rules,
                ending,
                known: HashMap::new(),
                table: HashMap::new(),
                seen: HashMap::new(),
                paths,
                depth: 0,
                nodes: 0,
                budget: 0,
                guide,
                use_table: true,
            }
        }

        /// The same search without the table of searches within a level.
        pub fn without_table(self) -> Search {
            Search {
                use_table: false,
                ..self
            }
        }

        /// The guide's bounds of a move, for the mover, as a sort key (most
        /// promising first).
        fn promise(&self, m: &Move) -> (i8, i8) {
            let guess = Index::for_pits(self.rules.pits())
                .rank(&m.child)
                .and_then(|r| self.guide.get(m.child.seeds() as usize)?.get(r as usize))
                .map(|&child| Bounds::of_move(m.captured, m.turn, child))
                .unwrap_or(Bounds::exact(Score::new(0)));
            (-guess.lower.get(), -guess.upper.get())
        }

        /// The value of a game from `root` as alpha-beta gives it for the
        /// window `(alpha, beta)`: the value when it lies strictly inside,
        /// else a bound at most `alpha` (the value is at most it) or at
        /// least `beta` (at least it). At most `budget` positions are
        /// searched (what earlier searches learnt is reused).
        ///
        /// # Panics
        /// When `root` is not a stored board of the levels of the guide.
        ///
        /// # Errors
        /// [`OverBudget`] when the budget runs out first.
        pub fn probe(
            &mut self,
            root: &Board,
            alpha: i32,
            beta: i32,
            budget: u64,
        ) -> Result<i32, OverBudget> {
            self.nodes = 0;
            self.budget = budget;
            self.seen.clear();
            self.paths.iter_mut().for_each(|p| p.fill(0));
            self.depth = 0;
            if self.table.len() > TABLE_ENTRIES {
                self.table.clear();
            }
            self.fresh(root, false, self.ending.root_context(), alpha, beta)
        }

        /// A fresh game from `board` (the root, or the child of a capture:
        /// no position before it can come back), as [`Search::probe`].
        fn fresh(
            &mut self,
            board: &Board,
            side: bool,
            context: i8,
            alpha: i32,
            beta: i32,
        ) -> Result<i32, OverBudget> {
            let context = self.ending.memo_context(board, context);
            let key = (board.packed(), context);
            let seeds = board.seeds() as i32;
            let (mut lo, mut hi) = self.known.get(&key).copied().unwrap_or((-seeds, seeds));
            if lo == hi || lo >= beta {
                return Ok(lo);
            }
            if hi <= alpha {
                return Ok(hi);
            }
            // The value lies in [lo, hi]: a window narrowed to it gives the
            // same answers for (alpha, beta).
            let (a, b) = (alpha.max(lo - 1), beta.min(hi + 1));
            let r = self.negamax(board, side, context, a, b)?.value;
            if r <= a {
                hi = hi.min(r);
            } else if r >= b {
                lo = lo.max(r);
            } else {
                (lo, hi) = (r, r);
            }
            self.known.insert(key, (lo, hi));
            Ok(r)
        }

        /// The rest of the game for the mover of `board` after the history
        /// in `seen`, for the window `(alpha, beta)` (fail-soft).
        fn negamax(
            &mut self,
            board: &Board,
            side: bool,
            context: i8,
            alpha: i32,
            beta: i32,
        ) -> Result<Searched, OverBudget> {
            self.nodes += 1;
            if self.nodes > self.budget {
                return Err(OverBudget);
            }
            if let Some(v) = self.rules.terminal_value(board) {
                return Ok(Searched {
                    value: i32::from(v.get()),
                    hit: u32::MAX,
                    asked: Vec::new(),
                });
            }
            let level = board.seeds() as usize;
            let rank = Index::for_pits(self.rules.pits())
                .rank(board)
                .expect("every position searched is a stored board");
            let bit = 2 * rank as usize + usize::from(side);
            let mut asked = vec![0; self.paths[level].len()];
            asked[bit / 64] |= 1 << (bit % 64);
            let key = (board.packed(), side);
            if let Some(&depth) = self.seen.get(&key) {
                return Ok(Searched {
                    value: self.ending.at_repetition(board, context),
                    hit: depth,
                    asked,
                });
            }
            let entry_key = (board.packed(), side, context);
            if let Some(e) = self.table.get(&entry_key).filter(|_| self.use_table) {
                if disjoint(&e.asked, &self.paths[level]) {
                    if let Some(value) = e.answer(alpha, beta) {
                        return Ok(Searched {
                            value,
                            hit: u32::MAX,
                            asked: e.asked.clone(),
                        });
                    }
                }
            }
            self.depth += 1;
            let depth = self.depth;
            self.seen.insert(key, depth);
            self.paths[level][bit / 64] |= 1 << (bit % 64);
            let searched = self.moves(board, side, context, alpha, beta, &mut asked);
            self.seen.remove(&key);
            self.paths[level][bit / 64] &= !(1 << (bit % 64));
            self.depth -= 1;
            let (value, hit) = searched?;
            // No repetition of a position before this one: the answer
            // holds after any history without the positions asked about.
            if hit >= depth && self.use_table {
                let entry = Entry {
                    alpha,
                    beta,
                    value,
                    asked: asked.clone(),
                };
                self.table.insert(entry_key, entry);
            }
            Ok(Searched { value, hit, asked })
        }

        /// The best of the moves of `board` (which has some) for the
        /// window, and the shallowest repetition met; adds the positions
        /// asked about to `asked`.
        fn moves(
            &mut self,
            board: &Board,
            side: bool,
            context: i8,
            mut alpha: i32,
            beta: i32,
            asked: &mut Positions,
        ) -> Result<(i32, u32), OverBudget> {
            // No more than the seeds on the board either way.
            let seeds = board.seeds() as i32;
            if alpha >= seeds {
                return Ok((seeds, u32::MAX));
            }
            if beta <= -seeds {
                return Ok((-seeds, u32::MAX));
            }
            let moves = self.rules.legal_moves(board);
            let mut moves: Vec<_> = moves.iter().copied().collect();
            moves.sort_by_cached_key(|m| self.promise(m));
            let (mut best, mut hit) = (i32::MIN, u32::MAX);
            for m in &moves {
                let next = self.ending.child_context(context, m.captured, m.turn);
                let c = i32::from(m.captured);
                let mut quiet = |s: Searched| {
                    add_all(asked, &s.asked);
                    hit = hit.min(s.hit);
                    s.value
                };
                // Each child searched for this move's window (alpha, beta).
                let value = match (m.captured, m.turn) {
                    (0, Turn::Passes) => {
                        -quiet(self.negamax(&m.child, !side, next, -beta, -alpha)?)
                    }
                    (0, Turn::Stays) => quiet(self.negamax(&m.child, side, next, alpha, beta)?),
                    (_, Turn::Passes) => {
                        c - self.fresh(&m.child, !side, next, c - beta, c - alpha)?
                    }
                    (_, Turn::Stays) => {
                        c + self.fresh(&m.child, side, next, alpha - c, beta - c)?
                    }
                };
                if value > best {
                    best = value;
                    alpha = alpha.max(value);
                    if alpha >= beta {
                        break;
                    }
                }
            }
            Ok((best, hit))
        }
    }
}

/// The bounds of every stored board by their definition, computed here
/// level by level (the least and greatest solutions of the recurrence, by
/// iterating from -n and +n): a second, naive computation of what the
/// solver's files must hold.
mod fixpoint {
    use super::*;

    /// `bounds[n][rank]`: the bounds of each stored board of levels
    /// `0..=max_seeds`, in index order.
    pub fn bounds(rules: Rules, max_seeds: u32) -> Vec<Vec<Bounds>> {
        let index = Index::for_pits(rules.pits());
        let mut levels: Vec<Vec<Bounds>> = Vec::new();
        for seeds in 0..=max_seeds {
            let boards: Vec<Board> = index.boards(seeds).collect();
            let n = seeds as i8;
            let mut level = vec![
                Bounds {
                    lower: Score::new(-n),
                    upper: Score::new(n),
                };
                boards.len()
            ];
            loop {
                let mut changed = false;
                for (k, board) in boards.iter().enumerate() {
                    let found = awari_dbformat::one_ply_bounds(rules, board, |child| {
                        let rank = index.rank(child).expect("a move's child is stored") as usize;
                        let s = child.seeds();
                        Ok::<_, ()>(if s == seeds {
                            level[rank]
                        } else {
                            levels[s as usize][rank]
                        })
                    })
                    .unwrap();
                    if found != level[k] {
                        level[k] = found;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
            levels.push(level);
        }
        levels
    }
}

use histories::{Ending, Search};

/// Positions one question about one root may search.
const BUDGET: u64 = 20_000;

/// The board sizes and levels checked, for every rule set: pits per side
/// and the most seeds.
const SIZES: [(u8, u32); 3] = [(3, 5), (4, 5), (6, 4)];

/// One rule set and board size, built both ways into one directory.
struct Case {
    rules: Rules,
    max_seeds: u32,
    dir: PathBuf,
}

/// Every case, its levels built: `awari-solve` (even-split scores) and
/// `awari-solve --repetition any` into the same directory.
fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let top = scratch("repetition-search");
        let mut cases = Vec::new();
        for set in RuleSet::ALL {
            for (pits, max_seeds) in SIZES {
                let rules = Rules::new(set, pits).unwrap();
                let dir = top.join(format!("{}-p{pits}", set.name()));
                solve(&dir, rules, max_seeds, &[]);
                solve(&dir, rules, max_seeds, &["--repetition", "any"]);
                cases.push(Case {
                    rules,
                    max_seeds,
                    dir,
                });
            }
        }
        cases
    })
}

/// Runs `awari-solve` for levels `0..=max_seeds` of `rules` into `dir`,
/// with `extra` arguments, and checks that it reported every level.
fn solve(dir: &Path, rules: Rules, max_seeds: u32, extra: &[&str]) {
    let (pits, seeds) = (rules.pits().to_string(), max_seeds.to_string());
    let mut args = vec![
        "--db",
        dir.to_str().unwrap(),
        "--rules",
        rules.set().name(),
        "--pits",
        &pits,
        "--max-seeds",
        &seeds,
        "--threads",
        "1",
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = ok_stdout(&run("awari-solve", &args));
    assert_eq!(out.lines().count() as u32, max_seeds + 1, "{args:?}: {out}");
}

/// The stored values of level `seeds` of `rules` in `dir`, in index order:
/// the even-split level's (`None`: scores, or lower bounds that the best
/// capture completes), or one bound's.
fn level_values(dir: &Path, rules: Rules, seeds: u32, bound: Option<Bound>) -> (Stored, Vec<i32>) {
    let id = LevelId::new(rules, seeds);
    let reader = match bound {
        None => LevelReader::open_expecting(&file::level_path(dir, id), id)
            .unwrap_or_else(|e| panic!("{id}: {e}")),
        Some(b) => LevelReader::open_bound(&file::bound_path(dir, id, b), id, b)
            .unwrap_or_else(|e| panic!("{id}, {}: {e}", b.name())),
    };
    let values = reader.decode_all().unwrap_or_else(|e| panic!("{id}: {e}"));
    let values = values.iter().map(|&v| i32::from(v)).collect();
    (reader.stored(), values)
}

/// A stored board and what the files say of it.
struct Root {
    board: Board,
    even: i32,
    lower: i32,
    upper: i32,
}

/// The stored boards of levels `0..=max_seeds` of a case, in level and
/// index order, with their even-split scores and bounds from the files.
fn roots(case: &Case) -> Vec<Root> {
    let rules = case.rules;
    let index = Index::for_pits(rules.pits());
    let mut roots = Vec::new();
    // The even-split scores of the levels below, for the captures.
    let mut scores: Vec<Vec<i32>> = Vec::new();
    for seeds in 0..=case.max_seeds {
        let (stored, mut even) = level_values(&case.dir, rules, seeds, None);
        let (_, lower) = level_values(&case.dir, rules, seeds, Some(Bound::Lower));
        let (_, upper) = level_values(&case.dir, rules, seeds, Some(Bound::Upper));
        let boards: Vec<Board> = index.boards(seeds).collect();
        assert_eq!(boards.len(), even.len(), "level {seeds}");
        assert_eq!(boards.len(), lower.len(), "level {seeds}");
        assert_eq!(boards.len(), upper.len(), "level {seeds}");
        for (k, board) in boards.into_iter().enumerate() {
            let score = |child: &Board| {
                let rank = index.rank(child).expect("a capture's child is stored");
                Ok::<_, ()>(Score::new(
                    scores[child.seeds() as usize][rank as usize] as i8,
                ))
            };
            let value = Score::new(even[k] as i8);
            even[k] = i32::from(
                file::resolve(stored, rules, &board, value, score)
                    .unwrap()
                    .get(),
            );
            roots.push(Root {
                board,
                even: even[k],
                lower: lower[k],
                upper: upper[k],
            });
        }
        scores.push(even);
    }
    roots
}

/// The table of searches within a level changes no value: on every board
/// of 3 pits up to 5 seeds, 4 pits up to 4 and 6 pits up to 3, under every
/// ending, the
/// value with it is the value of the search that plays every history out
/// move by move.
#[test]
fn the_table_changes_no_value() {
    let (mut compared, mut skipped) = (0, 0);
    for set in RuleSet::ALL {
        for (pits, max_seeds) in [(3, 5), (4, 4), (6, 3)] {
            let rules = Rules::new(set, pits).unwrap();
            let guide = fixpoint::bounds(rules, max_seeds);
            for e in Ending::ALL {
                let mut tabled = Search::new(rules, e, guide.clone());
                let mut plain = Search::new(rules, e, guide.clone()).without_table();
                for seeds in 0..=max_seeds {
                    let window = (-(seeds as i32) - 1, seeds as i32 + 1);
                    for board in Index::for_pits(pits).boards(seeds) {
                        let Ok(want) = plain.probe(&board, window.0, window.1, 1_000_000) else {
                            skipped += 1;
                            continue;
                        };
                        let got = tabled.probe(&board, window.0, window.1, 1_000_000);
                        let got = got.expect("the table searches no more than without it");
                        assert_eq!(got, want, "{rules}: {} under {e:?}", board.to_notation());
                        compared += 1;
                    }
                }
            }
        }
    }
    eprintln!("{compared} values compared, {skipped} too dear without the table");
    assert!(
        skipped * 100 <= compared,
        "{skipped} skipped, {compared} compared"
    );
}

/// The files against the bounds by their definition ([`fixpoint::bounds`]),
/// and the even-split score within them, on every board.
#[test]
fn the_files_hold_the_bounds_by_their_definition() {
    for case in cases() {
        let expected = fixpoint::bounds(case.rules, case.max_seeds);
        let roots = roots(case);
        let expected = expected.iter().flatten();
        assert_eq!(roots.len(), expected.clone().count());
        for (root, want) in roots.iter().zip(expected) {
            let at = format!("{}: {}", case.rules, root.board.to_notation());
            let want = (i32::from(want.lower.get()), i32::from(want.upper.get()));
            assert_eq!((root.lower, root.upper), want, "{at}: bounds");
            assert!(
                root.lower <= root.even && root.even <= root.upper,
                "{at}: even split {} outside {}..{}",
                root.even,
                root.lower,
                root.upper
            );
        }
    }
}

/// What [`check_case`] found.
#[derive(Debug, Default)]
struct Counts {
    roots: usize,
    /// Roots with lower == upper.
    exact: usize,
    /// Roots of which some question ran over the budget (its answer unknown).
    skipped: usize,
    /// Roots whose values under own rows and deadlock were both found.
    valued: usize,
    /// Of those, roots whose two values differ.
    own_vs_deadlock: usize,
    /// Of those, roots whose own-rows value differs from the even split.
    own_vs_even: usize,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.roots += other.roots;
        self.exact += other.exact;
        self.skipped += other.skipped;
        self.valued += other.valued;
        self.own_vs_deadlock += other.own_vs_deadlock;
        self.own_vs_even += other.own_vs_even;
    }
}

/// Asks the search about every root of `case` under every ending (see
/// [`every_repetition_rule_lies_within_the_bounds`]); returns the counts
/// and the first root whose own-rows value differs from its even-split
/// score, described.
fn check_case(case: &Case) -> (Counts, Option<String>) {
    let guide = fixpoint::bounds(case.rules, case.max_seeds);
    let mut searches = Ending::ALL.map(|e| (e, Search::new(case.rules, e, guide.clone())));
    let mut counts = Counts::default();
    let mut example = None;
    for root in roots(case) {
        let Root {
            board,
            even,
            lower,
            upper,
        } = root;
        let at = format!("{}: {} ({lower}..{upper})", case.rules, board.to_notation());
        let seeds = board.seeds() as i32;
        counts.roots += 1;
        counts.exact += usize::from(lower == upper);
        let mut skipped = false;
        let mut values = [None; 2];
        for (e, search) in &mut searches {
            // `counted`: a question whose answer, missing, makes the root skipped.
            let mut ask = |alpha: i32, beta: i32, counted: bool| {
                let answer = search.probe(&board, alpha, beta, BUDGET).ok();
                skipped |= counted && answer.is_none();
                answer
            };
            match e {
                // The games the bounds describe: exactly lower and upper.
                Ending::AllToOpponent | Ending::AllToMover => {
                    let want = if *e == Ending::AllToOpponent {
                        lower
                    } else {
                        upper
                    };
                    if let Some(r) = ask(want - 1, want + 1, true) {
                        assert_eq!(r, want, "{at}: {e:?} gives {r} (a bound when not inside)");
                    }
                }
                Ending::OwnRows | Ending::Deadlock => {
                    // The value, inside the bounds; when too dear to find,
                    // at least that it is inside them.
                    let search_value = ask(lower - 1, upper + 1, false);
                    if let Some(r) = search_value {
                        assert!(lower <= r && r <= upper, "{at}: {e:?} gives {r}");
                        values[usize::from(*e == Ending::Deadlock)] = Some(r);
                    } else {
                        if lower > -seeds {
                            if let Some(r) = ask(lower - 1, lower, true) {
                                assert!(r >= lower, "{at}: {e:?} gives at most {r}");
                            }
                        }
                        if upper < seeds {
                            if let Some(r) = ask(upper, upper + 1, true) {
                                assert!(r <= upper, "{at}: {e:?} gives at least {r}");
                            }
                        }
                    }
                }
            }
        }
        counts.skipped += usize::from(skipped);
        if let [Some(own), Some(deadlock)] = values {
            counts.valued += 1;
            counts.own_vs_deadlock += usize::from(own != deadlock);
            if own != even {
                counts.own_vs_even += 1;
                example.get_or_insert_with(|| {
                    format!(
                        "{}: {}: even split {even:+}, own rows {own:+}, deadlock {deadlock:+}, bounds {lower:+}..{upper:+}",
                        case.rules,
                        board.to_notation()
                    )
                });
            }
        }
    }
    (counts, example)
}

/// The independent check: on every stored board of the small
/// levels, for every rule set, the values of the history searches under the
/// two all-to-one endings are `lower` and `upper` of the files, and those
/// under own rows and deadlock lie within them (equal where they meet).
#[test]
fn every_repetition_rule_lies_within_the_bounds() {
    let cases = cases();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(case) = cases.get(k) else { break };
                let found = check_case(case);
                results.lock().unwrap().push((k, found));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(k, _)| *k);
    let mut totals = Counts::default();
    let mut example = None;
    for (k, (counts, found)) in &results {
        let case = &cases[*k];
        eprintln!("{}, levels 0..={}: {counts:?}", case.rules, case.max_seeds);
        totals.add(counts);
        if case.rules.pits() == 3 && example.is_none() {
            example = found.clone();
        }
    }
    eprintln!("all: {totals:?}");
    let example = example.expect("a 3-pit board whose own-rows value is not its even-split score");
    eprintln!("example: {example}");
    assert_eq!(results.len(), cases.len());
    assert!(
        totals.exact > 0 && totals.exact < totals.roots,
        "{totals:?}"
    );
    assert!(totals.own_vs_deadlock > 0, "{totals:?}");
    assert!(
        totals.skipped * 100 <= 5 * totals.roots,
        "{} of {} roots over the budget",
        totals.skipped,
        totals.roots
    );
}

/// Issue 49: the search of `awari-probe` under `--repetition own-rows`
/// (the game ends at the first repetition since the last capture, each side
/// taking its own row), without databases and with an empty history, gives
/// every board of 3-pit abapa and awari up to 5 seeds the value that the
/// search over histories gives, and proves it. (With 4 pits, lines without
/// a repetition outgrow the search's 120 plies: it cannot prove them.)
#[test]
fn the_engine_search_plays_own_rows_as_the_histories_say() {
    use awari_probe::search::{Bound as Proof, Game, Limits, RepetitionRule, Searcher};
    let (mut compared, mut skipped) = (0, 0);
    for (set, pits, max_seeds) in [(RuleSet::Abapa, 3, 5), (RuleSet::Awari, 3, 5)] {
        let rules = Rules::new(set, pits).unwrap();
        let mut histories = Search::new(rules, Ending::OwnRows, fixpoint::bounds(rules, max_seeds));
        let limits = Limits {
            time: None,
            depth: None,
            hash_bytes: 1 << 20,
            threads: 1,
            ..Limits::default()
        };
        let game = Game {
            repetition: RepetitionRule::OwnRows,
            ..Game::default()
        };
        let searcher = Searcher::without_levels(rules, limits).with_game(game);
        for seeds in 0..=max_seeds {
            let window = (-(seeds as i32) - 1, seeds as i32 + 1);
            for board in Index::for_pits(pits).boards(seeds) {
                let Ok(want) = histories.probe(&board, window.0, window.1, BUDGET) else {
                    skipped += 1;
                    continue;
                };
                let found = searcher.search(&board).unwrap();
                let at = format!("{rules}: {}", board.to_notation());
                assert_eq!(found.bound, Proof::Exact, "{at}: not proven ({found:?})");
                assert_eq!(i32::from(found.value.get()), want, "{at}");
                compared += 1;
            }
        }
    }
    eprintln!("{compared} boards compared, {skipped} over the budget");
    assert!(
        compared > 800 && skipped * 50 <= compared,
        "{compared} compared, {skipped} skipped"
    );
}

/// Issue 49: with even-split levels at its leaves, the search under
/// `own-rows` claims only what holds under own rows (the databases' values
/// are estimates there): on every board of 3-pit abapa up to 5 seeds, over
/// levels 0..=3, at depths 1 to 6, an exact value is the histories' value,
/// a lower bound at most it, an upper bound at least it.
#[test]
fn the_engine_search_claims_under_own_rows_hold() {
    use awari_probe::search::{Bound as Proof, Game, Limits, RepetitionRule, Searcher};
    use awari_probe::Tablebase;
    let rules = Rules::new(RuleSet::Abapa, 3).unwrap();
    let dir = scratch("own-rows-claims");
    solve(&dir, rules, 3, &[]);
    let tb = Tablebase::open(&dir, rules).unwrap();
    let mut histories = Search::new(rules, Ending::OwnRows, fixpoint::bounds(rules, 5));
    let game = Game {
        repetition: RepetitionRule::OwnRows,
        ..Game::default()
    };
    let mut claims = [0usize; 4];
    for depth in 1..=6 {
        let limits = Limits {
            time: None,
            depth: Some(depth),
            hash_bytes: 1 << 20,
            threads: 1,
            ..Limits::default()
        };
        let searcher = Searcher::new(&tb, limits).with_game(game.clone());
        for seeds in 0..=5u32 {
            let window = (-(seeds as i32) - 1, seeds as i32 + 1);
            for board in Index::for_pits(3).boards(seeds) {
                let Ok(want) = histories.probe(&board, window.0, window.1, BUDGET) else {
                    continue;
                };
                let found = searcher.search(&board).unwrap();
                let v = i32::from(found.value.get());
                let at = format!(
                    "{}, depth {depth}: {found:?}, own rows {want}",
                    board.to_notation()
                );
                match found.bound {
                    Proof::Exact => assert_eq!(v, want, "{at}"),
                    Proof::Lower => assert!(want >= v, "{at}"),
                    Proof::Upper => assert!(want <= v, "{at}"),
                    Proof::Estimate => {}
                }
                claims[found.bound as usize] += 1;
            }
        }
    }
    eprintln!("exact, lower, upper, estimate: {claims:?}");
    assert!(
        // Exact claims from game ends and repetitions (a database value
        // would claim the even split's), estimates where levels were reached.
        claims[0] > 100 && claims[3] > 100,
        "{claims:?}"
    );
}
