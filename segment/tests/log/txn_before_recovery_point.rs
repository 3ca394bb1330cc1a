//! Issue 8 (K1-crash): a transaction begins before the recovery point, the process
//! crashes (no clean-shutdown marker, a torn tail), and the reopened log rebuilds the
//! abort's `.txnindex` entry because the producer snapshot taken at the roll still knows
//! the transaction (Kafka's `LogLoader.recoverSegment` + `rebuildProducerState`).
use crate::common::*;
use index_txn::AbortedTxn;
use segment::producer::snapshot::{decode_snapshot, producer_snapshot_file};
use segment::record::{control_batch, BatchBuilder, ControlRecordType};

const PID: i64 = 7;

fn txn(o: i64, pid: i64, seq: i32) -> Vec<u8> {
    BatchBuilder::new(o)
        .partition_leader_epoch(0)
        .producer(pid, 0, seq)
        .transactional(true)
        .record(o, None, Some(b"t"))
        .build()
        .unwrap()
}

/// Writes: offsets 0..5 plain, txn of PID at 5, the log start raised to 6 (so a replay
/// from the log start cannot see offset 5), offset 6, a roll at 7 (snapshot 7 knows the
/// txn), a flush (recovery point 7), then offset 7, PID's ABORT at 8, more data and a torn
/// tail; then a crash.
fn crash_with_txn_before_recovery_point(dir: &std::path::Path) -> i64 {
    let (_t, clock) = mock();
    let log = open_log(dir, config(4096, 1 << 20), clock);
    fill(&log, 0, 5, 1, 0);
    log.append(&txn(5, PID, 0)).unwrap();
    log.increment_log_start_offset(6).unwrap();
    fill(&log, 6, 1, 1, 6);
    let seg1 = log.roll(None).unwrap().base_offset();
    assert_eq!(seg1, 7);
    log.flush().unwrap();
    assert_eq!(log.recovery_point(), 7);
    fill(&log, 7, 1, 1, 7);
    log.append(&control_batch(8, PID, 0, ControlRecordType::Abort, 0, 8).unwrap())
        .unwrap();
    fill(&log, 9, 2, 1, 9);
    assert_eq!(
        log.collect_aborted_txns(0, i64::MAX).unwrap(),
        vec![AbortedTxn::new(PID, 5, 8, 9)],
        "the append path writes the entry"
    );
    log.close_handlers(); // crash: no marker, recovery point stays at 7
                          // A torn tail: half a batch after the last complete one.
    let log_file = dir.join("00000000000000000007.log");
    let extra = batch(11, 3, 11);
    let mut bytes = std::fs::read(&log_file).unwrap();
    bytes.extend_from_slice(&extra[..extra.len() / 2]);
    std::fs::write(&log_file, bytes).unwrap();
    seg1
}

#[test]
fn abort_entry_is_rebuilt_from_the_snapshot_after_a_crash() {
    let dir = tmpdir();
    let seg1 = crash_with_txn_before_recovery_point(dir.path());
    let snap =
        decode_snapshot(&std::fs::read(producer_snapshot_file(dir.path(), seg1)).unwrap()).unwrap();
    assert_eq!(snap.len(), 1);
    assert_eq!(
        (snap[0].producer_id, snap[0].current_txn_first_offset),
        (PID, 5),
        "the roll's snapshot holds the ongoing transaction"
    );
    // Only the recovered segment's .txnindex is rebuilt: remove it to be sure it is.
    std::fs::remove_file(dir.path().join("00000000000000000007.txnindex")).unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    assert_eq!(log.stats().scanned_segments(), 1);
    assert!(
        log.stats()
            .bytes_truncated
            .load(std::sync::atomic::Ordering::Relaxed)
            > 0
    );
    assert_eq!(log.log_end_offset(), 11);
    assert_eq!(
        log.collect_aborted_txns(0, i64::MAX).unwrap(),
        vec![AbortedTxn::new(PID, 5, 8, 9)]
    );
    assert_eq!(log.last_stable_offset(), 11);
    assert!(log.producer_state().ongoing_txns().is_empty());
}

#[test]
fn without_the_snapshot_the_transaction_is_unknown_as_in_kafka() {
    // The control case: the replay starts at the log start (6), after the transaction's
    // first batch, so without the snapshot nothing knows the transaction — which shows the
    // entry of the first test comes from the snapshot.
    let dir = tmpdir();
    let seg1 = crash_with_txn_before_recovery_point(dir.path());
    std::fs::remove_file(producer_snapshot_file(dir.path(), seg1)).unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    assert_eq!(log.collect_aborted_txns(0, i64::MAX).unwrap(), vec![]);
}

#[test]
fn a_corrupt_snapshot_is_ignored_and_recovery_falls_back() {
    // The snapshot at 7 is corrupt: it is deleted with a warning; an earlier snapshot (none
    // here) or the log start is used. The open succeeds and keeps every record.
    for damage in 0..3 {
        let dir = tmpdir();
        let seg1 = crash_with_txn_before_recovery_point(dir.path());
        let p = producer_snapshot_file(dir.path(), seg1);
        let mut b = std::fs::read(&p).unwrap();
        match damage {
            0 => b.truncate(b.len() - 3), // truncated
            1 => b[20] ^= 0x40,           // a flipped bit (CRC mismatch)
            _ => b[9] = 9,                // lies about its entry count
        }
        std::fs::write(&p, b).unwrap();
        let (_t, clock) = mock();
        let log = open_log(dir.path(), config(4096, 1 << 20), clock);
        assert_eq!(log.log_end_offset(), 11, "damage {damage}");
        assert_eq!(read_all(&log, 6), (6..11).collect::<Vec<_>>());
        let snaps = log.producer_state().snapshot_offsets();
        assert!(
            !snaps.is_empty(),
            "a fresh snapshot is written at the log end"
        );
        for o in snaps {
            let bytes = std::fs::read(producer_snapshot_file(dir.path(), o)).unwrap();
            decode_snapshot(&bytes).expect("every snapshot left is valid");
        }
    }
}

/// Kafka's `UnifiedLog.maybeIncrementFirstUnstableOffset`: the first unstable offset is
/// never below the log start offset. A transaction whose data lies wholly below a raised
/// log start stays ongoing (Kafka's `onLogStartOffsetIncremented` drops only unreplicated
/// completed transactions), and the last stable offset is the log start, not the
/// transaction's first offset that the log no longer holds. Found by
/// `cargo xtask crash --long` (workload 34: LSO 2 below the log start 14).
#[test]
fn last_stable_offset_is_never_below_the_log_start() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    fill(&log, 0, 2, 1, 0);
    log.append(&txn(2, PID, 0)).unwrap();
    fill(&log, 3, 5, 1, 3);
    assert_eq!(log.last_stable_offset(), 2, "the transaction at 2 is open");
    log.increment_log_start_offset(6).unwrap();
    assert_eq!(
        log.producer_state().ongoing_txns().len(),
        1,
        "still ongoing"
    );
    assert_eq!(log.last_stable_offset(), 6);
    log.append(&control_batch(8, PID, 0, ControlRecordType::Abort, 0, 8).unwrap())
        .unwrap();
    assert_eq!(log.last_stable_offset(), 9);
}
