//! Acceptance case 32 and the reopen behaviour (last offset reloaded: a documented deviation).

use crate::common::*;
use index_txn::{AbortedTxn, TransactionIndex, TxnIndexError};

/// Acceptance case 32: reopen keeps data, appends go to the end.
#[test]
fn case32_reopen_keeps_data_appends_go_to_end() {
    let (_dir, path) = temp_path();
    std::fs::File::create(&path).unwrap(); // an existing empty file
    let index = index_with(&path, 0, &four());
    index.close();

    let reopened = TransactionIndex::open(&path, 0).unwrap();
    let t4 = AbortedTxn::new(3, 50, 60, 55);
    reopened.append(&t4).unwrap();
    let mut expected = four();
    expected.push(t4);
    assert_eq!(reopened.all_aborted_txns().unwrap(), expected);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 5 * 34);
    assert_eq!(reopened.len().unwrap(), 5);
}

/// Deviation: Kafka does not reload the last offset on open, so appending a smaller last
/// offset after a reopen succeeds there (docs/kafka-behaviour.md#txn-file, verified). We reload it and refuse.
#[test]
fn reopen_reloads_last_offset_and_rejects_smaller() {
    let (_dir, path) = temp_path();
    drop(index_with(&path, 0, &four()));

    let reopened = TransactionIndex::open(&path, 0).unwrap();
    let err = reopened.append(&AbortedTxn::new(9, 0, 20, 21)).unwrap_err();
    match err {
        TxnIndexError::NonMonotonic {
            last_offset,
            new_last_offset,
            ..
        } => {
            assert_eq!(last_offset, 50);
            assert_eq!(new_last_offset, 20);
        }
        other => panic!("expected NonMonotonic, got {other:?}"),
    }
    // Equal is rejected too; nothing was written.
    assert!(matches!(
        reopened.append(&AbortedTxn::new(9, 0, 50, 51)),
        Err(TxnIndexError::NonMonotonic { .. })
    ));
    assert_eq!(reopened.all_aborted_txns().unwrap(), four());
    reopened.append(&AbortedTxn::new(9, 0, 51, 52)).unwrap();
    assert_eq!(reopened.len().unwrap(), 5);
}

/// The same holds after `close()` on the same instance (the next append reopens the file).
#[test]
fn close_then_append_reopens_at_end_and_reloads_last_offset() {
    let (_dir, path) = temp_path();
    let index = index_with(&path, 0, &four());
    index.close();
    assert!(matches!(
        index.append(&AbortedTxn::new(9, 0, 40, 41)),
        Err(TxnIndexError::NonMonotonic {
            last_offset: 50,
            ..
        })
    ));
    index.append(&AbortedTxn::new(9, 0, 70, 71)).unwrap();
    assert_eq!(index.len().unwrap(), 5);
    assert_eq!(index.all_aborted_txns().unwrap()[4].last_offset, 70);
}

/// Opening a missing file creates nothing; the first append creates it.
#[test]
fn open_missing_file_is_lazy() {
    let (_dir, path) = temp_path();
    let index = TransactionIndex::open(&path, 7).unwrap();
    assert!(!path.exists());
    assert_eq!(index.start_offset(), 7);
    assert_eq!(index.path(), path);
    assert!(index.is_empty().unwrap());
    assert_eq!(index.all_aborted_txns().unwrap(), vec![]);
    assert!(!path.exists());
    index.append(&AbortedTxn::new(1, 7, 8, 9)).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 34);
}
