//! [`IndexFile`]: a memory-mapped file of fixed-size entries with Kafka's lifecycle.
//!
//! # Concurrency model
//!
//! One appender, many readers, as in Kafka (`AbstractIndex`):
//!
//! * **Readers never wait for an append, and write nothing shared.** A lookup
//!   ([`IndexFile::search`], behind `OffsetIndex::lookup` and `TimeIndex::lookup`)
//!   announces itself in its thread's reader slot (plain stores and one fence, see
//!   [`crate::readers`]), loads the published mapping pointer and the entry count
//!   (`Acquire`), and reads slots `[0, count)` of that mapping: no lock, no `Arc` clone,
//!   no atomic read-modify-write. A [`Snapshot`] ([`IndexFile::snapshot`]) instead clones
//!   the mapping's `Arc` (under a read lock held only for the clone) so that it can live
//!   on; a thread without a reader slot searches that way too.
//! * **Writers serialise on a lock** (`parking_lot::Mutex`). An append writes the entry's
//!   bytes into the next slot, *then* publishes `count + 1` with `Release`, so a reader
//!   that sees the new count sees the bytes.
//! * **Remaps keep old mappings alive.** `resize`, `trim_to_valid_size`, `close` and
//!   `force_unmap` install a new mapping, then wait for the lookups in flight
//!   (`readers::synchronize`: no lookup reads the old mapping once it returns); a
//!   snapshot keeps the old one alive through its `Arc` and it is unmapped when that
//!   snapshot is dropped. The writer keeps the replaced mappings in a retired list;
//!   before shrinking a file it waits for the snapshots of *every* retired mapping
//!   longer than the new length to be dropped (not only the one it replaces: a snapshot
//!   may still hold a mapping from before an earlier grow), because touching a mapped
//!   page past end-of-file raises `SIGBUS` (see [`crate::sys`]).
//! * **Truncation** lowers the published count first; a reader that loaded the old count
//!   may return a stale entry (as in Kafka), never read out of bounds.
//! * **The page directory** (with [`SearchStrategy::Hybrid`], the default, built at
//!   open, and with [`SearchStrategy::PageDirectory`]; see [`crate::directory`]) lives in
//!   the same `Arc` as the mapping. The writer stores a
//!   page's fence when it writes the page's first slot, before publishing the count, so it
//!   rides on the same `Release`/`Acquire` pair; a remap copies the used fences into the
//!   new mapping's directory before installing it.
//!
//! # Invariants
//!
//! 1. Only the writer (holding the writer lock) writes slots, fences and the count, and
//!    it writes slot `n` (and its fence) strictly before publishing any count `> n`.
//! 2. A reader reads only slots below a count it loaded with `Acquire`, clamped to the
//!    slots of the mapping it holds; so every slot and fence it reads was written before
//!    the matching `Release` (or is stale only after a truncation, invariant 3 of
//!    [`crate::sys`]).
//! 3. A lookup reads only a mapping published after its announcement's fence or
//!    before the writer's last `synchronize`; a snapshot's `Arc` keeps its mapping (and
//!    directory) alive. A mapping is unmapped only after `synchronize` returned and its
//!    last `Arc` dropped, and the file is cut only after that for every longer mapping.
//! 4. Lookups take no lock and write no shared memory: a lookup never waits for an
//!    append or a remap; a remap waits for the lookups in flight.
//!
//! The invariants are checked by loom models (`index-core/tests/loom.rs`, run by
//! `cargo xtask loom`). Under `--cfg loom` each mapping carries a shadow
//! `loom::cell::UnsafeCell<()>` per slot, written by the writer with the slot and read
//! by snapshots and lookups for every slot below their count, and a cell per mapping
//! read by lookups and written when the mapping is dropped; so a weakened publication
//! ordering or announcement fence (`--cfg loom_weak_ordering`), or a remap that does not
//! wait for lookups, makes the models fail with a causality violation.

use std::fs::{File, OpenOptions};
use std::io;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use crate::codec::{round_down, IndexEntry};
use crate::directory::Directory;
use crate::error::{IndexError, Result};
use crate::readers;
use crate::search::{search_in, Bound, NoProbe, Probe, SearchField, SearchStrategy};
use crate::sync::{
    yield_now, Arc, AtomicUsize, CachePadded, Ordering, Shared, WriterLock, OBSERVE, PUBLISH,
};
use crate::sys::{Mapping, Published};

/// How to open an index file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Create the file if missing (preallocated to the max index size), map it read-write.
    ReadWrite,
    /// Open an existing file and map it read-only; a missing file is an I/O error
    /// (`NotFound`). Tools such as dump-log use this on a broker's files.
    ReadOnly,
}

/// One mapping of the file, with the page directory of its pages (if the index keeps
/// one) and, under loom, a shadow cell per slot. Readers get all of it with one `Arc`
/// clone; it derefs to the [`Mapping`].
#[derive(Debug)]
pub(crate) struct Mapped {
    map: Mapping,
    dir: Option<Directory>,
    /// Whole entries the mapping holds (`map.len() / E::SIZE`), computed once: a lookup
    /// bounds the published count by it without dividing by the entry size.
    capacity: usize,
    /// Loom cannot see plain writes into the mapping: the writer touches slot `n`'s cell
    /// with `with_mut` when it writes the slot, readers touch the cells of the slots below
    /// the count they loaded with `with`, so an unsynchronised write/read pair (a weakened
    /// publication ordering) is reported as a causality violation.
    #[cfg(loom)]
    shadow: Box<[loom::cell::UnsafeCell<()>]>,
    /// Read by every lookup on the fence-only path, written when the mapping is dropped
    /// (unmapped): an unmap that a lookup is not ordered before is a causality violation.
    #[cfg(loom)]
    alive: loom::cell::UnsafeCell<()>,
}

#[cfg(loom)]
impl Drop for Mapped {
    fn drop(&mut self) {
        self.alive.with_mut(|_| ());
    }
}

impl Mapped {
    fn new<E: IndexEntry>(map: Mapping, dir: Option<Directory>, _slots: usize) -> Self {
        Mapped {
            capacity: map.len() / E::SIZE,
            map,
            dir,
            #[cfg(loom)]
            shadow: (0.._slots)
                .map(|_| loom::cell::UnsafeCell::new(()))
                .collect(),
            #[cfg(loom)]
            alive: loom::cell::UnsafeCell::new(()),
        }
    }

    /// The entry in `slot` (of `entries` used slots) from the page directory's memory, for
    /// a lookup with `strategy`: only with the page directory (the strategy and this
    /// mapping's directory agreeing on the page size) and only when the slot is a fence
    /// slot whose fence is known (see [`Directory::fence_entry`]); else `None` (read it
    /// from the mapping).
    #[inline]
    fn fence_answer<E: IndexEntry>(
        &self,
        strategy: SearchStrategy,
        slot: usize,
        entries: usize,
    ) -> Option<E> {
        let (Some(page_size), Some(d)) = (strategy.directory_page_size(), &self.dir) else {
            return None;
        };
        if d.page_size() != crate::directory::normalize_page_size(page_size) {
            return None;
        }
        d.fence_entry(slot, entries)
    }
}

impl Mapped {
    /// [`Mapped::fence_answer`] for the index's own strategy, whose directory this
    /// mapping's is (no page-size check). A hybrid lookup answered in the warm section
    /// reads its answer from the mapping: the warm section's pages are the ones every
    /// warm lookup reads anyway, and a hot-tail lookup saves the directory's check.
    #[inline(always)]
    fn own_fence_answer<E: IndexEntry>(
        &self,
        strategy: SearchStrategy,
        slot: usize,
        entries: usize,
    ) -> Option<E> {
        match strategy {
            SearchStrategy::Hybrid { .. }
                if Some(slot) >= strategy.first_warm_slot(entries, E::SIZE) =>
            {
                None
            }
            SearchStrategy::Hybrid { .. } | SearchStrategy::PageDirectory { .. } => {
                self.dir.as_ref()?.fence_entry(slot, entries)
            }
            _ => None,
        }
    }
}

impl std::ops::Deref for Mapped {
    type Target = Mapping;
    #[inline]
    fn deref(&self) -> &Mapping {
        &self.map
    }
}

#[derive(Debug)]
struct Writer {
    // No file handle is kept: the file is opened for the length of each operation that
    // needs it (open, resize, installing the page directory) and closed again, as Kafka's
    // `AbstractIndex` does. A mapping needs no descriptor (`msync` works on the mapping),
    // so a process with thousands of mapped indexes holds no descriptor for them.
    max_index_size: Option<usize>,
    /// Set by a successful [`IndexFile::close`] (the file was trimmed), so that closing
    /// again is a no-op while closing after `force_unmap`/`delete_if_exists` (which
    /// trimmed nothing) is reported as [`IndexError::Closed`].
    closed: bool,
    /// Mappings replaced by a remap (grow, shrink, directory install, unmap) that readers
    /// may still hold. A shrink must wait for *every* one of them that extends past the
    /// new length, not only for the mapping it replaces: a reader can still hold a
    /// mapping from before an earlier grow, and touching its pages past the new end of
    /// file raises `SIGBUS`. Entries are dropped (unmapped) as soon as no reader holds
    /// them ([`prune`]).
    retired: Vec<Arc<Mapped>>,
    /// The writer's own reference to the published mapping (`IndexFile::mapping`, which
    /// only changes under the writer lock, always together with this field), so that an
    /// append takes neither the mapping's read lock nor an `Arc` clone.
    current: Option<Arc<Mapped>>,
}

/// Drops (unmaps) every retired mapping that no reader holds any more.
fn prune(retired: &mut Vec<Arc<Mapped>>) {
    let mut still_held = Vec::new();
    for m in retired.drain(..) {
        if let Err(m) = Arc::try_unwrap(m) {
            still_held.push(m);
        }
    }
    *retired = still_held;
}

/// Moves a replaced mapping to the retired list (see [`Writer::retired`]).
fn retire(retired: &mut Vec<Arc<Mapped>>, old: Arc<Mapped>) {
    retired.push(old);
    prune(retired);
}

/// A memory-mapped index file of entries of type `E` (Kafka's `AbstractIndex`).
///
/// Layout: slot `n` occupies bytes `[n * E::SIZE, (n + 1) * E::SIZE)`; there is no header.
/// A newly created file is preallocated (zero-filled, sparse) to the max index size rounded
/// down to a multiple of `E::SIZE`; an existing file is opened with
/// `entries = max_entries = length / E::SIZE` (every complete slot counts, including a
/// zero-filled tail left by a crash, exactly as Kafka does).
///
/// All methods take `&self`; the type is `Send + Sync`. See the module docs for the
/// concurrency model.
#[derive(Debug)]
pub struct IndexFile<E: IndexEntry> {
    base_offset: i64,
    strategy: SearchStrategy,
    writable: bool,
    path: Shared<PathBuf>,
    mapping: Shared<Option<Arc<Mapped>>>,
    /// The same mapping as `mapping`, for lookups announced in their reader slot (see
    /// [`crate::readers`]): found with one plain load, no lock, no `Arc` clone.
    published: Published<Mapped>,
    /// Written by every append: on its own cache lines, away from the read-mostly fields.
    entries: CachePadded<AtomicUsize>,
    max_entries: AtomicUsize,
    /// Taken by every append: on its own cache lines, away from the mapping's lock.
    writer: CachePadded<WriterLock<Writer>>,
    _entry: PhantomData<fn() -> E>,
}

/// A consistent, lock-free view of an index's used slots at one moment.
///
/// Holds the mapping alive; obtained from [`IndexFile::snapshot`]. Cheap to create (one
/// `Arc` clone and one atomic load).
#[derive(Debug)]
pub struct Snapshot<E: IndexEntry> {
    mapping: Arc<Mapped>,
    entries: usize,
    base_offset: i64,
    strategy: SearchStrategy,
    _entry: PhantomData<fn() -> E>,
}

impl<E: IndexEntry> Snapshot<E> {
    /// The used slots, decoded in place (zero-copy `bytemuck` view of the mapping).
    #[inline]
    pub fn slots(&self) -> &[E] {
        bytemuck::cast_slice(self.mapping.bytes(self.entries * E::SIZE))
    }
    /// Number of used slots in this view.
    #[inline]
    pub fn len(&self) -> usize {
        self.entries
    }
    /// Whether the view holds no entries.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }
    /// The segment base offset the entries are relative to.
    #[inline]
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    /// The last used slot, if any.
    #[inline]
    pub fn last(&self) -> Option<E> {
        self.slots().last().copied()
    }
    /// Searches the view with the index's strategy; see [`crate::search::search`].
    #[inline]
    pub fn search<P: Probe>(
        &self,
        target: i64,
        field: SearchField,
        bound: Bound,
        probe: &mut P,
    ) -> Option<usize> {
        search_in(
            (self.slots(), self.mapping.dir.as_ref()),
            self.base_offset,
            target,
            field,
            bound,
            (self.strategy, true),
            probe,
        )
    }
    /// Searches the view with an explicit strategy (used to compare strategies on the
    /// same data).
    #[inline]
    pub fn search_with<P: Probe>(
        &self,
        strategy: SearchStrategy,
        target: i64,
        field: SearchField,
        bound: Bound,
        probe: &mut P,
    ) -> Option<usize> {
        search_in(
            (self.slots(), self.mapping.dir.as_ref()),
            self.base_offset,
            target,
            field,
            bound,
            (strategy, false),
            probe,
        )
    }
    /// The entry in `slot` (an answer of [`Snapshot::search`]), as a lookup with the
    /// view's strategy reads it: see [`Snapshot::answer_with`].
    #[inline]
    pub fn answer<P: Probe>(&self, slot: usize, probe: &mut P) -> Option<E> {
        self.answer_with(self.strategy, slot, probe)
    }
    /// The entry in `slot` (an answer of [`Snapshot::search_with`] with `strategy`),
    /// as a lookup with `strategy` reads it. With the page directory (the strategy and the
    /// view's directory agree on the page size) a fence slot comes from the directory's
    /// memory (see [`Directory::fence_entry`]); any other slot, or any other strategy,
    /// reads the mapping and reports those `E::SIZE` bytes to `probe`. With the page
    /// directory a lookup (search plus answer) therefore touches exactly one page, for 8-
    /// and 12-byte entries alike. `None` when `slot >= self.len()` (a slot no search of
    /// this view returns).
    #[inline]
    pub fn answer_with<P: Probe>(
        &self,
        strategy: SearchStrategy,
        slot: usize,
        probe: &mut P,
    ) -> Option<E> {
        let slots = self.slots();
        if let Some(e) = self.mapping.fence_answer(strategy, slot, slots.len()) {
            return Some(e);
        }
        let e = *slots.get(slot)?;
        probe.touch(slot * E::SIZE, E::SIZE);
        Some(e)
    }
    /// The underlying mapping (for residency measurements).
    pub fn mapping(&self) -> &Mapping {
        &self.mapping.map
    }
    /// The index's page directory (present when the index's strategy searches through
    /// one: [`SearchStrategy::Hybrid`], the default, or
    /// [`SearchStrategy::PageDirectory`]; see [`SearchStrategy::directory_page_size`]).
    pub fn directory(&self) -> Option<&Directory> {
        self.mapping.dir.as_ref()
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> IndexError + '_ {
    move |e| IndexError::io(path, e)
}

impl<E: IndexEntry> IndexFile<E> {
    /// Opens or creates the index file at `path` for a segment with `base_offset`
    /// (Kafka's `AbstractIndex` constructor).
    ///
    /// * `max_index_size`: bytes to preallocate when the file is **new** (rounded down to a
    ///   multiple of `E::SIZE`); ignored for an existing file, which is mapped at its
    ///   current length. `None` corresponds to Kafka's `-1` (tools opening existing files).
    /// * `mode`: [`OpenMode::ReadWrite`] creates a missing file; [`OpenMode::ReadOnly`]
    ///   requires it to exist.
    ///
    /// # Errors
    /// * [`IndexError::InvalidArgument`] when a new file would get a max size smaller than
    ///   one entry (`None`, or `< E::SIZE`). As in Kafka, the empty file has already been
    ///   created and is left on disk.
    /// * [`IndexError::Io`] on any OS error (including `NotFound` in read-only mode).
    pub fn open(
        path: impl Into<PathBuf>,
        base_offset: i64,
        max_index_size: Option<usize>,
        mode: OpenMode,
    ) -> Result<Self> {
        let path = path.into();
        let writable = mode == OpenMode::ReadWrite;
        let (file, newly_created) = if writable {
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(f) => (f, true),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => (
                    OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(&path)
                        .map_err(io_err(&path))?,
                    false,
                ),
                Err(e) => return Err(IndexError::io(&path, e)),
            }
        } else {
            (File::open(&path).map_err(io_err(&path))?, false)
        };
        if newly_created {
            let size = match max_index_size {
                Some(s) if s >= E::SIZE => round_down(s, E::SIZE),
                other => {
                    return Err(IndexError::InvalidArgument {
                        path,
                        reason: format!(
                            "invalid max index size {}",
                            other.map_or_else(|| "-1".to_string(), |s| s.to_string())
                        ),
                    })
                }
            };
            file.set_len(size as u64).map_err(io_err(&path))?;
        }
        let length = file.metadata().map_err(io_err(&path))?.len();
        let length = usize::try_from(length).map_err(|_| IndexError::CorruptIndex {
            path: path.clone(),
            reason: format!("file length {length} does not fit in memory"),
        })?;
        let mapping = Mapping::map(&file, length, writable).map_err(io_err(&path))?;
        // The mapping keeps the file's pages reachable; the descriptor is not needed any
        // more (Kafka closes its `RandomAccessFile` right after mapping, too).
        drop(file);
        let entries = if newly_created { 0 } else { length / E::SIZE };
        // The default strategy searches through a page directory: it is built here, with
        // the mapping (every fence unknown, its block keys allocated zeroed: no page of
        // the file is read and no memory committed until lookups and appends use it).
        let strategy = SearchStrategy::default();
        let dir = strategy
            .directory_page_size()
            .map(|p| Directory::new::<E>(p, length, entries));
        let mapped = Arc::new(Mapped::new::<E>(mapping, dir, length / E::SIZE));
        // Before any lookup or remap of this index can run (see `readers`).
        readers::init();
        Ok(IndexFile {
            base_offset,
            strategy,
            writable,
            path: Shared::new(path),
            mapping: Shared::new(Some(mapped.clone())),
            published: Published::new(Some(&mapped)),
            entries: CachePadded(AtomicUsize::new(entries)),
            max_entries: AtomicUsize::new(length / E::SIZE),
            writer: CachePadded(WriterLock::new(Writer {
                max_index_size,
                closed: false,
                retired: Vec::new(),
                current: Some(mapped),
            })),
            _entry: PhantomData,
        })
    }

    /// Sets the search strategy used by [`IndexFile::search`] and snapshots
    /// (default: [`SearchStrategy::HYBRID`], Kafka's warm section of 8192 bytes and the
    /// cold part through a page directory of 4 KiB pages, built at open).
    ///
    /// [`SearchStrategy::PageDirectory`] and [`SearchStrategy::Hybrid`] make the index
    /// keep a page directory (268 bytes
    /// of memory per 4 KiB page of the mapped file with 8-byte entries, 372 with 12-byte
    /// entries, see [`Directory::bytes_per_page`]): installed here without reading any
    /// page (its fences and block keys start unknown and are filled in by the searches
    /// that need them), and
    /// maintained by every append, truncation and resize. Any other strategy drops the
    /// directory. The directory is installed with a fresh mapping of the same file; if
    /// that `mmap` fails the index keeps its mapping without a directory and
    /// page-directory searches fall back to warm/cold (same results).
    pub fn with_search_strategy(mut self, strategy: SearchStrategy) -> Self {
        self.strategy = strategy;
        self.install_directory();
        self
    }

    /// Installs (or drops) the page directory that `self.strategy` calls for, remapping
    /// the file. Leaves an unmapped index, or one whose remap fails, without a directory
    /// (searches then fall back to warm/cold, with the same results).
    fn install_directory(&self) {
        let page_size = self.strategy.directory_page_size();
        let mut w = self.writer.lock();
        let mut slot = self.mapping.write();
        let Some(old) = slot.as_ref() else {
            return;
        };
        let normalize = crate::directory::normalize_page_size;
        if old.dir.as_ref().map(Directory::page_size) == page_size.map(normalize) {
            // The mapping already has the directory this strategy needs (or none).
            return;
        }
        // Opened for the remap only (no descriptor is kept, see `Writer`).
        let Ok(file) = self.open_file() else {
            return;
        };
        let Ok(map) = Mapping::map(&file, old.len(), self.writable) else {
            return;
        };
        drop(file);
        let slots = map.len() / E::SIZE;
        // Every fence starts unknown: installing the directory reads no page (the searches
        // fill in the fences they need, see `crate::directory`).
        let dir = page_size.map(|p| Directory::new::<E>(p, map.len(), self.entries()));
        // A snapshot taken before this call may still hold the old mapping, and a lookup
        // may still read it: it is retired only after `synchronize`.
        let new = Arc::new(Mapped::new::<E>(map, dir, slots));
        w.current = Some(new.clone());
        self.published.store(Some(&new));
        let old = slot.replace(new);
        drop(slot);
        readers::synchronize();
        if let Some(old) = old {
            retire(&mut w.retired, old);
        }
    }

    /// Opens the index file at its current path for one operation (read-write if the
    /// index is writable, else read-only); the caller drops the handle when done, so the
    /// index holds no file descriptor between operations (see `Writer`).
    ///
    /// # Errors
    /// [`IndexError::Io`] naming the path (e.g. `EMFILE` when the process is out of
    /// descriptors, `NotFound` if the file was removed under the index).
    fn open_file(&self) -> Result<File> {
        let path = self.path();
        OpenOptions::new()
            .read(true)
            .write(self.writable)
            .open(&path)
            .map_err(io_err(&path))
    }

    /// The search strategy in use.
    pub fn search_strategy(&self) -> SearchStrategy {
        self.strategy
    }

    /// The segment base offset (absolute offset that relative offsets are added to).
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// The file's current path (changes with [`IndexFile::rename_to`]).
    pub fn path(&self) -> PathBuf {
        self.path.read().clone()
    }

    /// Whether the index was opened read-write.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// Number of used slots (published count).
    pub fn entries(&self) -> usize {
        self.entries.load(OBSERVE)
    }

    /// Number of slots the current file length holds (`length / E::SIZE`).
    pub fn max_entries(&self) -> usize {
        self.max_entries.load(Ordering::Acquire)
    }

    /// Whether every slot is used (`entries >= max_entries`).
    pub fn is_full(&self) -> bool {
        self.entries() >= self.max_entries()
    }

    /// Current mapped length of the file in bytes (0 once unmapped).
    pub fn length(&self) -> usize {
        self.mapping.read().as_ref().map_or(0, |m| m.len())
    }

    /// Bytes used by entries: `entries * E::SIZE`.
    pub fn size_in_bytes(&self) -> usize {
        self.entries() * E::SIZE
    }

    /// The configured max index size in bytes (`None` = Kafka's -1).
    pub fn max_index_size(&self) -> Option<usize> {
        self.writer.lock().max_index_size
    }

    /// A lock-free view of the used slots.
    ///
    /// # Errors
    /// [`IndexError::Closed`] after the index was unmapped.
    #[inline]
    pub fn snapshot(&self) -> Result<Snapshot<E>> {
        let mapping = self.mapping.read().clone();
        let Some(mapping) = mapping else {
            return Err(IndexError::Closed { path: self.path() });
        };
        // The count may be newer than the mapping (grown since) or older (truncated and
        // shrunk since); clamping to the mapped slots keeps every read in bounds.
        let entries = self.entries.load(OBSERVE).min(mapping.capacity);
        #[cfg(loom)]
        for cell in &mapping.shadow[..entries] {
            cell.with(|_| ());
        }
        Ok(Snapshot {
            mapping,
            entries,
            base_offset: self.base_offset,
            strategy: self.strategy,
            _entry: PhantomData,
        })
    }

    /// The entry in slot `n` (Kafka's `entry(n)`).
    ///
    /// # Errors
    /// [`IndexError::SlotOutOfRange`] if `n >= entries`; [`IndexError::Closed`].
    pub fn entry(&self, n: usize) -> Result<E> {
        let snap = self.snapshot()?;
        snap.slots()
            .get(n)
            .copied()
            .ok_or_else(|| IndexError::SlotOutOfRange {
                path: self.path(),
                kind: E::KIND,
                slot: n,
                entries: snap.len(),
            })
    }

    /// The last used slot, or `None` when the index is empty.
    pub fn last_entry(&self) -> Result<Option<E>> {
        Ok(self.snapshot()?.last())
    }

    /// Searches the used slots with the index's strategy, reporting touched bytes to
    /// `probe`; returns the slot and its entry. See [`crate::search::search`].
    #[inline]
    pub fn search<P: Probe>(
        &self,
        target: i64,
        field: SearchField,
        bound: Bound,
        probe: &mut P,
    ) -> Result<Option<(usize, E)>> {
        // One instance of the announced search per field and bound: where the lookup is
        // not inlined into its caller (several call sites), a search whose field and
        // bound were captured as values carried the code of all four searches, the
        // value searches' Kafka kernel included, and a lookup ran through it
        // (docs/performance.md#lookup-per-call-specialized).
        match (field, bound) {
            (SearchField::Key, Bound::LargestLowerBound) => {
                self.search_fixed::<true, false, P>(target, probe)
            }
            (SearchField::Key, Bound::SmallestUpperBound) => {
                self.search_fixed::<true, true, P>(target, probe)
            }
            (SearchField::Value, Bound::LargestLowerBound) => {
                self.search_fixed::<false, false, P>(target, probe)
            }
            (SearchField::Value, Bound::SmallestUpperBound) => {
                self.search_fixed::<false, true, P>(target, probe)
            }
        }
    }

    /// [`IndexFile::search`] for the field (`KEY`: the key, else the value) and bound
    /// (`STRICT`: the smallest upper bound, else the largest lower bound) fixed at
    /// compile time.
    #[inline]
    fn search_fixed<const KEY: bool, const STRICT: bool, P: Probe>(
        &self,
        target: i64,
        probe: &mut P,
    ) -> Result<Option<(usize, E)>> {
        let field = if KEY {
            SearchField::Key
        } else {
            SearchField::Value
        };
        let bound = if STRICT {
            Bound::SmallestUpperBound
        } else {
            Bound::LargestLowerBound
        };
        readers::read(
            probe,
            |announced, probe| self.search_announced(announced, target, field, bound, probe),
            |probe| self.search_locked(target, field, bound, probe),
        )
    }

    /// Runs `f` with a [`Reader`]: this thread announces itself in its reader slot
    /// **once**, and every [`Reader::search`] inside `f` skips the per-call announcement
    /// that [`IndexFile::search`] makes (a batch of lookups, a fetch that looks up several
    /// targets). The answers are exactly [`IndexFile::search`]'s: each search loads the
    /// published mapping and the entry count (`Acquire`) again, so it sees every append
    /// published before it. In the limit bench a batch's hot-tail lookup costs what
    /// `partition_point` over a `Vec<u64>` does for the offset index, against 1.2x per
    /// call (`docs/performance.md#lookup-batch`).
    ///
    /// While `f` runs, a remap of this index or of any other index of the process
    /// (`resize`, `trim_to_valid_size`, `close`, `force_unmap`, installing a page
    /// directory) waits for `f` to return, as it waits for any lookup in flight (see
    /// [`crate::readers`]): keep `f` short (a batch, not a session), and never remap an
    /// index from inside `f` (it would wait for this thread itself). Appends and
    /// truncations do not wait. A thread without a reader slot (more than
    /// [`readers::SLOTS`] threads looking up at once) gets a reader whose searches take the
    /// mapping's read lock one by one, with the same answers.
    #[inline]
    pub fn with_reader<R>(&self, f: impl FnOnce(&Reader<'_, E>) -> R) -> R {
        readers::read(
            f,
            |announced, f| {
                f(&Reader {
                    index: self,
                    announced: Some(announced),
                })
            },
            |f| {
                f(&Reader {
                    index: self,
                    announced: None,
                })
            },
        )
    }

    /// [`IndexFile::search`] announced in the thread's reader slot.
    #[inline(always)]
    fn search_announced<P: Probe>(
        &self,
        announced: &readers::Announced,
        target: i64,
        field: SearchField,
        bound: Bound,
        probe: &mut P,
    ) -> Result<Option<(usize, E)>> {
        match self.published.load(announced) {
            Some(mapping) => {
                #[cfg(loom)]
                mapping.alive.with(|_| ());
                Ok(self.search_mapping(mapping, target, field, bound, probe))
            }
            None => Err(IndexError::Closed { path: self.path() }),
        }
    }

    /// [`IndexFile::search`] for a thread without a reader slot: under the mapping's
    /// read lock.
    #[inline(never)]
    fn search_locked<P: Probe>(
        &self,
        target: i64,
        field: SearchField,
        bound: Bound,
        probe: &mut P,
    ) -> Result<Option<(usize, E)>> {
        let guard = self.mapping.read();
        match guard.as_ref() {
            Some(mapping) => Ok(self.search_mapping(mapping, target, field, bound, probe)),
            None => {
                drop(guard);
                Err(IndexError::Closed { path: self.path() })
            }
        }
    }

    /// The search of [`IndexFile::search`] over one mapping that the caller keeps alive.
    #[inline(always)]
    fn search_mapping<P: Probe>(
        &self,
        mapping: &Mapped,
        target: i64,
        field: SearchField,
        bound: Bound,
        probe: &mut P,
    ) -> Option<(usize, E)> {
        let entries = self.entries.load(OBSERVE).min(mapping.capacity);
        #[cfg(loom)]
        for cell in &mapping.shadow[..entries] {
            cell.with(|_| ());
        }
        let slots: &[E] = bytemuck::cast_slice(mapping.bytes(entries * E::SIZE));
        let found = search_in(
            (slots, mapping.dir.as_ref()),
            self.base_offset,
            target,
            field,
            bound,
            (self.strategy, true),
            probe,
        );
        // An answer that is a fence slot comes from the directory's memory (with 12-byte
        // entries it may straddle two pages of the mapping). The entry is read through a
        // reference to whichever source holds it: merging the two values
        // (`fence.unwrap_or(slots[slot])`) had the compiler assemble the 12-byte entry on
        // the stack from four narrow stores and load it back whole, a store-to-load
        // forwarding stall on every time-index lookup's critical path
        // (`docs/performance.md#lookup-answer-forwarding`).
        found.map(|slot| {
            let fence = mapping.own_fence_answer(self.strategy, slot, entries);
            let entry: &E = match &fence {
                Some(e) => e,
                None => &slots[slot],
            };
            (slot, *entry)
        })
    }

    /// Takes the writer lock. Index types use the guard to check their rules and append
    /// atomically with respect to other writers (readers are never blocked).
    #[inline]
    pub fn writer(&self) -> IndexWriter<'_, E> {
        IndexWriter {
            index: self,
            guard: self.writer.lock(),
        }
    }

    /// Appends `entry` in the next slot. See [`IndexWriter::append`].
    pub fn append(&self, entry: &E) -> Result<()> {
        self.writer().append(entry)
    }

    /// Sets the entry count to `n` (`n <= entries`), leaving the bytes beyond in place.
    /// See [`IndexWriter::truncate_to_entries`].
    pub fn truncate_to_entries(&self, n: usize) -> Result<()> {
        self.writer().truncate_to_entries(n)
    }

    /// Removes every entry whose `field` is `>= target` (Kafka's `truncateTo`, shared by
    /// both indexes: the offset index truncates by key, the time index by value). Finds
    /// the largest lower bound of `target` with the index's search; keeps 0 entries if
    /// there is none, `slot` entries if that slot's field equals `target`, else
    /// `slot + 1` (so truncating past the end is a no-op). The file length is unchanged.
    pub fn truncate_to_field(&self, field: SearchField, target: i64) -> Result<()> {
        let mut w = self.writer();
        let snap = self.snapshot()?;
        let base = self.base_offset;
        let keep = match snap.search(target, field, Bound::LargestLowerBound, &mut NoProbe) {
            None => 0,
            Some(slot) => {
                let e = &snap.slots()[slot];
                let found = match field {
                    SearchField::Key => e.key(base),
                    SearchField::Value => e.value(base),
                };
                if found == target {
                    slot
                } else {
                    slot + 1
                }
            }
        };
        w.truncate_to_entries(keep.min(w.entries()))
    }

    /// Resizes the file to `new_size` rounded down to a multiple of `E::SIZE` and remaps
    /// it. See [`IndexWriter::resize`].
    pub fn resize(&self, new_size: usize) -> Result<bool> {
        self.writer().resize(new_size)
    }

    /// Shrinks the file to exactly the used slots (`resize(entries * E::SIZE)`).
    pub fn trim_to_valid_size(&self) -> Result<bool> {
        self.writer().trim_to_valid_size()
    }

    /// Empties the index and resizes it back to its max index size (Kafka's `reset`:
    /// `truncate()` then `resize(maxIndexSize)`; with no max size the file becomes 0 bytes).
    pub fn reset(&self) -> Result<()> {
        let mut w = self.writer();
        w.truncate_to_entries(0)?;
        let size = w.guard.max_index_size.unwrap_or(0);
        w.resize(size)?;
        Ok(())
    }

    /// Writes the mapping back to the file (`msync`).
    pub fn flush(&self) -> Result<()> {
        let mapping = self.mapping.read().clone();
        if let Some(m) = mapping {
            m.flush().map_err(io_err(&self.path()))?;
        }
        Ok(())
    }

    /// Trims the file to its used slots, then unmaps it (Kafka's `close`). An index closed
    /// with no entries leaves a 0-byte file. Closing again is a no-op; later lookups
    /// return [`IndexError::Closed`].
    ///
    /// # Errors
    /// [`IndexError::Closed`] if the index was unmapped by [`IndexFile::force_unmap`] or
    /// [`IndexFile::delete_if_exists`]: the file could not be trimmed (Kafka fails here
    /// too, with a NullPointerException), so a preallocated tail may remain on disk.
    pub fn close(&self) -> Result<()> {
        let mut w = self.writer();
        if self.mapping.read().is_none() {
            return if w.guard.closed {
                Ok(())
            } else {
                Err(IndexError::Closed { path: self.path() })
            };
        }
        if self.writable {
            w.trim_to_valid_size()?;
        }
        w.unmap();
        w.guard.closed = true;
        Ok(())
    }

    /// Unmaps without trimming or flushing (Kafka's `closeHandler`/`forceUnmap`).
    /// Readers mid-lookup finish on the old mapping; later calls return
    /// [`IndexError::Closed`].
    pub fn force_unmap(&self) {
        self.writer().unmap();
    }

    /// Unmaps the index and deletes its file. Returns whether a file was deleted.
    pub fn delete_if_exists(&self) -> Result<bool> {
        let mut w = self.writer();
        w.unmap();
        let path = self.path();
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(IndexError::io(&path, e)),
        }
    }

    /// Renames the file to `new_path` (atomic `rename(2)`). The stored path changes on
    /// success, and also when the source file does not exist (nothing to move, as
    /// Kafka's lazy index does); on any other error it is left unchanged (Kafka changes it
    /// even then; we keep the path that still names the data).
    pub fn rename_to(&self, new_path: impl Into<PathBuf>) -> Result<()> {
        let _w = self.writer();
        let new_path = new_path.into();
        let old = self.path();
        match std::fs::rename(&old, &new_path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound && !old.exists() => {}
            Err(e) => return Err(IndexError::io(&old, e)),
        }
        *self.path.write() = new_path;
        Ok(())
    }

    /// Changes the stored path's parent directory without any I/O (Kafka's
    /// `updateParentDir`).
    pub fn update_parent_dir(&self, dir: &Path) {
        let mut p = self.path.write();
        if let Some(name) = p.file_name().map(|n| n.to_owned()) {
            *p = dir.join(name);
        }
    }

    /// Whether the file length is a whole number of slots (part of Kafka's sanity checks).
    pub fn length_is_whole_slots(&self) -> Result<(bool, u64)> {
        let path = self.path();
        let len = std::fs::metadata(&path).map_err(io_err(&path))?.len();
        Ok((len % E::SIZE as u64 == 0, len))
    }
}

/// Lookups of one thread announced once for a batch (see [`IndexFile::with_reader`]).
///
/// Lives only inside the closure given to [`IndexFile::with_reader`] and cannot leave
/// its thread (neither `Send` nor `Sync`).
pub struct Reader<'a, E: IndexEntry> {
    index: &'a IndexFile<E>,
    /// `None`: the thread has no reader slot; every search takes the read lock.
    announced: Option<&'a readers::Announced>,
}

impl<E: IndexEntry> Reader<'_, E> {
    /// [`IndexFile::search`] without the per-call announcement: the same answer (slot
    /// and entry) and the same errors. [`IndexError::Closed`] once a `close`,
    /// `force_unmap` or `delete_if_exists` has unpublished the mapping, which may happen
    /// during the batch (that call then waits for the batch before it unmaps anything);
    /// every later search of the batch gets it too.
    #[inline]
    pub fn search<P: Probe>(
        &self,
        target: i64,
        field: SearchField,
        bound: Bound,
        probe: &mut P,
    ) -> Result<Option<(usize, E)>> {
        match self.announced {
            Some(a) => self.index.search_announced(a, target, field, bound, probe),
            None => self.index.search_locked(target, field, bound, probe),
        }
    }

    /// The index this reader searches.
    #[inline]
    pub fn index(&self) -> &IndexFile<E> {
        self.index
    }
}

impl<E: IndexEntry> std::fmt::Debug for Reader<'_, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("path", &self.index.path())
            .field("announced", &self.announced.is_some())
            .finish()
    }
}

/// Exclusive write access to an [`IndexFile`] (its writer lock). Readers are not blocked.
pub struct IndexWriter<'a, E: IndexEntry> {
    index: &'a IndexFile<E>,
    #[cfg(not(loom))]
    guard: crate::sys::StoreGuard<'a, Writer>,
    #[cfg(loom)]
    guard: loom::sync::MutexGuard<'a, Writer>,
}

impl<E: IndexEntry> IndexWriter<'_, E> {
    fn path(&self) -> PathBuf {
        self.index.path()
    }

    fn current_mapping(&self) -> Result<Arc<Mapped>> {
        self.guard
            .current
            .clone()
            .ok_or_else(|| IndexError::Closed { path: self.path() })
    }

    /// Installs `new` as the published mapping (and the writer's reference to it),
    /// returning the one it replaces.
    ///
    /// When it returns, no lookup still reads the replaced mapping (it waited for the
    /// lookups in flight, [`readers::synchronize`]); snapshots may still hold it.
    fn install(&mut self, new: Option<Arc<Mapped>>) -> Option<Arc<Mapped>> {
        self.guard.current = new.clone();
        self.index.published.store(new.as_ref());
        let old = std::mem::replace(&mut *self.index.mapping.write(), new);
        readers::synchronize();
        old
    }

    #[inline]
    fn check_writable(&self) -> Result<()> {
        if self.index.writable {
            Ok(())
        } else {
            Err(IndexError::InvalidArgument {
                path: self.path(),
                reason: "index was opened read-only".into(),
            })
        }
    }

    /// Used slots (only this writer changes it while the guard is held).
    #[inline]
    pub fn entries(&self) -> usize {
        self.index.entries.load(Ordering::Relaxed)
    }

    /// Slots the file holds.
    #[inline]
    pub fn max_entries(&self) -> usize {
        self.index.max_entries.load(Ordering::Relaxed)
    }

    /// The last used slot, or `None`.
    ///
    /// # Errors
    /// [`IndexError::Closed`] after the index was unmapped.
    #[inline]
    pub fn last_entry(&self) -> Result<Option<E>> {
        let Some(mapping) = self.guard.current.as_ref() else {
            return Err(IndexError::Closed { path: self.path() });
        };
        let n = self.entries().min(mapping.len() / E::SIZE);
        let slots: &[E] = bytemuck::cast_slice(mapping.bytes(n * E::SIZE));
        Ok(slots.last().copied())
    }

    /// The underlying index (for its path and base offset).
    pub fn index(&self) -> &IndexFile<E> {
        self.index
    }

    /// Writes `entry` into slot `entries` and publishes `entries + 1` (`Release`).
    ///
    /// # Errors
    /// [`IndexError::IndexFull`] when `entries >= max_entries` (nothing written);
    /// [`IndexError::InvalidArgument`] on a read-only index; [`IndexError::Closed`].
    #[inline]
    pub fn append(&mut self, entry: &E) -> Result<()> {
        self.check_writable()?;
        let n = self.entries();
        if n >= self.max_entries() {
            return Err(IndexError::IndexFull {
                path: self.path(),
                kind: E::KIND,
                entries: n,
            });
        }
        let Some(mapping) = self.guard.current.as_ref() else {
            return Err(IndexError::Closed { path: self.path() });
        };
        #[cfg(loom)]
        if let Some(cell) = mapping.shadow.get(n) {
            cell.with_mut(|_| ());
        }
        if !mapping.write(n * E::SIZE, bytemuck::bytes_of(entry)) {
            return Err(IndexError::IndexFull {
                path: self.path(),
                kind: E::KIND,
                entries: n,
            });
        }
        // The fence (if slot n begins a page) before the count: readers that see the new
        // count see the fence too. Most slots begin neither a page nor a block, and the
        // directory's note says so without the slice of used slots.
        if let Some(dir) = mapping.dir.as_ref().filter(|d| !d.is_quiet(n)) {
            let base = self.index.base_offset;
            let slots: &[E] = bytemuck::cast_slice(mapping.bytes(n * E::SIZE));
            dir.record::<E>(n, entry.key(base), entry, slots, base);
        }
        self.index.entries.store(n + 1, PUBLISH);
        Ok(())
    }

    /// Sets the entry count to `n`; slots beyond keep their bytes (Kafka's
    /// `truncateToEntries`). The file length is unchanged.
    ///
    /// # Errors
    /// [`IndexError::InvalidArgument`] if `n > entries`.
    pub fn truncate_to_entries(&mut self, n: usize) -> Result<()> {
        let current = self.entries();
        if n > current {
            return Err(IndexError::InvalidArgument {
                path: self.path(),
                reason: format!("cannot truncate to {n} entries, the index has {current}"),
            });
        }
        match self.guard.current.as_ref().and_then(|m| m.dir.as_ref()) {
            Some(dir) => dir.truncate::<E>(n, || self.index.entries.store(n, PUBLISH)),
            None => self.index.entries.store(n, PUBLISH),
        }
        Ok(())
    }

    /// Resizes the file to `new_size` rounded down to a multiple of `E::SIZE`, and remaps
    /// it. Returns `false` (doing nothing) if the rounded size equals the current length.
    /// The entry count is unchanged.
    ///
    /// # Errors
    /// * [`IndexError::InvalidArgument`] if the rounded size is below the used bytes
    ///   (`entries * E::SIZE`) — rejected **before** anything changes (Kafka shrinks the
    ///   file first and then fails), or on a read-only index.
    /// * [`IndexError::Io`] from `set_len`/`mmap`; [`IndexError::Closed`].
    pub fn resize(&mut self, new_size: usize) -> Result<bool> {
        let rounded = round_down(new_size, E::SIZE);
        let old = self.current_mapping()?;
        if rounded == old.len() {
            return Ok(false);
        }
        self.check_writable()?;
        let used = self.entries() * E::SIZE;
        if rounded < used {
            return Err(IndexError::InvalidArgument {
                path: self.path(),
                reason: format!(
                    "cannot resize to {new_size} bytes ({rounded} rounded): {} entries use {used} bytes",
                    self.entries()
                ),
            });
        }
        let path = self.path();
        // Opened for this resize only, before anything changes: a failure to open (e.g.
        // `EMFILE`) leaves the index exactly as it was.
        let file = self.index.open_file()?;
        if rounded > old.len() {
            // Grow: extend the file first, then map the larger range.
            file.set_len(rounded as u64).map_err(io_err(&path))?;
            let m = Mapping::map(&file, rounded, true).map_err(io_err(&path))?;
            let new = self.remapped(&old, m);
            self.install(Some(new));
            retire(&mut self.guard.retired, old);
        } else {
            // Shrink: map the smaller range, swap it in, wait until no reader still holds
            // any mapping longer than the new length (the one replaced here, and older
            // ones retired by earlier remaps), and only then cut the file (invariant 2 of
            // `sys`).
            old.flush().map_err(io_err(&path))?;
            let m = Mapping::map(&file, rounded, true).map_err(io_err(&path))?;
            let new = self.remapped(&old, m);
            self.install(Some(new));
            let retired = std::mem::take(&mut self.guard.retired);
            let (longer, within): (Vec<_>, Vec<_>) = std::iter::once(old)
                .chain(retired)
                .partition(|m| m.len() > rounded);
            self.guard.retired = within;
            for m in longer {
                wait_until_unique(m);
            }
            file.set_len(rounded as u64).map_err(io_err(&path))?;
        }
        self.index
            .max_entries
            .store(rounded / E::SIZE, Ordering::Release);
        Ok(true)
    }

    /// Shrinks the file to exactly the used slots.
    pub fn trim_to_valid_size(&mut self) -> Result<bool> {
        let size = self.entries() * E::SIZE;
        self.resize(size)
    }

    /// `map` with the page directory of `old` (if any) carried over: same page size,
    /// sized for the new length, fences of the used pages copied (the used slots are the
    /// same bytes of the same file).
    fn remapped(&self, old: &Mapped, map: Mapping) -> Arc<Mapped> {
        let dir = old.dir.as_ref().map(|d| {
            let new = Directory::new::<E>(d.page_size(), map.len(), self.entries());
            new.copy_from(d, d.pages::<E>(self.entries()));
            new
        });
        let slots = map.len() / E::SIZE;
        Arc::new(Mapped::new::<E>(map, dir, slots))
    }

    fn unmap(&mut self) {
        let old = self.install(None);
        if let Some(m) = old {
            // Flush errors on unmap are ignored, as Kafka's closeHandler does; callers
            // wanting durability call flush() first.
            let _ = m.flush();
            retire(&mut self.guard.retired, m);
        }
    }
}

/// Waits until `mapping` is the last reference (every reader that cloned it has
/// finished its lookup), then drops it, unmapping the range.
///
/// A reader that keeps a [`Snapshot`] alive blocks this wait (and with it the writer's
/// shrinking `resize`, `trim_to_valid_size` and `close`) until the snapshot is dropped;
/// a thread must not hold a snapshot of an index while it shrinks that index.
fn wait_until_unique(mut mapping: Arc<Mapped>) {
    loop {
        match Arc::try_unwrap(mapping) {
            Ok(m) => {
                drop(m);
                return;
            }
            Err(shared) => {
                mapping = shared;
                yield_now();
            }
        }
    }
}
