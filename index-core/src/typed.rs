//! [`TypedIndex`]: what a typed index (Kafka's `OffsetIndex`, `TimeIndex`) shares with the
//! [`IndexFile`] under it.
//!
//! A typed index adds Kafka's rules for one entry layout (append checks, lookups, the
//! time index's reserved slot) and nothing else: the file's lifecycle (path, entry count,
//! resize, trim, flush, rename, delete, unmap) is the [`IndexFile`]'s, reached through
//! [`index_file`](TypedIndex::index_file) (and, on the index crates' types, through
//! `Deref`), so no layer forwards it again.

use std::path::Path;

use crate::{IndexEntry, IndexFile, Result};

/// A typed index over an [`IndexFile`] of `Self::Entry` slots.
///
/// Implemented by `index_offset::OffsetIndex` and `index_time::TimeIndex`; the segment
/// layer's lazy index is generic over it.
pub trait TypedIndex: Send + Sync + Sized {
    /// The fixed-size entry layout of the file.
    type Entry: IndexEntry;

    /// Opens (creating it and preallocating `max_index_size` bytes, rounded down to whole
    /// slots, when missing) the writable index at `path` of a segment with base offset
    /// `base_offset`: Kafka's index constructor with `writable = true`.
    ///
    /// # Errors
    /// Those of the index's own `open` (e.g. [`crate::IndexError::Io`],
    /// [`crate::IndexError::InvalidArgument`] for a new file smaller than one slot).
    fn open_writable(path: &Path, base_offset: i64, max_index_size: usize) -> Result<Self>;

    /// The memory-mapped file under Kafka's rules.
    fn index_file(&self) -> &IndexFile<Self::Entry>;
}
