//! Acceptance case 65: `LogSegment::append_from_file` copies whole batches in chunks and stops before
//! the first batch whose last offset is not representable relative to the segment base.
use crate::common::*;
use segment::record::BatchBuilder;
use segment::{LogFile, LogFileMode, LogSegment};

fn v2_value(offset: i64, ts: i64, value_len: usize) -> Vec<u8> {
    BatchBuilder::new(offset)
        .record(ts, None, Some(&vec![b'x'; value_len]))
        .build()
        .unwrap()
}

#[test]
fn case65_append_from_file_stops_at_relative_offset_overflow() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let cfg = config(4096, 10 << 20);
    let batches = [
        v2_value(0, 10, 1024),
        v2_value(500, 20, (1 << 20) + 1),
        v2_value(2_147_483_652, 30, 1024),
    ];
    let src_path = dir.path().join("source.log");
    let src = LogFile::open(&src_path, LogFileMode::ReadWrite).unwrap();
    for b in &batches {
        src.append(b).unwrap();
    }
    let first_two = (batches[0].len() + batches[1].len()) as u64;

    let seg: LogSegment = new_segment(dir.path(), 0, &cfg, clock.clone());
    let copied = seg.append_from_file(&src, 0).unwrap();
    assert_eq!(copied, first_two);
    assert_eq!(seg.size(), copied);
    assert_eq!(seg.read_next_offset().unwrap(), 501);
    let all = seg.read(0, 4 << 20).unwrap().unwrap();
    assert_eq!(all.records, [&batches[0][..], &batches[1][..]].concat());

    let seg2: LogSegment = new_segment(dir.path(), 2_147_483_647, &cfg, clock);
    let rest = seg2.append_from_file(&src, copied).unwrap();
    assert_eq!(rest, batches[2].len() as u64);
    assert_eq!(seg2.size(), rest);
    assert_eq!(copied + rest, src.size_in_bytes());
    assert_eq!(seg2.read_next_offset().unwrap(), 2_147_483_653);
    let r = seg2.read(2_147_483_652, 1 << 20).unwrap().unwrap();
    assert_eq!(r.records, batches[2]);
    // the max timestamp follows the copied batches
    assert_eq!(seg.max_timestamp_so_far().unwrap(), 20);
    assert_eq!(seg2.max_timestamp_so_far().unwrap(), 30);
}

#[test]
fn copies_in_chunks_below_one_mib_and_skips_a_torn_tail() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let src = LogFile::open(dir.path().join("src.log"), LogFileMode::ReadWrite).unwrap();
    let mut expected = Vec::new();
    for o in 0..1500 {
        let b = v2_value(o, 1_000 + o, 1000);
        src.append(&b).unwrap();
        expected.extend(b);
    }
    // a torn tail: the first 30 bytes of another batch
    src.append(&batch(1500, 10, 5000)[..30]).unwrap();
    let seg: LogSegment = new_segment(dir.path(), 0, &config(0, 1 << 20), clock);
    let copied = seg.append_from_file(&src, 0).unwrap();
    assert_eq!(copied, expected.len() as u64);
    assert_eq!(seg.read_next_offset().unwrap(), 1500);
    // two chunks (1.6 MB), so one sparse index entry: the second chunk's last offset at
    // its start position, which is below 1 MiB
    let entries = seg.offset_index().unwrap().all_entries().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].offset, 1499);
    assert!(entries[0].position < 1 << 20);
    for o in [0, 5, 977, 1499] {
        let t = seg.translate_offset(o, 0).unwrap().unwrap();
        assert_eq!(t.offset, o);
    }
    assert_eq!(seg.read(0, 1 << 30).unwrap().unwrap().records, expected);
    assert_eq!(seg.max_timestamp_so_far().unwrap(), 1_000 + 1499);
    // nothing to copy at the torn tail
    assert_eq!(seg.append_from_file(&src, copied).unwrap(), 0);
}

#[test]
fn equal_largest_timestamps_in_a_chunk_keep_the_first_batchs_offset() {
    // Kafka's appendChunkFromFile compares with `>`: of two batches with the same largest
    // timestamp, the first one's last offset is the offset of the largest timestamp.
    let dir = tmpdir();
    let (_t, clock) = mock();
    let src = LogFile::open(dir.path().join("src.log"), LogFileMode::ReadWrite).unwrap();
    src.append(&batch(0, 5, 1_000)).unwrap();
    src.append(&batch(5, 5, 1_000)).unwrap();
    let seg: LogSegment = new_segment(dir.path(), 0, &config(1, 1 << 20), clock);
    seg.append_from_file(&src, 0).unwrap();
    assert_eq!(seg.max_timestamp_so_far().unwrap(), 1_000);
    assert_eq!(seg.shallow_offset_of_max_timestamp_so_far().unwrap(), 4);
}
