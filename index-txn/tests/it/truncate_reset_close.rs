//! `truncate_to`, `reset` and `close` (docs/kafka-behaviour.md#txn-append-collect), including the close deviation.

use crate::common::*;
use index_txn::{AbortedTxn, TransactionIndex, TxnIndexError};

#[test]
fn truncate_to_removes_entries_at_or_above_offset() {
    let (_dir, path) = temp_path();
    let index = index_with(&path, 0, &four());
    index.truncate_to(35).unwrap(); // T2 has last offset 35
    assert_eq!(index.all_aborted_txns().unwrap(), vec![T0, T1]);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 68);
    // Last offset is now T1's (15).
    assert!(matches!(
        index.append(&AbortedTxn::new(9, 0, 15, 0)),
        Err(TxnIndexError::NonMonotonic {
            last_offset: 15,
            ..
        })
    ));
    index.append(&AbortedTxn::new(9, 0, 16, 0)).unwrap();

    // Truncating everything clears the last offset.
    index.truncate_to(0).unwrap();
    assert!(index.is_empty().unwrap());
    index.append(&AbortedTxn::new(9, 0, 1, 0)).unwrap();
}

#[test]
fn truncate_to_beyond_last_entry_changes_nothing() {
    let (_dir, path) = temp_path();
    let index = index_with(&path, 0, &four());
    index.truncate_to(51).unwrap();
    assert_eq!(index.all_aborted_txns().unwrap(), four());
    assert!(matches!(
        index.append(&AbortedTxn::new(9, 0, 50, 0)),
        Err(index_txn::TxnIndexError::NonMonotonic { .. })
    ));
    // Missing file: nothing to do, nothing created.
    let (_d2, missing) = temp_path();
    TransactionIndex::open(&missing, 0)
        .unwrap()
        .truncate_to(0)
        .unwrap();
    assert!(!missing.exists());
}

#[test]
fn reset_truncates_and_forgets_last_offset() {
    let (_dir, path) = temp_path();
    let index = index_with(&path, 0, &four());
    index.reset().unwrap();
    assert!(path.exists());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    assert!(index.is_empty().unwrap());
    index.append(&AbortedTxn::new(0, 0, 1, 2)).unwrap();
    assert_eq!(index.len().unwrap(), 1);
    // Missing file stays missing.
    let (_d2, missing) = temp_path();
    TransactionIndex::open(&missing, 0)
        .unwrap()
        .reset()
        .unwrap();
    assert!(!missing.exists());
}

/// Deviation: Kafka reports no entries after close although the file holds them. We read
/// the file.
#[test]
fn reads_after_close_still_see_the_file() {
    let (_dir, path) = temp_path();
    let index = index_with(&path, 0, &four());
    index.close();
    assert_eq!(index.all_aborted_txns().unwrap(), four());
    assert_eq!(index.len().unwrap(), 4);
    assert_eq!(
        pids(
            &index
                .collect_aborted_txns(0, 100)
                .unwrap()
                .aborted_transactions
        ),
        vec![0, 1, 2, 3]
    );
    index.sanity_check().unwrap();
    assert!(matches!(
        TransactionIndex::open(&path, 100).unwrap().sanity_check(),
        Err(index_txn::TxnIndexError::CorruptIndex { .. })
    ));
}

/// Deviation: on a closed index, truncate_to and reset act on the file (Kafka: no-ops).
#[test]
fn mutations_after_close_act_on_the_file() {
    let (_dir, path) = temp_path();
    let index = index_with(&path, 0, &four());
    index.close();
    index.truncate_to(15).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 34);
    index.append(&T1).unwrap();
    assert_eq!(index.all_aborted_txns().unwrap(), vec![T0, T1]);
    index.close();
    index.reset().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    index.append(&T0).unwrap();
    assert_eq!(index.all_aborted_txns().unwrap(), vec![T0]);
}
