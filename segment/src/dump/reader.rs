//! A read-only, chunked batch reader over a `.log` file for the dump tool.
//!
//! Applies Kafka's `FileLogInputStream` stop rules (docs/kafka-behaviour.md#batch-iteration) through positioned reads of
//! a sliding window, so a 1 GiB segment is never loaded whole. The file is opened
//! read-only and never written.

use index_core::pio::FileExt;
use std::fs::File;
use std::io;
use std::path::Path;

use crate::format::{FormatError, KafkaBatchFormat};
use crate::record::{FileBatch, Peek, RecordError, StopReason};
use crate::scan::Window;

/// First read-ahead window of a [`LogReader`], bytes (the window grows as in
/// [`Window`]).
const MIN_WINDOW: usize = 64 << 10;

/// What [`LogReader::next_batch`] found at the current position.
pub(crate) enum Step<'a> {
    /// A complete batch (not yet checksum-validated).
    Batch(FileBatch<'a>),
    /// Iteration is over; why.
    Stop(StopReason),
    /// The batch at `position` declares `size` bytes (with its 12-byte log overhead),
    /// more than the reader's batch limit: it is not read (iteration stops).
    TooLarge {
        /// Position of the batch.
        position: u64,
        /// Its declared size, log overhead included.
        size: u64,
    },
}

/// Sequential batch reader over `[start, end)` of a log file: the segment's [`Window`]
/// and framing rule ([`crate::format::frame`]) over a read-only [`File`].
pub(crate) struct LogReader {
    file: File,
    file_len: u64,
    end: u64,
    pos: u64,
    /// Refilled up to the end of the file (not `end`), so that a [`LogReader::seek`]
    /// can reuse it.
    window: Window,
    /// The largest batch read into memory (`--max-message-size`).
    max_batch: u64,
}

impl LogReader {
    /// Opens `path` read-only; the logical end is `min(file length, limit)`. A batch
    /// larger than `max_batch` bytes (log overhead included) is never read into memory:
    /// [`LogReader::next_batch`] returns [`Step::TooLarge`] for it, so memory stays
    /// bounded by `max_batch` whatever size a (corrupt or hostile) header declares.
    pub(crate) fn open(path: &Path, limit: u64, max_batch: u64) -> io::Result<Self> {
        super::ensure_regular_file(path)?;
        let file = File::open(path)?;
        let file_len = file.metadata()?.len();
        Ok(LogReader {
            file,
            file_len,
            end: file_len.min(limit),
            pos: 0,
            window: Window::new(MIN_WINDOW, 0),
            max_batch,
        })
    }

    /// Length of the file on disk.
    pub(crate) fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Repositions the reader at `pos` with logical end `min(end, file length)`; the read
    /// buffer is kept when it still covers the new position.
    pub(crate) fn seek(&mut self, pos: u64, end: u64) {
        self.pos = pos;
        self.end = end.min(self.file_len);
    }

    /// Current position (after a clean stop: the number of bytes consumed).
    pub(crate) fn position(&self) -> u64 {
        self.pos
    }

    /// The batch at the current position, advancing past it; or why iteration stops.
    /// After a stop the position is left at the unconsumed bytes.
    pub(crate) fn next_batch(&mut self) -> io::Result<Step<'_>> {
        let pos = self.pos;
        let remaining = self.end.saturating_sub(pos);
        let file = &self.file;
        let read = |buf: &mut [u8], at: u64| file.read_exact_at(buf, at);
        let frame = self
            .window
            .frame::<KafkaBatchFormat, _>(pos, self.end, self.file_len, read)?;
        let total = match frame {
            Ok(Peek::End) => return Ok(Step::Stop(StopReason::End)),
            Ok(Peek::TornTail) => {
                return Ok(Step::Stop(StopReason::TornTail {
                    position: pos,
                    remaining_bytes: remaining as usize,
                }))
            }
            Err(e) => {
                return Ok(Step::Stop(StopReason::Corrupt {
                    position: pos,
                    reason: capitalized(reason_of_format(e)),
                }))
            }
            Ok(Peek::Batch(total)) => total,
        };
        if total as u64 > self.max_batch {
            return Ok(Step::TooLarge {
                position: pos,
                size: total as u64,
            });
        }
        // frame returned Batch(total) only for total <= end - pos <= file_len - pos.
        let bytes = self.window.fill(pos, total, self.file_len, read)?;
        match FileBatch::at(bytes, pos) {
            Ok(batch) => {
                self.pos = pos + total as u64;
                Ok(Step::Batch(batch))
            }
            Err(e) => Ok(Step::Stop(StopReason::Corrupt {
                position: pos,
                reason: reason_of(&e),
            })),
        }
    }
}

/// The reason of a framing error, without the position (the dump prints it apart).
fn reason_of_format(e: FormatError) -> String {
    match e {
        FormatError::Corrupt { reason, .. }
        | FormatError::InvalidRecord { reason, .. }
        | FormatError::Unsupported { reason, .. } => reason,
    }
}

/// `reason` with its first letter upper-cased: the dump has always printed the framing
/// rule's "Record size … is less than the minimum record overhead (14)" capitalised.
fn capitalized(reason: String) -> String {
    let mut chars = reason.chars();
    match chars.next() {
        Some(first) if first.is_lowercase() => first.to_uppercase().chain(chars).collect(),
        _ => reason,
    }
}

/// The message of a record error without its own "… in batch at position N:" prefix:
/// the dump's lines print the position themselves (`Invalid record in batch at position:
/// N: …`), and the error's prefix would repeat it.
pub(crate) fn reason_of(e: &RecordError) -> String {
    match e {
        RecordError::InvalidRecord { reason, .. } | RecordError::CorruptRecord { reason, .. } => {
            reason.clone()
        }
        other => other.to_string(),
    }
}

/// Bytes read at a time by [`Slots`].
const SLOT_CHUNK: usize = 64 << 10;

/// The fixed-size entries of an index-like file (`.index`, `.timeindex`, `.txnindex`,
/// the body of a `.snapshot`), read with positioned reads one chunk at a time: memory
/// stays at [`SLOT_CHUNK`] bytes whatever the file's size. The file is only read.
pub(crate) struct Slots {
    file: File,
    /// Offset of slot 0 in the file.
    origin: u64,
    len: u64,
    size: usize,
    buf: Vec<u8>,
    buf_start: u64,
}

impl Slots {
    /// `size`-byte slots of `file` (of length `len`) from byte `origin` on.
    pub(crate) fn new(file: File, origin: u64, len: u64, size: usize) -> Self {
        Slots {
            file,
            origin,
            len,
            size,
            buf: Vec::new(),
            buf_start: 0,
        }
    }

    /// Number of whole slots.
    pub(crate) fn count(&self) -> usize {
        usize::try_from(self.len.saturating_sub(self.origin) / self.size as u64)
            .unwrap_or(usize::MAX)
    }

    /// Bytes after the last whole slot.
    pub(crate) fn partial_bytes(&self) -> u64 {
        self.len.saturating_sub(self.origin) % self.size as u64
    }

    /// The bytes of slot `i` (`i < count()`).
    ///
    /// # Errors
    /// The read failed (e.g. the file was truncated under us: `UnexpectedEof`).
    pub(crate) fn get(&mut self, i: usize) -> io::Result<&[u8]> {
        let at = self.origin + i as u64 * self.size as u64;
        let buffered =
            at >= self.buf_start && at + self.size as u64 <= self.buf_start + self.buf.len() as u64;
        if !buffered {
            let chunk = (SLOT_CHUNK / self.size).max(1) * self.size;
            let n = (self.len - at).min(chunk as u64) as usize;
            self.buf.resize(n, 0);
            self.file.read_exact_at(&mut self.buf, at)?;
            self.buf_start = at;
        }
        let off = (at - self.buf_start) as usize;
        // In the buffer for i < count(); past the last whole slot it is a short read.
        self.buf
            .get(off..)
            .and_then(|b| b.get(..self.size))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))
    }

    /// Like [`Slots::get`], as an array: `N` must be the slot size.
    ///
    /// # Errors
    /// As [`Slots::get`]; `InvalidInput` if `N` is not the slot size.
    pub(crate) fn get_array<const N: usize>(&mut self, i: usize) -> io::Result<&[u8; N]> {
        let size = self.size;
        self.get(i)?.try_into().map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("slots of {size} bytes read as {N}-byte arrays"),
            )
        })
    }

    /// The file, for reading it again with other slots.
    pub(crate) fn into_file(self) -> File {
        self.file
    }

    /// Reads `out.len()` bytes at `pos` of the file (outside the slot buffer).
    ///
    /// # Errors
    /// The read failed.
    pub(crate) fn read_at(&self, out: &mut [u8], pos: u64) -> io::Result<()> {
        self.file.read_exact_at(out, pos)
    }
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
    use crate::record::fixtures;

    /// What a [`LogReader`] over `bytes` (batch limit `max_batch`) meets, step by step:
    /// `"batch at P"`, `"too large at P: S"` or the stop reason's `Debug`.
    fn steps(bytes: &[u8], max_batch: u64) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.log");
        std::fs::write(&path, bytes).unwrap();
        let mut reader = LogReader::open(&path, u64::MAX, max_batch).unwrap();
        let mut out = Vec::new();
        loop {
            match reader.next_batch().unwrap() {
                Step::Batch(b) => out.push(format!("batch at {}", b.position())),
                Step::TooLarge { position, size } => {
                    out.push(format!("too large at {position}: {size}"));
                    return out;
                }
                Step::Stop(stop) => {
                    out.push(format!("{stop:?}"));
                    return out;
                }
            }
        }
    }

    #[test]
    fn stops_as_kafka_does_with_the_dump_messages() {
        let batch = fixtures::v2(0, 1000);
        let mut two = batch.clone();
        two.extend(fixtures::v2(1, 1000));
        assert_eq!(steps(&two, u64::MAX), ["batch at 0", "batch at 73", "End"]);
        // A tail of 17 bytes, of 18 bytes, and a batch running past the end: torn tails.
        for tail in [17, 18, 72] {
            let mut data = batch.clone();
            data.extend_from_slice(&two[73..73 + tail]);
            assert_eq!(
                steps(&data, u64::MAX),
                [
                    "batch at 0".to_string(),
                    format!("TornTail {{ position: 73, remaining_bytes: {tail} }}")
                ]
            );
        }
        // A size field below 14: the dump's message, capitalised, without the position.
        let mut data = batch.clone();
        data.extend_from_slice(&batch);
        data[73 + 8..73 + 12].copy_from_slice(&13i32.to_be_bytes());
        assert_eq!(
            steps(&data, u64::MAX),
            [
                "batch at 0",
                "Corrupt { position: 73, reason: \"Record size 13 is less than the minimum \
                 record overhead (14)\" }"
            ]
        );
        // A header the batch view rejects: the record error's reason, without its own
        // position prefix (the dump's line prints the position).
        let mut data = batch.clone();
        data[8..12].copy_from_slice(&20i32.to_be_bytes());
        assert_eq!(
            steps(&data, u64::MAX),
            [
                "Corrupt { position: 0, reason: \"only 32 bytes available, a v2 batch header \
                 needs 61\" }"
            ]
        );
        // Larger than the batch limit: not read; a torn tail wins over the limit.
        assert_eq!(steps(&two, 72), ["too large at 0: 73"]);
        assert_eq!(
            steps(&batch[..72], 10),
            ["TornTail { position: 0, remaining_bytes: 72 }"]
        );
    }
}
