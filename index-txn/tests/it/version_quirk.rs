//! Acceptance case 38: Kafka reads the version from the entry's first byte only.

use crate::common::*;
use index_txn::{AbortedTxn, TransactionIndex, TxnIndexError};

fn with_version(txn: AbortedTxn, v: [u8; 2]) -> Vec<u8> {
    let mut b = txn.to_bytes().to_vec();
    b[..2].copy_from_slice(&v);
    b
}

fn assert_bad_version(err: TxnIndexError, version: i16, pos: u64) {
    match err {
        TxnIndexError::CorruptIndex { reason, .. } => {
            assert!(
                reason.contains(&format!("unexpected aborted transaction version {version}")),
                "{reason}"
            );
            assert!(reason.contains(&format!("byte position {pos}")), "{reason}");
        }
        other => panic!("expected CorruptIndex, got {other:?}"),
    }
}

/// Acceptance case 38: entry 1 has version bytes `00 01` (read as 0), entry 2 `01 00` (version 1).
#[test]
fn case38_version_field_quirk() {
    let (_dir, path) = temp_path();
    let mut bytes = with_version(T0, [0x00, 0x01]);
    bytes.extend(with_version(T1, [0x01, 0x00]));
    std::fs::write(&path, &bytes).unwrap();
    let index = TransactionIndex::open(&path, 0).unwrap();

    // Iteration yields entry 1 (version 0), then fails at entry 2.
    assert_bad_version(index.all_aborted_txns().unwrap_err(), 1, 34);
    assert_bad_version(index.collect_aborted_txns(0, 100).unwrap_err(), 1, 34);
    // A search that stops at entry 1 never reaches entry 2 (Kafka iterates lazily); entry 1
    // reads as version 0 although its version bytes are `00 01`.
    let res = index.collect_aborted_txns(0, 11).unwrap();
    assert_eq!(res.aborted_transactions, vec![T0]);
    assert_eq!(res.aborted_transactions[0].version, 0);
    assert!(res.is_complete);

    // A file holding only the `00 01` entry iterates fine.
    std::fs::write(&path, with_version(T0, [0x00, 0x01])).unwrap();
    let index = TransactionIndex::open(&path, 0).unwrap();
    let all = index.all_aborted_txns().unwrap();
    assert_eq!(all, vec![T0]);
    assert_eq!(all[0].version, 0);
    index.sanity_check().unwrap();
}

/// Kafka only rejects versions greater than 0: a negative first byte passes.
#[test]
fn negative_version_byte_is_accepted_like_kafka() {
    let (_dir, path) = temp_path();
    std::fs::write(&path, with_version(T0, [0xff, 0x00])).unwrap();
    let all = TransactionIndex::open(&path, 0)
        .unwrap()
        .all_aborted_txns()
        .unwrap();
    assert_eq!(all[0].version, -1);
    assert_eq!(all[0].last_offset, 10);
}

/// Appending after a last entry with an unsupported version is refused (its last offset
/// cannot be trusted). `truncate_to` fails like Kafka's once its scan reaches that entry;
/// truncating at or before an earlier entry, or `reset`, repairs the file.
#[test]
fn append_after_bad_version_entry_is_corrupt() {
    let (_dir, path) = temp_path();
    let mut bytes = T0.to_bytes().to_vec();
    bytes.extend(with_version(T1, [0x02, 0x00]));
    std::fs::write(&path, &bytes).unwrap();
    let index = TransactionIndex::open(&path, 0).unwrap();
    assert_bad_version(index.append(&T2).unwrap_err(), 2, 34);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 68);
    assert_bad_version(index.truncate_to(15).unwrap_err(), 2, 34);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 68);
    index.truncate_to(10).unwrap(); // stops at T0, before the bad entry
    assert!(index.is_empty().unwrap());
    index.append(&T0).unwrap();
    index.append(&T2).unwrap();
    assert_eq!(index.all_aborted_txns().unwrap(), vec![T0, T2]);
}
