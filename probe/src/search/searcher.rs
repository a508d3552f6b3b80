//! The searcher: iterative deepening, the null-window proofs of bounds and
//! of results, the threads of one search, and the principal variation.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use awari_dbformat::{Board, Outcome, Rules, Score};

use super::game::{repetition_key, Game, RepetitionRule, Stakes};
use super::line::Line;
use super::run::{Run, Stop};
use super::table::Table;
use super::worker::Worker;
use super::{Answer, Bound, Limits, OutcomeProof, SearchResult, INFINITE, MAX_DEPTH};
use crate::error::ProbeError;
use crate::tablebase::Tablebase;

/// A search over one [`Tablebase`]: its levels are the exact leaves.
pub struct Searcher<'a> {
    /// The databases, if any.
    tb: Option<&'a Tablebase>,
    /// The rules of the game searched.
    pub(super) rules: Rules,
    /// Bit n: boards of n seeds are read from the databases
    /// ([`Tablebase::answers_level`]).
    exact_levels: u128,
    /// The transposition table, kept from one search to the next.
    pub(super) table: Table,
    /// How far and how long to search.
    pub(super) limits: Limits,
    /// The game around the board searched: repetitions, captured seeds.
    pub(super) game: Game,
}

impl<'a> Searcher<'a> {
    /// A searcher whose leaves come from `tb` (the levels it answers alone,
    /// [`Tablebase::answers_level`]).
    pub fn new(tb: &'a Tablebase, limits: Limits) -> Searcher<'a> {
        let exact_levels = (0..=awari_dbformat::MAX_SEEDS)
            .filter(|&n| tb.answers_level(n))
            .fold(0u128, |bits, n| bits | 1 << n);
        Searcher {
            tb: Some(tb),
            rules: tb.rules(),
            exact_levels,
            table: Table::new(limits.hash_bytes),
            limits,
            game: Game::default(),
        }
    }

    /// A searcher without databases: only game ends are exact leaves (to
    /// measure what the databases bring).
    pub fn without_levels(rules: Rules, limits: Limits) -> Searcher<'static> {
        Searcher {
            tb: None,
            rules,
            exact_levels: 0,
            table: Table::new(limits.hash_bytes),
            limits,
            game: Game::default(),
        }
    }

    /// The same searcher for `game`: its repetition rule and history, and
    /// the seeds captured so far (then the search plays for the result).
    pub fn with_game(mut self, game: Game) -> Self {
        self.game = game;
        self
    }

    /// Sets the game around the next boards searched ([`Searcher::with_game`]);
    /// the transposition table is kept.
    pub fn set_game(&mut self, game: Game) {
        self.game = game;
    }

    /// Changes the limits of the next searches; the transposition table is
    /// kept (a new size of table is taken by a new searcher only).
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Empties the transposition table (a new game).
    pub fn clear_table(&mut self) {
        self.table = Table::new(self.limits.hash_bytes);
    }

    /// The databases, when `board`'s level is among those they answer.
    pub(super) fn levels_for(&self, board: &Board) -> Option<&'a Tablebase> {
        self.tb
            .filter(|_| self.exact_levels >> board.seeds() & 1 == 1)
    }

    /// Searches `board` by iterative deepening within the limits (two thirds
    /// of the time), then, when the value found is not exact, tries to prove
    /// it a lower or an upper bound by null-window searches at the same depth
    /// (the rest of the time). A board whose level is present gets the
    /// databases' answer.
    ///
    /// # Errors
    /// A level file that cannot be read.
    pub fn search(&self, board: &Board) -> Result<SearchResult, ProbeError> {
        let started = Instant::now();
        let plain =
            self.game.repetition == RepetitionRule::EvenSplit && self.game.captured.is_none();
        if let (true, Some(tb)) = (plain, self.levels_for(board)) {
            // In the databases: their answer.
            let analysis = tb.analyse(board)?;
            let pv = tb.principal_variation(board, MAX_DEPTH as usize)?;
            return Ok(SearchResult {
                value: analysis.value,
                bound: Bound::Exact,
                depth: 0,
                nodes: 1,
                best: analysis.best.first().copied(),
                pv: pv.steps.iter().map(|s| s.mov.pit).collect(),
                seconds: started.elapsed().as_secs_f64(),
            });
        }
        // Two thirds of the time for deepening, the rest for the bounds.
        let deepening = Limits {
            time: self.limits.time.map(|t| t * 2 / 3),
            ..self.limits.clone()
        };
        let run = Run::new(&deepening, started);
        // Bounds are proven on the score; the value reported is its margin.
        let (value, proven, depth, line) = self.deepen(board, &run)?;
        let stakes = Stakes::root(&self.game);
        let mut bound = if proven {
            Bound::Exact
        } else {
            Bound::Estimate
        };
        // Not exact: is the value at least or at most what was found? Each
        // null-window search has the depth reached, and a time of its own.
        if bound == Bound::Estimate && depth > 0 {
            let proof = Run::new(&self.limits, started);
            if let Some((v, true, _)) = self.root(board, depth, value - 1, value, &proof)? {
                if v >= value {
                    bound = Bound::Lower;
                }
            }
            if bound == Bound::Estimate {
                if let Some((v, true, _)) = self.root(board, depth, value, value + 1, &proof)? {
                    if v <= value {
                        bound = Bound::Upper;
                    }
                }
            }
            run.nodes.fetch_add(proof.nodes.load(Relaxed), Relaxed);
        }
        // The line of the last iteration, continued from the table.
        let pv = self.pv(board, line, MAX_DEPTH as usize);
        // (No iteration completed: the first legal move.)
        let best = pv.first().copied().or_else(|| {
            let moves = self.rules.legal_moves(board);
            let first = moves.iter().next().map(|m| m.pit);
            first
        });
        let margin = stakes
            .margin(value)
            .clamp(-(board.seeds() as i16), board.seeds() as i16);
        Ok(SearchResult {
            value: Score::new(margin as i8),
            bound,
            depth,
            nodes: run.nodes.load(Relaxed),
            best,
            pv,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Searches `board` ([`Searcher::search`]), then, unless its value is
    /// exact, tries to prove the result for `captured` (the seeds taken by
    /// the mover and by the opponent) in what is left of the time
    /// ([`Searcher::prove_outcome`]).
    ///
    /// # Errors
    /// A level file that cannot be read.
    pub fn answer(&self, board: &Board, captured: (u32, u32)) -> Result<Answer, ProbeError> {
        let search = self.search(board)?;
        if search.bound == Bound::Exact {
            return Ok(Answer {
                outcome: search.value.outcome(captured.0, captured.1),
                outcome_proven: true,
                search,
            });
        }
        let spent = Duration::from_secs_f64(search.seconds);
        let left = self.limits.time.map(|t| t.saturating_sub(spent));
        let proof = self.prove_outcome(board, captured, left)?;
        Ok(Answer {
            outcome: proof.outcome,
            outcome_proven: proof.proven,
            search,
        })
    }

    /// Tries to prove the result of the game from `board` when the mover has
    /// captured `captured.0` seeds and the opponent `captured.1`: null-window
    /// searches at the value where the result changes, deepening within
    /// `time` (`None`: no limit) and the depth limit until both sides of it
    /// are proven. The table of earlier searches is used.
    /// The result returned unproven is the one the deepest search points to.
    ///
    /// # Errors
    /// A level file that cannot be read.
    pub fn prove_outcome(
        &self,
        board: &Board,
        captured: (u32, u32),
        time: Option<Duration>,
    ) -> Result<OutcomeProof, ProbeError> {
        // The mover wins when its value is above t, draws at t.
        let t = (i64::from(captured.1) - i64::from(captured.0)).clamp(-200, 200) as i16;
        let limits = Limits {
            time,
            ..self.limits.clone()
        };
        let run = Run::new(&limits, Instant::now());
        let mut guess = None;
        let max = self.limits.depth.unwrap_or(MAX_DEPTH);
        for depth in 1..=max {
            // Above t?
            let Some((above, above_proven, _)) = self.root(board, depth, t, t + 1, &run)? else {
                break;
            };
            if above > t {
                guess = Some(Outcome::Win);
                if above_proven {
                    return Ok(OutcomeProof {
                        outcome: Outcome::Win,
                        proven: true,
                    });
                }
                continue;
            }
            // At most t; at least t?
            let Some((below, below_proven, _)) = self.root(board, depth, t - 1, t, &run)? else {
                break;
            };
            let outcome = if below >= t {
                Outcome::Draw
            } else {
                Outcome::Loss
            };
            guess = Some(outcome);
            if above_proven && below_proven {
                return Ok(OutcomeProof {
                    outcome,
                    proven: true,
                });
            }
        }
        Ok(OutcomeProof {
            outcome: guess.unwrap_or(Outcome::Draw),
            proven: false,
        })
    }

    /// Iterative deepening with full windows: the value, whether it is
    /// proven, and the depth, of the last iteration completed.
    fn deepen(&self, board: &Board, run: &Run) -> Result<(i16, bool, u32, Vec<u8>), ProbeError> {
        let max = self.limits.depth.unwrap_or(MAX_DEPTH);
        let mut last = (0, false, 0, Vec::new());
        for depth in 1..=max {
            match self.root(board, depth, -INFINITE, INFINITE, run)? {
                Some((value, proven, pv)) => {
                    last = (value, proven, depth, pv);
                    if proven {
                        break; // Deeper searches find the same.
                    }
                }
                None => break,
            }
        }
        Ok(last)
    }

    /// One search of `board` to `depth` in the window `(alpha, beta)` by all
    /// threads: the value, whether it is proven, and the principal variation
    /// (pits); `None` when the time ran out first.
    pub(super) fn root(
        &self,
        board: &Board,
        depth: u32,
        alpha: i16,
        beta: i16,
        run: &Run,
    ) -> Result<Option<(i16, bool, Vec<u8>)>, ProbeError> {
        let threads = self.limits.threads.max(1);
        let stakes = Stakes::root(&self.game);
        let helpers_done = AtomicBool::new(false);
        let result = std::thread::scope(|scope| {
            // Helper threads search the same tree, some a ply deeper, to
            // fill the table; their results are not used.
            let helpers: Vec<_> = (1..threads)
                .map(|t| {
                    let helpers_done = &helpers_done;
                    scope.spawn(move || {
                        let mut worker = Worker::new(self, run, board, Some(helpers_done));
                        let d = depth + (t as u32 & 1);
                        let _ = worker.node(board, d, (alpha, beta), 0, stakes);
                    })
                })
                .collect();
            let mut worker = Worker::new(self, run, board, None);
            let result = worker
                .node(board, depth, (alpha, beta), 0, stakes)
                .map(|(v, proven)| (v, proven, std::mem::take(&mut worker.pv[0])));
            helpers_done.store(true, Relaxed);
            for h in helpers {
                let _ = h.join();
            }
            result
        });
        match result {
            Ok(found) => Ok(Some(found)),
            Err(Stop::Time) => Ok(None),
            Err(Stop::Error(e)) => Err(e),
        }
    }

    /// The moves of `line` from `board`, then the best moves as the table
    /// has them up to a repetition, then the databases' principal variation
    /// when the line reaches their levels: at most `limit` moves.
    pub(super) fn pv(&self, board: &Board, line: Vec<u8>, limit: usize) -> Vec<u8> {
        // The walk keys the table as the workers do.
        let mut walk = Walk {
            line: Line::new(&self.game, board),
            stakes: Stakes::root(&self.game),
            board: *board,
            ply: 0,
        };
        for &pit in &line {
            match self.rules.play(&walk.board, pit as usize) {
                Ok(m) => walk.step(&m),
                Err(_) => return Vec::new(), // (Never: the line was played.)
            }
        }
        let mut line = line;
        while line.len() < limit {
            let salt = walk.line.salt(walk.ply) ^ walk.stakes.salt();
            let Some(entry) = self.table.get(&walk.board, salt) else {
                break;
            };
            let Some(pit) = entry.best else { break };
            let Ok(m) = self.rules.play(&walk.board, pit as usize) else {
                break;
            };
            if walk.line.earlier(repetition_key(&walk.board, walk.ply)) > 0 {
                break;
            }
            line.push(pit);
            walk.step(&m);
        }
        let board = walk.board;
        // Into the databases: their line.
        if let Some(tb) = self.levels_for(&board) {
            if let Ok(rest) = tb.principal_variation(&board, limit.saturating_sub(line.len())) {
                line.extend(rest.steps.iter().map(|s| s.mov.pit));
            }
        }
        line
    }
}

/// A walk down a line as the workers take it, for the table's keys.
struct Walk {
    line: Line,
    stakes: Stakes,
    board: Board,
    ply: usize,
}

impl Walk {
    /// Plays `m` from the walk's board.
    fn step(&mut self, m: &awari_dbformat::Move) {
        self.line.push(repetition_key(&self.board, self.ply));
        let _ = self.line.enter(m.captured > 0);
        let passes = m.turn == awari_dbformat::Turn::Passes;
        self.stakes = self.stakes.child(i16::from(m.captured), passes);
        self.board = m.child;
        self.ply += 1;
    }
}
