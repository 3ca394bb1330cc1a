//! Kafka's `ProducerAppendInfo` for a leader append (docs/kafka-behaviour.md#leader-producer):
//! `UnifiedLog.analyzeAndValidateProducerState`, `ProducerAppendInfo`'s epoch, sequence,
//! transaction and coordinator-epoch checks, and `ProducerStateEntry.findDuplicateBatch`,
//! with the [`AppendOrigin`] that selects them.
//!
//! Only checks live here; once a batch passes, the log applies it to the
//! [`ProducerStateManager`] with [`ProducerStateManager::update`], the same update a
//! follower or recovery makes.

use crate::error::{KafkaError, Result, SegmentError};
use crate::format::BatchInfo;
use crate::producer::{BatchMetadata, ProducerStateEntry, ProducerStateManager};
use crate::record::EndTransactionMarker;

/// Who writes to the leader (Kafka's `AppendOrigin`), which decides the checks applied
/// (docs/kafka-behaviour.md#leader-origin).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AppendOrigin {
    /// A producer (Kafka `CLIENT`): batches must start at offset 0, may not be control
    /// batches, and idempotent batches have their sequence numbers checked; a retry of
    /// one of the producer's last five batches is answered as a duplicate.
    Client,
    /// The transaction or group coordinator (Kafka `COORDINATOR`): may write control
    /// batches (end-transaction markers, checked against the coordinator epoch); no
    /// sequence check and no duplicate detection.
    Coordinator,
}

fn reject(error: KafkaError, message: String) -> SegmentError {
    SegmentError::rejected(error, message)
}

/// Kafka's `findDuplicateBatch`: the retained batch of `entry` with the same epoch and
/// the same first and last sequence as `batch`.
pub(crate) fn find_duplicate(
    entry: &ProducerStateEntry,
    batch: &BatchInfo,
) -> Option<BatchMetadata> {
    if entry.producer_epoch != batch.producer_epoch {
        return None;
    }
    entry
        .batch_metadata()
        .find(|m| m.first_seq() == batch.base_sequence && m.last_seq == batch.last_sequence)
        .copied()
}

/// Kafka's `inSequence`: `next` follows `last`, wrapping from `i32::MAX` to 0.
fn in_sequence(last: i32, next: i32) -> bool {
    i64::from(next) == i64::from(last) + 1 || (next == 0 && last == i32::MAX)
}

/// Checks one batch (with a producer id, magic v2) of a leader append against the
/// producer state. `Ok(Some(_))` is a duplicate of a retained batch (origin `Client`
/// only): nothing is to be appended. `marker` is the batch's end-transaction marker if
/// it is a control batch carrying one.
///
/// The transaction-version-0/1 rules apply (an epoch must not go down); partition
/// verification (`transaction.partition.verification.enable`) is not modelled: a log has
/// no `AddPartitionsToTxn` handshake, so a transaction starts with its first batch.
///
/// # Errors
/// [`SegmentError::Rejected`] with `INVALID_PRODUCER_EPOCH`, `OUT_OF_ORDER_SEQUENCE_NUMBER`,
/// `INVALID_TXN_STATE` or `TRANSACTION_COORDINATOR_FENCED`.
pub(crate) fn check(
    ps: &ProducerStateManager,
    batch: &BatchInfo,
    marker: Option<&EndTransactionMarker>,
    origin: AppendOrigin,
) -> Result<Option<BatchMetadata>> {
    let pid = batch.producer_id;
    let epoch = batch.producer_epoch;
    let empty = ProducerStateEntry::empty(pid);
    let known = ps.active_producers().get(&pid);
    if origin == AppendOrigin::Client {
        if let Some(dup) = known.and_then(|e| find_duplicate(e, batch)) {
            return Ok(Some(dup));
        }
    }
    let entry = known.unwrap_or(&empty);
    let ongoing = entry.current_txn_first_offset.is_some() && entry.producer_epoch == epoch;
    if batch.is_transactional && !ongoing && known.is_some() && epoch < entry.producer_epoch {
        return Err(reject(
            KafkaError::InvalidProducerEpoch,
            format!(
                "producer {pid} has epoch {epoch}, below the last epoch seen, {}",
                entry.producer_epoch
            ),
        ));
    }
    let offset = batch.base_offset;
    if epoch < entry.producer_epoch {
        return Err(reject(
            KafkaError::InvalidProducerEpoch,
            format!(
                "producer {pid} at offset {offset} has epoch {epoch}, below the last epoch seen, {}",
                entry.producer_epoch
            ),
        ));
    }
    if batch.is_control {
        let Some(m) = marker else {
            return Ok(None);
        };
        if entry.coordinator_epoch > m.coordinator_epoch {
            return Err(reject(
                KafkaError::TransactionCoordinatorFenced,
                format!(
                    "marker of producer {pid} at offset {offset} has coordinator epoch {}, \
                     below the current {}",
                    m.coordinator_epoch, entry.coordinator_epoch
                ),
            ));
        }
        return Ok(None);
    }
    if origin == AppendOrigin::Client {
        let first = batch.base_sequence;
        if epoch != entry.producer_epoch {
            if first != 0 && entry.producer_epoch != -1 {
                return Err(reject(
                    KafkaError::OutOfOrderSequenceNumber,
                    format!(
                        "producer {pid} starts epoch {epoch} (after {}) at sequence {first}, \
                         not 0, at offset {offset}",
                        entry.producer_epoch
                    ),
                ));
            }
        } else if entry.producer_epoch != -1 && !in_sequence(entry.last_seq(), first) {
            return Err(reject(
                KafkaError::OutOfOrderSequenceNumber,
                format!(
                    "producer {pid} sent sequence {first} at offset {offset}; the last \
                     sequence appended is {}",
                    entry.last_seq()
                ),
            ));
        }
    }
    if entry.current_txn_first_offset.is_some() && !batch.is_transactional {
        return Err(reject(
            KafkaError::InvalidTxnState,
            format!(
                "producer {pid} has an ongoing transaction but wrote a non-transactional \
                 batch at offset {offset}"
            ),
        ));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pid: i64, epoch: i16, first: i32, last: i32, base: i64) -> BatchInfo {
        BatchInfo {
            producer_id: pid,
            producer_epoch: epoch,
            base_sequence: first,
            last_sequence: last,
            magic: 2,
            ..BatchInfo::new(0, base, base + i64::from(last - first), 0, 61)
        }
    }

    #[test]
    fn sequence_rules() {
        let mut ps = ProducerStateManager::new();
        let b = data(7, 0, 0, 2, 0);
        assert_eq!(check(&ps, &b, None, AppendOrigin::Client).unwrap(), None);
        ps.update(&b, None);
        // A retry of the batch is a duplicate with its offsets.
        let dup = check(&ps, &data(7, 0, 0, 2, 10), None, AppendOrigin::Client)
            .unwrap()
            .unwrap();
        assert_eq!((dup.first_offset(), dup.last_offset), (0, 2));
        // The coordinator gets no duplicate detection.
        assert_eq!(
            check(&ps, &data(7, 0, 3, 3, 3), None, AppendOrigin::Coordinator).unwrap(),
            None
        );
        // A gap.
        let e = check(&ps, &data(7, 0, 4, 4, 3), None, AppendOrigin::Client).unwrap_err();
        assert_eq!(e.kafka_error(), KafkaError::OutOfOrderSequenceNumber);
        // A new epoch must start at 0.
        let e = check(&ps, &data(7, 1, 3, 3, 3), None, AppendOrigin::Client).unwrap_err();
        assert_eq!(e.kafka_error(), KafkaError::OutOfOrderSequenceNumber);
        assert_eq!(
            check(&ps, &data(7, 1, 0, 0, 3), None, AppendOrigin::Client).unwrap(),
            None
        );
        // An old epoch.
        let mut ps2 = ps.clone();
        ps2.update(&data(7, 1, 0, 0, 3), None);
        let e = check(&ps2, &data(7, 0, 3, 3, 4), None, AppendOrigin::Client).unwrap_err();
        assert_eq!(e.kafka_error(), KafkaError::InvalidProducerEpoch);
        // Wrap-around.
        assert!(in_sequence(i32::MAX, 0));
        assert!(!in_sequence(5, 7));
    }
}
