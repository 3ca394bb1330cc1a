//! [`LogSegments`]: the concurrent sorted map of a log's segments by base offset (kafka-behaviour §11).

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use crossbeam_skiplist::SkipMap;

use crate::error::{Result, SegmentError};
use crate::format::{BatchFormat, KafkaBatchFormat};
use crate::segment::LogSegment;

/// A concurrent skip-list map from base offset to segment (Kafka's `LogSegments` over a
/// `ConcurrentSkipListMap`). Readers iterate without locks while the log adds and removes
/// segments.
#[derive(Debug)]
pub struct LogSegments<F: BatchFormat = KafkaBatchFormat> {
    map: SkipMap<i64, Arc<LogSegment<F>>>,
}

impl<F: BatchFormat> Default for LogSegments<F> {
    fn default() -> Self {
        LogSegments {
            map: SkipMap::new(),
        }
    }
}

impl<F: BatchFormat> LogSegments<F> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces, by base offset) a segment; returns the previous one.
    pub fn add(&self, segment: Arc<LogSegment<F>>) -> Option<Arc<LogSegment<F>>> {
        let base = segment.base_offset();
        let prev = self.map.get(&base).map(|e| e.value().clone());
        self.map.insert(base, segment);
        prev
    }

    /// Removes the segment with this base offset.
    pub fn remove(&self, base_offset: i64) -> Option<Arc<LogSegment<F>>> {
        self.map.remove(&base_offset).map(|e| e.value().clone())
    }

    /// Removes all segments.
    pub fn clear(&self) {
        self.map.clear();
    }

    /// Whether a segment with this base offset exists.
    pub fn contains(&self, base_offset: i64) -> bool {
        self.map.contains_key(&base_offset)
    }

    /// The segment with this base offset.
    pub fn get(&self, base_offset: i64) -> Option<Arc<LogSegment<F>>> {
        self.map.get(&base_offset).map(|e| e.value().clone())
    }

    /// `true` if there is no segment.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of segments.
    pub fn number_of_segments(&self) -> usize {
        self.map.len()
    }

    /// All segments, ascending by base offset.
    pub fn values(&self) -> Vec<Arc<LogSegment<F>>> {
        self.map.iter().map(|e| e.value().clone()).collect()
    }

    /// All base offsets, ascending.
    pub fn base_offsets(&self) -> Vec<i64> {
        self.map.iter().map(|e| *e.key()).collect()
    }

    /// Kafka's `values(from, to)`: `[]` if `from == to`; otherwise the segments from the
    /// floor segment of `from` (or the first) up to base offset `to` **exclusive**.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `to < from`.
    pub fn values_range(&self, from: i64, to: i64) -> Result<Vec<Arc<LogSegment<F>>>> {
        if from == to {
            return Ok(Vec::new());
        }
        if to < from {
            return Err(SegmentError::arg(format!(
                "invalid log segment range: requested segments from offset {from} mapping to segment {to}"
            )));
        }
        let start = self
            .map
            .upper_bound(Bound::Included(&from))
            .map(|e| *e.key());
        let lower = match start {
            Some(k) => Bound::Included(k),
            None => Bound::Unbounded,
        };
        Ok(self
            .map
            .range((lower, Bound::Excluded(to)))
            .map(|e| e.value().clone())
            .collect())
    }

    /// Kafka's `nonActiveLogSegmentsFrom(from)`: `[]` if `from` is beyond the active
    /// segment's base, else `values_range(from, active base)`.
    pub fn non_active_log_segments_from(&self, from: i64) -> Vec<Arc<LogSegment<F>>> {
        let Some(active) = self.last_segment() else {
            return Vec::new();
        };
        if from > active.base_offset() {
            return Vec::new();
        }
        self.values_range(from, active.base_offset())
            .unwrap_or_default()
    }

    /// Greatest base offset ≤ `offset`.
    pub fn floor_segment(&self, offset: i64) -> Option<Arc<LogSegment<F>>> {
        self.map
            .upper_bound(Bound::Included(&offset))
            .map(|e| e.value().clone())
    }

    /// Greatest base offset < `offset`.
    pub fn lower_segment(&self, offset: i64) -> Option<Arc<LogSegment<F>>> {
        self.map
            .upper_bound(Bound::Excluded(&offset))
            .map(|e| e.value().clone())
    }

    /// Smallest base offset > `offset`.
    pub fn higher_segment(&self, offset: i64) -> Option<Arc<LogSegment<F>>> {
        self.map
            .lower_bound(Bound::Excluded(&offset))
            .map(|e| e.value().clone())
    }

    /// All segments with base offset > `base_offset`, ascending.
    pub fn higher_segments(&self, base_offset: i64) -> Vec<Arc<LogSegment<F>>> {
        self.map
            .range((Bound::Excluded(base_offset), Bound::Unbounded))
            .map(|e| e.value().clone())
            .collect()
    }

    /// The first (oldest) segment.
    pub fn first_segment(&self) -> Option<Arc<LogSegment<F>>> {
        self.map.front().map(|e| e.value().clone())
    }

    /// Base offset of the first segment.
    pub fn first_segment_base_offset(&self) -> Option<i64> {
        self.map.front().map(|e| *e.key())
    }

    /// The last segment.
    pub fn last_segment(&self) -> Option<Arc<LogSegment<F>>> {
        self.map.back().map(|e| e.value().clone())
    }

    /// The active (last) segment.
    ///
    /// # Errors
    /// [`SegmentError::IllegalState`] if there is no segment.
    pub fn active_segment(&self) -> Result<Arc<LogSegment<F>>> {
        self.last_segment()
            .ok_or_else(|| SegmentError::IllegalState {
                path: Default::default(),
                reason: "the log has no segment".into(),
            })
    }

    /// Sum of the segments' sizes, bytes (`u64`, no overflow at 2 × 2 GiB, acceptance case 67).
    pub fn size_in_bytes(&self) -> u64 {
        self.map.iter().map(|e| e.value().size()).sum()
    }

    /// Closes every segment; the first error is returned after trying all.
    ///
    /// # Errors
    /// The first failure.
    pub fn close(&self) -> Result<()> {
        let mut first = None;
        for s in self.values() {
            if let Err(e) = s.close() {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// Unmaps every segment's indexes without flushing.
    pub fn close_handlers(&self) {
        for s in self.values() {
            s.close_handlers();
        }
    }

    /// Moves every segment's stored paths to `dir`.
    pub fn update_parent_dir(&self, dir: &Path) {
        for s in self.values() {
            s.update_parent_dir(dir);
        }
    }
}
