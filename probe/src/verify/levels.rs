//! A board's value from its children's: the recurrence that the first pass
//! checks, with every child's value read where the levels keep it.

use awari_dbformat::level::Slot;
use awari_dbformat::{Board, Gain, Index, Levels, MoveList, Rules, Score, MAX_PITS};

/// The value of `board` from its children: `values` for quiet moves (same
/// level), `lower` for captures; [`Rules::value_without_moves`] when the
/// mover cannot move.
pub(super) fn derive(
    rules: Rules,
    index: &Index,
    board: &Board,
    values: &[i8],
    lower: &Levels,
) -> Score {
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
pub(super) struct Edge<'a> {
    /// Where the child's value is kept.
    pub(super) child: Slot<'a>,
    /// The child's index in the level, for a quiet move (unused for a capture).
    pub(super) index: usize,
    /// How the child's value becomes the mover's.
    gain: Gain,
}

impl<'a> Edge<'a> {
    /// The move of `gain` to the child whose value is at `child` (and, for
    /// a quiet move, whose place is `index`).
    pub(super) fn new(child: Slot<'a>, index: usize, gain: Gain) -> Edge<'a> {
        Edge { child, index, gain }
    }

    /// The child's value, for the child's mover.
    #[inline]
    pub(super) fn child_value(&self) -> i8 {
        self.child.score().get()
    }

    /// The move's value for the mover (see [`awari_dbformat::Move::value`]).
    #[inline]
    pub(super) fn value(&self) -> i8 {
        // (Saturating: a child's value out of range is reported on its own.)
        self.gain.value_saturating(self.child_value())
    }

    /// True for a quiet (non-capturing) move: its child is on the same level.
    #[inline]
    pub(super) fn is_quiet(&self) -> bool {
        self.gain.is_quiet()
    }
}

/// Appends an [`Edge`] for each of `moves`, in move order, and asks the cache
/// for each child's value (they are read later, see `first_pass`).
///
/// `opponent_parts`, when given, holds by pit the [`Index::opponent_part`] of
/// the quiet children of boards with this board's mover row, or [`UNKNOWN`]:
/// a quiet child's opponent row is the mover's row after sowing, so boards
/// sharing a mover row share it, and only the rest of the rank is found anew.
#[inline]
pub(super) fn push_edges<'a>(
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
            (Slot::Byte(&values[at]), at)
        } else {
            (lower.slot(&m.child), 0)
        };
        child.prefetch();
        edges.push(Edge {
            child,
            index: at,
            gain: m.gain(),
        });
    }
}

/// The value a board's moves give it: the best move, or `no_move` when
/// there is none (`-n`, the opponent taking every seed; 0 under cross-wari).
pub(super) fn derive_from(moves: &[Edge], no_move: i8) -> i8 {
    moves.iter().map(Edge::value).max().unwrap_or(no_move)
}

/// An opponent part not yet found (see `push_edges`).
pub(super) const UNKNOWN: u64 = u64::MAX;
