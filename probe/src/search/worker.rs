//! One thread's search: principal variation search over a position's
//! moves, with the table, killers and history ordering them.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use awari_dbformat::{Board, Move, Turn};

use super::game::{repetition_key, RepetitionRule, Stakes};
use super::line::Line;
use super::run::{Run, Stop, CLOCK_EVERY};
use super::searcher::Searcher;
use super::table::{Entry, Kind};
use super::{INFINITE, MAX_DEPTH};

/// One thread's search.
pub(super) struct Worker<'s, 'a> {
    searcher: &'s Searcher<'a>,
    run: &'s Run,
    /// For a helper thread: set when the main thread is done.
    done: Option<&'s AtomicBool>,
    nodes: u64,
    /// The positions since the last capture, for repetitions.
    line: Line,
    /// Under a rule that ends the game at a repetition: whether the
    /// databases' estimates end a line wherever it reaches them (the root
    /// is above the levels), or only at the horizon (an endgame).
    levels_are_leaves: bool,
    /// Two killer moves (pits) per ply.
    killers: Vec<[u8; 2]>,
    /// A score per pit, raised by moves that cut off.
    history: [u32; 16],
    /// The principal variation found below each ply (a triangular table).
    pub(super) pv: Vec<Vec<u8>>,
}

impl<'s, 'a> Worker<'s, 'a> {
    /// A worker of `searcher` for `run` from `root`; `done` for a helper
    /// thread.
    pub(super) fn new(
        searcher: &'s Searcher<'a>,
        run: &'s Run,
        root: &Board,
        done: Option<&'s AtomicBool>,
    ) -> Self {
        Worker {
            searcher,
            run,
            done,
            nodes: 0,
            line: Line::new(&searcher.game, root),
            levels_are_leaves: searcher.levels_for(root).is_none(),
            killers: vec![[u8::MAX; 2]; MAX_DEPTH as usize + 2],
            history: [0; 16],
            pv: vec![Vec::new(); MAX_DEPTH as usize + 2],
        }
    }

    /// Counts a position and looks at the clock now and then.
    fn tick(&mut self) -> Result<(), Stop> {
        self.nodes += 1;
        if self.nodes.is_multiple_of(CLOCK_EVERY) {
            self.run.nodes.fetch_add(CLOCK_EVERY, Relaxed);
            self.run.out_of_time();
        }
        if self.run.stopped.load(Relaxed) || self.done.is_some_and(|d| d.load(Relaxed)) {
            return Err(Stop::Time);
        }
        Ok(())
    }

    /// The score of `board` for its mover searched to `depth` in the window
    /// `(alpha, beta)`, and whether it is proven (see the module docs). The
    /// score is the margin, or with `stakes` active the margin with the
    /// result's bonus ([`Stakes::score`]).
    pub(super) fn node(
        &mut self,
        board: &Board,
        depth: u32,
        (alpha, beta): (i16, i16),
        ply: usize,
        stakes: Stakes,
    ) -> Result<(i16, bool), Stop> {
        self.tick()?;
        self.pv[ply].clear();
        if let Some(v) = self.searcher.rules.terminal_value(board) {
            return Ok((stakes.score(i16::from(v.get())), true));
        }
        let key = repetition_key(board, ply);
        if let Some(ended) = self.repetition(board, key, alpha, beta, stakes) {
            return Ok(ended);
        }
        let salt = self.line.salt(ply) ^ stakes.salt();
        // The databases: exact under the even split. Under a rule they do
        // not hold for they are estimates, never at the root (its moves
        // are searched), and when the root itself is in the databases only
        // at the horizon: an endgame is searched for its repetitions.
        let levels = match self.searcher.game.repetition {
            RepetitionRule::EvenSplit => true,
            _ => ply > 0 && (self.levels_are_leaves || depth == 0),
        };
        if levels {
            if let Some(leaf) = self.level(board, alpha, beta, stakes)? {
                return Ok(leaf);
            }
        }
        let entry = self.searcher.table.get(board, salt);
        if let Some(known) = entry.and_then(|e| table_cut(e, depth, alpha, beta)) {
            return Ok(known);
        }
        // The horizon, unless the table had a proof above.
        if depth == 0 {
            return self.quiesce(board, (alpha, beta), stakes, QUIESCENCE_PLIES);
        }

        let moves = self.ordered(board, entry.and_then(|e| e.best), ply);
        self.line.push(key);
        let searched = self.search_moves(&moves, depth, (alpha, beta), ply, stakes);
        self.line.pop(key);
        let best = searched?;
        let kind = if best.value >= beta {
            Kind::Lower
        } else if best.value <= alpha {
            Kind::Upper
        } else {
            Kind::Exact
        };
        self.searcher.table.put(
            board,
            salt,
            Entry {
                value: best.value,
                depth: depth.min(255) as u8,
                kind,
                proven: best.proven,
                best: best.pit,
            },
        );
        Ok((best.value, best.proven))
    }

    /// When the position of `key` ends the game by repetition, its score:
    /// each side takes its own row under `own-rows` and `three-fold`
    /// (exact); a cycle is worth 0 under the even split, as an estimate.
    #[inline]
    fn repetition(
        &self,
        board: &Board,
        key: u128,
        alpha: i16,
        beta: i16,
        stakes: Stakes,
    ) -> Option<(i16, bool)> {
        let earlier = self.line.earlier(key);
        if earlier == 0 {
            return None;
        }
        match self.searcher.game.repetition.ending_after() {
            None => Some(horizon(board, 0, alpha, beta, stakes)),
            Some(after) if earlier >= after => {
                let row = |r: &[u8]| r.iter().map(|&n| i16::from(n)).sum::<i16>();
                let v = row(board.mover_row()) - row(board.opponent_row());
                Some((stakes.score(v), true))
            }
            Some(_) => None,
        }
    }

    /// The score of `board` at the horizon: the estimate, or better for the
    /// mover a capture followed by the same (up to `plies` captures in a
    /// row), so that the horizon does not fall in the middle of an exchange.
    /// The mover may stand on the estimate instead of capturing; a result
    /// is proven only when the seeds on the board or a proven capture decide
    /// the window.
    fn quiesce(
        &mut self,
        board: &Board,
        (mut alpha, beta): (i16, i16),
        stakes: Stakes,
        plies: u32,
    ) -> Result<(i16, bool), Stop> {
        self.tick()?;
        if let Some(v) = self.searcher.rules.terminal_value(board) {
            return Ok((stakes.score(i16::from(v.get())), true));
        }
        let estimate = self.searcher.limits.evaluation.of(board);
        let stand = horizon(board, estimate, alpha, beta, stakes);
        if stand.1 || plies == 0 || stand.0 >= beta {
            return Ok(stand);
        }
        let mut best = stand.0;
        alpha = alpha.max(best);
        // The captures, largest first, on the stack (this runs at every
        // leaf): a row holds at most MAX_PITS moves.
        let mut captures = [None::<Move>; awari_dbformat::MAX_PITS as usize];
        let mut count = 0;
        for m in self.searcher.rules.legal_moves(board).iter() {
            if m.captured > 0 {
                captures[count] = Some(*m);
                count += 1;
            }
        }
        let captures = &mut captures[..count];
        captures.sort_by_key(|m| std::cmp::Reverse(m.map_or(0, |m| m.captured)));
        for m in captures.iter().flatten() {
            let gain = i16::from(m.captured);
            let passes = m.turn == Turn::Passes;
            let child_stakes = stakes.child(gain, passes);
            let window = if passes {
                (gain - beta, gain - alpha)
            } else {
                (alpha - gain, beta - gain)
            };
            let (v, proven) = match self.level(&m.child, window.0, window.1, child_stakes)? {
                Some(found) => found,
                None => self.quiesce(&m.child, window, child_stakes, plies - 1)?,
            };
            let v = if passes { gain - v } else { gain + v };
            if v >= beta {
                return Ok((v, proven));
            }
            if v > best {
                best = v;
                alpha = alpha.max(v);
            }
        }
        Ok((best, false))
    }

    /// When the databases answer `board`'s level, its score: exact under
    /// the even split, else the even split's value as an estimate (within
    /// the window's proven bounds, [`horizon`]). `None` otherwise.
    #[inline]
    fn level(
        &self,
        board: &Board,
        alpha: i16,
        beta: i16,
        stakes: Stakes,
    ) -> Result<Option<(i16, bool)>, Stop> {
        let Some(tb) = self.searcher.levels_for(board) else {
            return Ok(None);
        };
        let exact = self.searcher.game.repetition == RepetitionRule::EvenSplit;
        // A database lookup costs microseconds: the table keeps its
        // answer (the margin) as an entry of depth 255.
        let cached = self
            .searcher
            .table
            .get(board, LEVEL_SALT)
            .filter(|e| e.depth == u8::MAX && e.kind == Kind::Exact);
        let value = match cached {
            Some(e) => e.value,
            None => {
                let value = i16::from(tb.score(board)?.get());
                let entry = Entry {
                    value,
                    depth: u8::MAX,
                    kind: Kind::Exact,
                    proven: exact,
                    best: None,
                };
                self.searcher.table.put(board, LEVEL_SALT, entry);
                value
            }
        };
        Ok(Some(if exact {
            (stakes.score(value), true)
        } else {
            horizon(board, value, alpha, beta, stakes)
        }))
    }

    /// Searches `moves` (in order, the first with the full window, the others
    /// with a null window first) to `depth` in the window `(alpha, beta)`
    /// until one cuts off; keeps the principal variation of `ply`, the
    /// killers and the history up to date.
    #[inline]
    fn search_moves(
        &mut self,
        moves: &[Move],
        depth: u32,
        (mut alpha, beta): (i16, i16),
        ply: usize,
        stakes: Stakes,
    ) -> Result<Best, Stop> {
        let mut best = Best {
            value: -INFINITE,
            pit: None,
            proven: true,
        };
        let mut all_proven = true;
        let mut cut_proven = None;
        for (k, m) in moves.iter().enumerate() {
            let (v, proven) = if k == 0 {
                self.child(m, depth - 1, (alpha, beta), ply, stakes)?
            } else {
                // A null window first: is this move better than alpha?
                match self.child(m, depth - 1, (alpha, alpha + 1), ply, stakes)? {
                    (v, _) if v > alpha && v < beta => {
                        self.child(m, depth - 1, (alpha, beta), ply, stakes)?
                    }
                    other => other,
                }
            };
            if v > best.value {
                best.value = v;
                best.pit = Some(m.pit);
            }
            if v >= beta {
                cut_proven = Some(proven);
                if m.captured == 0 {
                    self.remember_cut(m.pit, depth, ply);
                }
                break;
            }
            all_proven &= proven;
            if v > alpha {
                alpha = v;
                self.extend_pv(ply, m.pit);
            }
        }
        best.proven = cut_proven.unwrap_or(all_proven);
        Ok(best)
    }

    /// A quiet move `pit` cut off at `ply`: it becomes the first killer
    /// there, and its history rises.
    #[inline]
    fn remember_cut(&mut self, pit: u8, depth: u32, ply: usize) {
        let killers = &mut self.killers[ply];
        if killers[0] != pit {
            killers[1] = killers[0];
            killers[0] = pit;
        }
        self.history[pit as usize] += depth * depth;
    }

    /// A new best line at `ply`: the move `pit`, then the child's line.
    #[inline]
    fn extend_pv(&mut self, ply: usize, pit: u8) {
        let (here, below) = self.pv.split_at_mut(ply + 1);
        here[ply].clear();
        here[ply].push(pit);
        here[ply].extend_from_slice(&below[0]);
    }

    /// The value of move `m` for the mover, its child searched to `depth`
    /// with the window turned to the child's mover.
    fn child(
        &mut self,
        m: &Move,
        depth: u32,
        (alpha, beta): (i16, i16),
        ply: usize,
        stakes: Stakes,
    ) -> Result<(i16, bool), Stop> {
        let gain = i16::from(m.captured);
        let passes = m.turn == Turn::Passes;
        let stakes = stakes.child(gain, passes);
        let entered = self.line.enter(m.captured > 0);
        let found = if passes {
            // value = gain - child: alpha < value < beta  <=>  gain - beta < child < gain - alpha.
            self.node(
                &m.child,
                depth,
                (gain - beta, gain - alpha),
                ply + 1,
                stakes,
            )
            .map(|(v, proven)| (gain - v, proven))
        } else {
            // value = gain + child.
            self.node(
                &m.child,
                depth,
                (alpha - gain, beta - gain),
                ply + 1,
                stakes,
            )
            .map(|(v, proven)| (gain + v, proven))
        };
        self.line.leave(entered);
        found
    }

    /// The legal moves of `board` in the order to try them: the table's
    /// best, then captures (largest first), the killers, then by history.
    fn ordered(&self, board: &Board, table_best: Option<u8>, ply: usize) -> Vec<Move> {
        let mut moves: Vec<Move> = self
            .searcher
            .rules
            .legal_moves(board)
            .iter()
            .copied()
            .collect();
        let killers = self.killers[ply];
        let rank = |m: &Move| -> u64 {
            if Some(m.pit) == table_best {
                u64::MAX
            } else if m.captured > 0 {
                (1 << 40) + u64::from(m.captured)
            } else if m.pit == killers[0] {
                (1 << 39) + 1
            } else if m.pit == killers[1] {
                1 << 39
            } else {
                u64::from(self.history[m.pit as usize])
            }
        };
        moves.sort_by_key(|m| std::cmp::Reverse(rank(m)));
        moves
    }
}

/// Captures in a row searched at the horizon ([`Worker::quiesce`]).
const QUIESCENCE_PLIES: u32 = 8;

/// The table's key salt of a database value kept there: it depends on the
/// board alone, whatever the history or the stakes.
const LEVEL_SALT: u64 = 0x6A09_E667_F3BC_C908;

/// What the moves of a node found: the best value, its move, and whether
/// the value is proven (a cut-off when its move is, else when every move is).
struct Best {
    value: i16,
    pit: Option<u8>,
    proven: bool,
}

/// The table's answer for a node, when `entry` settles the window
/// `(alpha, beta)` at `depth`: a proven entry at any depth, another at its
/// own depth or less, and not on the principal variation, whose line a
/// cut-off would cut short.
#[inline]
fn table_cut(entry: Entry, depth: u32, alpha: i16, beta: i16) -> Option<(i16, bool)> {
    let pv_node = beta - alpha > 1;
    if entry.proven || (entry.depth as u32 >= depth && !pv_node) {
        let cut = match entry.kind {
            Kind::Exact => true,
            Kind::Lower => entry.value >= beta,
            Kind::Upper => entry.value <= alpha,
        };
        if cut {
            return Some((entry.value, entry.proven));
        }
    }
    None
}

/// The score of a position not searched further (at the horizon, repeating
/// one on the line, or a database value that is only an estimate):
/// `estimate`, unproven, unless the window lies beyond what the seeds on the
/// board allow, which is proven: no player can gain more than all of them.
fn horizon(board: &Board, estimate: i16, alpha: i16, beta: i16, stakes: Stakes) -> (i16, bool) {
    let all = board.seeds() as i16;
    let (lo, hi, e) = stakes.range(-all, all, estimate);
    if lo >= beta {
        (lo, true)
    } else if hi <= alpha {
        (hi, true)
    } else {
        (e, false)
    }
}

impl Drop for Worker<'_, '_> {
    fn drop(&mut self) {
        self.run.nodes.fetch_add(self.nodes % CLOCK_EVERY, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::search::Evaluation;

    #[test]
    fn estimates_and_the_bounds_of_the_horizon() {
        let board: Board = "4 0 0 0 0 1 / 1 1 0 0 0 0".parse().unwrap();
        assert_eq!(Evaluation::Captured.of(&board), 0);
        assert_eq!(Evaluation::SeedsOnSide(1).of(&board), 3);
        assert_eq!(Evaluation::SeedsOnSide(2).of(&board), 1);
        // 7 seeds: a window beyond them is decided, and proven.
        let m = Stakes::MARGIN;
        assert_eq!(horizon(&board, 3, -20, -7, m), (-7, true));
        assert_eq!(horizon(&board, 3, 7, 20, m), (7, true));
        assert_eq!(horizon(&board, 3, -1, 1, m), (3, false));
        assert_eq!(horizon(&board, 30, -1, 1, m), (7, false));
        // The mover's "4 0 0 0 0 1": 5 seeds, 4 empty houses, one of 1;
        // the opponent's "1 1 0 0 0 0": 2 seeds, 4 empty, two of 1.
        assert_eq!(crate::search::features(&board), [3, 0, -1, 0, 1]);
        let weights = [16, 0, -32, 0, 8];
        // 3 - (-2) + 0.5 = 5.5 seeds, rounded to 6.
        assert_eq!(Evaluation::Weighted(weights).of(&board), 6);
    }
}
