//! The 34-byte `.txnindex` entry: the [`AbortedTxn`] value type and its on-disk form
//! [`RawAbortedTxn`].

use bytemuck::{Pod, Zeroable};
use index_core::codec::{I16Be, I64Be};

/// One aborted transaction, as recorded in the transaction index of the segment that holds
/// its ABORT control marker (docs/kafka-behaviour.md#txn-entry, docs/kafka-behaviour.md#txn-written-on-abort).
///
/// All offsets are absolute Kafka log offsets (`i64`), not relative to the segment base.
///
/// | field | meaning |
/// |---|---|
/// | `version` | entry format version; [`AbortedTxn::CURRENT_VERSION`] (0) for everything we write |
/// | `producer_id` | the producer whose transaction was aborted |
/// | `first_offset` | first offset of the transaction (may lie in an earlier segment) |
/// | `last_offset` | offset of the ABORT control marker |
/// | `last_stable_offset` | the partition's LSO when the abort was written |
///
/// Mirrors Kafka's `AbortedTxn`. When decoded from a file, `version` holds what Kafka's
/// reader sees: the signed value of the **first byte only** (see [`RawAbortedTxn::decode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AbortedTxn {
    /// Entry format version. Ignored by [`AbortedTxn::to_raw`], which always writes
    /// [`AbortedTxn::CURRENT_VERSION`].
    pub version: i16,
    /// Producer id of the aborted transaction.
    pub producer_id: i64,
    /// First offset of the aborted transaction (absolute).
    pub first_offset: i64,
    /// Offset of the ABORT marker (absolute); strictly increasing within one index.
    pub last_offset: i64,
    /// Last stable offset of the partition when the abort was written (absolute).
    pub last_stable_offset: i64,
}

impl AbortedTxn {
    /// The only entry version Kafka (and this crate) writes or fully accepts: 0.
    pub const CURRENT_VERSION: i16 = 0;

    /// Size of one encoded entry, in bytes (34).
    pub const SIZE: usize = RawAbortedTxn::SIZE;

    /// Builds a version-0 entry. Arguments are absolute offsets, in Kafka's order
    /// `(producerId, firstOffset, lastOffset, lastStableOffset)`.
    pub const fn new(
        producer_id: i64,
        first_offset: i64,
        last_offset: i64,
        last_stable_offset: i64,
    ) -> Self {
        Self {
            version: Self::CURRENT_VERSION,
            producer_id,
            first_offset,
            last_offset,
            last_stable_offset,
        }
    }

    /// Whether Kafka's reader accepts this entry's version: `version <= 0`.
    ///
    /// Kafka only rejects versions *greater* than the current one, so negative values
    /// (a first byte `0x80..=0xff`) pass, exactly as in Kafka (docs/kafka-behaviour.md#txn-entry quirk).
    pub const fn is_supported_version(&self) -> bool {
        self.version <= Self::CURRENT_VERSION
    }

    /// The on-disk form of this entry. The version field is always written as `0x0000`,
    /// whatever `self.version` holds (Kafka writes its current version too).
    pub const fn to_raw(&self) -> RawAbortedTxn {
        RawAbortedTxn {
            version: I16Be::new(Self::CURRENT_VERSION),
            producer_id: I64Be::new(self.producer_id),
            first_offset: I64Be::new(self.first_offset),
            last_offset: I64Be::new(self.last_offset),
            last_stable_offset: I64Be::new(self.last_stable_offset),
        }
    }

    /// The 34 big-endian bytes of this entry (version `0x0000`), as appended to the file.
    pub fn to_bytes(&self) -> [u8; RawAbortedTxn::SIZE] {
        bytemuck::cast(self.to_raw())
    }

    /// Decodes 34 bytes with Kafka's version quirk (see [`RawAbortedTxn::decode`]).
    ///
    /// Never fails: check [`AbortedTxn::is_supported_version`] on the result. The
    /// [`TransactionIndex`](crate::TransactionIndex) does this and reports unsupported
    /// versions as [`TxnIndexError::CorruptIndex`](crate::TxnIndexError::CorruptIndex).
    pub fn from_bytes(bytes: &[u8; RawAbortedTxn::SIZE]) -> Self {
        bytemuck::pod_read_unaligned::<RawAbortedTxn>(bytes).decode()
    }
}

/// One `.txnindex` entry exactly as laid out on disk: 34 bytes, big-endian, alignment 1,
/// no padding (docs/kafka-behaviour.md#txn-entry).
///
/// | byte offset | size | field |
/// |---|---|---|
/// | 0 | 2 | version (`i16`) |
/// | 2 | 8 | producer id (`i64`) |
/// | 10 | 8 | first offset (`i64`) |
/// | 18 | 8 | last offset (`i64`) |
/// | 26 | 8 | last stable offset (`i64`) |
///
/// Being [`Pod`] with alignment 1, a byte buffer read from the file can be viewed as
/// `&[RawAbortedTxn]` with [`bytemuck::cast_slice`] at any offset.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Pod, Zeroable)]
#[repr(C)]
pub struct RawAbortedTxn {
    /// Version, 2 bytes. Kafka's reader only looks at the first of them.
    pub version: I16Be,
    /// Producer id, 8 bytes.
    pub producer_id: I64Be,
    /// First offset of the transaction, 8 bytes.
    pub first_offset: I64Be,
    /// Offset of the ABORT marker, 8 bytes.
    pub last_offset: I64Be,
    /// Last stable offset at abort time, 8 bytes.
    pub last_stable_offset: I64Be,
}

const _: () = assert!(core::mem::size_of::<RawAbortedTxn>() == 34);
const _: () = assert!(core::mem::align_of::<RawAbortedTxn>() == 1);

impl RawAbortedTxn {
    /// Size of one entry on disk, in bytes.
    pub const SIZE: usize = 34;

    /// The version as Kafka's reader sees it: the **first byte only**, sign-extended
    /// (Kafka reads it with `ByteBuffer.get`, a signed byte).
    ///
    /// So bytes `00 01` read as version 0 (accepted), `01 00` as version 1 (rejected), and
    /// `ff 00` as version -1 (accepted, as in Kafka). *(docs/kafka-behaviour.md#txn-entry, verified quirk)*
    pub const fn kafka_version(&self) -> i16 {
        let [high, _low] = self.version.to_bytes();
        high as i8 as i16
    }

    /// Decodes into an [`AbortedTxn`] whose `version` is [`RawAbortedTxn::kafka_version`].
    pub const fn decode(&self) -> AbortedTxn {
        AbortedTxn {
            version: self.kafka_version(),
            producer_id: self.producer_id.get(),
            first_offset: self.first_offset.get(),
            last_offset: self.last_offset.get(),
            last_stable_offset: self.last_stable_offset.get(),
        }
    }
}

impl From<&AbortedTxn> for RawAbortedTxn {
    fn from(txn: &AbortedTxn) -> Self {
        txn.to_raw()
    }
}

impl From<AbortedTxn> for RawAbortedTxn {
    fn from(txn: AbortedTxn) -> Self {
        txn.to_raw()
    }
}

impl From<&RawAbortedTxn> for AbortedTxn {
    fn from(raw: &RawAbortedTxn) -> Self {
        raw.decode()
    }
}

impl From<RawAbortedTxn> for AbortedTxn {
    fn from(raw: RawAbortedTxn) -> Self {
        raw.decode()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_34_bytes_in_field_order() {
        let bytes = AbortedTxn::new(1, 2, 3, 4).to_bytes();
        let mut expected = [0u8; 34];
        expected[9] = 1;
        expected[17] = 2;
        expected[25] = 3;
        expected[33] = 4;
        assert_eq!(bytes, expected);
    }

    #[test]
    fn version_from_first_byte_only() {
        let mut bytes = AbortedTxn::new(5, 6, 7, 8).to_bytes();
        bytes[0] = 0x00;
        bytes[1] = 0x01;
        assert_eq!(AbortedTxn::from_bytes(&bytes).version, 0);
        bytes[0] = 0x01;
        bytes[1] = 0x00;
        assert_eq!(AbortedTxn::from_bytes(&bytes).version, 1);
        assert!(!AbortedTxn::from_bytes(&bytes).is_supported_version());
        bytes[0] = 0xff;
        assert_eq!(AbortedTxn::from_bytes(&bytes).version, -1);
        assert!(AbortedTxn::from_bytes(&bytes).is_supported_version());
    }

    #[test]
    fn to_raw_always_writes_version_zero() {
        let txn = AbortedTxn {
            version: 7,
            ..AbortedTxn::new(1, 2, 3, 4)
        };
        assert_eq!(txn.to_bytes()[..2], [0, 0]);
    }
}
