//! Acceptance case 59: recovery rebuilds the transaction index from control markers.
use crate::common::*;
use index_txn::AbortedTxn;
use segment::record::{control_batch, BatchBuilder, ControlRecordType};
use segment::ProducerStateManager;

const PID1: i64 = 5;
const PID2: i64 = 10;

fn txn_batch(base: i64, pid: i64) -> Vec<u8> {
    BatchBuilder::new(base)
        .partition_leader_epoch(15)
        .producer(pid, 0, 0)
        .transactional(true)
        .record(base, None, Some(b"a"))
        .record(base, None, Some(b"b"))
        .build()
        .unwrap()
}

fn build() -> (tempfile::TempDir, segment::LogSegment) {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 100, &config(10, 1000), clock);
    seg.append(101, 100, 101, &txn_batch(100, PID1)).unwrap();
    seg.append(103, 102, 103, &txn_batch(102, PID2)).unwrap();
    seg.append(105, 104, 105, &batch(104, 2, 104)).unwrap();
    let abort = control_batch(106, PID2, 0, ControlRecordType::Abort, 0, 106).unwrap();
    seg.append(106, 106, 106, &abort).unwrap();
    let commit = control_batch(107, PID1, 0, ControlRecordType::Commit, 0, 107).unwrap();
    seg.append(107, 107, 107, &commit).unwrap();
    (dir, seg)
}

#[test]
fn case59_fresh_producer_state() {
    let (_d, seg) = build();
    let mut ps = ProducerStateManager::new();
    seg.recover(&mut ps, None).unwrap();
    assert_eq!(ps.map_end_offset(), 108);
    assert_eq!(
        seg.txn_index().all_aborted_txns().unwrap(),
        vec![AbortedTxn::new(PID2, 102, 106, 100)]
    );
    assert!(ps.ongoing_txns().is_empty());
}

#[test]
fn case59_preloaded_producer_state() {
    let (_d, seg) = build();
    let mut ps = ProducerStateManager::new();
    ps.begin_txn(PID2, 75);
    seg.recover(&mut ps, None).unwrap();
    assert_eq!(
        seg.txn_index().all_aborted_txns().unwrap(),
        vec![AbortedTxn::new(PID2, 75, 106, 100)]
    );
}
