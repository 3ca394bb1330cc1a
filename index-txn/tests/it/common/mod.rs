//! Helpers shared by the integration tests (cases from the acceptance cases of `docs/kafka-behaviour.md#acceptance-cases`).

use std::path::PathBuf;

use index_txn::{AbortedTxn, TransactionIndex};
use tempfile::TempDir;

/// T0..T3 of acceptance cases 32 and 35: (pid, first, last, lso).
pub const T0: AbortedTxn = AbortedTxn::new(0, 0, 10, 11);
pub const T1: AbortedTxn = AbortedTxn::new(1, 5, 15, 13);
pub const T2: AbortedTxn = AbortedTxn::new(2, 18, 35, 25);
pub const T3: AbortedTxn = AbortedTxn::new(3, 32, 50, 40);

/// The four entries of acceptance case 32/35, in append order.
pub fn four() -> Vec<AbortedTxn> {
    vec![T0, T1, T2, T3]
}

/// A fresh temporary directory and the path of a (not yet existing) index file in it.
pub fn temp_path() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("00000000000000000000.txnindex");
    (dir, path)
}

/// Opens `TX(start)` at `path` and appends `entries`.
pub fn index_with(path: &std::path::Path, start: i64, entries: &[AbortedTxn]) -> TransactionIndex {
    let index = TransactionIndex::open(path, start).expect("open");
    for e in entries {
        index.append(e).expect("append");
    }
    index
}

/// Producer ids of a list of entries.
pub fn pids(txns: &[AbortedTxn]) -> Vec<i64> {
    txns.iter().map(|t| t.producer_id).collect()
}

/// The bytes of `entries`, concatenated (what the index writes).
pub fn encode(entries: &[AbortedTxn]) -> Vec<u8> {
    entries.iter().flat_map(|e| e.to_bytes()).collect()
}
