//! [`OffsetIndexView`]: a read-only offset index over bytes in memory (a remote segment's
//! `.index`, as downloaded) with [`OffsetIndex`](crate::OffsetIndex)'s answers.

use std::path::Path;
use std::sync::Arc;

use index_core::view::{IndexBytes, IN_MEMORY_PATH};
use index_core::{Bound, Result, SearchField};

use crate::{OffsetPosition, RawOffsetEntry};

/// A read-only offset index held in memory: the bytes of a trimmed `.index` file (8-byte
/// entries), supplied by the caller or read once from a file. Lookups give
/// [`OffsetIndex`](crate::OffsetIndex)'s answers over the same bytes (Kafka's
/// `OffsetIndex.lookup` and `fetchUpperBoundOffset`, as Kafka's `RemoteIndexCache`
/// serves them; `docs/kafka-behaviour.md#index-bytes`).
///
/// Built only over well-formed bytes: the length is a multiple of 8, every relative
/// offset is `>= 0` and larger than the previous one, and positions never decrease —
/// stricter than Kafka's `sanityCheck`, which accepts a zero-filled tail (a sealed,
/// uploaded index has none). Cheap to clone (an `Arc`); `Send + Sync`.
#[derive(Clone, Debug)]
pub struct OffsetIndexView {
    bytes: IndexBytes<RawOffsetEntry>,
}

impl OffsetIndexView {
    /// A view over `bytes` for the segment starting at `base_offset`.
    ///
    /// # Errors
    /// [`IndexError::CorruptIndex`](crate::IndexError::CorruptIndex) (naming
    /// [`IN_MEMORY_PATH`]) if the length is not a multiple of 8, a relative offset is
    /// negative or not larger than the one before, or a position is smaller than the one
    /// before (with the slot and the values found).
    pub fn from_bytes(base_offset: i64, bytes: impl Into<Arc<[u8]>>) -> Result<Self> {
        Self::checked(IndexBytes::new(
            bytes.into(),
            base_offset,
            Path::new(IN_MEMORY_PATH),
        )?)
    }

    /// Reads the `.index` file at `path` once (opened read-only, not mapped) and builds a
    /// view of it, as [`OffsetIndexView::from_bytes`].
    ///
    /// # Errors
    /// [`IndexError::Io`](crate::IndexError::Io); the errors of
    /// [`OffsetIndexView::from_bytes`], naming `path`.
    pub fn open(path: impl AsRef<Path>, base_offset: i64) -> Result<Self> {
        Self::checked(IndexBytes::read_file(path.as_ref(), base_offset)?)
    }

    fn checked(bytes: IndexBytes<RawOffsetEntry>) -> Result<Self> {
        let mut last: Option<(i32, u32)> = None;
        for (slot, e) in bytes.slots().iter().enumerate() {
            let (rel, pos) = (e.relative_offset.get(), e.position.get());
            if rel < 0 {
                return Err(
                    bytes.corrupt(format!("slot {slot}: relative offset {rel} is negative"))
                );
            }
            if let Some((last_rel, last_pos)) = last {
                if rel <= last_rel {
                    return Err(bytes.corrupt(format!(
                        "slot {slot}: relative offset {rel} is not larger than the previous one {last_rel}"
                    )));
                }
                if pos < last_pos {
                    return Err(bytes.corrupt(format!(
                        "slot {slot}: position {pos} is smaller than the previous one {last_pos}"
                    )));
                }
            }
            last = Some((rel, pos));
        }
        Ok(OffsetIndexView { bytes })
    }

    /// The segment's base offset.
    pub fn base_offset(&self) -> i64 {
        self.bytes.base_offset()
    }

    /// Number of entries.
    pub fn entries(&self) -> usize {
        self.bytes.len()
    }

    /// The bytes held (8 per entry): the view's weight in a cache.
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.size_in_bytes()
    }

    /// The entry with the largest offset `<= target_offset`, or `(base_offset, 0)` when
    /// there is none ([`OffsetIndex::lookup`](crate::OffsetIndex::lookup)).
    #[inline]
    pub fn lookup(&self, target_offset: i64) -> OffsetPosition {
        let base = self.base_offset();
        self.bytes
            .search(target_offset, SearchField::Key, Bound::LargestLowerBound)
            .map_or(
                OffsetPosition {
                    offset: base,
                    position: 0,
                },
                |(_, e)| e.decode(base),
            )
    }

    /// [`OffsetIndex::fetch_upper_bound_offset`](crate::OffsetIndex::fetch_upper_bound_offset)
    /// over these bytes: an entry at or beyond `fetch_offset_position.position +
    /// fetch_size` bytes, `None` if there is none.
    pub fn fetch_upper_bound_offset(
        &self,
        fetch_offset_position: OffsetPosition,
        fetch_size: i32,
    ) -> Option<OffsetPosition> {
        let target = fetch_offset_position.position as i64 + fetch_size as i64;
        self.bytes
            .search(target, SearchField::Value, Bound::SmallestUpperBound)
            .map(|(_, e)| e.decode(self.base_offset()))
    }

    /// The last entry, or `(base_offset, 0)` when empty (Kafka's `lastEntry`).
    pub fn last_entry(&self) -> OffsetPosition {
        let base = self.base_offset();
        self.bytes.slots().last().map_or(
            OffsetPosition {
                offset: base,
                position: 0,
            },
            |e| e.decode(base),
        )
    }

    /// The entry in slot `n`, `None` past the end.
    pub fn entry(&self, n: usize) -> Option<OffsetPosition> {
        self.bytes
            .slots()
            .get(n)
            .map(|e| e.decode(self.base_offset()))
    }

    /// All entries, decoded.
    pub fn all_entries(&self) -> Vec<OffsetPosition> {
        let base = self.base_offset();
        self.bytes.slots().iter().map(|e| e.decode(base)).collect()
    }
}
