//! `Log::close_handlers` (Kafka's `closeHandlers`, after a disk failure): every index
//! mapping of the log is released at once, also those of segments a reader still holds,
//! so a failed disk's files are not kept mapped by stray handles. The held segment then
//! answers index lookups with a typed `Closed` error, never a crash; the data stays on
//! disk and the next open recovers it.

use crate::common::*;
use segment::SegmentError;

#[test]
fn close_handlers_unmaps_every_index_also_of_held_segments() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock.clone());
    fill(&log, 0, 4, 5, 1_000);
    let held = log.segments().active_segment().unwrap();
    held.offset_index().unwrap().lookup(3).unwrap();
    held.time_index().unwrap();
    assert!(
        index_mappings(dir.path()).0 >= 2,
        "the active indexes are mapped"
    );
    log.close_handlers();
    assert_eq!(
        index_mappings(dir.path()).0,
        0,
        "a held segment keeps no mapping"
    );
    match held.offset_index().and_then(|i| Ok(i.lookup(3)?)) {
        Err(SegmentError::Index(index_core::IndexError::Closed { .. })) => {}
        other => panic!("a lookup after close_handlers must be Closed, got {other:?}"),
    }
    drop(held);
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    assert_eq!(read_all(&log, 0), (0..20).collect::<Vec<i64>>());
}
