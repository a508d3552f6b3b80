//! What checking a level finds: its counts and its mismatching boards.

/// One board whose stored value is wrong or cannot be justified.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Mismatch {
    /// The level.
    pub seeds: u32,
    /// The board's index in its level.
    pub index: u64,
    /// The board, pit counts in pit order.
    pub board: Vec<u8>,
    /// The value the file gives (lower bounds resolved by the captures).
    pub stored: i8,
    /// The value its children give.
    pub derived: i8,
    /// What is wrong: "recurrence" or "no progress".
    pub reason: String,
}

/// The result of checking one level.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LevelCheck {
    /// The level.
    pub seeds: u32,
    /// Boards checked.
    pub boards: u64,
    /// Boards whose value differs from what their children give.
    pub recurrence_errors: u64,
    /// Non-zero boards whose value could not be proven reachable.
    pub unproven: u64,
    /// True when the level's certificate proved every non-zero value, so no
    /// proof search was needed.
    pub certified: bool,
    /// The first mismatching boards (at most the limit given).
    pub mismatches: Vec<Mismatch>,
}

impl LevelCheck {
    /// True when every board checked out.
    pub fn ok(&self) -> bool {
        self.recurrence_errors == 0 && self.unproven == 0
    }
}
