//! Kafka's `Cleaner.groupSegmentsBySize`: which consecutive segments a clean rewrites
//! into one (`docs/kafka-behaviour.md#cleaner-group-segments`).

use std::ops::Range;

use super::SegmentSummary;

/// Groups consecutive segments, each group to be cleaned into one segment, as Kafka's
/// `groupSegmentsBySize(segments, maxSize, maxIndexSize, firstUncleanableOffset)`.
///
/// `segments` are the segments a clean covers, in base-offset order (Kafka passes
/// `logSegments(0, endOffset)`: every segment from the log's first up to the clean's end
/// offset, clean ones included); `max_size` is `segment.bytes`, `max_index_size`
/// `segment.index.bytes`. A group starts with the next segment and takes the following
/// one while all of these hold:
///
/// * the group's `.log` bytes plus the segment's stay ≤ `max_size`;
/// * the group's offset-index bytes plus the segment's stay ≤ `max_index_size`, and so
///   do its time-index bytes;
/// * the segment is empty, or its estimated last offset minus the group's first base
///   offset is ≤ `i32::MAX` (a relative offset must fit). The estimate is the next
///   segment's base offset − 1, or `first_uncleanable_offset − 1` for the last segment
///   of `segments` (an over-estimate when the clean ends before it).
///
/// Returns the groups as index ranges into `segments`, covering it in order.
pub fn group_segments_by_size(
    segments: &[SegmentSummary],
    max_size: u64,
    max_index_size: u64,
    first_uncleanable_offset: i64,
) -> Vec<Range<usize>> {
    let mut groups = Vec::new();
    let mut i = 0;
    while let Some(first) = segments.get(i) {
        let start = i;
        let mut log_size = first.size;
        let mut index_size = first.offset_index_bytes;
        let mut time_index_size = first.time_index_bytes;
        i += 1;
        while let Some(next) = segments.get(i) {
            let last_offset = match segments.get(i + 1) {
                Some(after) => after.base_offset - 1,
                None => first_uncleanable_offset - 1,
            };
            let fits = log_size + next.size <= max_size
                && index_size + next.offset_index_bytes <= max_index_size
                && time_index_size + next.time_index_bytes <= max_index_size
                && (next.size == 0
                    || i128::from(last_offset) - i128::from(first.base_offset)
                        <= i128::from(i32::MAX));
            if !fits {
                break;
            }
            log_size += next.size;
            index_size += next.offset_index_bytes;
            time_index_size += next.time_index_bytes;
            i += 1;
        }
        groups.push(start..i);
    }
    groups
}
