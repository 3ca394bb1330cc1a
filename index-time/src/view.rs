//! [`TimeIndexView`]: a read-only time index over bytes in memory (a remote segment's
//! `.timeindex`, as downloaded) with [`TimeIndex`](crate::TimeIndex)'s answers.

use std::path::Path;
use std::sync::Arc;

use index_core::view::{IndexBytes, IN_MEMORY_PATH};
use index_core::{Bound, Result, SearchField};

use crate::{RawTimeEntry, TimestampOffset, NO_TIMESTAMP};

/// A read-only time index held in memory: the bytes of a trimmed `.timeindex` file
/// (12-byte entries), supplied by the caller or read once from a file. Lookups give
/// [`TimeIndex`](crate::TimeIndex)'s answers over the same bytes (Kafka's
/// `TimeIndex.lookup`, as Kafka's `RemoteIndexCache` serves it;
/// `docs/kafka-behaviour.md#index-bytes`).
///
/// Built only over well-formed bytes: the length is a multiple of 12, timestamps
/// increase strictly (Kafka's `maybeAppend` writes only a larger one), relative offsets
/// are `>= 0` and never decrease — stricter than Kafka's `sanityCheck`, which compares
/// only the first and last entries. Cheap to clone (an `Arc`); `Send + Sync`.
#[derive(Clone, Debug)]
pub struct TimeIndexView {
    bytes: IndexBytes<RawTimeEntry>,
}

impl TimeIndexView {
    /// A view over `bytes` for the segment starting at `base_offset`.
    ///
    /// # Errors
    /// [`IndexError::CorruptIndex`](crate::IndexError::CorruptIndex) (naming
    /// [`IN_MEMORY_PATH`]) if the length is not a multiple of 12, a timestamp is not
    /// larger than the one before, or a relative offset is negative or smaller than the
    /// one before (with the slot and the values found).
    pub fn from_bytes(base_offset: i64, bytes: impl Into<Arc<[u8]>>) -> Result<Self> {
        Self::checked(IndexBytes::new(
            bytes.into(),
            base_offset,
            Path::new(IN_MEMORY_PATH),
        )?)
    }

    /// Reads the `.timeindex` file at `path` once (opened read-only, not mapped) and
    /// builds a view of it, as [`TimeIndexView::from_bytes`].
    ///
    /// # Errors
    /// [`IndexError::Io`](crate::IndexError::Io); the errors of
    /// [`TimeIndexView::from_bytes`], naming `path`.
    pub fn open(path: impl AsRef<Path>, base_offset: i64) -> Result<Self> {
        Self::checked(IndexBytes::read_file(path.as_ref(), base_offset)?)
    }

    fn checked(bytes: IndexBytes<RawTimeEntry>) -> Result<Self> {
        let mut last: Option<(i64, i32)> = None;
        for (slot, e) in bytes.slots().iter().enumerate() {
            let (ts, rel) = (e.timestamp.get(), e.relative_offset.get());
            if rel < 0 {
                return Err(
                    bytes.corrupt(format!("slot {slot}: relative offset {rel} is negative"))
                );
            }
            if let Some((last_ts, last_rel)) = last {
                if ts <= last_ts {
                    return Err(bytes.corrupt(format!(
                        "slot {slot}: timestamp {ts} is not larger than the previous one {last_ts}"
                    )));
                }
                if rel < last_rel {
                    return Err(bytes.corrupt(format!(
                        "slot {slot}: relative offset {rel} is smaller than the previous one {last_rel}"
                    )));
                }
            }
            last = Some((ts, rel));
        }
        Ok(TimeIndexView { bytes })
    }

    /// The segment's base offset.
    pub fn base_offset(&self) -> i64 {
        self.bytes.base_offset()
    }

    /// Number of entries.
    pub fn entries(&self) -> usize {
        self.bytes.len()
    }

    /// The bytes held (12 per entry): the view's weight in a cache.
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.size_in_bytes()
    }

    /// The entry with the largest timestamp `<= target_timestamp`, or `(-1,
    /// base_offset)` when there is none ([`TimeIndex::lookup`](crate::TimeIndex::lookup)).
    #[inline]
    pub fn lookup(&self, target_timestamp: i64) -> TimestampOffset {
        let base = self.base_offset();
        self.bytes
            .search(target_timestamp, SearchField::Key, Bound::LargestLowerBound)
            .map_or(
                TimestampOffset {
                    timestamp: NO_TIMESTAMP,
                    offset: base,
                },
                |(_, e)| e.decode(base),
            )
    }

    /// The last entry, or `(-1, base_offset)` when empty (Kafka's `lastEntry`).
    pub fn last_entry(&self) -> TimestampOffset {
        let base = self.base_offset();
        self.bytes.slots().last().map_or(
            TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: base,
            },
            |e| e.decode(base),
        )
    }

    /// The entry in slot `n`, `None` past the end.
    pub fn entry(&self, n: usize) -> Option<TimestampOffset> {
        self.bytes
            .slots()
            .get(n)
            .map(|e| e.decode(self.base_offset()))
    }

    /// All entries, decoded.
    pub fn all_entries(&self) -> Vec<TimestampOffset> {
        let base = self.base_offset();
        self.bytes.slots().iter().map(|e| e.decode(base)).collect()
    }
}
