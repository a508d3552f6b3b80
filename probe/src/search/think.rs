//! Thinking for a move in a game: iterative deepening for all the time
//! given, each completed iteration reported (an engine's `info` lines), and
//! stopped early from outside (an engine's `stop`).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use awari_dbformat::Board;

use super::game::Stakes;
use super::run::Run;
use super::searcher::Searcher;
use super::{INFINITE, MAX_DEPTH};
use crate::error::ProbeError;

/// One completed iteration of [`Searcher::think`].
#[derive(Clone, Debug)]
pub struct Iteration {
    /// The depth searched, in plies.
    pub depth: u32,
    /// The margin the mover can expect (the seeds it will still capture
    /// minus the opponent's), at this depth.
    pub margin: i16,
    /// The result for the mover when it is certain (exact leaves only,
    /// with the captured seeds known): `Some(1)` a win, `Some(0)` a draw,
    /// `Some(-1)` a loss; `None` when not proven.
    pub result: Option<i8>,
    /// True when the margin is proven exact.
    pub proven: bool,
    /// The principal variation (pits of each mover), best move first.
    pub pv: Vec<u8>,
    /// Positions searched so far, by all threads.
    pub nodes: u64,
    /// Seconds since the search started.
    pub seconds: f64,
}

impl Searcher<'_> {
    /// Thinks about `board` within the limits (all the time for deepening;
    /// no proof of bounds afterwards) and the game set by
    /// [`Searcher::set_game`], calling `report` after each completed
    /// iteration; stops early when `abort` is set. Returns the last
    /// completed iteration, or `None` when the board has no move or no
    /// iteration completed (then any legal move will do).
    ///
    /// # Errors
    /// A level file that cannot be read.
    pub fn think(
        &self,
        board: &Board,
        abort: Arc<AtomicBool>,
        mut report: impl FnMut(&Iteration),
    ) -> Result<Option<Iteration>, ProbeError> {
        let started = Instant::now();
        if self.rules.legal_moves(board).is_empty() {
            return Ok(None);
        }
        let run = Run::new(&self.limits, started).with_abort(abort);
        let stakes = Stakes::root(&self.game);
        let max = self.limits.depth.unwrap_or(MAX_DEPTH);
        let mut last: Option<Iteration> = None;
        for depth in 1..=max {
            let Some((score, proven, line)) = self.root(board, depth, -INFINITE, INFINITE, &run)?
            else {
                break;
            };
            let margin = stakes.margin(score);
            let iteration = Iteration {
                depth,
                margin,
                result: stakes.result(score, proven),
                proven,
                pv: self.pv(board, line, MAX_DEPTH as usize),
                nodes: run.nodes.load(Relaxed),
                seconds: started.elapsed().as_secs_f64(),
            };
            report(&iteration);
            last = Some(iteration);
            if proven || run.stopped.load(Relaxed) {
                break; // Deeper searches find the same.
            }
        }
        Ok(last.filter(|it| !it.pv.is_empty()))
    }
}
