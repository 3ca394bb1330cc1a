//! [`LogSegments`]: the concurrent sorted map of a log's segments by base offset (docs/kafka-behaviour.md#segment-map),
//! and the structural-change counter readers validate against
//! (`docs/kafka-behaviour.md#concurrent-reads`).

use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_skiplist::SkipMap;

use crate::error::{Result, SegmentError};
use crate::format::{BatchFormat, KafkaBatchFormat};
use crate::segment::LogSegment;

/// A concurrent skip-list map from base offset to segment (Kafka's `LogSegments` over a
/// `ConcurrentSkipListMap`). Readers iterate without locks while the log adds and removes
/// segments.
///
/// It also holds the log's **structural generation**, a sequence lock (seqlock) over the
/// map and the segments' contents: [`Log`](crate::Log) makes it odd for the time of every
/// change that removes data a reader may be reading (a segment leaving the map, a
/// segment truncated) and even again afterwards; [`Log::read`](crate::Log::read) answers
/// only from a pass that began and ended in the same even generation, and tries again
/// otherwise. Appends and rolls only add data and leave it unchanged. The methods here do
/// not touch it: [`add`](Self::add), [`remove`](Self::remove) and [`clear`](Self::clear)
/// called directly are not seen by the log's readers.
#[derive(Debug)]
pub struct LogSegments<F: BatchFormat = KafkaBatchFormat> {
    map: SkipMap<i64, Arc<LogSegment<F>>>,
    /// Even: no structural change under way; odd: one is. Only the holder of the log's
    /// lock changes it.
    generation: AtomicU64,
}

impl<F: BatchFormat> Default for LogSegments<F> {
    fn default() -> Self {
        LogSegments {
            map: SkipMap::new(),
            generation: AtomicU64::new(0),
        }
    }
}

/// A structural change under way (see [`LogSegments`]): the generation is odd from
/// [`LogSegments::begin_change`] until this guard is dropped (also on an early return with
/// an error, or a panic), so no reader can wait forever for it.
#[derive(Debug)]
#[must_use = "the change ends when the guard is dropped"]
pub(crate) struct StructuralChange<'a> {
    generation: &'a AtomicU64,
    /// `false` for a change begun inside another one (the outer one ends it).
    outermost: bool,
}

impl Drop for StructuralChange<'_> {
    fn drop(&mut self) {
        if self.outermost {
            // Release: everything the change did happens before a reader that loads the
            // new even value (Acquire) and starts its pass.
            self.generation.fetch_add(1, Ordering::Release);
        }
    }
}

impl<F: BatchFormat> LogSegments<F> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current structural generation (even while no change is under way). Used with
    /// [`is_generation`](Self::is_generation) by readers that validate a lock-free pass
    /// over the segments, as [`Log::read`](crate::Log::read) does.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The generation once no structural change is under way: spins (then yields) while
    /// it is odd. A change is a bounded amount of work under the log's lock (removing
    /// segments from the map, renaming or removing their files, truncating one segment),
    /// with no fsync inside.
    pub(crate) fn stable_generation(&self) -> u64 {
        let mut spins = 0u32;
        loop {
            let g = self.generation.load(Ordering::Acquire);
            if g & 1 == 0 {
                return g;
            }
            if spins < 64 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// Whether the generation is still `seen` after a pass that began with
    /// [`generation`](Self::generation) or `stable_generation` returning `seen`: then no
    /// structural change began or ended during the pass (the seqlock reader's check; the
    /// `Acquire` fence orders the pass's reads before this load).
    pub fn is_generation(&self, seen: u64) -> bool {
        fence(Ordering::Acquire);
        self.generation.load(Ordering::Relaxed) == seen
    }

    /// Begins a structural change: the generation becomes odd until the returned guard is
    /// dropped. Inside a change already begun it changes nothing (the outer change ends
    /// it). Callers are serialised (the log's lock).
    pub(crate) fn begin_change(&self) -> StructuralChange<'_> {
        let g = self.generation.load(Ordering::Relaxed);
        if g & 1 == 1 {
            return StructuralChange {
                generation: &self.generation,
                outermost: false,
            };
        }
        self.generation.store(g + 1, Ordering::Relaxed);
        // Release fence: the odd value is ordered before every write of the change, so a
        // reader that observes any of them (and then fences with Acquire) sees the
        // generation moved.
        fence(Ordering::Release);
        StructuralChange {
            generation: &self.generation,
            outermost: true,
        }
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
