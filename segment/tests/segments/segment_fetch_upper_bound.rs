//! `LogSegment::fetch_upper_bound_offset` (Kafka's `fetchUpperBoundOffset`): the offset of
//! the first offset-index entry whose position is at least the start position plus the
//! fetch size, or none.

use crate::common::*;
use index_offset::OffsetPosition;

#[test]
fn upper_bound_is_the_first_entry_at_or_past_start_plus_fetch_size() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    // 73-byte batches and a 10-byte index interval: every append after the first one
    // indexes its batch, so the entries are (i, 73 i) for i in 1..10.
    let seg = new_segment(dir.path(), 0, &config(10, 4096), clock);
    for i in 0..10i64 {
        let b = v2(i, 1_000 + i);
        assert_eq!(b.len(), 73);
        seg.append(i, 1_000 + i, i, &b).unwrap();
    }
    let start = |offset, position| OffsetPosition { offset, position };
    assert_eq!(
        seg.fetch_upper_bound_offset(start(0, 0), 150).unwrap(),
        Some(3)
    );
    assert_eq!(
        seg.fetch_upper_bound_offset(start(1, 73), 73).unwrap(),
        Some(2)
    );
    assert_eq!(
        seg.fetch_upper_bound_offset(start(4, 292), 300).unwrap(),
        Some(9)
    );
    // Exactly at an entry's position counts.
    assert_eq!(
        seg.fetch_upper_bound_offset(start(0, 0), 365).unwrap(),
        Some(5)
    );
    // Past the last entry: no upper bound.
    assert_eq!(
        seg.fetch_upper_bound_offset(start(0, 0), 658).unwrap(),
        None
    );
    // The same answers as the offset index gives.
    let oi = seg.offset_index().unwrap();
    for size in [1, 100, 200, 400, 700] {
        assert_eq!(
            seg.fetch_upper_bound_offset(start(0, 0), size).unwrap(),
            oi.fetch_upper_bound_offset(start(0, 0), size)
                .unwrap()
                .map(|p| p.offset)
        );
    }
}
