//! A read-only, chunked batch reader over a `.log` file for the dump tool.
//!
//! Applies Kafka's `FileLogInputStream` stop rules (docs/kafka-behaviour.md#batch-iteration) through positioned reads of
//! a sliding window, so a 1 GiB segment is never loaded whole. The file is opened
//! read-only and never written.

use crate::pio::FileExt;
use std::fs::File;
use std::io;
use std::path::Path;

use crate::record::{
    FileBatch, RecordError, StopReason, HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MIN_SIZE_FIELD,
    SIZE_OFFSET,
};

const MIN_WINDOW: usize = 64 << 10;
const MAX_WINDOW: usize = 1 << 20;

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

/// Sequential batch reader over `[start, end)` of a log file.
pub(crate) struct LogReader {
    file: File,
    file_len: u64,
    end: u64,
    pos: u64,
    buf: Vec<u8>,
    buf_start: u64,
    window: usize,
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
            buf: Vec::new(),
            buf_start: 0,
            window: MIN_WINDOW,
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

    fn fill(&mut self, pos: u64, len: usize) -> io::Result<usize> {
        let buf_end = self.buf_start + self.buf.len() as u64;
        if !(pos >= self.buf_start && pos + len as u64 <= buf_end) {
            let want = len.max(self.window) as u64;
            self.window = (self.window * 2).min(MAX_WINDOW);
            let n = want.min(self.file_len.saturating_sub(pos)) as usize;
            self.buf.resize(n, 0);
            self.file.read_exact_at(&mut self.buf, pos)?;
            self.buf_start = pos;
        }
        Ok((pos - self.buf_start) as usize)
    }

    /// The batch at the current position, advancing past it; or why iteration stops.
    /// After a stop the position is left at the unconsumed bytes.
    pub(crate) fn next_batch(&mut self) -> io::Result<Step<'_>> {
        let pos = self.pos;
        let remaining = self.end.saturating_sub(pos);
        if remaining == 0 {
            return Ok(Step::Stop(StopReason::End));
        }
        let torn = StopReason::TornTail {
            position: pos,
            remaining_bytes: remaining as usize,
        };
        // Rule 1: fewer than 18 bytes left is a clean end.
        if remaining <= HEADER_SIZE_UP_TO_MAGIC as u64 {
            return Ok(Step::Stop(torn));
        }
        let off = self.fill(pos, HEADER_SIZE_UP_TO_MAGIC)?;
        let header = window(&self.buf, off, HEADER_SIZE_UP_TO_MAGIC)?;
        let size_bytes = header
            .get(SIZE_OFFSET..)
            .and_then(<[u8]>::first_chunk::<4>)
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let size = index_core::codec::I32Be::from_bytes(*size_bytes).get();
        // Rule 2: size < 14 is corrupt.
        if size < MIN_SIZE_FIELD as i32 {
            return Ok(Step::Stop(StopReason::Corrupt {
                position: pos,
                reason: format!(
                    "Record size {size} is less than the minimum record overhead ({MIN_SIZE_FIELD})"
                ),
            }));
        }
        let total = LOG_OVERHEAD as u64 + size as u64;
        // Rule 3: a batch running past the end is a clean end (torn tail).
        if total > remaining {
            return Ok(Step::Stop(torn));
        }
        if total > self.max_batch {
            return Ok(Step::TooLarge {
                position: pos,
                size: total,
            });
        }
        let off = self.fill(pos, total as usize)?;
        let bytes = window(&self.buf, off, total as usize)?;
        match FileBatch::at(bytes, pos) {
            Ok(batch) => {
                self.pos = pos + total;
                Ok(Step::Batch(batch))
            }
            Err(e) => Ok(Step::Stop(StopReason::Corrupt {
                position: pos,
                reason: reason_of(&e),
            })),
        }
    }
}

/// The `len` bytes at `off` of a window filled by [`LogReader::fill`]. A window ends at
/// the end of the file and callers check `len <= end - pos`, so they are there; bytes
/// missing otherwise are reported as `UnexpectedEof`.
fn window(buf: &[u8], off: usize, len: usize) -> io::Result<&[u8]> {
    buf.get(off..)
        .and_then(|b| b.get(..len))
        .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))
}

/// The message of a record error without the position prefix duplication.
pub(crate) fn reason_of(e: &RecordError) -> String {
    e.to_string()
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
