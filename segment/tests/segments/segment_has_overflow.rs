//! `LogSegment::has_overflow` (Kafka's `hasOverflow`): whether a segment holds an offset
//! that its base cannot represent as a relative offset (`offset - base > i32::MAX`),
//! which legacy brokers could write and the loader must split.

use crate::common::*;
use segment::record::LegacyMessage;
use segment::LogSegment;

/// A segment with base `base` whose `.log` holds one v1 message at each of `offsets`,
/// written as raw bytes (an append would refuse an overflowed offset) and then opened.
fn segment_with(dir: &std::path::Path, base: i64, offsets: &[i64]) -> LogSegment {
    let mut bytes = Vec::new();
    for &o in offsets {
        bytes.extend(LegacyMessage::v1(o, 1_000, b"x").to_vec().unwrap());
    }
    std::fs::write(segment::names::log_file(dir, base, ""), bytes).unwrap();
    let (_t, clock) = mock();
    reopen_segment(dir, base, &config(4096, 4096), clock)
}

#[test]
fn an_empty_segment_has_no_overflow() {
    let dir = tmpdir();
    let seg = segment_with(dir.path(), 100, &[]);
    assert_eq!(seg.read_next_offset().unwrap(), 100);
    assert!(!seg.has_overflow().unwrap());
}

#[test]
fn offsets_up_to_base_plus_i32_max_do_not_overflow() {
    let dir = tmpdir();
    let last = 100 + i32::MAX as i64;
    let seg = segment_with(dir.path(), 100, &[100, 101, last]);
    assert_eq!(seg.read_next_offset().unwrap(), last + 1);
    assert!(!seg.has_overflow().unwrap());
}

#[test]
fn an_offset_past_base_plus_i32_max_overflows() {
    let dir = tmpdir();
    let past = 100 + i32::MAX as i64 + 1;
    let seg = segment_with(dir.path(), 100, &[100, past]);
    assert_eq!(seg.read_next_offset().unwrap(), past + 1);
    assert!(seg.has_overflow().unwrap());
}

#[test]
fn a_small_segment_does_not_overflow() {
    let dir = tmpdir();
    let seg = segment_with(dir.path(), 0, &[0, 1, 2]);
    assert_eq!(seg.read_next_offset().unwrap(), 3);
    assert!(!seg.has_overflow().unwrap());
}
