//! Acceptance case 34 and the other append rules.

use crate::common::*;
use index_txn::{AbortedTxn, TransactionIndex, TxnIndexError};

/// Acceptance case 34: last offsets must increase strictly.
#[test]
fn case34_strictly_increasing_last_offset() {
    let (_dir, path) = temp_path();
    let index = index_with(&path, 0, &[AbortedTxn::new(1, 5, 15, 13)]);
    for bad in [AbortedTxn::new(0, 0, 15, 11), AbortedTxn::new(0, 0, 10, 11)] {
        match index.append(&bad).unwrap_err() {
            TxnIndexError::NonMonotonic {
                path: p,
                last_offset,
                new_last_offset,
            } => {
                assert_eq!(p, path);
                assert_eq!(last_offset, 15);
                assert_eq!(new_last_offset, bad.last_offset);
            }
            other => panic!("expected NonMonotonic, got {other:?}"),
        }
    }
    // Nothing was written by the rejected appends.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 34);
    index.append(&AbortedTxn::new(0, 0, 16, 17)).unwrap();
    assert_eq!(index.len().unwrap(), 2);
}

/// Deviation: an entry below the start offset is refused (Kafka writes it and then fails
/// its own sanity check).
#[test]
fn append_below_start_offset_is_invalid() {
    let (_dir, path) = temp_path();
    let index = TransactionIndex::open(&path, 100).unwrap();
    let err = index.append(&AbortedTxn::new(1, 50, 99, 120)).unwrap_err();
    assert!(
        matches!(err, TxnIndexError::InvalidAppend { .. }),
        "{err:?}"
    );
    assert_eq!(index.len().unwrap(), 0);
    // first_offset may lie below the start offset (transaction began in an earlier segment).
    index.append(&AbortedTxn::new(1, 50, 100, 120)).unwrap();
    index.sanity_check().unwrap();
}

/// Whatever `version` the value carries, version 0x0000 is written.
#[test]
fn append_always_writes_version_zero() {
    let (_dir, path) = temp_path();
    let index = TransactionIndex::open(&path, 0).unwrap();
    let txn = AbortedTxn {
        version: 5,
        ..AbortedTxn::new(1, 2, 3, 4)
    };
    index.append(&txn).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..2], &[0, 0]);
    assert_eq!(
        index.all_aborted_txns().unwrap(),
        vec![AbortedTxn::new(1, 2, 3, 4)]
    );
}

/// An append that fails on I/O leaves the index usable and unchanged.
#[test]
fn failed_append_does_not_advance_last_offset() {
    let dir = tempfile::tempdir().unwrap();
    // The parent directory does not exist: creating the file fails.
    let path = dir.path().join("missing-dir").join("0.txnindex");
    let index = TransactionIndex::open(&path, 0).unwrap();
    let err = index.append(&T0).unwrap_err();
    assert!(matches!(err, TxnIndexError::Io { .. }), "{err:?}");
    std::fs::create_dir(dir.path().join("missing-dir")).unwrap();
    // Kafka set lastOffset before the failed write, so this retry would fail there.
    index.append(&T0).unwrap();
    assert_eq!(index.all_aborted_txns().unwrap(), vec![T0]);
}
