//! Independent verification of a level: every value re-derived from its children
//! with forward moves only, and every non-zero value shown to be reachable in a
//! finite number of moves.
//!
//! ## Why two checks
//! The recurrence `v(p) = max over moves [captured - v(child)]` alone cannot tell
//! a draw by endless play from wrong values inside a cycle: two boards that move
//! into each other satisfy it with values `x` and `-x` for any `x`. So the second
//! check proves every non-zero value by a well-founded argument, computed here
//! from the stored values alone (no counters or stages of the solver):
//!
//! - a board with `v = k > 0` is *proven* when one of its moves keeps the value
//!   and makes progress: a capture worth `k` (its child is on a lower level,
//!   verified before), or a quiet move to a child with value `-k` that is proven;
//! - a board with `v = -k < 0` is *proven* when every quiet child (all have values
//!   `>= k` by the recurrence) is proven; a board with no quiet move is proven.
//!
//! Because each proof only uses proofs found earlier, the mover of a proven
//! `k > 0` board can force a gain of at least `k` in finitely many moves, and the
//! opponent of a proven `-k` board can force at least `k`; with the recurrence on
//! every board (which makes the defensive bounds hold, endless play counting 0),
//! every value is exact.
//!
//! ## How the proofs are found
//! One forward pass checks the recurrence and finds the proofs at hand (captures,
//! boards without a quiet move); each board waiting for a proof keeps a small
//! counter (1 for a win, its number of quiet moves for a loss). Then every proven
//! board tells its parents, depth first, and a parent whose counter reaches zero
//! is proven and tells its own parents. The parents are found with the un-move
//! generator, but nothing rests on it: each (parent, pit) it proposes is confirmed
//! by playing the move forward before it counts, and counts once (a move leads
//! to one child, each proven child tells its parents once, and a pair proposed
//! twice for one child is dropped). So a loss's counter reaches zero only when
//! every one of its quiet moves leads to a proven child, and a wrong or missing
//! parent can only leave a board unproven (reported), never prove it.
//! The proofs found do not depend on the order of work (they are the least
//! fixpoint of the rules above), so the result is the same for any thread count.
//!
//! ## Certificates
//! The solver can also write, per level, the generation of its threshold stage
//! in which it decided each board (`awari-solve --certificate`, file format in
//! `awari_dbformat::file::certificate`). With it the proofs are checked in the
//! forward pass, with no search: a board `v = k > 0` is *certified* when a
//! capture keeps `k` or a quiet child worth `-k` has a smaller generation; a
//! board `v = -k < 0` when every quiet child is worth more than `k`, or `k` with
//! a smaller generation. If every board is certified, every board is proven:
//! by induction on `|v|` from the largest down and, within one `|v|`, on the
//! generation, each certified board meets the rules above with proofs found
//! earlier (a win's child is a loss of the same `|v|` and a smaller generation;
//! a loss's children are wins of a larger `|v|`, or of the same `|v|` and a
//! smaller generation). If any board is not certified, the certificate is set
//! aside and the search runs as without one; so the result never depends on the
//! certificate, which is never trusted, only used to skip work.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;

use awari_dbformat::level::Values;
use awari_dbformat::memory::cache::prefetch;
use awari_dbformat::memory::huge::HugeArray;
use awari_dbformat::memory::resident;
use awari_dbformat::{Board, Index, MoveList, Rules, Score, Turn, MAX_PITS};
use rayon::prelude::*;

/// One board whose stored value is wrong or cannot be justified.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mismatch {
    /// The level.
    pub seeds: u32,
    /// The board's index in its level.
    pub index: u64,
    /// The board, pit counts in pit order.
    pub board: Vec<u8>,
    /// The value the file gives (lower bounds resolved by the captures).
    pub stored: i8,
    /// The value its children give.
    pub derived: i8,
    /// What is wrong: "recurrence" or "no progress".
    pub reason: String,
}

/// The result of checking one level.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LevelCheck {
    /// The level.
    pub seeds: u32,
    /// Boards checked.
    pub boards: u64,
    /// Boards whose value differs from what their children give.
    pub recurrence_errors: u64,
    /// Non-zero boards whose value could not be proven reachable.
    pub unproven: u64,
    /// True when the level's certificate proved every non-zero value, so no
    /// proof search was needed.
    pub certified: bool,
    /// The first mismatching boards (at most the limit given).
    pub mismatches: Vec<Mismatch>,
}

impl LevelCheck {
    /// True when every board checked out.
    pub fn ok(&self) -> bool {
        self.recurrence_errors == 0 && self.unproven == 0
    }
}

/// The decoded values of levels, by seed count.
#[derive(Default, Clone)]
pub struct Levels {
    levels: Vec<Option<Arc<Values>>>,
}

impl Levels {
    /// Adds (or replaces) the values of level `seeds`: its scores, one per
    /// stored board in index order (not checked here).
    pub fn insert(&mut self, seeds: u32, values: Arc<Values>) {
        let s = seeds as usize;
        if self.levels.len() <= s {
            self.levels.resize(s + 1, None);
        }
        self.levels[s] = Some(values);
    }

    /// The values of level `seeds`, if present.
    pub fn get(&self, seeds: u32) -> Option<&Arc<Values>> {
        self.levels.get(seeds as usize).and_then(|l| l.as_ref())
    }

    /// Forgets level `seeds`.
    pub fn remove(&mut self, seeds: u32) {
        if let Some(l) = self.levels.get_mut(seeds as usize) {
            *l = None;
        }
    }

    fn score(&self, index: &Index, board: &Board) -> Score {
        Score::new(*self.slot(index, board))
    }

    /// Where the value of a stored board of a loaded level is kept.
    fn slot(&self, index: &Index, board: &Board) -> &i8 {
        let level = self
            .get(board.seeds())
            .expect("the levels a capture reaches are loaded");
        &level[index.rank(board).expect("children are stored") as usize]
    }
}

/// The value of `board` from its children: `values` for quiet moves (same
/// level), `lower` for captures; [`Rules::value_without_moves`] when the
/// mover cannot move.
fn derive(rules: Rules, index: &Index, board: &Board, values: &[i8], lower: &Levels) -> Score {
    let mut edges = Vec::new();
    push_edges(
        index,
        &rules.legal_moves(board),
        values,
        lower,
        None,
        &mut edges,
    );
    Score::new(derive_from(
        &edges,
        rules.value_without_moves(board.seeds()).get(),
    ))
}

/// One legal move seen from the first pass: where its child's value is kept (in
/// `values` for a quiet move, in the lower levels for a capture) and how that
/// value becomes the mover's.
#[derive(Clone, Copy)]
struct Edge<'a> {
    child: &'a i8,
    /// The child's index in the level, for a quiet move (unused for a capture).
    index: usize,
    captured: i8,
    /// The turn stays with the mover (a grand slam under `grand-slam-replay`).
    stays: bool,
}

impl Edge<'_> {
    /// The move's value for the mover (see [`awari_dbformat::Move::value`]).
    #[inline]
    fn value(&self) -> i8 {
        // (Saturating: a child's value out of range is reported on its own.)
        if self.stays {
            self.captured.saturating_add(*self.child)
        } else {
            self.captured.saturating_sub(*self.child)
        }
    }

    /// True for a quiet (non-capturing) move: its child is on the same level.
    #[inline]
    fn is_quiet(&self) -> bool {
        self.captured == 0
    }
}

/// Appends an [`Edge`] for each of `moves`, in move order, and asks the cache
/// for each child's value (they are read later, see `check_level`).
///
/// `opponent_parts`, when given, holds by pit the [`Index::opponent_part`] of
/// the quiet children of boards with this board's mover row, or [`UNKNOWN`]:
/// a quiet child's opponent row is the mover's row after sowing, so boards
/// sharing a mover row share it, and only the rest of the rank is found anew.
#[inline]
fn push_edges<'a>(
    index: &Index,
    moves: &MoveList,
    values: &'a [i8],
    lower: &'a Levels,
    mut opponent_parts: Option<&mut [u64; MAX_PITS as usize]>,
    edges: &mut Vec<Edge<'a>>,
) {
    for m in moves.iter() {
        let (child, at) = if m.is_quiet() {
            let at = match opponent_parts.as_deref_mut() {
                Some(parts) => {
                    let part = &mut parts[m.pit as usize];
                    if *part == UNKNOWN {
                        *part = index.opponent_part(&m.child).expect("children are stored");
                    }
                    *part + index.mover_part(&m.child)
                }
                None => index.rank(&m.child).expect("children are stored"),
            } as usize;
            debug_assert_eq!(Some(at as u64), index.rank(&m.child));
            (&values[at], at)
        } else {
            (lower.slot(index, &m.child), 0)
        };
        prefetch(child);
        edges.push(Edge {
            child,
            index: at,
            captured: m.captured as i8,
            stays: m.turn == Turn::Stays,
        });
    }
}

const CHUNK: usize = 1 << 14;

/// Progress state of a board whose proof is found: not yet told its parents.
const PROVEN: u8 = 254;
/// Progress state of a proven board whose parents have been told, or of a board
/// that needs no proof (value 0).
const DONE: u8 = 255;
/// The largest counter (a board has at most 8 quiet moves).
const MAX_NEED: u8 = 8;

/// Checks every stored board of level `seeds` (`values`, index order) against its
/// children (`values` and `lower`, which must hold levels `0..=seeds-2`), and
/// proves every non-zero value reachable. Keeps at most `limit` mismatches.
/// `tick(n)` is called as boards are checked (for a progress bar).
///
/// Returns the counts of boards checked, recurrence errors and unproven
/// values; [`LevelCheck::ok`] says whether the level holds. The values
/// must be scores: a lower bound that is not its board's score counts as a
/// recurrence error.
///
/// # Panics
/// When `values` does not have one value per stored board of the level,
/// or `lower` lacks a level that a capture reaches.
pub fn check_level(
    rules: Rules,
    seeds: u32,
    values: &[i8],
    lower: &Levels,
    limit: usize,
    tick: &(dyn Fn(u64) + Sync),
) -> LevelCheck {
    check_level_with(rules, seeds, values, lower, Aids::default(), limit, tick)
}

/// What a level's check may be given besides its values, none of which
/// changes its result.
#[derive(Default)]
pub struct Aids<'a> {
    /// The level's certificate: the generation in which the solver decided
    /// each board (see the module docs, "Certificates"). One that proves
    /// every value saves the proof search; one that does not (wrong, forged,
    /// or of a level with errors) is set aside.
    pub certificate: Option<&'a [u16]>,
    /// Where the proof search keeps its byte per board: an array of exactly
    /// one byte per board of the level, such as a file the caller mapped
    /// ([`awari_dbformat::memory::mapped`]) to keep it out of memory. A new array in
    /// memory when `None`.
    pub progress: Option<HugeArray>,
}

/// Like [`check_level`], with what `aids` gives.
///
/// # Panics
/// As [`check_level`]; also when `aids.progress` is not one byte per board.
pub fn check_level_with(
    rules: Rules,
    seeds: u32,
    values: &[i8],
    lower: &Levels,
    aids: Aids,
    limit: usize,
    tick: &(dyn Fn(u64) + Sync),
) -> LevelCheck {
    let certificate = aids.certificate.filter(|c| c.len() == values.len());
    let index = Index::for_pits(rules.pits());

    // 1. The recurrence and the range of every value, and with a certificate,
    // the proofs it gives. When it proves every value, that is all.
    if let Some(generations) = certificate {
        let first = first_pass(rules, seeds, values, lower, Some(generations), None, tick);
        if first.uncertified == 0 {
            tick(values.len() as u64 - values.len() as u64 / 2);
            let mut mismatches = first.mismatches;
            let recurrence_errors = mismatches.len() as u64;
            mismatches.truncate(limit);
            return LevelCheck {
                seeds,
                boards: values.len() as u64,
                recurrence_errors,
                unproven: 0,
                certified: true,
                mismatches,
            };
        }
    }
    // A certificate that does not prove the level is set aside: the search
    // below runs as without it, its first pass again but unshown (the
    // progress bar has counted one).
    let shown: &(dyn Fn(u64) + Sync) = if certificate.is_some() { &|_| {} } else { tick };

    // Per board: a counter of proofs still needed, or PROVEN / DONE (in huge
    // pages: the proof search reads and updates it at random).
    let mut progress = aids
        .progress
        .unwrap_or_else(|| HugeArray::zeroed(values.len()));
    assert_eq!(progress.len(), values.len(), "one progress byte per board");
    progress.par_chunks_mut(CHUNK).for_each(|c| {
        resident::hold();
        c.fill(DONE)
    });
    let progress = progress.as_atomic_u8();
    let first = first_pass(rules, seeds, values, lower, None, Some(progress), shown);

    // 2. Progress: every proven board tells its parents (see the module docs).
    {
        let prover = Prover {
            rules,
            index,
            values,
            progress,
        };
        progress
            .par_chunks(CHUNK)
            .enumerate()
            .for_each(|(c, chunk)| {
                let mut todo = Vec::new();
                let mut parents = Vec::new();
                // The boards walk along with their states, so no board is unranked:
                // the ones proven later come with the board that told them.
                let boards = index.boards_from(seeds, (c * CHUNK) as u64);
                resident::hold();
                for (k, (state, board)) in chunk.iter().zip(boards).enumerate() {
                    // Claim each board proven by the first pass (the walks only ever
                    // prove pending boards, so no one else does).
                    if state
                        .compare_exchange(PROVEN, DONE, Relaxed, Relaxed)
                        .is_ok()
                    {
                        todo.push(((c * CHUNK + k) as u64, board));
                    }
                    // Work through what is claimed before the list grows long: a few
                    // boards at a time, so that their parents' bytes can be asked for
                    // together (see `Prover::tell_parents`).
                    while todo.len() >= TOLD_TOGETHER {
                        prover.tell_parents(&mut todo, &mut parents);
                    }
                }
                while !todo.is_empty() {
                    prover.tell_parents(&mut todo, &mut parents);
                }
                tick(chunk.len() as u64 - chunk.len() as u64 / 2);
            });
    }

    // 3. What is left unproven.
    let unproven_boards: Vec<u64> = progress
        .par_chunks(CHUNK)
        .enumerate()
        .flat_map_iter(|(c, chunk)| {
            resident::hold();
            let unproven = chunk.iter().enumerate();
            let unproven = unproven.filter(|(_, s)| s.load(Relaxed) != DONE);
            unproven.map(move |(k, _)| (c * CHUNK + k) as u64)
        })
        .collect();
    let recurrence_errors = first.mismatches.len() as u64;
    let mut mismatches = first.mismatches;
    for &i in &unproven_boards {
        if mismatches.len() >= limit.max(1) * 2 {
            break;
        }
        if mismatches.iter().any(|m| m.index == i) {
            continue;
        }
        let board = index.unrank(seeds, i).expect("index within level");
        mismatches.push(Mismatch {
            seeds,
            index: i,
            board: board.pits().to_vec(),
            stored: values[i as usize],
            derived: derive(rules, index, &board, values, lower).get(),
            reason:
                "no progress: no sequence of moves reaches this value; endless play would give 0"
                    .into(),
        });
    }
    mismatches.sort_by_key(|m| m.index);
    mismatches.truncate(limit);
    LevelCheck {
        seeds,
        boards: values.len() as u64,
        recurrence_errors,
        unproven: unproven_boards.len() as u64,
        certified: false,
        mismatches,
    }
}

/// What the first pass finds: the boards whose value differs from what their
/// children give (in index order), and how many boards the certificate, when
/// there is one, does not prove at once.
struct FirstPass {
    mismatches: Vec<Mismatch>,
    uncertified: u64,
}

/// The first pass over a level: derives every board's value from its children
/// and compares; checks each board against the certificate when there is one;
/// sets each board's progress state when `progress` is given (see the module
/// docs). Ticks about half of the level's boards.
///
/// The boards are visited by tile ([`Index::tiles`]), not in index order:
/// then the children of a pit's move from consecutive boards lie close
/// together in their level, and most lookups of a child's value hit the
/// cache, where in index order nearly every one missed it (and with it, on
/// this kind of machine, the TLB). The boards themselves come in runs of
/// consecutive indices, one run per opponent row, and the quiet children of
/// one mover row's move share an opponent row, so the larger part of their
/// index is found once per tile (see `push_edges`).
fn first_pass(
    rules: Rules,
    seeds: u32,
    values: &[i8],
    lower: &Levels,
    certificate: Option<&[u16]>,
    progress: Option<&[AtomicU8]>,
    tick: &(dyn Fn(u64) + Sync),
) -> FirstPass {
    // Boards whose value the certificate does not prove at once.
    let uncertified = AtomicU64::new(0);
    let index = Index::for_pits(rules.pits());
    let n = seeds as i8;
    let no_move = rules.value_without_moves(seeds).get();
    let tiles = index.tiles(seeds, TILE_WIDTH);
    let mut mismatches: Vec<Mismatch> = tiles
        .par_iter()
        .flat_map_iter(|tile| {
            let mut found = Vec::new();
            // A group of boards: `(index, its first edge)`. Their own values and
            // their children's are looked up together: first all are asked for,
            // then read.
            let mut group: Vec<(usize, usize)> = Vec::with_capacity(GROUP);
            let mut edges: Vec<Edge> = Vec::with_capacity(GROUP * 8);
            // Only the first board of each run is ranked (see `Tile::boards`).
            let mut boards = tile.boards().enumerate();
            let mut run_start = 0;
            // By mover row of the tile: the opponent parts of its quiet children.
            let mut opponent_parts = vec![[UNKNOWN; MAX_PITS as usize]; tile.width()];
            loop {
                // (Where the levels are in files: see `resident::hold`.)
                resident::hold();
                group.clear();
                edges.clear();
                for (k, board) in boards.by_ref().take(GROUP) {
                    let t = k % tile.width();
                    if t == 0 {
                        run_start = index.rank(&board).expect("the board is stored") as usize;
                    }
                    let i = run_start + t;
                    prefetch(&values[i]);
                    group.push((i, edges.len()));
                    let moves = rules.legal_moves(&board);
                    let parts = Some(&mut opponent_parts[t]);
                    push_edges(index, &moves, values, lower, parts, &mut edges);
                }
                if group.is_empty() {
                    break;
                }
                // The certificate is read only where a child's value equals the
                // board's, negated (see `certified`): none for a draw, and few
                // for the others. So, once the values are here, ask for just
                // those generations, and the board's own.
                if let Some(generations) = certificate {
                    for (g, &(i, first)) in group.iter().enumerate() {
                        let last = group.get(g + 1).map_or(edges.len(), |next| next.1);
                        let stored = values[i];
                        if stored == 0 {
                            continue;
                        }
                        prefetch(&generations[i]);
                        for e in &edges[first..last] {
                            if e.is_quiet() && *e.child == -stored {
                                prefetch(&generations[e.index]);
                            }
                        }
                    }
                }
                for (g, &(i, first)) in group.iter().enumerate() {
                    let last = group.get(g + 1).map_or(edges.len(), |next| next.1);
                    let moves = &edges[first..last];
                    let stored = values[i];
                    if let Some(generations) = certificate {
                        if !certified(stored, i, moves, generations) {
                            uncertified.fetch_add(1, Relaxed);
                        }
                    }
                    let derived = if (-n..=n).contains(&stored) {
                        if let Some(progress) = progress {
                            progress[i].store(initial_progress(stored, moves), Relaxed);
                        }
                        derive_from(moves, no_move)
                    } else {
                        i8::MIN
                    };
                    if derived != stored {
                        let board = index.unrank(seeds, i as u64).expect("index within level");
                        found.push(Mismatch {
                            seeds,
                            index: i as u64,
                            board: board.pits().to_vec(),
                            stored,
                            derived,
                            reason: if derived == i8::MIN {
                                format!("value {stored} is outside -{seeds}..={seeds}")
                            } else {
                                "recurrence".into()
                            },
                        });
                    }
                }
            }
            tick(tile.len() / 2);
            found
        })
        .collect();
    mismatches.sort_by_key(|m| m.index);
    FirstPass {
        mismatches,
        uncertified: uncertified.into_inner(),
    }
}

/// True when the certificate (`generations`, by index; the board's index is `board`) proves
/// the value `stored` of a board with `moves` at once: a win keeps its value by
/// a capture, or by a quiet move to a loss decided in an earlier generation; a
/// loss `-k` has only quiet children worth more than `k`, or worth `k` and
/// decided earlier. See the module docs, "Certificates".
fn certified(stored: i8, board: usize, moves: &[Edge], generations: &[u16]) -> bool {
    // (The board's own generation is read only for a non-zero value.)
    let own = || generations[board];
    match stored {
        0 => true,
        v if v > 0 => moves.iter().any(|m| {
            if m.is_quiet() {
                *m.child == -v && generations[m.index] < own()
            } else {
                m.value() >= v
            }
        }),
        v => moves.iter().filter(|m| m.is_quiet()).all(|m| {
            let child = *m.child;
            child > -v || (child == -v && generations[m.index] < own())
        }),
    }
}

/// The progress state of a board after the first pass: DONE for value 0, PROVEN
/// when its proof is at hand, else the number of proofs it waits for.
fn initial_progress(stored: i8, moves: &[Edge]) -> u8 {
    let quiet = moves.iter().filter(|m| m.is_quiet()).count() as u8;
    match stored {
        0 => DONE,
        v if v > 0 => {
            let capture_keeps = moves.iter().any(|m| !m.is_quiet() && m.value() >= v);
            if capture_keeps {
                PROVEN
            } else {
                1 // one quiet child of value -v, once proven
            }
        }
        _ if quiet == 0 => PROVEN,
        _ => quiet.min(MAX_NEED),
    }
}

/// The value a board's moves give it: the best move, or `no_move` when
/// there is none (`-n`, the opponent taking every seed; 0 under cross-wari).
fn derive_from(moves: &[Edge], no_move: i8) -> i8 {
    moves.iter().map(Edge::value).max().unwrap_or(no_move)
}

/// Boards whose children are looked up together in the first pass.
const GROUP: usize = 32;

/// An opponent part not yet found (see `push_edges`).
const UNKNOWN: u64 = u64::MAX;

/// The most mover rows in a tile of the first pass: a run of boards is then
/// a cache line of values.
const TILE_WIDTH: usize = 64;

/// The shared pieces of the progress walk.
struct Prover<'a> {
    rules: Rules,
    index: &'a Index,
    values: &'a [i8],
    progress: &'a [AtomicU8],
}

/// A parent told of a proven child: `(its index, the parent, the pit of the move,
/// the child, the child's value)`.
type Told = (u64, Board, usize, Board, i8);

/// Proven boards whose parents are told together.
const TOLD_TOGETHER: usize = 8;

impl Prover<'_> {
    /// Takes up to [`TOLD_TOGETHER`] proven boards (index, board) from `todo` and
    /// tells their parents; pushes the parents it proves onto `todo`. The parents lie anywhere
    /// in the level, so they are first collected and their bytes prefetched, then
    /// told (`parents` is scratch space).
    fn tell_parents(&self, todo: &mut Vec<(u64, Board)>, parents: &mut Vec<Told>) {
        let (rules, index, values) = (self.rules, self.index, self.values);
        resident::hold();
        parents.clear();
        for _ in 0..TOLD_TOGETHER {
            let Some((i, child)) = todo.pop() else { break };
            let child_value = values[i as usize];
            let first = parents.len();
            rules.for_each_unmove(&child, |parent, pit| {
                // A parent with a full opponent row is not stored.
                if let Some(q) = index.rank(&parent) {
                    if parents[first..].iter().any(|t| t.0 == q && t.2 == pit) {
                        return; // proposed twice: count the move once
                    }
                    prefetch(&values[q as usize]);
                    prefetch(&self.progress[q as usize]);
                    parents.push((q, parent, pit, child, child_value));
                }
            });
        }
        for &(q, parent, pit, child, child_value) in parents.iter() {
            let v = values[q as usize];
            let state = &self.progress[q as usize];
            let waiting = state.load(Relaxed);
            if waiting == 0 || waiting > MAX_NEED {
                continue; // proven, or needing no proof
            }
            // A win waits for a child worth exactly -v; a loss for every child.
            if v > 0 && child_value != -v {
                continue;
            }
            // Confirm the edge forward: the un-move generator proposes, it does not decide.
            if rules.quiet_child(&parent, pit) != Some(child) {
                continue;
            }
            let before = state.fetch_update(Relaxed, Relaxed, |s| {
                (1..=MAX_NEED).contains(&s).then(|| s - 1)
            });
            if before == Ok(1) {
                // The count reached zero here, and only this thread saw it: the
                // board is proven, and its parents are told in turn.
                state.store(DONE, Relaxed);
                todo.push((q, parent));
            }
        }
    }
}

/// The value of any board (stored or not) from the levels in `levels`, by one ply
/// over its children when it is not stored.
///
/// # Panics
/// When `levels` lacks the board's level, or (for a board that is not
/// stored, or whose captures are looked at) a level its moves reach.
pub fn value_of(rules: Rules, board: &Board, levels: &Levels) -> Score {
    let index = Index::for_pits(rules.pits());
    if board.is_stored() {
        return levels.score(index, board);
    }
    let own = levels
        .get(board.seeds())
        .expect("the board's level is loaded");
    derive(rules, index, board, own, levels)
}
