//! One thread's search: principal variation search over a position's
//! moves, with the table, killers and history ordering them.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Instant;

use awari_dbformat::{Board, Move, Turn};

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
    /// The positions on the current line, for repetitions.
    line: Vec<u128>,
    /// Two killer moves (pits) per ply.
    killers: Vec<[u8; 2]>,
    /// A score per pit, raised by moves that cut off.
    history: [u32; 16],
    /// The principal variation found below each ply (a triangular table).
    pub(super) pv: Vec<Vec<u8>>,
}

impl<'s, 'a> Worker<'s, 'a> {
    /// A worker of `searcher` for `run`; `done` for a helper thread.
    pub(super) fn new(
        searcher: &'s Searcher<'a>,
        run: &'s Run,
        done: Option<&'s AtomicBool>,
    ) -> Self {
        Worker {
            searcher,
            run,
            done,
            nodes: 0,
            line: Vec::new(),
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
            if self.run.deadline.is_some_and(|d| Instant::now() >= d) {
                self.run.stopped.store(true, Relaxed);
            }
        }
        if self.run.stopped.load(Relaxed) || self.done.is_some_and(|d| d.load(Relaxed)) {
            return Err(Stop::Time);
        }
        Ok(())
    }

    /// The value of `board` for its mover searched to `depth` in the window
    /// `(alpha, beta)`, and whether it is proven (see the module docs).
    pub(super) fn node(
        &mut self,
        board: &Board,
        depth: u32,
        alpha: i16,
        beta: i16,
        ply: usize,
    ) -> Result<(i16, bool), Stop> {
        self.tick()?;
        self.pv[ply].clear();
        if let Some(exact) = self.exact(board)? {
            return Ok(exact);
        }
        let key = board.packed();
        if self.line.contains(&key) {
            return Ok(horizon(board, 0, alpha, beta));
        }
        let entry = self.searcher.table.get(board);
        if let Some(known) = entry.and_then(|e| table_cut(e, depth, alpha, beta)) {
            return Ok(known);
        }
        // The horizon, unless the table had a proof above.
        if depth == 0 {
            let estimate = self.searcher.limits.evaluation.of(board);
            return Ok(horizon(board, estimate, alpha, beta));
        }

        let moves = self.ordered(board, entry.and_then(|e| e.best), ply);
        self.line.push(key);
        let searched = self.search_moves(&moves, depth, alpha, beta, ply);
        self.line.pop();
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

    /// The exact value of `board` when the game is over or the databases
    /// answer its level, else `None`.
    #[inline]
    fn exact(&self, board: &Board) -> Result<Option<(i16, bool)>, Stop> {
        if let Some(v) = self.searcher.rules.terminal_value(board) {
            return Ok(Some((i16::from(v.get()), true)));
        }
        let Some(tb) = self.searcher.levels_for(board) else {
            return Ok(None);
        };
        // A database lookup costs microseconds: the table keeps its
        // answer as a proven entry.
        if let Some(e) = self.searcher.table.get(board) {
            if e.proven && e.kind == Kind::Exact {
                return Ok(Some((e.value, true)));
            }
        }
        let value = i16::from(tb.score(board)?.get());
        let entry = Entry {
            value,
            depth: u8::MAX,
            kind: Kind::Exact,
            proven: true,
            best: None,
        };
        self.searcher.table.put(board, entry);
        Ok(Some((value, true)))
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
        mut alpha: i16,
        beta: i16,
        ply: usize,
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
                self.child(m, depth - 1, alpha, beta, ply)?
            } else {
                // A null window first: is this move better than alpha?
                match self.child(m, depth - 1, alpha, alpha + 1, ply)? {
                    (v, _) if v > alpha && v < beta => {
                        self.child(m, depth - 1, alpha, beta, ply)?
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
        alpha: i16,
        beta: i16,
        ply: usize,
    ) -> Result<(i16, bool), Stop> {
        let gain = i16::from(m.captured);
        match m.turn {
            // value = gain - child: alpha < value < beta  <=>  gain - beta < child < gain - alpha.
            Turn::Passes => {
                let (v, proven) = self.node(&m.child, depth, gain - beta, gain - alpha, ply + 1)?;
                Ok((gain - v, proven))
            }
            // value = gain + child.
            Turn::Stays => {
                let (v, proven) = self.node(&m.child, depth, alpha - gain, beta - gain, ply + 1)?;
                Ok((gain + v, proven))
            }
        }
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

/// The value of a position not searched further (at the horizon, or
/// repeating one on the line): `estimate`, unproven, unless the window lies
/// beyond what the seeds on the board allow, which is proven: no player can
/// gain more than all of them.
fn horizon(board: &Board, estimate: i16, alpha: i16, beta: i16) -> (i16, bool) {
    let all = board.seeds() as i16;
    if -all >= beta {
        (-all, true)
    } else if all <= alpha {
        (all, true)
    } else {
        (estimate.clamp(-all, all), false)
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
        assert_eq!(horizon(&board, 3, -20, -7), (-7, true));
        assert_eq!(horizon(&board, 3, 7, 20), (7, true));
        assert_eq!(horizon(&board, 3, -1, 1), (3, false));
        assert_eq!(horizon(&board, 30, -1, 1), (7, false));
    }
}
