//! What checking a level of bounds finds: its counts and its mismatching
//! boards.

/// Which check a board failed.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// A bound outside `-n..=n`.
    Range,
    /// A lower bound above the upper one.
    Order,
    /// A bound that differs from what the board's moves give.
    Recurrence,
    /// A bound that differs from the one a finite strategy forces.
    Forced,
}

impl Check {
    /// `range`, `order`, `recurrence` or `forced`, as the JSON writes it.
    pub fn name(self) -> &'static str {
        match self {
            Check::Range => "range",
            Check::Order => "order",
            Check::Recurrence => "recurrence",
            Check::Forced => "forced",
        }
    }
}

/// One bound of one board that is wrong or cannot be justified.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BoundMismatch {
    /// The level.
    pub seeds: u32,
    /// The board's index in its level.
    pub index: u64,
    /// The board, pit counts in pit order.
    pub board: Vec<u8>,
    /// The board in the notation of the command line.
    pub notation: String,
    /// The check it failed.
    pub check: Check,
    /// `lower` or `upper` (`both` for [`Check::Order`]).
    pub bound: String,
    /// The value the file gives (the lower bound for [`Check::Order`]).
    pub stored: i8,
    /// What the check finds instead: the best move's value
    /// ([`Check::Recurrence`]), the proven bound ([`Check::Forced`]), the
    /// upper bound ([`Check::Order`]), or the nearest value in range
    /// ([`Check::Range`]).
    pub derived: i8,
    /// What is wrong, in words, e.g. "lower bound +3 stored but only +1
    /// proven".
    pub reason: String,
}

/// The result of checking one level of bounds.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct BoundCheck {
    /// The level.
    pub seeds: u32,
    /// Boards checked (each with two bounds).
    pub boards: u64,
    /// Bounds outside `-n..=n`.
    pub out_of_range: u64,
    /// Boards whose lower bound is above their upper bound.
    pub crossed: u64,
    /// Bounds (of either kind) that differ from what their board's moves
    /// give.
    pub recurrence_errors: u64,
    /// Bounds (of either kind) that differ from the bound a finite strategy
    /// forces.
    pub unforced: u64,
    /// Sweeps of the forced bounds.
    pub sweeps: u32,
    /// Boards whose bounds meet: the value is the same under every
    /// repetition rule.
    pub exact: u64,
    /// The first mismatching bounds, in index order (at most the limit
    /// given).
    pub mismatches: Vec<BoundMismatch>,
}

impl BoundCheck {
    /// True when every bound of every board checked out.
    pub fn ok(&self) -> bool {
        self.failures() == 0
    }

    /// Every failure counted: bounds out of range, crossed boards,
    /// recurrence errors and unforced bounds.
    pub fn failures(&self) -> u64 {
        self.out_of_range + self.crossed + self.recurrence_errors + self.unforced
    }
}

/// `what bound +3 stored but only +1 proven` for a bound of kind `bound`
/// stored as `stored` where `found` was found; "only" where the file claims
/// more for its side than was found (a lower bound above, an upper bound
/// below).
pub(super) fn differs(bound: &str, stored: i8, found: i8, how: &str) -> String {
    let claims_more = match bound {
        "lower" => stored > found,
        _ => stored < found,
    };
    let only = if claims_more { "only " } else { "" };
    format!("{bound} bound {stored:+} stored but {only}{found:+} {how}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_says_which_way() {
        assert_eq!(
            differs("lower", 3, 1, "proven"),
            "lower bound +3 stored but only +1 proven"
        );
        assert_eq!(
            differs("lower", -1, 1, "proven"),
            "lower bound -1 stored but +1 proven"
        );
        assert_eq!(
            differs("upper", -1, 2, "proven"),
            "upper bound -1 stored but only +2 proven"
        );
        assert_eq!(
            differs("upper", 0, 0, "from its moves"),
            "upper bound +0 stored but +0 from its moves"
        );
    }
}
