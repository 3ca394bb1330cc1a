//! Issue 21, branch `reads`: `Log::read_with` bounded by its isolation (Kafka's
//! `UnifiedLog.read` with `FetchIsolation`), the aborted transactions of a
//! `read_committed` fetch, and the high watermark's rules (Kafka's
//! `updateHighWatermark`, `maybeIncrementHighWatermark`, `truncateTo`,
//! `maybeIncrementLogStartOffset`, `deletableSegments`).
use std::sync::Arc;

use crate::common::*;
use index_txn::AbortedTxn;
use segment::record::{control_batch, BatchBuilder, ControlRecordType};
use segment::{FetchIsolation, Log, LogConfig, MockTime, SegmentError};

fn open_hw(dir: &std::path::Path, cfg: LogConfig, hw: i64) -> Log {
    Log::options()
        .clock(mock().1)
        .manual_high_watermark(hw)
        .open(dir, cfg)
        .unwrap()
}

fn txn(o: i64, pid: i64) -> Vec<u8> {
    BatchBuilder::new(o)
        .producer(pid, 0, 0)
        .transactional(true)
        .record(o, None, Some(b"t"))
        .build()
        .unwrap()
}

/// Ten one-record batches 0..10, in segments of four batches.
fn ten(dir: &std::path::Path, hw: Option<i64>) -> Log {
    let one = batch(0, 1, 0).len() as u64;
    let cfg = LogConfig {
        segment_bytes: 4 * one,
        index_interval_bytes: 1,
        ..LogConfig::default()
    };
    let log = match hw {
        Some(_) => open_hw(dir, cfg, 0),
        None => open_log(dir, cfg, mock().1),
    };
    fill(&log, 0, 10, 1, 100);
    if let Some(hw) = hw {
        // Opened on an empty log, the high watermark stayed at 0 while appends went on.
        assert_eq!(log.high_watermark(), 0);
        log.update_high_watermark(hw).unwrap();
    }
    log
}

fn offs(log: &Log, o: i64, iso: FetchIsolation) -> Vec<i64> {
    offsets_in(&log.read_with(o, 1 << 20, iso, true).unwrap().records)
}

#[test]
fn by_default_the_high_watermark_follows_the_log_end() {
    let dir = tmpdir();
    let log = ten(dir.path(), None);
    assert!(!log.has_manual_high_watermark());
    assert_eq!(log.high_watermark(), 10);
    assert_eq!(log.last_stable_offset(), 10);
    log.truncate_to(7).unwrap();
    assert_eq!(log.high_watermark(), 7);
    // Only a manual high watermark is moved by the caller.
    assert!(matches!(
        log.update_high_watermark(3),
        Err(SegmentError::InvalidArgument { .. })
    ));
    assert!(matches!(
        log.maybe_increment_high_watermark(3),
        Err(SegmentError::InvalidArgument { .. })
    ));
    // `read_with(LogEnd, min one)` reads what `read` reads.
    for o in 0..7 {
        let a = log.read(o, 100).unwrap();
        let b = log.read_with(o, 100, FetchIsolation::LogEnd, true).unwrap();
        assert_eq!(a.records, b.records);
        assert_eq!(a.fetch_offset_metadata, b.fetch_offset_metadata);
        assert_eq!(b.aborted_transactions, None);
    }
}

#[test]
fn a_manual_high_watermark_is_clamped_at_open_and_on_update() {
    let dir = tmpdir();
    drop(ten(dir.path(), None));
    let log = open_hw(dir.path(), LogConfig::default(), 99);
    assert!(log.has_manual_high_watermark());
    assert_eq!(log.high_watermark(), 10);
    drop(log);
    let log = open_hw(dir.path(), LogConfig::default(), 4);
    assert_eq!(log.high_watermark(), 4);
    assert_eq!(log.update_high_watermark(-5).unwrap(), 0);
    assert_eq!(log.update_high_watermark(50).unwrap(), 10);
    // Kafka's updateHighWatermark moves it down too.
    assert_eq!(log.update_high_watermark(6).unwrap(), 6);
    assert_eq!(log.high_watermark(), 6);
}

#[test]
fn maybe_increment_only_moves_up_and_refuses_beyond_the_log_end() {
    let dir = tmpdir();
    let log = ten(dir.path(), Some(5));
    assert_eq!(log.maybe_increment_high_watermark(3).unwrap(), None);
    assert_eq!(log.maybe_increment_high_watermark(5).unwrap(), None);
    assert_eq!(log.high_watermark(), 5);
    assert_eq!(log.maybe_increment_high_watermark(8).unwrap(), Some(5));
    assert_eq!(log.high_watermark(), 8);
    assert!(matches!(
        log.maybe_increment_high_watermark(11),
        Err(SegmentError::InvalidArgument { .. })
    ));
    assert_eq!(log.high_watermark(), 8);
    assert_eq!(log.maybe_increment_high_watermark(10).unwrap(), Some(8));
}

#[test]
fn a_high_watermark_read_stops_before_the_high_watermark() {
    let dir = tmpdir();
    let log = ten(dir.path(), Some(6));
    // Segments [0..4), [4..8), [8..10): the bound lies inside the second segment.
    assert_eq!(offs(&log, 4, FetchIsolation::HighWatermark), vec![4, 5]);
    assert_eq!(offs(&log, 5, FetchIsolation::HighWatermark), vec![5]);
    // The first segment is below the bound's segment: read to its end.
    assert_eq!(
        offs(&log, 0, FetchIsolation::HighWatermark),
        vec![0, 1, 2, 3]
    );
    // At and above the bound (up to the log end): empty, never an error.
    for o in 6..=10 {
        let r = log
            .read_with(o, 1 << 20, FetchIsolation::HighWatermark, true)
            .unwrap();
        assert!(r.records.is_empty(), "offset {o}");
        assert_eq!(r.fetch_offset_metadata.message_offset, o);
    }
    let six = log
        .read_with(6, 1 << 20, FetchIsolation::HighWatermark, true)
        .unwrap();
    assert_eq!(six.fetch_offset_metadata.segment_base_offset, 4);
    assert_eq!(
        six.fetch_offset_metadata.relative_position_in_segment,
        2 * batch(0, 1, 0).len() as u64
    );
    // Above the log end: out of range, as `read`.
    assert!(matches!(
        log.read_with(11, 100, FetchIsolation::HighWatermark, true),
        Err(SegmentError::OffsetOutOfRange { .. })
    ));
    // The log end read is not bounded by the high watermark.
    assert_eq!(offs(&log, 4, FetchIsolation::LogEnd), vec![4, 5, 6, 7]);
    // A high watermark at a segment's base bounds the segment before it by its size.
    log.update_high_watermark(8).unwrap();
    assert_eq!(
        offs(&log, 4, FetchIsolation::HighWatermark),
        vec![4, 5, 6, 7]
    );
    assert!(offs(&log, 8, FetchIsolation::HighWatermark).is_empty());
}

#[test]
fn without_min_one_message_a_large_first_batch_is_cut() {
    let dir = tmpdir();
    let log = ten(dir.path(), Some(6));
    let r = log
        .read_with(4, 10, FetchIsolation::HighWatermark, false)
        .unwrap();
    assert_eq!(r.records.len(), 10);
    assert!(r.first_entry_incomplete);
    let r = log.read_with(4, 0, FetchIsolation::LogEnd, false).unwrap();
    assert!(r.records.is_empty());
}

#[test]
fn the_last_stable_offset_is_bounded_by_the_high_watermark() {
    let dir = tmpdir();
    let log = open_hw(dir.path(), LogConfig::default(), 0);
    log.append(&batch(0, 1, 0)).unwrap();
    log.append(&txn(1, 7)).unwrap();
    log.append(&batch(2, 1, 0)).unwrap();
    // Open transaction at 1, HW 0.
    assert_eq!(log.last_stable_offset(), 0);
    log.update_high_watermark(3).unwrap();
    assert_eq!(log.last_stable_offset(), 1);
    log.append(&control_batch(3, 7, 0, ControlRecordType::Commit, 0, 3).unwrap())
        .unwrap();
    // Decided, but its marker (3) is not below the high watermark (3): Kafka's
    // `unreplicatedTxns` keep it unstable (docs/kafka-behaviour.md#unreplicated-transactions).
    assert_eq!(log.last_stable_offset(), 1);
    log.update_high_watermark(4).unwrap();
    assert_eq!(log.last_stable_offset(), 4);
    // Dropped for good: a lower high watermark does not make it unstable again.
    log.update_high_watermark(2).unwrap();
    assert_eq!(log.last_stable_offset(), 2);
    log.update_high_watermark(4).unwrap();
    assert_eq!(log.last_stable_offset(), 4);
}

#[test]
fn a_high_watermark_inside_a_batch_comes_down_to_its_base_at_a_bounded_read() {
    let dir = tmpdir();
    let log = open_hw(dir.path(), LogConfig::default(), 0);
    log.append(&batch(0, 5, 0)).unwrap();
    log.append(&batch(5, 5, 0)).unwrap();
    log.append(&batch(10, 5, 0)).unwrap();
    // Kafka's `updateHighWatermark` answers the clamped offset and keeps it bare ...
    assert_eq!(log.update_high_watermark(7).unwrap(), 7);
    assert_eq!(log.high_watermark(), 7);
    // ... a log-end read does not convert it ...
    log.read_with(0, 1 << 20, FetchIsolation::LogEnd, true)
        .unwrap();
    assert_eq!(log.high_watermark(), 7);
    // ... a read bounded by it does, to the base offset of the batch holding 7.
    let r = log
        .read_with(0, 1 << 20, FetchIsolation::HighWatermark, true)
        .unwrap();
    assert_eq!(log.high_watermark(), 5);
    assert_eq!(
        r.records,
        log.read(0, 1 << 20).unwrap().records[..batch(0, 5, 0).len()]
    );
    // At a batch boundary nothing moves; at the log end it is the log end's metadata.
    log.update_high_watermark(10).unwrap();
    log.read_with(0, 1 << 20, FetchIsolation::TxnCommitted, true)
        .unwrap();
    assert_eq!(log.high_watermark(), 10);
    log.update_high_watermark(99).unwrap();
    log.read_with(0, 1 << 20, FetchIsolation::HighWatermark, true)
        .unwrap();
    assert_eq!(log.high_watermark(), 15);
    // `maybe_increment_high_watermark` compares with the converted value.
    log.update_high_watermark(12).unwrap();
    assert_eq!(log.maybe_increment_high_watermark(11).unwrap(), Some(10));
    assert_eq!(log.high_watermark(), 11);
}

#[test]
fn a_read_below_the_log_start_fails_before_the_high_watermark_is_converted() {
    let dir = tmpdir();
    let log = open_hw(dir.path(), LogConfig::default(), 0);
    log.append(&batch(0, 5, 0)).unwrap();
    log.append(&batch(5, 5, 0)).unwrap();
    log.update_high_watermark(7).unwrap();
    // Kafka's `UnifiedLog.read` checks the log start (`checkLogStartOffset`) before it
    // fetches the bound's metadata: an out-of-range fetch below it leaves the bare high
    // watermark (and so the last stable offset) where it was.
    for iso in [FetchIsolation::HighWatermark, FetchIsolation::TxnCommitted] {
        assert!(matches!(
            log.read_with(-1, 1 << 20, iso, true),
            Err(SegmentError::OffsetOutOfRange { .. })
        ));
        assert!(matches!(
            log.read_region(-1, 1 << 20, iso, true),
            Err(SegmentError::OffsetOutOfRange { .. })
        ));
        assert_eq!(log.high_watermark(), 7);
        assert_eq!(log.last_stable_offset(), 7);
    }
    // Above the log end the metadata is fetched first, as Kafka's `LocalLog.read` fails
    // only after it.
    assert!(log
        .read_with(11, 1 << 20, FetchIsolation::HighWatermark, true)
        .is_err());
    assert_eq!(log.high_watermark(), 5);
}

#[test]
fn a_read_bounded_at_the_log_end_creates_no_index_for_a_rolled_segment() {
    let dir = tmpdir();
    let log = open_hw(dir.path(), config(1, 1 << 20), 0);
    log.append(&batch(0, 5, 0)).unwrap();
    log.append(&batch(5, 5, 0)).unwrap();
    log.update_high_watermark(10).unwrap();
    log.roll(None).unwrap();
    let index = dir.path().join("00000000000000000010.index");
    assert!(!index.exists());
    for iso in [
        FetchIsolation::LogEnd,
        FetchIsolation::HighWatermark,
        FetchIsolation::TxnCommitted,
    ] {
        let r = log.read_with(0, 1 << 20, iso, true).unwrap();
        assert_eq!(r.records, log.read(0, 1 << 20).unwrap().records, "{iso:?}");
        assert!(
            !index.exists(),
            "{iso:?} created the rolled segment's index"
        );
    }
}

#[test]
fn a_read_committed_fetch_stops_at_the_lso_and_lists_aborted_transactions() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    log.append(&batch(0, 1, 0)).unwrap();
    log.append(&txn(1, 7)).unwrap();
    log.append(&txn(2, 9)).unwrap();
    log.append(&control_batch(3, 7, 0, ControlRecordType::Abort, 0, 3).unwrap())
        .unwrap();
    log.append(&batch(4, 1, 0)).unwrap();
    // Producer 9's transaction is still open: the LSO is 2.
    assert_eq!(log.last_stable_offset(), 2);
    let r = log
        .read_with(0, 1 << 20, FetchIsolation::TxnCommitted, true)
        .unwrap();
    assert_eq!(offsets_in(&r.records), vec![0, 1]);
    assert_eq!(
        r.aborted_transactions,
        Some(vec![AbortedTxn::new(7, 1, 3, 2)])
    );
    // At the LSO: empty, with an (empty) list.
    let r = log
        .read_with(2, 1 << 20, FetchIsolation::TxnCommitted, true)
        .unwrap();
    assert!(r.records.is_empty());
    assert_eq!(r.aborted_transactions, Some(vec![]));
    // Other isolations carry no list.
    let r = log
        .read_with(0, 1 << 20, FetchIsolation::HighWatermark, true)
        .unwrap();
    assert_eq!(offsets_in(&r.records), vec![0, 1, 2, 3, 4]);
    assert_eq!(r.aborted_transactions, None);
    // Abort 9 too: everything is stable; a fetch from 2 lists the aborted transaction
    // of 9 (its last offset reaches the fetch), not 7's (ended before the fetch at 3?
    // no: 7's last offset 3 ≥ 2, it overlaps too).
    log.append(&control_batch(5, 9, 0, ControlRecordType::Abort, 0, 5).unwrap())
        .unwrap();
    let r = log
        .read_with(2, 1 << 20, FetchIsolation::TxnCommitted, true)
        .unwrap();
    assert_eq!(offsets_in(&r.records), vec![2, 3, 4, 5]);
    let pids: Vec<i64> = r
        .aborted_transactions
        .unwrap()
        .iter()
        .map(|t| t.producer_id)
        .collect();
    assert_eq!(pids, vec![7, 9]);
    let r = log
        .read_with(4, 1 << 20, FetchIsolation::TxnCommitted, true)
        .unwrap();
    let pids: Vec<i64> = r
        .aborted_transactions
        .unwrap()
        .iter()
        .map(|t| t.producer_id)
        .collect();
    assert_eq!(pids, vec![9]);
}

#[test]
fn the_aborted_list_stops_at_the_fetch_upper_bound() {
    // Kafka's `addAbortedTransactions`: the upper bound is the first index entry at or
    // after the end of the fetched bytes, so a small fetch does not list a transaction
    // that begins after it.
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 1 << 20), clock);
    log.append(&txn(0, 7)).unwrap();
    log.append(&control_batch(1, 7, 0, ControlRecordType::Abort, 0, 1).unwrap())
        .unwrap();
    log.append(&batch(2, 1, 0)).unwrap();
    log.append(&batch(3, 1, 0)).unwrap();
    log.append(&txn(4, 9)).unwrap();
    log.append(&control_batch(5, 9, 0, ControlRecordType::Abort, 0, 5).unwrap())
        .unwrap();
    let one = batch(2, 1, 0).len() as u64;
    let r = log
        .read_with(2, one, FetchIsolation::TxnCommitted, true)
        .unwrap();
    assert_eq!(offsets_in(&r.records), vec![2]);
    assert_eq!(r.aborted_transactions, Some(vec![]));
    let r = log
        .read_with(0, 1 << 20, FetchIsolation::TxnCommitted, true)
        .unwrap();
    assert_eq!(r.aborted_transactions.unwrap().len(), 2);
}

#[test]
fn truncation_lowers_the_high_watermark_and_a_restart_sets_it_to_the_log_end() {
    let dir = tmpdir();
    let log = ten(dir.path(), Some(9));
    log.truncate_to(7).unwrap();
    assert_eq!(log.high_watermark(), 7);
    log.truncate_to(8).unwrap(); // beyond the end: nothing
    assert_eq!(log.high_watermark(), 7);
    log.update_high_watermark(3).unwrap();
    log.truncate_to(5).unwrap(); // above the high watermark: it stays
    assert_eq!(log.high_watermark(), 3);
    log.truncate_fully_and_start_at(20).unwrap();
    assert_eq!(log.high_watermark(), 20);
}

#[test]
fn a_log_start_increment_raises_the_high_watermark_and_stays_below_it() {
    let dir = tmpdir();
    let log = ten(dir.path(), Some(2));
    // Kafka: cannot increment the log start offset above the high watermark.
    assert!(matches!(
        log.delete_records(5),
        Err(SegmentError::OffsetOutOfRange { .. })
    ));
    assert!(matches!(
        log.increment_log_start_offset(3),
        Err(SegmentError::OffsetOutOfRange { .. })
    ));
    assert_eq!(log.log_start_offset(), 0);
    assert_eq!(log.delete_records(2).unwrap(), 2);
    log.update_high_watermark(6).unwrap();
    log.increment_log_start_offset(6).unwrap();
    assert_eq!(log.high_watermark(), 6);
}

#[test]
fn retention_keeps_the_segments_above_the_high_watermark() {
    let dir = tmpdir();
    let t = MockTime::new(1_000_000);
    let one = batch(0, 1, 0).len() as u64;
    let cfg = LogConfig {
        segment_bytes: 4 * one,
        retention_ms: 10,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    };
    let log = Log::options()
        .clock(Arc::new(t.clone()))
        .manual_high_watermark(5)
        .open(dir.path(), cfg)
        .unwrap();
    fill(&log, 0, 10, 1, 100);
    log.update_high_watermark(5).unwrap();
    t.sleep(1_000_000);
    // Segments [0..4) (bound 4 ≤ HW 5) may go; [4..8) (bound 8 > 5) stays.
    assert_eq!(log.delete_old_segments().unwrap(), 1);
    assert_eq!(log.log_start_offset(), 4);
    log.update_high_watermark(10).unwrap();
    // Now the rest is expired and below the high watermark (a new active segment).
    assert_eq!(log.delete_old_segments().unwrap(), 2);
    assert_eq!(log.log_start_offset(), 10);
    assert_eq!(log.high_watermark(), 10);
}
