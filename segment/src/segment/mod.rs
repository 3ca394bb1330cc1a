//! [`LogSegment`]: one `.log` file with its offset, time and transaction indexes (docs/kafka-behaviour.md#log-segments).
//!
//! The type, how it is opened and its accessors are here; the rest by phase:
//! `append.rs` (appends and the roll decision), `read.rs` (the read forms, offset and
//! timestamp searches, and their answers [`FetchDataInfo`] and [`RegionFetch`]),
//! `recover.rs` (recovery, truncation and the loader's index checks) and `files.rs`
//! (flush, close, deletion, renames and file times).

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use index_core::codec::relative_offset;
use index_core::peek;
use index_offset::OffsetIndex;
use index_time::{RawTimeEntry, TimeIndex, TimestampOffset};
use index_txn::TransactionIndex;
use parking_lot::Mutex;

use crate::config::LogConfig;
use crate::error::{Result, SegmentError};
use crate::format::{BatchFormat, KafkaBatchFormat};
use crate::fs::{FsOp, FsRef};
use crate::lazy::LazyIndex;
use crate::log_file::{LogFile, LogFileMode};
use crate::names::{self, FileKind};
use crate::time::Clock;

mod append;
mod deferred;
mod files;
mod read;
mod recover;

pub(crate) use read::SegmentSlice;
pub use read::{FetchDataInfo, LogOffsetMetadata, RegionFetch};
pub(crate) use recover::{IndexFiles, ADVICE_PAGE, LOAD_CHECK_HEAD, LOAD_CHECK_TAIL};

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
    /// Per-index suffixes (offset, time, transaction) overriding `suffix`: the doctor
    /// reads a segment as the loader will leave it, with index `.swap` files renamed.
    index_suffixes: Option<[String; 3]>,
    clock: Clock,
    fs: FsRef,
    /// Set by the loader, whose directory listing has already checked the type of every
    /// file named like a segment file: whether the `.txnindex` is there. The open then
    /// does not check the four files' types again.
    listed_txn_index: Option<bool>,
}

impl SegmentOptions {
    /// An existing segment: the `.log` is opened read-write without preallocation
    /// ([`LogFileMode::ReadWrite`], logical size = file length), no suffix, the system
    /// clock and the real file system.
    pub fn existing() -> Self {
        SegmentOptions {
            mode: LogFileMode::ReadWrite,
            suffix: String::new(),
            index_suffixes: None,
            clock: crate::time::system_clock(),
            fs: crate::fs::real(),
            listed_txn_index: None,
        }
    }

    /// The loader's listing (`Log::list_dir`, which fails on any file named like a
    /// segment file that is not a regular file) has checked this segment's files, and
    /// found its `.txnindex` present or not: the open skips its own four type checks.
    pub(crate) fn listed(mut self, txn_index_exists: bool) -> Self {
        self.listed_txn_index = Some(txn_index_exists);
        self
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

    /// The suffixes of the offset, time and transaction index files, in place of
    /// [`suffix`](Self::suffix)'s for them.
    #[cfg_attr(
        not(feature = "dump"),
        expect(
            dead_code,
            reason = "only the doctor (feature `dump`) names index files apart"
        )
    )]
    pub(crate) fn index_suffixes(mut self, offset: &str, time: &str, txn: &str) -> Self {
        self.index_suffixes = Some([offset.into(), time.into(), txn.into()]);
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
    /// The load-time check of the index files, when the loader deferred it to their
    /// first load (`deferred.rs`).
    index_check: deferred::IndexCheck<F>,
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
            index_suffixes,
            clock,
            fs,
            listed_txn_index,
        } = options;
        let suffix = suffix.as_str();
        let [oi_suffix, ti_suffix, txn_suffix] = match &index_suffixes {
            Some([o, t, x]) => [o.as_str(), t.as_str(), x.as_str()],
            None => [suffix; 3],
        };
        config.validate()?;
        let mut txn_exists = listed_txn_index.unwrap_or(true);
        for kind in FileKind::ALL {
            if listed_txn_index.is_some() {
                break;
            }
            let suffix = match kind {
                FileKind::Log => suffix,
                FileKind::OffsetIndex => oi_suffix,
                FileKind::TimeIndex => ti_suffix,
                FileKind::TxnIndex => txn_suffix,
            };
            let exists = crate::fs::check_regular_file(&names::segment_file(
                dir,
                base_offset,
                kind,
                suffix,
            ))?;
            if kind == FileKind::TxnIndex {
                txn_exists = exists;
            }
        }
        let log =
            LogFile::open_with_fs(names::log_file(dir, base_offset, suffix), mode, fs.clone())?;
        let offset_index = LazyIndex::with_fs(
            names::offset_index_file(dir, base_offset, oi_suffix),
            base_offset,
            config.max_index_size,
            fs.clone(),
        );
        let time_index = LazyIndex::with_fs(
            names::time_index_file(dir, base_offset, ti_suffix),
            base_offset,
            config.max_index_size,
            fs.clone(),
        );
        let txn_path = names::transaction_index_file(dir, base_offset, txn_suffix);
        crate::fs::before(&*fs, FsOp::Open, &txn_path)?;
        // Most segments have no `.txnindex`: the check above found it absent, so opening
        // it would only fail with "not found".
        let txn_index = if txn_exists {
            TransactionIndex::open(&txn_path, base_offset)?
        } else {
            TransactionIndex::not_created(txn_path.clone(), base_offset)
        };
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
            index_check: deferred::IndexCheck::default(),
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
    /// keeps the mapping alive; hold it only for the duration of a lookup. If the loader
    /// deferred this segment's index check to the indexes' first load, it is made first,
    /// and indexes that fail it are rebuilt from the `.log`
    /// (docs/kafka-behaviour.md#deferred-index-check).
    ///
    /// # Errors
    /// An index or I/O error of that rebuild;
    /// [`SegmentError::Index`] if it cannot be opened, or with
    /// [`IndexError::Closed`](index_core::IndexError::Closed) once the segment was closed
    /// or deleted.
    pub fn offset_index(&self) -> Result<Arc<OffsetIndex>> {
        self.ensure_index_checked()?;
        Ok(self.offset_index.get()?)
    }

    /// The time index, mapping (and creating) it if needed. See
    /// [`offset_index`](Self::offset_index).
    ///
    /// # Errors
    /// As [`offset_index`](Self::offset_index).
    pub fn time_index(&self) -> Result<Arc<TimeIndex>> {
        self.ensure_index_checked()?;
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

    /// Trims the loaded `index` to its entries (Kafka's `trimToValidSize`), as one
    /// [`FsOp::IndexTrim`] reported to the seam before and, when it succeeds, after.
    ///
    /// # Errors
    /// A refusal of the seam (nothing trimmed); an index error of the trim.
    fn trim_index<T: index_core::TypedIndex>(&self, index: &T) -> Result<()> {
        let file = index.index_file();
        self.before(FsOp::IndexTrim, &file.path())?;
        file.trim_to_valid_size()?;
        self.after(FsOp::IndexTrim, &file.path());
        Ok(())
    }

    /// The lazy offset index wrapper (does not load it when its index files pass a check
    /// the loader deferred to their first use, which this makes first: a `get()` through
    /// the wrapper never answers from an index that failed it,
    /// docs/kafka-behaviour.md#deferred-index-check).
    ///
    /// # Errors
    /// As [`offset_index`](Self::offset_index): an index or I/O error of the rebuild of
    /// an index that failed the deferred check.
    pub fn lazy_offset_index(&self) -> Result<&LazyIndex<OffsetIndex>> {
        self.ensure_index_checked()?;
        Ok(&self.offset_index)
    }

    /// The lazy time index wrapper; as [`lazy_offset_index`](Self::lazy_offset_index).
    ///
    /// # Errors
    /// As [`lazy_offset_index`](Self::lazy_offset_index).
    pub fn lazy_time_index(&self) -> Result<&LazyIndex<TimeIndex>> {
        self.ensure_index_checked()?;
        Ok(&self.time_index)
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
        // The peek below reads the file itself: a deferred check first.
        self.ensure_index_checked()?;
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
        let empty = TimestampOffset {
            timestamp: -1,
            offset: self.base_offset,
        };
        // Under the lazy index's lock: a concurrent first use (a reader's timestamp
        // search) would otherwise create and preallocate the file, or map it, between
        // the check and the read, and its zero-filled last slot would read as an entry
        // `(0, base offset)`: a wrong largest timestamp, and a wrong offset for the final
        // time-index entry at roll or close.
        self.time_index
            .with_unloaded_file(|path| {
                let f = match self.fs.open_file(path, crate::fs::OpenMode::Read) {
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
            })
            .flatten()
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
