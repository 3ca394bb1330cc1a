//! The injectable clock used by segments and logs.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// A source of wall-clock time in milliseconds since the epoch (Kafka's `Time`).
///
/// Segments use it for roll decisions (`created`, `time_waited_for_roll`) and logs for
/// time-based retention. Inject [`MockTime`] in tests.
pub trait Time: Send + Sync + std::fmt::Debug {
    /// Current time, milliseconds since the epoch.
    fn milliseconds(&self) -> i64;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemTime;

impl Time for SystemTime {
    fn milliseconds(&self) -> i64 {
        crate::fs::system_now_ms()
    }
}

/// A manually advanced clock (Kafka's `MockTime`). Clones share the same time.
#[derive(Clone, Debug, Default)]
pub struct MockTime(Arc<AtomicI64>);

impl MockTime {
    /// A mock clock reading `start_ms` (milliseconds since the epoch).
    pub fn new(start_ms: i64) -> Self {
        MockTime(Arc::new(AtomicI64::new(start_ms)))
    }

    /// Advances the clock by `ms` milliseconds.
    pub fn sleep(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Sets the clock to `ms` milliseconds since the epoch.
    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Time for MockTime {
    fn milliseconds(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// A shared clock handle.
pub type Clock = Arc<dyn Time>;

/// The system clock as a [`Clock`].
pub fn system_clock() -> Clock {
    Arc::new(SystemTime)
}
