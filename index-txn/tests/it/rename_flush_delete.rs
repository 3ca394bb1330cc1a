//! Acceptance case 41: rename, parent dir, flush, delete.

use crate::common::*;
use index_txn::{AbortedTxn, TransactionIndex};

/// Acceptance case 41 (testRenameIndex): appends continue in the renamed file.
#[test]
fn case41_rename_index() {
    let (dir, path) = temp_path();
    let index = index_with(&path, 0, &[AbortedTxn::new(0, 0, 10, 2)]);
    let renamed = dir.path().join("00000000000000000000.txnindex.deleted");
    index.rename_to(&renamed).unwrap();
    assert_eq!(index.path(), renamed);
    assert!(!path.exists());
    index.append(&AbortedTxn::new(1, 5, 15, 16)).unwrap();
    let res = index.collect_aborted_txns(0, 100).unwrap();
    let firsts: Vec<i64> = res
        .aborted_transactions
        .iter()
        .map(|t| t.first_offset)
        .collect();
    assert_eq!(firsts, vec![0, 5]);
    assert_eq!(std::fs::metadata(&renamed).unwrap().len(), 68);
    // Reads after close use the new path.
    index.close();
    assert_eq!(index.len().unwrap(), 2);
}

/// Renaming a file that does not exist only records the new path.
#[test]
fn rename_missing_file_updates_path_only() {
    let (dir, path) = temp_path();
    let index = TransactionIndex::open(&path, 0).unwrap();
    let renamed = dir.path().join("other.txnindex");
    index.rename_to(&renamed).unwrap();
    assert_eq!(index.path(), renamed);
    assert!(!renamed.exists());
    index.append(&T0).unwrap();
    assert!(renamed.exists() && !path.exists());
}

/// A failed rename keeps the old path.
#[test]
fn failed_rename_keeps_path() {
    let (dir, path) = temp_path();
    let index = index_with(&path, 0, &[T0]);
    let bad = dir.path().join("no-such-dir").join("x.txnindex");
    let err = index.rename_to(&bad).unwrap_err();
    assert!(
        matches!(err, index_txn::TxnIndexError::Io { .. }),
        "{err:?}"
    );
    assert_eq!(index.path(), path);
    index.append(&T1).unwrap();
    assert_eq!(index.len().unwrap(), 2);
}

/// Acceptance case 41 (testUpdateParentDir): path only.
#[test]
fn case41_update_parent_dir() {
    let (_dir, path) = temp_path();
    let index = TransactionIndex::open(&path, 0).unwrap();
    let other = tempfile::tempdir().unwrap();
    index.update_parent_dir(other.path());
    assert_eq!(index.path().parent().unwrap(), other.path());
    assert_eq!(index.path().file_name(), path.file_name());
}

/// Acceptance case 41 (testFlush): flush on a missing file creates nothing; after an append it syncs
/// a non-empty file.
#[test]
fn case41_flush() {
    let (_dir, path) = temp_path();
    let index = TransactionIndex::open(&path, 0).unwrap();
    index.flush().unwrap();
    assert!(!path.exists());
    index.append(&AbortedTxn::new(0, 0, 10, 2)).unwrap();
    index.flush().unwrap();
    assert_ne!(std::fs::metadata(&path).unwrap().len(), 0);
    index.close();
    index.flush().unwrap(); // closed: no-op
}

/// Acceptance case 41 (testDeleteIfExists).
#[test]
fn case41_delete_if_exists() {
    let (_dir, path) = temp_path();
    let index = index_with(&path, 0, &[T0]);
    assert!(path.exists());
    assert!(index.delete_if_exists().unwrap());
    assert!(!path.exists());
    assert!(!index.delete_if_exists().unwrap());
    // Reads see an empty index; an append starts a fresh file with any last offset.
    assert_eq!(index.all_aborted_txns().unwrap(), vec![]);
    index.append(&AbortedTxn::new(5, 0, 3, 4)).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 34);
}
