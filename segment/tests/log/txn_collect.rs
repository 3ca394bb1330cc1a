//! field case B10: aborted transactions are collected across segments with absolute bounds.
use crate::common::*;
use index_txn::AbortedTxn;
use segment::record::{control_batch, BatchBuilder, ControlRecordType};

fn txn(o: i64, pid: i64) -> Vec<u8> {
    BatchBuilder::new(o)
        .producer(pid, 0, 0)
        .transactional(true)
        .record(o, None, Some(b"t"))
        .build()
        .unwrap()
}

#[test]
fn b10_collect_from_earlier_segment_reaches_later_index() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    log.append(&batch(0, 1, 0)).unwrap();
    log.append(&txn(1, 7)).unwrap();
    log.roll(None).unwrap();
    log.append(&batch(2, 1, 2)).unwrap();
    log.append(&txn(3, 7)).unwrap();
    log.append(&txn(4, 9)).unwrap();
    log.append(&control_batch(5, 7, 0, ControlRecordType::Abort, 0, 5).unwrap())
        .unwrap();
    log.append(&control_batch(6, 9, 0, ControlRecordType::Abort, 0, 6).unwrap())
        .unwrap();
    log.append(&batch(7, 1, 7)).unwrap();
    // The append path writes the entries (issue 11, finding 11): each ABORT marker gets
    // the aborted transaction's first offset, its own offset and the LSO of the moment.
    let b = log.segments().get(2).unwrap();
    assert_eq!(
        b.txn_index().all_aborted_txns().unwrap(),
        vec![AbortedTxn::new(7, 1, 5, 4), AbortedTxn::new(9, 4, 6, 7)]
    );
    let pids = |v: Vec<AbortedTxn>| {
        v.iter()
            .map(|t| (t.producer_id, t.first_offset))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        pids(log.collect_aborted_txns(0, 8).unwrap()),
        vec![(7, 1), (9, 4)]
    );
    assert_eq!(
        pids(log.collect_aborted_txns(2, 5).unwrap()),
        vec![(7, 1), (9, 4)]
    );
    assert_eq!(pids(log.collect_aborted_txns(6, 8).unwrap()), vec![(9, 4)]);
}

#[test]
fn b10_recovery_rebuilds_the_same_entries() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let cfg = config(4096, 1 << 20);
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    log.append(&batch(0, 1, 0)).unwrap();
    log.append(&txn(1, 7)).unwrap();
    log.append(&batch(2, 1, 2)).unwrap();
    log.append(&txn(3, 7)).unwrap();
    log.append(&txn(4, 9)).unwrap();
    log.append(&control_batch(5, 7, 0, ControlRecordType::Abort, 0, 5).unwrap())
        .unwrap();
    log.append(&control_batch(6, 9, 0, ControlRecordType::Abort, 0, 6).unwrap())
        .unwrap();
    log.close_handlers(); // crash: recovery rebuilds the txn index
    let log = open_log(dir.path(), cfg, clock);
    let got = log.collect_aborted_txns(0, 8).unwrap();
    assert_eq!(
        got,
        vec![AbortedTxn::new(7, 1, 5, 4), AbortedTxn::new(9, 4, 6, 7)]
    );
}
