//! A search for positions above the levels built: iterative-deepening
//! alpha-beta (principal variation search) with the databases at its leaves,
//! saying which of its answers are proven.
//!
//! ## Values and proofs
//! Values are those of the databases: what the mover will still capture
//! minus what the opponent will, with perfect play. A leaf is *exact* when the
//! game is over or its seed count is covered by a level (read from the
//! [`Tablebase`]); any other leaf at the search horizon gets an estimate
//! ([`Evaluation`]; by default a quarter of the seeds on the mover's side
//! minus the opponent's, the captured difference along the way being already
//! in the value), and a position that repeats one on the current line gets
//! 0, the value of endless play, but never as a proven one: a player may
//! still leave the
//! cycle. What is proven of such a position is only that its value lies
//! within plus or minus its seeds, which decides a window beyond them.
//!
//! Every result of `search(position, alpha, beta)` carries a flag *proven*:
//! when set, the result `v` holds for the true value `t`: `t >= v` when
//! `v >= beta` (a lower bound), `t <= v` when `v <= alpha` (an upper bound),
//! and `t == v` in between. A cut-off is proven when the move that made it is;
//! any other result when every move's result is. This composes through
//! negamax, so the root's flag is a proof that rests only on exact leaves. A
//! full-window result that is proven is the exact value; a null-window search
//! at `v` that is proven shows a bound ("at least `v`").
//!
//! ## Search
//! Principal variation search with a transposition table (`--hash`), whose
//! best move is tried first, then captures by size, two killer moves per ply
//! and a history of pits. Several threads search the same tree and share the
//! table (Lazy SMP); the first thread's completed iterations are the answer.
//! A table entry is used at any depth when proven (a proof does not depend on
//! the depth it was found at), else only at its own depth or less.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use awari_dbformat::{Board, Move, Outcome, Rules, Score, Turn};

use crate::error::ProbeError;
use crate::tablebase::Tablebase;

/// How far and how long to search.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Stop after this much time (checked every few thousand positions).
    pub time: Option<Duration>,
    /// Stop after this depth in plies.
    pub depth: Option<u32>,
    /// Bytes of the transposition table (rounded down to a power of two of
    /// 16-byte entries).
    pub hash_bytes: usize,
    /// Threads searching together.
    pub threads: usize,
    /// How positions at the horizon are estimated.
    pub evaluation: Evaluation,
}

/// How a position at the search's horizon is estimated (an estimate is never
/// proven, whatever it is).
///
/// The default, `SeedsOnSide(4)`, won 27 of 44 points (+4.1 and +2.6 seeds a
/// game in two runs) against `Captured` at 100 ms a move, `SeedsOnSide(8)`
/// 28 of 44 (+1.8, -0.6), `SeedsOnSide(2)` 16 of 32 (+0.4):
/// `probe/examples/match.rs`, docs/performance.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluation {
    /// 0: the seeds captured along the way are the whole estimate.
    Captured,
    /// Also the seeds on the mover's side minus those on the opponent's,
    /// divided by the number given.
    SeedsOnSide(i16),
}

impl Default for Evaluation {
    /// `SeedsOnSide(4)`, the best measured.
    fn default() -> Evaluation {
        Evaluation::SeedsOnSide(4)
    }
}

impl Evaluation {
    /// The estimate of `board` for its mover.
    fn of(self, board: &Board) -> i16 {
        match self {
            Evaluation::Captured => 0,
            Evaluation::SeedsOnSide(divisor) => {
                let side = |row: &[u8]| row.iter().map(|&n| i16::from(n)).sum::<i16>();
                (side(board.mover_row()) - side(board.opponent_row())) / divisor.max(1)
            }
        }
    }
}

impl Default for Limits {
    /// Two seconds, no depth limit, 64 MiB of table, one thread per core.
    fn default() -> Limits {
        Limits {
            time: Some(Duration::from_secs(2)),
            depth: None,
            hash_bytes: 64 << 20,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            evaluation: Evaluation::default(),
        }
    }
}

/// What a search's value is known to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The value is the position's value, proven with exact leaves.
    Exact,
    /// The position's value is at least the value (proven).
    Lower,
    /// The position's value is at most the value (proven).
    Upper,
    /// The value rests on estimated leaves: nothing is proven.
    Estimate,
}

impl Bound {
    /// The name used in JSON: `"exact"`, `"lower"`, `"upper"` or `"estimate"`.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Exact => "exact",
            Bound::Lower => "lower",
            Bound::Upper => "upper",
            Bound::Estimate => "estimate",
        }
    }
}

/// The answer of a search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// The value for the mover, as found at the last completed depth.
    pub value: Score,
    /// What is proven of [`SearchResult::value`].
    pub bound: Bound,
    /// The last depth completed, in plies.
    pub depth: u32,
    /// Positions searched, by all threads.
    pub nodes: u64,
    /// The pit of the best move found, if the position has a move.
    pub best: Option<u8>,
    /// The principal variation (pits), from the transposition table.
    pub pv: Vec<u8>,
    /// Seconds spent.
    pub seconds: f64,
}

/// The result of a game for a split of the captured seeds, and whether the
/// search proved it (see [`Searcher::prove_outcome`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutcomeProof {
    /// The result for the mover.
    pub outcome: Outcome,
    /// True when proven with exact leaves.
    pub proven: bool,
}

/// A search's answer for a game: the search, and the result for a split of
/// the captured seeds (see [`Searcher::answer`]).
#[derive(Clone, Debug)]
pub struct Answer {
    /// The search of the position.
    pub search: SearchResult,
    /// The result of the game for the mover.
    pub outcome: Outcome,
    /// True when that result is proven with exact leaves.
    pub outcome_proven: bool,
}

/// A search over one [`Tablebase`]: its levels are the exact leaves.
pub struct Searcher<'a> {
    /// The databases, if any.
    tb: Option<&'a Tablebase>,
    rules: Rules,
    /// Bit n: boards of n seeds are read from the databases
    /// ([`Tablebase::answers_level`]).
    exact_levels: u128,
    table: Table,
    limits: Limits,
}

/// Values beyond any score, for open windows.
const INFINITE: i16 = 1000;

/// The deepest iteration.
const MAX_DEPTH: u32 = 120;

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
        }
    }

    /// The databases, when `board`'s level is among those they answer.
    fn levels_for(&self, board: &Board) -> Option<&'a Tablebase> {
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
        if let Some(tb) = self.levels_for(board) {
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
        let (value, proven, depth, line) = self.deepen(board, &run)?;
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
        Ok(SearchResult {
            value: Score::new(value as i8),
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
    fn root(
        &self,
        board: &Board,
        depth: u32,
        alpha: i16,
        beta: i16,
        run: &Run,
    ) -> Result<Option<(i16, bool, Vec<u8>)>, ProbeError> {
        let threads = self.limits.threads.max(1);
        let helpers_done = AtomicBool::new(false);
        let result = std::thread::scope(|scope| {
            // Helper threads search the same tree, some a ply deeper, to
            // fill the table; their results are not used.
            let helpers: Vec<_> = (1..threads)
                .map(|t| {
                    let helpers_done = &helpers_done;
                    scope.spawn(move || {
                        let mut worker = Worker::new(self, run, Some(helpers_done));
                        let d = depth + (t as u32 & 1);
                        let _ = worker.node(board, d, alpha, beta, 0);
                    })
                })
                .collect();
            let mut worker = Worker::new(self, run, None);
            let result = worker
                .node(board, depth, alpha, beta, 0)
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
    fn pv(&self, board: &Board, line: Vec<u8>, limit: usize) -> Vec<u8> {
        let mut seen = Vec::new();
        let mut board = *board;
        for &pit in &line {
            match self.rules.play(&board, pit as usize) {
                Ok(m) => {
                    seen.push(board.packed());
                    board = m.child;
                }
                Err(_) => return Vec::new(), // (Never: the line was played.)
            }
        }
        let mut line = line;
        while line.len() < limit {
            let Some(entry) = self.table.get(&board) else {
                break;
            };
            let Some(pit) = entry.best else { break };
            let Ok(m) = self.rules.play(&board, pit as usize) else {
                break;
            };
            if seen.contains(&board.packed()) {
                break;
            }
            seen.push(board.packed());
            line.push(pit);
            board = m.child;
        }
        // Into the databases: their line.
        if let Some(tb) = self.levels_for(&board) {
            if let Ok(rest) = tb.principal_variation(&board, limit.saturating_sub(line.len())) {
                line.extend(rest.steps.iter().map(|s| s.mov.pit));
            }
        }
        line
    }
}

/// Why a search stopped early.
enum Stop {
    Time,
    Error(ProbeError),
}

impl From<ProbeError> for Stop {
    fn from(e: ProbeError) -> Stop {
        Stop::Error(e)
    }
}

/// The clock and the counters of one search.
struct Run {
    deadline: Option<Instant>,
    nodes: AtomicU64,
    stopped: AtomicBool,
}

impl Run {
    fn new(limits: &Limits, started: Instant) -> Run {
        Run {
            deadline: limits.time.map(|t| started + t),
            nodes: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
        }
    }
}

/// Positions between two looks at the clock.
const CLOCK_EVERY: u64 = 4096;

/// One thread's search.
struct Worker<'s, 'a> {
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
    pv: Vec<Vec<u8>>,
}

impl<'s, 'a> Worker<'s, 'a> {
    fn new(searcher: &'s Searcher<'a>, run: &'s Run, done: Option<&'s AtomicBool>) -> Self {
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
    fn node(
        &mut self,
        board: &Board,
        depth: u32,
        mut alpha: i16,
        beta: i16,
        ply: usize,
    ) -> Result<(i16, bool), Stop> {
        self.tick()?;
        self.pv[ply].clear();
        let rules = self.searcher.rules;
        if let Some(v) = rules.terminal_value(board) {
            return Ok((i16::from(v.get()), true));
        }
        if let Some(tb) = self.searcher.levels_for(board) {
            // A database lookup costs microseconds: the table keeps its
            // answer as a proven entry.
            if let Some(e) = self.searcher.table.get(board) {
                if e.proven && e.kind == Kind::Exact {
                    return Ok((e.value, true));
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
            return Ok((value, true));
        }
        let key = board.packed();
        if self.line.contains(&key) {
            return Ok(horizon(board, 0, alpha, beta));
        }
        let entry = self.searcher.table.get(board);
        // (Not on the principal variation, whose line a cut-off would cut
        // short, unless the entry is proven.)
        let pv_node = beta - alpha > 1;
        if let Some(e) = entry {
            if e.proven || (e.depth as u32 >= depth && !pv_node) {
                let cut = match e.kind {
                    Kind::Exact => true,
                    Kind::Lower => e.value >= beta,
                    Kind::Upper => e.value <= alpha,
                };
                if cut {
                    return Ok((e.value, e.proven));
                }
            }
        }
        // The horizon, unless the table had a proof above.
        if depth == 0 {
            let estimate = self.searcher.limits.evaluation.of(board);
            return Ok(horizon(board, estimate, alpha, beta));
        }

        let moves = self.ordered(board, entry.and_then(|e| e.best), ply);
        let alpha_in = alpha;
        let mut best_value = -INFINITE;
        let mut best_pit = None;
        let mut all_proven = true;
        let mut cut_proven = None;
        self.line.push(key);
        for (k, m) in moves.iter().enumerate() {
            let searched = if k == 0 {
                self.child(m, depth - 1, alpha, beta, ply)
            } else {
                // A null window first: is this move better than alpha?
                match self.child(m, depth - 1, alpha, alpha + 1, ply) {
                    Ok((v, _)) if v > alpha && v < beta => {
                        self.child(m, depth - 1, alpha, beta, ply)
                    }
                    other => other,
                }
            };
            let (v, proven) = match searched {
                Ok(found) => found,
                Err(stop) => {
                    self.line.pop();
                    return Err(stop);
                }
            };
            if v > best_value {
                best_value = v;
                best_pit = Some(m.pit);
            }
            if v >= beta {
                cut_proven = Some(proven);
                if m.captured == 0 {
                    let killers = &mut self.killers[ply];
                    if killers[0] != m.pit {
                        killers[1] = killers[0];
                        killers[0] = m.pit;
                    }
                    self.history[m.pit as usize] += depth * depth;
                }
                break;
            }
            all_proven &= proven;
            if v > alpha {
                alpha = v;
                // A new best line: this move, then the child's.
                let (here, below) = self.pv.split_at_mut(ply + 1);
                here[ply].clear();
                here[ply].push(m.pit);
                here[ply].extend_from_slice(&below[0]);
            }
        }
        self.line.pop();
        let proven = cut_proven.unwrap_or(all_proven);
        let kind = if best_value >= beta {
            Kind::Lower
        } else if best_value <= alpha_in {
            Kind::Upper
        } else {
            Kind::Exact
        };
        self.searcher.table.put(
            board,
            Entry {
                value: best_value,
                depth: depth.min(255) as u8,
                kind,
                proven,
                best: best_pit,
            },
        );
        Ok((best_value, proven))
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

/// What a table entry says of its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Exact,
    Lower,
    Upper,
}

/// One position's entry in the transposition table.
#[derive(Clone, Copy, Debug)]
struct Entry {
    value: i16,
    depth: u8,
    kind: Kind,
    proven: bool,
    best: Option<u8>,
}

impl Entry {
    /// The entry in 32 bits: value (16), depth (8), kind (2), proven (1),
    /// best pit (4, 15 for none).
    fn pack(self) -> u64 {
        let kind = match self.kind {
            Kind::Exact => 0,
            Kind::Lower => 1,
            Kind::Upper => 2,
        };
        u64::from(self.value as u16)
            | u64::from(self.depth) << 16
            | kind << 24
            | u64::from(self.proven) << 26
            | u64::from(self.best.unwrap_or(15)) << 27
    }

    fn unpack(bits: u64) -> Entry {
        let best = (bits >> 27 & 15) as u8;
        Entry {
            value: bits as u16 as i16,
            depth: (bits >> 16) as u8,
            kind: match bits >> 24 & 3 {
                0 => Kind::Exact,
                1 => Kind::Lower,
                _ => Kind::Upper,
            },
            proven: bits >> 26 & 1 == 1,
            best: (best != 15).then_some(best),
        }
    }
}

/// The transposition table, shared by the threads without locks: each slot
/// holds the key xor the data beside the data, so a slot torn by two
/// writers at once fails the key check and is ignored.
struct Table {
    slots: Vec<[AtomicU64; 2]>,
    mask: usize,
}

impl Table {
    fn new(bytes: usize) -> Table {
        // The largest power of two of 16-byte slots within the bytes.
        let fit = (bytes / 16).max(1024);
        let count = if fit.is_power_of_two() {
            fit
        } else {
            fit.next_power_of_two() / 2
        };
        Table {
            slots: (0..count)
                .map(|_| [AtomicU64::new(0), AtomicU64::new(0)])
                .collect(),
            mask: count - 1,
        }
    }

    /// The board's 64-bit key and slot: its pits hashed (a multiply and
    /// shifts, enough to spread boards that differ in one pit).
    fn key(&self, board: &Board) -> (u64, usize) {
        let packed = board.packed();
        let mut h = (packed as u64) ^ ((packed >> 64) as u64).rotate_left(29);
        h = (h ^ (h >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
        // 0 marks an empty slot's key.
        let key = h | 1;
        (key, (h >> 7) as usize & self.mask)
    }

    fn get(&self, board: &Board) -> Option<Entry> {
        let (key, at) = self.key(board);
        let [k, d] = &self.slots[at];
        let data = d.load(Relaxed);
        (k.load(Relaxed) ^ data == key).then(|| Entry::unpack(data))
    }

    /// Stores an entry, replacing what the slot held unless that is proven
    /// and this is not.
    fn put(&self, board: &Board, entry: Entry) {
        let (key, at) = self.key(board);
        let [k, d] = &self.slots[at];
        let old = d.load(Relaxed);
        if k.load(Relaxed) ^ old == key && Entry::unpack(old).proven && !entry.proven {
            return;
        }
        let data = entry.pack();
        d.store(data, Relaxed);
        k.store(key ^ data, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn entries_pack_and_unpack() {
        for value in [-1000i16, -48, -1, 0, 7, 48, 1000] {
            for kind in [Kind::Exact, Kind::Lower, Kind::Upper] {
                for best in [None, Some(0), Some(7)] {
                    let e = Entry {
                        value,
                        depth: 37,
                        kind,
                        proven: value > 0,
                        best,
                    };
                    let back = Entry::unpack(e.pack());
                    assert_eq!(
                        (back.value, back.depth, back.kind, back.proven, back.best),
                        (e.value, e.depth, e.kind, e.proven, e.best)
                    );
                }
            }
        }
    }
}
