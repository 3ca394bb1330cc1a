//! Kafka's remote segment metadata (KIP-405, `org.apache.kafka.server.log.remote.storage`):
//! [`RemoteLogSegmentId`], [`RemoteLogSegmentMetadata`], its updates and the
//! [`RemoteLogSegmentState`] machine (`docs/kafka-behaviour.md#remote-segment-metadata`).

use std::collections::BTreeMap;
use std::fmt;

use crate::error::SegmentError;
use crate::tier::SegmentUpload;

/// Kafka's `Uuid`: 128 bits, as two `i64` halves (most significant first). Displayed as
/// Kafka's `toString`: the 16 bytes big-endian in URL-safe base64 without padding (22
/// characters). Random generation is the caller's (Kafka's `Uuid.randomUuid` also avoids
/// the zero id, the metadata topic's id and ids whose text starts with `-`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uuid {
    /// The most significant 64 bits.
    pub most_significant_bits: i64,
    /// The least significant 64 bits.
    pub least_significant_bits: i64,
}

impl Uuid {
    /// Kafka's `Uuid.ZERO_UUID`.
    pub const ZERO: Uuid = Uuid {
        most_significant_bits: 0,
        least_significant_bits: 0,
    };

    /// The id of the 16 bytes `b`, big-endian (Kafka's wire and text order).
    pub fn from_bytes(b: [u8; 16]) -> Uuid {
        let mut hi = [0u8; 8];
        let mut lo = [0u8; 8];
        hi.copy_from_slice(&b[..8]);
        lo.copy_from_slice(&b[8..]);
        Uuid {
            most_significant_bits: i64::from_be_bytes(hi),
            least_significant_bits: i64::from_be_bytes(lo),
        }
    }

    /// The 16 bytes, big-endian.
    pub fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.most_significant_bits.to_be_bytes());
        b[8..].copy_from_slice(&self.least_significant_bits.to_be_bytes());
        b
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let b = self.to_bytes();
        let mut s = String::with_capacity(22);
        for chunk in b.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |acc, (i, &x)| acc | u32::from(x) << (16 - 8 * i));
            let chars = chunk.len() + 1;
            for i in 0..chars {
                s.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        f.write_str(&s)
    }
}

/// Kafka's `TopicIdPartition`: a topic's id and name and a partition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TopicIdPartition {
    /// The topic's id (`partition.metadata`'s `topic_id`).
    pub topic_id: Uuid,
    /// The topic's name.
    pub topic: String,
    /// The partition number.
    pub partition: i32,
}

/// Kafka's `RemoteLogSegmentId`: the partition and a UUID unique to one upload of one
/// segment (Kafka's `generateNew` draws it at random; a retried copy gets a new one).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RemoteLogSegmentId {
    /// The partition the segment belongs to.
    pub topic_id_partition: TopicIdPartition,
    /// The upload's id.
    pub id: Uuid,
}

/// Kafka's `RemoteLogSegmentState`, with its ids (`id()`/`forId`)
/// (`docs/kafka-behaviour.md#remote-segment-metadata`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RemoteLogSegmentState {
    /// 0: the copy to remote storage started.
    CopySegmentStarted,
    /// 1: the segment is in remote storage.
    CopySegmentFinished,
    /// 2: its deletion from remote storage started.
    DeleteSegmentStarted,
    /// 3: it is deleted from remote storage.
    DeleteSegmentFinished,
}

impl RemoteLogSegmentState {
    /// Every state, by id.
    pub const ALL: [RemoteLogSegmentState; 4] = [
        RemoteLogSegmentState::CopySegmentStarted,
        RemoteLogSegmentState::CopySegmentFinished,
        RemoteLogSegmentState::DeleteSegmentStarted,
        RemoteLogSegmentState::DeleteSegmentFinished,
    ];

    /// Kafka's `id()`: 0..=3 in declaration order.
    pub fn id(self) -> u8 {
        match self {
            RemoteLogSegmentState::CopySegmentStarted => 0,
            RemoteLogSegmentState::CopySegmentFinished => 1,
            RemoteLogSegmentState::DeleteSegmentStarted => 2,
            RemoteLogSegmentState::DeleteSegmentFinished => 3,
        }
    }

    /// Kafka's `forId`: the state of id `id`, `None` for an unknown one (Kafka throws
    /// `IllegalArgumentException`).
    pub fn for_id(id: u8) -> Option<RemoteLogSegmentState> {
        Self::ALL.get(usize::from(id)).copied()
    }

    /// Kafka's `RemoteLogSegmentState.isValidTransition(src, target)`: from no state only
    /// to `CopySegmentStarted`; to the same state always (retries stay idempotent);
    /// `CopySegmentStarted` → `CopySegmentFinished` or `DeleteSegmentStarted` (a failed
    /// copy is cleaned up); `CopySegmentFinished` → `DeleteSegmentStarted`;
    /// `DeleteSegmentStarted` → `DeleteSegmentFinished`; nothing else
    /// (`docs/kafka-behaviour.md#remote-segment-metadata`).
    pub fn is_valid_transition(
        src: Option<RemoteLogSegmentState>,
        target: RemoteLogSegmentState,
    ) -> bool {
        use RemoteLogSegmentState::*;
        match src {
            None => target == CopySegmentStarted,
            Some(s) if s == target => true,
            Some(CopySegmentStarted) => {
                matches!(target, CopySegmentFinished | DeleteSegmentStarted)
            }
            Some(CopySegmentFinished) => target == DeleteSegmentStarted,
            Some(DeleteSegmentStarted) => target == DeleteSegmentFinished,
            Some(DeleteSegmentFinished) => false,
        }
    }
}

impl fmt::Display for RemoteLogSegmentState {
    /// Kafka's enum constant name, e.g. `COPY_SEGMENT_STARTED`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RemoteLogSegmentState::CopySegmentStarted => "COPY_SEGMENT_STARTED",
            RemoteLogSegmentState::CopySegmentFinished => "COPY_SEGMENT_FINISHED",
            RemoteLogSegmentState::DeleteSegmentStarted => "DELETE_SEGMENT_STARTED",
            RemoteLogSegmentState::DeleteSegmentFinished => "DELETE_SEGMENT_FINISHED",
        })
    }
}

/// Kafka's `RemoteLogSegmentMetadata`: what the remote log metadata manager records of one
/// uploaded segment (`docs/kafka-behaviour.md#remote-segment-metadata`). Built by
/// [`new`](Self::new) (Kafka's constructor and its checks) or
/// [`from_upload`](Self::from_upload), in state `CopySegmentStarted`; moved on by
/// [`with_update`](Self::with_update).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteLogSegmentMetadata {
    remote_log_segment_id: RemoteLogSegmentId,
    start_offset: i64,
    end_offset: i64,
    max_timestamp_ms: i64,
    broker_id: i32,
    event_timestamp_ms: i64,
    segment_leader_epochs: BTreeMap<i32, i64>,
    segment_size_in_bytes: i32,
    custom_metadata: Option<Vec<u8>>,
    state: RemoteLogSegmentState,
    txn_idx_empty: bool,
}

/// Kafka's `RemoteLogSegmentMetadataUpdate`: a state change of one uploaded segment, by a
/// broker at a time, with optional custom metadata (the remote storage manager's answer
/// to `copyLogSegmentData`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteLogSegmentMetadataUpdate {
    /// The segment it updates.
    pub remote_log_segment_id: RemoteLogSegmentId,
    /// When the update was made, ms since the epoch.
    pub event_timestamp_ms: i64,
    /// The custom metadata the remote storage manager returned, if any.
    pub custom_metadata: Option<Vec<u8>>,
    /// The new state.
    pub state: RemoteLogSegmentState,
    /// The broker making the update.
    pub broker_id: i32,
}

impl RemoteLogSegmentMetadata {
    /// Kafka's full constructor: `start_offset` and `end_offset` inclusive, `max_timestamp_ms`
    /// and `event_timestamp_ms` in ms since the epoch, `segment_leader_epochs` epoch → start
    /// offset, the `.log`'s size in bytes, `txn_idx_empty` whether no `.txnindex` was
    /// uploaded.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`], as Kafka's `IllegalArgumentException`: a
    /// negative start offset, an end offset below the start offset, or no leader epochs.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        remote_log_segment_id: RemoteLogSegmentId,
        start_offset: i64,
        end_offset: i64,
        max_timestamp_ms: i64,
        broker_id: i32,
        event_timestamp_ms: i64,
        segment_size_in_bytes: i32,
        custom_metadata: Option<Vec<u8>>,
        state: RemoteLogSegmentState,
        segment_leader_epochs: BTreeMap<i32, i64>,
        txn_idx_empty: bool,
    ) -> Result<Self, SegmentError> {
        if start_offset < 0 {
            return Err(SegmentError::arg(format!(
                "start offset {start_offset} of a remote segment cannot be negative"
            )));
        }
        if end_offset < start_offset {
            return Err(SegmentError::arg(format!(
                "end offset {end_offset} of a remote segment is below its start offset {start_offset}"
            )));
        }
        if segment_leader_epochs.is_empty() {
            return Err(SegmentError::arg(
                "segment leader epochs of a remote segment can not be empty".to_string(),
            ));
        }
        Ok(RemoteLogSegmentMetadata {
            remote_log_segment_id,
            start_offset,
            end_offset,
            max_timestamp_ms,
            broker_id,
            event_timestamp_ms,
            segment_leader_epochs,
            segment_size_in_bytes,
            custom_metadata,
            state,
            txn_idx_empty,
        })
    }

    /// The metadata Kafka's `RemoteLogManager.copyLogSegment` records before it copies
    /// `upload` (state `CopySegmentStarted`, no custom metadata yet): its base and end
    /// offsets, largest timestamp, size, leader epochs and whether it has no `.txnindex`
    /// (`docs/kafka-behaviour.md#tierable-segments`).
    ///
    /// # Errors
    /// As [`new`](Self::new) (a segment with no leader epoch: a log written without
    /// epochs); [`SegmentError::InvalidArgument`] if the size exceeds `i32::MAX`.
    pub fn from_upload(
        id: RemoteLogSegmentId,
        upload: &SegmentUpload,
        broker_id: i32,
        event_timestamp_ms: i64,
    ) -> Result<Self, SegmentError> {
        let size = i32::try_from(upload.size).map_err(|_| {
            SegmentError::arg(format!("segment size {} exceeds i32::MAX", upload.size))
        })?;
        Self::new(
            id,
            upload.base_offset,
            upload.end_offset,
            upload.max_timestamp,
            broker_id,
            event_timestamp_ms,
            size,
            None,
            RemoteLogSegmentState::CopySegmentStarted,
            upload.segment_leader_epochs.iter().copied().collect(),
            upload.txn_index.is_none(),
        )
    }

    /// Kafka's `createWithUpdates`, with the transition check Kafka's metadata cache makes
    /// (`RemoteLogMetadataCache.updateRemoteLogSegmentMetadata`): a copy carrying the
    /// update's state, event time, custom metadata and broker id.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if the update is of another segment id, or its
    /// state is not a valid transition from this one
    /// ([`RemoteLogSegmentState::is_valid_transition`]).
    pub fn with_update(
        &self,
        update: &RemoteLogSegmentMetadataUpdate,
    ) -> Result<Self, SegmentError> {
        if update.remote_log_segment_id != self.remote_log_segment_id {
            return Err(SegmentError::arg(
                "the update does not have this metadata's remote log segment id".to_string(),
            ));
        }
        if !RemoteLogSegmentState::is_valid_transition(Some(self.state), update.state) {
            return Err(SegmentError::arg(format!(
                "invalid remote segment state transition from {} to {}",
                self.state, update.state
            )));
        }
        Ok(RemoteLogSegmentMetadata {
            event_timestamp_ms: update.event_timestamp_ms,
            custom_metadata: update.custom_metadata.clone(),
            state: update.state,
            broker_id: update.broker_id,
            ..self.clone()
        })
    }

    /// The segment's id.
    pub fn remote_log_segment_id(&self) -> &RemoteLogSegmentId {
        &self.remote_log_segment_id
    }
    /// The first offset, inclusive.
    pub fn start_offset(&self) -> i64 {
        self.start_offset
    }
    /// The last offset, inclusive.
    pub fn end_offset(&self) -> i64 {
        self.end_offset
    }
    /// The largest record timestamp, ms.
    pub fn max_timestamp_ms(&self) -> i64 {
        self.max_timestamp_ms
    }
    /// The broker of the last event.
    pub fn broker_id(&self) -> i32 {
        self.broker_id
    }
    /// When the last event happened, ms since the epoch.
    pub fn event_timestamp_ms(&self) -> i64 {
        self.event_timestamp_ms
    }
    /// The segment's leader epochs: epoch → its start offset (the first clamped to the
    /// start offset).
    pub fn segment_leader_epochs(&self) -> &BTreeMap<i32, i64> {
        &self.segment_leader_epochs
    }
    /// The `.log`'s size in bytes.
    pub fn segment_size_in_bytes(&self) -> i32 {
        self.segment_size_in_bytes
    }
    /// The remote storage manager's custom metadata, if any.
    pub fn custom_metadata(&self) -> Option<&[u8]> {
        self.custom_metadata.as_deref()
    }
    /// The state.
    pub fn state(&self) -> RemoteLogSegmentState {
        self.state
    }
    /// Whether no `.txnindex` was uploaded (Kafka's `isTxnIdxEmpty`).
    pub fn is_txn_idx_empty(&self) -> bool {
        self.txn_idx_empty
    }
    /// The segment's partition.
    pub fn topic_id_partition(&self) -> &TopicIdPartition {
        &self.remote_log_segment_id.topic_id_partition
    }
}

#[cfg(test)]
mod tests {
    use super::RemoteLogSegmentState::*;
    use super::*;

    /// Kafka 4.4's `isValidTransition` table, read from its bytecode: rows are the source
    /// (none, then by id), columns the target by id.
    const KAFKA: [[bool; 4]; 5] = [
        [true, false, false, false],
        [true, true, true, false],
        [false, true, true, false],
        [false, false, true, true],
        [false, false, false, true],
    ];

    #[test]
    fn transitions_are_kafkas() {
        let sources = [
            None,
            Some(CopySegmentStarted),
            Some(CopySegmentFinished),
            Some(DeleteSegmentStarted),
            Some(DeleteSegmentFinished),
        ];
        for (row, src) in sources.iter().enumerate() {
            for (col, target) in RemoteLogSegmentState::ALL.iter().enumerate() {
                assert_eq!(
                    RemoteLogSegmentState::is_valid_transition(*src, *target),
                    KAFKA[row][col],
                    "{src:?} -> {target:?}"
                );
            }
        }
        for s in RemoteLogSegmentState::ALL {
            assert_eq!(RemoteLogSegmentState::for_id(s.id()), Some(s));
        }
        assert_eq!(RemoteLogSegmentState::for_id(4), None);
    }

    fn id(n: u8) -> RemoteLogSegmentId {
        RemoteLogSegmentId {
            topic_id_partition: TopicIdPartition {
                topic_id: Uuid::from_bytes([7; 16]),
                topic: "t".into(),
                partition: 3,
            },
            id: Uuid::from_bytes([n; 16]),
        }
    }

    fn meta() -> RemoteLogSegmentMetadata {
        RemoteLogSegmentMetadata::new(
            id(1),
            10,
            19,
            5_000,
            1,
            100,
            512,
            None,
            CopySegmentStarted,
            BTreeMap::from([(2, 10), (3, 15)]),
            true,
        )
        .unwrap()
    }

    #[test]
    fn the_constructor_checks_offsets_and_epochs() {
        let epochs = BTreeMap::from([(0, 0)]);
        let mk = |s, e, ep: BTreeMap<i32, i64>| {
            RemoteLogSegmentMetadata::new(
                id(1),
                s,
                e,
                0,
                0,
                0,
                0,
                None,
                CopySegmentStarted,
                ep,
                true,
            )
        };
        assert!(mk(0, 0, epochs.clone()).is_ok());
        assert!(mk(-1, 0, epochs.clone()).is_err());
        assert!(mk(5, 4, epochs).is_err());
        assert!(mk(0, 0, BTreeMap::new()).is_err());
    }

    #[test]
    fn updates_follow_the_state_machine_and_the_id() {
        let m = meta();
        let up = |state, n| RemoteLogSegmentMetadataUpdate {
            remote_log_segment_id: id(n),
            event_timestamp_ms: 200,
            custom_metadata: Some(vec![1, 2]),
            state,
            broker_id: 2,
        };
        let done = m.with_update(&up(CopySegmentFinished, 1)).unwrap();
        assert_eq!(
            (
                done.state(),
                done.event_timestamp_ms(),
                done.broker_id(),
                done.custom_metadata()
            ),
            (CopySegmentFinished, 200, 2, Some(&[1u8, 2][..]))
        );
        assert_eq!(
            (
                done.start_offset(),
                done.end_offset(),
                done.segment_size_in_bytes()
            ),
            (10, 19, 512)
        );
        assert!(done.with_update(&up(CopySegmentStarted, 1)).is_err());
        assert!(done.with_update(&up(DeleteSegmentFinished, 1)).is_err());
        let del = done.with_update(&up(DeleteSegmentStarted, 1)).unwrap();
        assert!(del.with_update(&up(DeleteSegmentFinished, 1)).is_ok());
        assert!(
            m.with_update(&up(CopySegmentFinished, 9)).is_err(),
            "another id"
        );
    }

    #[test]
    fn uuid_text_is_kafkas_base64() {
        // Kafka: new Uuid(0, 0).toString() is "AAAAAAAAAAAAAAAAAAAAAA";
        // new Uuid(-1, -1) is "_____________________w".
        assert_eq!(Uuid::ZERO.to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(
            Uuid::from_bytes([0xff; 16]).to_string(),
            "_____________________w"
        );
        let u = Uuid {
            most_significant_bits: 0x0123_4567_89ab_cdef,
            least_significant_bits: -2,
        };
        assert_eq!(Uuid::from_bytes(u.to_bytes()), u);
    }
}
