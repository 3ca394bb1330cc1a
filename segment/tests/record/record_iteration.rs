//! Acceptance case 46 (file iteration stop/error rules, docs/kafka-behaviour.md#batch-iteration) and the `FileRecords` searches of
//! docs/kafka-behaviour.md#log-file, over synthetic files mixing v2 batches and legacy messages.

use segment::record::{
    batches_from, fixtures, largest_timestamp_after, peek_batch, search_for_offset_with_size,
    search_for_timestamp, BatchBuilder, BatchIter, CompressionType, FileBatch, OffsetPositionSize,
    Peek, RecordError, StopReason, TimestampAndOffset,
};

fn collect(data: &[u8], start: u64) -> (Vec<(u64, i64)>, Option<RecordError>, StopReason) {
    let mut it = BatchIter::new(data, start);
    let mut batches = Vec::new();
    let mut error = None;
    for b in it.by_ref() {
        match b {
            Ok(b) => batches.push((b.position(), b.last_offset())),
            Err(e) => error = Some(e),
        }
    }
    (batches, error, it.stop_reason().cloned().unwrap())
}

fn case_42() -> Vec<u8> {
    fixtures::v2(0, 1000)
}

#[test]
fn case_46_seventeen_trailing_zero_bytes_are_ignored() {
    let mut file = case_42();
    file.extend_from_slice(&[0; 17]);
    let (batches, error, stop) = collect(&file, 0);
    assert_eq!(batches, vec![(0, 0)]);
    assert!(error.is_none());
    assert_eq!(
        stop,
        StopReason::TornTail {
            position: 73,
            remaining_bytes: 17
        }
    );
}

#[test]
fn case_46_partial_second_batch_is_ignored() {
    let mut file = case_42();
    file.extend_from_slice(&fixtures::v2(1, 2000)[..40]);
    let (batches, error, stop) = collect(&file, 0);
    assert_eq!(batches, vec![(0, 0)]);
    assert!(error.is_none());
    assert_eq!(
        stop,
        StopReason::TornTail {
            position: 73,
            remaining_bytes: 40
        }
    );
}

#[test]
fn case_46_size_13_is_corrupt() {
    for tail_len in [18usize, 19, 40, 100] {
        let mut tail = vec![0u8; tail_len];
        tail[8..12].copy_from_slice(&13i32.to_be_bytes());
        let mut file = case_42();
        file.extend_from_slice(&tail);
        let (batches, error, stop) = collect(&file, 0);
        assert_eq!(batches, vec![(0, 0)]);
        match error {
            Some(RecordError::CorruptRecord { position: 73, .. }) => {}
            other => panic!("tail {tail_len}: expected CorruptRecord at 73, got {other:?}"),
        }
        assert!(matches!(stop, StopReason::Corrupt { position: 73, .. }));
    }
}

#[test]
fn case_46_eighteen_zero_bytes_are_corrupt() {
    let mut file = case_42();
    file.extend_from_slice(&[0; 18]);
    let (batches, error, stop) = collect(&file, 0);
    assert_eq!(batches, vec![(0, 0)]);
    assert!(matches!(
        error,
        Some(RecordError::CorruptRecord { position: 73, .. })
    ));
    assert!(matches!(stop, StopReason::Corrupt { position: 73, .. }));
}

#[test]
fn exact_end_and_empty_and_out_of_range_start() {
    let file = case_42();
    let (batches, error, stop) = collect(&file, 0);
    assert_eq!(batches, vec![(0, 0)]);
    assert!(error.is_none());
    assert_eq!(stop, StopReason::End);
    assert_eq!(collect(&[], 0).2, StopReason::End);
    assert_eq!(collect(&file, 73).2, StopReason::End);
    assert_eq!(collect(&file, 1_000).2, StopReason::End);
    assert!(collect(&file, 1_000).0.is_empty());
}

#[test]
fn peek_rules_boundaries() {
    let file = case_42();
    assert_eq!(peek_batch(&file, 0).unwrap(), Peek::Batch(73));
    assert_eq!(peek_batch(&file[..17], 0).unwrap(), Peek::TornTail);
    assert_eq!(peek_batch(&file[..18], 0).unwrap(), Peek::TornTail);
    assert_eq!(peek_batch(&file[..72], 0).unwrap(), Peek::TornTail);
    assert_eq!(peek_batch(&[], 0).unwrap(), Peek::End);
    let mut size14 = vec![0u8; 26];
    size14[8..12].copy_from_slice(&14i32.to_be_bytes());
    assert_eq!(peek_batch(&size14, 0).unwrap(), Peek::Batch(26));
    // Negative sizes are corrupt too.
    let mut neg = vec![0u8; 18];
    neg[8..12].copy_from_slice(&(-1i32).to_be_bytes());
    assert!(matches!(
        peek_batch(&neg, 5),
        Err(RecordError::CorruptRecord { position: 5, .. })
    ));
}

#[test]
fn undersized_batches_that_pass_the_size_rule_are_corrupt_views() {
    // Size 14 (the minimum the iterator accepts), magic 2: too small for a v2 header.
    let mut file = vec![0u8; 26];
    file[8..12].copy_from_slice(&14i32.to_be_bytes());
    file[16] = 2;
    let (batches, error, _) = collect(&file, 0);
    assert!(batches.is_empty());
    assert!(matches!(
        error,
        Some(RecordError::CorruptRecord { position: 0, .. })
    ));
    // Same with magic 1 (needs 22).
    file[16] = 1;
    assert!(matches!(
        collect(&file, 0).1,
        Some(RecordError::CorruptRecord { .. })
    ));
    // Magic 0 with size 14 is a structurally valid (if CRC-broken) legacy message.
    file[16] = 0;
    let (batches, error, stop) = collect(&file, 0);
    assert_eq!(batches.len(), 1);
    assert!(error.is_none());
    assert_eq!(stop, StopReason::End);
    assert!(!FileBatch::at(&file, 0).unwrap().is_valid());
    // A negative magic takes the legacy path (as in Java) and is rejected.
    file[16] = 0xff;
    assert!(matches!(
        collect(&file, 0).1,
        Some(RecordError::CorruptRecord { .. })
    ));
}

#[test]
fn magic_above_two_is_viewed_as_v2() {
    let mut file = case_42();
    file[16] = 3;
    let (batches, error, stop) = collect(&file, 0);
    assert_eq!(batches.len(), 1);
    assert!(error.is_none());
    assert_eq!(stop, StopReason::End);
    let b = FileBatch::at(&file, 0).unwrap();
    assert_eq!(b.magic(), 3);
    assert!(b.as_v2().is_some());
    // The magic byte (16) is outside the CRC range [21, end): only a real future format
    // with another layout would fail its CRC here.
    assert!(b.is_valid());
    assert_eq!(b.last_offset(), 0);
}

/// A file with v1 messages (offsets 0..=2, timestamps 0, 10, 20), v2 batches with several records, a gzip
/// v2 batch, and a control marker.
fn mixed_file() -> (Vec<u8>, Vec<u64>) {
    let mut file = Vec::new();
    let mut positions = Vec::new();
    let mut push = |file: &mut Vec<u8>, bytes: Vec<u8>| {
        positions.push(file.len() as u64);
        file.extend_from_slice(&bytes);
    };
    // 0..=2: three legacy messages (one batch each), timestamps 0, 10, 20.
    for o in 0..3 {
        push(&mut file, fixtures::v1(o, &["hello"]));
    }
    // 3..=5: one v2 batch, timestamps 100, 300, 200, leader epoch 4.
    push(
        &mut file,
        BatchBuilder::new(3)
            .partition_leader_epoch(4)
            .record(100, None, Some(b"a"))
            .record(300, None, Some(b"b"))
            .record(200, None, Some(b"c"))
            .build()
            .unwrap(),
    );
    // 6..=7: a gzip-compressed batch (timestamps 300, 500), leader epoch -1.
    push(
        &mut file,
        compressed_batch(6, &[300, 500], CompressionType::Gzip),
    );
    // 8: an abort marker, timestamp 500.
    push(
        &mut file,
        segment::record::control_batch(8, 1, 0, segment::record::ControlRecordType::Abort, 0, 500)
            .unwrap(),
    );
    (file, positions)
}

/// Builds an uncompressed batch, then rewrites it as a compressed one (recomputing
/// length and CRC), to exercise decompression in the searches.
fn compressed_batch(base: i64, timestamps: &[i64], codec: CompressionType) -> Vec<u8> {
    let mut b = BatchBuilder::new(base);
    for (i, ts) in timestamps.iter().enumerate() {
        b = b.record(*ts, Some(format!("k{i}").as_bytes()), Some(b"v"));
    }
    let plain = b.build().unwrap();
    recompress(&plain, codec)
}

fn recompress(plain: &[u8], codec: CompressionType) -> Vec<u8> {
    let body = segment::record::compress(codec, &plain[61..]).unwrap();
    crate::common::batch_with_stream(plain, &body, codec.id())
}

#[test]
fn mixed_file_iterates_every_batch() {
    let (file, positions) = mixed_file();
    let batches: Vec<FileBatch<'_>> = batches_from(&file, 0).map(Result::unwrap).collect();
    assert_eq!(
        batches.iter().map(FileBatch::position).collect::<Vec<_>>(),
        positions
    );
    let lasts: Vec<i64> = batches.iter().map(FileBatch::last_offset).collect();
    assert_eq!(lasts, vec![0, 1, 2, 5, 7, 8]);
    for b in &batches {
        b.ensure_valid().unwrap();
    }
    // Starting in the middle (at a batch boundary).
    let from = batches_from(&file, positions[3]).count();
    assert_eq!(from, 3);
}

#[test]
fn search_for_offset_with_size_finds_first_batch_reaching_target() {
    let (file, positions) = mixed_file();
    let find = |target, start| search_for_offset_with_size(&file, target, start).unwrap();
    assert_eq!(
        find(0, 0),
        Some(OffsetPositionSize {
            offset: 0,
            position: 0,
            size: 39
        })
    );
    // Offset 4 lies inside the v2 batch 3..=5: the batch's last offset is returned.
    let hit = find(4, 0).unwrap();
    assert_eq!((hit.offset, hit.position), (5, positions[3]));
    assert_eq!(hit.size as u64, positions[4] - positions[3]);
    assert_eq!(find(8, 0).unwrap().position, positions[5]);
    assert_eq!(find(9, 0), None);
    // A start position past the batch holding the target finds the next one.
    assert_eq!(find(0, positions[3]).unwrap().offset, 5);
}

#[test]
fn search_for_timestamp_is_record_level() {
    let (file, _) = mixed_file();
    let find = |ts, start_offset| search_for_timestamp(&file, ts, 0, start_offset).unwrap();
    // fixtures::v1(o, ..) stamps o*10: offsets 0, 1, 2 have timestamps 0, 10, 20.
    assert_eq!(
        find(5, 0),
        Some(TimestampAndOffset {
            timestamp: 10,
            offset: 1,
            leader_epoch: None
        })
    );
    // 250: first record with ts >= 250 is offset 4 (ts 300), leader epoch 4.
    assert_eq!(
        find(250, 0),
        Some(TimestampAndOffset {
            timestamp: 300,
            offset: 4,
            leader_epoch: Some(4)
        })
    );
    // With starting offset 5: offset 5 has ts 200 < 250, so the gzip batch's first record.
    assert_eq!(
        find(250, 5),
        Some(TimestampAndOffset {
            timestamp: 300,
            offset: 6,
            leader_epoch: None
        })
    );
    assert_eq!(find(400, 0).unwrap().offset, 7);
    // The abort marker (ts 500, epoch 0) only qualifies once offset 7 is excluded.
    assert_eq!(
        find(500, 8),
        Some(TimestampAndOffset {
            timestamp: 500,
            offset: 8,
            leader_epoch: Some(0)
        })
    );
    assert_eq!(find(501, 0), None);
    assert_eq!(find(0, 100), None);
}

#[test]
fn largest_timestamp_after_uses_first_batch_reaching_max() {
    let (file, positions) = mixed_file();
    // Max 500 first reached by the gzip batch (last offset 7), then equalled by the marker.
    assert_eq!(
        largest_timestamp_after(&file, 0).unwrap(),
        TimestampAndOffset {
            timestamp: 500,
            offset: 7,
            leader_epoch: None
        }
    );
    assert_eq!(
        largest_timestamp_after(&file, positions[5]).unwrap(),
        TimestampAndOffset {
            timestamp: 500,
            offset: 8,
            leader_epoch: Some(0)
        }
    );
    assert_eq!(
        largest_timestamp_after(&file, file.len() as u64).unwrap(),
        TimestampAndOffset {
            timestamp: -1,
            offset: -1,
            leader_epoch: None
        }
    );
}

#[test]
fn searches_propagate_corruption() {
    let (mut file, _) = mixed_file();
    file.extend_from_slice(&[0; 20]);
    assert!(matches!(
        search_for_offset_with_size(&file, 100, 0),
        Err(RecordError::CorruptRecord { .. })
    ));
    assert!(matches!(
        search_for_timestamp(&file, 10_000, 0, 0),
        Err(RecordError::CorruptRecord { .. })
    ));
    assert!(matches!(
        largest_timestamp_after(&file, 0),
        Err(RecordError::CorruptRecord { .. })
    ));
    // A hit before the corrupt tail is still found.
    assert_eq!(
        search_for_offset_with_size(&file, 8, 0)
            .unwrap()
            .unwrap()
            .offset,
        8
    );
}

#[test]
fn read_log_file_reports_the_path() {
    let err = segment::record::read_log_file("/nonexistent/00000000000000000000.log").unwrap_err();
    match err {
        RecordError::Io { path, .. } => assert!(path.ends_with("00000000000000000000.log")),
        other => panic!("{other:?}"),
    }
}
