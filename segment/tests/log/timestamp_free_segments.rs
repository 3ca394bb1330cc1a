//! Segments whose records carry no timestamp (−1, e.g. converted old data) have an empty
//! time index. After a reopen their largest timestamp is read from that empty index
//! without mapping it, and must read as −1 ("none"), so that time retention falls back
//! to the `.log`'s modification time as Kafka's `largestTimestamp` does. Reading it as
//! anything else would make retention delete fresh data.

use crate::common::*;
use segment::LogConfig;

#[test]
fn segments_without_timestamps_are_retained_by_their_modification_time() {
    let dir = tmpdir();
    // the mock clock is at 1,000,000 ms: the files' real modification times are later
    let (_t, clock) = mock();
    let cfg = LogConfig {
        retention_ms: 10_000,
        ..config(1, 1 << 20)
    };
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    for o in (0..20).step_by(5) {
        log.append(&batch(o, 5, -1)).unwrap();
    }
    log.roll(None).unwrap();
    for o in (20..30).step_by(5) {
        log.append(&batch(o, 5, -1)).unwrap();
    }
    log.close().unwrap();
    let ti = segment::names::time_index_file(dir.path(), 0, "");
    assert_eq!(
        std::fs::metadata(&ti).unwrap().len(),
        0,
        "no timestamp, no entry"
    );
    let log = open_log(dir.path(), cfg, clock);
    let first = log.segments().first_segment().unwrap();
    assert_eq!(first.max_timestamp_so_far().unwrap(), -1);
    assert_eq!(first.largest_record_timestamp().unwrap(), None);
    assert_eq!(
        first.largest_timestamp().unwrap(),
        first.last_modified().unwrap()
    );
    drop(first);
    assert_eq!(
        log.delete_old_segments().unwrap(),
        0,
        "nothing is older than 10 s"
    );
    assert_eq!(log.segments().base_offsets(), vec![0, 20]);
    assert_eq!(read_all(&log, 0), (0..30).collect::<Vec<i64>>());
}
