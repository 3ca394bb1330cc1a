//! field case B5: relative offset overflow — roll before appending, typed error at segment level.
use crate::common::*;
use segment::SegmentError;

#[test]
fn b5a_follower_jump_rolls_to_new_base() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    fill(&log, 0, 1, 10, 0);
    let b = segment::record::BatchBuilder::new(2_147_483_657)
        .record(1, None, Some(b"a"))
        .record(1, None, Some(b"b"))
        .record(1, None, Some(b"c"))
        .build()
        .unwrap();
    log.append(&b).unwrap();
    assert_eq!(log.segments().base_offsets(), vec![0, 2_147_483_657]);
    assert!(dir.path().join("00000000002147483657.log").exists());
    let r = log.read(10, 1000).unwrap();
    assert_eq!(offsets_in(&r.records)[0], 2_147_483_657);
    assert_eq!(offsets_in(&log.read(5, 1000).unwrap().records)[5], 5);
    assert_eq!(
        offsets_in(&log.read(2_147_483_658, 1000).unwrap().records),
        vec![2_147_483_657, 2_147_483_658, 2_147_483_659]
    );
}

#[test]
fn b5b_batch_spanning_past_int_max_rolls_first_and_boundary_stays() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    let b = segment::record::BatchBuilder::new(0)
        .record(1, None, Some(b"a"))
        .build()
        .unwrap();
    log.append(&b).unwrap();
    // last offset exactly base + INT_MAX stays
    let b = segment::record::BatchBuilder::new(2_147_483_640)
        .record_at(2_147_483_640, 1, None, Some(b"x"), &[])
        .record_at(2_147_483_647, 1, None, Some(b"y"), &[])
        .build()
        .unwrap();
    log.append(&b).unwrap();
    assert_eq!(log.segments().base_offsets(), vec![0]);
    let b = segment::record::BatchBuilder::new(2_147_483_650)
        .record_at(2_147_483_650, 1, None, Some(b"x"), &[])
        .record_at(2_147_483_660, 1, None, Some(b"y"), &[])
        .build()
        .unwrap();
    log.append(&b).unwrap();
    assert_eq!(log.segments().base_offsets(), vec![0, 2_147_483_650]);
}

#[test]
fn b5c_segment_level_overflow_leaves_files_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 0, &config(1, 4096), clock);
    seg.append(0, 1, 0, &v2(0, 1)).unwrap();
    seg.append(1, 2, 1, &v2(1, 2)).unwrap();
    seg.flush().unwrap();
    let snap =
        |ext: &str| std::fs::read(dir.path().join(format!("00000000000000000000.{ext}"))).unwrap();
    let before = (snap("log"), snap("index"), snap("timeindex"));
    let err = seg
        .append(1 << 31, 3, 1 << 31, &v2(1 << 31, 3))
        .unwrap_err();
    assert!(matches!(err, SegmentError::OffsetOverflow { offset, .. } if offset == 1 << 31));
    seg.flush().unwrap();
    assert_eq!(before, (snap("log"), snap("index"), snap("timeindex")));
}

// field case B5(d), splitting a legacy overflowed segment on load: tests/log/legacy_offset_overflow_split.rs

#[test]
fn non_monotonic_append_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 4096), clock);
    fill(&log, 0, 2, 10, 0);
    let err = log.append(&batch(15, 1, 0)).unwrap_err();
    assert!(matches!(
        err,
        SegmentError::NonMonotonicOffset {
            expected_at_least: 20,
            found: 15,
            ..
        }
    ));
    let mut two = batch(30, 1, 0);
    two.extend(batch(30, 1, 0));
    assert!(matches!(
        log.append(&two).unwrap_err(),
        SegmentError::NonMonotonicOffset { .. }
    ));
    assert_eq!(log.log_end_offset(), 20);
}

/// Garbage handed to `Log::append` is the caller's error, not corruption of the log:
/// a typed `InvalidInput`, `is_corruption() == false`, nothing appended.
#[test]
fn corrupt_append_input_is_invalid_input_not_log_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let log = segment::Log::open(dir.path(), segment::LogConfig::default()).unwrap();
    let mut batch = segment::record::fixtures::v2(0, 1_000);
    let last = batch.len() - 1;
    batch[last] ^= 0xff; // breaks the CRC
    let err = log.append(&batch).unwrap_err();
    assert!(
        matches!(err, segment::SegmentError::InvalidInput { .. }),
        "{err:?}"
    );
    assert!(!err.is_corruption());
    assert_eq!(log.log_end_offset(), 0);
}
