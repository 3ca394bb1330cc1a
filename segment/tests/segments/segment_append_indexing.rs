//! Acceptance cases 47, 50, 51, 56, 66: append-path sparse indexing and offset overflow.
use crate::common::*;
use segment::{ProducerStateManager, SegmentError};

fn case50() -> (tempfile::TempDir, segment::LogSegment) {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 100, &config(100, 1000), clock);
    for i in 0..6 {
        seg.append(100 + i, 1000 + 10 * i, 100 + i, &v2(100 + i, 1000 + 10 * i))
            .unwrap();
    }
    (dir, seg)
}

#[test]
fn case50_append_path_indexing() {
    let (_d, seg) = case50();
    assert_eq!(seg.size(), 438);
    let oi = seg.offset_index().unwrap().all_entries().unwrap();
    let oi: Vec<_> = oi.iter().map(|e| (e.offset, e.position)).collect();
    assert_eq!(oi, vec![(102, 146), (104, 292)]);
    let ti = seg.time_index().unwrap().all_entries().unwrap();
    let ti: Vec<_> = ti.iter().map(|e| (e.timestamp, e.offset)).collect();
    assert_eq!(ti, vec![(1020, 102), (1040, 104)]);
    assert_eq!(seg.max_timestamp_so_far().unwrap(), 1050);
    assert_eq!(seg.shallow_offset_of_max_timestamp_so_far().unwrap(), 105);
    let t = seg.translate_offset(103, 0).unwrap().unwrap();
    assert_eq!((t.offset, t.position, t.size), (103, 219, 73));
    let r = seg.read(103, 1000).unwrap().unwrap();
    assert_eq!(r.records.len(), 219);
    assert_eq!(r.fetch_offset_metadata.relative_position_in_segment, 219);
    assert_eq!(seg.read_next_offset().unwrap(), 106);
    let f = |ts, so| {
        seg.find_offset_by_timestamp(ts, so)
            .unwrap()
            .map(|x| (x.timestamp, x.offset))
    };
    assert_eq!(f(1035, 0), Some((1040, 104)));
    assert_eq!(f(1020, 0), Some((1020, 102)));
    assert_eq!(f(1015, 0), Some((1020, 102)));
    assert_eq!(f(0, 0), Some((1000, 100)));
    assert_eq!(f(1000, 103), Some((1030, 103)));
    assert_eq!(f(1051, 0), None);
    let r = seg.read_min_one_message(100, 10, 438).unwrap().unwrap();
    assert_eq!((r.records.len(), r.first_entry_incomplete), (73, false));
    let r = seg.read_up_to(100, 10, 438).unwrap().unwrap();
    assert_eq!((r.records.len(), r.first_entry_incomplete), (10, true));
    let r = seg.read_up_to(100, 1000, 146).unwrap().unwrap();
    assert_eq!(r.records.len(), 146);
}

#[test]
fn case61_become_inactive_adds_final_entry_and_trims() {
    let (d, seg) = case50();
    seg.on_become_inactive_segment().unwrap();
    let ti = seg.time_index().unwrap().all_entries().unwrap();
    assert_eq!(
        ti.last().map(|e| (e.timestamp, e.offset)),
        Some((1050, 105))
    );
    let base = d.path().join("00000000000000000100");
    assert_eq!(
        std::fs::metadata(base.with_extension("index"))
            .unwrap()
            .len(),
        16
    );
    assert_eq!(
        std::fs::metadata(base.with_extension("timeindex"))
            .unwrap()
            .len(),
        36
    );
    seg.on_become_inactive_segment().unwrap();
    seg.close().unwrap();
    assert_eq!(
        std::fs::metadata(base.with_extension("timeindex"))
            .unwrap()
            .len(),
        36
    );
}

#[test]
fn case51_granularity_and_recovery_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 0, &config(100, 1000), clock);
    let mut a = Vec::new();
    let mut b = Vec::new();
    for i in 0..3 {
        a.extend(v2(i, 1000 + 10 * i));
        b.extend(v2(i + 3, 1000 + 10 * (i + 3)));
    }
    seg.append(2, 1020, 2, &a).unwrap();
    seg.append(5, 1050, 5, &b).unwrap();
    let oi: Vec<_> = seg
        .offset_index()
        .unwrap()
        .all_entries()
        .unwrap()
        .iter()
        .map(|e| (e.offset, e.position))
        .collect();
    assert_eq!(oi, vec![(5, 219)]);
    let ti: Vec<_> = seg
        .time_index()
        .unwrap()
        .all_entries()
        .unwrap()
        .iter()
        .map(|e| (e.timestamp, e.offset))
        .collect();
    assert_eq!(ti, vec![(1050, 5)]);
    assert_eq!(seg.offset_index().unwrap().lookup(4).unwrap().position, 0);
    let t = seg.translate_offset(4, 0).unwrap().unwrap();
    assert_eq!((t.offset, t.position, t.size), (4, 292, 73));
    assert_eq!(
        seg.recover(&mut ProducerStateManager::new(), None).unwrap(),
        0
    );
    let oi: Vec<_> = seg
        .offset_index()
        .unwrap()
        .all_entries()
        .unwrap()
        .iter()
        .map(|e| (e.offset, e.position))
        .collect();
    assert_eq!(oi, vec![(2, 146), (4, 292)]);
    let ti: Vec<_> = seg
        .time_index()
        .unwrap()
        .all_entries()
        .unwrap()
        .iter()
        .map(|e| (e.timestamp, e.offset))
        .collect();
    assert_eq!(ti, vec![(1020, 2), (1040, 4), (1050, 5)]);
    assert_eq!(
        std::fs::metadata(dir.path().join("00000000000000000000.index"))
            .unwrap()
            .len(),
        16
    );
    assert_eq!(
        std::fs::metadata(dir.path().join("00000000000000000000.timeindex"))
            .unwrap()
            .len(),
        36
    );
}

#[test]
fn case47_append_offset_overflow() {
    for (base, largest) in [
        (0i64, -2147483648i64),
        (0, 2147483648),
        (1, 0),
        (100, 10),
        (2147483648, 0),
        (-2147483648, 0),
        (2147483648, 4294967296),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (_t, clock) = mock();
        let seg = segment::LogSegment::<segment::KafkaBatchFormat>::open(
            dir.path(),
            base,
            &config(10, 1000),
            segment::SegmentOptions::existing().clock(clock),
        )
        .unwrap();
        let err = seg
            .append(largest, 1, largest, &v1(0, &["hello"]))
            .unwrap_err();
        assert!(
            matches!(err, SegmentError::OffsetOverflow { .. }),
            "{base} {largest}: {err}"
        );
        assert_eq!(seg.size(), 0);
    }
}

#[test]
fn case56_next_offset_and_case66_first_batch_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 40, &config(10, 1000), clock.clone());
    assert_eq!(seg.read_next_offset().unwrap(), 40);
    seg.append(52, -1, -1, &v1(50, &["hello", "there", "you"]))
        .unwrap();
    assert_eq!(seg.read_next_offset().unwrap(), 53);

    let seg = new_segment(dir.path(), 1, &config(10, 1000), clock);
    assert_eq!(seg.get_first_batch_timestamp().unwrap(), i64::MAX);
    let b = segment::record::BatchBuilder::new(1)
        .record(1000, None, Some(b"one"))
        .build()
        .unwrap();
    seg.append(1, 1000, 1, &b).unwrap();
    assert_eq!(seg.get_first_batch_timestamp().unwrap(), 1000);
}
