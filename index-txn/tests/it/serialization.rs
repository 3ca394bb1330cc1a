//! Acceptance case 37: entry serialisation, byte for byte.

use crate::common::*;
use index_txn::{AbortedTxn, RawAbortedTxn, TransactionIndex};
use proptest::prelude::*;

/// The verified bytes of AbortedTxn(pid 0, first 0, last 10, lso 11).
const T0_BYTES: [u8; 34] = [
    0x00, 0x00, // version
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // producer id 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // first offset 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, // last offset 10
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0b, // last stable offset 11
];

/// Acceptance case 37: serde of AbortedTxn(983493,137,299,200), the exact 34 bytes of (0,0,10,11), and
/// two appends making a 68-byte file.
#[test]
fn case37_entry_serialisation() {
    let txn = AbortedTxn::new(983493, 137, 299, 200);
    let back = AbortedTxn::from_bytes(&txn.to_bytes());
    assert_eq!(back.version, 0);
    assert_eq!(back.producer_id, 983493);
    assert_eq!(back.first_offset, 137);
    assert_eq!(back.last_offset, 299);
    assert_eq!(back.last_stable_offset, 200);
    assert_eq!(back, txn);

    assert_eq!(AbortedTxn::new(0, 0, 10, 11).to_bytes(), T0_BYTES);
    assert_eq!(std::mem::size_of::<RawAbortedTxn>(), 34);
    assert_eq!(std::mem::align_of::<RawAbortedTxn>(), 1);

    let (_dir, path) = temp_path();
    let index = TransactionIndex::open(&path, 0).unwrap();
    index.append(&AbortedTxn::new(0, 0, 10, 11)).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), T0_BYTES);
    index.append(&txn).unwrap();
    let file = std::fs::read(&path).unwrap();
    assert_eq!(file.len(), 68);
    assert_eq!(&file[..34], &T0_BYTES);
    assert_eq!(&file[34..], &txn.to_bytes());
}

/// A file written by Kafka (the verified bytes) reads back as the entry.
#[test]
fn reads_kafka_written_bytes() {
    let (_dir, path) = temp_path();
    std::fs::write(&path, T0_BYTES).unwrap();
    let index = TransactionIndex::open(&path, 0).unwrap();
    assert_eq!(index.all_aborted_txns().unwrap(), vec![T0]);
}

/// Negative values are two's complement big-endian.
#[test]
fn negative_fields_round_trip() {
    let txn = AbortedTxn::new(-1, i64::MIN, i64::MAX, -2);
    let bytes = txn.to_bytes();
    assert_eq!(&bytes[2..10], &[0xff; 8]);
    assert_eq!(&bytes[10..18], &[0x80, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(AbortedTxn::from_bytes(&bytes), txn);
    let raw: RawAbortedTxn = bytemuck::cast(bytes);
    assert_eq!(raw.decode(), txn);
    assert_eq!(RawAbortedTxn::from(&txn), raw);
}

proptest! {
    #[test]
    fn round_trip(pid: i64, first: i64, last: i64, lso: i64) {
        let txn = AbortedTxn::new(pid, first, last, lso);
        prop_assert_eq!(AbortedTxn::from_bytes(&txn.to_bytes()), txn);
    }
}
