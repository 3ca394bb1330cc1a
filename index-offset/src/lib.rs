//! # index-offset
//!
//! Kafka's offset index (`<base offset>.index`): a sparse, memory-mapped map from
//! offsets to physical positions (bytes into the segment's `.log` file), byte-compatible
//! with Apache Kafka's `OffsetIndex`.
//!
//! Each entry is 8 bytes, big-endian: the offset relative to the segment's base offset
//! (`i32`) and the position of a batch start in the `.log` file (`u32`). An entry
//! `(offset, position)` promises that every record with an offset `>= offset` starts at a
//! position `>= position`.
//!
//! ```
//! use index_offset::{OffsetIndex, OffsetPosition};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("00000000000000000100.index");
//! let index = OffsetIndex::open(&path, 100, 10 * 1024 * 1024)?; // preallocates 10 MiB
//! index.append(103, 0)?;
//! index.append(110, 4170)?;
//! assert_eq!(index.lookup(107)?, OffsetPosition { offset: 103, position: 0 });
//! assert_eq!(index.lookup(99)?, OffsetPosition { offset: 100, position: 0 }); // below: base
//! index.close()?; // trims the file to 16 bytes
//! assert_eq!(std::fs::read(&path)?, [0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0x10, 0x4a]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod view;

use std::path::Path;

use bytemuck::{Pod, Zeroable};
use index_core::codec::{relative_offset, I32Be, IndexEntry, U32Be};
pub use index_core::{
    Bound, IndexError, IndexFile, NoProbe, OpenMode, PageProbe, Probe, Result, SearchField,
    SearchStrategy, Snapshot,
};

pub use view::OffsetIndexView;

/// Size of an offset-index entry in bytes.
pub const ENTRY_SIZE: usize = 8;

/// One offset-index entry exactly as stored: relative offset (`i32`, big-endian) and
/// physical position (`u32`, big-endian). Alignment 1, 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct RawOffsetEntry {
    /// `offset - base_offset`.
    pub relative_offset: I32Be,
    /// Byte position of a batch start in the `.log` file.
    pub position: U32Be,
}

const _: () = assert!(std::mem::size_of::<RawOffsetEntry>() == ENTRY_SIZE);
const _: () = assert!(std::mem::align_of::<RawOffsetEntry>() == 1);

impl RawOffsetEntry {
    /// Builds a raw entry from a relative offset and a position.
    pub fn new(relative_offset: i32, position: u32) -> Self {
        RawOffsetEntry {
            relative_offset: I32Be::new(relative_offset),
            position: U32Be::new(position),
        }
    }
    /// Decodes the entry for a segment starting at `base_offset`.
    pub fn decode(&self, base_offset: i64) -> OffsetPosition {
        OffsetPosition {
            // Java's long arithmetic: only a corrupt slot (or a base offset within 2^31
            // of i64::MAX) can leave the i64 range; it must not panic. The wrapped value
            // is below the base, which sanity_check reports as CorruptIndex.
            offset: base_offset.wrapping_add(self.relative_offset.get() as i64),
            position: self.position.get(),
        }
    }
}

impl IndexEntry for RawOffsetEntry {
    const SIZE: usize = ENTRY_SIZE;
    const KIND: &'static str = "offset index";
    #[inline(always)]
    fn key(&self, base_offset: i64) -> i64 {
        base_offset.wrapping_add(self.relative_offset.get() as i64)
    }
    #[inline(always)]
    fn value(&self, _base_offset: i64) -> i64 {
        self.position.get() as i64
    }
}

/// An offset and the physical position (bytes into `.log`) of the batch it maps to
/// (Kafka's `OffsetPosition`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OffsetPosition {
    /// Absolute offset.
    pub offset: i64,
    /// Byte position in the `.log` file.
    pub position: u32,
}

/// Kafka's offset index over a memory-mapped `.index` file.
///
/// `Send + Sync`: one appender and any number of concurrent readers; lookups never wait
/// for appends (see `index_core::IndexFile`).
#[derive(Debug)]
pub struct OffsetIndex {
    file: IndexFile<RawOffsetEntry>,
}

/// The file's lifecycle ([`IndexFile::path`], [`IndexFile::entries`],
/// [`IndexFile::max_entries`], [`IndexFile::resize`], [`IndexFile::trim_to_valid_size`],
/// [`IndexFile::flush`], [`IndexFile::rename_to`], [`IndexFile::delete_if_exists`],
/// [`IndexFile::force_unmap`], …) is the [`IndexFile`]'s: a `OffsetIndex` derefs to it.
/// The methods of `OffsetIndex` itself are Kafka's rules for this layout; where a name is
/// on both (`append`, `entry`, `last_entry`, `close`), the typed one is what callers
/// get. The file's own writers ([`IndexFile::append`], [`IndexFile::writer`],
/// [`IndexFile::truncate_to_entries`]) take raw entries and skip Kafka's rules: use the
/// typed methods unless you are rebuilding an index slot by slot.
impl std::ops::Deref for OffsetIndex {
    type Target = IndexFile<RawOffsetEntry>;
    fn deref(&self) -> &IndexFile<RawOffsetEntry> {
        &self.file
    }
}

impl index_core::TypedIndex for OffsetIndex {
    type Entry = RawOffsetEntry;
    fn open_writable(path: &Path, base_offset: i64, max_index_size: usize) -> Result<Self> {
        OffsetIndex::open(path, base_offset, max_index_size)
    }
    fn index_file(&self) -> &IndexFile<RawOffsetEntry> {
        &self.file
    }
}

impl OffsetIndex {
    /// Creates (preallocating `max_index_size_bytes`, rounded down to a multiple of 8) or
    /// opens a writable offset index for the segment starting at `base_offset`.
    ///
    /// An existing file is mapped at its current length and **every slot counts as an
    /// entry** (so a reopened trimmed index is full until [`IndexFile::resize`]d, and a
    /// crash-left zero-filled tail reads as entries `(base_offset, 0)`, as in Kafka).
    ///
    /// # Errors
    /// [`IndexError::InvalidArgument`] if the file is new and `max_index_size_bytes < 8`
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

    /// Opens an existing offset index read-only (for tools). Appends and resizes fail
    /// with [`IndexError::InvalidArgument`].
    ///
    /// # Errors
    /// [`IndexError::Io`] (`NotFound` when the file is missing).
    pub fn open_read_only(path: impl AsRef<Path>, base_offset: i64) -> Result<Self> {
        Self::open_with(path, base_offset, None, OpenMode::ReadOnly)
    }

    /// The general constructor: `max_index_size_bytes = None` is Kafka's `-1` (allowed
    /// only for existing files).
    pub fn open_with(
        path: impl AsRef<Path>,
        base_offset: i64,
        max_index_size_bytes: Option<usize>,
        mode: OpenMode,
    ) -> Result<Self> {
        Ok(OffsetIndex {
            file: IndexFile::open(path.as_ref(), base_offset, max_index_size_bytes, mode)?,
        })
    }

    /// Sets the search strategy (default: [`SearchStrategy::HYBRID`], with Kafka's
    /// warm/cold answers).
    pub fn with_search_strategy(self, strategy: SearchStrategy) -> Self {
        OffsetIndex {
            file: self.file.with_search_strategy(strategy),
        }
    }

    /// The underlying memory-mapped file.
    pub fn index_file(&self) -> &IndexFile<RawOffsetEntry> {
        &self.file
    }

    /// The last entry, or `(base_offset, 0)` when empty (Kafka's `lastEntry`).
    pub fn last_entry(&self) -> Result<OffsetPosition> {
        let base = self.base_offset();
        Ok(self.file.last_entry()?.map_or(
            OffsetPosition {
                offset: base,
                position: 0,
            },
            |e| e.decode(base),
        ))
    }

    /// Offset of the last entry, or the base offset when empty (Kafka's `lastOffset`).
    pub fn last_offset(&self) -> Result<i64> {
        Ok(self.last_entry()?.offset)
    }

    /// Appends `(offset, position)` (Kafka's `append`). Checks, in Kafka's order:
    ///
    /// 1. full → [`IndexError::IndexFull`];
    /// 2. `offset <= last offset` while non-empty → [`IndexError::InvalidOffset`];
    /// 3. `offset` not in `[base, base + 2^31 - 1]` → [`IndexError::OffsetOverflow`].
    ///
    /// Nothing is written when an error is returned. Positions are not validated.
    /// Each call takes and releases the writer lock; to append many entries in a row,
    /// [`OffsetIndex::appender`] takes it once.
    pub fn append(&self, offset: i64, position: u32) -> Result<()> {
        // The last offset is read back from the mapping and passed in a register
        // ([`append_checked`]), not moved through an appender built for the call.
        let mut writer = self.file.writer();
        let base_offset = self.file.base_offset();
        let last = writer.last_entry()?.map(|e| e.key(base_offset));
        append_checked(&mut writer, base_offset, last, offset, position)
    }

    /// Takes the writer lock once for a run of appends (an index rebuild, a bulk load).
    /// The returned [`OffsetAppender`] applies [`OffsetIndex::append`]'s checks, with the
    /// same errors, and keeps the last offset in a register instead of reading the last
    /// slot back on every call: about one plain copy of 8 bytes per entry.
    ///
    /// The `&mut` borrow makes the run exclusive: until the appender drops, nothing else
    /// reads or writes this index through this handle, so no other writer can wait on
    /// the lock and this thread cannot deadlock on it. Every entry is published as it is
    /// appended, so a run cut short (an error, a panic) leaves the entries before it.
    ///
    /// # Errors
    /// [`IndexError::Closed`] after the index was unmapped.
    pub fn appender(&mut self) -> Result<OffsetAppender<'_>> {
        OffsetAppender::new(&self.file)
    }

    /// The entry with the largest offset `<= target_offset` (Kafka's `lookup`), or
    /// `(base_offset, 0)` when the index is empty or the target is below the first entry.
    #[inline]
    pub fn lookup(&self, target_offset: i64) -> Result<OffsetPosition> {
        self.lookup_with_probe(target_offset, &mut NoProbe)
    }

    /// Runs `f` with a reader whose lookups skip the per-call reader-slot announcement
    /// of [`OffsetIndex::lookup`]: the thread announces itself once for the whole batch
    /// ([`IndexFile::with_reader`]). Same answers as [`OffsetIndex::lookup`].
    ///
    /// While `f` runs, a remap of any index of the process (`resize`, a trim, `close`)
    /// waits for it, as it waits for any lookup in flight: keep `f` to a batch of
    /// lookups, and do not resize or close an index from inside it (that would wait for
    /// this thread itself). Appends and truncations do not wait.
    #[inline]
    pub fn with_reader<R>(&self, f: impl FnOnce(&OffsetReader<'_>) -> R) -> R {
        let base = self.base_offset();
        self.file
            .with_reader(|r| f(&OffsetReader { reader: r, base }))
    }

    /// [`OffsetIndex::lookup`], reporting every byte range read to `probe`.
    #[inline]
    pub fn lookup_with_probe<P: Probe>(
        &self,
        target_offset: i64,
        probe: &mut P,
    ) -> Result<OffsetPosition> {
        lookup_by(self.base_offset(), target_offset, probe, |t, f, b, p| {
            self.file.search(t, f, b, p)
        })
    }

    /// An entry whose position is at or beyond `fetch_offset_position.position +
    /// fetch_size` bytes (Kafka's `fetchUpperBoundOffset`: smallest-upper-bound search by
    /// position, with Kafka's slot-0 quirk, which can only widen the bound). `None` if no
    /// entry lies that far.
    pub fn fetch_upper_bound_offset(
        &self,
        fetch_offset_position: OffsetPosition,
        fetch_size: i32,
    ) -> Result<Option<OffsetPosition>> {
        let base = self.base_offset();
        let target = fetch_offset_position.position as i64 + fetch_size as i64;
        Ok(self
            .file
            .search(
                target,
                SearchField::Value,
                Bound::SmallestUpperBound,
                &mut NoProbe,
            )?
            .map(|(_, e)| e.decode(base)))
    }

    /// The entry in slot `n`.
    ///
    /// # Errors
    /// [`IndexError::SlotOutOfRange`] if `n >= entries`.
    pub fn entry(&self, n: usize) -> Result<OffsetPosition> {
        Ok(self.file.entry(n)?.decode(self.base_offset()))
    }

    /// All entries, decoded (for tools and tests).
    pub fn all_entries(&self) -> Result<Vec<OffsetPosition>> {
        let snap = self.snapshot()?;
        let base = self.base_offset();
        Ok(snap.slots().iter().map(|e| e.decode(base)).collect())
    }

    /// Removes every entry with an offset `>= offset` (Kafka's `truncateTo`); truncating
    /// past the end is a no-op. The file length is unchanged.
    pub fn truncate_to(&self, offset: i64) -> Result<()> {
        self.file.truncate_to_field(SearchField::Key, offset)
    }

    /// Removes all entries (Kafka's `truncate`). The file length is unchanged.
    pub fn truncate(&self) -> Result<()> {
        self.file.truncate_to_entries(0)
    }

    /// Checks Kafka's invariants (Kafka's `sanityCheck`):
    /// [`IndexError::CorruptIndex`] if the index is non-empty and its last offset is below
    /// the base offset, or if the file length is not a multiple of 8. A zero-filled tail
    /// (last offset == base offset) passes, as in Kafka since 2.1.
    pub fn sanity_check(&self) -> Result<()> {
        let base = self.base_offset();
        if self.entries() != 0 {
            let last = self.last_offset()?;
            if last < base {
                return Err(IndexError::CorruptIndex {
                    path: self.path(),
                    reason: format!(
                        "corrupt index found, index file has {} entries and last offset {last} is less than the base offset {base}",
                        self.entries()
                    ),
                });
            }
        }
        let length = self.length();
        if !length.is_multiple_of(ENTRY_SIZE) {
            return Err(IndexError::CorruptIndex {
                path: self.path(),
                reason: format!(
                    "index file length {length} is not a multiple of the entry size {ENTRY_SIZE}"
                ),
            });
        }
        Ok(())
    }

    /// Trims to the used bytes and unmaps (Kafka's `close`): a closed index with `n`
    /// entries is an `8 * n`-byte file.
    ///
    /// # Errors
    /// [`IndexError::Closed`] after [`IndexFile::force_unmap`] or [`IndexFile::delete_if_exists`]
    /// (the file could not be trimmed); [`IndexError::Io`].
    pub fn close(self) -> Result<()> {
        self.file.close()
    }
}

/// A run of appends to one [`OffsetIndex`] under one hold of its writer lock (see
/// [`OffsetIndex::appender`]). Dropping it releases the lock.
pub struct OffsetAppender<'a> {
    writer: index_core::IndexWriter<'a, RawOffsetEntry>,
    base_offset: i64,
    /// Offset of the last used slot (`None` while the index is empty).
    last_offset: Option<i64>,
}

impl<'a> OffsetAppender<'a> {
    #[inline]
    fn new(file: &'a IndexFile<RawOffsetEntry>) -> Result<Self> {
        let writer = file.writer();
        let base_offset = file.base_offset();
        let last_offset = writer.last_entry()?.map(|e| e.key(base_offset));
        Ok(OffsetAppender {
            writer,
            base_offset,
            last_offset,
        })
    }

    /// Appends `(offset, position)` with [`OffsetIndex::append`]'s checks, in the same
    /// order, with the same errors; nothing is written when one is returned.
    #[inline]
    pub fn append(&mut self, offset: i64, position: u32) -> Result<()> {
        append_checked(
            &mut self.writer,
            self.base_offset,
            self.last_offset,
            offset,
            position,
        )?;
        self.last_offset = Some(offset);
        Ok(())
    }

    /// Number of entries, including the ones appended through this appender.
    pub fn entries(&self) -> usize {
        self.writer.entries()
    }

    /// Offset of the last entry, or the base offset when the index is empty (Kafka's
    /// `lastOffset`).
    pub fn last_offset(&self) -> i64 {
        self.last_offset.unwrap_or(self.base_offset)
    }
}

impl std::fmt::Debug for OffsetAppender<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffsetAppender")
            .field("path", &self.writer.index().path())
            .field("entries", &self.entries())
            .field("last_offset", &self.last_offset())
            .finish()
    }
}

/// [`OffsetIndex::append`] under a held writer lock, `last_offset` being the index's last
/// offset (`None` while it is empty): Kafka's checks in its order, then the write.
#[inline(always)]
fn append_checked(
    writer: &mut index_core::IndexWriter<'_, RawOffsetEntry>,
    base_offset: i64,
    last_offset: Option<i64>,
    offset: i64,
    position: u32,
) -> Result<()> {
    let n = writer.entries();
    if n >= writer.max_entries() {
        return Err(IndexError::IndexFull {
            path: writer.index().path(),
            kind: RawOffsetEntry::KIND,
            entries: n,
        });
    }
    if let Some(last_offset) = last_offset {
        if offset <= last_offset {
            return Err(IndexError::InvalidOffset {
                path: writer.index().path(),
                offset,
                slot: n,
                last_offset,
            });
        }
    }
    let rel = relative_offset(base_offset, offset).ok_or_else(|| IndexError::OffsetOverflow {
        path: writer.index().path(),
        offset,
        base_offset,
    })?;
    writer.append(&RawOffsetEntry::new(rel, position))
}

/// Kafka's offset-index `lookup` over `search` (the per-call [`IndexFile::search`] or a
/// batch's [`index_core::Reader::search`]): the largest-lower-bound key search for
/// `target_offset`, its entry decoded against `base`, or `(base, 0)` when the index is
/// empty or the target is below the first entry.
#[inline(always)]
fn lookup_by<P: Probe>(
    base: i64,
    target_offset: i64,
    probe: &mut P,
    search: impl FnOnce(i64, SearchField, Bound, &mut P) -> Result<Option<(usize, RawOffsetEntry)>>,
) -> Result<OffsetPosition> {
    Ok(search(
        target_offset,
        SearchField::Key,
        Bound::LargestLowerBound,
        probe,
    )?
    .map_or(
        OffsetPosition {
            offset: base,
            position: 0,
        },
        |(_, e)| e.decode(base),
    ))
}

/// Lookups of one thread announced once for a batch (see [`OffsetIndex::with_reader`]).
pub struct OffsetReader<'a> {
    reader: &'a index_core::Reader<'a, RawOffsetEntry>,
    base: i64,
}

impl OffsetReader<'_> {
    /// [`OffsetIndex::lookup`] without the per-call announcement, with its answers.
    ///
    /// # Errors
    /// [`IndexError::Closed`] once the index was closed or unmapped (a close may begin
    /// during the batch: it waits for the batch before unmapping).
    #[inline]
    pub fn lookup(&self, target_offset: i64) -> Result<OffsetPosition> {
        self.lookup_with_probe(target_offset, &mut NoProbe)
    }

    /// [`OffsetReader::lookup`], reporting every byte range read to `probe`.
    #[inline]
    pub fn lookup_with_probe<P: Probe>(
        &self,
        target_offset: i64,
        probe: &mut P,
    ) -> Result<OffsetPosition> {
        lookup_by(self.base, target_offset, probe, |t, f, b, p| {
            self.reader.search(t, f, b, p)
        })
    }
}

impl std::fmt::Debug for OffsetReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffsetReader")
            .field("reader", self.reader)
            .finish()
    }
}
