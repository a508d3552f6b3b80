//! The index: a bijection between the stored boards of one level and `0..size`.
//!
//! The order is the one of the published Romein–Bal files (rules.md, "Which boards
//! are stored, and their order"): boards with `n` seeds, in increasing
//! lexicographic order of `(pit 2P-1, pit 2P-2, ..., pit 0)`, skipping boards whose
//! opponent row has no empty pit.
//!
//! Ranking is table driven. `count(j, s, z)` is the number of ways to fill the `j`
//! lowest pits with `s` seeds so that the whole board is stored, where `z` says
//! whether an opponent pit above them is already empty. `below[z][j][r][v]` sums
//! those counts over the values `x < v` of pit `j` when `r` seeds remain for pits
//! `j..=0`. The rank of a board is then one table lookup per pit, O(P).

use std::sync::OnceLock;

use crate::board::{Board, MAX_BOARD_PITS};
use crate::error::{Error, Result};
use crate::rules::{MAX_PITS, MAX_SEEDS, MIN_PITS};

const S: usize = MAX_SEEDS as usize + 1;

/// Ranking tables for one board size (pits per side), valid for every level up
/// to `MAX_SEEDS` seeds.
pub struct Index {
    per_side: u8,
    /// `below[((z * 2P + j) * S + r) * S + v]`, see the module docs.
    below: Vec<u64>,
    /// `sizes[n]`: the number of stored boards with `n` seeds.
    sizes: Vec<u64>,
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
        let mut below = vec![0u64; 2 * n * S * S];
        for z in 0..2 {
            for j in 0..n {
                for r in 0..S {
                    let mut acc = 0u64;
                    for v in 0..S {
                        below[((z * n + j) * S + r) * S + v] = acc;
                        if v <= r {
                            let z2 = z == 1 || (j >= p && v == 0);
                            acc += count[j][usize::from(z2)][r - v];
                        }
                    }
                }
            }
        }
        let sizes = (0..S).map(|s| count[n][0][s]).collect();
        Index {
            per_side,
            below,
            sizes,
        }
    }

    #[inline]
    fn below(&self, zero_seen: bool, pit: usize, remaining: usize, value: usize) -> u64 {
        let n = 2 * self.per_side as usize;
        self.below[((usize::from(zero_seen) * n + pit) * S + remaining) * S + value]
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
        let p = self.per_side as usize;
        let n = 2 * p;
        let pits = board.array();
        let mut remaining = board.seeds() as usize;
        let mut zero_seen = false;
        let mut index = 0;
        // The opponent's pits, where an empty pit is looked for.
        for j in (p..n).rev() {
            let v = pits[j] as usize;
            index += self.below(zero_seen, j, remaining, v);
            zero_seen |= v == 0;
            remaining -= v;
        }
        if !zero_seen {
            return None;
        }
        // The mover's pits (but pit 0, which holds what remains): z is now 1.
        let base = &self.below[n * S * S..];
        for j in (1..p).rev() {
            let v = pits[j] as usize;
            index += base[(j * S + remaining) * S + v];
            remaining -= v;
        }
        Some(index)
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
        if seeds > MAX_SEEDS {
            return Err(Error::TooManySeeds {
                seeds,
                max: MAX_SEEDS,
            });
        }
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
        let mut remaining = seeds as usize;
        let mut rest = index;
        let mut zero_seen = false;
        for j in (1..2 * p).rev() {
            // The largest v whose block of boards starts at or before `rest`.
            let mut v = 0;
            while v < remaining && self.below(zero_seen, j, remaining, v + 1) <= rest {
                v += 1;
            }
            rest -= self.below(zero_seen, j, remaining, v);
            pits[j] = v as u8;
            zero_seen |= j >= p && v == 0;
            remaining -= v;
        }
        pits[0] = remaining as u8;
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

    /// The boards with `seeds` seeds that no database stores (every opponent pit
    /// holds a seed), in index order of the unrestricted numbering.
    pub fn unstored_boards(&self, seeds: u32) -> impl Iterator<Item = Board> + '_ {
        let p = self.per_side as usize;
        let per_side = self.per_side;
        (p as u32..=seeds).flat_map(move |opp_seeds| {
            // Opponent rows with every pit >= 1: compositions of opp_seeds - P, plus one.
            Compositions::new(p, opp_seeds - p as u32).flat_map(move |opp| {
                Compositions::new(p, seeds - opp_seeds).map(move |mover| {
                    let mut pits = [0u8; MAX_BOARD_PITS];
                    pits[..p].copy_from_slice(&mover[..p]);
                    for k in 0..p {
                        pits[p + k] = opp[k] + 1;
                    }
                    Board::from_array(pits, per_side)
                })
            })
        })
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
            let p = current.per_side() as usize;
            let mut pits = *current.array();
            step(&mut pits, 2 * p);
            // Landing on a board whose opponent row is full (always with the mover's
            // seeds all in pit 0): jump past every mover arrangement of that row.
            while pits[p..2 * p].iter().all(|&s| s > 0) {
                let mover: u8 = pits[..p].iter().sum();
                pits[..p].fill(0);
                pits[p - 1] = mover;
                step(&mut pits, 2 * p);
            }
            self.board = Board::from_array(pits, current.per_side());
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.left).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

/// The next arrangement of the same seeds over `len` pits in the index order:
/// move one seed up into the pit above the lowest non-empty pit, and put the rest
/// of that pit back into pit 0. The caller guarantees a next arrangement exists.
#[inline]
fn step(pits: &mut [u8; MAX_BOARD_PITS], len: usize) {
    let low = pits[..len]
        .iter()
        .position(|&s| s > 0)
        .expect("a board with seeds");
    debug_assert!(low + 1 < len, "stepped past the last board of a level");
    let rest = pits[low] - 1;
    pits[low] = 0;
    pits[low + 1] += 1;
    pits[0] = rest;
}

/// All ways to put `sum` seeds in `parts` pits, in the index order.
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
        // rules.md, "Which boards are stored, and their order".
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
        for p in [2u8, 3, 6] {
            let ix = Index::for_pits(p);
            for n in 0..=7 {
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
