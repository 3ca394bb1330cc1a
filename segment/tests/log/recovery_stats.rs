//! Issue 11, finding 9: after recovery truncates a segment, `LogStats` reports the
//! offsets it removed, not only the bytes.

use std::io::{Seek, SeekFrom, Write};

use crate::common::*;

/// Flips one byte inside the records of the batch starting at byte `position`.
fn corrupt_at(path: &std::path::Path, position: u64) {
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(position + 70)).unwrap();
    f.write_all(&[0xAB]).unwrap();
}

/// Byte position of the batch starting at `base` in a segment filled by `fill(.., 0, .., 5, 1000)`.
fn position_of(base: i64) -> u64 {
    (0..base)
        .step_by(5)
        .map(|o| batch(o, 5, 1000 + o).len() as u64)
        .sum()
}

#[test]
fn recovery_reports_the_offsets_it_truncated() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock.clone());
    fill(&log, 0, 10, 5, 1000); // offsets 0..50, ten batches of 5
    let seg = log.segments().active_segment().unwrap().log_path();
    let size = log.size();
    let at = position_of(35);
    drop(log); // a crash: nothing flushed, the recovery point is 0
    corrupt_at(&seg, at); // batch 35..=39 fails its CRC
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    let stats = log.stats();
    assert_eq!(log.log_end_offset(), 35);
    assert_eq!(
        stats
            .bytes_truncated
            .load(std::sync::atomic::Ordering::Relaxed),
        size - at
    );
    assert_eq!(stats.truncated_offsets(), Some(35..50));
}

#[test]
fn the_reported_range_covers_the_segments_deleted_after_a_truncated_one() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock.clone());
    fill(&log, 0, 4, 5, 1000); // 0..20
    log.roll(None).unwrap();
    fill(&log, 20, 4, 5, 1000); // 20..40 in the second segment
    let first = log.segments().first_segment().unwrap().log_path();
    drop(log);
    corrupt_at(&first, position_of(10)); // batch 10..=14
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    assert_eq!(log.log_end_offset(), 10);
    assert_eq!(log.segments().base_offsets(), vec![0]);
    assert_eq!(log.stats().truncated_offsets(), Some(10..40));
}

#[test]
fn a_clean_recovery_reports_no_truncated_offsets() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock.clone());
    fill(&log, 0, 4, 5, 1000);
    drop(log);
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    assert_eq!(log.stats().scanned_segments(), 1);
    assert_eq!(log.stats().truncated_offsets(), None);
    let stats = log.stats();
    assert_eq!(
        stats
            .first_truncated_offset
            .load(std::sync::atomic::Ordering::Relaxed),
        -1,
        "a recovery that removed nothing notes no truncation"
    );
    assert_eq!(log.log_end_offset(), 20);
}

#[test]
fn a_torn_header_removes_bytes_but_reports_no_offsets() {
    // The torn tail is shorter than a batch header: recovery removes its bytes, but
    // they tell no offsets, so no range is reported (not an empty or inverted one).
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock.clone());
    fill(&log, 0, 4, 5, 1000); // 0..20
    let seg = log.segments().active_segment().unwrap().log_path();
    drop(log);
    let mut f = std::fs::OpenOptions::new().append(true).open(&seg).unwrap();
    f.write_all(&[0u8, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0]).unwrap(); // 11 bytes of a header
    drop(f);
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    let stats = log.stats();
    assert_eq!(log.log_end_offset(), 20);
    assert_eq!(
        stats
            .bytes_truncated
            .load(std::sync::atomic::Ordering::Relaxed),
        11
    );
    assert_eq!(
        stats
            .first_truncated_offset
            .load(std::sync::atomic::Ordering::Relaxed),
        20
    );
    assert_eq!(stats.truncated_offsets(), None);
}

#[test]
fn two_truncations_report_the_range_from_the_first_one() {
    // A flushed segment with a missing index is rebuilt and loses everything (its first
    // batch is corrupt: it is truncated to offset 0); then the unflushed segment after it
    // is truncated at 50. The range starts at the first truncation, offset 0.
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock.clone());
    fill(&log, 0, 4, 5, 1000); // 0..20
    log.roll(None).unwrap();
    fill(&log, 20, 4, 5, 1000); // 20..40
    log.flush().unwrap(); // recovery point 40
    fill(&log, 40, 4, 5, 1000); // 40..60, same segment, not flushed
    let first = log.segments().first_segment().unwrap();
    let first_log = first.log_path();
    let first_index = first_log.with_extension("index");
    drop(first);
    let active = log.segments().active_segment().unwrap().log_path();
    drop(log);
    corrupt_at(&first_log, 0);
    std::fs::remove_file(first_index).unwrap();
    corrupt_at(&active, position_of(50) - position_of(20));
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    assert_eq!(log.segments().base_offsets(), vec![0, 20]);
    assert_eq!(log.log_end_offset(), 50);
    assert_eq!(log.stats().truncated_offsets(), Some(0..60));
}
