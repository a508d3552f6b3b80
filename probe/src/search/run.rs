//! The clock and the counters of one search, and why it stops early.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Instant;

use super::Limits;
use crate::error::ProbeError;

/// Why a search stopped early.
pub(super) enum Stop {
    /// The time ran out, or the main thread is done (for a helper).
    Time,
    /// A level file could not be read.
    Error(ProbeError),
}

impl From<ProbeError> for Stop {
    fn from(e: ProbeError) -> Stop {
        Stop::Error(e)
    }
}

/// The clock and the counters of one search.
pub(super) struct Run {
    /// When the search must stop, if ever.
    pub(super) deadline: Option<Instant>,
    /// Positions searched by every thread (each adds its count now and then).
    pub(super) nodes: AtomicU64,
    /// Set when the time ran out: every thread stops.
    pub(super) stopped: AtomicBool,
}

impl Run {
    /// A run within `limits`' time from `started`.
    pub(super) fn new(limits: &Limits, started: Instant) -> Run {
        Run {
            deadline: limits.time.map(|t| started + t),
            nodes: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
        }
    }
}

/// Positions between two looks at the clock.
pub(super) const CLOCK_EVERY: u64 = 4096;
