//! Control records: [`ControlRecordType`] (the key of every record of a control batch) and
//! [`EndTransactionMarker`] (the value of an ABORT/COMMIT marker), docs/kafka-behaviour.md#control-batches.
//!
//! Key layout: `int16 version, int16 type` (4 bytes, version 0). Value layout of an end
//! transaction marker: `int16 version, int32 coordinatorEpoch` (6 bytes, version 0).
//! Both are big-endian and viewed through `#[repr(C)]` [`bytemuck::Pod`] structs.

use bytemuck::{Pod, Zeroable};
use index_core::codec::{I16Be, I32Be};

use super::RecordError;

/// On-disk layout of a control record key (4 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct RawControlKey {
    /// Key version; 0 is current, negative is invalid, larger versions are read as 0.
    pub version: I16Be,
    /// Control type id, see [`ControlRecordType`].
    pub control_type: I16Be,
}
const _: () = assert!(core::mem::size_of::<RawControlKey>() == 4);
const _: () = assert!(core::mem::align_of::<RawControlKey>() == 1);

/// On-disk layout of an end-transaction marker value (6 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct RawEndTxnMarkerValue {
    /// Value version; 0 is current, negative is invalid.
    pub version: I16Be,
    /// Epoch of the transaction coordinator that wrote the marker.
    pub coordinator_epoch: I32Be,
}
const _: () = assert!(core::mem::size_of::<RawEndTxnMarkerValue>() == 6);
const _: () = assert!(core::mem::align_of::<RawEndTxnMarkerValue>() == 1);

/// The type of a control record, from its key (Kafka `ControlRecordType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    /// Id 0: transaction abort marker.
    Abort,
    /// Id 1: transaction commit marker.
    Commit,
    /// Id 2: KRaft leader change message.
    LeaderChange,
    /// Id 3: first record of a KRaft snapshot.
    SnapshotHeader,
    /// Id 4: last record of a KRaft snapshot.
    SnapshotFooter,
    /// Id 5: KRaft version record.
    KraftVersion,
    /// Id 6: KRaft voters record.
    KraftVoters,
    /// Any other id; Kafka readers ignore such records.
    Unknown(i16),
}

impl ControlRecordType {
    /// Current version of the control record key.
    pub const CURRENT_KEY_VERSION: i16 = 0;
    /// Size of a control record key in bytes.
    pub const KEY_SIZE: usize = core::mem::size_of::<RawControlKey>();

    /// The type id written in the key.
    pub fn id(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
            ControlRecordType::LeaderChange => 2,
            ControlRecordType::SnapshotHeader => 3,
            ControlRecordType::SnapshotFooter => 4,
            ControlRecordType::KraftVersion => 5,
            ControlRecordType::KraftVoters => 6,
            ControlRecordType::Unknown(id) => id,
        }
    }

    /// Maps a type id; ids outside 0–6 give [`ControlRecordType::Unknown`].
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            2 => ControlRecordType::LeaderChange,
            3 => ControlRecordType::SnapshotHeader,
            4 => ControlRecordType::SnapshotFooter,
            5 => ControlRecordType::KraftVersion,
            6 => ControlRecordType::KraftVoters,
            other => ControlRecordType::Unknown(other),
        }
    }

    /// Kafka's upper-case name (`ABORT`, `COMMIT`, `LEADER_CHANGE`, …, `UNKNOWN`).
    pub fn name(self) -> &'static str {
        match self {
            ControlRecordType::Abort => "ABORT",
            ControlRecordType::Commit => "COMMIT",
            ControlRecordType::LeaderChange => "LEADER_CHANGE",
            ControlRecordType::SnapshotHeader => "SNAPSHOT_HEADER",
            ControlRecordType::SnapshotFooter => "SNAPSHOT_FOOTER",
            ControlRecordType::KraftVersion => "KRAFT_VERSION",
            ControlRecordType::KraftVoters => "KRAFT_VOTERS",
            ControlRecordType::Unknown(_) => "UNKNOWN",
        }
    }

    /// Parses a control record key (Kafka `ControlRecordType.parse`).
    ///
    /// `position` is only used for the error. Key versions greater than 0 are parsed as
    /// version 0; extra bytes after the first 4 are ignored.
    ///
    /// # Errors
    /// [`RecordError::InvalidRecord`] when `key` is `None`, shorter than 4 bytes, or has a
    /// negative version.
    pub fn parse_key(key: Option<&[u8]>, position: u64) -> Result<Self, RecordError> {
        let key =
            key.ok_or_else(|| RecordError::invalid(position, "control record has a null key"))?;
        let Some(raw) = key.get(..Self::KEY_SIZE) else {
            return Err(RecordError::invalid(
                position,
                format!(
                    "invalid value size found for control record key: must have at least {} bytes, but found only {}",
                    Self::KEY_SIZE,
                    key.len()
                ),
            ));
        };
        let raw: RawControlKey = bytemuck::pod_read_unaligned(raw);
        let version = raw.version.get();
        if version < 0 {
            return Err(RecordError::invalid(
                position,
                format!("invalid version found for control record: {version}; may indicate data corruption"),
            ));
        }
        Ok(Self::from_id(raw.control_type.get()))
    }

    /// The 4-byte key (version 0) for this type.
    pub fn key_bytes(self) -> [u8; 4] {
        let raw = RawControlKey {
            version: I16Be::new(Self::CURRENT_KEY_VERSION),
            control_type: I16Be::new(self.id()),
        };
        bytemuck::cast(raw)
    }
}

/// The content of an ABORT or COMMIT control record (Kafka `EndTransactionMarker`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EndTransactionMarker {
    /// [`ControlRecordType::Abort`] or [`ControlRecordType::Commit`].
    pub control_type: ControlRecordType,
    /// Epoch of the transaction coordinator that wrote the marker.
    pub coordinator_epoch: i32,
}

impl EndTransactionMarker {
    /// Current version of the marker value.
    pub const CURRENT_VALUE_VERSION: i16 = 0;
    /// Size of the marker value in bytes.
    pub const VALUE_SIZE: usize = core::mem::size_of::<RawEndTxnMarkerValue>();

    /// Builds a marker; fails unless `control_type` is ABORT or COMMIT.
    ///
    /// # Errors
    /// [`RecordError::InvalidArgument`] for any other control type.
    pub fn new(
        control_type: ControlRecordType,
        coordinator_epoch: i32,
    ) -> Result<Self, RecordError> {
        match control_type {
            ControlRecordType::Abort | ControlRecordType::Commit => Ok(EndTransactionMarker {
                control_type,
                coordinator_epoch,
            }),
            other => Err(RecordError::argument(format!(
                "invalid control record type for end transaction marker: {}",
                other.name()
            ))),
        }
    }

    /// Decodes a marker from a control record's key and value
    /// (Kafka `EndTransactionMarker.deserialize`). Extra value bytes are ignored; value
    /// versions above 0 are read as version 0.
    ///
    /// # Errors
    /// [`RecordError::InvalidRecord`] for a bad key (see [`ControlRecordType::parse_key`]), a
    /// null or shorter-than-6-bytes value, or a negative value version;
    /// [`RecordError::InvalidArgument`] when the key type is not ABORT/COMMIT.
    pub fn decode(
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        position: u64,
    ) -> Result<Self, RecordError> {
        let control_type = ControlRecordType::parse_key(key, position)?;
        if !matches!(
            control_type,
            ControlRecordType::Abort | ControlRecordType::Commit
        ) {
            return Err(RecordError::argument(format!(
                "invalid control record type for end transaction marker: {}",
                control_type.name()
            )));
        }
        let value = value.unwrap_or(&[]);
        let Some(raw) = value.get(..Self::VALUE_SIZE) else {
            return Err(RecordError::invalid(
                position,
                format!(
                    "invalid value size found for end transaction marker: must have at least {} bytes, but found only {}",
                    Self::VALUE_SIZE,
                    value.len()
                ),
            ));
        };
        let raw: RawEndTxnMarkerValue = bytemuck::pod_read_unaligned(raw);
        let version = raw.version.get();
        if version < 0 {
            return Err(RecordError::invalid(
                position,
                format!("invalid version found for end transaction marker: {version}; may indicate data corruption"),
            ));
        }
        Ok(EndTransactionMarker {
            control_type,
            coordinator_epoch: raw.coordinator_epoch.get(),
        })
    }

    /// The 6-byte value (version 0).
    pub fn value_bytes(&self) -> [u8; 6] {
        let raw = RawEndTxnMarkerValue {
            version: I16Be::new(Self::CURRENT_VALUE_VERSION),
            coordinator_epoch: I32Be::new(self.coordinator_epoch),
        };
        bytemuck::cast(raw)
    }
}
