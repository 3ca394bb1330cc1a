//! `Log::append` on one input of several batches: offsets must increase from batch to
//! batch inside the input too (the typed error names the smallest acceptable base
//! offset), and timestamps of 0 are real timestamps (the segment's largest timestamp and
//! its time index say 0, as Kafka's `maybeAppend` over an empty index does).

use crate::common::*;
use segment::SegmentError;

#[test]
fn offsets_must_increase_inside_one_input() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    let input = [batch(0, 5, 1_000), batch(3, 5, 1_000)].concat(); // 0..=4, then 3..=7
    match log.append(&input) {
        Err(SegmentError::NonMonotonicOffset {
            expected_at_least,
            found,
            ..
        }) => assert_eq!((expected_at_least, found), (5, 3)),
        other => panic!("overlapping batches in one input must be refused, got {other:?}"),
    }
    assert_eq!(log.log_end_offset(), 0, "nothing appended");
    let input = [batch(0, 5, 1_000), batch(5, 5, 1_000)].concat();
    log.append(&input).unwrap();
    assert_eq!(log.log_end_offset(), 10);
}

#[test]
fn a_timestamp_of_zero_is_the_largest_timestamp_and_indexed() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock.clone());
    log.append(&batch(0, 3, 0)).unwrap();
    let active = log.segments().active_segment().unwrap();
    assert_eq!(active.max_timestamp_so_far().unwrap(), 0);
    drop(active);
    assert_eq!(
        log.offset_for_timestamp(0).unwrap().map(|t| t.offset),
        Some(0)
    );
    log.roll(None).unwrap();
    log.close().unwrap();
    let ti = std::fs::read(segment::names::time_index_file(dir.path(), 0, "")).unwrap();
    assert_eq!(ti.len(), 12, "one entry");
    assert_eq!(
        i64::from_be_bytes(ti[..8].try_into().unwrap()),
        0,
        "timestamp 0"
    );
}

#[test]
fn equal_largest_timestamps_keep_the_first_batchs_offset() {
    // Two batches in one input with the same largest timestamp: the offset of the largest
    // timestamp is the first batch's (Kafka compares with `>`), so a lookup of that
    // timestamp answers the first record that has it, not a later one.
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    log.append(&[batch(0, 5, 1_000), batch(5, 5, 1_000)].concat())
        .unwrap();
    let active = log.segments().active_segment().unwrap();
    assert_eq!(active.max_timestamp_so_far().unwrap(), 1_000);
    assert_eq!(active.shallow_offset_of_max_timestamp_so_far().unwrap(), 4);
    drop(active);
    assert_eq!(
        log.offset_for_timestamp(1_000).unwrap().map(|t| t.offset),
        Some(0)
    );
}

#[test]
fn equal_largest_timestamps_across_appends_keep_the_first_offset() {
    // The same across two appends: the segment keeps the first batch's offset for its
    // largest timestamp (Kafka's LogSegment.append compares with `>`).
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    log.append(&batch(0, 5, 1_000)).unwrap();
    log.append(&batch(5, 5, 1_000)).unwrap();
    let active = log.segments().active_segment().unwrap();
    assert_eq!(active.max_timestamp_so_far().unwrap(), 1_000);
    assert_eq!(active.shallow_offset_of_max_timestamp_so_far().unwrap(), 4);
}
