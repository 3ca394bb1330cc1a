//! Chunked batch scanning of a [`LogFile`] (docs/kafka-behaviour.md#batch-iteration stop rules) and the searches of
//! Kafka's `FileRecords` built on it.
//!
//! The record module's iterator works on a whole file image; a segment can be up to 2 GiB,
//! so this module reads the file through a sliding window of positioned reads instead and
//! hands each complete batch to the batch format.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::marker::PhantomData;

use crate::error::{Result, SegmentError};
use crate::format::{BatchFormat, BatchInfo, FormatError};
use crate::log_file::LogFile;
pub use crate::record::TimestampAndOffset;

/// First read-ahead window, bytes; it doubles on each refill up to [`MAX_WINDOW`], so a
/// short lookup reads little and a long scan reads in large chunks.
const MIN_WINDOW: usize = 16 << 10;
/// Largest read-ahead window, bytes.
const MAX_WINDOW: usize = 1 << 20;

/// Why a scan ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanStop {
    /// The last batch ended exactly at the logical end.
    End,
    /// Bytes remain that do not form a complete batch (fewer than the format's peek size,
    /// or a declared size running past the end): a torn tail, ignored by readers and
    /// truncated by recovery.
    TornTail {
        /// Position of the first unconsumed byte.
        position: u64,
        /// Bytes from there to the end.
        remaining: u64,
    },
    /// The batch at `position` is corrupt (size field impossible, or unreadable header).
    Corrupt {
        /// Position of the corrupt batch.
        position: u64,
        /// The format's error.
        error: FormatError,
    },
}

/// A sliding-window reader yielding the complete batches of a log file from a position,
/// with the framing rules of the [`BatchFormat`] (Kafka: docs/kafka-behaviour.md#batch-iteration).
pub(crate) struct Scanner<'a, F: BatchFormat> {
    file: &'a LogFile,
    end: u64,
    pos: u64,
    buf: Vec<u8>,
    buf_start: u64,
    window: usize,
    stop: Option<ScanStop>,
    _f: PhantomData<F>,
}

impl<'a, F: BatchFormat> Scanner<'a, F> {
    pub(crate) fn new(file: &'a LogFile, start: u64) -> Self {
        Self::with_end(file, start, file.size_in_bytes())
    }

    pub(crate) fn with_end(file: &'a LogFile, start: u64, end: u64) -> Self {
        Scanner {
            file,
            end,
            pos: start,
            buf: Vec::new(),
            buf_start: start,
            window: MIN_WINDOW,
            stop: None,
            _f: PhantomData,
        }
    }

    /// Why the scan stopped (after `next_batch` returned `None`).
    pub(crate) fn stop(&self) -> Option<&ScanStop> {
        self.stop.as_ref()
    }

    /// Makes `buf` hold `len` bytes from `pos` and returns where they start in it:
    /// `off + len <= buf.len()` when `len <= end - pos` (a refill reads
    /// `min(max(len, window), end - pos) >= len` bytes).
    fn fill(&mut self, pos: u64, len: usize) -> Result<usize> {
        let have =
            pos >= self.buf_start && pos + len as u64 <= self.buf_start + self.buf.len() as u64;
        if !have {
            let want = len.max(self.window) as u64;
            self.window = (self.window * 2).min(MAX_WINDOW);
            let n = want.min(self.end.saturating_sub(pos)) as usize;
            self.buf.resize(n, 0);
            self.file.read_exact_at(&mut self.buf, pos)?;
            self.buf_start = pos;
        }
        Ok((pos - self.buf_start) as usize)
    }

    /// The next complete batch as `(info, bytes)`, or `None` at the end (see
    /// [`stop`](Self::stop)). A corrupt batch header ends the scan with
    /// [`ScanStop::Corrupt`] (not an error: callers decide). Checksums are not verified.
    ///
    /// # Errors
    /// [`SegmentError::Io`] on read failure.
    pub(crate) fn next_batch(&mut self) -> Result<Option<(BatchInfo, &[u8])>> {
        if self.stop.is_some() {
            return Ok(None);
        }
        let pos = self.pos;
        let remaining = self.end.saturating_sub(pos);
        if remaining == 0 {
            self.stop = Some(ScanStop::End);
            return Ok(None);
        }
        let peek = (F::HEADER_PEEK_BYTES as u64).min(remaining) as usize;
        let off = self.fill(pos, peek)?;
        #[expect(
            clippy::indexing_slicing,
            reason = "peek <= remaining = end - pos, so fill left off + peek <= buf.len()"
        )]
        let header = &self.buf[off..off + peek];
        let size = match F::peek_size(header, pos) {
            Err(error) => {
                self.stop = Some(ScanStop::Corrupt {
                    position: pos,
                    error,
                });
                return Ok(None);
            }
            Ok(Some(0)) => {
                self.stop = Some(ScanStop::Corrupt {
                    position: pos,
                    error: FormatError::Corrupt {
                        position: pos,
                        reason: "zero-size batch".into(),
                    },
                });
                return Ok(None);
            }
            Ok(Some(size)) if size as u64 <= remaining => size,
            Ok(_) => {
                self.stop = Some(ScanStop::TornTail {
                    position: pos,
                    remaining,
                });
                return Ok(None);
            }
        };
        let off = self.fill(pos, size)?;
        #[expect(
            clippy::indexing_slicing,
            reason = "size <= remaining = end - pos (checked above), so fill left \
                      off + size <= buf.len()"
        )]
        let bytes = &self.buf[off..off + size];
        match F::parse_header(bytes, pos) {
            Ok(info) => {
                self.pos = pos + size as u64;
                Ok(Some((info, bytes)))
            }
            Err(error) => {
                self.stop = Some(ScanStop::Corrupt {
                    position: pos,
                    error,
                });
                Ok(None)
            }
        }
    }
}

/// Kafka's `LogOffsetPosition`: the batch found by an offset search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogOffsetPosition {
    /// Last offset of the batch.
    pub offset: i64,
    /// Byte position of the batch in the `.log` file.
    pub position: u64,
    /// Size of the batch in bytes.
    pub size: u64,
}

fn stop_error(file: &LogFile, stop: Option<&ScanStop>) -> Result<()> {
    match stop {
        Some(ScanStop::Corrupt { error, .. }) => {
            Err(SegmentError::format(file.path(), error.clone()))
        }
        _ => Ok(()),
    }
}

/// Kafka's `searchForOffsetWithSize`: the first batch from `start` whose last offset is
/// ≥ `target`.
///
/// # Errors
/// [`SegmentError::Format`] if a corrupt batch is met before a match; I/O.
pub(crate) fn search_for_offset_with_size<F: BatchFormat>(
    file: &LogFile,
    target: i64,
    start: u64,
) -> Result<Option<LogOffsetPosition>> {
    let mut sc = Scanner::<F>::new(file, start);
    while let Some((info, bytes)) = sc.next_batch()? {
        if info.last_offset >= target {
            return Ok(Some(LogOffsetPosition {
                offset: info.last_offset,
                position: info.position,
                size: bytes.len() as u64,
            }));
        }
    }
    stop_error(file, sc.stop())?;
    Ok(None)
}

/// Kafka's `searchForTimestamp`: the first record from position `start` with
/// `timestamp ≥ target` and `offset ≥ starting_offset`.
///
/// # Errors
/// As [`search_for_offset_with_size`], plus record decoding errors.
pub(crate) fn search_for_timestamp<F: BatchFormat>(
    file: &LogFile,
    target: i64,
    start: u64,
    starting_offset: i64,
) -> Result<Option<TimestampAndOffset>> {
    let mut sc = Scanner::<F>::new(file, start);
    while let Some((info, bytes)) = sc.next_batch()? {
        if info.max_timestamp >= target {
            let found = F::search_timestamp(bytes, info.position, target, starting_offset)
                .map_err(|e| SegmentError::format(file.path(), e))?;
            if found.is_some() {
                return Ok(found);
            }
        }
    }
    stop_error(file, sc.stop())?;
    Ok(None)
}

/// Kafka's `largestTimestampAfter`: the max batch timestamp from `start` with the offset
/// of the first batch that reached it; `(-1, -1)` if there is no batch.
///
/// # Errors
/// As [`search_for_offset_with_size`].
pub(crate) fn largest_timestamp_after<F: BatchFormat>(
    file: &LogFile,
    start: u64,
) -> Result<(i64, i64)> {
    let mut best = (-1i64, -1i64);
    let mut sc = Scanner::<F>::new(file, start);
    while let Some((info, _)) = sc.next_batch()? {
        if info.max_timestamp > best.0 {
            best = (info.max_timestamp, info.offset_of_max_timestamp);
        }
    }
    stop_error(file, sc.stop())?;
    Ok(best)
}
