//! Segment events for an uploader (KIP-405), so that it need not scan the log: a
//! [`TierListener`] given to [`LogOptions::tier_listener`](crate::LogOptions::tier_listener)
//! is told when a segment is sealed by a roll and when a segment leaves the log
//! (`docs/kafka-behaviour.md#tier-events`).

use std::fmt::Debug;

/// Why a segment left the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeletionReason {
    /// Retention ([`Log::delete_old_segments`](crate::Log::delete_old_segments),
    /// `delete_records`, and with remote storage local retention and the log start the
    /// remote tier raised).
    Retention,
    /// [`Log::delete_local_through`](crate::Log::delete_local_through): uploaded and
    /// deleted locally on the caller's word.
    LocalDeletion,
    /// A truncation ([`Log::truncate_to`](crate::Log::truncate_to),
    /// [`Log::truncate_fully_and_start_at`](crate::Log::truncate_fully_and_start_at)).
    Truncation,
}

/// One event of a [`Log`](crate::Log)'s segments (`docs/kafka-behaviour.md#tier-events`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TierEvent {
    /// A roll sealed the segment `[base_offset, end_offset]` (inclusive; `end_offset` is
    /// the new active segment's base − 1): it no longer changes, and is tierable once its
    /// next base is at or below the last stable offset
    /// ([`Log::tierable_segments`](crate::Log::tierable_segments)). An empty active
    /// segment rolled at its own base seals nothing and sends no event; a sealed segment
    /// may be empty (`end_offset < base_offset`) when a roll was asked at a higher base.
    SegmentSealed {
        /// The sealed segment's base offset.
        base_offset: i64,
        /// Its last offset, inclusive: the next segment's base − 1.
        end_offset: i64,
    },
    /// The segment at `base_offset` left the log (its files renamed `.deleted`).
    SegmentDeleted {
        /// The segment's base offset.
        base_offset: i64,
        /// Why.
        reason: DeletionReason,
    },
    /// A truncation cut the log to end at `offset` (exclusive; at or below the offset
    /// asked, as batches are cut whole; for a full truncation, the new start): segments wholly above it
    /// were deleted (each with its own [`SegmentDeleted`](Self::SegmentDeleted)) and the
    /// segment holding `offset`, if sealed, became the active segment again; an upload of
    /// it or of later offsets is stale.
    Truncated {
        /// The new log end offset.
        offset: i64,
    },
}

/// Receives a log's [`TierEvent`]s, in the order they happen. Called with the log's lock
/// held, from the thread that rolled, deleted or truncated: it must be quick and must not
/// call back into the log (which would deadlock). Send the event on a channel, or record
/// it, and act on it elsewhere. Nothing is sent for the segments found at open: scan them
/// once with [`Log::tierable_segments`](crate::Log::tierable_segments), then follow the
/// events.
pub trait TierListener: Send + Sync + Debug {
    /// One event.
    fn on_event(&self, event: TierEvent);
}
