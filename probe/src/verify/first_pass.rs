//! The first pass over a level: every board's value derived from its
//! children and compared, the certificate's proofs checked, and the proof
//! search's progress states set.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

use awari_dbformat::index::Tile;
use awari_dbformat::memory::cache::prefetch;
use awari_dbformat::memory::resident;
use awari_dbformat::{Board, MAX_PITS};
use rayon::prelude::*;

use super::levels::{derive_from, push_edges, Edge, UNKNOWN};
use super::prover::initial_progress;
use super::{Level, Mismatch};

/// Boards whose children are looked up together in the first pass.
const GROUP: usize = 32;

/// The most mover rows in a tile of the first pass: a run of boards is then
/// a cache line of values.
const TILE_WIDTH: usize = 64;

/// What the first pass finds: the boards whose value differs from what their
/// children give (in index order), and how many boards the certificate, when
/// there is one, does not prove at once.
pub(super) struct FirstPass {
    /// The boards whose value differs from what their children give.
    pub(super) mismatches: Vec<Mismatch>,
    /// Boards the certificate does not prove at once (0 without one).
    pub(super) uncertified: u64,
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
///
/// [`Index::tiles`]: awari_dbformat::Index::tiles
pub(super) fn first_pass(
    level: &Level,
    certificate: Option<&[u16]>,
    progress: Option<&[AtomicU8]>,
    tick: &(dyn Fn(u64) + Sync),
) -> FirstPass {
    // Boards whose value the certificate does not prove at once.
    let uncertified = AtomicU64::new(0);
    let pass = Pass {
        level,
        certificate,
        progress,
        uncertified: &uncertified,
        n: level.seeds as i8,
        no_move: level.rules.value_without_moves(level.seeds).get(),
    };
    let tiles = level.index.tiles(level.seeds, TILE_WIDTH);
    let mut mismatches: Vec<Mismatch> = tiles
        .par_iter()
        .flat_map_iter(|tile| {
            let found = pass.tile(tile);
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

/// What every tile of the first pass shares.
struct Pass<'p, 'a> {
    level: &'p Level<'a>,
    certificate: Option<&'p [u16]>,
    progress: Option<&'p [AtomicU8]>,
    uncertified: &'p AtomicU64,
    /// The largest value in range, the level's seed count.
    n: i8,
    /// The value of a board without a move.
    no_move: i8,
}

impl<'a> Pass<'_, 'a> {
    /// Checks the boards of `tile`, a group at a time: their mismatches.
    fn tile(&self, tile: &Tile) -> Vec<Mismatch> {
        let mut found = Vec::new();
        let mut group = Group::new(tile.width());
        // Only the first board of each run is ranked (see `Tile::boards`).
        let mut boards = tile.boards().enumerate();
        loop {
            // (Where the levels are in files: see `resident::hold`.)
            resident::hold();
            group.gather(self.level, &mut boards, tile.width());
            if group.boards.is_empty() {
                break;
            }
            if let Some(generations) = self.certificate {
                group.prefetch_generations(self.level.values, generations);
            }
            for (i, moves) in group.members() {
                if let Some(mismatch) = self.check(i, moves) {
                    found.push(mismatch);
                }
            }
        }
        found
    }

    /// Checks board `i`, whose moves are `moves`, against them and against
    /// the certificate, and sets its progress state.
    #[inline]
    fn check(&self, i: usize, moves: &[Edge]) -> Option<Mismatch> {
        let (n, stored) = (self.n, self.level.values[i]);
        if let Some(generations) = self.certificate {
            if !certified(stored, || generations[i], moves, |k| generations[k]) {
                self.uncertified.fetch_add(1, Relaxed);
            }
        }
        let derived = if (-n..=n).contains(&stored) {
            if let Some(progress) = self.progress {
                progress[i].store(initial_progress(stored, moves), Relaxed);
            }
            derive_from(moves, self.no_move)
        } else {
            i8::MIN
        };
        if derived == stored {
            return None;
        }
        let seeds = self.level.seeds;
        let reason = if derived == i8::MIN {
            format!("value {stored} is outside -{seeds}..={seeds}")
        } else {
            "recurrence".into()
        };
        let board = self.level.board(i as u64);
        Some(self.level.mismatch(&board, i as u64, derived, reason))
    }
}

/// A group of boards of one tile whose own values and children's values
/// are looked up together: first all are asked for, then read.
struct Group<'a> {
    /// `(index, its first edge)` of each board.
    boards: Vec<(usize, usize)>,
    /// The moves of the boards, one after the other.
    edges: Vec<Edge<'a>>,
    /// By mover row of the tile: the opponent parts of its quiet children.
    opponent_parts: Vec<[u64; MAX_PITS as usize]>,
    /// The index of the first board of the current run.
    run_start: usize,
}

impl<'a> Group<'a> {
    fn new(width: usize) -> Group<'a> {
        Group {
            boards: Vec::with_capacity(GROUP),
            edges: Vec::with_capacity(GROUP * 8),
            opponent_parts: vec![[UNKNOWN; MAX_PITS as usize]; width],
            run_start: 0,
        }
    }

    /// Takes the next [`GROUP`] boards of a tile `width` mover rows wide
    /// (numbered within the tile) and asks for their values and their
    /// children's.
    #[inline]
    fn gather(
        &mut self,
        level: &Level<'a>,
        boards: &mut impl Iterator<Item = (usize, Board)>,
        width: usize,
    ) {
        let (rules, index, values) = (level.rules, level.index, level.values);
        self.boards.clear();
        self.edges.clear();
        for (k, board) in boards.by_ref().take(GROUP) {
            let t = k % width;
            if t == 0 {
                self.run_start = index.rank(&board).expect("the board is stored") as usize;
            }
            let i = self.run_start + t;
            prefetch(&values[i]);
            self.boards.push((i, self.edges.len()));
            let moves = rules.legal_moves(&board);
            let parts = Some(&mut self.opponent_parts[t]);
            push_edges(index, &moves, values, level.lower, parts, &mut self.edges);
        }
    }

    /// The certificate is read only where a child's value equals the
    /// board's, negated (see `certified`): none for a draw, and few for the
    /// others. So, once the values are here, asks for just those
    /// generations, and the board's own.
    #[inline]
    fn prefetch_generations(&self, values: &[i8], generations: &[u16]) {
        for (i, moves) in self.members() {
            let stored = values[i];
            if stored == 0 {
                continue;
            }
            prefetch(&generations[i]);
            for e in moves {
                if e.is_quiet() && e.child_value() == -stored {
                    prefetch(&generations[e.index]);
                }
            }
        }
    }

    /// Each board of the group: its index and its moves.
    #[inline]
    fn members(&self) -> impl Iterator<Item = (usize, &[Edge<'a>])> + '_ {
        self.boards.iter().enumerate().map(|(g, &(i, first))| {
            let last = self
                .boards
                .get(g + 1)
                .map_or(self.edges.len(), |next| next.1);
            (i, &self.edges[first..last])
        })
    }
}

/// True when the certificate proves the value `stored` of a board with
/// `moves` at once: a win keeps its value by a capture, or by a quiet move
/// to a loss decided in an earlier generation; a loss `-k` has only quiet
/// children worth more than `k`, or worth `k` and decided earlier. See the
/// module docs, "Certificates". `own()` is the board's generation (read
/// only for a non-zero value), `generation(e)` that of the quiet child of
/// [`Edge::index`] `e`.
pub(super) fn certified(
    stored: i8,
    own: impl Fn() -> u16,
    moves: &[Edge],
    generation: impl Fn(usize) -> u16,
) -> bool {
    match stored {
        0 => true,
        v if v > 0 => moves.iter().any(|m| {
            if m.is_quiet() {
                m.child_value() == -v && generation(m.index) < own()
            } else {
                m.value() >= v
            }
        }),
        v => moves.iter().filter(|m| m.is_quiet()).all(|m| {
            let child = m.child_value();
            child > -v || (child == -v && generation(m.index) < own())
        }),
    }
}
