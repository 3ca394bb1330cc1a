//! `TransactionIndexView` (a transaction index over bytes in memory) against the
//! file-backed `TransactionIndex` over the same file: the same `collect_aborted_txns`
//! answers for every range, on indexes written by the file index's appends and on
//! arbitrary bytes (refused with a typed error, or answered alike).

use std::fs;

use index_txn::{AbortedTxn, TransactionIndex, TransactionIndexView, TxnIndexError};
use proptest::prelude::*;

fn assert_same(file: &TransactionIndex, view: &TransactionIndexView) {
    let all = file.all_aborted_txns().unwrap();
    assert_eq!(view.all_aborted_txns(), all);
    let mut points = vec![i64::MIN, i64::MAX, view.start_offset()];
    for t in &all {
        for v in [t.first_offset, t.last_offset, t.last_stable_offset] {
            points.extend([v.saturating_sub(1), v, v.saturating_add(1)]);
        }
    }
    for &from in &points {
        for &upper in &points {
            assert_eq!(
                view.collect_aborted_txns(from, upper),
                file.collect_aborted_txns(from, upper).unwrap(),
                "collect({from}, {upper})"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn view_answers_as_the_file_index(
        start in 0i64..1_000_000,
        txns in proptest::collection::vec((0i64..5, 0i64..40, 1i64..30, 0i64..60), 0..16),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.txnindex");
        let index = TransactionIndex::open(&path, start).unwrap();
        let mut last = start;
        for (pid, back, step, lso) in txns {
            last += step;
            index.append(&AbortedTxn::new(pid, last - back, last, last - 20 + lso)).unwrap();
        }
        index.flush().unwrap();
        let bytes = fs::read(&path).unwrap_or_default();
        assert_same(&index, &TransactionIndexView::from_bytes(start, bytes).unwrap());
        if path.exists() {
            assert_same(&index, &TransactionIndexView::open(&path, start).unwrap());
        }
    }

    #[test]
    fn hostile_bytes_are_refused_or_answered_alike(
        start in 0i64..3,
        bytes in proptest::collection::vec(any::<u8>(), 0..120),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.txnindex");
        fs::write(&path, &bytes).unwrap();
        match TransactionIndexView::from_bytes(start, bytes.clone()) {
            Err(TxnIndexError::CorruptIndex { .. }) => {}
            Err(e) => prop_assert!(false, "unexpected error {e}"),
            Ok(view) => {
                prop_assert!(bytes.len() % 34 == 0);
                assert_same(&TransactionIndex::open(&path, start).unwrap(), &view);
            }
        }
    }
}

#[test]
fn hostile_shapes_get_typed_errors() {
    let e = |first: i64, last: i64| AbortedTxn::new(1, first, last, last).to_bytes().to_vec();
    let mut bad_version = e(0, 10);
    bad_version[0] = 1;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("partial entry", vec![0; 35]),
        ("unsupported version", bad_version),
        ("last offset below start", e(0, 4)),
        ("last offsets equal", [e(5, 10), e(6, 10)].concat()),
        ("last offsets decreasing", [e(5, 10), e(6, 9)].concat()),
    ];
    for (what, bytes) in cases {
        assert!(
            matches!(
                TransactionIndexView::from_bytes(5, bytes),
                Err(TxnIndexError::CorruptIndex { .. })
            ),
            "{what}"
        );
    }
}
