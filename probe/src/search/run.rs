//! The clock and the counters of one search, and why it stops early.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
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
    /// Set by someone else to stop the search (an engine's `stop`), looked
    /// at with the clock.
    pub(super) abort: Option<Arc<AtomicBool>>,
}

impl Run {
    /// A run within `limits`' time from `started`.
    pub(super) fn new(limits: &Limits, started: Instant) -> Run {
        Run {
            deadline: limits.time.map(|t| started + t),
            nodes: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            abort: None,
        }
    }

    /// The same run, stopped also when `abort` is set.
    pub(super) fn with_abort(mut self, abort: Arc<AtomicBool>) -> Run {
        self.abort = Some(abort);
        self
    }

    /// True when the time is up or the search was aborted (sets
    /// [`Run::stopped`] then).
    pub(super) fn out_of_time(&self) -> bool {
        let late = self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.abort.as_ref().is_some_and(|a| a.load(Relaxed));
        if late {
            self.stopped.store(true, Relaxed);
        }
        late
    }
}

/// Positions between two looks at the clock.
pub(super) const CLOCK_EVERY: u64 = 4096;
