//! Acceptance case 40: partial trailing bytes. Kafka appends after them and loses the entry; we
//! refuse to append until the tail is repaired.

use crate::common::*;
use index_txn::{AbortedTxn, TransactionIndex, TxnIndexError};

/// The 3-entry, 102-byte file acceptance case 40 builds on (acceptance case 39 is not in the acceptance cases; any
/// three valid entries give the same 102-byte layout).
fn three() -> Vec<AbortedTxn> {
    vec![T0, T1, T2]
}

/// Acceptance case 40: 102 bytes + 20 zero bytes. Reopened index reports 3 entries; an append does
/// not write at byte 122 (where Kafka writes it and loses it) but fails with CorruptIndex.
#[test]
fn case40_partial_trailing_bytes() {
    let (_dir, path) = temp_path();
    let mut bytes = encode(&three());
    assert_eq!(bytes.len(), 102);
    bytes.extend_from_slice(&[0u8; 20]);
    std::fs::write(&path, &bytes).unwrap();

    let index = TransactionIndex::open(&path, 0).unwrap();
    assert_eq!(index.len().unwrap(), 3);
    assert_eq!(index.size_in_bytes().unwrap(), 122);
    assert_eq!(index.all_aborted_txns().unwrap(), three());
    assert_eq!(
        pids(
            &index
                .collect_aborted_txns(0, 1000)
                .unwrap()
                .aborted_transactions
        ),
        vec![0, 1, 2]
    );

    // What Kafka does: the entry lands at byte 122 and the 4th decoded entry is garbage.
    let new_entry = AbortedTxn::new(9, 40, 60, 61);
    let mut kafka_file = bytes.clone();
    kafka_file.extend_from_slice(&new_entry.to_bytes());
    let garbage = AbortedTxn::from_bytes(kafka_file[102..136].try_into().unwrap());
    assert_eq!(garbage, AbortedTxn::new(0, 0, 0, 38_654_705_664));

    // What we do: refuse, leave the file untouched.
    match index.append(&new_entry).unwrap_err() {
        TxnIndexError::CorruptIndex { path: p, reason } => {
            assert_eq!(p, path);
            assert!(reason.contains("partial trailing entry"), "{reason}");
            assert!(reason.contains("122 bytes"), "{reason}");
        }
        other => panic!("expected CorruptIndex, got {other:?}"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), bytes);

    // Explicit repair, then the append lands aligned.
    assert_eq!(index.truncate_partial_tail().unwrap(), 20);
    assert_eq!(index.truncate_partial_tail().unwrap(), 0);
    index.append(&new_entry).unwrap();
    let mut expected = three();
    expected.push(new_entry);
    assert_eq!(index.all_aborted_txns().unwrap(), expected);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 136);
    index.sanity_check().unwrap();
}

/// `truncate_to` at an existing entry also removes the tail; `reset` empties the file.
#[test]
fn truncate_to_and_reset_remove_partial_tail() {
    let (_dir, path) = temp_path();
    let mut bytes = encode(&three());
    bytes.extend_from_slice(&[7u8; 33]);
    std::fs::write(&path, &bytes).unwrap();
    let index = TransactionIndex::open(&path, 0).unwrap();
    // No entry has last offset >= 100: nothing changes (Kafka) and appends stay refused.
    index.truncate_to(100).unwrap();
    assert_eq!(index.size_in_bytes().unwrap(), 135);
    assert!(matches!(
        index.append(&T3),
        Err(TxnIndexError::CorruptIndex { .. })
    ));
    index.truncate_to(35).unwrap();
    assert_eq!(index.size_in_bytes().unwrap(), 68);
    index.append(&T3).unwrap();
    assert_eq!(index.all_aborted_txns().unwrap(), vec![T0, T1, T3]);

    std::fs::write(&path, &bytes).unwrap();
    let index = TransactionIndex::open(&path, 0).unwrap();
    index.reset().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    index.append(&T0).unwrap();
    assert_eq!(index.all_aborted_txns().unwrap(), vec![T0]);
}

/// A file shorter than one entry: no entries, appends refused, repair empties it.
#[test]
fn file_shorter_than_one_entry() {
    let (_dir, path) = temp_path();
    std::fs::write(&path, [0u8; 33]).unwrap();
    let index = TransactionIndex::open(&path, 0).unwrap();
    assert!(index.is_empty().unwrap());
    assert_eq!(index.all_aborted_txns().unwrap(), vec![]);
    assert!(matches!(
        index.sanity_check(),
        Err(index_txn::TxnIndexError::CorruptIndex { .. })
    ));
    assert!(matches!(
        index.append(&T0),
        Err(TxnIndexError::CorruptIndex { .. })
    ));
    assert_eq!(index.truncate_partial_tail().unwrap(), 33);
    index.append(&T0).unwrap();
    assert_eq!(index.all_aborted_txns().unwrap(), vec![T0]);
}
