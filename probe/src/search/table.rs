//! The transposition table shared by the threads of a search.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use awari_dbformat::Board;

/// What a table entry says of its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// The position's value (searched to the entry's depth).
    Exact,
    /// At least the value: a move cut off.
    Lower,
    /// At most the value: no move reached the window.
    Upper,
}

/// One position's entry in the transposition table.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    /// The value found, for the mover.
    pub(super) value: i16,
    /// The depth searched (255 for a database's answer).
    pub(super) depth: u8,
    /// Whether the value is exact or a bound.
    pub(super) kind: Kind,
    /// The value is proven with exact leaves.
    pub(super) proven: bool,
    /// The pit of the best move found, if any.
    pub(super) best: Option<u8>,
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
pub(super) struct Table {
    slots: Vec<[AtomicU64; 2]>,
    mask: usize,
}

impl Table {
    /// A table of at most `bytes` (at least 1024 slots).
    pub(super) fn new(bytes: usize) -> Table {
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

    /// The 64-bit key and slot of `board` under `salt` (what else its value
    /// depends on: the positions since the last capture under a repetition
    /// rule, the result's stakes; 0 for none): its pits and the salt hashed
    /// (a multiply and shifts, enough to spread boards that differ in one
    /// pit).
    fn key(&self, board: &Board, salt: u64) -> (u64, usize) {
        let packed = board.packed();
        let mut h = (packed as u64) ^ ((packed >> 64) as u64).rotate_left(29) ^ salt;
        h = (h ^ (h >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
        // 0 marks an empty slot's key.
        let key = h | 1;
        (key, (h >> 7) as usize & self.mask)
    }

    /// The entry of `board` under `salt` ([`Table::key`]), if the table
    /// holds one.
    pub(super) fn get(&self, board: &Board, salt: u64) -> Option<Entry> {
        let (key, at) = self.key(board, salt);
        let [k, d] = &self.slots[at];
        let data = d.load(Relaxed);
        (k.load(Relaxed) ^ data == key).then(|| Entry::unpack(data))
    }

    /// Stores an entry, replacing what the slot held unless that is proven
    /// and this is not.
    pub(super) fn put(&self, board: &Board, salt: u64, entry: Entry) {
        let (key, at) = self.key(board, salt);
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
