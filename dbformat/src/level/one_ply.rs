//! The value of a board from its children's values: the recurrence every
//! reader of the databases applies to a board that no level stores (a start
//! position, or any board whose opponent row is full).

use crate::game::{Board, Rules, Score};

/// The value of `board` for its mover by one ply: the best of its moves,
/// each worth its capture and its child's value ([`crate::Move::value`]),
/// with `child_score` giving the value of a child for the child's mover;
/// or, when the mover cannot move, [`Rules::terminal_value`].
///
/// # Errors
/// The first error of `child_score`.
pub fn one_ply<E>(
    rules: Rules,
    board: &Board,
    mut child_score: impl FnMut(&Board) -> Result<Score, E>,
) -> Result<Score, E> {
    if let Some(v) = rules.terminal_value(board) {
        return Ok(v);
    }
    let mut best: Option<Score> = None;
    for m in rules.legal_moves(board).iter() {
        let value = m.value(child_score(&m.child)?);
        best = best.max(Some(value));
    }
    Ok(best.expect("a board with seeds in the mover's row has a move"))
}
