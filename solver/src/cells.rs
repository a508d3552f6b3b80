//! The packed per-board state of the level being solved: a value and a
//! nibble per board, several boards to a 64-bit word.
//!
//! While a level is solved, each board needs its value (or, until it is
//! decided, `B(p)`, the best its captures give) and a nibble: the counter of
//! quiet children not yet won, or a decided code (see [`crate::retro`]). Kept
//! in one field of a word, the two are read and changed by one
//! compare-and-swap, and a parent costs one cache line rather than two.
//!
//! Two layouts, chosen by the level's seed count ([`CellLayout::for_seeds`]):
//!
//! | layout | bits per board | boards per word | bytes per board | values |
//! |---|---:|---:|---:|---|
//! | [`Narrow`] | 10 (6 of value) | 6 | 1.333 | -31..=31, levels up to 31 seeds |
//! | [`Wide`] | 12 (8 of value) | 5 | 1.6 | any `i8`, every level |
//! | [`Split`] | 5 (1 of value), and a byte elsewhere | 12 | 0.667 + 1 | -63..=63 |
//!
//! A field holds the nibble in its low 4 bits and the value, two's complement,
//! above it. The four top bits of a narrow word and of a wide word are unused.
//!
//! The split cells keep in the word only what propagation reads: the nibble
//! and one bit of value, set for a lost board (and, while undecided, for a
//! board whose captures give at most `-k`, so that it is lost once its
//! counter falls to zero). `B(p)` and the values found lie in a byte per board
//! beside the words ([`crate::retro`]'s cold bytes), read and written only in
//! order, once a stage: they can stay in a file.

/// A board's state: its value (or `B(p)`) and its nibble.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The board's value once decided; before, the best value its captures
    /// give, or [`Packing::NO_EXIT`] when it has no capture.
    pub value: i8,
    /// The counter (`0..=8`) or a decided code (`9..=15`).
    pub nibble: u8,
}

/// How boards are packed into words (the narrow or the wide cells); see
/// the module docs.
pub trait Packing: Copy + Send + Sync + 'static {
    /// Which layout this is.
    const NAME: CellLayout;
    /// Boards per 64-bit word.
    const PER_WORD: u64;
    /// Bits per board: the nibble and the value.
    const BITS: u32;
    /// Bits of the value.
    const VALUE_BITS: u32 = Self::BITS - 4;
    /// The value of a board that has quiet moves and no capture: below every
    /// value a level of at most [`Packing::MAX_SEEDS`] seeds can have.
    const NO_EXIT: i8 = (-(1i16 << (Self::VALUE_BITS - 1))) as i8;
    /// The most seeds of a level whose values this layout holds.
    const MAX_SEEDS: u32 = (1 << (Self::VALUE_BITS - 1)) - 1;
    /// True for [`Split`]: the word holds one bit of the value, `B(p)` and
    /// the values found are kept apart (see the module docs).
    const SPLIT: bool = false;

    /// The value a board that wins `k` gets in its cell: `k`, or 0 in the
    /// split cells (the bit of a won board).
    #[inline(always)]
    fn won(k: i8) -> i8 {
        if Self::SPLIT {
            0
        } else {
            k
        }
    }

    /// The value a board that loses `k` gets in its cell: `-k`, or -1 in
    /// the split cells (the bit of a lost board).
    #[inline(always)]
    fn lost(k: i8) -> i8 {
        if Self::SPLIT {
            -1
        } else {
            -k
        }
    }

    /// Whether an undecided board whose cell holds `value` is lost at stage
    /// `k` once its counter is zero: `B(p) <= -k`, which the split cells
    /// keep as their bit (set by seeding when `B(p) = -k`).
    #[inline(always)]
    fn lossable(value: i8, k: i8) -> bool {
        if Self::SPLIT {
            value < 0
        } else {
            value <= -k
        }
    }

    /// Whether a board lost at stage `k` by propagation, its cell holding
    /// `value` before, is free (a capture reaches `-k`). The split cells
    /// do not know it here: it is found when the value is written into its
    /// byte.
    #[inline(always)]
    fn free_loss(value: i8, k: i8) -> bool {
        !Self::SPLIT && value == -k
    }

    /// Word index and bit shift of board `i`'s field.
    #[inline(always)]
    fn locate(i: u64) -> (usize, u32) {
        // Division by a constant: a multiply and a shift.
        (
            (i / Self::PER_WORD) as usize,
            (i % Self::PER_WORD) as u32 * Self::BITS,
        )
    }

    /// The field of `cell`, in the low bits.
    #[inline(always)]
    fn encode(cell: Cell) -> u64 {
        debug_assert!(cell.nibble < 16);
        let value_mask = (1u64 << Self::VALUE_BITS) - 1;
        u64::from(cell.nibble) | ((u64::from(cell.value as u8) & value_mask) << 4)
    }

    /// The cell whose field starts at bit `shift` of `word`.
    #[inline(always)]
    fn decode(word: u64, shift: u32) -> Cell {
        let field = word >> shift;
        Cell {
            nibble: (field & 0xF) as u8,
            // The field's top bit to bit 63, then an arithmetic shift back,
            // which drops the nibble and extends the value's sign.
            value: (((field << (64 - Self::BITS)) as i64) >> (64 - Self::VALUE_BITS)) as i8,
        }
    }

    /// `word` with the field at `shift` replaced by `cell`.
    #[inline(always)]
    fn replace(word: u64, shift: u32, cell: Cell) -> u64 {
        let mask = ((1u64 << Self::BITS) - 1) << shift;
        (word & !mask) | (Self::encode(cell) << shift)
    }

    /// The word holding `cells` in slot order, the first in the low bits
    /// (at most [`Packing::PER_WORD`] of them; the other slots are zero).
    #[inline(always)]
    fn pack(cells: &[Cell]) -> u64 {
        debug_assert!(cells.len() as u64 <= Self::PER_WORD);
        cells.iter().enumerate().fold(0, |word, (s, &cell)| {
            Self::replace(word, s as u32 * Self::BITS, cell)
        })
    }

    /// Bit 0 of every field of a word: a field's bits times this are the
    /// same field in every slot.
    const FIELD_ONES: u64 = {
        let (mut word, mut s) = (0u64, 0);
        while s < Self::PER_WORD {
            word |= 1 << (s as u32 * Self::BITS);
            s += 1;
        }
        word
    };

    /// The fields of `word` whose nibble, with the bits of `set` set too, is
    /// `nibble`: bit `s * BITS` (the shift of field `s`, as
    /// [`Packing::decode`] takes it) set for each, the others clear. Found
    /// without a branch per field: which fields of a word match is as
    /// good as random.
    #[inline(always)]
    fn fields_with_nibble(word: u64, set: u8, nibble: u8) -> u64 {
        let nibbles = 0xF * Self::FIELD_ONES;
        let (set, nibble) = (u64::from(set), u64::from(nibble));
        let x = ((word | (set * Self::FIELD_ONES)) ^ (nibble * Self::FIELD_ONES)) & nibbles;
        // Adding 15 to a field of x carries into its bit 4 exactly when the
        // field is not 0 (x holds no bits above the nibbles to carry into).
        let nonzero = (x + nibbles) & (0x10 * Self::FIELD_ONES);
        (!nonzero & (0x10 * Self::FIELD_ONES)) >> 4
    }

    /// The fields of `word` whose value is `value`, as bits at the fields'
    /// shifts like [`Packing::fields_with_nibble`], without a branch per
    /// field.
    #[inline(always)]
    fn fields_with_value(word: u64, value: i8) -> u64 {
        let values = (((1u64 << Self::VALUE_BITS) - 1) << 4) * Self::FIELD_ONES;
        let top = (1u64 << (Self::BITS - 1)) * Self::FIELD_ONES;
        let pattern = Self::encode(Cell { value, nibble: 0 }) * Self::FIELD_ONES;
        let x = (word ^ pattern) & values;
        // A field of x is 0 exactly when neither its top bit is set nor the
        // bits below it carry into the top bit when all ones are added
        // (leaving the top bit out of the sum, nothing carries further).
        let low = values & !top;
        let nonzero = (((x & low) + low) | x) & top;
        (!nonzero & top) >> (Self::BITS - 1)
    }

    /// The fields of `word` of undecided boards (nibble at most 8, the
    /// counters; see [`crate::retro`]), as bits at the fields' shifts like
    /// [`Packing::fields_with_nibble`].
    #[inline(always)]
    fn undecided_fields(word: u64) -> u64 {
        let nibbles = 0xF * Self::FIELD_ONES;
        // Adding 7 to a nibble carries into bit 4 exactly when it is 9 or more.
        let decided = ((word & nibbles) + 7 * Self::FIELD_ONES) & (0x10 * Self::FIELD_ONES);
        (!decided & (0x10 * Self::FIELD_ONES)) >> 4
    }

    /// The same field in every slot of a word.
    fn spread(field: u64) -> u64 {
        (0..Self::PER_WORD).fold(0, |word, s| word | field << (s as u32 * Self::BITS))
    }

    /// A test of whether the value of any board of a word equals `value`:
    /// the classic zero-byte test on the value bits (the nibbles masked out),
    /// exact for "any". A true zero field makes its top bit show without a
    /// borrow from below; a nonzero field neither shows nor borrows.
    fn any_value_equal(value: i8) -> impl Fn(u64) -> bool + Send + Sync {
        let value_mask = ((1u64 << Self::VALUE_BITS) - 1) << 4;
        let values = Self::spread(value_mask);
        let lowest = Self::spread(1 << 4);
        let highest = Self::spread(1 << (Self::BITS - 1));
        let pattern = Self::spread(Self::encode(Cell { value, nibble: 0 }));
        move |word| {
            let x = (word ^ pattern) & values;
            x.wrapping_sub(lowest) & !x & highest != 0
        }
    }
}

/// Six boards of 10 bits to a word: 1.333 bytes per board, values -31..=31.
#[derive(Clone, Copy, Debug)]
pub struct Narrow;

impl Packing for Narrow {
    const NAME: CellLayout = CellLayout::Narrow;
    const PER_WORD: u64 = 6;
    const BITS: u32 = 10;
}

/// Five boards of 12 bits to a word: 1.6 bytes per board, any `i8` value.
#[derive(Clone, Copy, Debug)]
pub struct Wide;

impl Packing for Wide {
    const NAME: CellLayout = CellLayout::Wide;
    const PER_WORD: u64 = 5;
    const BITS: u32 = 12;
}

// The wide layout holds every level there is.
const _: () = assert!(Wide::MAX_SEEDS >= awari_dbformat::MAX_SEEDS);

/// Twelve boards of 5 bits to a word, 0.667 bytes per board, and a byte per
/// board beside: levels of up to 63 seeds (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Split;

impl Packing for Split {
    const NAME: CellLayout = CellLayout::Split;
    const PER_WORD: u64 = 12;
    const BITS: u32 = 5;
    // B(p) lies in a byte of its own.
    const NO_EXIT: i8 = i8::MIN;
    // A value found is kept in 7 bits of its byte (the eighth says free).
    const MAX_SEEDS: u32 = 63;
    const SPLIT: bool = true;
}

/// Which [`Packing`] a level is solved in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellLayout {
    /// [`Narrow`]: levels of at most 31 seeds.
    Narrow,
    /// [`Wide`]: any level.
    Wide,
    /// [`Split`]: levels of at most 63 seeds, the values apart from the words.
    Split,
}

impl CellLayout {
    /// The smallest layout that holds the values of a level of `seeds` seeds.
    pub fn for_seeds(seeds: u32) -> CellLayout {
        if seeds <= Narrow::MAX_SEEDS {
            CellLayout::Narrow
        } else {
            CellLayout::Wide
        }
    }

    /// True when this layout holds the values of a level of `seeds` seeds.
    pub fn holds(self, seeds: u32) -> bool {
        match self {
            CellLayout::Narrow => seeds <= Narrow::MAX_SEEDS,
            CellLayout::Wide => seeds <= Wide::MAX_SEEDS,
            CellLayout::Split => seeds <= Split::MAX_SEEDS,
        }
    }

    /// Boards per 64-bit word.
    pub fn per_word(self) -> u64 {
        match self {
            CellLayout::Narrow => Narrow::PER_WORD,
            CellLayout::Wide => Wide::PER_WORD,
            CellLayout::Split => Split::PER_WORD,
        }
    }

    /// The bytes of the words per board: 8 / boards per word (the split
    /// cells' bytes of values besides are not counted).
    pub fn bytes_per_board(self) -> f64 {
        8.0 / self.per_word() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cells_round_trip<L: Packing>(cells: &[(i8, u8)]) {
        let word = word_of::<L>(cells);
        assert_eq!(
            word >> (L::PER_WORD as u32 * L::BITS),
            0,
            "spare bits stay clear"
        );
        for (s, &(value, nibble)) in cells.iter().enumerate() {
            assert_eq!(L::decode(word, s as u32 * L::BITS), Cell { value, nibble });
        }
    }

    /// The word holding `cells` (value, nibble) in slot order.
    fn word_of<L: Packing>(cells: &[(i8, u8)]) -> u64 {
        let cells: Vec<Cell> = cells
            .iter()
            .map(|&(value, nibble)| Cell { value, nibble })
            .collect();
        L::pack(&cells)
    }

    fn any_equal_is_exact<L: Packing>(cells: &[(i8, u8)], value: i8) {
        let word = word_of::<L>(cells);
        let expected = cells.iter().any(|&(v, _)| v == value);
        assert_eq!(
            L::any_value_equal(value)(word),
            expected,
            "{cells:?} {value}"
        );
    }

    /// `fields_with_nibble` against testing each field.
    fn nibble_test_is_exact<L: Packing>(cells: &[(i8, u8)], set: u8, nibble: u8) {
        let word = word_of::<L>(cells);
        let expected = cells.iter().enumerate().fold(0u64, |m, (s, &(_, n))| {
            m | u64::from(n | set == nibble) << (s as u32 * L::BITS)
        });
        assert_eq!(
            L::fields_with_nibble(word, set, nibble),
            expected,
            "{cells:?} {set} {nibble}"
        );
    }

    /// `fields_with_value` and `undecided_fields` against testing each field.
    fn value_tests_are_exact<L: Packing>(cells: &[(i8, u8)], value: i8) {
        let word = word_of::<L>(cells);
        let expect = |f: &dyn Fn(i8, u8) -> bool| {
            cells.iter().enumerate().fold(0u64, |m, (s, &(v, n))| {
                m | u64::from(f(v, n)) << (s as u32 * L::BITS)
            })
        };
        assert_eq!(
            L::fields_with_value(word, value),
            expect(&|v, _| v == value),
            "{cells:?} {value}"
        );
        assert_eq!(
            L::undecided_fields(word),
            expect(&|_, n| n <= 8),
            "{cells:?}"
        );
    }

    fn narrow_cell() -> impl Strategy<Value = (i8, u8)> {
        (Narrow::NO_EXIT..=31i8, 0u8..16)
    }

    proptest! {
        #[test]
        fn narrow_fields_keep_what_is_stored(cells in prop::collection::vec(narrow_cell(), 6)) {
            cells_round_trip::<Narrow>(&cells);
        }

        #[test]
        fn wide_fields_keep_what_is_stored(cells in prop::collection::vec((any::<i8>(), 0u8..16), 5)) {
            cells_round_trip::<Wide>(&cells);
        }

        #[test]
        fn narrow_value_test_finds_exactly_the_words_holding_it(
            cells in prop::collection::vec((-3i8..=3, 0u8..16), 6),
            value in -3i8..=3,
        ) {
            any_equal_is_exact::<Narrow>(&cells, value);
        }

        #[test]
        fn nibble_tests_find_exactly_the_fields_holding_it(
            narrow in prop::collection::vec(narrow_cell(), 6),
            wide in prop::collection::vec((any::<i8>(), 0u8..16), 5),
            set in prop_oneof![Just(0u8), Just(4u8), 0u8..16],
            nibble in 0u8..16,
        ) {
            nibble_test_is_exact::<Narrow>(&narrow, set, nibble);
            nibble_test_is_exact::<Wide>(&wide, set, nibble);
        }

        #[test]
        fn value_masks_find_exactly_the_fields_holding_it(
            narrow in prop::collection::vec(narrow_cell(), 6),
            wide in prop::collection::vec((any::<i8>(), 0u8..16), 5),
            small in -3i8..=3,
            narrow_value in Narrow::NO_EXIT..=31i8,
            wide_value in any::<i8>(),
        ) {
            value_tests_are_exact::<Narrow>(&narrow, narrow_value);
            value_tests_are_exact::<Wide>(&wide, wide_value);
            // Values that the fields hold, too.
            value_tests_are_exact::<Narrow>(&narrow, narrow[0].0);
            value_tests_are_exact::<Wide>(&wide, wide[1].0);
            let near: Vec<(i8, u8)> = narrow.iter().map(|&(v, n)| (v.clamp(-3, 3), n)).collect();
            value_tests_are_exact::<Narrow>(&near, small);
        }

        #[test]
        fn wide_value_test_finds_exactly_the_words_holding_it(
            cells in prop::collection::vec((-3i8..=3, 0u8..16), 5),
            value in -3i8..=3,
        ) {
            any_equal_is_exact::<Wide>(&cells, value);
        }
    }

    #[test]
    fn layouts_fit_their_levels() {
        assert_eq!(Narrow::NO_EXIT, -32);
        assert_eq!(Narrow::MAX_SEEDS, 31);
        assert_eq!(Wide::NO_EXIT, i8::MIN);
        assert_eq!(CellLayout::for_seeds(31), CellLayout::Narrow);
        assert_eq!(CellLayout::for_seeds(32), CellLayout::Wide);
        assert!(!CellLayout::Narrow.holds(32));
        // Every extreme value and nibble, and the slots at both ends.
        cells_round_trip::<Narrow>(&[(-32, 15), (31, 0), (-1, 8), (0, 9), (1, 1), (-31, 14)]);
        cells_round_trip::<Wide>(&[(i8::MIN, 15), (i8::MAX, 0), (-1, 8), (0, 9), (64, 3)]);
    }
}
