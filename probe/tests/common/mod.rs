//! What the verifier's tests share.

use awari_dbformat::{Index, Rules};

/// A drawn board of level `n` with quiet moves only, all into drawn boards:
/// nothing but a false claim can make it a win.
pub fn drawn_board_with_drawn_children(rules: Rules, n: u32, values: &[i8]) -> u64 {
    let index = Index::for_pits(rules.pits());
    (0..values.len() as u64)
        .find(|&i| {
            let moves = rules.legal_moves(&index.unrank(n, i).unwrap());
            values[i as usize] == 0
                && !moves.is_empty()
                && moves
                    .iter()
                    .all(|m| m.is_quiet() && values[index.rank(&m.child).unwrap() as usize] == 0)
        })
        .expect("such a board in the level")
}
