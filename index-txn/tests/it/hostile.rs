//! Hostile files: random bytes, truncated files, wrong versions, non-files. Every outcome
//! is a value or a typed error, never a panic.

use crate::common::*;
use index_txn::{AbortedTxn, TransactionIndex, TxnIndexError};
use proptest::prelude::*;

fn kafka_version(first_byte: u8) -> i16 {
    first_byte as i8 as i16
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random bytes: reads decode every whole entry or stop with CorruptIndex at the first
    /// entry whose first byte is 1..=0x7f; nothing panics and nothing is an I/O error.
    #[test]
    fn random_bytes_give_typed_results(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        start in -100i64..100,
        fetch in any::<i64>(),
        upper in any::<i64>(),
        truncate in any::<i64>(),
        new_entry in (any::<i64>(), any::<i64>(), any::<i64>(), any::<i64>()),
    ) {
        let (_dir, path) = temp_path();
        std::fs::write(&path, &bytes).unwrap();
        let index = TransactionIndex::open(&path, start).unwrap();
        prop_assert_eq!(index.len().unwrap(), bytes.len() / 34);

        let whole = &bytes[..bytes.len() / 34 * 34];
        let first_bad = whole.chunks(34).position(|c| kafka_version(c[0]) > 0);
        match (index.all_aborted_txns(), first_bad) {
            (Ok(all), None) => {
                prop_assert_eq!(all.len(), whole.len() / 34);
                for (t, c) in all.iter().zip(whole.chunks(34)) {
                    prop_assert_eq!(*t, AbortedTxn::from_bytes(c.try_into().unwrap()));
                }
            }
            (Err(TxnIndexError::CorruptIndex { reason, .. }), Some(i)) => {
                let pos = format!("byte position {}", i * 34);
                prop_assert!(reason.contains(&pos), "{}", reason);
            }
            (other, bad) => prop_assert!(false, "unexpected {:?} (first bad {:?})", other, bad),
        }

        let typed = |r: &Result<(), TxnIndexError>| !matches!(r, Err(TxnIndexError::Io { .. }));
        let r = index.sanity_check();
        prop_assert!(typed(&r), "{:?}", r);
        if bytes.len() % 34 != 0 {
            prop_assert!(matches!(r, Err(TxnIndexError::CorruptIndex { .. })), "{:?}", r);
        }
        let r = index.collect_aborted_txns(fetch, upper).map(|_| ());
        prop_assert!(typed(&r), "{:?}", r);
        let (pid, first, last, lso) = new_entry;
        let r = index.append(&AbortedTxn::new(pid, first, last, lso));
        prop_assert!(typed(&r), "{:?}", r);
        if bytes.len() % 34 != 0 {
            prop_assert!(matches!(r, Err(TxnIndexError::CorruptIndex { .. })), "{:?}", r);
        }
        let r = index.truncate_to(truncate);
        prop_assert!(typed(&r), "{:?}", r);
        // The file is never left with a partial tail by our own writes.
        let len_after = std::fs::metadata(&path).unwrap().len() as usize;
        prop_assert!(len_after % 34 == bytes.len() % 34 || len_after.is_multiple_of(34));
    }

    /// Truncating a valid file at any byte length: whole entries survive, the rest is a
    /// partial tail that blocks appends until repaired.
    #[test]
    fn truncated_valid_file(cut in 0usize..=136) {
        let (_dir, path) = temp_path();
        let bytes = encode(&four());
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let index = TransactionIndex::open(&path, 0).unwrap();
        prop_assert_eq!(index.all_aborted_txns().unwrap(), four()[..cut / 34].to_vec());
        let r = index.append(&AbortedTxn::new(9, 0, 100, 101));
        if cut % 34 == 0 {
            r.unwrap();
        } else {
            prop_assert!(matches!(r, Err(TxnIndexError::CorruptIndex { .. })), "{:?}", r);
            prop_assert_eq!(index.truncate_partial_tail().unwrap(), (cut % 34) as u64);
            index.append(&AbortedTxn::new(9, 0, 100, 101)).unwrap();
        }
        prop_assert_eq!(index.len().unwrap(), cut / 34 + 1);
    }
}

/// Every first byte 0x01..=0x7f is an unsupported version; 0x00 and 0x80..=0xff pass.
#[test]
fn every_version_byte() {
    let (_dir, path) = temp_path();
    for hi in 0..=255u8 {
        let mut b = T0.to_bytes();
        b[0] = hi;
        b[1] = hi.wrapping_mul(7);
        std::fs::write(&path, b).unwrap();
        let r = TransactionIndex::open(&path, 0).unwrap().all_aborted_txns();
        if (1..=0x7f).contains(&hi) {
            assert!(
                matches!(r, Err(TxnIndexError::CorruptIndex { .. })),
                "{hi:#x}"
            );
        } else {
            assert_eq!(r.unwrap()[0].version, kafka_version(hi), "{hi:#x}");
        }
    }
}

/// A directory where the index should be: Io, not a panic or corruption.
#[test]
fn directory_instead_of_file_is_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = TransactionIndex::open(dir.path(), 0).unwrap_err();
    assert!(matches!(err, TxnIndexError::Io { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&dir.path().display().to_string()), "{msg}");
}
