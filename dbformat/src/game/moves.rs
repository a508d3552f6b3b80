//! Sowing and captures: legal moves, playing a move, and un-moves.
//!
//! Every rule set is expressed by one filter: a move that leaves the opponent's
//! row empty is played only when the rule set allows it (see [`Rules::legal_moves`]).
//! Forced endings then need no special case: when every move leaves the opponent
//! without seeds, the moves are played anyway, the child's mover has an empty row,
//! and the child's value `-m` gives the mover all remaining seeds, exactly the `+n`
//! of `docs/rules.md`. (Under `cross-wari` the child is worth 0, and so is the
//! position: the seeds left go to no one.)
//!
//! Sowing direction: the sowing tables (`sowing.rs`) know which way each
//! sowing goes, so only the capture walk needs to be told (`captured_bytes`
//! walks back counterclockwise's way, `captured_bytes_clockwise` the other).

use crate::error::{Error, Result};
use crate::game::board::{pit_label, pits_of_two_or_three, seeds_packed, Board, MAX_BOARD_PITS};
use crate::game::rules::{RuleSet, Rules};
use crate::game::score::Score;
use crate::game::sowing::{pit_of, Sowing};

/// Who moves in the child position of a [`Move`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Turn {
    /// The usual case: the opponent moves next; the child is seen from the opponent.
    Passes,
    /// `grand-slam-replay` after a grand slam: the capturer moves again; the child
    /// is seen from the same player.
    Stays,
}

/// One legal move and where it leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// The mover's pit the seeds were taken from, `0..P`.
    pub pit: u8,
    /// Seeds captured by the move (0 for a non-capturing move).
    pub captured: u8,
    /// The position after the move, seen from the player who moves next.
    pub child: Board,
    /// Whether the turn passes to the opponent.
    pub turn: Turn,
}

impl Move {
    /// The value of this move for the mover, given the value of its child for the
    /// child's mover: `captured - child` (or `captured + child` when the turn stays).
    #[inline]
    pub fn value(&self, child: Score) -> Score {
        self.gain().value(child)
    }

    /// What [`Move::value`] needs of this move besides the child's score, in
    /// two bytes: for code that keeps many moves waiting while their
    /// children's scores are fetched (a whole move, child board included,
    /// is some 20 bytes).
    #[inline]
    pub fn gain(&self) -> Gain {
        Gain {
            captured: self.captured as i8,
            stays: self.turn == Turn::Stays,
        }
    }

    /// True when the child is on the same level (no seed left the board).
    #[inline]
    pub fn is_quiet(&self) -> bool {
        self.captured == 0
    }

    /// The pit as a letter of the mover's row (`A`..).
    pub fn label(&self) -> char {
        pit_label(self.pit as usize, self.child.per_side() as usize)
    }
}

/// A move's value as a function of its child's score ([`Move::gain`]): the
/// seeds it captured and who moves next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gain {
    captured: i8,
    /// The turn stays with the mover (a grand slam under `grand-slam-replay`).
    stays: bool,
}

impl Gain {
    /// The gain of a quiet move: nothing captured, the turn passed (the
    /// move's value is minus its child's score).
    pub const QUIET: Gain = Gain {
        captured: 0,
        stays: false,
    };

    /// The move's value for the mover when its child is worth `child` to the
    /// child's mover, as [`Move::value`].
    #[inline]
    pub fn value(self, child: Score) -> Score {
        let c = self.captured;
        Score::new(if self.stays {
            c + child.get()
        } else {
            c - child.get()
        })
    }

    /// [`Gain::value`] on a raw byte, saturating instead of leaving the
    /// range of scores: for a checker that reads values it does not trust
    /// (a child's value out of range is reported on its own).
    #[inline]
    pub fn value_saturating(self, child: i8) -> i8 {
        if self.stays {
            self.captured.saturating_add(child)
        } else {
            self.captured.saturating_sub(child)
        }
    }

    /// True for the gain of a quiet move: nothing captured, so the child is
    /// on the mover's level.
    #[inline]
    pub fn is_quiet(self) -> bool {
        self.captured == 0
    }
}

/// The legal moves of a position, at most one per pit of the mover, in pit order.
#[derive(Clone, Copy, Debug)]
pub struct MoveList {
    moves: [Option<Move>; 8],
    len: u8,
}

impl Default for MoveList {
    fn default() -> MoveList {
        MoveList::new()
    }
}

impl MoveList {
    /// An empty list.
    pub fn new() -> MoveList {
        MoveList {
            moves: [None; 8],
            len: 0,
        }
    }

    /// Empties the list, for reuse.
    fn clear(&mut self) {
        self.len = 0;
    }

    fn push(&mut self, m: Move) {
        self.moves[self.len as usize] = Some(m);
        self.len += 1;
    }

    /// Applies the rule every rule set shares: a move that leaves the opponent
    /// without seeds (bit k of `starving`: move k) is legal only when every
    /// move does. `free_elsewhere` says that a move not in the list does not.
    /// Keeps the order of the moves left.
    fn drop_starving_unless_forced(&mut self, starving: u8, free_elsewhere: bool) {
        let every = ((1u16 << self.len) - 1) as u8;
        if starving == 0 || (starving == every && !free_elsewhere) {
            return;
        }
        let mut kept = 0;
        for k in 0..self.len as usize {
            if starving & (1 << k) == 0 {
                self.moves[kept] = self.moves[k];
                kept += 1;
            }
        }
        for slot in &mut self.moves[kept..self.len as usize] {
            *slot = None;
        }
        self.len = kept as u8;
    }

    /// The number of legal moves (0 only when the mover's row is empty).
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when there is no legal move: the game is over.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The moves in pit order.
    pub fn iter(&self) -> impl Iterator<Item = &Move> + '_ {
        self.moves[..self.len as usize].iter().flatten()
    }

    /// The move from `pit`, if it is legal.
    pub fn get(&self, pit: usize) -> Option<&Move> {
        self.iter().find(|m| m.pit as usize == pit)
    }
}

/// What sowing and capturing from one pit does, before the rule set's filter.
#[derive(Clone, Copy)]
struct Sown {
    mov: Move,
    /// The move leaves the opponent's row empty and is therefore restricted by the
    /// rule set (a grand slam under `awari`, or a move that does not feed).
    starves: bool,
}

/// The bytes (of a packed board, [`Board::packed`]) of the pits that the
/// last seed of a sowing captures when it lands in pit `last` of board `b`
/// (after the sowing), with `per_side` pits per side: the opponent's pits
/// holding 2 or 3 seeds in a run back from `last`. None when `last` is the
/// mover's or holds other counts.
#[inline(always)]
fn captured_bytes(b: u128, last: usize, per_side: usize) -> u128 {
    let two_or_three = pits_of_two_or_three(b) & !((1u32 << per_side) - 1);
    // The pits up to `last` that end the run: the mover's, and the
    // opponent's holding other counts. Pit 0 is one, so there is a highest.
    let stops = !two_or_three & ((2u32 << last) - 1);
    let first = 32 - stops.leading_zeros() as usize; // 1..=last + 1
                                                     // Bytes 0..n, for n in 1..=16.
    let low_bytes = |n: usize| u128::MAX >> (128 - 8 * n);
    low_bytes(last + 1) & !low_bytes(first)
}

/// [`captured_bytes`] for a clockwise sowing (`cross-wari`, an odd count):
/// the run of the opponent's pits holding 2 or 3 goes up from `last` (the
/// sowing came down through `last + 1`, `last + 2`, ...) and ends, at the
/// latest, past pit 2P - 1, where the mover's row begins again.
#[inline(always)]
fn captured_bytes_clockwise(b: u128, last: usize, per_side: usize) -> u128 {
    let two_or_three = pits_of_two_or_three(b) & !((1u32 << per_side) - 1);
    // The pits from `last` on that end the run; the pits past the board hold
    // no 2 or 3, so there is a lowest, at most 2P.
    let stops = !two_or_three & (u32::MAX << last);
    let end = stops.trailing_zeros() as usize; // last..=2P
                                               // Bytes 0..n, for n in 0..=16.
    let low_bytes = |n: usize| !u128::MAX.checked_shl(8 * n as u32).unwrap_or(0);
    low_bytes(end) & !low_bytes(last)
}

impl Rules {
    /// The legal moves of `board` under these rules, in pit order.
    ///
    /// Empty exactly when the mover's row is empty; the position is then worth
    /// `-n` (see [`Rules::terminal_value`]).
    ///
    /// # Panics
    /// In debug builds, when the board has another number of pits per side.
    #[inline]
    pub fn legal_moves(&self, board: &Board) -> MoveList {
        debug_assert_eq!(board.per_side(), self.pits());
        // Every move is sown straight into the list (no copy in between); the
        // starving ones are dropped afterwards when another move does not starve.
        let mut list = MoveList::new();
        let mut starving = 0u8; // bit k: the list's move k starves
        for pit in 0..self.pits() as usize {
            if board.pit(pit) > 0 {
                let sown = self.sow(board, pit);
                starving |= u8::from(sown.starves) << list.len;
                list.push(sown.mov);
            }
        }
        list.drop_starving_unless_forced(starving, false);
        list
    }

    /// The number of legal quiet (non-capturing) moves of `board`; its legal
    /// capturing moves replace what `captures` held. This is what the solver
    /// needs of a board before its level is solved, for less work than
    /// [`Rules::legal_moves`]. (The list is the caller's, to be reused: a
    /// `MoveList` is some 170 bytes, and returning a fresh one per board cost
    /// the solver's initial pass a copy of it each time.)
    ///
    /// A move is seen to be quiet from where its last seed lands, without sowing;
    /// only the moves whose last seed may capture are sown. The result equals
    /// counting and filtering [`Rules::legal_moves`] (a property test checks it).
    #[inline]
    pub fn quiet_moves_and_captures(&self, board: &Board, captures: &mut MoveList) -> u8 {
        crate::with_pits!(self.pits(), P => self.quiet_moves_and_captures_sized::<P>(board, captures))
    }

    /// [`Rules::quiet_moves_and_captures`] for boards of `P` pits per side,
    /// the rules' own: the loop over the mover's pits unrolls, and which
    /// moves may capture is found without a branch per pit (whether a pit is
    /// empty, or its last seed makes 2 or 3, is as good as random).
    ///
    /// # Panics
    /// In debug builds, when `P` is not the rules' pits per side.
    #[inline(always)]
    pub fn quiet_moves_and_captures_sized<const P: usize>(
        &self,
        board: &Board,
        captures: &mut MoveList,
    ) -> u8 {
        self.quiet_pits_and_captures_sized::<P>(board, captures)
            .count_ones() as u8
    }

    /// The pits of the legal quiet (non-capturing) moves of `board`, as bits
    /// (bit `pit`), for boards of `P` pits per side; its legal capturing
    /// moves replace what `captures` held. As
    /// [`Rules::quiet_moves_and_captures_sized`], which counts the bits; the
    /// children of the quiet moves are [`Rules::known_quiet_child`].
    ///
    /// # Panics
    /// In debug builds, when `P` is not the rules' pits per side.
    #[inline(always)]
    pub fn quiet_pits_and_captures_sized<const P: usize>(
        &self,
        board: &Board,
        captures: &mut MoveList,
    ) -> u32 {
        debug_assert_eq!(usize::from(self.pits()), P);
        let sowing = Sowing::for_rules(*self);
        let pits = board.array();
        // With an empty opponent row a quiet move may starve; such boards are rare,
        // take the general path.
        if board.opponent_row_empty() {
            let moves = self.legal_moves(board);
            captures.clear();
            let mut quiet = 0u32;
            for m in moves.iter() {
                if m.is_quiet() {
                    quiet |= 1 << m.pit;
                } else {
                    captures.push(*m);
                }
            }
            return quiet;
        }
        // The opponent has seeds, so no quiet move starves and only a capture can.
        // A move is quiet when its last seed lands in the mover's row, or
        // makes neither 2 nor 3; only the others are sown.
        let mut quiet = 0u32; // bit pit: the move from pit is quiet
        let mut may_capture = 0u32; // bit pit: the move from pit may capture
        for pit in 0..P {
            let seeds = usize::from(pits[pit]);
            // (An empty pit "lands" in itself, in the mover's row.)
            let last = sowing.last(pit, seeds);
            let landed = pits[last % MAX_BOARD_PITS] + sowing.landing(pit, seeds);
            // `&`, not `&&`: each test is as good as random, and a branch
            // on it would be mispredicted half the time.
            let capturing = (last >= P) & (landed & !1 == 2);
            quiet |= u32::from((seeds != 0) & !capturing) << pit;
            may_capture |= u32::from(capturing) << pit;
        }
        // The captures go straight into the list, as in `legal_moves`.
        captures.clear();
        let mut starving = 0u8; // bit k: capture k starves
        while may_capture != 0 {
            let pit = may_capture.trailing_zeros() as usize;
            may_capture &= may_capture - 1;
            let sown = self.sow(board, pit);
            if sown.mov.is_quiet() {
                quiet |= 1 << pit; // a grand slam that captures nothing (abapa)
            } else {
                starving |= u8::from(sown.starves) << captures.len;
                captures.push(sown.mov);
            }
        }
        // (The quiet moves do not starve here.)
        captures.drop_starving_unless_forced(starving, quiet != 0);
        quiet
    }

    /// The child of the move from the mover's `pit` of `board` when that
    /// move is known to be legal and quiet (a pit of
    /// [`Rules::quiet_pits_and_captures_sized`]): the seeds sown, and the turn
    /// passed. No check is made, unlike [`Rules::quiet_child`].
    ///
    /// # Panics
    /// In debug builds, when the move is not a legal quiet one.
    #[inline]
    pub fn known_quiet_child(&self, board: &Board, pit: usize) -> Board {
        debug_assert!(self.play(board, pit).is_ok_and(|m| m.is_quiet()));
        let sowing = Sowing::for_rules(*self);
        let seeds = usize::from(board.pit(pit));
        Board::from_packed(sowing.sow(board.packed(), pit, seeds), self.pits()).swapped()
    }

    /// Plays the move from the mover's `pit`.
    ///
    /// # Errors
    /// [`Error::IllegalMove`] when the pit is not the mover's, is empty, or the rule
    /// set forbids the move (it would leave the opponent without seeds while another
    /// move would not).
    pub fn play(&self, board: &Board, pit: usize) -> Result<Move> {
        let illegal = |reason: &str| Error::IllegalMove {
            board: board.to_notation(),
            pit: if pit < self.pits() as usize {
                pit_label(pit, self.pits() as usize).to_string()
            } else {
                format!("#{pit}")
            },
            reason: reason.to_string(),
        };
        if pit >= self.pits() as usize {
            return Err(illegal("not a pit of the mover's row"));
        }
        if board.pit(pit) == 0 {
            return Err(illegal("the pit is empty"));
        }
        self.legal_moves(board).get(pit).copied().ok_or_else(|| {
            illegal(match self.set() {
                RuleSet::Awari => {
                    "it would leave the opponent without seeds while another move would not"
                }
                _ => "the opponent's row is empty and another move would feed it",
            })
        })
    }

    /// The child of the legal quiet move from `pit`, or `None` when that move is
    /// illegal or captures. Cheaper than [`Rules::play`] for the common case
    /// (one sowing; the other moves are looked at only when this one starves).
    #[inline]
    pub fn quiet_child(&self, board: &Board, pit: usize) -> Option<Board> {
        if pit >= self.pits() as usize || board.pit(pit) == 0 {
            return None;
        }
        let sown = self.sow(board, pit);
        if !sown.mov.is_quiet() || sown.mov.turn != Turn::Passes {
            return None;
        }
        if sown.starves && self.legal_moves(board).get(pit).is_none() {
            return None;
        }
        Some(sown.mov.child)
    }

    /// The value of a position with no legal move: `-n` when the mover's row is
    /// empty (the opponent takes every seed left; 0 under `cross-wari`, where
    /// they go to no one), `None` when the mover can move.
    pub fn terminal_value(&self, board: &Board) -> Option<Score> {
        board
            .mover_row_empty()
            .then(|| self.value_without_moves(board.seeds()))
    }

    /// The value of a position of `seeds` seeds whose mover cannot move:
    /// `-seeds`, or 0 under `cross-wari` (see [`Rules::terminal_value`]).
    pub fn value_without_moves(&self, seeds: u32) -> Score {
        if self.set().end_leaves_seeds_to_no_one() {
            Score::new(0)
        } else {
            Score::new(-(seeds as i8))
        }
    }

    /// Sows the seeds of `pit` and applies this rule set's capture rule.
    ///
    /// Always inlined: called apart, it hands its result back through memory,
    /// written field by field and read back in wider pieces, which stalls.
    #[inline(always)]
    fn sow(&self, board: &Board, pit: usize) -> Sown {
        let p = self.pits() as usize;
        let sowing = Sowing::for_rules(*self);
        let before = board.packed();
        let seeds = board.array()[pit] as usize;
        let b = sowing.sow(before, pit, seeds);
        let last = sowing.last(pit, seeds);
        let opponent = board.opponent_row_mask();
        let opponent_had_seeds = before & opponent != 0;
        let fed = b & opponent != 0;

        // Captures: backwards from the last pit while in the opponent's row
        // and 2 or 3. The run is found from bit masks: a loop over it ended
        // after an unpredictable number of pits.
        let taken = if self.set().sows_odd_clockwise() && seeds % 2 == 1 {
            captured_bytes_clockwise(b, last, p)
        } else {
            captured_bytes(b, last, p)
        };
        let captured = seeds_packed(b & taken) as u8;
        let after = b & !taken;
        let grand_slam = captured > 0 && after & opponent == 0;
        let not_feeding = !fed;
        debug_assert!(!not_feeding || !opponent_had_seeds);

        let (result, captured, turn, starves) = match self.set() {
            RuleSet::Awari => (after, captured, Turn::Passes, grand_slam || not_feeding),
            RuleSet::Abapa | RuleSet::CrossWari if grand_slam => (b, 0, Turn::Passes, false),
            RuleSet::Abapa | RuleSet::CrossWari | RuleSet::GrandSlamCaptures => {
                (after, captured, Turn::Passes, not_feeding)
            }
            RuleSet::GrandSlamReplay if grand_slam => (after, captured, Turn::Stays, false),
            RuleSet::GrandSlamReplay => (after, captured, Turn::Passes, not_feeding),
        };
        let played = Board::from_packed(result, self.pits());
        let child = match turn {
            Turn::Passes => played.swapped(),
            Turn::Stays => played,
        };
        Sown {
            mov: Move {
                pit: pit as u8,
                captured,
                child,
                turn,
            },
            starves,
        }
    }

    /// Every board of the same level from which a legal non-capturing move leads to
    /// `board`, with the pit of that move, in order of pit then seeds sown.
    ///
    /// Candidates come from un-sowing into each empty pit of the parent's row; each
    /// is confirmed by playing it forward, so the list holds exactly the parents.
    /// Parents whose opponent row is full (not stored) are included.
    pub fn unmoves(&self, board: &Board) -> Vec<(Board, usize)> {
        let mut out = Vec::new();
        self.for_each_unmove(board, |parent, pit| out.push((parent, pit)));
        out
    }

    /// Calls `visit(parent, pit)` for each parent of [`Rules::unmoves`], without allocating.
    #[inline]
    pub fn for_each_unmove(&self, board: &Board, mut visit: impl FnMut(Board, usize)) {
        let p = self.pits() as usize;
        let sowing = Sowing::for_rules(*self);
        // The parent's view of the board after its move: rows swapped back.
        let after = board.swapped().packed();
        let seeds = board.seeds() as usize;
        // A move that leaves the child's mover with seeds does not starve, and so is
        // legal under every rule set; it is quiet when its last seed makes no 2 or 3
        // in the opponent's row. Such candidates are parents as they stand (un-sowing
        // then sowing gives the same board back). Any other candidate is replayed.
        let feeds = !board.mover_row_empty();
        // Sowings in order of seeds sown. Sowing more seeds the same way
        // round drops at least as many into every pit, so once some pit is
        // short, every longer sowing that way is too: every longer one when
        // all go one way, those of the same parity under `cross-wari`.
        let both_ways = self.set().sows_odd_clockwise();
        for pit in 0..p {
            if pit_of(after, pit) != 0 {
                continue; // the pit a move starts from is always empty afterwards
            }
            let mut short = [false; 2]; // by parity of the seeds sown
            for sown in 1..=seeds {
                if short[sown % 2] {
                    if short[(sown + 1) % 2] {
                        break;
                    }
                    continue;
                }
                let Some(parent) = sowing.unsow(after, pit, sown) else {
                    if !both_ways {
                        break;
                    }
                    short[sown % 2] = true;
                    continue;
                };
                let k = sowing.last(pit, sown);
                let may_capture = k >= p && matches!(pit_of(after, k), 2 | 3);
                // (One call of `visit`, so that the compiler inlines it here
                // rather than calling it apart with the board in memory.)
                let is_parent = if feeds && !may_capture {
                    true
                } else if may_capture && !self.set().grand_slam_captures_nothing() {
                    // A last seed making 2 or 3 in the opponent's row captures,
                    // except in a grand slam under abapa or cross-wari (which
                    // captures nothing).
                    false
                } else {
                    let candidate = Board::from_packed(parent, self.pits());
                    self.quiet_child(&candidate, pit) == Some(*board)
                };
                // (The board is made afresh from `parent` rather than reused:
                // the copy above lies in memory in two halves, and reading it
                // back whole stalled the store buffer.)
                if is_parent {
                    visit(Board::from_packed(parent, self.pits()), pit);
                }
            }
        }
    }
}

// Keep the array size in one place for the un-move scratch arrays above.
const _: () = assert!(MAX_BOARD_PITS == 16);
