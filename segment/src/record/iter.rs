//! Iterating the batches of a `.log` file image (docs/kafka-behaviour.md#batch-iteration) and the `FileRecords` search
//! functions built on it (docs/kafka-behaviour.md#log-file).
//!
//! All functions work on a byte slice holding the file from position 0 to its logical end
//! (e.g. a memory map or a `Vec` read from disk); positions are byte indexes into that
//! slice. The stop rules are Kafka's `FileLogInputStream` rules, exactly:
//!
//! 1. fewer than 18 bytes left (`position ≥ end − 17`) → end of iteration;
//! 2. the size field (bytes 8–11) is below 14 → [`RecordError::CorruptRecord`];
//! 3. the batch extends past the end → end of iteration (torn tail);
//! 4. magic < 2 → legacy entry, otherwise a v2 batch (magic > 2 too; its CRC will normally
//!    fail);
//! 5. advance by `12 + size`.
//!
//! Acceptance cases 1 and 3 are both a *clean* end for Kafka; [`StopReason`] still tells them apart
//! from a file consumed exactly to its end. Where Kafka loads batch headers lazily, this
//! crate checks a batch's header framing when the batch is produced (a v2 batch with size
//! < 61, a magic 1 message with size < 22, or a negative magic is reported as
//! [`RecordError::CorruptRecord`] right away instead of on first header access; Kafka's
//! `ensureValid` reports the same batches as corrupt during recovery).

use std::path::Path;

use super::file_batch::{
    frame_with, kafka_batch_size, FileBatch, Peek, StopReason, TimestampAndOffset,
};
use super::{RecordError, HEADER_SIZE_UP_TO_MAGIC, NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP};

/// Applies rules 1–3 of docs/kafka-behaviour.md#batch-iteration to the bytes `rest` that remain from a position to the end.
///
/// This is the framing check of the segment's file scanner and of the dump tool
/// (`format::frame` with Kafka's format), applied to bytes in memory.
///
/// # Errors
/// [`RecordError::CorruptRecord`] (at `position`) if the size field is below 14.
pub fn peek_batch(rest: &[u8], position: u64) -> Result<Peek, RecordError> {
    let header = rest.get(..HEADER_SIZE_UP_TO_MAGIC + 1).unwrap_or(rest);
    frame_with(
        rest.len() as u64,
        || kafka_batch_size(header, position),
        || RecordError::CorruptRecord {
            position,
            reason: "zero-size batch".into(),
        },
    )
}

/// Iterator over the batches of a file image from a start position (docs/kafka-behaviour.md#batch-iteration).
///
/// Yields `Ok(FileBatch)` for each complete batch and at most one `Err` (after which it
/// ends); [`BatchIter::stop_reason`] then says why it stopped. Does not validate CRCs.
#[derive(Debug, Clone)]
pub struct BatchIter<'a> {
    data: &'a [u8],
    pos: usize,
    stop: Option<StopReason>,
}

impl<'a> BatchIter<'a> {
    /// Iterates `data` (a file image, position 0 = `data[0]`) from byte `start`.
    /// A start at or past the end yields nothing and stops with [`StopReason::End`].
    pub fn new(data: &'a [u8], start: u64) -> Self {
        let pos = usize::try_from(start).unwrap_or(usize::MAX).min(data.len());
        BatchIter {
            data,
            pos,
            stop: None,
        }
    }

    /// Position of the next batch; after a clean stop, the number of valid bytes
    /// (`end` for [`StopReason::End`], the torn tail's start otherwise).
    pub fn position(&self) -> u64 {
        self.pos as u64
    }

    /// `None` while iteration can continue; why it stopped afterwards.
    pub fn stop_reason(&self) -> Option<&StopReason> {
        self.stop.as_ref()
    }
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<FileBatch<'a>, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.stop.is_some() {
            return None;
        }
        let position = self.pos as u64;
        // pos <= data.len() always (`new` clamps it, `next` adds the size of a batch taken
        // from `rest`); past the end would read as the end.
        let rest = self.data.get(self.pos..).unwrap_or_default();
        let result = peek_batch(rest, position).and_then(|peek| match peek {
            Peek::End => {
                self.stop = Some(StopReason::End);
                Ok(None)
            }
            Peek::TornTail => {
                self.stop = Some(StopReason::TornTail {
                    position,
                    remaining_bytes: rest.len(),
                });
                Ok(None)
            }
            #[expect(
                clippy::indexing_slicing,
                reason = "peek_batch returns Batch(total) only when total <= rest.len()"
            )]
            Peek::Batch(total) => FileBatch::at(&rest[..total], position).map(Some),
        });
        match result {
            Ok(None) => None,
            Ok(Some(batch)) => {
                self.pos += batch.size_in_bytes();
                Some(Ok(batch))
            }
            Err(e) => {
                self.stop = Some(StopReason::Corrupt {
                    position,
                    reason: e.to_string(),
                });
                Some(Err(e))
            }
        }
    }
}

/// Iterates the batches of `data` from `start` (Kafka `FileRecords.batchesFrom`).
pub fn batches_from(data: &[u8], start: u64) -> BatchIter<'_> {
    BatchIter::new(data, start)
}

/// Result of [`search_for_offset_with_size`] (Kafka `LogOffsetPosition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffsetPositionSize {
    /// Last offset of the batch found.
    pub offset: i64,
    /// Its byte position.
    pub position: u64,
    /// Its size in bytes.
    pub size: usize,
}

fn maybe_leader_epoch(epoch: i32) -> Option<i32> {
    (epoch != NO_PARTITION_LEADER_EPOCH).then_some(epoch)
}

/// Kafka `FileRecords.searchForOffsetWithSize`: the first batch from `start` whose last
/// offset is ≥ `target_offset`, as `(last offset, position, size)`; `None` if there is
/// none before the end (or the torn tail).
///
/// # Errors
/// [`RecordError::CorruptRecord`] if iteration meets a corrupt batch first.
pub fn search_for_offset_with_size(
    data: &[u8],
    target_offset: i64,
    start: u64,
) -> Result<Option<OffsetPositionSize>, RecordError> {
    for batch in batches_from(data, start) {
        let batch = batch?;
        let offset = batch.last_offset();
        if offset >= target_offset {
            return Ok(Some(OffsetPositionSize {
                offset,
                position: batch.position(),
                size: batch.size_in_bytes(),
            }));
        }
    }
    Ok(None)
}

/// Kafka `FileRecords.searchForTimestamp`: from `start`, for each batch with
/// `max_timestamp ≥ target_timestamp`, decode its records (decompressing if needed) and
/// return the first record with `timestamp ≥ target_timestamp` **and**
/// `offset ≥ starting_offset`; `None` if none qualifies.
///
/// # Errors
/// Iteration errors ([`RecordError::CorruptRecord`]) and record decoding errors of the
/// batches that are searched.
pub fn search_for_timestamp(
    data: &[u8],
    target_timestamp: i64,
    start: u64,
    starting_offset: i64,
) -> Result<Option<TimestampAndOffset>, RecordError> {
    for batch in batches_from(data, start) {
        let batch = batch?;
        if batch.max_timestamp() < target_timestamp {
            continue;
        }
        for record in batch.records()? {
            let record = record?;
            if record.timestamp >= target_timestamp && record.offset >= starting_offset {
                return Ok(Some(TimestampAndOffset {
                    timestamp: record.timestamp,
                    offset: record.offset,
                    leader_epoch: maybe_leader_epoch(batch.partition_leader_epoch()),
                }));
            }
        }
    }
    Ok(None)
}

/// Kafka `FileRecords.largestTimestampAfter`: the largest batch max timestamp from
/// `start`, with the last offset (and leader epoch) of the **first** batch that reached
/// it; `(−1, −1, None)` if there is no batch (or all timestamps are −1).
///
/// # Errors
/// [`RecordError::CorruptRecord`] if iteration meets a corrupt batch.
pub fn largest_timestamp_after(data: &[u8], start: u64) -> Result<TimestampAndOffset, RecordError> {
    let mut best = TimestampAndOffset {
        timestamp: NO_TIMESTAMP,
        offset: -1,
        leader_epoch: None,
    };
    for batch in batches_from(data, start) {
        let batch = batch?;
        let ts = batch.max_timestamp();
        if ts > best.timestamp {
            best = TimestampAndOffset {
                timestamp: ts,
                offset: batch.last_offset(),
                leader_epoch: maybe_leader_epoch(batch.partition_leader_epoch()),
            };
        }
    }
    Ok(best)
}

/// Reads a whole log file into memory, for use with the functions of this module.
///
/// # Errors
/// [`RecordError::Io`] naming the file.
pub fn read_log_file(path: impl AsRef<Path>) -> Result<Vec<u8>, RecordError> {
    let path = path.as_ref();
    std::fs::read(path).map_err(|source| RecordError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
// Tests may unwrap, index and panic: a panic is how a test reports a failure.
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]
mod tests {
    use super::*;

    #[test]
    fn peek_reports_the_size_rule_with_its_values() {
        for size in [13i32, 0, -1, i32::MIN] {
            let mut bytes = vec![0u8; 40];
            bytes[8..12].copy_from_slice(&size.to_be_bytes());
            let e = peek_batch(&bytes, 5).unwrap_err();
            let want = RecordError::CorruptRecord {
                position: 5,
                reason: format!("record size {size} is less than the minimum record overhead (14)"),
            };
            assert_eq!(e.to_string(), want.to_string());
            assert!(matches!(e, RecordError::CorruptRecord { position: 5, .. }));
        }
        // A size field past the end of the data: a torn tail, whatever the size says.
        let mut bytes = vec![0u8; 18];
        bytes[8..12].copy_from_slice(&i32::MAX.to_be_bytes());
        assert_eq!(peek_batch(&bytes, 0).unwrap(), Peek::TornTail);
    }
}
