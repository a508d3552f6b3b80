//! The index: a bijection between the stored boards of one level and `0..size`.
//!
//! The order is the one of the published Romein–Bal files (`docs/rules.md`, "Which
//! boards are stored, and their order"): boards with `n` seeds, in increasing
//! lexicographic order of `(pit 2P-1, pit 2P-2, ..., pit 0)`, skipping boards whose
//! opponent row has no empty pit.
//!
//! ## Ranking
//! Pits are placed from the top (pit 2P-1) down. Let `count(j, z, m)` be the
//! number of ways to fill the `j` lowest pits (`j-1..=0`) with `m` seeds so that
//! the whole board is stored, where `z` says whether an opponent pit above them
//! is already empty. Boards that agree on the pits above `j` and put `x` seeds in
//! pit `j` form one contiguous block of the order, so the rank of a board is the
//! sum, over its pits, of the sizes of the blocks with fewer seeds in that pit:
//! `below(z, j, r, v) = sum over x < v of count(j, z', r - x)`, with `r` the seeds
//! left for pits `j..=0` and `z'` the flag after placing `x`.
//!
//! Those sums are differences of prefix sums `pre(j, z, m) = sum over y <= m of
//! count(j, z, y)`, so the tables hold one number per (pit, flag, seeds) rather
//! than per (pit, flag, seeds, value):
//!
//! - once an empty opponent pit is seen (`z = 1`, always so for the mover's
//!   pits): `below = pre(j, 1, r) - pre(j, 1, r - v)`;
//! - before (`z = 0`, an opponent pit): 0 for `v = 0`, else
//!   `count(j, 1, r) + pre(j, 0, r - 1) - pre(j, 0, r - v)` (the empty-pit block
//!   first, then the blocks that still need an empty pit below).
//!
//! For 6 pits and a level of 24 seeds the entries used take about 5 KB (in
//! some 9 KB of cache lines: a table row is padded to 128 entries so that
//! reads need no bounds check), so rank and unrank run from the L1 cache (a
//! table indexed by the value as well was 16 times larger and spilled to L2,
//! which made both several times slower).

pub mod finder;
pub mod packed;

pub use finder::BoardFinder;
pub use packed::BoardPacker;

use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::game::board::{seeds_packed, Board, MAX_BOARD_PITS};
use crate::game::rules::{MAX_PITS, MAX_SEEDS, MIN_PITS};

const S: usize = MAX_SEEDS as usize + 1;

/// Ranking tables for one board size (pits per side), valid for every level up
/// to `MAX_SEEDS` seeds.
pub struct Index {
    per_side: u8,
    /// `pre_zero.at(j, m)`: `pre(j, 1, m)`, see the module docs.
    pre_zero: Table,
    /// `pre_no_zero.at(j, m)`: `pre(j, 0, m)`.
    pre_no_zero: Table,
    /// `first_zero.at(j, r)`: `count(j, 1, r)`, the boards whose first empty
    /// opponent pit (from the top) is pit `j`, given `r` seeds for pits `j..=0`.
    first_zero: Table,
    /// `sizes[n]`: the number of stored boards with `n` seeds.
    sizes: Vec<u64>,
}

/// Entries per row of a [`Table`]: a power of two above `MAX_SEEDS`, so that
/// an index masked to it is in range and needs no bounds check.
const TABLE_ROW: usize = 128;
const _: () = assert!(S <= TABLE_ROW && TABLE_ROW.is_power_of_two());
const _: () = assert!(MAX_BOARD_PITS.is_power_of_two());

/// One number per (pit, seeds), read by [`Table::at`] without bounds checks:
/// rank and unrank read some twenty entries per board, in the solver's
/// hottest loops, and a check per read cost about a quarter of rank's work.
struct Table(Box<[[u64; TABLE_ROW]; MAX_BOARD_PITS]>);

impl Table {
    /// The entry of pit `j` and `m` seeds. The callers keep `j < 2P` and
    /// `m <= MAX_SEEDS` for every entry they use; the masks let the compiler
    /// see that the reads are in range (an index past the table would have
    /// been a bug anyway), and let the branch-free code of `prefix_length`
    /// and `opponent_walk_packed` read entries they then discard.
    #[inline(always)]
    fn at(&self, j: usize, m: usize) -> u64 {
        self.0[j % MAX_BOARD_PITS][m % TABLE_ROW]
    }
}

/// Unranking's search for a pit's seeds: the `v` in `from..=r` such that
/// `pre(r - m - 1) >= target` holds for every `m` in `from..v` and fails at
/// `v` (or `v = r`), given that it holds for a prefix of `from..r` (`pre` is
/// a row of prefix sums, nondecreasing).
///
/// The first four candidates are tested at once, without a branch: most pits
/// hold a few seeds, and a loop that stopped at the first failure
/// mispredicted its exit at nearly every pit. (`pre` reads a [`Table`] row,
/// whose masked index keeps the reads past `m = r` in range; they are
/// discarded.)
#[inline(always)]
fn prefix_length(pre: impl Fn(usize) -> u64, r: usize, from: usize, target: u64) -> usize {
    let holds = |m: usize| usize::from((m < r) & (pre(r.wrapping_sub(m + 1)) >= target));
    let first = holds(from) + holds(from + 1) + holds(from + 2) + holds(from + 3);
    let mut v = from + first;
    if first == 4 {
        while v < r && pre(r - v - 1) >= target {
            v += 1;
        }
    }
    v
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Index({} pits per side)", self.per_side)
    }
}

impl Index {
    /// The shared index for `per_side` pits per side (built once, then cached).
    ///
    /// # Panics
    /// When `per_side` is outside `MIN_PITS..=MAX_PITS`; [`crate::Rules::new`]
    /// rejects such sizes with an error first.
    pub fn for_pits(per_side: u8) -> &'static Index {
        static CACHE: [OnceLock<Index>; MAX_PITS as usize + 1] =
            [const { OnceLock::new() }; MAX_PITS as usize + 1];
        assert!(
            (MIN_PITS..=MAX_PITS).contains(&per_side),
            "unsupported board size"
        );
        CACHE[per_side as usize].get_or_init(|| Index::build(per_side))
    }

    fn build(per_side: u8) -> Index {
        let p = per_side as usize;
        let n = 2 * p;
        // count[z][j][s]: fillings of pits j-1..=0 with s seeds giving a stored board.
        let mut count = vec![[vec![0u64; S], vec![0u64; S]]; n + 1];
        count[0][1][0] = 1; // all pits placed, an empty opponent pit was seen
        for j in 1..=n {
            let pit = j - 1; // the pit placed at this step
            for z in 0..2 {
                for s in 0..S {
                    let mut total = 0u64;
                    for x in 0..=s {
                        let z2 = z == 1 || (pit >= p && x == 0);
                        total += count[j - 1][usize::from(z2)][s - x];
                    }
                    count[j][z][s] = total;
                }
            }
        }
        let table = |f: &dyn Fn(usize, usize) -> u64| -> Table {
            let mut rows = Box::new([[0u64; TABLE_ROW]; MAX_BOARD_PITS]);
            for (j, row) in rows.iter_mut().enumerate().take(n) {
                for (m, entry) in row.iter_mut().enumerate().take(S) {
                    *entry = f(j, m);
                }
            }
            Table(rows)
        };
        let prefix = |j: usize, z: usize, m: usize| count[j][z][..=m].iter().sum::<u64>();
        let sizes = (0..S).map(|s| count[n][0][s]).collect();
        Index {
            per_side,
            pre_zero: table(&|j, m| prefix(j, 1, m)),
            pre_no_zero: table(&|j, m| prefix(j, 0, m)),
            first_zero: table(&|j, m| count[j][1][m]),
            sizes,
        }
    }

    /// Pits per side of the boards this index ranks.
    pub fn per_side(&self) -> u8 {
        self.per_side
    }

    /// The number of stored boards with `seeds` seeds (0 beyond `MAX_SEEDS`).
    pub fn level_size(&self, seeds: u32) -> u64 {
        self.sizes.get(seeds as usize).copied().unwrap_or(0)
    }

    /// The number of all boards with `seeds` seeds, stored or not: C(n+2P-1, 2P-1).
    pub fn all_boards(&self, seeds: u32) -> u64 {
        binomial(
            u64::from(seeds) + 2 * u64::from(self.per_side) - 1,
            2 * u64::from(self.per_side) - 1,
        )
    }

    /// The index of a stored board within its level, or `None` when the board is
    /// not stored (its opponent row has no empty pit).
    ///
    /// # Panics
    /// In debug builds, when the board has another number of pits per side.
    #[inline]
    pub fn rank(&self, board: &Board) -> Option<u64> {
        debug_assert_eq!(board.per_side(), self.per_side);
        let (opponent, remaining) = self.opponent_walk(board)?;
        Some(opponent + self.mover_walk(board, remaining))
    }

    /// The part of a stored board's index that its opponent's row and its seed
    /// count give: `rank(board) = opponent_part(board) + mover_part(board)`.
    /// `None` when the board is not stored.
    ///
    /// For passes that rank many boards sharing an opponent row and a level
    /// (the children of one move in a [`Tile`]): this part, the larger one,
    /// is then found once.
    ///
    /// # Panics
    /// In debug builds, when the board has another number of pits per side.
    #[inline]
    pub fn opponent_part(&self, board: &Board) -> Option<u64> {
        debug_assert_eq!(board.per_side(), self.per_side);
        self.opponent_walk(board).map(|(index, _)| index)
    }

    /// The part of a board's index that its mover's row gives (see
    /// [`Index::opponent_part`]): the same for every stored board with that
    /// mover's row, whatever the opponent's.
    #[inline]
    pub fn mover_part(&self, board: &Board) -> u64 {
        let p = self.per_side as usize;
        let seeds = board.array()[..p].iter().map(|&s| s as usize).sum();
        self.mover_walk(board, seeds)
    }

    /// The opponent's pits of a rank, from the top: the sum of their blocks
    /// (see the module docs) and the seeds left for the mover's row, or
    /// `None` when no opponent pit is empty.
    #[inline(always)]
    fn opponent_walk(&self, board: &Board) -> Option<(u64, usize)> {
        let p = self.per_side as usize;
        let n = 2 * p;
        let pits = board.array();
        let mut remaining = board.seeds() as usize;
        let mut index = 0;
        // The opponent's pits from the top, until the first empty one.
        let mut j = n;
        loop {
            if j == p {
                return None; // no empty opponent pit: not stored
            }
            j -= 1;
            let v = pits[j] as usize;
            if v == 0 {
                break;
            }
            index += self.first_zero.at(j, remaining) + self.pre_no_zero.at(j, remaining - 1)
                - self.pre_no_zero.at(j, remaining - v);
            remaining -= v;
        }
        // The opponent's pits below (z is now 1).
        for j in (p..j).rev() {
            let v = pits[j] as usize;
            index += self.pre_zero.at(j, remaining) - self.pre_zero.at(j, remaining - v);
            remaining -= v;
        }
        Some((index, remaining))
    }

    /// The mover's pits of a rank, which hold `remaining` seeds.
    #[inline(always)]
    fn mover_walk(&self, board: &Board, mut remaining: usize) -> u64 {
        let p = self.per_side as usize;
        let pits = board.array();
        let mut index = 0;
        // Every mover's pit but pit 0 (which holds what remains); z = 1 here.
        for j in (1..p).rev() {
            let v = pits[j] as usize;
            index += self.pre_zero.at(j, remaining) - self.pre_zero.at(j, remaining - v);
            remaining -= v;
        }
        index
    }

    /// [`Index::rank`] for boards of `P` pits per side, this index's own:
    /// the walks over the pits unroll and the first empty opponent pit is
    /// found without a branch, for the solver's hot loops (the captures of
    /// its initial pass). The same value as [`Index::rank`].
    ///
    /// # Panics
    /// In debug builds, when `P` is not this index's pits per side.
    #[inline]
    pub fn rank_sized<const P: usize>(&self, board: &Board) -> Option<u64> {
        debug_assert_eq!(board.per_side(), self.per_side);
        let pits = board.packed();
        self.rank_packed::<P>(pits, seeds_packed(pits))
    }

    /// [`Index::rank`] of the board of pits `pits` ([`Board::packed`]) with
    /// `P` pits per side and `seeds` seeds, for the hot loops of board size
    /// `P` (the rows are then constant and the walks unroll).
    #[inline(always)]
    pub(crate) fn rank_packed<const P: usize>(&self, pits: u128, seeds: usize) -> Option<u64> {
        let (opponent, remaining) = self.opponent_walk_packed::<P>(pits, seeds)?;
        Some(opponent + self.mover_walk_packed::<P>(pits, remaining))
    }

    /// [`Index::opponent_walk`] of packed pits (see [`Index::rank_packed`]):
    /// the opponent's part of the index and the seeds left for the mover's
    /// row, or `None` when no opponent pit is empty.
    ///
    /// Two walks, because each wins where it is used: this one, without a
    /// branch on the first empty pit, in the solver's loops; the general one,
    /// which stops there, for [`Index::rank`] of boards one at a time (a
    /// `rank` made of this walk was slower in `bench_moves`; the figures are
    /// in `docs/performance.md`).
    #[inline(always)]
    pub(crate) fn opponent_walk_packed<const P: usize>(
        &self,
        pits: u128,
        seeds: usize,
    ) -> Option<(u64, usize)> {
        debug_assert_eq!(usize::from(self.per_side), P);
        let mut remaining = seeds;
        let mut index = 0;
        // `seen`: an empty opponent pit lies above pit j (z = 1).
        let mut seen = false;
        for j in (P..2 * P).rev() {
            let v = usize::from((pits >> (8 * j)) as u8);
            // Both terms, then a choice the compiler makes without a branch:
            // which pit is the first empty one is as good as random, and the
            // branch on it cost more than the extra reads (bench_moves).
            let after_zero = self.pre_zero.at(j, remaining) - self.pre_zero.at(j, remaining - v);
            let before_zero = (self.first_zero.at(j, remaining)
                + self.pre_no_zero.at(j, remaining.wrapping_sub(1)))
            .wrapping_sub(self.pre_no_zero.at(j, remaining - v));
            let empty = v == 0;
            index += if seen {
                after_zero
            } else if empty {
                0
            } else {
                before_zero
            };
            seen |= empty;
            remaining -= v;
        }
        seen.then_some((index, remaining))
    }

    /// [`Index::mover_walk`] of packed pits whose mover's row holds
    /// `remaining` seeds (see [`Index::rank_packed`]).
    #[inline(always)]
    pub(crate) fn mover_walk_packed<const P: usize>(
        &self,
        pits: u128,
        mut remaining: usize,
    ) -> u64 {
        let mut index = 0;
        for j in (1..P).rev() {
            let v = usize::from((pits >> (8 * j)) as u8);
            index += self.pre_zero.at(j, remaining) - self.pre_zero.at(j, remaining - v);
            remaining -= v;
        }
        index
    }

    /// The number of mover's rows of `seeds` seeds: the boards of a level
    /// that share an opponent's row, consecutive in the index order.
    #[inline]
    pub(crate) fn mover_rows(&self, seeds: usize) -> u64 {
        // count(P, 1, seeds): the P lowest pits filled, an empty pit above.
        self.first_zero.at(usize::from(self.per_side), seeds)
    }

    /// Unranking's step for pit `j` below an empty opponent pit (z = 1, so
    /// every mover's pit): the seeds `v` of the pit when `r` seeds are left
    /// for pits `j..=0` and `rest` of the index, the largest `v` with
    /// `below(v) = pre(r) - pre(r - v) <= rest`; `rest` loses `below(v)`.
    #[inline(always)]
    fn unrank_low_pit(&self, j: usize, r: usize, rest: &mut u64) -> usize {
        let pre = |m| self.pre_zero.at(j, m);
        let top = pre(r);
        let target = top - (*rest).min(top);
        let v = prefix_length(pre, r, 0, target);
        *rest -= top - pre(r - v);
        v
    }

    /// The mover's row (packed, [`Board::packed`]; the opponent's bytes 0)
    /// of `seeds` seeds whose part of the index ([`Index::mover_part`]) is
    /// `rest`, below [`Index::mover_rows`]: the mover's half of
    /// [`Index::unrank`], for `P` pits per side.
    #[inline]
    pub(crate) fn unrank_mover_packed<const P: usize>(&self, mut rest: u64, seeds: usize) -> u128 {
        debug_assert!(rest < self.mover_rows(seeds));
        let mut r = seeds;
        let mut pits = 0u128;
        for j in (1..P).rev() {
            let v = self.unrank_low_pit(j, r, &mut rest);
            pits |= (v as u128) << (8 * j);
            r -= v;
        }
        pits | r as u128
    }

    /// Like [`Index::rank`], but an error naming the board when it is not stored.
    ///
    /// # Errors
    /// [`Error::NotStored`] when the opponent's row has no empty pit.
    pub fn try_rank(&self, board: &Board) -> Result<u64> {
        self.rank(board).ok_or_else(|| Error::NotStored {
            board: board.to_notation(),
        })
    }

    /// The board with index `index` in the level of `seeds` seeds.
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`] when `index` is not below the level's size, and
    /// [`Error::TooManySeeds`] beyond `MAX_SEEDS`.
    #[inline]
    pub fn unrank(&self, seeds: u32, index: u64) -> Result<Board> {
        crate::game::rules::check_seeds(seeds)?;
        let boards = self.level_size(seeds);
        if index >= boards {
            return Err(Error::IndexOutOfRange {
                seeds,
                index,
                boards,
            });
        }
        let p = self.per_side as usize;
        let mut pits = [0u8; MAX_BOARD_PITS];
        let mut r = seeds as usize;
        let mut rest = index;
        // Each pit gets the largest v whose block starts at or before `rest`
        // (see the module docs for the block starts `below`).
        let mut j = 2 * p;
        // The opponent's pits from the top, until the first empty one.
        while j > p {
            j -= 1;
            let empty_block = self.first_zero.at(j, r);
            if rest < empty_block {
                break; // pit j is the first empty opponent pit
            }
            // v >= 1: below(v) = top - pre(r-v) <= rest, where top =
            // count(j, 1, r) + pre(r-1) is where this pit's blocks end.
            let top = empty_block + self.pre_no_zero.at(j, r - 1);
            let target = top - rest;
            let pre = |m| self.pre_no_zero.at(j, m);
            let v = prefix_length(pre, r, 1, target);
            rest -= top - pre(r - v);
            pits[j] = v as u8;
            r -= v;
        }
        // Every pit below.
        for j in (1..j).rev() {
            let v = self.unrank_low_pit(j, r, &mut rest);
            pits[j] = v as u8;
            r -= v;
        }
        pits[0] = r as u8;
        Ok(Board::from_array(pits, self.per_side))
    }

    /// The stored boards of a level in index order.
    pub fn boards(&self, seeds: u32) -> LevelIter {
        self.boards_from(seeds, 0)
    }

    /// The stored boards of a level in index order, starting at index `start`
    /// (an empty iterator when `start` is past the end).
    pub fn boards_from(&self, seeds: u32, start: u64) -> LevelIter {
        let size = self.level_size(seeds);
        match self.unrank(seeds, start) {
            Ok(board) => LevelIter {
                board,
                left: size - start,
            },
            Err(_) => LevelIter {
                board: Board::empty(self.per_side),
                left: 0,
            },
        }
    }

    /// The stored boards of a level cut into [`Tile`]s: each holds up to
    /// `width` consecutive mover rows of one seed count (in the index order of
    /// rows) with every opponent row that makes the board stored. Tiles of
    /// mover rows with fewer seeds come first. Visiting every tile's boards in
    /// turn visits each stored board of the level once.
    ///
    /// This order is for passes that look up the children of every board.
    /// A move's child sees the board from the other side, so the mover's row
    /// (after sowing) becomes the child's opponent row, on which its index
    /// depends most. In the index order the mover's row changes from one board
    /// to the next, and the children of consecutive boards lie all over the
    /// level. Within a tile there are only `width` mover rows, and the
    /// children of each one's move from a pit lie, in increasing order, in one
    /// block of their level; the boards themselves lie in runs of `width`.
    ///
    /// # Panics
    /// When `width` is 0.
    pub fn tiles(&self, seeds: u32, width: usize) -> Vec<Tile> {
        assert!(width > 0, "a tile has at least one mover row");
        let p = self.per_side as usize;
        let mut tiles = Vec::new();
        for m in 0..=seeds {
            let opponent_rows = self.stored_opponent_rows(seeds - m);
            if opponent_rows == 0 {
                continue;
            }
            let mut rows = Compositions::new(p, m);
            while let Some(first) = rows.next() {
                let more = rows.by_ref().take(width - 1).count();
                tiles.push(Tile {
                    first,
                    width: 1 + more,
                    per_side: self.per_side,
                    mover_seeds: m,
                    opponent_seeds: seeds - m,
                    opponent_rows,
                });
            }
        }
        tiles
    }

    /// The number of rows of `P` pits holding `seeds` seeds with an empty pit
    /// (the opponent rows of stored boards).
    fn stored_opponent_rows(&self, seeds: u32) -> u64 {
        let p = u64::from(self.per_side);
        let s = u64::from(seeds);
        let rows = binomial(s + p - 1, p - 1);
        // Rows with every pit >= 1: one seed in each, the rest anywhere.
        let full = if s >= p { binomial(s - 1, p - 1) } else { 0 };
        rows - full
    }

    /// The boards with `seeds` seeds that no database stores (every opponent pit
    /// holds a seed), in index order of the unrestricted numbering.
    pub fn unstored_boards(&self, seeds: u32) -> impl Iterator<Item = Board> + '_ {
        self.unstored_rows(seeds).flat_map(|row| row.boards())
    }

    /// The opponent rows of [`Index::unstored_boards`], in the same order:
    /// each [`UnstoredRow`] yields the unstored boards that have it, so that
    /// a caller may share them out among threads a row at a time.
    pub fn unstored_rows(&self, seeds: u32) -> impl Iterator<Item = UnstoredRow> + '_ {
        let p = self.per_side as usize;
        let per_side = self.per_side;
        (p as u32..=seeds).flat_map(move |opp_seeds| {
            // Opponent rows with every pit >= 1: compositions of opp_seeds - P, plus one.
            Compositions::new(p, opp_seeds - p as u32).map(move |opp| {
                let mut pits = [0u8; MAX_BOARD_PITS];
                for k in 0..p {
                    pits[p + k] = opp[k] + 1;
                }
                UnstoredRow {
                    pits,
                    mover_seeds: seeds - opp_seeds,
                    per_side,
                }
            })
        })
    }
}

/// A full opponent row (every pit holds a seed) and the seeds left for the
/// mover's row: the unstored boards of one level that have this opponent row
/// (see [`Index::unstored_rows`]).
#[derive(Clone, Copy, Debug)]
pub struct UnstoredRow {
    /// The opponent row in place (pits `P..2P`), the mover's pits empty.
    pits: [u8; MAX_BOARD_PITS],
    mover_seeds: u32,
    per_side: u8,
}

impl UnstoredRow {
    /// The number of boards with this opponent row: the arrangements of the
    /// mover's seeds in its pits.
    pub fn len(&self) -> u64 {
        binomial(
            u64::from(self.mover_seeds) + u64::from(self.per_side) - 1,
            u64::from(self.per_side) - 1,
        )
    }

    /// True when no board has this opponent row (never: the mover's seeds
    /// can always be arranged).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The boards with this opponent row, every arrangement of the mover's
    /// seeds in the index order of the unrestricted numbering.
    pub fn boards(self) -> impl Iterator<Item = Board> {
        let p = self.per_side as usize;
        Compositions::new(p, self.mover_seeds).map(move |mover| {
            let mut pits = self.pits;
            pits[..p].copy_from_slice(&mover[..p]);
            Board::from_array(pits, self.per_side)
        })
    }
}

/// Consecutive mover rows of one seed count and every stored board that has
/// one of them (see [`Index::tiles`]).
#[derive(Clone, Debug)]
pub struct Tile {
    /// The first mover row (pits `0..P`; the rest 0).
    first: [u8; MAX_BOARD_PITS],
    /// The number of mover rows.
    width: usize,
    per_side: u8,
    mover_seeds: u32,
    opponent_seeds: u32,
    /// The number of opponent rows with an empty pit and `opponent_seeds` seeds.
    opponent_rows: u64,
}

impl Tile {
    /// The number of mover rows: the length of each run of boards.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The number of boards in the tile.
    pub fn len(&self) -> u64 {
        self.width as u64 * self.opponent_rows
    }

    /// True when the tile holds no board.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The boards of the tile in runs of [`Tile::width`] boards: for each
    /// opponent row in the index order, the boards with each mover row in
    /// the index order. The boards of one run have consecutive indices, so
    /// only the first of a run needs to be ranked.
    pub fn boards(&self) -> TileBoards {
        let p = self.per_side as usize;
        TileBoards {
            movers: Compositions::starting_at(p, self.mover_seeds, self.first)
                .take(self.width)
                .collect(),
            opponents: Compositions::new(p, self.opponent_seeds),
            board: [0; MAX_BOARD_PITS],
            next_mover: self.width,
            per_side: self.per_side,
        }
    }
}

/// The boards of a [`Tile`], in runs of one opponent row (see [`Tile::boards`]).
#[derive(Clone, Debug)]
pub struct TileBoards {
    movers: Vec<[u8; MAX_BOARD_PITS]>,
    opponents: Compositions,
    /// The current opponent row, in place.
    board: [u8; MAX_BOARD_PITS],
    /// The mover row of the next board; `movers.len()` when the run is over.
    next_mover: usize,
    per_side: u8,
}

impl Iterator for TileBoards {
    type Item = Board;

    #[inline]
    fn next(&mut self) -> Option<Board> {
        let p = self.per_side as usize;
        if self.next_mover == self.movers.len() {
            // The next opponent row that leaves the board stored.
            let opponent = self.opponents.by_ref().find(|o| o[..p].contains(&0))?;
            self.board[p..2 * p].copy_from_slice(&opponent[..p]);
            self.next_mover = 0;
        }
        self.board[..p].copy_from_slice(&self.movers[self.next_mover][..p]);
        self.next_mover += 1;
        Some(Board::from_array(self.board, self.per_side))
    }
}

/// Walks one level's stored boards in index order, stepping from each board to
/// the next instead of unranking (amortised O(1) per board).
#[derive(Clone, Debug)]
pub struct LevelIter {
    board: Board,
    left: u64,
}

impl Iterator for LevelIter {
    type Item = Board;

    #[inline]
    fn next(&mut self) -> Option<Board> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let current = self.board;
        if self.left > 0 {
            // On the packed word, in registers, rather than byte by byte in
            // an array that is then copied out whole.
            let p = u32::from(current.per_side());
            let mover_row = Board::row_mask(p);
            let mut pits = step_packed(current.packed());
            // Landing on a board whose opponent row is full (always with the mover's
            // seeds all in pit 0): jump past every mover arrangement of that row.
            while !Board::stored_packed(pits, p) {
                let mover = pits & mover_row;
                pits = step_packed((pits ^ mover) | (mover << (8 * (p - 1))));
            }
            self.board = Board::from_packed(pits, current.per_side());
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.left).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

/// The next arrangement of the same seeds in the index order, on a packed
/// board (pit `k` in byte `k`, every pit below 128 seeds): move one seed up
/// into the pit above the lowest non-empty pit, and put the rest of that pit
/// back into pit 0. The caller guarantees a next arrangement exists.
#[inline]
pub(crate) fn step_packed(pits: u128) -> u128 {
    debug_assert!(pits != 0, "a board with seeds");
    let shift = pits.trailing_zeros() & !7; // the lowest non-empty pit's byte
    let seeds = (pits >> shift) & 0xFF;
    // Empty it, one seed into the pit above, the rest into pit 0.
    pits - (seeds << shift) + (1 << (shift + 8)) + (seeds - 1)
}

/// [`step_packed`] on the first `len` pits of an array (the rest empty).
#[inline]
fn step(pits: &mut [u8; MAX_BOARD_PITS], len: usize) {
    debug_assert!(
        pits[..len]
            .iter()
            .position(|&s| s > 0)
            .is_some_and(|low| low + 1 < len),
        "stepped past the last arrangement"
    );
    *pits = step_packed(u128::from_le_bytes(*pits)).to_le_bytes();
}

/// All ways to put `sum` seeds in `parts` pits, in the index order.
#[derive(Clone, Debug)]
struct Compositions {
    pits: [u8; MAX_BOARD_PITS],
    parts: usize,
    done: bool,
}

impl Compositions {
    fn new(parts: usize, sum: u32) -> Compositions {
        let mut pits = [0u8; MAX_BOARD_PITS];
        pits[0] = sum as u8;
        Compositions {
            pits,
            parts,
            done: false,
        }
    }

    /// The arrangements of `sum` seeds from `first` on (which must hold `sum`).
    fn starting_at(parts: usize, sum: u32, first: [u8; MAX_BOARD_PITS]) -> Compositions {
        debug_assert_eq!(first.iter().map(|&s| u32::from(s)).sum::<u32>(), sum);
        Compositions {
            pits: first,
            parts,
            done: false,
        }
    }
}

impl Iterator for Compositions {
    type Item = [u8; MAX_BOARD_PITS];

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let current = self.pits;
        // The last arrangement has every seed in the top pit.
        let total: u8 = current[..self.parts].iter().sum();
        if current[self.parts - 1] == total {
            self.done = true;
        } else {
            step(&mut self.pits, self.parts);
        }
        Some(current)
    }
}

/// The binomial coefficient C(n, k), exact in u64 for the sizes used here.
pub fn binomial(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut result: u128 = 1;
    for i in 0..k {
        result = result * u128::from(n - i) / u128::from(i + 1);
    }
    result as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(pits: &[u8]) -> Board {
        Board::new(pits).unwrap()
    }

    #[test]
    fn published_index_examples() {
        // docs/rules.md, "Which boards are stored, and their order".
        let ix = Index::for_pits(6);
        let first_five: Vec<Board> = ix.boards(2).take(5).collect();
        let want = [
            [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            [0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            [1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            [0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        ];
        for (got, want) in first_five.iter().zip(want) {
            assert_eq!(got.pits(), want);
        }
        assert_eq!(
            ix.rank(&board(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])),
            Some(0)
        );
        assert_eq!(
            ix.rank(&board(&[0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0])),
            Some(6)
        );
        assert_eq!(ix.level_size(1), 12);
        assert_eq!(
            ix.rank(&board(&[0, 1, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0])),
            Some(2_726)
        );
        assert_eq!(ix.level_size(6), 12_375);
        assert_eq!(
            ix.rank(&board(&[1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0])),
            Some(588_953)
        );
        assert_eq!(ix.level_size(16), 12_685_179);
        assert_eq!(
            ix.rank(&board(&[5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 0])),
            Some(30_844_431_882)
        );
        assert_eq!(ix.level_size(48), 203_648_015_935);
        assert_eq!(
            ix.unrank(48, 30_844_431_882).unwrap(),
            board(&[5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 0])
        );
    }

    #[test]
    fn level_sizes_match_the_closed_form() {
        for p in MIN_PITS..=MAX_PITS {
            let ix = Index::for_pits(p);
            let big_n = 2 * u64::from(p);
            for n in 0..=40u64 {
                let all = binomial(n + big_n - 1, big_n - 1);
                let full = binomial(n + u64::from(p) - 1, big_n - 1);
                assert_eq!(ix.level_size(n as u32), all - full, "P={p} n={n}");
                assert_eq!(ix.all_boards(n as u32), all);
            }
        }
    }

    #[test]
    fn iterator_matches_unrank_and_counts_small_levels() {
        for (p, most) in [(2u8, 12), (3, 10), (4, 8), (6, 7), (8, 5)] {
            let ix = Index::for_pits(p);
            for n in 0..=most {
                let boards: Vec<Board> = ix.boards(n).collect();
                assert_eq!(boards.len() as u64, ix.level_size(n));
                for (i, b) in boards.iter().enumerate() {
                    assert!(b.is_stored());
                    assert_eq!(b.seeds(), n);
                    assert_eq!(ix.rank(b), Some(i as u64));
                }
                let unstored: Vec<Board> = ix.unstored_boards(n).collect();
                assert!(unstored.iter().all(|b| !b.is_stored() && b.seeds() == n));
                assert_eq!(unstored.len() as u64 + ix.level_size(n), ix.all_boards(n));
            }
        }
    }

    #[test]
    fn tiles_cover_each_stored_board_once_in_runs_of_consecutive_indices() {
        for p in [2u8, 3, 4, 6] {
            let ix = Index::for_pits(p);
            for n in 0..=9 {
                for width in [1, 3, 64] {
                    let mut seen = vec![false; ix.level_size(n) as usize];
                    for tile in ix.tiles(n, width) {
                        assert!(tile.width() <= width);
                        let boards: Vec<Board> = tile.boards().collect();
                        assert_eq!(boards.len() as u64, tile.len(), "P={p} n={n}");
                        for run in boards.chunks(tile.width()) {
                            let first = ix.rank(&run[0]).expect("a stored board");
                            for (t, b) in run.iter().enumerate() {
                                assert_eq!(b.seeds(), n);
                                assert_eq!(b.opponent_row(), run[0].opponent_row());
                                assert_eq!(ix.rank(b), Some(first + t as u64));
                                assert!(!std::mem::replace(&mut seen[first as usize + t], true));
                            }
                        }
                    }
                    assert!(seen.iter().all(|&s| s), "P={p} n={n}: a board is missing");
                }
            }
        }
    }

    #[test]
    fn rank_is_the_sum_of_an_opponent_part_and_a_mover_part() {
        for p in MIN_PITS..=MAX_PITS {
            let ix = Index::for_pits(p);
            for n in 0..=7 {
                let mut by_opponent = std::collections::HashMap::new();
                let mut by_mover = std::collections::HashMap::new();
                for (i, b) in ix.boards(n).enumerate() {
                    let (o, m) = (ix.opponent_part(&b).unwrap(), ix.mover_part(&b));
                    assert_eq!(o + m, i as u64, "P={p} board {b}");
                    // Each part depends on its row alone (within a level).
                    assert_eq!(
                        *by_opponent.entry(b.opponent_row().to_vec()).or_insert(o),
                        o
                    );
                    assert_eq!(*by_mover.entry(b.mover_row().to_vec()).or_insert(m), m);
                }
                for b in ix.unstored_boards(n) {
                    assert_eq!(ix.opponent_part(&b), None);
                }
            }
        }
    }

    #[test]
    fn out_of_range_is_an_error() {
        let ix = Index::for_pits(6);
        assert!(matches!(
            ix.unrank(1, 12),
            Err(Error::IndexOutOfRange { .. })
        ));
        assert!(matches!(ix.unrank(65, 0), Err(Error::TooManySeeds { .. })));
        assert_eq!(ix.rank(&board(&[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])), None);
        assert_eq!(ix.boards_from(3, 10_000).count(), 0);
    }
}
