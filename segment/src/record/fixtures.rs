//! The record fixtures of the acceptance cases ("Record fixtures"),
//! for tests of this crate and of crates that embed it.

use super::builder::{BatchBuilder, LegacyMessage};

/// `V1(o, values…)`: consecutive magic 1 uncompressed messages with offsets `o, o+1, …`,
/// null keys, the given values and timestamp `o * 10` for every message (Kafka's
/// `LogSegmentTest.records` helper). `"hello"` gives a 39-byte entry.
pub fn v1(offset: i64, values: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, v) in values.iter().enumerate() {
        LegacyMessage::v1(
            offset.wrapping_add(i as i64),
            offset.wrapping_mul(10),
            v.as_bytes(),
        )
        .write_to(&mut out)
        .expect("a small magic 1 message always encodes");
    }
    out
}

/// `V2(o, ts)`: one magic v2 batch at base offset `o` with partition leader epoch 0 and one
/// record (null key, value `"hello"`, no headers, timestamp `ts`) — 73 bytes; with
/// `o = 0, ts = 1000` it is the vector of acceptance case 42.
pub fn v2(offset: i64, timestamp: i64) -> Vec<u8> {
    BatchBuilder::new(offset)
        .partition_leader_epoch(0)
        .record(timestamp, None, Some(b"hello"))
        .build()
        .expect("a one-record batch always encodes")
}
