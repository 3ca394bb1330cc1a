//! `preallocate` (Kafka's `log.preallocate`): each new `.log` is created at
//! `segment.bytes` and trimmed to its data when it stops being the active segment or is
//! closed; an existing `.log` is never grown on open. The data reads the same either way.

use crate::common::*;
use segment::LogConfig;

const SEGMENT_BYTES: u64 = 64 * 1024;

fn cfg() -> LogConfig {
    LogConfig {
        preallocate: true,
        segment_bytes: SEGMENT_BYTES,
        ..config(4096, 1 << 20)
    }
}

fn file_len(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).unwrap().len()
}

#[test]
fn new_segments_are_preallocated_and_trimmed_when_rolled_and_closed() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), cfg(), clock.clone());
    let first = log.segments().active_segment().unwrap().log_path();
    assert_eq!(
        file_len(&first),
        SEGMENT_BYTES,
        "a new .log is preallocated"
    );
    fill(&log, 0, 4, 5, 1000); // 0..20
    let data = log.size();
    assert_eq!(file_len(&first), SEGMENT_BYTES);
    log.roll(None).unwrap();
    assert_eq!(
        file_len(&first),
        data,
        "a rolled segment is trimmed to its data"
    );
    let second = log.segments().active_segment().unwrap().log_path();
    assert_eq!(
        file_len(&second),
        SEGMENT_BYTES,
        "the rolled-to segment is preallocated"
    );
    fill(&log, 20, 2, 5, 2000); // 20..30
    let second_data = log.segments().active_segment().unwrap().size();
    log.close().unwrap();
    assert_eq!(
        file_len(&second),
        second_data,
        "close trims the active segment"
    );
    // reopened: existing files keep their length, every offset reads back
    let log = open_log(dir.path(), cfg(), clock);
    assert_eq!(file_len(&first), data);
    assert_eq!(file_len(&second), second_data);
    assert_eq!(log.log_end_offset(), 30);
    assert_eq!(read_all(&log, 0), (0..30).collect::<Vec<i64>>());
}
