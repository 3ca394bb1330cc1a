//! Acceptance case 67: LogSegments map operations.
use std::sync::Arc;

use crate::common::*;
use segment::{KafkaBatchFormat, LogSegment, LogSegments};

fn map(bases: &[i64]) -> (tempfile::TempDir, LogSegments) {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let m = LogSegments::new();
    for &b in bases {
        m.add(Arc::new(new_segment(
            dir.path(),
            b,
            &config(10, 1000),
            clock.clone(),
        )));
    }
    (dir, m)
}

fn bases(v: Vec<Arc<LogSegment>>) -> Vec<i64> {
    v.iter().map(|s| s.base_offset()).collect()
}

#[test]
fn case67_values_and_neighbours() {
    let (_d, m) = map(&[1, 2, 3, 4]);
    assert!(matches!(
        m.values_range(2, 1),
        Err(segment::SegmentError::InvalidArgument { .. })
    ));
    assert_eq!(bases(m.values_range(1, 1).unwrap()), Vec::<i64>::new());
    assert_eq!(bases(m.values_range(1, 2).unwrap()), vec![1]);
    assert_eq!(bases(m.values_range(1, 3).unwrap()), vec![1, 2]);
    assert_eq!(bases(m.values_range(1, 4).unwrap()), vec![1, 2, 3]);
    assert_eq!(bases(m.values_range(2, 4).unwrap()), vec![2, 3]);
    assert_eq!(bases(m.values_range(3, 4).unwrap()), vec![3]);
    assert_eq!(bases(m.values_range(4, 4).unwrap()), Vec::<i64>::new());
    assert_eq!(bases(m.values_range(4, 5).unwrap()), vec![4]);
    assert_eq!(m.active_segment().unwrap().base_offset(), 4);
    assert_eq!(bases(m.non_active_log_segments_from(2)), vec![2, 3]);
    assert_eq!(bases(m.non_active_log_segments_from(4)), Vec::<i64>::new());

    let (_d, m) = map(&[1, 3, 5, 7]);
    let b = |s: Option<Arc<LogSegment>>| s.map(|s| s.base_offset());
    assert_eq!(b(m.floor_segment(2)), Some(1));
    assert_eq!(b(m.floor_segment(3)), Some(3));
    assert_eq!(b(m.lower_segment(3)), Some(1));
    assert_eq!(b(m.lower_segment(4)), Some(3));
    assert_eq!(b(m.higher_segment(4)), Some(5));
    assert_eq!(b(m.higher_segment(5)), Some(7));

    let (d, m) = map(&[1, 3, 5, 7, 9]);
    assert_eq!(bases(m.higher_segments(0)), vec![1, 3, 5, 7, 9]);
    assert_eq!(bases(m.higher_segments(1)), vec![3, 5, 7, 9]);
    assert_eq!(bases(m.higher_segments(8)), vec![9]);
    assert_eq!(bases(m.higher_segments(9)), Vec::<i64>::new());
    let (_t, clock) = mock();
    let prev = m.add(Arc::new(
        LogSegment::<KafkaBatchFormat>::create(d.path(), 5, &config(10, 1000), clock).unwrap(),
    ));
    assert!(prev.is_some());
    assert_eq!(m.number_of_segments(), 5);
}

#[test]
fn case67_size_in_bytes_does_not_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let m: LogSegments = LogSegments::new();
    for b in [0i64, 1] {
        let p = dir.path().join(format!("{b:020}.log"));
        std::fs::File::create(&p)
            .unwrap()
            .set_len(i32::MAX as u64)
            .unwrap();
        let seg = reopen_segment(dir.path(), b, &config(10, 1000), clock.clone());
        m.add(Arc::new(seg));
    }
    assert_eq!(m.size_in_bytes(), 4294967294);
}
