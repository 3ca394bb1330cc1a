//! # index-time
//!
//! Kafka's time index (`<base offset>.timeindex`): a sparse, memory-mapped map from
//! timestamps (milliseconds since the epoch) to offsets, byte-compatible with Apache
//! Kafka's `TimeIndex`.
//!
//! Each entry is 12 bytes, big-endian: the timestamp (`i64`, ms since epoch) and the
//! offset relative to the segment's base offset (`i32`). An entry `(T, O)` says: `T` is
//! the largest timestamp seen in the segment up to the batch ending at offset `O`, so any
//! record with a timestamp `> T` lies after `O`.
//!
//! ```
//! use index_time::{TimeIndex, TimestampOffset};
//!
//! let dir = tempfile::tempdir()?;
//! let index = TimeIndex::open(dir.path().join("00000000000000000045.timeindex"), 45, 360)?;
//! assert!(index.maybe_append(1_700_000_000_000, 55)?);
//! assert!(!index.maybe_append(1_700_000_000_000, 60)?); // same timestamp: ignored
//! assert!(index.maybe_append(1_700_000_000_500, 65)?);
//! assert_eq!(index.lookup(1_700_000_000_250)?, TimestampOffset { timestamp: 1_700_000_000_000, offset: 55 });
//! assert_eq!(index.lookup(0)?, TimestampOffset { timestamp: -1, offset: 45 }); // none: (-1, base)
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod view;

use std::path::Path;

use bytemuck::{Pod, Zeroable};
use index_core::codec::{relative_offset, I32Be, I64Be, IndexEntry};
pub use index_core::{
    Bound, IndexError, IndexFile, NoProbe, OpenMode, PageProbe, Probe, Result, SearchField,
    SearchStrategy, Snapshot,
};

pub use view::TimeIndexView;

/// Size of a time-index entry in bytes.
pub const ENTRY_SIZE: usize = 12;

/// Kafka's `RecordBatch.NO_TIMESTAMP`.
pub const NO_TIMESTAMP: i64 = -1;

/// One time-index entry exactly as stored: timestamp (`i64`, ms since epoch, big-endian)
/// and relative offset (`i32`, big-endian). Alignment 1, 12 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct RawTimeEntry {
    /// Milliseconds since the epoch.
    pub timestamp: I64Be,
    /// `offset - base_offset`.
    pub relative_offset: I32Be,
}

const _: () = assert!(std::mem::size_of::<RawTimeEntry>() == ENTRY_SIZE);
const _: () = assert!(std::mem::align_of::<RawTimeEntry>() == 1);

impl RawTimeEntry {
    /// Builds a raw entry.
    pub fn new(timestamp: i64, relative_offset: i32) -> Self {
        RawTimeEntry {
            timestamp: I64Be::new(timestamp),
            relative_offset: I32Be::new(relative_offset),
        }
    }
    /// Decodes the entry for a segment starting at `base_offset`.
    pub fn decode(&self, base_offset: i64) -> TimestampOffset {
        TimestampOffset {
            timestamp: self.timestamp.get(),
            // Java's long arithmetic: only a corrupt slot (or a base offset within 2^31
            // of i64::MAX) can leave the i64 range; it must not panic. The wrapped value
            // is below the base, which sanity_check reports as CorruptIndex.
            offset: base_offset.wrapping_add(self.relative_offset.get() as i64),
        }
    }
}

impl IndexEntry for RawTimeEntry {
    const SIZE: usize = ENTRY_SIZE;
    const KIND: &'static str = "time index";
    #[inline(always)]
    fn key(&self, _base_offset: i64) -> i64 {
        self.timestamp.get()
    }
    #[inline(always)]
    fn value(&self, base_offset: i64) -> i64 {
        base_offset.wrapping_add(self.relative_offset.get() as i64)
    }
}

/// A timestamp (ms since epoch) and an offset (Kafka's `TimestampOffset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimestampOffset {
    /// Milliseconds since the epoch, or [`NO_TIMESTAMP`].
    pub timestamp: i64,
    /// Absolute offset.
    pub offset: i64,
}

/// Kafka's time index over a memory-mapped `.timeindex` file.
///
/// `Send + Sync`: one appender and any number of concurrent readers.
#[derive(Debug)]
pub struct TimeIndex {
    file: IndexFile<RawTimeEntry>,
}

/// The file's lifecycle ([`IndexFile::path`], [`IndexFile::entries`],
/// [`IndexFile::max_entries`], [`IndexFile::resize`], [`IndexFile::trim_to_valid_size`],
/// [`IndexFile::flush`], [`IndexFile::rename_to`], [`IndexFile::delete_if_exists`],
/// [`IndexFile::force_unmap`], …) is the [`IndexFile`]'s: a `TimeIndex` derefs to it.
/// The methods of `TimeIndex` itself are Kafka's rules for this layout; where a name is
/// on both (`entry`, `last_entry`, `close`, `is_full`), the typed one is what callers get.
/// The file's own writers ([`IndexFile::append`], [`IndexFile::writer`],
/// [`IndexFile::truncate_to_entries`]) take raw entries and skip Kafka's rules (the
/// reserved slot, increasing timestamps): use [`TimeIndex::maybe_append`] unless you are
/// rebuilding an index slot by slot.
impl std::ops::Deref for TimeIndex {
    type Target = IndexFile<RawTimeEntry>;
    fn deref(&self) -> &IndexFile<RawTimeEntry> {
        &self.file
    }
}

impl index_core::TypedIndex for TimeIndex {
    type Entry = RawTimeEntry;
    fn open_writable(path: &Path, base_offset: i64, max_index_size: usize) -> Result<Self> {
        TimeIndex::open(path, base_offset, max_index_size)
    }
    fn index_file(&self) -> &IndexFile<RawTimeEntry> {
        &self.file
    }
}

impl TimeIndex {
    /// Creates (preallocating `max_index_size_bytes`, rounded down to a multiple of 12) or
    /// opens a writable time index for the segment starting at `base_offset`. An existing
    /// file counts every complete slot as an entry, as in Kafka.
    ///
    /// # Errors
    /// [`IndexError::InvalidArgument`] if the file is new and `max_index_size_bytes < 12`
    /// (the empty file is left on disk, as Kafka does); [`IndexError::Io`].
    pub fn open(
        path: impl AsRef<Path>,
        base_offset: i64,
        max_index_size_bytes: usize,
    ) -> Result<Self> {
        Self::open_with(
            path,
            base_offset,
            Some(max_index_size_bytes),
            OpenMode::ReadWrite,
        )
    }

    /// Opens an existing time index read-only (for tools).
    ///
    /// # Errors
    /// [`IndexError::Io`] (`NotFound` when the file is missing).
    pub fn open_read_only(path: impl AsRef<Path>, base_offset: i64) -> Result<Self> {
        Self::open_with(path, base_offset, None, OpenMode::ReadOnly)
    }

    /// The general constructor: `max_index_size_bytes = None` is Kafka's `-1`.
    pub fn open_with(
        path: impl AsRef<Path>,
        base_offset: i64,
        max_index_size_bytes: Option<usize>,
        mode: OpenMode,
    ) -> Result<Self> {
        Ok(TimeIndex {
            file: IndexFile::open(path.as_ref(), base_offset, max_index_size_bytes, mode)?,
        })
    }

    /// Sets the search strategy (default: [`SearchStrategy::HYBRID`], with Kafka's
    /// warm/cold answers).
    pub fn with_search_strategy(self, strategy: SearchStrategy) -> Self {
        TimeIndex {
            file: self.file.with_search_strategy(strategy),
        }
    }

    /// The underlying memory-mapped file.
    pub fn index_file(&self) -> &IndexFile<RawTimeEntry> {
        &self.file
    }

    /// Whether the index is full: `entries >= max_entries - 1`. One slot is always kept
    /// for the final entry written when the segment rolls or closes (Kafka's override);
    /// an index with 0 or 1 slots is always full.
    pub fn is_full(&self) -> bool {
        self.entries() >= self.max_entries().saturating_sub(1)
    }

    /// The last entry, or `(-1, base_offset)` when empty (Kafka's `lastEntry`).
    pub fn last_entry(&self) -> Result<TimestampOffset> {
        let base = self.base_offset();
        Ok(self.file.last_entry()?.map_or(
            TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: base,
            },
            |e| e.decode(base),
        ))
    }

    /// Appends `(timestamp, offset)` if `timestamp` is larger than the last entry's
    /// (Kafka's `maybeAppend(timestamp, offset, skipFullCheck = false)`); returns whether
    /// an entry was written. Checks, in Kafka's order:
    ///
    /// 1. [`TimeIndex::is_full`] (one slot is kept for
    ///    [`maybe_append_final`](Self::maybe_append_final)) → [`IndexError::IndexFull`];
    /// 2. non-empty and `offset < last offset` → [`IndexError::InvalidOffset`];
    /// 3. non-empty and `timestamp < last timestamp` → [`IndexError::InvalidTimestamp`];
    /// 4. `timestamp <= last timestamp` (−1 when empty, so [`NO_TIMESTAMP`] is never
    ///    indexed) → ignored, `Ok(false)`;
    /// 5. offset not representable → [`IndexError::OffsetOverflow`] — checked **before**
    ///    anything is written (Kafka writes the timestamp first and corrupts its cursor).
    ///
    /// Each call takes and releases the writer lock; to append many entries in a row,
    /// [`TimeIndex::appender`] takes it once.
    pub fn maybe_append(&self, timestamp: i64, offset: i64) -> Result<bool> {
        self.append_once(timestamp, offset, false)
    }

    /// One checked append under its own hold of the writer lock: the last entry is read
    /// back from the mapping and passed in registers ([`append_checked`]), not moved
    /// through an appender built for the call.
    #[inline]
    fn append_once(&self, timestamp: i64, offset: i64, skip_full_check: bool) -> Result<bool> {
        let mut writer = self.file.writer();
        let base_offset = self.file.base_offset();
        let last = writer.last_entry()?.map(|e| e.decode(base_offset));
        append_checked(
            &mut writer,
            base_offset,
            last,
            (timestamp, offset),
            skip_full_check,
        )
    }

    /// The segment's final entry, written when it stops taking appends (a roll, the end
    /// of recovery, a close): [`maybe_append`](Self::maybe_append) without check 1, so it
    /// may take the slot that [`TimeIndex::is_full`] keeps free (Kafka's
    /// `maybeAppend(timestamp, offset, skipFullCheck = true)`). Checks 2–5 apply; with no
    /// slot left at all → [`IndexError::IndexFull`].
    pub fn maybe_append_final(&self, timestamp: i64, offset: i64) -> Result<bool> {
        self.append_once(timestamp, offset, true)
    }

    /// Takes the writer lock once for a run of appends (an index rebuild, a bulk load).
    /// The returned [`TimeAppender`] applies [`TimeIndex::maybe_append`]'s checks, with
    /// the same errors and the same skipped timestamps, and keeps the last entry in
    /// registers instead of reading the last slot back on every call.
    ///
    /// The `&mut` borrow makes the run exclusive: until the appender drops, nothing else
    /// reads or writes this index through this handle, so no other writer can wait on
    /// the lock and this thread cannot deadlock on it. Every entry is published as it is
    /// appended, so a run cut short (an error, a panic) leaves the entries before it.
    ///
    /// # Errors
    /// [`IndexError::Closed`] after the index was unmapped.
    pub fn appender(&mut self) -> Result<TimeAppender<'_>> {
        TimeAppender::new(&self.file)
    }

    /// The entry with the largest timestamp `<= target_timestamp` (Kafka's `lookup`), or
    /// `(-1, base_offset)` when the index is empty or the target is below the first entry.
    #[inline]
    pub fn lookup(&self, target_timestamp: i64) -> Result<TimestampOffset> {
        self.lookup_with_probe(target_timestamp, &mut NoProbe)
    }

    /// Runs `f` with a reader whose lookups skip the per-call reader-slot announcement
    /// of [`TimeIndex::lookup`]: the thread announces itself once for the whole batch
    /// ([`IndexFile::with_reader`]). Same answers as [`TimeIndex::lookup`].
    ///
    /// While `f` runs, a remap of any index of the process (`resize`, a trim, `close`)
    /// waits for it, as it waits for any lookup in flight: keep `f` to a batch of
    /// lookups, and do not resize or close an index from inside it (that would wait for
    /// this thread itself). Appends and truncations do not wait.
    #[inline]
    pub fn with_reader<R>(&self, f: impl FnOnce(&TimeReader<'_>) -> R) -> R {
        let base = self.base_offset();
        self.file
            .with_reader(|r| f(&TimeReader { reader: r, base }))
    }

    /// [`TimeIndex::lookup`], reporting every byte range read to `probe`.
    #[inline]
    pub fn lookup_with_probe<P: Probe>(
        &self,
        target_timestamp: i64,
        probe: &mut P,
    ) -> Result<TimestampOffset> {
        lookup_by(self.base_offset(), target_timestamp, probe, |t, f, b, p| {
            self.file.search(t, f, b, p)
        })
    }

    /// The entry in slot `n`.
    ///
    /// # Errors
    /// [`IndexError::SlotOutOfRange`] if `n >= entries`.
    pub fn entry(&self, n: usize) -> Result<TimestampOffset> {
        Ok(self.file.entry(n)?.decode(self.base_offset()))
    }

    /// All entries, decoded (for tools and tests).
    pub fn all_entries(&self) -> Result<Vec<TimestampOffset>> {
        let snap = self.snapshot()?;
        let base = self.base_offset();
        Ok(snap.slots().iter().map(|e| e.decode(base)).collect())
    }

    /// Removes every entry with an offset `>= offset` (Kafka's `truncateTo`, a
    /// largest-lower-bound search on the offset). The file length is unchanged.
    pub fn truncate_to(&self, offset: i64) -> Result<()> {
        self.file.truncate_to_field(SearchField::Value, offset)
    }

    /// Removes all entries (file length unchanged).
    pub fn truncate(&self) -> Result<()> {
        self.file.truncate_to_entries(0)
    }

    /// Checks Kafka's invariants, in Kafka's order ([`IndexError::CorruptIndex`]):
    /// the last timestamp is below the first one; the last offset is below the base
    /// offset; the file length is not a multiple of 12.
    pub fn sanity_check(&self) -> Result<()> {
        let base = self.base_offset();
        let snap = self.snapshot()?;
        if let (Some(first), Some(last)) = (snap.slots().first(), snap.last()) {
            let (first, last) = (first.decode(base), last.decode(base));
            if last.timestamp < first.timestamp {
                return Err(IndexError::CorruptIndex {
                    path: self.path(),
                    reason: format!(
                        "corrupt time index found, time index file has {} entries and last timestamp {} is less than the first timestamp {}",
                        snap.len(), last.timestamp, first.timestamp
                    ),
                });
            }
            if last.offset < base {
                return Err(IndexError::CorruptIndex {
                    path: self.path(),
                    reason: format!(
                        "corrupt time index found, time index file has {} entries and last offset {} is less than the base offset {base}",
                        snap.len(), last.offset
                    ),
                });
            }
        }
        let length = self.length();
        if !length.is_multiple_of(ENTRY_SIZE) {
            return Err(IndexError::CorruptIndex {
                path: self.path(),
                reason: format!(
                    "time index file length {length} is not a multiple of the entry size {ENTRY_SIZE}"
                ),
            });
        }
        Ok(())
    }

    /// Trims to the used bytes and unmaps (Kafka's `close`).
    ///
    /// # Errors
    /// [`IndexError::Closed`] after [`IndexFile::force_unmap`] or [`IndexFile::delete_if_exists`]
    /// (the file could not be trimmed); [`IndexError::Io`].
    pub fn close(self) -> Result<()> {
        self.file.close()
    }
}

/// A run of appends to one [`TimeIndex`] under one hold of its writer lock (see
/// [`TimeIndex::appender`]). Dropping it releases the lock.
pub struct TimeAppender<'a> {
    writer: index_core::IndexWriter<'a, RawTimeEntry>,
    base_offset: i64,
    /// The last used slot, decoded (`None` while the index is empty).
    last: Option<TimestampOffset>,
}

impl<'a> TimeAppender<'a> {
    #[inline]
    fn new(file: &'a IndexFile<RawTimeEntry>) -> Result<Self> {
        let writer = file.writer();
        let base_offset = file.base_offset();
        let last = writer.last_entry()?.map(|e| e.decode(base_offset));
        Ok(TimeAppender {
            writer,
            base_offset,
            last,
        })
    }

    /// [`TimeIndex::maybe_append`]: appends `(timestamp, offset)` if `timestamp` is larger
    /// than the last entry's, with the same checks in the same order and the same errors;
    /// returns whether an entry was written. Nothing is written when an error is returned.
    #[inline]
    pub fn maybe_append(&mut self, timestamp: i64, offset: i64) -> Result<bool> {
        self.append_checked(timestamp, offset, false)
    }

    /// [`TimeIndex::maybe_append_final`] under this appender's lock: the final entry may
    /// take the slot that [`TimeIndex::is_full`] keeps free.
    #[inline]
    pub fn maybe_append_final(&mut self, timestamp: i64, offset: i64) -> Result<bool> {
        self.append_checked(timestamp, offset, true)
    }

    /// Kafka's `maybeAppend(timestamp, offset, skipFullCheck)`.
    #[inline]
    fn append_checked(
        &mut self,
        timestamp: i64,
        offset: i64,
        skip_full_check: bool,
    ) -> Result<bool> {
        let written = append_checked(
            &mut self.writer,
            self.base_offset,
            self.last,
            (timestamp, offset),
            skip_full_check,
        )?;
        if written {
            self.last = Some(TimestampOffset { timestamp, offset });
        }
        Ok(written)
    }

    /// Number of entries, including the ones appended through this appender.
    pub fn entries(&self) -> usize {
        self.writer.entries()
    }

    /// The last entry, or `(-1, base_offset)` when the index is empty (Kafka's
    /// `lastEntry`).
    pub fn last_entry(&self) -> TimestampOffset {
        self.last.unwrap_or(TimestampOffset {
            timestamp: NO_TIMESTAMP,
            offset: self.base_offset,
        })
    }
}

impl std::fmt::Debug for TimeAppender<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeAppender")
            .field("path", &self.writer.index().path())
            .field("entries", &self.entries())
            .field("last_entry", &self.last_entry())
            .finish()
    }
}

/// Kafka's `maybeAppend(timestamp, offset, skipFullCheck)` under a held writer lock,
/// `last` being the index's last entry (`None` while it is empty): the checks of
/// [`TimeIndex::maybe_append`] in its order, then the write; whether an entry was written.
#[inline(always)]
fn append_checked(
    writer: &mut index_core::IndexWriter<'_, RawTimeEntry>,
    base_offset: i64,
    last: Option<TimestampOffset>,
    (timestamp, offset): (i64, i64),
    skip_full_check: bool,
) -> Result<bool> {
    let n = writer.entries();
    if !skip_full_check && n >= writer.max_entries().saturating_sub(1) {
        return Err(IndexError::IndexFull {
            path: writer.index().path(),
            kind: RawTimeEntry::KIND,
            entries: n,
        });
    }
    if let Some(last) = last {
        if offset < last.offset {
            return Err(IndexError::InvalidOffset {
                path: writer.index().path(),
                offset,
                slot: n,
                last_offset: last.offset,
            });
        }
        if timestamp < last.timestamp {
            return Err(IndexError::InvalidTimestamp {
                path: writer.index().path(),
                timestamp,
                slot: n,
                last_timestamp: last.timestamp,
            });
        }
    }
    let last_timestamp = last.map_or(NO_TIMESTAMP, |l| l.timestamp);
    if timestamp <= last_timestamp {
        return Ok(false);
    }
    let rel = relative_offset(base_offset, offset).ok_or_else(|| IndexError::OffsetOverflow {
        path: writer.index().path(),
        offset,
        base_offset,
    })?;
    writer.append(&RawTimeEntry::new(timestamp, rel))?;
    Ok(true)
}

/// Kafka's time-index `lookup` over `search` (the per-call [`IndexFile::search`] or a
/// batch's [`index_core::Reader::search`]): the largest-lower-bound key search for
/// `target_timestamp`, its entry decoded against `base`, or `(NO_TIMESTAMP, base)` when
/// the index is empty or the target is below the first entry.
#[inline(always)]
fn lookup_by<P: Probe>(
    base: i64,
    target_timestamp: i64,
    probe: &mut P,
    search: impl FnOnce(i64, SearchField, Bound, &mut P) -> Result<Option<(usize, RawTimeEntry)>>,
) -> Result<TimestampOffset> {
    Ok(search(
        target_timestamp,
        SearchField::Key,
        Bound::LargestLowerBound,
        probe,
    )?
    .map_or(
        TimestampOffset {
            timestamp: NO_TIMESTAMP,
            offset: base,
        },
        |(_, e)| e.decode(base),
    ))
}

/// Lookups of one thread announced once for a batch (see [`TimeIndex::with_reader`]).
pub struct TimeReader<'a> {
    reader: &'a index_core::Reader<'a, RawTimeEntry>,
    base: i64,
}

impl TimeReader<'_> {
    /// [`TimeIndex::lookup`] without the per-call announcement, with its answers.
    ///
    /// # Errors
    /// [`IndexError::Closed`] once the index was closed or unmapped (a close may begin
    /// during the batch: it waits for the batch before unmapping).
    #[inline]
    pub fn lookup(&self, target_timestamp: i64) -> Result<TimestampOffset> {
        self.lookup_with_probe(target_timestamp, &mut NoProbe)
    }

    /// [`TimeReader::lookup`], reporting every byte range read to `probe`.
    #[inline]
    pub fn lookup_with_probe<P: Probe>(
        &self,
        target_timestamp: i64,
        probe: &mut P,
    ) -> Result<TimestampOffset> {
        lookup_by(self.base, target_timestamp, probe, |t, f, b, p| {
            self.reader.search(t, f, b, p)
        })
    }
}

impl std::fmt::Debug for TimeReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeReader")
            .field("reader", self.reader)
            .finish()
    }
}
