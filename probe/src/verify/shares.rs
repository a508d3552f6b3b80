//! Checking a level shared out among the ranks of an MPI job: each rank
//! holds its share of the level and of every level below
//! ([`awari_dbformat::cluster::Shares`]) and checks the boards of its share;
//! the children it does not hold are asked of the ranks that do
//! ([`ask_owners`]). The checks are those of one process (see the module
//! docs of [`super`]), and so is the result: the same counts and the same
//! mismatching boards, whatever the ranks.
//!
//! - **The first pass** goes over the share in windows, every rank at once:
//!   a window's children (quiet ones in this level, captures below) are
//!   asked of their owners together, with the certificate's generation of
//!   each quiet child, then each board is checked as in one process.
//! - **The proof search** runs in rounds: each rank tells the parents of
//!   its proven boards, its own at once (and theirs in turn), the others'
//!   in one message per parent to the rank that holds it, sent together at
//!   the end of the round. The owner confirms each edge forward before it
//!   counts, as in one process. The search ends in the first round in which
//!   no rank sends anything: then no rank has a board left to tell.
//! - **The result**: the ranks' counts are summed, and the mismatches kept
//!   are those one process keeps (the first by index).

use std::ops::Range;

use awari_dbformat::cluster::lookup::ask_owners;
use awari_dbformat::cluster::Ranks;
use awari_dbformat::file::best_capture;
use awari_dbformat::level::Slot;
use awari_dbformat::memory::cache::prefetch;
use awari_dbformat::{Board, Gain, Index, Levels, MoveList, Rules, Score};
use rayon::prelude::*;

use super::first_pass::certified;
use super::levels::{derive_from, Edge};
use super::prover::{initial_progress, DONE, MAX_NEED, PROVEN};
use super::report::{LevelCheck, Mismatch};

/// Boards of a window of the first pass, on each rank: their children's
/// lookups (about five a board, 16 bytes each with their answers) are held
/// at once.
const WINDOW: u64 = 1 << 17;

/// Boards one task of a window gathers and checks.
const PIECE: u64 = 1 << 12;

/// Parents a rank tells the others of in one round of the proof search, at
/// most (16 bytes each: 4 MiB).
const TOLD_PER_ROUND: usize = 1 << 18;

/// Proven boards whose parents are told together (their bytes asked for
/// first).
const TOLD_TOGETHER: usize = 8;

/// The bits of a lookup's key below its level: a board's index.
const LEVEL_SHIFT: u32 = 40;

/// Checks every board of level `seeds` with the other ranks, each rank
/// checking its share: `levels` holds this rank's share of the level
/// ([`Levels::insert_shared`]) and of every level below that captures reach
/// (the others hold theirs); `certificate`, when given, holds the
/// generations of this rank's share. The certificate is used only when
/// every rank has one. Keeps at most `limit` mismatches; `tick(n)` is called
/// as boards of this rank's share are checked.
///
/// Returns the check of the whole level, the same on every rank, and the
/// same as [`super::check_level_with`] in one process.
///
/// Every rank calls it together, for the same level.
///
/// # Panics
/// When `levels` lacks this rank's share of the level or a level below
/// that a capture reaches, or `certificate` is not one generation per
/// board of the share.
pub fn check_share(
    ranks: &dyn Ranks,
    rules: Rules,
    seeds: u32,
    levels: &Levels,
    certificate: Option<&[u16]>,
    limit: usize,
    tick: &(dyn Fn(u64) + Sync),
) -> LevelCheck {
    let share = levels.share(seeds).expect("this rank's share of the level");
    let index = Index::for_pits(rules.pits());
    assert!(
        index.level_size(seeds) < 1 << LEVEL_SHIFT,
        "level {seeds} too large for a lookup's key"
    );
    if let Some(c) = certificate {
        assert_eq!(
            c.len() as u64,
            share.end - share.start,
            "a generation per board"
        );
    }
    let everyone_has_one = ranks.sum(u64::from(certificate.is_some())) == ranks.size() as u64;
    let certificate = certificate.filter(|_| everyone_has_one);
    let share_check = ShareCheck {
        rules,
        index,
        seeds,
        share: share.clone(),
        levels,
        values: &levels.get(seeds).expect("the share")[..],
        certificate,
    };

    // 1. The first pass: the recurrence, the certificate's proofs, and the
    // proof search's starting states.
    let mut progress = vec![DONE; (share.end - share.start) as usize];
    let first = share_check.first_pass(ranks, &mut progress, tick);
    let all_certified = certificate.is_some() && ranks.sum(first.uncertified) == 0;
    let rest = (share.end - share.start) - (share.end - share.start) / 2;
    if all_certified {
        tick(rest);
        return share_check.result(ranks, first.mismatches, Vec::new(), true, limit);
    }

    // 2. The proof search, then what it leaves unproven.
    share_check.prove(ranks, &mut progress);
    tick(rest);
    let unproven = progress
        .iter()
        .enumerate()
        .filter(|(_, &s)| s != DONE)
        .map(|(k, _)| share.start + k as u64)
        .collect();
    share_check.result(ranks, first.mismatches, unproven, false, limit)
}

/// Turns this rank's share of level `seeds` (`values`, the stored values
/// of its boards `share`) from lower bounds into scores: each board raised
/// to its best capture, whose children are asked of the ranks that hold
/// them in `lower` (this rank's shares of the levels below, the others
/// holding theirs), a window at a time. For a level file of lower bounds
/// ([`awari_dbformat::file::Stored::LowerBounds`]); as
/// [`awari_dbformat::file::resolve`] does for one board.
///
/// Every rank calls it together, for the same level.
///
/// # Panics
/// When `lower` lacks this rank's share of a level a capture reaches, or
/// `values` is not one value per board of `share`.
pub fn resolve_share(
    ranks: &dyn Ranks,
    rules: Rules,
    seeds: u32,
    share: Range<u64>,
    values: &mut [i8],
    lower: &Levels,
) {
    assert_eq!(values.len() as u64, share.end - share.start);
    let index = Index::for_pits(rules.pits());
    // A board's captures, in the order `best_capture` visits them.
    let best = |board: &Board, child: &mut dyn FnMut(&Board) -> i8| {
        let mut captures = MoveList::new();
        let score = |b: &Board| Ok::<_, ()>(Score::new(child(b)));
        best_capture(rules, board, &mut captures, score).expect("no error")
    };
    let mut at = share.start;
    while ranks.sum(u64::from(at < share.end)) > 0 {
        let end = (at + WINDOW).min(share.end);
        // 1. Every capture's child, as a key.
        let starts: Vec<u64> = (at..end).step_by(PIECE as usize).collect();
        let keys: Vec<Vec<u64>> = starts
            .par_iter()
            .map(|&s| {
                let mut keys = Vec::new();
                let n = ((s + PIECE).min(end) - s) as usize;
                for board in index.boards_from(seeds, s).take(n) {
                    best(&board, &mut |child| {
                        let i = index.rank(child).expect("children are stored");
                        keys.push(key(child.seeds(), i));
                        0
                    });
                }
                keys
            })
            .collect();
        let all: Vec<u64> = keys.iter().flatten().copied().collect();
        let held = HeldValues {
            levels: lower,
            certificate: None,
        };
        let answers = ask_owners(ranks, &all, &held);
        // 2. Each board raised to its best capture.
        let window = &mut values[(at - share.start) as usize..(end - share.start) as usize];
        let mut offsets = vec![0];
        for k in &keys {
            offsets.push(offsets.last().unwrap() + k.len());
        }
        window
            .par_chunks_mut(PIECE as usize)
            .zip(starts.par_iter())
            .enumerate()
            .for_each(|(k, (chunk, &s))| {
                let mut answers = answers[offsets[k]..offsets[k + 1]].iter();
                for (value, board) in chunk.iter_mut().zip(index.boards_from(seeds, s)) {
                    let capture = best(&board, &mut |_| {
                        *answers.next().expect("an answer") as u8 as i8
                    });
                    if let Some(c) = capture {
                        *value = (*value).max(c.get());
                    }
                }
            });
        at = end;
    }
}

/// What checking a share needs.
struct ShareCheck<'a> {
    rules: Rules,
    index: &'static Index,
    seeds: u32,
    /// This rank's boards of the level.
    share: Range<u64>,
    /// All levels held (this rank's shares).
    levels: &'a Levels,
    /// The values of the share.
    values: &'a [i8],
    /// The generations of the share, when every rank has its certificate.
    certificate: Option<&'a [u16]>,
}

/// A parent proposed for a proven child by the un-move generator.
struct Told {
    /// The parent's index and board, and the pit of its move.
    q: u64,
    parent: Board,
    pit: usize,
    /// The rank that holds the parent.
    owner: usize,
    /// The child's index and board, and its value.
    i: u64,
    child: Board,
    value: i8,
}

/// What the first pass over a share finds.
struct FirstPass {
    /// Its boards whose value differs from what their children give, in
    /// index order.
    mismatches: Vec<Mismatch>,
    /// Its boards the certificate does not prove at once.
    uncertified: u64,
}

/// The moves of a run of boards, gathered before their children are asked.
struct Piece {
    /// The boards' first move in `keys`, and one past the last board's.
    firsts: Vec<usize>,
    /// Each move's child, as a lookup key ([`key`]).
    keys: Vec<u64>,
    /// Each move's gain.
    gains: Vec<Gain>,
}

impl ShareCheck<'_> {
    /// The first pass over the share, a window at a time with the other
    /// ranks; sets each board's progress state (`progress`, by board of
    /// the share). Ticks about half of the share's boards.
    fn first_pass(
        &self,
        ranks: &dyn Ranks,
        progress: &mut [u8],
        tick: &(dyn Fn(u64) + Sync),
    ) -> FirstPass {
        let mut found = FirstPass {
            mismatches: Vec::new(),
            uncertified: 0,
        };
        let mut at = self.share.start;
        // (Every rank takes part in every round, with an empty window once
        // its share is done, until no rank has one left.)
        while ranks.sum(u64::from(at < self.share.end)) > 0 {
            let end = (at + WINDOW).min(self.share.end);
            let window = at - self.share.start..end - self.share.start;
            self.window(
                ranks,
                at..end,
                &mut progress[window.start as usize..window.end as usize],
                &mut found,
            );
            tick((end - at) / 2);
            at = end;
        }
        found
    }

    /// Checks boards `boards` of the share (`progress`, their states).
    fn window(
        &self,
        ranks: &dyn Ranks,
        boards: Range<u64>,
        progress: &mut [u8],
        found: &mut FirstPass,
    ) {
        let starts: Vec<u64> = boards.clone().step_by(PIECE as usize).collect();
        let pieces: Vec<Piece> = starts
            .par_iter()
            .map(|&s| self.moves_of(s..(s + PIECE).min(boards.end)))
            .collect();
        let keys: Vec<u64> = pieces.iter().flat_map(|p| p.keys.iter().copied()).collect();
        let held = HeldValues {
            levels: self.levels,
            certificate: self.certificate.map(|c| (self.seeds, self.share.start, c)),
        };
        let answers = ask_owners(ranks, &keys, &held);
        let mut offsets = vec![0];
        for p in &pieces {
            offsets.push(offsets.last().unwrap() + p.keys.len());
        }
        let checked: Vec<(Vec<Mismatch>, u64)> = pieces
            .par_iter()
            .zip(progress.par_chunks_mut(PIECE as usize))
            .zip(starts.par_iter())
            .enumerate()
            .map(|(k, ((piece, states), &first))| {
                let answers = &answers[offsets[k]..offsets[k + 1]];
                self.check_piece(first, piece, answers, states)
            })
            .collect();
        for (mismatches, uncertified) in checked {
            found.mismatches.extend(mismatches);
            found.uncertified += uncertified;
        }
    }

    /// The moves of boards `boards`.
    fn moves_of(&self, boards: Range<u64>) -> Piece {
        let n = (boards.end - boards.start) as usize;
        let mut piece = Piece {
            firsts: Vec::with_capacity(n + 1),
            keys: Vec::with_capacity(n * 6),
            gains: Vec::with_capacity(n * 6),
        };
        for board in self.index.boards_from(self.seeds, boards.start).take(n) {
            piece.firsts.push(piece.keys.len());
            for m in self.rules.legal_moves(&board).iter() {
                let i = self.index.rank(&m.child).expect("children are stored");
                piece.keys.push(key(m.child.seeds(), i));
                piece.gains.push(m.gain());
            }
        }
        piece.firsts.push(piece.keys.len());
        piece
    }

    /// Checks the boards of `piece`, from board `first`, whose children's
    /// `answers` are here, as one process does (`Pass::check`): their
    /// mismatches and how many the certificate does not prove; sets their
    /// progress `states`.
    fn check_piece(
        &self,
        first: u64,
        piece: &Piece,
        answers: &[u64],
        states: &mut [u8],
    ) -> (Vec<Mismatch>, u64) {
        let child_values: Vec<i8> = answers.iter().map(|&a| a as u8 as i8).collect();
        let generation = |e: usize| (answers[e] >> 8) as u16;
        let (n, no_move) = (
            self.seeds as i8,
            self.rules.value_without_moves(self.seeds).get(),
        );
        let mut mismatches = Vec::new();
        let mut uncertified = 0;
        let mut edges = Vec::with_capacity(8);
        for (b, state) in states.iter_mut().enumerate() {
            let i = first + b as u64;
            let stored = self.values[(i - self.share.start) as usize];
            edges.clear();
            let moves = piece.firsts[b]..piece.firsts[b + 1];
            for (e, (child, &gain)) in child_values[moves.clone()]
                .iter()
                .zip(&piece.gains[moves.clone()])
                .enumerate()
            {
                edges.push(Edge::new(Slot::Byte(child), moves.start + e, gain));
            }
            if let Some(c) = self.certificate {
                let own = || c[(i - self.share.start) as usize];
                if !certified(stored, own, &edges, generation) {
                    uncertified += 1;
                }
            }
            let derived = if (-n..=n).contains(&stored) {
                *state = initial_progress(stored, &edges);
                derive_from(&edges, no_move)
            } else {
                i8::MIN
            };
            if derived != stored {
                let reason = if derived == i8::MIN {
                    format!("value {stored} is outside -{}..={}", self.seeds, self.seeds)
                } else {
                    "recurrence".into()
                };
                mismatches.push(self.mismatch(i, derived, reason));
            }
        }
        (mismatches, uncertified)
    }

    /// The mismatch of board `i` of the share, which its children value
    /// `derived`.
    fn mismatch(&self, i: u64, derived: i8, reason: String) -> Mismatch {
        let board = self.board(i);
        Mismatch {
            seeds: self.seeds,
            index: i,
            board: board.pits().to_vec(),
            stored: self.values[(i - self.share.start) as usize],
            derived,
            reason,
        }
    }

    /// The board of index `i`.
    fn board(&self, i: u64) -> Board {
        self.index
            .unrank(self.seeds, i)
            .expect("index within level")
    }

    /// The proof search over the share, with the other ranks (see the
    /// module docs): every proven board tells its parents, until no rank
    /// has one left to tell.
    fn prove(&self, ranks: &dyn Ranks, progress: &mut [u8]) {
        let start = self.share.start;
        // The boards the first pass proved are found by a scan of the share,
        // their boards walking along (as in one process: no board is
        // unranked but those another rank tells of), and each one's parents
        // told before the scan goes on.
        let boards = self.index.boards_from(self.seeds, start);
        let mut scan = boards.take(progress.len()).enumerate();
        let mut scanned = false;
        let mut todo: Vec<(u64, Board)> = Vec::new();
        let me = ranks.rank();
        let mut parents = Vec::new();
        loop {
            // Parents held elsewhere, by rank: (parent, pit, value) and the
            // child, two words each; at most TOLD_PER_ROUND in a round.
            let mut outbox = vec![Vec::new(); ranks.size()];
            let mut sent = 0;
            while sent < TOLD_PER_ROUND {
                // A few proven boards at a time: their parents lie anywhere
                // in the share, so their bytes are asked for together first.
                parents.clear();
                let mut taken = 0;
                for _ in 0..TOLD_TOGETHER {
                    let Some((i, child)) = todo.pop().or_else(|| {
                        // The next board the first pass proved, if any.
                        let (k, board) = scan.find(|&(k, _)| progress[k] == PROVEN)?;
                        progress[k] = DONE;
                        Some((start + k as u64, board))
                    }) else {
                        break;
                    };
                    taken += 1;
                    self.propose_parents(i, &child, me, progress, &mut parents);
                }
                if taken == 0 {
                    scanned = true;
                    break;
                }
                for t in &parents {
                    if t.owner == me {
                        // (Confirmed forward: the un-move generator proposes, it does not decide.)
                        let confirm = || {
                            (self.rules.quiet_child(&t.parent, t.pit) == Some(t.child))
                                .then_some(t.parent)
                        };
                        self.tell(t.q, t.value, confirm, progress, &mut todo);
                    } else {
                        let word =
                            t.q | (t.pit as u64) << LEVEL_SHIFT | u64::from(t.value as u8) << 48;
                        outbox[t.owner].extend([word, t.i]);
                        sent += 1;
                    }
                }
            }
            // The end: no rank has a parent to tell elsewhere, nor a board
            // left whose parents it has not told (or not scanned for).
            let left = sent + todo.len() + usize::from(!scanned);
            if ranks.sum(left as u64) == 0 {
                break;
            }
            for words in ranks.exchange(outbox) {
                self.take_told(&words, progress, &mut todo);
            }
        }
    }

    /// Appends to `parents` the stored parents the un-move generator
    /// proposes for proven board `i` (`child`) of this rank's share, each
    /// (parent, pit) once, the bytes of those this rank (`me`) holds asked
    /// of the cache.
    fn propose_parents(
        &self,
        i: u64,
        child: &Board,
        me: usize,
        progress: &[u8],
        parents: &mut Vec<Told>,
    ) {
        let start = self.share.start;
        let value = self.values[(i - start) as usize];
        let first = parents.len();
        self.rules.for_each_unmove(child, |parent, pit| {
            // A parent with a full opponent row is not stored.
            let Some(q) = self.index.rank(&parent) else {
                return;
            };
            if parents[first..].iter().any(|t| t.q == q && t.pit == pit) {
                return; // proposed twice: count the move once
            }
            let owner = self.levels.owner(self.seeds, q);
            if owner == me {
                prefetch(&self.values[(q - start) as usize]);
                prefetch(&progress[(q - start) as usize]);
            }
            let child = *child;
            parents.push(Told {
                q,
                pit,
                parent,
                owner,
                i,
                child,
                value,
            });
        });
    }

    /// Tells the parents another rank sent (`words`, two a parent: see
    /// `prove`) of their proven children, each edge confirmed forward.
    fn take_told(&self, words: &[u64], progress: &mut [u8], todo: &mut Vec<(u64, Board)>) {
        let start = self.share.start;
        for (k, told) in words.chunks_exact(2).enumerate() {
            // (The parents' bytes asked for a few messages ahead.)
            if let Some(&ahead) = words.get(2 * (k + TOLD_TOGETHER)) {
                let q = ahead & ((1 << LEVEL_SHIFT) - 1);
                prefetch(&self.values[(q - start) as usize]);
                prefetch(&progress[(q - start) as usize]);
            }
            let (q, i) = (told[0] & ((1 << LEVEL_SHIFT) - 1), told[1]);
            let pit = (told[0] >> LEVEL_SHIFT & 0xff) as usize;
            let value = (told[0] >> 48) as u8 as i8;
            let confirm = || {
                let parent = self.board(q);
                let child = self.rules.quiet_child(&parent, pit)?;
                (self.index.rank(&child) == Some(i)).then_some(parent)
            };
            self.tell(q, value, confirm, progress, todo);
        }
    }

    /// Tells parent `q` (of this rank's share) that one of its moves leads
    /// to a proven child worth `value`: counts when the parent waits for
    /// it and `confirm` plays the move forward to that child (giving the
    /// parent's board); a parent whose count reaches zero is proven and
    /// goes onto `todo`.
    fn tell(
        &self,
        q: u64,
        value: i8,
        confirm: impl FnOnce() -> Option<Board>,
        progress: &mut [u8],
        todo: &mut Vec<(u64, Board)>,
    ) {
        let k = (q - self.share.start) as usize;
        let (v, waiting) = (self.values[k], progress[k]);
        if waiting == 0 || waiting > MAX_NEED {
            return; // proven, or needing no proof
        }
        // A win waits for a child worth exactly -v; a loss for every child.
        if v > 0 && value != -v {
            return;
        }
        let Some(parent) = confirm() else { return };
        progress[k] = waiting - 1;
        if waiting == 1 {
            progress[k] = DONE;
            todo.push((q, parent));
        }
    }

    /// The level's check from every rank's share: `mismatches` (recurrence
    /// errors, in index order) and `unproven` boards of this one. Keeps the
    /// mismatches one process keeps (`check::searched`, `check::certified`):
    /// every recurrence error, and unproven boards in index order until
    /// twice `limit` are kept, then the first `limit` by index.
    fn result(
        &self,
        ranks: &dyn Ranks,
        mut mismatches: Vec<Mismatch>,
        unproven: Vec<u64>,
        certified: bool,
        limit: usize,
    ) -> LevelCheck {
        let sums = ranks.sums(&[
            self.share.end - self.share.start,
            mismatches.len() as u64,
            unproven.len() as u64,
        ]);
        let (boards, recurrence_errors) = (sums[0], sums[1]);
        // The unproven boards one process would name (at most this many,
        // the first by index that are not recurrence errors).
        let room = (limit.max(1) * 2).saturating_sub(recurrence_errors as usize);
        let named: Vec<Mismatch> = unproven
            .into_iter()
            .filter(|i| mismatches.binary_search_by_key(i, |m| m.index).is_err())
            .take(room)
            .map(|i| {
                let stored = self.values[(i - self.share.start) as usize];
                // (Not a recurrence error: its children give its value.)
                let reason =
                    "no progress: no sequence of moves reaches this value; endless play would give 0";
                self.mismatch(i, stored, reason.into())
            })
            .collect();
        // Only the first `limit` recurrence errors can be kept when there
        // are that many; all of them otherwise.
        mismatches.truncate(if room == 0 { limit } else { usize::MAX });
        let mine = serde_json::to_vec(&(mismatches, named)).expect("serialisable");
        let mut errors = Vec::new();
        let mut candidates = Vec::new();
        for theirs in ranks.all_gather_bytes(&mine) {
            let (e, n): (Vec<Mismatch>, Vec<Mismatch>) =
                serde_json::from_slice(&theirs).expect("a rank's mismatches");
            errors.extend(e);
            candidates.extend(n);
        }
        candidates.sort_by_key(|m| m.index);
        candidates.truncate(room);
        errors.extend(candidates);
        errors.sort_by_key(|m| m.index);
        errors.truncate(limit);
        LevelCheck {
            seeds: self.seeds,
            boards,
            recurrence_errors,
            unproven: sums[2],
            certified,
            mismatches: errors,
        }
    }
}

/// The scores of `boards` (stored boards of levels whose shares `levels`
/// holds, this rank's and the others'), each asked of the rank that holds
/// it. Every rank calls it together (with the same boards or others).
///
/// # Panics
/// When a board is not stored, or its level is not held.
pub fn scores_by_shares(ranks: &dyn Ranks, levels: &Levels, boards: &[Board]) -> Vec<Score> {
    let keys: Vec<u64> = boards
        .iter()
        .map(|b| {
            let index = Index::for_pits(b.per_side());
            key(b.seeds(), index.rank(b).expect("a stored board"))
        })
        .collect();
    let held = HeldValues {
        levels,
        certificate: None,
    };
    let answers = ask_owners(ranks, &keys, &held);
    answers
        .into_iter()
        .map(|a| Score::new(a as u8 as i8))
        .collect()
}

/// What this rank holds of the levels shared out, for the others' lookups
/// (by [`key`]): a board's value (the low byte), and for a board of the
/// level checked, its certificate's generation (the next 16 bits).
struct HeldValues<'a> {
    levels: &'a Levels,
    /// The level checked, the first board of this rank's share of it, and
    /// the share's generations.
    certificate: Option<(u32, u64, &'a [u16])>,
}

impl awari_dbformat::cluster::lookup::Held for HeldValues<'_> {
    fn owner(&self, key: u64) -> usize {
        let (s, i) = split_key(key);
        self.levels.owner(s, i)
    }

    fn answer(&self, key: u64) -> u64 {
        let (s, i) = split_key(key);
        let value = u64::from(self.levels.slot_at(s, i).score().get() as u8);
        let generation = match self.certificate {
            Some((seeds, first, c)) if s == seeds => u64::from(c[(i - first) as usize]),
            _ => 0,
        };
        value | generation << 8
    }

    fn prefetch(&self, key: u64) {
        let (s, i) = split_key(key);
        self.levels.slot_at(s, i).prefetch();
    }
}

/// The lookup key of board `i` of level `seeds`.
#[inline]
fn key(seeds: u32, i: u64) -> u64 {
    u64::from(seeds) << LEVEL_SHIFT | i
}

/// The level and the index of a [`key`].
#[inline]
fn split_key(key: u64) -> (u32, u64) {
    ((key >> LEVEL_SHIFT) as u32, key & ((1 << LEVEL_SHIFT) - 1))
}
