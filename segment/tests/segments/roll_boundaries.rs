//! Issue 11, finding 12 (mutation check): the roll rules of `LogSegment::should_roll`
//! (Kafka's `shouldRoll`) at their boundaries, through `Log::append`: `segment.bytes`
//! exactly filled versus one byte over, `segment.ms` at equality versus one millisecond
//! past (with the jitter, and with the clock fallback for batches without a timestamp),
//! a full offset index and a full time index, and `Log::roll` onto an empty segment.
use std::sync::Arc;

use crate::common::*;
use segment::{Clock, LogConfig, LogSegment, MockTime, RollParams};

const T0: i64 = 1_000_000;

fn at_t0() -> (MockTime, Clock) {
    let t = MockTime::new(T0);
    (t.clone(), Arc::new(t))
}

/// One 1-record batch of a fixed size.
fn one(o: i64, ts: i64) -> Vec<u8> {
    batch(o, 1, ts)
}

#[test]
fn segment_bytes_exactly_filled_does_not_roll_one_byte_over_does() {
    let len = one(0, T0).len() as u64;
    assert_eq!(len, one(1, T0).len() as u64);
    // Exactly two batches fit: the third rolls.
    let dir = tmpdir();
    let (_t, clock) = at_t0();
    let cfg = LogConfig {
        segment_bytes: 2 * len,
        ..config(4096, 1 << 20)
    };
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(log.append(&one(0, T0)).unwrap().segment_base_offset, 0);
    assert_eq!(log.append(&one(1, T0)).unwrap().segment_base_offset, 0);
    assert_eq!(log.segments().active_segment().unwrap().size(), 2 * len);
    assert_eq!(log.append(&one(2, T0)).unwrap().segment_base_offset, 2);
    assert_eq!(log.segments().base_offsets(), vec![0, 2]);
    drop(log);

    // One byte less: the second batch does not fit any more.
    let dir = tmpdir();
    let (_t, clock) = at_t0();
    let cfg = LogConfig {
        segment_bytes: 2 * len - 1,
        ..config(4096, 1 << 20)
    };
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(log.append(&one(0, T0)).unwrap().segment_base_offset, 0);
    assert_eq!(log.append(&one(1, T0)).unwrap().segment_base_offset, 1);
    assert_eq!(log.append(&one(2, T0)).unwrap().segment_base_offset, 2);
    assert_eq!(log.segments().base_offsets(), vec![0, 1, 2]);
    assert_eq!(read_all(&log, 0), vec![0, 1, 2]);
}

#[test]
fn segment_ms_at_equality_does_not_roll_one_ms_past_does() {
    let dir = tmpdir();
    let (_t, clock) = at_t0();
    let cfg = LogConfig {
        segment_ms: 1000,
        ..config(4096, 1 << 20)
    };
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(log.append(&one(0, T0)).unwrap().segment_base_offset, 0);
    // Waited exactly segment.ms (by the batch timestamps): no roll.
    assert_eq!(
        log.append(&one(1, T0 + 1000)).unwrap().segment_base_offset,
        0
    );
    // One millisecond more: roll, although the clock never moved.
    assert_eq!(
        log.append(&one(2, T0 + 1001)).unwrap().segment_base_offset,
        2
    );
    // The new segment measures from its own first batch.
    assert_eq!(
        log.append(&one(3, T0 + 2001)).unwrap().segment_base_offset,
        2
    );
    assert_eq!(
        log.append(&one(4, T0 + 2002)).unwrap().segment_base_offset,
        4
    );
    assert_eq!(log.segments().base_offsets(), vec![0, 2, 4]);
}

#[test]
fn segment_ms_without_timestamps_uses_the_clock_since_creation() {
    let dir = tmpdir();
    let (t, clock) = at_t0();
    let cfg = LogConfig {
        segment_ms: 1000,
        ..config(4096, 1 << 20)
    };
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(log.append(&one(0, -1)).unwrap().segment_base_offset, 0);
    t.set(T0 + 1000);
    assert_eq!(log.append(&one(1, -1)).unwrap().segment_base_offset, 0);
    t.set(T0 + 1001);
    assert_eq!(log.append(&one(2, -1)).unwrap().segment_base_offset, 2);
    assert_eq!(log.segments().base_offsets(), vec![0, 2]);
}

#[test]
fn an_empty_segment_never_rolls_by_time() {
    // segment.ms passed long ago by the clock and by the batch timestamp, but the active
    // segment is empty: the batch goes into it (Kafka rolls by time only a non-empty
    // segment), even when it starts past the segment's base offset.
    let dir = tmpdir();
    let (t, clock) = at_t0();
    let cfg = LogConfig {
        segment_ms: 1000,
        ..config(4096, 1 << 20)
    };
    let log = open_log(dir.path(), cfg, clock);
    t.set(T0 + 1_000_000);
    let info = log.append(&one(100, T0 + 2_000_000)).unwrap();
    assert_eq!(info.segment_base_offset, 0);
    assert_eq!(log.segments().base_offsets(), vec![0]);
}

#[test]
fn segment_jitter_shortens_segment_ms_exactly() {
    let dir = tmpdir();
    let (_t, clock) = at_t0();
    let cfg = config(4096, 1 << 20);
    let mut seg: LogSegment = LogSegment::create(dir.path(), 0, &cfg, clock).unwrap();
    assert_eq!(seg.roll_jitter_ms(), 0);
    seg.set_roll_jitter_ms(300);
    assert_eq!(seg.roll_jitter_ms(), 300);
    let b = one(0, T0);
    seg.append(0, T0, 0, &b).unwrap();
    let params = |ts: i64| RollParams {
        max_segment_ms: 1000,
        max_segment_bytes: 1 << 20,
        max_timestamp_in_messages: ts,
        max_offset_in_messages: 1,
        messages_size: b.len() as u64,
        now: T0,
    };
    assert!(!seg.should_roll(&params(T0 + 700)).unwrap());
    assert!(seg.should_roll(&params(T0 + 701)).unwrap());
    assert_eq!(seg.time_waited_for_roll(T0, T0 + 701).unwrap(), 701);
}

#[test]
fn random_jitter_is_below_the_configured_maximum() {
    let dir = tmpdir();
    let (_t, clock) = at_t0();
    let cfg = LogConfig {
        segment_jitter_ms: 50,
        ..config(4096, 1 << 20)
    };
    for base in 0..20 {
        let seg: LogSegment =
            LogSegment::create(dir.path(), base * 10, &cfg, clock.clone()).unwrap();
        let j = seg.roll_jitter_ms();
        assert!((0..50).contains(&j), "jitter {j}");
    }
}

/// Appends 1-record batches (timestamps from `ts`) until the log rolls; asserts that no
/// append rolled before the given index of the active segment was full, and returns
/// the number of batches that fit in the first segment and whether its offset index and
/// its time index were full before the append that rolled.
fn append_until_roll(log: &segment::Log, ts: impl Fn(i64) -> i64) -> (i64, bool, bool) {
    for o in 0..100 {
        let active = log.segments().active_segment().unwrap();
        let offset_full = active.offset_index().unwrap().is_full();
        let time_full = active.time_index().unwrap().is_full();
        let full = offset_full || time_full;
        let info = log.append(&one(o, ts(o))).unwrap();
        assert_eq!(
            info.segment_base_offset != 0,
            full,
            "batch {o} rolled = {} but an index full = {full}",
            info.segment_base_offset != 0
        );
        if full {
            assert_eq!(info.segment_base_offset, o);
            return (o, offset_full, time_full);
        }
    }
    panic!("never rolled");
}

#[test]
fn a_full_offset_index_rolls() {
    let dir = tmpdir();
    let (_t, clock) = at_t0();
    // index.interval.bytes 1: an offset index entry per batch; one timestamp: a single
    // time index entry, so only the offset index (4 slots in 36 bytes) fills (the time
    // index, 3 slots, is full one entry early, as Kafka's `TimeIndex.isFull`).
    let log = open_log(dir.path(), config(1, 36), clock);
    let (n, offset_full, time_full) = append_until_roll(&log, |_| T0);
    assert!(
        offset_full && !time_full,
        "n={n} offset_full={offset_full} time_full={time_full}"
    );
    assert_eq!(log.segments().base_offsets(), vec![0, n]);
    assert_eq!(read_all(&log, 0), (0..=n).collect::<Vec<_>>());
}

#[test]
fn a_full_time_index_rolls() {
    let dir = tmpdir();
    let (_t, clock) = at_t0();
    // 36 bytes: 4 offset slots but only 3 time slots (full at 2 entries); rising
    // timestamps fill the time index first.
    let log = open_log(dir.path(), config(1, 36), clock);
    let (n, offset_full, time_full) = append_until_roll(&log, |o| T0 + o);
    assert!(time_full && !offset_full);
    assert_eq!(log.segments().base_offsets(), vec![0, n]);
    assert_eq!(read_all(&log, 0), (0..=n).collect::<Vec<_>>());
}

#[test]
fn roll_from_an_empty_segment_to_a_higher_base_makes_a_new_segment() {
    let dir = tmpdir();
    let (_t, clock) = at_t0();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    let seg = log.roll(Some(100)).unwrap();
    assert_eq!(seg.base_offset(), 100);
    assert_eq!(log.segments().base_offsets(), vec![0, 100]);
    // Rolling onto the empty active segment's own base reuses it.
    let again = log.roll(Some(100)).unwrap();
    assert!(Arc::ptr_eq(&seg, &again));
    assert_eq!(log.segments().base_offsets(), vec![0, 100]);
    log.append(&one(100, T0)).unwrap();
    // A non-empty active segment with that base: rolling at the log end makes a new one.
    assert_eq!(log.roll(None).unwrap().base_offset(), 101);
    assert_eq!(log.segments().base_offsets(), vec![0, 100, 101]);
}

#[test]
fn roll_below_the_active_segments_base_is_refused() {
    // An explicit roll may leave the active segment's base above the log end (as Kafka's
    // `roll(Some(expectedNextOffset))`); a later roll between the two must not create a
    // segment below the active one.
    let dir = tmpdir();
    let (_t, clock) = at_t0();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    log.roll(Some(100)).unwrap();
    assert_eq!(log.log_end_offset(), 0);
    assert!(matches!(
        log.roll(Some(50)),
        Err(segment::SegmentError::IllegalState { .. })
    ));
    assert_eq!(log.segments().base_offsets(), vec![0, 100]);
    assert_eq!(log.segments().active_segment().unwrap().base_offset(), 100);
}

/// After a reopen the segment's `segment.ms` clock is its first batch's timestamp again
/// (Kafka's `loadFirstBatchTimestamp`, read lazily from the `.log`), not the time of the
/// reopen.
#[test]
fn segment_ms_after_reopen_counts_from_the_first_batch() {
    let dir = tmpdir();
    let (t, clock) = at_t0();
    let cfg = config(4096, 1 << 20);
    let seg: LogSegment = LogSegment::create(dir.path(), 0, &cfg, clock.clone()).unwrap();
    seg.append(0, T0 - 300, 0, &one(0, T0 - 300)).unwrap();
    seg.append(1, T0 - 200, 1, &one(1, T0 - 200)).unwrap();
    seg.flush().unwrap();
    seg.close().unwrap();
    t.sleep(10_000);
    let seg = reopen_segment(dir.path(), 0, &cfg, clock);
    assert_eq!(seg.get_first_batch_timestamp().unwrap(), T0 - 300);
    assert_eq!(
        seg.time_waited_for_roll(T0 + 10_000, T0 + 500).unwrap(),
        800
    );
}

/// `get_first_batch_timestamp` is `i64::MAX` for an empty segment and for one whose first
/// batch carries no timestamp (-1), as in Kafka.
#[test]
fn first_batch_timestamp_without_a_timestamp_is_i64_max() {
    let dir = tmpdir();
    let (_t, clock) = at_t0();
    let cfg = config(4096, 1 << 20);
    let seg: LogSegment = LogSegment::create(dir.path(), 0, &cfg, clock.clone()).unwrap();
    assert_eq!(seg.get_first_batch_timestamp().unwrap(), i64::MAX);
    seg.append(0, -1, 0, &one(0, -1)).unwrap();
    assert_eq!(seg.get_first_batch_timestamp().unwrap(), i64::MAX);
    let other = tmpdir();
    let seg: LogSegment = LogSegment::create(other.path(), 0, &cfg, clock).unwrap();
    seg.append(0, 5_000, 0, &one(0, 5_000)).unwrap();
    assert_eq!(seg.get_first_batch_timestamp().unwrap(), 5_000);
}
