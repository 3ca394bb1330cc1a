//! Chunked batch scanning of a [`LogFile`] (docs/kafka-behaviour.md#batch-iteration stop rules) and the searches of
//! Kafka's `FileRecords` built on it.
//!
//! The record module's iterator works on a whole file image; a segment can be up to 2 GiB,
//! so this module reads the file through a sliding window of positioned reads instead and
//! hands each complete batch to the batch format.
//!
//! The `Window` and the framing rule (`format::frame`, next to the [`BatchFormat`] it
//! applies) are shared by every reader of a `.log` file: the segment's scanner here, the
//! dump tool's log reader (both), and the record module's `peek_batch` (behind
//! `BatchIter`), which applies `frame` to bytes in memory. The one
//! other framing loop is [`format::scan`](crate::format::scan), the `BatchFormat` seam's
//! own iterator over bytes in memory, whose zero-size message names the format.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::marker::PhantomData;

use crate::error::{Result, SegmentError};
use crate::format::{frame, BatchFormat, BatchInfo, FormatError};
use crate::log_file::{LogFile, MappedLog};
pub use crate::record::TimestampAndOffset;
use crate::record::{Peek, StopReason};

/// First read-ahead window, bytes; it doubles on each refill up to [`MAX_WINDOW`], so a
/// short lookup reads little and a long scan reads in large chunks.
const MIN_WINDOW: usize = 16 << 10;
/// Largest read-ahead window, bytes.
pub const MAX_WINDOW: usize = 1 << 20;

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

/// A sentence for operators (the dump, doctor, the loader's reasons): "a torn tail of 17
/// bytes at position 73", never the enum's `Debug` form.
impl std::fmt::Display for ScanStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanStop::End => f.write_str("the last batch ends at the end of the file"),
            ScanStop::TornTail {
                position,
                remaining,
            } => write!(f, "a torn tail of {remaining} bytes at position {position}"),
            ScanStop::Corrupt { error, .. } => write!(f, "{error}"),
        }
    }
}

/// The in-memory iterators' view of a scan's stop ([`BatchIter`](crate::record::BatchIter),
/// [`format::scan`](crate::format::scan)): the same three outcomes, with the error as its
/// message and the remaining bytes as a `usize` (saturating).
impl From<ScanStop> for StopReason {
    fn from(stop: ScanStop) -> Self {
        match stop {
            ScanStop::End => StopReason::End,
            ScanStop::TornTail {
                position,
                remaining,
            } => StopReason::TornTail {
                position,
                remaining_bytes: usize::try_from(remaining).unwrap_or(usize::MAX),
            },
            ScanStop::Corrupt { position, error } => StopReason::Corrupt {
                position,
                reason: error.to_string(),
            },
        }
    }
}

/// A read-ahead window over a file: the one buffer of positioned reads behind both the
/// segment's [`Scanner`] and the dump tool's log reader. A refill reads at least the
/// bytes asked for, and at least the current window size, which doubles on each refill
/// up to [`MAX_WINDOW`], so a short lookup reads little and a long scan reads in large
/// chunks.
pub struct Window {
    buf: Vec<u8>,
    buf_start: u64,
    window: usize,
    /// The size the window grows to.
    max_window: usize,
}

impl Window {
    /// An empty window whose first refill reads at least `min_window` bytes, growing to
    /// [`MAX_WINDOW`].
    pub fn new(min_window: usize, start: u64) -> Self {
        Self::bounded(min_window, min_window.max(MAX_WINDOW), start)
    }

    /// An empty window whose refills read at least `min_window` bytes, doubling up to
    /// `max_window` (more only when a single [`fill`](Self::fill) asks for more).
    fn bounded(min_window: usize, max_window: usize, start: u64) -> Self {
        Window {
            buf: Vec::new(),
            buf_start: start,
            window: min_window,
            max_window,
        }
    }

    /// The `min(len, limit - pos)` bytes at `pos`, refilling the window with `read`
    /// (positioned reads of the file, whose bytes up to `limit` may be read) when it does
    /// not hold them already.
    ///
    /// # Errors
    /// Those of `read`.
    pub fn fill<E>(
        &mut self,
        pos: u64,
        len: usize,
        limit: u64,
        read: impl FnOnce(&mut [u8], u64) -> std::result::Result<(), E>,
    ) -> std::result::Result<&[u8], E> {
        let len = (len as u64).min(limit.saturating_sub(pos)) as usize;
        let have =
            pos >= self.buf_start && pos + len as u64 <= self.buf_start + self.buf.len() as u64;
        if !have {
            let want = len.max(self.window) as u64;
            self.window = (self.window * 2).min(self.max_window);
            let n = want.min(limit.saturating_sub(pos)) as usize;
            // Zero-fills only the bytes past the buffer's current length: a refill no
            // larger than the last one reads over bytes already there.
            self.buf.resize(n, 0);
            if let Err(e) = read(&mut self.buf, pos) {
                // Half-read: the buffer matches no position any more.
                self.buf.clear();
                return Err(e);
            }
            self.buf_start = pos;
        }
        let off = (pos - self.buf_start) as usize;
        #[expect(
            clippy::indexing_slicing,
            reason = "either the window held [pos, pos + len) (`have`), or it was refilled from \
                      pos with n = min(max(len, window), limit - pos) >= len bytes, since len \
                      was clamped to limit - pos: off + len <= buf.len() both ways"
        )]
        Ok(&self.buf[off..off + len])
    }

    /// The framing of the batch at `pos` of a file whose logical end is `end` ([`frame`]
    /// applied to the first `min(F::HEADER_PEEK_BYTES, end - pos)` bytes there, read
    /// through the window as [`fill`](Self::fill) does).
    ///
    /// # Errors
    /// Those of `read`; the framing's own verdict is the inner `Result`.
    pub fn frame<F: BatchFormat, E>(
        &mut self,
        pos: u64,
        end: u64,
        limit: u64,
        read: impl FnOnce(&mut [u8], u64) -> std::result::Result<(), E>,
    ) -> std::result::Result<std::result::Result<Peek, FormatError>, E> {
        let remaining = end.saturating_sub(pos);
        if remaining == 0 {
            return Ok(Ok(Peek::End));
        }
        let peek = (F::HEADER_PEEK_BYTES as u64).min(remaining) as usize;
        let header = self.fill(pos, peek, limit, read)?;
        Ok(frame::<F>(header, remaining, pos))
    }
}

/// A sliding-window reader yielding the batches of a log file from a position, with the
/// framing rules of the [`BatchFormat`] (Kafka: docs/kafka-behaviour.md#batch-iteration).
///
/// Two reading modes over one framing step (`next_prefix`):
/// [`next_batch`](Self::next_batch) reads each whole batch through a growing window (a
/// [`new`](Self::new) scanner, for walks that need the bytes), and
/// [`next_header`](Self::next_header) reads only `min(F::MAX_HEADER_BYTES, size)` bytes
/// of each batch through a small fixed window and skips the body by the batch's size (a
/// [`headers`](Self::headers) scanner, for searches that need only the header: Kafka's
/// `FileLogInputStream` reads the 17 bytes up to the magic and the 61-byte v2 header of
/// each batch, never its records). Both modes stop at the same place for the same
/// reason: the framing is decided on the first `F::HEADER_PEEK_BYTES` bytes, and
/// `parse_header` sees at least `min(F::MAX_HEADER_BYTES, size)` bytes either way, which
/// the [`BatchFormat`] contract says is enough.
pub struct Scanner<'a, F: BatchFormat> {
    file: &'a LogFile,
    end: u64,
    pos: u64,
    window: Window,
    /// The file's bytes mapped in place of the window ([`mapped`](Self::mapped)).
    mapped: Option<MappedLog<'a>>,
    stop: Option<ScanStop>,
    _f: PhantomData<F>,
}

impl<'a, F: BatchFormat> Scanner<'a, F> {
    /// A scanner of whole batches from `start` to the file's current logical size.
    pub fn new(file: &'a LogFile, start: u64) -> Self {
        Self::with_end(file, start, file.size_in_bytes())
    }

    /// A scanner of whole batches from `start` to `end`.
    pub fn with_end(file: &'a LogFile, start: u64, end: u64) -> Self {
        Self::with_window(file, start, end, Window::new(MIN_WINDOW, start))
    }

    /// A scanner of whole batches from `start` to the file's logical size that reads
    /// the file through a read-only mapping instead of copying it into a window
    /// (`LogFile::map_for_scan`: it holds the file's writer lock, so neither appends
    /// nor truncations of this file can run until the scanner is dropped). The batches,
    /// the stop and its reason are those of [`new`](Self::new); only the copy is gone,
    /// which is most of a recovery's time in the page cache
    /// (docs/kafka-behaviour.md#recovery-mapped-scan). Falls back to the window of
    /// [`new`](Self::new) when the file cannot be mapped.
    ///
    /// # Errors
    /// [`SegmentError::SegmentDeleted`] once the file was deleted.
    pub fn mapped(file: &'a LogFile, start: u64) -> Result<Self> {
        let mapped = file.map_for_scan()?;
        let mut sc = match &mapped {
            Some(m) => Self::with_end(file, start, m.bytes().len() as u64),
            None => Self::new(file, start),
        };
        sc.mapped = mapped;
        Ok(sc)
    }

    /// A header-only scanner from `start` to the file's current logical size: use
    /// [`next_header`](Self::next_header), which reads each batch's header, and nothing
    /// else of it, with one positioned read of [`header_bytes`](Self::header_bytes)
    /// bytes (fewer when the batch or the file ends first).
    ///
    /// Exactly the header, not a larger window: a locate lands on a random position of
    /// the segment, so most cache lines the kernel copies are misses; with a 512-byte
    /// window a locate took about 1.15x as long as with the 61 bytes of Kafka's header
    /// (`segment-locate` in benches/segment.rs, ~4 KiB batches), and the larger window
    /// saves reads only where batches are smaller than it.
    pub fn headers(file: &'a LogFile, start: u64) -> Self {
        let n = Self::header_bytes();
        let window = Window::bounded(n, n, start);
        Self::with_window(file, start, file.size_in_bytes(), window)
    }

    /// The bytes of a batch [`next_header`](Self::next_header) reads: enough to frame it
    /// and to parse its header, `max(F::MAX_HEADER_BYTES, F::HEADER_PEEK_BYTES)`
    /// (Kafka: 61).
    pub const fn header_bytes() -> usize {
        if F::MAX_HEADER_BYTES > F::HEADER_PEEK_BYTES {
            F::MAX_HEADER_BYTES
        } else {
            F::HEADER_PEEK_BYTES
        }
    }

    fn with_window(file: &'a LogFile, start: u64, end: u64, window: Window) -> Self {
        Scanner {
            file,
            end,
            pos: start,
            window,
            mapped: None,
            stop: None,
            _f: PhantomData,
        }
    }

    /// Why the scan stopped (after `next_batch` or `next_header` returned `None`).
    pub fn stop(&self) -> Option<&ScanStop> {
        self.stop.as_ref()
    }

    /// The next complete batch as `(info, bytes)`, or `None` at the end (see
    /// [`stop`](Self::stop)). A corrupt batch header ends the scan with
    /// [`ScanStop::Corrupt`] (not an error: callers decide). Checksums are not verified.
    ///
    /// # Errors
    /// [`SegmentError::Io`] on read failure.
    pub fn next_batch(&mut self) -> Result<Option<(BatchInfo, &[u8])>> {
        self.next_prefix(usize::MAX)
    }

    /// The header of the next batch, or `None` at the end (see [`stop`](Self::stop)),
    /// exactly where and why [`next_batch`](Self::next_batch) would stop: only the
    /// batch's first `min(F::MAX_HEADER_BYTES, size)` bytes are read (and handed to
    /// [`BatchFormat::parse_header`]); the scan then moves on by the batch's size, so a
    /// torn or corrupt body is not noticed (as for `next_batch`, which does not validate
    /// either). Returns the header and the batch's whole size as framed (what
    /// `next_batch`'s bytes would measure; [`BatchInfo::size_in_bytes`] is the format's
    /// own word for it).
    ///
    /// # Errors
    /// [`SegmentError::Io`] on read failure.
    pub fn next_header(&mut self) -> Result<Option<(BatchInfo, usize)>> {
        let start = self.pos;
        Ok(self
            .next_prefix(Self::header_bytes())?
            .map(|(info, _)| info)
            .map(|info| (info, (self.pos - start) as usize)))
    }

    /// The one step of both modes: frames the batch at the position, reads its first
    /// `min(prefix, size)` bytes, parses its header from them and moves past the batch
    /// (by its framed size). Returns the header and the bytes read (the whole batch if
    /// `prefix >= size`).
    fn next_prefix(&mut self, prefix: usize) -> Result<Option<(BatchInfo, &[u8])>> {
        if self.stop.is_some() {
            return Ok(None);
        }
        let pos = self.pos;
        let end = self.end;
        let file = self.file;
        let read = |buf: &mut [u8], at: u64| file.read_exact_at(buf, at);
        // Mapped: the bytes from the position to the end, read in place.
        let rest = self.mapped.as_ref().map(|m| {
            usize::try_from(pos)
                .ok()
                .and_then(|p| m.bytes().get(p..))
                .unwrap_or_default()
        });
        let framed = match rest {
            Some([]) => Ok(Peek::End),
            Some(rest) => frame::<F>(
                rest.get(..F::HEADER_PEEK_BYTES.min(rest.len()))
                    .unwrap_or_default(),
                rest.len() as u64,
                pos,
            ),
            None => self.window.frame::<F, _>(pos, end, end, read)?,
        };
        let size = match framed {
            Ok(Peek::Batch(size)) => size,
            Ok(Peek::End) => {
                self.stop = Some(ScanStop::End);
                return Ok(None);
            }
            Ok(Peek::TornTail) => {
                self.stop = Some(ScanStop::TornTail {
                    position: pos,
                    remaining: end.saturating_sub(pos),
                });
                return Ok(None);
            }
            Err(error) => {
                self.stop = Some(ScanStop::Corrupt {
                    position: pos,
                    error,
                });
                return Ok(None);
            }
        };
        // frame returned Batch(size) only for size <= end - pos: all of it can be read.
        let bytes = match rest {
            Some(rest) => rest.get(..size.min(prefix)).unwrap_or_default(),
            None => self.window.fill(pos, size.min(prefix), end, read)?,
        };
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

/// Kafka's `searchForOffsetWithSize` (`searchForOffsetFromPosition` in Kafka 4.4): the
/// first batch from `start` whose last offset is ≥ `target`: `Ok(Some(_))`, or `Ok(None)`
/// when the scan reaches the end of the file first. A scan that stops before the end (a
/// torn tail, a corrupt batch) is returned as its [`ScanStop`], `Err(stop)`, for the
/// caller to decide (`docs/kafka-behaviour.md#scan-stops-short`); so is a first batch
/// whose base offset is above `first_base_at_most` (the offset of the index entry that
/// gave `start`: the batch there holds offsets up to it), as a
/// [`ScanStop::Corrupt`].
///
/// Reads only batch headers ([`Scanner::headers`]): one positioned read of the header
/// (Kafka: 61 bytes) per batch passed, never a batch's records, as Kafka reads only the
/// headers of the batches it passes.
///
/// # Errors
/// I/O.
pub(crate) fn search_for_offset_with_size<F: BatchFormat>(
    file: &LogFile,
    target: i64,
    start: u64,
    first_base_at_most: Option<i64>,
) -> Result<std::result::Result<Option<LogOffsetPosition>, ScanStop>> {
    let mut sc = Scanner::<F>::headers(file, start);
    let mut first = first_base_at_most;
    while let Some((info, size)) = sc.next_header()? {
        if let Some(stop) = first.take().and_then(|at_most| index_lies(&info, at_most)) {
            return Ok(Err(stop));
        }
        if info.last_offset >= target {
            return Ok(Ok(Some(LogOffsetPosition {
                offset: info.last_offset,
                position: info.position,
                size: size as u64,
            })));
        }
    }
    Ok(match sc.stop() {
        None | Some(ScanStop::End) => Ok(None),
        Some(stop) => Err(stop.clone()),
    })
}

/// The stop for a first batch at an index entry's position whose base offset is above
/// the entry's offset `at_most`.
fn index_lies(info: &BatchInfo, at_most: i64) -> Option<ScanStop> {
    (info.base_offset > at_most).then(|| ScanStop::Corrupt {
        position: info.position,
        error: FormatError::Corrupt {
            position: info.position,
            reason: format!(
                "the offset index names offset {at_most} here, but the batch starts at {}",
                info.base_offset
            ),
        },
    })
}

/// Kafka's `searchForTimestamp`: the first record from position `start` with
/// `timestamp ≥ target` and `offset ≥ starting_offset`; a scan that stops before the end
/// of the file, or a first batch above `first_base_at_most`, as in
/// [`search_for_offset_with_size`].
///
/// # Errors
/// Record decoding errors ([`SegmentError::Format`]); I/O.
pub(crate) fn search_for_timestamp<F: BatchFormat>(
    file: &LogFile,
    target: i64,
    start: u64,
    starting_offset: i64,
    first_base_at_most: Option<i64>,
) -> Result<std::result::Result<Option<TimestampAndOffset>, ScanStop>> {
    let mut sc = Scanner::<F>::new(file, start);
    let mut first = first_base_at_most;
    while let Some((info, bytes)) = sc.next_batch()? {
        if let Some(stop) = first.take().and_then(|at_most| index_lies(&info, at_most)) {
            return Ok(Err(stop));
        }
        if info.max_timestamp >= target {
            let found = F::search_timestamp(bytes, info.position, target, starting_offset)
                .map_err(|e| SegmentError::format(file.path(), e))?;
            if found.is_some() {
                return Ok(Ok(found));
            }
        }
    }
    Ok(match sc.stop() {
        None | Some(ScanStop::End) => Ok(None),
        Some(stop) => Err(stop.clone()),
    })
}

/// What a read answers for a search that stopped before the end of the file: `None`
/// for a torn tail (a crash mid-write: readers ignore it, recovery truncates it, as in
/// Kafka) or the end, the corrupt batch's [`SegmentError::Format`] otherwise.
pub(crate) fn stopped_short(file: &LogFile, stop: ScanStop) -> Option<SegmentError> {
    match stop {
        ScanStop::End | ScanStop::TornTail { .. } => None,
        ScanStop::Corrupt { error, .. } => Some(SegmentError::format(file.path(), error)),
    }
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
    use crate::format::{self, KafkaBatchFormat};
    use crate::log_file::LogFileMode;
    use crate::record::{
        fixtures, BatchBuilder, BatchIter, LegacyMessage, MAGIC_OFFSET, SIZE_OFFSET,
    };
    use proptest::prelude::*;

    /// Positions and stop of the [`Scanner`] over `bytes` written to a file.
    fn scanner(bytes: &[u8]) -> (Vec<u64>, ScanStop) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.log");
        std::fs::write(&path, bytes).unwrap();
        let file = LogFile::open(&path, LogFileMode::ReadOnly).unwrap();
        let mut sc = Scanner::<KafkaBatchFormat>::new(&file, 0);
        let mut positions = Vec::new();
        while let Some((info, _)) = sc.next_batch().unwrap() {
            positions.push(info.position);
        }
        (positions, sc.stop().cloned().unwrap())
    }

    /// One batch of a generated segment.
    #[derive(Clone, Debug)]
    enum Spec {
        /// A magic v2 batch of `records` records with `value`-byte values.
        V2 { records: usize, value: usize },
        /// A magic 0 or 1 message with a `value`-byte value.
        Legacy { magic: i8, value: usize },
    }

    /// Damage done to a generated segment.
    #[derive(Clone, Debug)]
    enum Damage {
        None,
        /// Cut the image to this fraction (per mille) of its length: a torn tail.
        Cut(u16),
        /// Append the first bytes (per mille of a batch) of another batch.
        Tail(u16),
        /// Overwrite the size field of batch `n % batches` with this value.
        Size(usize, i32),
        /// Overwrite the magic byte of batch `n % batches` with this value.
        Magic(usize, u8),
    }

    fn spec() -> impl Strategy<Value = Spec> {
        prop_oneof![
            3 => (1usize..6, 0usize..700).prop_map(|(records, value)| Spec::V2 { records, value }),
            1 => (0i8..2, 0usize..700).prop_map(|(magic, value)| Spec::Legacy { magic, value }),
        ]
    }

    fn damage() -> impl Strategy<Value = Damage> {
        prop_oneof![
            2 => Just(Damage::None),
            1 => (0u16..1000).prop_map(Damage::Cut),
            1 => (1u16..1000).prop_map(Damage::Tail),
            1 => (any::<usize>(), prop_oneof![-1i32..40, Just(0), any::<i32>()])
                .prop_map(|(n, v)| Damage::Size(n, v)),
            1 => (any::<usize>(), any::<u8>()).prop_map(|(n, v)| Damage::Magic(n, v)),
        ]
    }

    /// The image of `specs` from offset 10 on, each batch after a gap of `gaps[i] % 3`
    /// offsets, damaged by `damage`; and the batch start positions.
    fn image(specs: &[Spec], gaps: &[u8], damage: &Damage) -> (Vec<u8>, Vec<usize>) {
        let (mut out, mut starts, mut offset) = (Vec::new(), Vec::new(), 10i64);
        for (i, spec) in specs.iter().enumerate() {
            offset += i64::from(gaps.get(i).copied().unwrap_or(0) % 3);
            starts.push(out.len());
            match *spec {
                Spec::V2 { records, value } => {
                    let v = vec![7u8; value];
                    let mut b = BatchBuilder::new(offset).partition_leader_epoch(0);
                    for r in 0..records {
                        b = b.record(1000 + r as i64, Some(b"k"), Some(&v));
                    }
                    b.write_to(&mut out).unwrap();
                    offset += records as i64;
                }
                Spec::Legacy { magic, value } => {
                    let v = vec![7u8; value];
                    let m = LegacyMessage {
                        magic,
                        ..LegacyMessage::v1(offset, 1000, &v)
                    };
                    m.write_to(&mut out).unwrap();
                    offset += 1;
                }
            }
        }
        let batch = |n: usize| starts[n % starts.len()];
        match *damage {
            Damage::None => {}
            Damage::Cut(f) => out.truncate(out.len() * usize::from(f) / 1000),
            Damage::Tail(f) => {
                let extra = fixtures::v2(offset, 1000);
                out.extend_from_slice(&extra[..extra.len() * usize::from(f) / 1000]);
            }
            Damage::Size(n, v) => {
                let at = batch(n) + SIZE_OFFSET;
                out[at..at + 4].copy_from_slice(&v.to_be_bytes());
            }
            Damage::Magic(n, v) => out[batch(n) + MAGIC_OFFSET] = v,
        }
        (out, starts)
    }

    /// `search_for_offset_with_size` as it was: the same loop over whole batches
    /// ([`Scanner::next_batch`]), the oracle of the header-only search.
    fn search_whole_batches(
        file: &LogFile,
        target: i64,
        start: u64,
    ) -> Result<Option<LogOffsetPosition>> {
        let mut sc = Scanner::<KafkaBatchFormat>::new(file, start);
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

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        /// On random segments of v2 and legacy magic 0/1 batches, intact, torn or with a
        /// damaged size or magic byte, the header-only scan sees the headers and the stop
        /// of the whole-batch scan, and the offset search (header-only) answers what the
        /// whole-batch search answers, from every batch start, for every target.
        #[test]
        fn the_header_scan_agrees_with_the_full_scan(
            specs in proptest::collection::vec(spec(), 1..24),
            gaps in proptest::collection::vec(any::<u8>(), 24),
            damage in damage(),
        ) {
            let (bytes, starts) = image(&specs, &gaps, &damage);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("00000000000000000000.log");
            std::fs::write(&path, &bytes).unwrap();
            let file = LogFile::open(&path, LogFileMode::ReadOnly).unwrap();
            for &from in starts.iter().chain([&0, &bytes.len()]) {
                let from = from as u64;
                let mut whole = Scanner::<KafkaBatchFormat>::new(&file, from);
                let mut heads = Scanner::<KafkaBatchFormat>::headers(&file, from);
                let mut last = 0;
                loop {
                    let a = whole.next_batch().unwrap().map(|(info, b)| {
                        assert_eq!(info.size_in_bytes, b.len());
                        (info, b.len())
                    });
                    let b = heads.next_header().unwrap();
                    prop_assert_eq!(&a, &b);
                    match a {
                        Some((info, _)) => last = info.last_offset,
                        None => break,
                    }
                }
                prop_assert_eq!(whole.stop(), heads.stop());
                for target in 0..last + 3 {
                    let want = search_whole_batches(&file, target, from).map_err(|e| e.to_string());
                    let got = search_for_offset_with_size::<KafkaBatchFormat>(&file, target, from, None)
                        .and_then(|r| r.or_else(|stop| stop_error(&file, Some(&stop)).map(|()| None)))
                        .map_err(|e| e.to_string());
                    prop_assert_eq!(want, got, "target {} from {}", target, from);
                }
            }
        }
    }

    /// The file scanner, the generic in-memory scan and the record iterator (three
    /// readers, one framing rule) see the same batches and the same stop.
    #[test]
    fn the_readers_agree() {
        let batch = fixtures::v2(0, 1000);
        // Enough batches to cross the first 16 KiB window and refill.
        let many: Vec<u8> = (0..400).flat_map(|o| fixtures::v2(o, 1000)).collect();
        let mut undersized = batch.clone();
        undersized.extend_from_slice(&batch);
        undersized[73 + 8..73 + 12].copy_from_slice(&13i32.to_be_bytes());
        let mut cases = vec![Vec::new(), batch.clone(), many.clone(), undersized];
        for tail in [1, 17, 18, 72] {
            cases.push([&many[..], &batch[..tail]].concat());
        }
        for bytes in &cases {
            let (positions, stop) = scanner(bytes);
            let mut sc = format::scan::<KafkaBatchFormat>(bytes, 0);
            let scanned: Vec<u64> = sc
                .by_ref()
                .filter_map(|b| Some(b.ok()?.info.position))
                .collect();
            assert_eq!(positions, scanned);
            assert_eq!(Some(&StopReason::from(stop.clone())), sc.stop_reason());
            let mut it = BatchIter::new(bytes, 0);
            let iterated: Vec<u64> = it
                .by_ref()
                .filter_map(|b| Some(b.ok()?.position()))
                .collect();
            assert_eq!(positions, iterated);
            match (stop, it.stop_reason().unwrap()) {
                (ScanStop::Corrupt { position, .. }, StopReason::Corrupt { position: p, .. }) => {
                    assert_eq!(position, *p);
                }
                (stop, reason) => assert_eq!(StopReason::from(stop), *reason),
            }
        }
    }
}
