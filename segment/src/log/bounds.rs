//! The offsets a reader of a [`Log`] answers by — the log start offset, the log end
//! offset, the high watermark and the producer state's first unstable offset — published
//! together, so that a read sees them as of one moment
//! (`docs/kafka-behaviour.md#one-moment-bounds`).
//!
//! The writer side is a [`Publication`]: every change of these offsets happens inside
//! one, under the log's append lock, and the publication ends by copying the producer
//! state's first unstable offset. A publication therefore always carries the producer
//! state that describes every batch it makes visible: an append updates the producer
//! state before it publishes its new log end, and a truncation rebuilds it before it
//! publishes the lowered one. The reader side, [`Bounds::read`], is a seqlock read: a
//! copy of the four values taken while no publication ran.

use std::sync::atomic::{fence, AtomicI64, AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::producer::ProducerStateManager;

/// `first_unstable` when no transaction is unstable.
const NO_UNSTABLE: i64 = i64::MAX;

/// The bounds of a [`Log`](super::Log) as of one moment ([`Log::bounds`](super::Log::bounds)):
/// what a fetch at any [`FetchIsolation`](super::FetchIsolation) is bounded by.
///
/// Always `log_start_offset ≤ high_watermark ≤ log_end_offset` and
/// `log_start_offset ≤ last_stable_offset ≤ high_watermark` once the log is open
/// (`docs/kafka-behaviour.md#one-moment-bounds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LogBounds {
    /// The first offset readable (Kafka's `logStartOffset`).
    pub log_start_offset: i64,
    /// The next offset to be appended (Kafka's `logEndOffset`).
    pub log_end_offset: i64,
    /// The high watermark: the log end offset unless it is
    /// [manual](crate::LogOptions::manual_high_watermark).
    pub high_watermark: i64,
    /// The last stable offset (Kafka's `lastStableOffset`): the first offset of the
    /// earliest unstable transaction, not below the log start offset, if that is below
    /// the high watermark; else the high watermark.
    pub last_stable_offset: i64,
}

/// The published offsets: a seqlock over four atomics (one writer at a time, the holder
/// of the log's append lock).
#[derive(Debug)]
pub(super) struct Bounds {
    /// Odd while a publication runs.
    seq: AtomicU64,
    log_start: AtomicI64,
    log_end: AtomicI64,
    /// The caller's high watermark; read only when the log's high watermark is manual.
    high_watermark: AtomicI64,
    /// The producer state's first unstable offset at the last publication.
    first_unstable: AtomicI64,
}

impl Bounds {
    pub(super) fn new(log_start: i64) -> Self {
        Bounds {
            seq: AtomicU64::new(0),
            log_start: AtomicI64::new(log_start),
            log_end: AtomicI64::new(0),
            high_watermark: AtomicI64::new(0),
            first_unstable: AtomicI64::new(NO_UNSTABLE),
        }
    }

    /// The log end offset last published.
    pub(super) fn log_end(&self) -> i64 {
        self.log_end.load(Ordering::Acquire)
    }

    /// The log start offset last published.
    pub(super) fn log_start(&self) -> i64 {
        self.log_start.load(Ordering::Acquire)
    }

    /// The caller's high watermark last published (meaningful only when manual).
    pub(super) fn manual_high_watermark(&self) -> i64 {
        self.high_watermark.load(Ordering::Acquire)
    }

    /// Begins a publication (the caller holds the log's append lock). Inside one already
    /// begun it changes nothing: the outer one ends it. When the outermost ends, it copies
    /// `producer_state`'s first unstable offset, so it must not be dropped while
    /// `producer_state` is locked by the same thread.
    pub(super) fn publish<'a>(
        &'a self,
        producer_state: &'a Mutex<ProducerStateManager>,
    ) -> Publication<'a> {
        let s = self.seq.load(Ordering::Relaxed);
        if s & 1 == 1 {
            return Publication {
                bounds: self,
                producer_state,
                outermost: false,
            };
        }
        self.seq.store(s + 1, Ordering::Relaxed);
        // The odd value is ordered before every store of the publication.
        fence(Ordering::Release);
        Publication {
            bounds: self,
            producer_state,
            outermost: true,
        }
    }

    /// The four values as of one moment between publications, as [`LogBounds`] (`manual`:
    /// whether the high watermark is the caller's). Spins, then yields, while a
    /// publication runs (a few stores and one producer-state lookup).
    pub(super) fn read(&self, manual: bool) -> LogBounds {
        let mut spins = 0u32;
        loop {
            let s = self.seq.load(Ordering::Acquire);
            if s & 1 == 0 {
                let start = self.log_start.load(Ordering::Relaxed);
                let end = self.log_end.load(Ordering::Relaxed);
                let hw = self.high_watermark.load(Ordering::Relaxed);
                let unstable = self.first_unstable.load(Ordering::Relaxed);
                fence(Ordering::Acquire);
                if self.seq.load(Ordering::Relaxed) == s {
                    let high_watermark = if manual { hw } else { end };
                    let last_stable_offset = if unstable == NO_UNSTABLE {
                        high_watermark
                    } else {
                        // Kafka's `maybeIncrementFirstUnstableOffset`: never below the
                        // log start offset.
                        unstable.max(start).min(high_watermark)
                    };
                    return LogBounds {
                        log_start_offset: start,
                        log_end_offset: end,
                        high_watermark,
                        last_stable_offset,
                    };
                }
            }
            if spins < 64 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// A publication of new [`Bounds`] in progress; readers see none of its stores until it
/// ends (is dropped).
#[must_use = "a publication ends when it is dropped"]
pub(super) struct Publication<'a> {
    bounds: &'a Bounds,
    producer_state: &'a Mutex<ProducerStateManager>,
    outermost: bool,
}

/// The stores are `Release`: a reader of one value alone (`Log::log_end_offset`) sees
/// what was written before it (the batch's bytes), as before the values were grouped.
impl Publication<'_> {
    pub(super) fn set_log_end(&self, v: i64) {
        self.bounds.log_end.store(v, Ordering::Release);
    }

    pub(super) fn set_log_start(&self, v: i64) {
        self.bounds.log_start.store(v, Ordering::Release);
    }

    pub(super) fn set_high_watermark(&self, v: i64) {
        self.bounds.high_watermark.store(v, Ordering::Release);
    }
}

impl Drop for Publication<'_> {
    fn drop(&mut self) {
        if !self.outermost {
            return;
        }
        let unstable = self
            .producer_state
            .lock()
            .first_unstable_offset()
            .unwrap_or(NO_UNSTABLE);
        self.bounds
            .first_unstable
            .store(unstable, Ordering::Relaxed);
        let s = self.bounds.seq.load(Ordering::Relaxed);
        self.bounds.seq.store(s + 1, Ordering::Release);
    }
}
