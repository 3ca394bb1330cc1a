//! Acceptance cases 57 and 60: recovery rebuilds corrupt indexes and the leader-epoch cache.
use std::io::{Seek, SeekFrom, Write};

use crate::common::*;
use segment::{LeaderEpochCache, ProducerStateManager};

fn corrupt_and_recover(ext: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    // 100 indexed appends need more than 1000 bytes of time index: use 4 KiB.
    let seg = new_segment(dir.path(), 0, &config(10, 4096), clock);
    for i in 0..100i64 {
        let s = i.to_string();
        let bytes = segment::record::LegacyMessage::v1(i, i * 10, s.as_bytes())
            .to_vec()
            .unwrap();
        seg.append(i, i * 10, i, &bytes).unwrap();
    }
    seg.flush().unwrap();
    let path = dir.path().join(format!("00000000000000000000.{ext}"));
    let len = std::fs::metadata(&path).unwrap().len();
    let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.seek(SeekFrom::Start(5)).unwrap();
    let mut x: u32 = 0x1234_5678;
    let junk: Vec<u8> = (5..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    f.write_all(&junk).unwrap();
    drop(f);
    assert_eq!(
        seg.recover(&mut ProducerStateManager::new(), None).unwrap(),
        0
    );
    let size = seg.size();
    for i in 0..100i64 {
        let r = seg.read_min_one_message(i, 1, size).unwrap().unwrap();
        assert_eq!(offsets_in(&r.records)[0], i);
        assert_eq!(
            seg.find_offset_by_timestamp(i * 10, 0)
                .unwrap()
                .unwrap()
                .offset,
            i
        );
        if i < 99 {
            assert_eq!(
                seg.find_offset_by_timestamp(i * 10 + 1, 0)
                    .unwrap()
                    .unwrap()
                    .offset,
                i + 1
            );
        }
    }
}

#[test]
fn case57_recovery_fixes_corrupt_offset_index() {
    corrupt_and_recover("index");
}

#[test]
fn case57_recovery_fixes_corrupt_time_index() {
    corrupt_and_recover("timeindex");
}

#[test]
fn case60_recovery_rebuilds_epoch_cache() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 0, &config(10, 1000), clock);
    for (o, e) in [(104i64, 0), (106, 1), (108, 1), (110, 2)] {
        let b = segment::record::BatchBuilder::new(o)
            .partition_leader_epoch(e)
            .record(o, None, Some(b"a"))
            .record(o, None, Some(b"b"))
            .build()
            .unwrap();
        seg.append(o + 1, o, o + 1, &b).unwrap();
    }
    let mut cache = LeaderEpochCache::new();
    seg.recover(&mut ProducerStateManager::new(), Some(&mut cache))
        .unwrap();
    assert_eq!(cache.entries(), &[(0, 104), (1, 106), (2, 110)]);
}

/// `docs/kafka-behaviour.md#recovery-full-index`: appends of four batches per call add one
/// index entry per call, so recovery, which indexes batch by batch, needs four times as
/// many entries as the indexes hold. It keeps them sparse instead of failing (found by
/// `cargo xtask crash --long`, workload 49: "attempt to append to a full time index").
#[test]
fn recovery_keeps_a_full_index_sparse_instead_of_failing() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    // 48 bytes: 6 offset index entries, 4 time index entries (full at 3, Kafka's
    // `TimeIndex.isFull` keeps the last slot for the roll's entry).
    let seg = new_segment(dir.path(), 0, &config(0, 48), clock);
    let mut o = 0i64;
    for _ in 0..3 {
        let mut bytes = Vec::new();
        for _ in 0..4 {
            bytes.extend(v2(o, 1000 + o));
            o += 1;
        }
        seg.append(o - 1, 1000 + o - 1, o - 1, &bytes).unwrap();
    }
    assert!(!seg.offset_index().unwrap().is_full());
    seg.flush().unwrap();
    let size = seg.size();
    assert_eq!(
        seg.recover(&mut ProducerStateManager::new(), None).unwrap(),
        0,
        "nothing to truncate"
    );
    assert_eq!(seg.size(), size);
    assert!(seg.offset_index().unwrap().is_full());
    for target in 0..o {
        let fetch = seg.read_min_one_message(target, 1, size).unwrap().unwrap();
        assert_eq!(offsets_in(&fetch.records), vec![target], "offset {target}");
        let found = seg
            .find_offset_by_timestamp(1000 + target, 0)
            .unwrap()
            .unwrap();
        assert_eq!(found.offset, target);
    }
    assert_eq!(seg.read_next_offset().unwrap(), o);
}
