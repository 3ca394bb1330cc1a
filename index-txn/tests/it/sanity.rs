//! Acceptance case 33 and the other `sanity_check` outcomes.

use crate::common::*;
use index_txn::{TransactionIndex, TxnIndexError};

/// Acceptance case 33: an entry whose last offset is below the start offset is corruption.
#[test]
fn case33_sanity_check_against_start_offset() {
    let (_dir, path) = temp_path();
    drop(index_with(&path, 0, &four()));

    let index = TransactionIndex::open(&path, 100).unwrap();
    match index.sanity_check().unwrap_err() {
        TxnIndexError::CorruptIndex { path: p, reason } => {
            assert_eq!(p, path);
            assert!(reason.contains("start offset 100"), "{reason}");
            assert!(reason.contains("byte position 0"), "{reason}");
        }
        other => panic!("expected CorruptIndex, got {other:?}"),
    }
}

#[test]
fn sanity_check_passes_for_valid_files() {
    let (_dir, path) = temp_path();
    let index = TransactionIndex::open(&path, 0).unwrap();
    index.sanity_check().unwrap(); // missing file
    for t in four() {
        index.append(&t).unwrap();
    }
    index.sanity_check().unwrap();
    // Start offset equal to the smallest last offset is fine.
    TransactionIndex::open(&path, 10)
        .unwrap()
        .sanity_check()
        .unwrap();
    assert!(matches!(
        TransactionIndex::open(&path, 11).unwrap().sanity_check(),
        Err(index_txn::TxnIndexError::CorruptIndex { .. })
    ));
}

/// Stricter than Kafka: a partial trailing entry fails the sanity check.
#[test]
fn sanity_check_reports_partial_tail() {
    let (_dir, path) = temp_path();
    let mut bytes = encode(&four());
    bytes.extend_from_slice(&[0u8; 5]);
    std::fs::write(&path, &bytes).unwrap();
    let err = TransactionIndex::open(&path, 0)
        .unwrap()
        .sanity_check()
        .unwrap_err();
    assert!(
        matches!(&err, TxnIndexError::CorruptIndex { reason, .. } if reason.contains("partial")),
        "{err:?}"
    );
}

#[test]
fn sanity_check_reports_bad_version() {
    let (_dir, path) = temp_path();
    let mut bytes = encode(&four());
    bytes[34] = 1;
    std::fs::write(&path, &bytes).unwrap();
    let err = TransactionIndex::open(&path, 0)
        .unwrap()
        .sanity_check()
        .unwrap_err();
    assert!(
        matches!(&err, TxnIndexError::CorruptIndex { reason, .. }
            if reason.contains("unexpected aborted transaction version 1")),
        "{err:?}"
    );
}
