//! [`CleanerSource`]: what the cleaner's plan reads of a live log, so that `clean/` sits
//! below `log/` in the crate's layers (`segment::Log` implements it, in `log/clean.rs`).

use index_txn::AbortedTxn;

use crate::error::SegmentError;
use crate::format::BatchFormat;
use crate::segment_map::LogSegments;

/// The reads of a live log that [`LogSummary::of`](super::LogSummary::of) and
/// [`build_offset_map`](super::build_offset_map) make. `segment::Log` implements it; an
/// embedder with a log of its own over [`LogSegments`] can too.
pub trait CleanerSource {
    /// The batch format of the log's segments.
    type Format: BatchFormat;

    /// The log's segment map.
    fn cleaner_segments(&self) -> &LogSegments<Self::Format>;

    /// The log start offset, the log end offset and the last stable offset (bounded by
    /// the high watermark), as of one moment (`docs/kafka-behaviour.md#one-moment-bounds`).
    fn cleaner_bounds(&self) -> (i64, i64, i64);

    /// The aborted transactions whose data lies in `[start, upper_bound_offset)`, as
    /// Kafka's cleaner collects them (`collectAbortedTransactions` from the log start
    /// offset; `docs/kafka-behaviour.md#cleaner-offset-map`).
    ///
    /// # Errors
    /// Transaction-index and I/O errors.
    fn cleaner_aborted_txns(
        &self,
        start: i64,
        upper_bound_offset: i64,
    ) -> Result<Vec<AbortedTxn>, SegmentError>;
}
