//! Acceptance cases 53, 54 and the UnifiedLogTest variant of 61: truncation.
use crate::common::*;
use segment::{KafkaBatchFormat, LogSegment, RollParams};

#[test]
fn case53a_truncate_full_resets_roll_state() {
    let dir = tempfile::tempdir().unwrap();
    let (t, clock) = mock();
    let seg = new_segment(dir.path(), 40, &config(10, 1000), clock.clone());
    seg.append(41, -1, -1, &v1(40, &["hello", "there"]))
        .unwrap();
    t.sleep(500);
    assert_eq!(
        seg.time_waited_for_roll(clock.milliseconds(), -1).unwrap(),
        500
    );
    seg.truncate_to(0).unwrap();
    assert_eq!(
        seg.time_waited_for_roll(clock.milliseconds(), -1).unwrap(),
        0
    );
    assert!(!seg.offset_index().unwrap().is_full());
    assert!(!seg.time_index().unwrap().is_full());
    assert!(seg.read(0, 1024).unwrap().is_none());
    seg.append(41, -1, -1, &v1(40, &["hello", "there"]))
        .unwrap();
}

#[test]
fn case53b_truncate_empty_segment() {
    let dir = tempfile::tempdir().unwrap();
    let (t, clock) = mock();
    let cfg = config(10, 1000);
    let seg = new_segment(dir.path(), 0, &cfg, clock.clone());
    seg.offset_index().unwrap();
    seg.time_index().unwrap();
    seg.close().unwrap();
    let seg = LogSegment::<KafkaBatchFormat>::open(
        dir.path(),
        0,
        &cfg,
        segment::SegmentOptions::existing().clock(clock.clone()),
    )
    .unwrap();
    assert_eq!(seg.offset_index().unwrap().size_in_bytes(), 0);
    assert_eq!(seg.time_index().unwrap().size_in_bytes(), 0);
    t.sleep(500);
    seg.truncate_to(57).unwrap();
    assert_eq!(
        seg.time_waited_for_roll(clock.milliseconds(), -1).unwrap(),
        0
    );
    assert!(!seg.offset_index().unwrap().is_full());
    assert!(!seg.time_index().unwrap().is_full());
    let p = |now, max_offset| RollParams {
        max_segment_ms: 300_000,
        max_segment_bytes: i32::MAX as u64,
        max_timestamp_in_messages: -1,
        max_offset_in_messages: max_offset,
        messages_size: 1024,
        now,
    };
    assert!(!seg.should_roll(&p(clock.milliseconds(), 100)).unwrap());
    t.sleep(300_001);
    assert_eq!(
        seg.time_waited_for_roll(clock.milliseconds(), -1).unwrap(),
        300_001
    );
    assert!(!seg.should_roll(&p(clock.milliseconds(), 100)).unwrap());
    assert!(seg
        .should_roll(&p(clock.milliseconds(), 2147483647 + 200))
        .unwrap());
}

#[test]
fn case54_largest_timestamp_recomputed_after_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 40, &config(77, 1000), clock);
    for o in 40..70 {
        seg.append(o, o, o, &v1(o, &["hello"])).unwrap();
    }
    assert_eq!(seg.read_next_offset().unwrap(), 70);
    assert_eq!(seg.time_index().unwrap().entries(), 14);
    seg.truncate_to(41).unwrap();
    assert_eq!(seg.time_index().unwrap().entries(), 0);
    assert_eq!(seg.largest_timestamp().unwrap(), 400);
    assert_eq!(seg.read_next_offset().unwrap(), 41);
}

#[test]
fn case61_unified_log_variant_index_resizing_at_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let rec = v2(0, 1000).len() as u64;
    let cfg = config(rec - 1, 1000);
    let seg = new_segment(dir.path(), 0, &cfg, clock);
    for i in 0..10 {
        seg.append(i, 1000 + i, i, &v2(i, 1000 + i)).unwrap();
    }
    seg.on_become_inactive_segment().unwrap();
    assert_eq!(seg.offset_index().unwrap().entries(), 9);
    assert_eq!(seg.offset_index().unwrap().max_entries(), 9);
    assert_eq!(seg.time_index().unwrap().entries(), 9);
    assert_eq!(seg.time_index().unwrap().max_entries(), 9);
    seg.truncate_to(0).unwrap();
    assert_eq!(seg.offset_index().unwrap().max_entries(), 1000 / 8);
    assert_eq!(seg.time_index().unwrap().max_entries(), 1000 / 12);
}

/// Our close appends the segment's largest timestamp to the time index, which Kafka 4.4's
/// close does not (docs/kafka-behaviour.md#close-no-time-entry; Kafka 3.x's did, and
/// swallowed its failure). When the index's rules refuse that entry, the close leaves it
/// out and closes everything else: here a truncation recomputes the largest timestamp, as
/// Kafka's `loadLargestTimestamp` does, from the batches after the position of the last
/// time-index entry's offset, and finds it at an offset below that entry's.
#[test]
fn close_leaves_out_a_final_time_entry_the_index_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let cfg = config(1, 1000);
    let seg = new_segment(dir.path(), 13, &cfg, clock.clone());
    // The first append makes no index entry.
    seg.append(13, 100, 13, &batch(13, 1, 100)).unwrap();
    // The second makes the entries (16, its position) and (200, 16): its caller gives its
    // largest timestamp as 200, though its first batch's is 1,000.
    let mut two = batch(14, 1, 1000);
    two.extend(batch(15, 2, 200));
    seg.append(16, 200, 16, &two).unwrap();
    // Nothing is cut; the largest timestamp is read again: (1000, 14).
    seg.truncate_to(17).unwrap();
    assert_eq!(seg.max_timestamp_so_far().unwrap(), 1000);
    seg.close().unwrap();
    let seg = reopen_segment(dir.path(), 13, &cfg, clock);
    let ti = seg.time_index().unwrap();
    assert_eq!(ti.entries(), 1, "the refused entry is left out");
    let last = ti.last_entry().unwrap();
    assert_eq!((last.timestamp, last.offset), (200, 16));
    assert_eq!(seg.read_next_offset().unwrap(), 17, "every batch is kept");
}
