//! Open options of a [`Log`]: the clock, the file-system seam and the batch format.

use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::Arc;

use super::Log;
use crate::config::LogConfig;
use crate::error::Result;
use crate::format::{BatchFormat, KafkaBatchFormat};
use crate::fs::FsRef;
use crate::tier::TierListener;
use crate::time::Clock;

/// How to open a [`Log`] beyond its directory and [`LogConfig`] (redb's `Builder` shape):
/// the wall clock, the file-system seam and the [`BatchFormat`].
///
/// [`Log::open`] is `Log::options().open(dir, config)`: the system clock, the real file
/// system and Kafka's record batches. Start from [`Log::options`] for Kafka's format, or
/// from [`LogOptions::new`] (`LogOptions::<MyFormat>::new()`) for another one:
///
/// ```
/// # use segment::{Log, LogConfig, MockTime};
/// # use std::sync::Arc;
/// # let dir = tempfile::tempdir()?;
/// let clock = Arc::new(MockTime::new(1_700_000_000_000));
/// let log = Log::options().clock(clock).open(dir.path(), LogConfig::default())?;
/// assert_eq!(log.log_end_offset(), 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The options of a format that is neither `Clone` nor `Debug` are both:
///
/// ```
/// # use segment::{BatchFormat, LogOptions};
/// fn cloned<F: BatchFormat>(o: &LogOptions<F>) -> LogOptions<F> {
///     println!("{o:?}");
///     o.clone()
/// }
/// # let _ = cloned(&segment::Log::options());
/// ```
#[must_use = "options do nothing until `open` is called"]
pub struct LogOptions<F: BatchFormat = KafkaBatchFormat> {
    clock: Clock,
    fs: FsRef,
    manual_high_watermark: Option<i64>,
    tier_listener: Option<Arc<dyn TierListener>>,
    _format: PhantomData<fn() -> F>,
}

// By hand: a derive would require `F: Clone + Debug`, which a batch format (a marker
// type) need not be.
impl<F: BatchFormat> Clone for LogOptions<F> {
    fn clone(&self) -> Self {
        LogOptions {
            clock: self.clock.clone(),
            fs: self.fs.clone(),
            manual_high_watermark: self.manual_high_watermark,
            tier_listener: self.tier_listener.clone(),
            _format: PhantomData,
        }
    }
}

impl<F: BatchFormat> std::fmt::Debug for LogOptions<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogOptions")
            .field("clock", &self.clock)
            .field("fs", &self.fs)
            .field("manual_high_watermark", &self.manual_high_watermark)
            .field("tier_listener", &self.tier_listener)
            .field("format", &std::any::type_name::<F>())
            .finish()
    }
}

impl<F: BatchFormat> Default for LogOptions<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: BatchFormat> LogOptions<F> {
    /// The defaults: [`system_clock`](crate::time::system_clock) and the real file system
    /// ([`crate::fs::real`]).
    pub fn new() -> Self {
        LogOptions {
            clock: crate::time::system_clock(),
            fs: crate::fs::real(),
            manual_high_watermark: None,
            tier_listener: None,
            _format: PhantomData,
        }
    }

    /// The wall clock of the log, for `segment.ms` rolls, `retention.ms` and
    /// `file.delete.delay.ms`; not a source of record timestamps. In tests, a
    /// [`MockTime`](crate::time::MockTime) (see [`Clock`]).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The file-system seam (see [`crate::fs`]): every segment, checkpoint, marker and
    /// directory write of the log goes through it.
    pub fn fs(mut self, fs: FsRef) -> Self {
        self.fs = fs;
        self
    }

    /// Opens the log with a caller-advanced high watermark starting at `initial` (clamped
    /// to `[log start, log end]` of the opened log), as Kafka's `UnifiedLog`, whose high
    /// watermark only the replication layer moves: it then moves only by
    /// [`Log::update_high_watermark`] and [`Log::maybe_increment_high_watermark`] and by
    /// Kafka's rules on truncation and log-start increments, and bounds reads, retention
    /// and [`Log::delete_records`] (`docs/kafka-behaviour.md#high-watermark`). Without
    /// it, the high watermark follows the log end (a log that is its own in-sync replica
    /// set of one), which changes nothing of the log's behaviour.
    pub fn manual_high_watermark(mut self, initial: i64) -> Self {
        self.manual_high_watermark = Some(initial);
        self
    }

    /// A listener told of every segment the log seals (by a roll) and deletes, and of
    /// truncations, so that an uploader need not scan the log
    /// (`docs/kafka-behaviour.md#tier-events`). It is called under the log's lock and
    /// must neither block nor call back into the log; it hears nothing of the segments
    /// the open finds or removes.
    pub fn tier_listener(mut self, listener: Arc<dyn TierListener>) -> Self {
        self.tier_listener = Some(listener);
        self
    }

    /// The same options for another batch format `G`.
    pub fn format<G: BatchFormat>(self) -> LogOptions<G> {
        LogOptions {
            clock: self.clock,
            fs: self.fs,
            manual_high_watermark: self.manual_high_watermark,
            tier_listener: self.tier_listener,
            _format: PhantomData,
        }
    }

    /// Opens (creating if needed) the log in `dir` with these options: Kafka's loader, as
    /// described at [`Log::open`].
    ///
    /// # Errors
    /// As [`Log::open`].
    pub fn open(self, dir: impl Into<PathBuf>, config: LogConfig) -> Result<Log<F>> {
        let log = Log::open_with(dir.into(), config, self.clock, self.fs)?;
        if let Some(hw) = self.manual_high_watermark {
            log.enable_manual_high_watermark(hw);
        }
        if let Some(l) = self.tier_listener {
            // A fresh log: the cell is empty.
            let _ = log.tier_listener.set(l);
        }
        Ok(log)
    }
}
