//! Recovery keeps the offset of the *first* batch that reaches the segment's largest
//! timestamp (Kafka's `recover` compares with `>`), as appends do. If it kept a later
//! batch's offset, the rebuilt time index would point past the first records at that
//! timestamp, and a lookup by that timestamp would skip them.

use crate::common::*;
use segment::ProducerStateManager;

#[test]
fn recovery_keeps_the_first_batch_reaching_the_largest_timestamp() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 0, &config(4096, 4096), clock.clone());
    // Offsets 0..=1 and 2..=3, both at the largest timestamp 5000; 4 is older.
    for (base, n, ts) in [(0, 2, 5_000), (2, 2, 5_000), (4, 1, 4_000)] {
        let last = base + n as i64 - 1;
        seg.append(last, ts, last, &batch(base, n, ts)).unwrap();
    }
    let appended = seg.time_index().unwrap().last_entry().unwrap();
    let appended_max = seg.max_timestamp_so_far().unwrap();
    seg.flush().unwrap();
    seg.close().unwrap();

    let seg = reopen_segment(dir.path(), 0, &config(4096, 4096), clock);
    assert_eq!(
        seg.recover(&mut ProducerStateManager::new(), None).unwrap(),
        0
    );
    // The rebuilt time index's entry: (5000, last offset of the first batch at 5000).
    let rebuilt = seg.time_index().unwrap().last_entry().unwrap();
    assert_eq!((rebuilt.timestamp, rebuilt.offset), (5_000, 1));
    assert_eq!(seg.max_timestamp_so_far().unwrap(), appended_max);
    // Appends rolled nothing into the time index yet (no index interval crossed).
    assert_eq!(appended.timestamp, -1);
    // A lookup by the timestamp finds offset 0, the first record at 5000.
    let found = seg.find_offset_by_timestamp(5_000, 0).unwrap().unwrap();
    assert_eq!((found.timestamp, found.offset), (5_000, 0));
}
