//! The injectable clock used by segments and logs.
//!
//! The clock is the log machinery's "now", never a source of record timestamps (those
//! come from the batches): `retention.ms` compares it with each segment's largest record
//! timestamp, and a segment's creation time comes from it (`segment.ms` rolls use that
//! only for segments whose first batch has no timestamp; otherwise they compare record
//! timestamps). A [`Clock`] is an `Arc<dyn Time>`:
//!
//! ```
//! use segment::time::{system_clock, Clock, MockTime};
//! use std::sync::Arc;
//!
//! let real: Clock = system_clock();
//! let mock = MockTime::new(1_700_000_000_000);
//! let clock: Clock = Arc::new(mock.clone()); // the clone shares the mock's time
//! mock.sleep(1_000);
//! assert_eq!(clock.milliseconds(), 1_700_000_001_000);
//! # let _ = real;
//! ```

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

/// A shared clock handle: `Arc<dyn Time>`. Make one with [`system_clock`], or with
/// `Arc::new(mock.clone())` from a [`MockTime`] (see the [module docs](self)).
pub type Clock = Arc<dyn Time>;

/// The system clock as a [`Clock`].
pub fn system_clock() -> Clock {
    Arc::new(SystemTime)
}
