//! Acceptance cases 48, 49, 64: segment reads, reads without max position, preallocated log files.
use crate::common::*;
use segment::{KafkaBatchFormat, LogSegment};

#[test]
fn case48_basic_reads() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let cfg = config(10, 1000);
    // (a)
    let seg = new_segment(dir.path(), 40, &cfg, clock.clone());
    assert!(seg.read(40, 300).unwrap().is_none());
    // (b)
    seg.append(53, -1, -1, &v1(50, &["hello", "there", "little", "bee"]))
        .unwrap();
    let r = seg.read(41, 300).unwrap().unwrap();
    assert_eq!(offsets_in(&r.records), vec![50, 51, 52, 53]);
    // (c)
    let d2 = tempfile::tempdir().unwrap();
    let seg = new_segment(d2.path(), 40, &cfg, clock.clone());
    seg.append(51, -1, -1, &v1(50, &["hello", "there"]))
        .unwrap();
    assert!(seg.read(52, 200).unwrap().is_none());
    // (d)
    seg.append(61, -1, -1, &v1(60, &["alpha", "gamma"]))
        .unwrap();
    let r = seg.read(55, 200).unwrap().unwrap();
    assert_eq!(offsets_in(&r.records), vec![60, 61]);
}

#[test]
fn case49_read_without_max_position() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 40, &config(10, 1000), clock);
    seg.append(51, -1, -1, &v1(50, &["hello", "there"]))
        .unwrap();
    for (x, pos) in [(48, 0u64), (50, 0), (51, 39)] {
        let m = seg.read_metadata(x).unwrap().unwrap();
        assert_eq!(
            (
                m.message_offset,
                m.segment_base_offset,
                m.relative_position_in_segment
            ),
            (x, 40, pos)
        );
    }
    assert!(seg.read_metadata(52).unwrap().is_none());
    assert!(seg.read_metadata(53).unwrap().is_none());
}

#[test]
fn case64_preallocated_log_file() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let cfg = config(10, 1000);
    let init = 512 * 1024 * 1024;
    let seg = LogSegment::<KafkaBatchFormat>::open(
        dir.path(),
        40,
        &cfg,
        segment::SegmentOptions::existing()
            .mode(segment::LogFileMode::Preallocate(init))
            .clock(clock.clone()),
    )
    .unwrap();
    seg.append(51, -1, -1, &v1(50, &["hello", "there"]))
        .unwrap();
    seg.append(61, -1, -1, &v1(60, &["alpha", "gamma"]))
        .unwrap();
    let path = dir.path().join("00000000000000000040.log");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), init);
    assert_eq!(seg.size(), 156);
    assert_eq!(
        offsets_in(&seg.read(55, 200).unwrap().unwrap().records),
        vec![60, 61]
    );
    seg.close().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 156);
    let seg = LogSegment::<KafkaBatchFormat>::open(
        dir.path(),
        40,
        &cfg,
        segment::SegmentOptions::existing().clock(clock),
    )
    .unwrap();
    assert_eq!(seg.size(), 156);
    assert_eq!(
        offsets_in(&seg.read(55, 200).unwrap().unwrap().records),
        vec![60, 61]
    );
    seg.append(62, -1, -1, &v1(62, &["x"])).unwrap();
    assert_eq!(seg.size(), 156 + 35);
}

/// Issue 21, branch `reads`: `LogSegment::read_region`, Kafka's `read` with an optional
/// `maxPosition` as a file region: the bytes `read_up_to` / `read_min_one_message` read,
/// and an empty region where the max position is absent.
#[test]
fn read_region_is_the_read_as_a_file_region() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 40, &config(10, 1000), clock);
    seg.append(51, -1, -1, &v1(50, &["hello", "there"]))
        .unwrap();
    seg.append(61, -1, -1, &v1(60, &["alpha", "gamma"]))
        .unwrap();
    let size = seg.size();
    assert!(seg
        .read_region(70, 100, Some(size), true)
        .unwrap()
        .is_none());
    for (o, max, min_one) in [(50, 1000, false), (55, 10, true), (50, 10, false)] {
        let r = seg
            .read_region(o, max, Some(size), min_one)
            .unwrap()
            .unwrap();
        let want = if min_one {
            seg.read_min_one_message(o, max, size).unwrap().unwrap()
        } else {
            seg.read_up_to(o, max, size).unwrap().unwrap()
        };
        assert_eq!(r.region.to_vec().unwrap(), want.records);
        assert_eq!(r.fetch_offset_metadata, want.fetch_offset_metadata);
        assert_eq!(r.first_entry_incomplete, want.first_entry_incomplete);
        assert_eq!(r.aborted_transactions, None);
    }
    let r = seg.read_region(55, 1000, None, true).unwrap().unwrap();
    assert!(r.region.is_empty());
    assert_eq!(
        r.region.position(),
        r.fetch_offset_metadata.relative_position_in_segment
    );
}
