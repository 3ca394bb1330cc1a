//! [`LogSegment`]: one `.log` file with its offset, time and transaction indexes (docs/kafka-behaviour.md#log-segments).

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use index_core::codec::relative_offset;
use index_core::peek::{self, Ends, PeekError};
use index_core::IndexEntry;
use index_offset::{OffsetIndex, OffsetPosition, RawOffsetEntry};
use index_time::{RawTimeEntry, TimeIndex, TimestampOffset};
use index_txn::{AbortedTxn, TransactionIndex, TxnIndexSearchResult};
use parking_lot::Mutex;

use crate::config::{LogConfig, RollParams};
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::{BatchFormat, KafkaBatchFormat};
use crate::fs::{FsOp, FsRef};
use crate::lazy::LazyIndex;
use crate::log_file::{LogFile, LogFileMode};
use crate::names::{self, FileKind};
use crate::producer::{LeaderEpochCache, ProducerStateManager};
use crate::scan::{self, LogOffsetPosition, ScanStop, Scanner, TimestampAndOffset};
use crate::time::Clock;

/// Where a fetch starts (Kafka's `LogOffsetMetadata`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogOffsetMetadata {
    /// The requested offset.
    pub message_offset: i64,
    /// Base offset of the segment holding it.
    pub segment_base_offset: i64,
    /// Byte position in that segment's `.log` of the batch holding (or following) it.
    pub relative_position_in_segment: u64,
}

/// The result of [`LogSegment::read`] and [`Log::read`](crate::Log::read) (Kafka's
/// `FetchDataInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchDataInfo {
    /// Where the read started.
    pub fetch_offset_metadata: LogOffsetMetadata,
    /// The bytes read, as stored in the `.log` (in the log's [`BatchFormat`], checksums not
    /// verified): whole batches from a batch boundary, possibly ending mid-batch. Empty
    /// at the log end. Walk them with [`format::scan`](crate::format::scan).
    pub records: Vec<u8>,
    /// `true` when the first batch is larger than the size limit and `records` holds only
    /// its first bytes (never with [`Log::read`](crate::Log::read), which returns at least
    /// one whole batch).
    pub first_entry_incomplete: bool,
    /// The aborted transactions that overlap the fetched range, for a `read_committed`
    /// consumer to drop their records (Kafka's `FetchDataInfo.abortedTransactions`):
    /// `Some` only for a [`FetchIsolation::TxnCommitted`](crate::FetchIsolation) read of
    /// [`Log::read_with`](crate::Log::read_with) (possibly empty), `None` otherwise
    /// (`docs/kafka-behaviour.md#fetch-aborted-transactions`).
    pub aborted_transactions: Option<Vec<AbortedTxn>>,
}

/// Where a segment read's bytes lie in the `.log`: the shared part of
/// [`LogSegment::read_up_to`] and [`LogSegment::read_region`].
pub(crate) struct SegmentSlice {
    pub(crate) meta: LogOffsetMetadata,
    pub(crate) position: u64,
    pub(crate) len: u64,
    pub(crate) first_entry_incomplete: bool,
}

#[derive(Debug)]
struct State {
    created: i64,
    rolling_based_timestamp: Option<i64>,
    /// `None` = Kafka's UNKNOWN sentinel (not loaded yet).
    max_timestamp_and_offset: Option<TimestampOffset>,
    bytes_since_last_index_entry: u64,
}

/// How [`LogSegment::open`] opens a segment beyond its directory, base offset and
/// [`LogConfig`]: the `.log` open mode, the file-name state suffix, the clock and the
/// file-system seam (the positional `fileAlreadyExists`, `initFileSize`, `preallocate` and
/// `fileSuffix` of Kafka's `LogSegment.open`, as named settings).
///
/// Start from [`existing`](Self::existing) for a segment whose `.log` is on disk, or from
/// [`new_segment`](Self::new_segment) for a segment about to receive its first batch.
#[derive(Clone, Debug)]
#[must_use = "options do nothing until `LogSegment::open` is called"]
pub struct SegmentOptions {
    mode: LogFileMode,
    suffix: String,
    clock: Clock,
    fs: FsRef,
}

impl SegmentOptions {
    /// An existing segment: the `.log` is opened read-write without preallocation
    /// ([`LogFileMode::ReadWrite`], logical size = file length), no suffix, the system
    /// clock and the real file system.
    pub fn existing() -> Self {
        SegmentOptions {
            mode: LogFileMode::ReadWrite,
            suffix: String::new(),
            clock: crate::time::system_clock(),
            fs: crate::fs::real(),
        }
    }

    /// A new segment with Kafka's settings from `config`: preallocated to
    /// `config.segment_bytes` when `config.preallocate` ([`LogFileMode::Preallocate`],
    /// logical size 0), else [`LogFileMode::ReadWrite`]; otherwise as
    /// [`existing`](Self::existing).
    pub fn new_segment(config: &LogConfig) -> Self {
        let mode = if config.preallocate {
            LogFileMode::Preallocate(config.segment_bytes)
        } else {
            LogFileMode::ReadWrite
        };
        Self::existing().mode(mode)
    }

    /// How the `.log` is opened.
    pub fn mode(mut self, mode: LogFileMode) -> Self {
        self.mode = mode;
        self
    }

    /// The state suffix of every file name: `""` (the default) or one of
    /// [`crate::names`]' suffixes such as `.swap` or `.cleaned`.
    pub fn suffix(mut self, suffix: impl Into<String>) -> Self {
        self.suffix = suffix.into();
        self
    }

    /// The wall clock of the segment, for `segment.ms` rolls (see [`Clock`]).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The file-system seam (see [`crate::fs`]): the `.log`'s writes go through it, and
    /// index trims, resizes, flushes, renames and deletions are reported to it first.
    pub fn fs(mut self, fs: FsRef) -> Self {
        self.fs = fs;
        self
    }
}

/// A log segment: a [`LogFile`] plus a lazily mapped offset index, a lazily mapped time
/// index and a transaction index, all named after `base_offset` (Kafka's `LogSegment`).
///
/// `F` is the [`BatchFormat`] of the `.log` file (statically dispatched).
///
/// Thread-safety (as Kafka): [`append`](Self::append), [`recover`](Self::recover) and
/// [`truncate_to`](Self::truncate_to) must be serialised by the caller (the [`Log`](crate::Log)
/// does); reads ([`read`](Self::read), [`translate_offset`](Self::translate_offset),
/// [`find_offset_by_timestamp`](Self::find_offset_by_timestamp),
/// [`read_next_offset`](Self::read_next_offset)) and [`flush`](Self::flush) may run
/// concurrently with them.
#[derive(Debug)]
pub struct LogSegment<F: BatchFormat = KafkaBatchFormat> {
    log: LogFile,
    offset_index: LazyIndex<OffsetIndex>,
    time_index: LazyIndex<TimeIndex>,
    txn_index: TransactionIndex,
    base_offset: i64,
    index_interval_bytes: u64,
    roll_jitter_ms: i64,
    max_index_size: usize,
    clock: Clock,
    fs: FsRef,
    state: Mutex<State>,
    /// Set once the segment was renamed `.deleted` or its files removed.
    deleted: AtomicBool,
    _format: PhantomData<F>,
}

impl<F: BatchFormat> LogSegment<F> {
    /// Opens or creates the segment with base offset `base_offset` in `dir` (Kafka's
    /// `LogSegment.open`), as `options` says: how the `.log` is opened
    /// ([`LogFileMode`]), the state suffix, the clock and the file-system seam. File names
    /// are `<20-digit base><kind><suffix>`.
    ///
    /// Index files are not touched (they are created on first use, docs/kafka-behaviour.md#lazy-indexes); the
    /// transaction index is created by its first entry. Uses `config.max_index_size` for
    /// both indexes, `config.index_interval_bytes` and a random roll jitter.
    ///
    /// ```
    /// # use segment::{LogConfig, LogSegment, SegmentOptions};
    /// # let dir = tempfile::tempdir()?;
    /// let config = LogConfig::default();
    /// let new: LogSegment = LogSegment::open(dir.path(), 0, &config, SegmentOptions::new_segment(&config))?;
    /// drop(new);
    /// let again: LogSegment = LogSegment::open(dir.path(), 0, &config, SegmentOptions::existing())?;
    /// assert_eq!(again.size(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`SegmentError::InvalidConfig`] if `config` fails [`LogConfig::validate`];
    /// [`SegmentError::NotARegularFile`] if one of the segment's files exists but is not
    /// a regular file or a symlink to one (checked before anything is opened);
    /// [`SegmentError::Io`] if the `.log` cannot be opened or created;
    /// [`SegmentError::TxnIndex`] if an existing `.txnindex` cannot be opened.
    pub fn open(
        dir: &Path,
        base_offset: i64,
        config: &LogConfig,
        options: SegmentOptions,
    ) -> Result<Self> {
        let SegmentOptions {
            mode,
            suffix,
            clock,
            fs,
        } = options;
        let suffix = suffix.as_str();
        config.validate()?;
        for kind in FileKind::ALL {
            crate::validate::check_regular_file(&names::segment_file(
                dir,
                base_offset,
                kind,
                suffix,
            ))?;
        }
        let log =
            LogFile::open_with_fs(names::log_file(dir, base_offset, suffix), mode, fs.clone())?;
        let offset_index = LazyIndex::with_fs(
            names::offset_index_file(dir, base_offset, suffix),
            base_offset,
            config.max_index_size,
            fs.clone(),
        );
        let time_index = LazyIndex::with_fs(
            names::time_index_file(dir, base_offset, suffix),
            base_offset,
            config.max_index_size,
            fs.clone(),
        );
        let txn_path = names::transaction_index_file(dir, base_offset, suffix);
        crate::fs::before(&*fs, FsOp::Open, &txn_path)?;
        let txn_index = TransactionIndex::open(&txn_path, base_offset)?;
        fs.after(FsOp::Open, &txn_path, None);
        let now = clock.milliseconds();
        Ok(LogSegment {
            log,
            offset_index,
            time_index,
            txn_index,
            base_offset,
            index_interval_bytes: config.index_interval_bytes,
            roll_jitter_ms: config.random_segment_jitter(),
            max_index_size: config.max_index_size,
            clock,
            fs,
            state: Mutex::new(State {
                created: now,
                rolling_based_timestamp: None,
                max_timestamp_and_offset: None,
                bytes_since_last_index_entry: 0,
            }),
            deleted: AtomicBool::new(false),
            _format: PhantomData,
        })
    }

    /// Creates a new, empty segment with Kafka's settings from `config`
    /// ([`SegmentOptions::new_segment`]: preallocated to `segment_bytes` when
    /// `config.preallocate`) and the clock `clock`.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn create(dir: &Path, base_offset: i64, config: &LogConfig, clock: Clock) -> Result<Self> {
        Self::open(
            dir,
            base_offset,
            config,
            SegmentOptions::new_segment(config).clock(clock),
        )
    }

    /// Sets the roll jitter (ms) fixed at creation; for tests and loaders.
    pub fn set_roll_jitter_ms(&mut self, jitter_ms: i64) {
        self.roll_jitter_ms = jitter_ms;
    }

    /// The roll jitter of this segment, ms.
    pub fn roll_jitter_ms(&self) -> i64 {
        self.roll_jitter_ms
    }

    /// The segment's base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// Logical size of the `.log` in bytes.
    pub fn size(&self) -> u64 {
        self.log.size_in_bytes()
    }

    /// The `.log` file object.
    pub fn log(&self) -> &LogFile {
        &self.log
    }

    /// The offset index, mapping (and creating) it if needed. Holding the returned `Arc`
    /// keeps the mapping alive; hold it only for the duration of a lookup.
    ///
    /// # Errors
    /// [`SegmentError::Index`] if it cannot be opened, or with
    /// [`IndexError::Closed`](index_core::IndexError::Closed) once the segment was closed
    /// or deleted.
    pub fn offset_index(&self) -> Result<Arc<OffsetIndex>> {
        Ok(self.offset_index.get()?)
    }

    /// The time index, mapping (and creating) it if needed. See
    /// [`offset_index`](Self::offset_index).
    ///
    /// # Errors
    /// As [`offset_index`](Self::offset_index).
    pub fn time_index(&self) -> Result<Arc<TimeIndex>> {
        Ok(self.time_index.get()?)
    }

    /// The file-system seam of this segment.
    pub fn fs(&self) -> &FsRef {
        &self.fs
    }

    /// Reports `op` on `path` to the seam (index operations performed by index-core).
    fn before(&self, op: FsOp, path: &Path) -> Result<()> {
        crate::fs::before(&*self.fs, op, path)
    }

    /// Reports the success of `op` on `path` to the seam ([`crate::fs::FileSystem::after`]).
    fn after(&self, op: FsOp, path: &Path) {
        self.fs.after(op, path, None);
    }

    /// Trims both indexes to their entries and drops this segment's mappings of them (the
    /// next lookup maps them again); a no-op for an index that is not loaded. Also closes
    /// the transaction index's appender handle (reads and a later [`flush`](Self::flush)
    /// open the file for the call), so an inactive segment holds one descriptor only, its
    /// `.log`'s (`docs/kafka-behaviour.md#file-descriptors`). For inactive segments (see
    /// [`LazyIndex::unload`]). Called by
    /// [`on_become_inactive_segment`](Self::on_become_inactive_segment).
    ///
    /// # Errors
    /// Index errors from trimming; a refusal of the seam.
    pub fn unload_indexes(&self) -> Result<()> {
        if self.offset_index.is_loaded() {
            self.before(FsOp::IndexTrim, &self.offset_index.file())?;
            self.offset_index.unload()?;
            self.after(FsOp::IndexTrim, &self.offset_index.file());
        }
        if self.time_index.is_loaded() {
            self.before(FsOp::IndexTrim, &self.time_index.file())?;
            self.time_index.unload()?;
            self.after(FsOp::IndexTrim, &self.time_index.file());
        }
        self.txn_index.close();
        Ok(())
    }

    /// The lazy offset index wrapper (does not load).
    pub fn lazy_offset_index(&self) -> &LazyIndex<OffsetIndex> {
        &self.offset_index
    }

    /// The lazy time index wrapper (does not load).
    pub fn lazy_time_index(&self) -> &LazyIndex<TimeIndex> {
        &self.time_index
    }

    /// The transaction index.
    pub fn txn_index(&self) -> &TransactionIndex {
        &self.txn_index
    }

    /// Path of the offset index file.
    pub fn offset_index_file(&self) -> PathBuf {
        self.offset_index.file()
    }

    /// Path of the time index file.
    pub fn time_index_file(&self) -> PathBuf {
        self.time_index.file()
    }

    /// Path of the `.log` file.
    pub fn log_path(&self) -> PathBuf {
        self.log.path()
    }

    fn overflow(&self, offset: i64) -> SegmentError {
        SegmentError::OffsetOverflow {
            path: self.log.path(),
            base_offset: self.base_offset,
            offset,
        }
    }

    fn fmt_err(&self, e: crate::format::FormatError) -> SegmentError {
        SegmentError::format(self.log.path(), e)
    }

    /// Whether `offset` is representable relative to the base offset
    /// (`0 ≤ offset − base ≤ i32::MAX`).
    pub fn can_convert_to_relative_offset(&self, offset: i64) -> bool {
        relative_offset(self.base_offset, offset).is_some()
    }

    fn load_max(&self, st: &mut State) -> Result<TimestampOffset> {
        if let Some(m) = st.max_timestamp_and_offset {
            return Ok(m);
        }
        let m = match self.peek_time_index_last_entry() {
            Some(m) => m,
            None => self.time_index()?.last_entry()?,
        };
        st.max_timestamp_and_offset = Some(m);
        Ok(m)
    }

    /// The time index's last entry read with one positioned read, **without mapping**
    /// the index (field case B17: a retention pass or a timestamp search over thousands of segments
    /// must not map every time index). `None` when the index is loaded (ask it) or the
    /// file cannot be read cheaply (bad length, I/O error: the caller then loads the index
    /// and gets its error). A missing or empty file gives `(−1, base offset)`, as the
    /// index would.
    fn peek_time_index_last_entry(&self) -> Option<TimestampOffset> {
        use crate::pio::FileExt;
        if self.time_index.is_loaded() || self.time_index.is_gone() {
            return None;
        }
        let empty = TimestampOffset {
            timestamp: -1,
            offset: self.base_offset,
        };
        let path = self.time_index.file();
        let f = match self.fs.open_file(&path, crate::fs::OpenMode::Read) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(empty),
            Err(_) => return None,
        };
        let len = f.metadata().ok()?.len();
        // Empty: `Ok(None)`; not whole entries or a failed read: `Err`.
        match peek::peek_last::<RawTimeEntry>(len, |b, at| f.read_exact_at(b, at)) {
            Ok(None) => Some(empty),
            Ok(Some((_, last))) => Some(TimestampOffset {
                timestamp: last.timestamp.get(),
                offset: self.base_offset + last.relative_offset.get() as i64,
            }),
            Err(_) => None,
        }
    }

    /// Largest timestamp appended so far (ms since epoch; −1 if none), loading it from the
    /// time index's last entry on first use (Kafka's `maxTimestampSoFar`).
    ///
    /// # Errors
    /// [`SegmentError::Index`] if the time index cannot be opened.
    pub fn max_timestamp_so_far(&self) -> Result<i64> {
        let mut st = self.state.lock();
        Ok(self.load_max(&mut st)?.timestamp)
    }

    /// Offset associated with [`max_timestamp_so_far`](Self::max_timestamp_so_far)
    /// (Kafka's `shallowOffsetOfMaxTimestampSoFar`).
    ///
    /// # Errors
    /// As [`max_timestamp_so_far`](Self::max_timestamp_so_far).
    pub fn shallow_offset_of_max_timestamp_so_far(&self) -> Result<i64> {
        let mut st = self.state.lock();
        Ok(self.load_max(&mut st)?.offset)
    }

    /// Appends `records` (whole batches) whose largest offset is `largest_offset`
    /// (Kafka's `append`, docs/kafka-behaviour.md#segment-append). `largest_timestamp` (ms since epoch) and
    /// `shallow_offset_of_max_timestamp` describe the max timestamp of the appended
    /// batches. Adds a sparse index entry `(largest_offset, start position)` when more than
    /// `index_interval_bytes` were appended since the last entry (counted **before** this
    /// append). No-op for empty `records`.
    ///
    /// # Errors
    /// [`SegmentError::OffsetOverflow`] if `largest_offset` is not representable relative to
    /// the base offset (nothing written); [`SegmentError::InvalidArgument`] if the file
    /// would exceed 2 GiB; index errors (full index, non-increasing offset); I/O.
    pub fn append(
        &self,
        largest_offset: i64,
        largest_timestamp: i64,
        shallow_offset_of_max_timestamp: i64,
        records: &[u8],
    ) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let mut st = self.state.lock();
        let physical_position = self.log.size_in_bytes();
        if physical_position == 0 {
            st.rolling_based_timestamp = Some(largest_timestamp);
        }
        if !self.can_convert_to_relative_offset(largest_offset) {
            return Err(self.overflow(largest_offset));
        }
        self.log.append(records)?;
        let max = self.load_max(&mut st)?;
        if largest_timestamp > max.timestamp {
            st.max_timestamp_and_offset = Some(TimestampOffset {
                timestamp: largest_timestamp,
                offset: shallow_offset_of_max_timestamp,
            });
        }
        if st.bytes_since_last_index_entry > self.index_interval_bytes {
            self.offset_index()?
                .append(largest_offset, physical_position as u32)?;
            let m = self.load_max(&mut st)?;
            self.time_index()?.maybe_append(m.timestamp, m.offset)?;
            st.bytes_since_last_index_entry = 0;
        }
        st.bytes_since_last_index_entry += records.len() as u64;
        Ok(())
    }

    /// Kafka's `appendFromFile` (acceptance case 65): copies whole batches of `source`, starting at
    /// byte position `start` (a batch boundary), into this segment and returns the number
    /// of bytes copied.
    ///
    /// Batches are copied in chunks of less than 1 MiB — a chunk always takes at least one
    /// batch, so a larger batch is copied alone — and each chunk is one
    /// [`append`](Self::append) (largest offset = the chunk's last batch's last offset, max
    /// timestamp = the largest batch max timestamp with the last offset of the first batch
    /// holding it). Copying stops before the first batch whose last offset is not
    /// representable relative to this segment's base offset (the log loader uses this to
    /// split a legacy segment with offset overflow), and at the end of the source's
    /// complete, well-framed batches: a torn or corrupt tail is not copied (compare the
    /// result with the source size). Checksums are not verified (as Kafka).
    ///
    /// # Errors
    /// Those of [`append`](Self::append) (e.g. [`SegmentError::InvalidArgument`] when this
    /// segment's `.log` would exceed 2 GiB); I/O reading `source`. Chunks appended before
    /// an error stay appended.
    pub fn append_from_file(&self, source: &LogFile, start: u64) -> Result<u64> {
        let mut position = start;
        let mut chunk = Vec::new();
        loop {
            let n = self.append_chunk_from_file(source, position, &mut chunk)?;
            if n == 0 {
                return Ok(position - start);
            }
            position += n;
        }
    }

    /// One chunk of [`append_from_file`](Self::append_from_file); returns its size.
    fn append_chunk_from_file(
        &self,
        source: &LogFile,
        position: u64,
        chunk: &mut Vec<u8>,
    ) -> Result<u64> {
        /// Kafka's read buffer for `appendFromFile`, bytes.
        const CHUNK_BYTES: usize = 1 << 20;
        chunk.clear();
        let mut max_timestamp = i64::MIN;
        let mut shallow_offset_of_max_timestamp = i64::MIN;
        let mut max_offset = i64::MIN;
        let mut sc = Scanner::<F>::new(source, position);
        while let Some((info, bytes)) = sc.next_batch()? {
            if !self.can_convert_to_relative_offset(info.last_offset)
                || (!chunk.is_empty() && chunk.len() + bytes.len() >= CHUNK_BYTES)
            {
                break;
            }
            if info.max_timestamp > max_timestamp {
                max_timestamp = info.max_timestamp;
                shallow_offset_of_max_timestamp = info.last_offset;
            }
            max_offset = info.last_offset;
            chunk.extend_from_slice(bytes);
        }
        if chunk.is_empty() {
            return Ok(0);
        }
        self.append(
            max_offset,
            max_timestamp,
            shallow_offset_of_max_timestamp,
            chunk,
        )?;
        Ok(chunk.len() as u64)
    }

    /// Records an aborted transaction in the transaction index (Kafka's `updateTxnIndex`
    /// for aborted transactions).
    ///
    /// # Errors
    /// [`SegmentError::TxnIndex`].
    pub fn append_aborted_txn(&self, txn: &index_txn::AbortedTxn) -> Result<()> {
        self.before(FsOp::TxnWrite, &self.txn_index.path())?;
        self.txn_index.append(txn)?;
        self.after(FsOp::TxnWrite, &self.txn_index.path());
        Ok(())
    }

    /// Kafka's `translateOffset`: the first batch at or after position
    /// `starting_position` whose last offset is ≥ `offset`, starting the scan at the
    /// offset index's lower bound. `None` if `offset` is beyond the segment.
    ///
    /// # Errors
    /// Index errors; [`SegmentError::Format`] if a corrupt batch is met; I/O.
    pub fn translate_offset(
        &self,
        offset: i64,
        starting_position: u64,
    ) -> Result<Option<LogOffsetPosition>> {
        let p = self.offset_index()?.lookup(offset)?.position as u64;
        scan::search_for_offset_with_size::<F>(&self.log, offset, p.max(starting_position))
    }

    /// Kafka's two-argument `read(startOffset, maxSize)` (docs/kafka-behaviour.md#segment-read): up to
    /// `max_size` bytes starting at the batch holding `start_offset`, up to the segment's
    /// size; [`read_up_to`](Self::read_up_to) with `max_position = size()`. `None` when
    /// `start_offset` is beyond the segment.
    ///
    /// # Errors
    /// Those of [`translate_offset`](Self::translate_offset).
    pub fn read(&self, start_offset: i64, max_size: u64) -> Result<Option<FetchDataInfo>> {
        self.read_with(start_offset, max_size, self.size(), false)
    }

    /// Kafka's `read(startOffset, maxSize, maxPosition, minOneMessage = false)`: up to
    /// `max_size` bytes starting at the batch holding `start_offset`, not going past
    /// `max_position` (bytes); a first batch larger than `max_size` is returned cut, with
    /// [`FetchDataInfo::first_entry_incomplete`] set. `None` when `start_offset` is beyond
    /// the segment.
    ///
    /// # Errors
    /// [`SegmentError::InvalidArgument`] if `max_position` is before the batch start;
    /// those of [`translate_offset`](Self::translate_offset).
    pub fn read_up_to(
        &self,
        start_offset: i64,
        max_size: u64,
        max_position: u64,
    ) -> Result<Option<FetchDataInfo>> {
        self.read_with(start_offset, max_size, max_position, false)
    }

    /// Kafka's `read(startOffset, maxSize, maxPosition, minOneMessage = true)`, the
    /// fetch's form: as [`read_up_to`](Self::read_up_to), but a first batch larger than
    /// `max_size` is returned whole (still not past `max_position`), so that a consumer
    /// always makes progress.
    ///
    /// # Errors
    /// As [`read_up_to`](Self::read_up_to).
    pub fn read_min_one_message(
        &self,
        start_offset: i64,
        max_size: u64,
        max_position: u64,
    ) -> Result<Option<FetchDataInfo>> {
        self.read_with(start_offset, max_size, max_position, true)
    }

    /// Kafka's `read` with an empty `maxPosition`: where a read of `start_offset` would
    /// start (the position of the batch holding it), without reading any bytes. `None`
    /// when `start_offset` is beyond the segment.
    ///
    /// # Errors
    /// Those of [`translate_offset`](Self::translate_offset).
    pub fn read_metadata(&self, start_offset: i64) -> Result<Option<LogOffsetMetadata>> {
        Ok(self
            .translate_offset(start_offset, 0)?
            .map(|t| LogOffsetMetadata {
                message_offset: start_offset,
                segment_base_offset: self.base_offset,
                relative_position_in_segment: t.position,
            }))
    }

    fn read_with(
        &self,
        start_offset: i64,
        max_size: u64,
        max_position: u64,
        min_one_message: bool,
    ) -> Result<Option<FetchDataInfo>> {
        let Some(sl) =
            self.slice_with(start_offset, max_size, Some(max_position), min_one_message)?
        else {
            return Ok(None);
        };
        let records = if sl.len == 0 {
            Vec::new()
        } else {
            self.log.read(sl.position, sl.len)?
        };
        Ok(Some(FetchDataInfo {
            fetch_offset_metadata: sl.meta,
            records,
            first_entry_incomplete: sl.first_entry_incomplete,
            aborted_transactions: None,
        }))
    }

    /// Kafka's `read(startOffset, maxSize, maxPositionOpt, minOneMessage)` as a
    /// [`FileRegion`](crate::FileRegion) of the `.log` instead of copied bytes (Kafka's
    /// `FileRecords.slice`, `docs/kafka-behaviour.md#zero-copy-reads`): up to `max_size`
    /// bytes (at least the first batch whole with `min_one_message`) from the batch
    /// holding `start_offset`, not past `max_position`; an empty region when
    /// `max_position` is `None` (Kafka: the bound lies in an earlier segment) or the size
    /// is 0. `None` when `start_offset` is beyond the segment.
    ///
    /// # Errors
    /// As [`read_up_to`](Self::read_up_to); [`SegmentError::SegmentDeleted`] once the
    /// segment's files were removed.
    pub fn read_region(
        &self,
        start_offset: i64,
        max_size: u64,
        max_position: Option<u64>,
        min_one_message: bool,
    ) -> Result<Option<crate::RegionFetch>> {
        let Some(sl) = self.slice_with(start_offset, max_size, max_position, min_one_message)?
        else {
            return Ok(None);
        };
        Ok(Some(crate::RegionFetch {
            region: self.log.slice(sl.position, sl.len)?,
            fetch_offset_metadata: sl.meta,
            first_entry_incomplete: sl.first_entry_incomplete,
            aborted_transactions: None,
        }))
    }

    pub(crate) fn slice_with(
        &self,
        start_offset: i64,
        max_size: u64,
        max_position: Option<u64>,
        min_one_message: bool,
    ) -> Result<Option<SegmentSlice>> {
        let Some(t) = self.translate_offset(start_offset, 0)? else {
            return Ok(None);
        };
        let meta = LogOffsetMetadata {
            message_offset: start_offset,
            segment_base_offset: self.base_offset,
            relative_position_in_segment: t.position,
        };
        let adjusted = if min_one_message {
            max_size.max(t.size)
        } else {
            max_size
        };
        let empty = SegmentSlice {
            meta,
            position: t.position,
            len: 0,
            first_entry_incomplete: false,
        };
        let Some(max_position) = max_position else {
            return Ok(Some(empty));
        };
        if adjusted == 0 {
            return Ok(Some(empty));
        }
        let Some(room) = max_position.checked_sub(t.position) else {
            return Err(SegmentError::arg(format!(
                "max position {max_position} is before the batch position {}",
                t.position
            )));
        };
        Ok(Some(SegmentSlice {
            meta,
            position: t.position,
            len: room.min(adjusted),
            first_entry_incomplete: adjusted < t.size,
        }))
    }

    /// Kafka's `findOffsetByTimestamp` (docs/kafka-behaviour.md#segment-find-by-timestamp): the first record with timestamp ≥
    /// `timestamp` (ms since epoch) and offset ≥ `starting_offset`.
    ///
    /// # Errors
    /// Index, format and I/O errors.
    pub fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let entry = self.time_index()?.lookup(timestamp)?;
        let pos = self
            .offset_index()?
            .lookup(entry.offset.max(starting_offset))?
            .position as u64;
        scan::search_for_timestamp::<F>(&self.log, timestamp, pos, starting_offset)
    }

    /// Kafka's `fetchUpperBoundOffset`: the offset of the first index entry whose position
    /// is ≥ `start_position.position + fetch_size`, if any.
    ///
    /// # Errors
    /// Index errors.
    pub fn fetch_upper_bound_offset(
        &self,
        start_position: OffsetPosition,
        fetch_size: i32,
    ) -> Result<Option<i64>> {
        Ok(self
            .offset_index()?
            .fetch_upper_bound_offset(start_position, fetch_size)?
            .map(|p| p.offset))
    }

    /// Kafka's `readNextOffset`: the offset after the last batch of the segment, or the
    /// base offset if it holds none (docs/kafka-behaviour.md#segment-read-next-offset). A header-only (0-record) batch counts.
    ///
    /// # Errors
    /// Index, format and I/O errors; [`SegmentError::Corrupt`] if a batch's last offset is
    /// `i64::MAX` (the next offset is not representable).
    pub fn read_next_offset(&self) -> Result<i64> {
        let last = self.offset_index()?.last_offset()?;
        let Some(t) = self.translate_offset(last, 0)? else {
            return Ok(self.base_offset);
        };
        let mut sc = Scanner::<F>::new(&self.log, t.position);
        let mut next = self.base_offset;
        while let Some((info, _)) = sc.next_batch()? {
            next = info
                .last_offset
                .checked_add(1)
                .ok_or_else(|| SegmentError::Corrupt {
                    path: self.log.path(),
                    reason: format!(
                        "batch at position {} has last offset {}: the next offset is not representable",
                        info.position,
                        i64::MAX
                    ),
                })?;
        }
        Ok(next)
    }

    /// Whether the segment holds an offset not representable relative to its base
    /// (Kafka's `hasOverflow`).
    ///
    /// # Errors
    /// As [`read_next_offset`](Self::read_next_offset).
    pub fn has_overflow(&self) -> Result<bool> {
        let next = self.read_next_offset()?;
        Ok(next > self.base_offset && !self.can_convert_to_relative_offset(next - 1))
    }

    /// Kafka's `recover` (docs/kafka-behaviour.md#segment-recover): validates every batch, rebuilds the offset, time and
    /// transaction indexes per batch, truncates the `.log` after the last valid batch and
    /// returns the number of bytes truncated.
    ///
    /// Producer state (`producer_state`) is updated per v2 batch; aborted transactions
    /// completed by markers in this segment are appended to the transaction index with the
    /// LSO of the moment. The leader-epoch cache, if given, gets `(epoch, base offset)` for
    /// every batch whose epoch is above its latest.
    ///
    /// A torn tail, a corrupt batch (framing, checksum), an invalid control record or a
    /// batch whose offsets go backwards (its base offset not above the previous batch's
    /// last offset, below the segment's base offset, or above its own last offset) stops
    /// the scan and is truncated, so the next offset never falls below an offset the
    /// segment keeps (Kafka only notices backward offsets when they reach the offset
    /// index, and then empties the whole segment). Deviation: an invalid control record is excluded from
    /// the valid bytes (Kafka counts the batch, then stops).
    ///
    /// # Errors
    /// [`SegmentError::OffsetOverflow`] if a batch's last offset is not representable (the
    /// loader must split the segment); unsupported batches ([`SegmentError::Format`] that
    /// is not a corruption); index and I/O errors.
    pub fn recover(
        &self,
        producer_state: &mut ProducerStateManager,
        epoch_cache: Option<&mut LeaderEpochCache>,
    ) -> Result<u64> {
        self.recover_with(producer_state, epoch_cache, &mut || Ok(()))
    }

    /// [`recover`](Self::recover), calling `before_truncate` once it knows that the `.log`
    /// must be truncated, just before truncating it. The loader deletes the segments after
    /// this one there, so that their deletion is durable before the truncation can be
    /// (`docs/kafka-behaviour.md#crash-persistence-model`).
    ///
    /// # Errors
    /// As [`recover`](Self::recover), and the error of `before_truncate` (nothing is
    /// truncated then).
    pub fn recover_with(
        &self,
        producer_state: &mut ProducerStateManager,
        mut epoch_cache: Option<&mut LeaderEpochCache>,
        before_truncate: &mut dyn FnMut() -> Result<()>,
    ) -> Result<u64> {
        let mut st = self.state.lock();
        let oi = self.offset_index()?;
        let ti = self.time_index()?;
        self.before(FsOp::IndexResize, &oi.path())?;
        oi.reset()?;
        self.after(FsOp::IndexResize, &oi.path());
        self.before(FsOp::IndexResize, &ti.path())?;
        ti.reset()?;
        self.after(FsOp::IndexResize, &ti.path());
        self.before(FsOp::TxnWrite, &self.txn_index.path())?;
        self.txn_index.reset()?;
        self.after(FsOp::TxnWrite, &self.txn_index.path());
        let mut max = TimestampOffset {
            timestamp: -1,
            offset: self.base_offset,
        };
        let mut valid_bytes: u64 = 0;
        let mut last_index_entry: u64 = 0;
        let mut prev_last: Option<i64> = None;
        let mut sc = Scanner::<F>::new(&self.log, 0);
        loop {
            let Some((info, bytes)) = sc.next_batch()? else {
                if let Some(ScanStop::Corrupt { error, .. }) = sc.stop() {
                    tracing::warn!(path = %self.log.path().display(), %error, "corrupt batch found during recovery");
                }
                break;
            };
            if let Err(e) = F::validate(bytes, info.position) {
                if e.is_corruption() {
                    tracing::warn!(path = %self.log.path().display(), error = %e, "invalid batch found during recovery");
                    break;
                }
                return Err(self.fmt_err(e));
            }
            // Offsets that go backwards (or below the segment's base) cannot have been
            // appended (`Log::append` refuses them): keeping such a batch would make the
            // segment's next offset, read from its last batch, fall below offsets it
            // holds, and they would be handed out again. Treat it as corrupt.
            if info.base_offset < self.base_offset
                || info.last_offset < info.base_offset
                || prev_last.is_some_and(|p| info.base_offset <= p)
            {
                tracing::warn!(path = %self.log.path().display(), position = info.position, base_offset = info.base_offset, last_offset = info.last_offset, ?prev_last, "batch whose offsets go backwards found during recovery");
                break;
            }
            if info.last_offset == i64::MAX {
                // Nothing can follow it: the next offset is not representable. Such a batch
                // cannot have been appended (`Log::append` refuses it): treat it as corrupt.
                tracing::warn!(path = %self.log.path().display(), position = info.position, "batch with last offset i64::MAX found during recovery");
                break;
            }
            if !self.can_convert_to_relative_offset(info.last_offset) {
                return Err(self.overflow(info.last_offset));
            }
            let kafka_v2 = F::KAFKA_PRODUCER_STATE && info.magic >= 2;
            // Kafka's `updateProducerState` parses a control record only in a batch with a
            // producer id (docs/kafka-behaviour.md#control-batch-without-producer).
            let marker = if kafka_v2 && info.is_control && info.producer_id >= 0 {
                match F::end_txn_marker(bytes, info.position) {
                    Ok(m) => m,
                    Err(e) if e.is_corruption() => {
                        tracing::warn!(path = %self.log.path().display(), error = %e, "invalid control record during recovery");
                        break;
                    }
                    Err(e) => return Err(self.fmt_err(e)),
                }
            } else {
                None
            };
            if info.max_timestamp > max.timestamp {
                max = TimestampOffset {
                    timestamp: info.max_timestamp,
                    offset: info.offset_of_max_timestamp,
                };
            }
            if valid_bytes - last_index_entry > self.index_interval_bytes {
                // Recovery indexes batch by batch, an append once per call: a segment
                // written by multi-batch appends can need more entries here than its
                // indexes hold. A full index stays sparse (lookups scan on from its last
                // entry) instead of failing the open, where Kafka's `recover` throws
                // (`docs/kafka-behaviour.md#recovery-full-index`).
                if !oi.is_full() {
                    oi.append(info.last_offset, valid_bytes as u32)?;
                }
                if !ti.is_full() {
                    ti.maybe_append(max.timestamp, max.offset)?;
                }
                last_index_entry = valid_bytes;
            }
            valid_bytes += info.size_in_bytes as u64;
            prev_last = Some(info.last_offset);
            if kafka_v2 {
                if let Some(cache) = epoch_cache.as_deref_mut() {
                    if info.partition_leader_epoch >= 0 {
                        cache.assign_if_newer(info.partition_leader_epoch, info.base_offset);
                    }
                }
                if let Some(done) = producer_state.update(&info, marker.as_ref()) {
                    if done.is_aborted {
                        let lso = producer_state.last_stable_offset(&done);
                        self.append_aborted_txn(&ProducerStateManager::aborted_entry(&done, lso))?;
                    }
                    producer_state.complete_txn(&done);
                }
            }
        }
        let truncated = self.log.size_in_bytes() - valid_bytes;
        if truncated > 0 {
            tracing::warn!(path = %self.log.path().display(), truncated, valid_bytes, "truncating invalid bytes at the end of the segment");
            before_truncate()?;
        }
        self.log.truncate_to(valid_bytes)?;
        self.before(FsOp::IndexTrim, &oi.path())?;
        oi.trim_to_valid_size()?;
        self.after(FsOp::IndexTrim, &oi.path());
        ti.maybe_append_final(max.timestamp, max.offset)?;
        self.before(FsOp::IndexTrim, &ti.path())?;
        ti.trim_to_valid_size()?;
        self.after(FsOp::IndexTrim, &ti.path());
        st.max_timestamp_and_offset = Some(max);
        st.bytes_since_last_index_entry = 0;
        Ok(truncated)
    }

    /// Kafka's `readLargestTimestamp`: the larger of the time index's last entry and the
    /// max batch timestamp after the position of that entry's offset.
    fn read_largest_timestamp(&self) -> Result<TimestampOffset> {
        let last = self.time_index()?.last_entry()?;
        let pos = self.offset_index()?.lookup(last.offset)?.position as u64;
        let (ts, off) = scan::largest_timestamp_after::<F>(&self.log, pos)?;
        Ok(if ts > last.timestamp {
            TimestampOffset {
                timestamp: ts,
                offset: off,
            }
        } else {
            last
        })
    }

    /// Kafka's `truncateTo` (docs/kafka-behaviour.md#segment-truncate): removes every batch from the one holding (or
    /// following) `offset` onwards, truncates all three indexes, re-grows the offset and
    /// time indexes to the max index size (the segment becomes appendable again), and
    /// recomputes the largest timestamp from what remains. Returns the bytes removed.
    ///
    /// # Errors
    /// Index, transaction index, format and I/O errors.
    pub fn truncate_to(&self, offset: i64) -> Result<u64> {
        let mapping = self.translate_offset(offset, 0)?;
        let mut st = self.state.lock();
        let oi = self.offset_index()?;
        let ti = self.time_index()?;
        oi.truncate_to(offset)?;
        ti.truncate_to(offset)?;
        self.before(FsOp::TxnWrite, &self.txn_index.path())?;
        self.txn_index.truncate_to(offset)?;
        self.after(FsOp::TxnWrite, &self.txn_index.path());
        self.before(FsOp::IndexResize, &oi.path())?;
        oi.resize(self.max_index_size)?;
        self.after(FsOp::IndexResize, &oi.path());
        self.before(FsOp::IndexResize, &ti.path())?;
        ti.resize(self.max_index_size)?;
        self.after(FsOp::IndexResize, &ti.path());
        let bytes = match mapping {
            None => 0,
            Some(m) => self.log.truncate_to(m.position)?,
        };
        if self.log.size_in_bytes() == 0 {
            st.created = self.clock.milliseconds();
            st.rolling_based_timestamp = None;
        }
        st.bytes_since_last_index_entry = 0;
        if self.load_max(&mut st)?.timestamp >= 0 {
            st.max_timestamp_and_offset = Some(self.read_largest_timestamp()?);
        }
        Ok(bytes)
    }

    /// Called when a new segment is rolled after this one (Kafka's
    /// `onBecomeInactiveSegment`): appends the final time-index entry (max timestamp so
    /// far, using the reserved slot), trims both indexes and drops `.log` preallocation.
    ///
    /// Then — unlike Kafka, which keeps every inactive segment's indexes mapped — it drops
    /// this segment's mappings of both indexes ([`unload_indexes`](Self::unload_indexes));
    /// the next lookup maps them again. The number of live mappings therefore does not
    /// grow with the number of rolls (field case B17).
    ///
    /// # Errors
    /// Index and I/O errors; a refusal of the seam. Calling it again after a failure is
    /// safe (every step is idempotent).
    pub fn on_become_inactive_segment(&self) -> Result<()> {
        let max = {
            let mut st = self.state.lock();
            self.load_max(&mut st)?
        };
        let ti = self.time_index()?;
        ti.maybe_append_final(max.timestamp, max.offset)?;
        let oi = self.offset_index()?;
        self.before(FsOp::IndexTrim, &oi.path())?;
        oi.trim_to_valid_size()?;
        self.after(FsOp::IndexTrim, &oi.path());
        self.before(FsOp::IndexTrim, &ti.path())?;
        ti.trim_to_valid_size()?;
        self.after(FsOp::IndexTrim, &ti.path());
        drop((oi, ti));
        self.log.trim()?;
        self.unload_indexes()
    }

    /// Resizes both indexes to `size` bytes (the loader does this for the active
    /// segment, docs/kafka-behaviour.md#log-loading step 7).
    ///
    /// # Errors
    /// Index errors; a refusal of the seam.
    pub fn resize_indexes(&self, size: usize) -> Result<()> {
        let oi = self.offset_index()?;
        self.before(FsOp::IndexResize, &oi.path())?;
        oi.resize(size)?;
        self.after(FsOp::IndexResize, &oi.path());
        let ti = self.time_index()?;
        self.before(FsOp::IndexResize, &ti.path())?;
        ti.resize(size)?;
        self.after(FsOp::IndexResize, &ti.path());
        Ok(())
    }

    fn load_first_batch_timestamp(&self, st: &mut State) -> Result<()> {
        if st.rolling_based_timestamp.is_none() {
            let mut sc = Scanner::<F>::new(&self.log, 0);
            if let Some((info, _)) = sc.next_batch()? {
                st.rolling_based_timestamp = Some(info.max_timestamp);
            }
        }
        Ok(())
    }

    /// Kafka's `timeWaitedForRoll(now, messageTimestamp)` in ms: `message_timestamp − first
    /// batch timestamp` if the segment has a first-batch timestamp ≥ 0, else
    /// `now − created`.
    ///
    /// # Errors
    /// Format and I/O errors reading the first batch.
    pub fn time_waited_for_roll(&self, now: i64, message_timestamp: i64) -> Result<i64> {
        let mut st = self.state.lock();
        self.load_first_batch_timestamp(&mut st)?;
        Ok(match st.rolling_based_timestamp {
            Some(t) if t >= 0 => message_timestamp.saturating_sub(t),
            _ => now.saturating_sub(st.created),
        })
    }

    /// Kafka's `getFirstBatchTimestamp`: the first batch's max timestamp, or `i64::MAX`.
    ///
    /// # Errors
    /// As [`time_waited_for_roll`](Self::time_waited_for_roll).
    pub fn get_first_batch_timestamp(&self) -> Result<i64> {
        let mut st = self.state.lock();
        self.load_first_batch_timestamp(&mut st)?;
        Ok(match st.rolling_based_timestamp {
            Some(t) if t >= 0 => t,
            _ => i64::MAX,
        })
    }

    /// Kafka's `shouldRoll` (docs/kafka-behaviour.md#segment-roll): the new data would not fit; or the segment is
    /// non-empty and old enough (minus jitter); or either index is full; or the incoming
    /// max offset is not representable relative to the base offset.
    ///
    /// # Errors
    /// Index errors (the indexes are materialised), format and I/O errors.
    pub fn should_roll(&self, p: &RollParams) -> Result<bool> {
        let size = self.size();
        let reached_time = size > 0
            && self.time_waited_for_roll(p.now, p.max_timestamp_in_messages)?
                > p.max_segment_ms.saturating_sub(self.roll_jitter_ms);
        Ok(size > p.max_segment_bytes.saturating_sub(p.messages_size)
            || reached_time
            || self.offset_index()?.is_full()
            || self.time_index()?.is_full()
            || !self.can_convert_to_relative_offset(p.max_offset_in_messages))
    }

    /// Kafka's `collectAbortedTxns` on this segment's transaction index.
    ///
    /// # Errors
    /// [`SegmentError::TxnIndex`].
    pub fn collect_aborted_txns(
        &self,
        fetch_offset: i64,
        upper_bound_offset: i64,
    ) -> Result<TxnIndexSearchResult> {
        Ok(self
            .txn_index
            .collect_aborted_txns(fetch_offset, upper_bound_offset)?)
    }

    /// fsyncs the `.log`, both indexes (materialising them, as Kafka) and the transaction
    /// index. A no-op on a deleted segment ([`is_deleted`](Self::is_deleted)): its data is
    /// going away, and a reader or flusher that still holds it must not fail.
    ///
    /// # Errors
    /// I/O and index errors.
    pub fn flush(&self) -> Result<()> {
        if self.is_deleted() {
            return Ok(());
        }
        self.log.flush()?;
        self.flush_index(&self.offset_index)?;
        self.flush_index(&self.time_index)?;
        self.before(FsOp::IndexFlush, &self.txn_index.path())?;
        self.txn_index.flush()?;
        self.after(FsOp::IndexFlush, &self.txn_index.path());
        Ok(())
    }

    /// Flushes one index: `msync` if it is mapped; an unloaded index whose file exists
    /// (an inactive segment's, see [`unload_indexes`](Self::unload_indexes)) is fsynced
    /// through a plain file handle instead of being mapped again; a missing one is
    /// materialised, as Kafka does.
    fn flush_index<T: index_core::TypedIndex>(&self, lazy: &LazyIndex<T>) -> Result<()> {
        let path = lazy.file();
        self.before(FsOp::IndexFlush, &path)?;
        if let Some(ix) = lazy.get_if_loaded() {
            ix.index_file().flush()?;
            self.after(FsOp::IndexFlush, &path);
            return Ok(());
        }
        match self.fs.open_file(&path, crate::fs::OpenMode::Read) {
            Ok(f) => f
                .sync_data()
                .map_err(|e| SegmentError::io("fsync", &path, e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(lazy.get()?.index_file().flush()?)
            }
            Err(e) => Err(SegmentError::io("open", &path, e)),
        }?;
        self.after(FsOp::IndexFlush, &path);
        Ok(())
    }

    /// Kafka 3.x's `close`: appends the final time-index entry if the max timestamp is
    /// known, then closes (trim + unmap) the indexes if loaded, trims and flushes the
    /// `.log`, and closes the transaction index. Every step is attempted; the first error
    /// is returned. Kafka 4.4 no longer appends the final entry, which hides the active
    /// segment's unindexed tail from timestamp searches after a restart; we keep it
    /// (`docs/kafka-behaviour.md#close-no-time-entry`).
    ///
    /// Unlike Kafka, every trim is made durable before `close` returns, so a clean-shutdown
    /// marker written after it never covers an untrimmed file: an index a close trimmed is
    /// fsynced after its trim (KAFKA-20979: Kafka's trim at shutdown is never synced), and
    /// the `.log` is trimmed **before** its final fsync (KAFKA-21000: Kafka's
    /// `FileRecords.close` flushes first, so with `preallocate` a clean shutdown can keep
    /// the zero-filled tail). See `docs/kafka-behaviour.md#durable-trims`.
    ///
    /// # Errors
    /// The first failure.
    pub fn close(&self) -> Result<()> {
        let mut first: Option<SegmentError> = None;
        let mut keep = |r: Result<()>| {
            if let Err(e) = r {
                tracing::warn!(error = %e, "error while closing segment");
                first.get_or_insert(e);
            }
        };
        let max = self.state.lock().max_timestamp_and_offset;
        if let Some(m) = max {
            keep(
                self.time_index()
                    .and_then(|ti| Ok(ti.maybe_append_final(m.timestamp, m.offset).map(|_| ())?)),
            );
        }
        let loaded = self.offset_index.is_loaded();
        if loaded {
            keep(self.before(FsOp::IndexTrim, &self.offset_index.file()));
        }
        let trimmed = self.offset_index.close();
        if trimmed.is_ok() && loaded {
            self.after(FsOp::IndexTrim, &self.offset_index.file());
            keep(self.sync_trimmed_index(&self.offset_index.file()));
        }
        keep(trimmed.map_err(Into::into));
        let loaded = self.time_index.is_loaded();
        if loaded {
            keep(self.before(FsOp::IndexTrim, &self.time_index.file()));
        }
        let trimmed = self.time_index.close();
        if trimmed.is_ok() && loaded {
            self.after(FsOp::IndexTrim, &self.time_index.file());
            keep(self.sync_trimmed_index(&self.time_index.file()));
        }
        keep(trimmed.map_err(Into::into));
        // `LogFile::close` trims before its fsync, so that the fsync covers the new length
        // (KAFKA-21000).
        keep(self.log.close());
        self.txn_index.close();
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// fsyncs an index file just trimmed by [`close`](Self::close) (through a plain
    /// handle: the index is unmapped), so that its trimmed length is durable before the
    /// clean-shutdown marker. Kafka does not (KAFKA-20979): after a power cut, a log
    /// marked clean can keep an untrimmed, zero-filled index.
    fn sync_trimmed_index(&self, path: &Path) -> Result<()> {
        if crate::fs::mutated!(NoTrimFsync) {
            return Ok(());
        }
        self.before(FsOp::IndexFlush, path)?;
        match self.fs.open_file(path, crate::fs::OpenMode::Read) {
            Ok(f) => f
                .sync_data()
                .map_err(|e| SegmentError::io("fsync", path, e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(SegmentError::io("open", path, e)),
        }
        self.after(FsOp::IndexFlush, path);
        Ok(())
    }

    /// Unmaps the indexes without flushing or trimming (Kafka's `closeHandlers`, used
    /// after a disk failure or a crash simulation).
    pub fn close_handlers(&self) {
        self.offset_index.close_handler();
        self.time_index.close_handler();
        self.txn_index.close();
    }

    /// Deletes all four files; every deletion is attempted and the first error returned.
    ///
    /// # Errors
    /// The first I/O failure (missing files are not errors).
    pub fn delete_if_exists(&self) -> Result<()> {
        self.deleted.store(true, Ordering::Release);
        let mut first: Option<SegmentError> = None;
        if let Err(e) = self.log.delete_if_exists() {
            first.get_or_insert(e);
        }
        for p in [self.offset_index.file(), self.time_index.file()] {
            if let Err(e) = self.before(FsOp::IndexRemove, &p) {
                first.get_or_insert(e);
            }
        }
        let oi = self.offset_index.file();
        match self.offset_index.delete_if_exists() {
            Ok(_) => self.after(FsOp::IndexRemove, &oi),
            Err(e) => {
                first.get_or_insert(e.into());
            }
        }
        let ti = self.time_index.file();
        match self.time_index.delete_if_exists() {
            Ok(_) => self.after(FsOp::IndexRemove, &ti),
            Err(e) => {
                first.get_or_insert(e.into());
            }
        }
        let tx = self.txn_index.path();
        match self
            .before(FsOp::IndexRemove, &tx)
            .and_then(|()| Ok(self.txn_index.delete_if_exists()?))
        {
            Ok(_) => self.after(FsOp::IndexRemove, &tx),
            Err(e) => {
                first.get_or_insert(e);
            }
        }
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// `true` once the segment was renamed to the `.deleted` suffix
    /// ([`change_file_suffixes`](Self::change_file_suffixes)) or its files removed
    /// ([`delete_if_exists`](Self::delete_if_exists)): it has left its log, and
    /// [`flush`](Self::flush) does nothing. Reads keep working until the files are removed.
    pub fn is_deleted(&self) -> bool {
        self.deleted.load(Ordering::Acquire)
    }

    /// `true` iff none of the four files exists on disk (Kafka's `deleted()`). Unlike
    /// [`is_deleted`](Self::is_deleted), which says the segment has left its log, this
    /// asks the file system, so a `.deleted` segment whose removal is still pending
    /// answers `false`.
    pub fn files_removed(&self) -> bool {
        !self.log.path().exists()
            && !self.offset_index.file().exists()
            && !self.time_index.file().exists()
            && !self.txn_index.path().exists()
    }

    /// Renames all four files from suffix `old` to suffix `new` (e.g. `""` → `".deleted"`);
    /// index files that do not exist are not created.
    ///
    /// # Errors
    /// [`SegmentError::FileName`] if a name does not end with `old`; I/O.
    pub fn change_file_suffixes(&self, old: &str, new: &str) -> Result<()> {
        let log_to = names::replace_suffix(&self.log.path(), old, new)?;
        let oi_to = names::replace_suffix(&self.offset_index.file(), old, new)?;
        let ti_to = names::replace_suffix(&self.time_index.file(), old, new)?;
        let tx_to = names::replace_suffix(&self.txn_index.path(), old, new)?;
        self.log.rename_to(&log_to)?;
        if new == names::DELETED_FILE_SUFFIX {
            // The `.log` rename must be durable before any index rename: a power cut that
            // kept a `.txnindex.deleted` beside a live `.log` would bring the segment back
            // without its aborted transactions (docs/kafka-behaviour.md#crash-persistence-model).
            if let Some(dir) = log_to.parent() {
                crate::fs::fsync_dir_with(&*self.fs, dir)?;
            }
        }
        let from = self.offset_index.file();
        self.before(FsOp::IndexRename, &from)?;
        self.offset_index.rename_to(&oi_to)?;
        self.fs.after(FsOp::IndexRename, &from, Some(&oi_to));
        let from = self.time_index.file();
        self.before(FsOp::IndexRename, &from)?;
        self.time_index.rename_to(&ti_to)?;
        self.fs.after(FsOp::IndexRename, &from, Some(&ti_to));
        let from = self.txn_index.path();
        self.before(FsOp::IndexRename, &from)?;
        self.txn_index.rename_to(&tx_to)?;
        self.fs.after(FsOp::IndexRename, &from, Some(&tx_to));
        if new == names::DELETED_FILE_SUFFIX {
            self.deleted.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// `true` iff all four file names end with `suffix`.
    pub fn has_suffix(&self, suffix: &str) -> bool {
        [
            self.log.path(),
            self.offset_index.file(),
            self.time_index.file(),
            self.txn_index.path(),
        ]
        .iter()
        .all(|p| names::file_name(p).ends_with(suffix))
    }

    /// Moves all four stored paths to `dir` (no I/O).
    pub fn update_parent_dir(&self, dir: &Path) {
        self.log.update_parent_dir(dir);
        self.offset_index.update_parent_dir(dir);
        self.time_index.update_parent_dir(dir);
        self.txn_index.update_parent_dir(dir);
    }

    /// The largest record timestamp (ms since epoch) if known, else the `.log` file's
    /// last-modified time (Kafka's `largestTimestamp`; field case B9).
    ///
    /// # Errors
    /// Index errors; I/O reading the mtime.
    pub fn largest_timestamp(&self) -> Result<i64> {
        let ts = self.max_timestamp_so_far()?;
        if ts >= 0 {
            Ok(ts)
        } else {
            self.log.last_modified()
        }
    }

    /// The largest record timestamp if ≥ 0 (Kafka's `largestRecordTimestamp`).
    ///
    /// # Errors
    /// Index errors.
    pub fn largest_record_timestamp(&self) -> Result<Option<i64>> {
        let ts = self.max_timestamp_so_far()?;
        Ok((ts >= 0).then_some(ts))
    }

    /// Last-modified time of the `.log`, ms since epoch.
    ///
    /// # Errors
    /// I/O.
    pub fn last_modified(&self) -> Result<i64> {
        self.log.last_modified()
    }

    /// Sets the last-modified time of the `.log` and of the index files that exist.
    ///
    /// # Errors
    /// I/O.
    pub fn set_last_modified(&self, ms: i64) -> Result<()> {
        crate::fs::set_last_modified_ms(&self.log.path(), ms)?;
        for p in [self.offset_index.file(), self.time_index.file()] {
            if p.exists() {
                crate::fs::set_last_modified_ms(&p, ms)?;
            }
        }
        Ok(())
    }

    /// Kafka's load-time `sanityCheck(timeIndexFileNewlyCreated)`: a missing `.index` file
    /// is [`SegmentError::MissingIndex`] (the loader then recovers the segment); a time
    /// index that did not exist before opening is created and resized to 0; then the
    /// transaction index is checked.
    ///
    /// # Errors
    /// [`SegmentError::MissingIndex`]; [`SegmentError::TxnIndex`] with a corruption;
    /// index errors.
    pub fn sanity_check(&self, time_index_file_newly_created: bool) -> Result<()> {
        let oi = self.offset_index.file();
        if !oi.exists() {
            return Err(SegmentError::MissingIndex {
                path: oi,
                base_offset: self.base_offset,
            });
        }
        if time_index_file_newly_created {
            let ti = self.time_index()?;
            self.before(FsOp::IndexResize, &ti.path())?;
            ti.resize(0)?;
            self.after(FsOp::IndexResize, &ti.path());
        }
        self.txn_index.sanity_check()?;
        Ok(())
    }

    /// The entry count and first and last entries of the index file at `path`, opened
    /// through the file-system seam: `None` if it is missing or empty; `Err(reason)` on a
    /// length that is not whole entries or an I/O error.
    fn index_ends<E: IndexEntry>(
        &self,
        path: &Path,
    ) -> std::result::Result<Option<Ends<E>>, String> {
        let f = match self.fs.open_file(path, crate::fs::OpenMode::Read) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        // Only non-empty files are checked by the caller (`n >= 1` there).
        peek::peek_file_ends::<E>(&f).map_err(|e| match e {
            PeekError::NotWholeEntries { len, entry_size } => format!(
                "{}: length {len} is not a multiple of {entry_size}",
                path.display()
            ),
            e => e.to_string(),
        })
    }

    /// A stricter, cheap check of the index files **without mapping them** (a few
    /// positioned reads): whole-entry lengths, and for each index its first and last
    /// entries must be ordered (offset index: last offset > first offset when there are
    /// ≥ 2 entries, both ≥ base; time index: last timestamp ≥ first and strictly greater
    /// with ≥ 2 entries, last offset ≥ first). Catches untrimmed zero-padded indexes
    /// (field case B1, field case B3) that Kafka's load path trusts. Missing files pass.
    ///
    /// Returns `Err(reason)` describing the first problem found.
    pub fn quick_index_check(&self) -> std::result::Result<(), String> {
        let oi = self.offset_index.file();
        if let Some(Ends {
            entries: n,
            first,
            last,
        }) = self.index_ends::<RawOffsetEntry>(&oi)?
        {
            let (r0, r1) = (first.relative_offset.get(), last.relative_offset.get());
            if r0 < 0 || r1 < 0 {
                return Err(format!("{}: negative relative offset", oi.display()));
            }
            if n >= 2 && r1 <= r0 {
                return Err(format!(
                    "{}: {n} entries but the last offset {} is not above the first {}",
                    oi.display(),
                    self.base_offset + r1 as i64,
                    self.base_offset + r0 as i64
                ));
            }
        }
        let ti = self.time_index.file();
        if let Some(Ends {
            entries: n,
            first,
            last,
        }) = self.index_ends::<RawTimeEntry>(&ti)?
        {
            let (t0, t1) = (first.timestamp.get(), last.timestamp.get());
            let (o0, o1) = (first.relative_offset.get(), last.relative_offset.get());
            if o0 < 0 || o1 < 0 {
                return Err(format!("{}: negative relative offset", ti.display()));
            }
            if n >= 2 && (t1 <= t0 || o1 < o0) {
                return Err(format!(
                    "{}: {n} entries but the last entry ({t1}, {}) does not follow the first ({t0}, {})",
                    ti.display(),
                    self.base_offset + o1 as i64,
                    self.base_offset + o0 as i64
                ));
            }
        }
        Ok(())
    }

    /// Every index-related file path of this segment by kind.
    pub fn file(&self, kind: FileKind) -> PathBuf {
        match kind {
            FileKind::Log => self.log.path(),
            FileKind::OffsetIndex => self.offset_index.file(),
            FileKind::TimeIndex => self.time_index.file(),
            FileKind::TxnIndex => self.txn_index.path(),
        }
    }

    /// The clock this segment uses.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }
}
