//! Kafka's protocol errors ([`KafkaError`]), the per-record errors of a rejected batch
//! ([`RecordError`]) and the mapping of every [`SegmentError`] to a protocol error
//! (docs/kafka-behaviour.md#leader-errors).

use crate::error::SegmentError;
use crate::format::FormatError;
use crate::record::RecordError as DecodeError;

/// One record a batch was rejected for (Kafka's `ProduceResponse.RecordError`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordError {
    /// Index of the record in its batch (0 = first).
    pub batch_index: i32,
    /// Why, if known.
    pub message: Option<String>,
}

/// Kafka's protocol errors that the leader append and the reads answer with (a subset of
/// Kafka's `Errors` enum, with its names and codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KafkaError {
    /// `UNKNOWN_SERVER_ERROR` (−1): an unexpected failure (Kafka's answer for an
    /// `IllegalArgumentException` or `IllegalStateException`).
    UnknownServerError,
    /// `OFFSET_OUT_OF_RANGE` (1).
    OffsetOutOfRange,
    /// `CORRUPT_MESSAGE` (2): a CRC mismatch or broken framing.
    CorruptMessage,
    /// `MESSAGE_TOO_LARGE` (10): a batch larger than `max.message.bytes` (Kafka's
    /// `RecordTooLargeException`).
    RecordTooLarge,
    /// `RECORD_LIST_TOO_LARGE` (18): a batch larger than `segment.bytes` (Kafka's
    /// `RecordBatchTooLargeException`).
    RecordBatchTooLarge,
    /// `INVALID_TIMESTAMP` (32).
    InvalidTimestamp,
    /// `INVALID_CONFIG` (40).
    InvalidConfig,
    /// `INVALID_REQUEST` (42).
    InvalidRequest,
    /// `UNSUPPORTED_FOR_MESSAGE_FORMAT` (43).
    UnsupportedForMessageFormat,
    /// `OUT_OF_ORDER_SEQUENCE_NUMBER` (45).
    OutOfOrderSequenceNumber,
    /// `DUPLICATE_SEQUENCE_NUMBER` (46).
    DuplicateSequenceNumber,
    /// `INVALID_PRODUCER_EPOCH` (47).
    InvalidProducerEpoch,
    /// `INVALID_TXN_STATE` (48).
    InvalidTxnState,
    /// `INVALID_PRODUCER_ID_MAPPING` (49).
    InvalidProducerIdMapping,
    /// `TRANSACTION_COORDINATOR_FENCED` (52).
    TransactionCoordinatorFenced,
    /// `KAFKA_STORAGE_ERROR` (56): the log's storage failed or is offline.
    KafkaStorageError,
    /// `UNKNOWN_PRODUCER_ID` (59).
    UnknownProducerId,
    /// `UNSUPPORTED_COMPRESSION_TYPE` (76).
    UnsupportedCompressionType,
    /// `OFFSET_NOT_AVAILABLE` (78).
    OffsetNotAvailable,
    /// `INVALID_RECORD` (87).
    InvalidRecord,
}

impl KafkaError {
    /// Every variant, in code order.
    pub const ALL: [KafkaError; 20] = [
        KafkaError::UnknownServerError,
        KafkaError::OffsetOutOfRange,
        KafkaError::CorruptMessage,
        KafkaError::RecordTooLarge,
        KafkaError::RecordBatchTooLarge,
        KafkaError::InvalidTimestamp,
        KafkaError::InvalidConfig,
        KafkaError::InvalidRequest,
        KafkaError::UnsupportedForMessageFormat,
        KafkaError::OutOfOrderSequenceNumber,
        KafkaError::DuplicateSequenceNumber,
        KafkaError::InvalidProducerEpoch,
        KafkaError::InvalidTxnState,
        KafkaError::InvalidProducerIdMapping,
        KafkaError::TransactionCoordinatorFenced,
        KafkaError::KafkaStorageError,
        KafkaError::UnknownProducerId,
        KafkaError::UnsupportedCompressionType,
        KafkaError::OffsetNotAvailable,
        KafkaError::InvalidRecord,
    ];

    /// The name in Kafka's `Errors` enum, e.g. `"OUT_OF_ORDER_SEQUENCE_NUMBER"`.
    pub fn name(self) -> &'static str {
        match self {
            KafkaError::UnknownServerError => "UNKNOWN_SERVER_ERROR",
            KafkaError::OffsetOutOfRange => "OFFSET_OUT_OF_RANGE",
            KafkaError::CorruptMessage => "CORRUPT_MESSAGE",
            KafkaError::RecordTooLarge => "MESSAGE_TOO_LARGE",
            KafkaError::RecordBatchTooLarge => "RECORD_LIST_TOO_LARGE",
            KafkaError::InvalidTimestamp => "INVALID_TIMESTAMP",
            KafkaError::InvalidConfig => "INVALID_CONFIG",
            KafkaError::InvalidRequest => "INVALID_REQUEST",
            KafkaError::UnsupportedForMessageFormat => "UNSUPPORTED_FOR_MESSAGE_FORMAT",
            KafkaError::OutOfOrderSequenceNumber => "OUT_OF_ORDER_SEQUENCE_NUMBER",
            KafkaError::DuplicateSequenceNumber => "DUPLICATE_SEQUENCE_NUMBER",
            KafkaError::InvalidProducerEpoch => "INVALID_PRODUCER_EPOCH",
            KafkaError::InvalidTxnState => "INVALID_TXN_STATE",
            KafkaError::InvalidProducerIdMapping => "INVALID_PRODUCER_ID_MAPPING",
            KafkaError::TransactionCoordinatorFenced => "TRANSACTION_COORDINATOR_FENCED",
            KafkaError::KafkaStorageError => "KAFKA_STORAGE_ERROR",
            KafkaError::UnknownProducerId => "UNKNOWN_PRODUCER_ID",
            KafkaError::UnsupportedCompressionType => "UNSUPPORTED_COMPRESSION_TYPE",
            KafkaError::OffsetNotAvailable => "OFFSET_NOT_AVAILABLE",
            KafkaError::InvalidRecord => "INVALID_RECORD",
        }
    }

    /// The protocol error code (Kafka's `Errors.code()`).
    pub fn code(self) -> i16 {
        match self {
            KafkaError::UnknownServerError => -1,
            KafkaError::OffsetOutOfRange => 1,
            KafkaError::CorruptMessage => 2,
            KafkaError::RecordTooLarge => 10,
            KafkaError::RecordBatchTooLarge => 18,
            KafkaError::InvalidTimestamp => 32,
            KafkaError::InvalidConfig => 40,
            KafkaError::InvalidRequest => 42,
            KafkaError::UnsupportedForMessageFormat => 43,
            KafkaError::OutOfOrderSequenceNumber => 45,
            KafkaError::DuplicateSequenceNumber => 46,
            KafkaError::InvalidProducerEpoch => 47,
            KafkaError::InvalidTxnState => 48,
            KafkaError::InvalidProducerIdMapping => 49,
            KafkaError::TransactionCoordinatorFenced => 52,
            KafkaError::KafkaStorageError => 56,
            KafkaError::UnknownProducerId => 59,
            KafkaError::UnsupportedCompressionType => 76,
            KafkaError::OffsetNotAvailable => 78,
            KafkaError::InvalidRecord => 87,
        }
    }
}

impl std::fmt::Display for KafkaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The protocol error of a batch-decoding error (Kafka's exception for the same failure).
pub(crate) fn decode_error_kind(e: &DecodeError) -> KafkaError {
    match e {
        DecodeError::CorruptRecord { .. } => KafkaError::CorruptMessage,
        // Kafka 4.4 answers a record over max.decompressed.message.bytes with
        // InvalidRecordException.
        DecodeError::InvalidRecord { .. } | DecodeError::DecompressedTooLarge { .. } => {
            KafkaError::InvalidRecord
        }
        DecodeError::UnsupportedCompression { .. } => KafkaError::UnsupportedCompressionType,
        DecodeError::Io { .. } => KafkaError::KafkaStorageError,
        _ => KafkaError::UnknownServerError,
    }
}

/// The protocol error of a [`FormatError`].
pub(crate) fn format_error_kind(e: &FormatError) -> KafkaError {
    match e {
        FormatError::Corrupt { .. } => KafkaError::CorruptMessage,
        FormatError::InvalidRecord { .. } => KafkaError::InvalidRecord,
        FormatError::Unsupported { .. } => KafkaError::UnsupportedForMessageFormat,
    }
}

impl SegmentError {
    /// A rejection with Kafka's error `error` and no per-record errors.
    pub(crate) fn rejected(error: KafkaError, message: impl Into<String>) -> Self {
        SegmentError::Rejected {
            error,
            message: message.into(),
            record_errors: Vec::new(),
        }
    }

    /// The Kafka protocol error this error answers a produce or fetch with
    /// (docs/kafka-behaviour.md#leader-errors): [`SegmentError::Rejected`] carries its
    /// own; I/O, index and file failures and an offline log are `KAFKA_STORAGE_ERROR`;
    /// index failures `KAFKA_STORAGE_ERROR` too; damaged batches `CORRUPT_MESSAGE` or `INVALID_RECORD`; an offset outside the log
    /// `OFFSET_OUT_OF_RANGE`; a bad configuration `INVALID_CONFIG`; misuse that Kafka
    /// answers with an `IllegalArgumentException` or `IllegalStateException`
    /// `UNKNOWN_SERVER_ERROR`.
    pub fn kafka_error(&self) -> KafkaError {
        match self {
            SegmentError::Rejected { error, .. } => *error,
            SegmentError::Io { .. }
            | SegmentError::NotARegularFile { .. }
            | SegmentError::FileName { .. }
            | SegmentError::DirLocked { .. }
            | SegmentError::MissingIndex { .. }
            | SegmentError::SegmentDeleted { .. }
            | SegmentError::SwapRefused { .. } => KafkaError::KafkaStorageError,
            SegmentError::Index(_) | SegmentError::TxnIndex(_) => KafkaError::KafkaStorageError,
            SegmentError::Record { source, .. } => decode_error_kind(source),
            SegmentError::Format { source, .. } | SegmentError::InvalidInput { source } => {
                format_error_kind(source)
            }
            SegmentError::Corrupt { .. } => KafkaError::CorruptMessage,
            SegmentError::OffsetOutOfRange { .. } => KafkaError::OffsetOutOfRange,
            SegmentError::InvalidConfig { .. } => KafkaError::InvalidConfig,
            SegmentError::OffsetOverflow { .. }
            | SegmentError::NonMonotonicOffset { .. }
            | SegmentError::InvalidArgument { .. } => KafkaError::UnknownServerError,
            SegmentError::IllegalState { reason, .. } => {
                if reason.starts_with(crate::log::OFFLINE_REASON_PREFIX) {
                    KafkaError::KafkaStorageError
                } else {
                    KafkaError::UnknownServerError
                }
            }
        }
    }

    /// The per-record errors of a [`SegmentError::Rejected`] (empty for every other
    /// error).
    pub fn record_errors(&self) -> &[RecordError] {
        match self {
            SegmentError::Rejected { record_errors, .. } => record_errors,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_are_kafkas() {
        assert_eq!(
            KafkaError::OutOfOrderSequenceNumber.name(),
            "OUT_OF_ORDER_SEQUENCE_NUMBER"
        );
        assert_eq!(KafkaError::OutOfOrderSequenceNumber.code(), 45);
        assert_eq!(KafkaError::RecordTooLarge.name(), "MESSAGE_TOO_LARGE");
        assert_eq!(KafkaError::RecordBatchTooLarge.code(), 18);
        assert_eq!(KafkaError::InvalidRecord.code(), 87);
        assert_eq!(KafkaError::UnknownServerError.code(), -1);
        let mut codes: Vec<i16> = KafkaError::ALL.iter().map(|e| e.code()).collect();
        let sorted = {
            let mut s = codes.clone();
            s.sort_unstable();
            s
        };
        assert_eq!(codes, sorted, "ALL is in code order");
        codes.dedup();
        assert_eq!(codes.len(), KafkaError::ALL.len(), "codes are distinct");
    }

    #[test]
    fn every_error_maps_to_a_kafka_error() {
        let io = SegmentError::io("write", "/x", std::io::Error::other("boom"));
        assert_eq!(io.kafka_error(), KafkaError::KafkaStorageError);
        let arg = SegmentError::arg("no");
        assert_eq!(arg.kafka_error(), KafkaError::UnknownServerError);
        let input = SegmentError::InvalidInput {
            source: FormatError::Corrupt {
                position: 0,
                reason: "crc".into(),
            },
        };
        assert_eq!(input.kafka_error(), KafkaError::CorruptMessage);
        let r = SegmentError::rejected(KafkaError::InvalidTxnState, "x");
        assert_eq!(r.kafka_error(), KafkaError::InvalidTxnState);
        assert!(r.record_errors().is_empty());
        let offline = SegmentError::IllegalState {
            path: "/x".into(),
            reason: format!("{} a flush failed", crate::log::OFFLINE_REASON_PREFIX),
        };
        assert_eq!(offline.kafka_error(), KafkaError::KafkaStorageError);
    }
}
