//! [`TransactionIndex`]: the `.txnindex` file of one log segment.

use std::fs::{File, OpenOptions};
use std::io;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::entry::{AbortedTxn, RawAbortedTxn};
use crate::error::{Result, TxnIndexError};
use crate::pio::FileExt;

/// Entry size as a file length, in bytes.
const ENTRY_BYTES: u64 = RawAbortedTxn::SIZE as u64;

/// Entries read per `pread` when scanning the file (128 × 34 = 4352 bytes).
const CHUNK_ENTRIES: u64 = 128;

/// How many lock-free scans a reader attempts before it scans while holding the lock.
const OPTIMISTIC_SCANS: usize = 3;

/// Result of [`TransactionIndex::collect_aborted_txns`] (Kafka's `TxnIndexSearchResult`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TxnIndexSearchResult {
    /// The matching aborted transactions, in file order (increasing last offset).
    pub aborted_transactions: Vec<AbortedTxn>,
    /// `true` when an entry with `last_stable_offset >= upper_bound_offset` was reached, so
    /// later segments cannot hold further matches; `false` when the end of this index was
    /// reached and the caller must continue with the next segment's index.
    pub is_complete: bool,
}

/// What the writer knows about the last entry's last offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastOffset {
    /// Not read from the file yet (after `open` or `close`): loaded by the next append.
    Unknown,
    /// Known: `None` for an empty index.
    Known(Option<i64>),
}

/// Mutable state, guarded by the index's mutex.
#[derive(Debug)]
struct State {
    /// Where the index file lives (changed by `rename_to` / `update_parent_dir`).
    path: PathBuf,
    /// The retained read/write handle: opened by the first append (not by `open`) and
    /// kept until `close`, so that only an index being appended to holds a descriptor.
    file: Option<Arc<File>>,
    /// File length in bytes; meaningful only while `file` is `Some`.
    len: u64,
    /// Last offset of the last entry, for the monotonic append check.
    last_offset: LastOffset,
    /// Bumped by every operation that removes or rewrites bytes (truncate, reset, delete),
    /// so that lock-free readers can detect that their scan raced with one.
    epoch: u64,
}

/// A consistent view of the file for one scan.
struct Snapshot {
    path: PathBuf,
    file: Option<Arc<File>>,
    len: u64,
    epoch: u64,
}

/// Kafka's transaction index (`.txnindex`): the aborted transactions whose ABORT marker lies
/// in one log segment, as a plain file of 34-byte [`RawAbortedTxn`] entries in append order
/// (docs/kafka-behaviour.md#txn-index). The file is **not** memory-mapped, pre-allocated or trimmed; reads use
/// positioned reads (`pread`) and appends positioned writes at the end of the file.
///
/// # Concurrency
///
/// `TransactionIndex` is `Send + Sync`. Mutations (`append`, `truncate_to`, `reset`, …) are
/// serialised by an internal [`parking_lot::Mutex`]. Readers (`collect_aborted_txns`,
/// `all_aborted_txns`, `sanity_check`, …) take the lock only to snapshot the file handle and
/// length, then read without it, so they run concurrently with one appender and see a prefix
/// of the appended entries. If a truncation, reset or delete happens during a read, the read
/// is retried (finally under the lock), so a reader never sees a mix of two file states.
///
/// # Differences from Kafka
///
/// See the [crate documentation](crate#deviations-from-kafka) for the full list. In short:
/// appends after a partial trailing entry are refused, the last offset is reloaded from the
/// file, reads after [`close`](Self::close) still return the file's entries, and an append
/// whose last offset is below the start offset is refused.
#[derive(Debug)]
pub struct TransactionIndex {
    start_offset: i64,
    state: Mutex<State>,
}

impl TransactionIndex {
    /// Opens the transaction index of a segment whose base offset is `start_offset`.
    ///
    /// Mirrors Kafka's constructor, except for the file handle: if `path` exists it is
    /// opened for reading and writing, to report a file that cannot be (nothing is read or
    /// validated — use [`sanity_check`](Self::sanity_check)), and **closed again**; if it
    /// does not exist, nothing is created and the file is created by the first
    /// [`append`](Self::append). Kafka keeps the channel of every segment's existing
    /// `.txnindex` open, one descriptor per segment for the life of the log; here only an
    /// index that is appended to keeps one (until [`close`](Self::close)), and reads,
    /// truncations and [`flush`](Self::flush) of an index without one open the file for
    /// the duration of the call (`docs/kafka-behaviour.md#file-descriptors`).
    ///
    /// # Errors
    /// [`TxnIndexError::Io`] if the file exists but cannot be opened read/write (for
    /// example it is a directory, lacks permissions, or the process is out of file
    /// descriptors).
    pub fn open(path: impl AsRef<Path>, start_offset: i64) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(file) => drop(file),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(TxnIndexError::io(&path, e)),
        }
        Ok(Self::not_created(path, start_offset))
    }

    /// [`open`](Self::open) of a `path` that the caller has just found absent (a segment
    /// open checks each of its files' types first): the same index, without the open
    /// that would fail with "not found". The file is created by the first
    /// [`append`](Self::append); if it appeared meanwhile, reads see it as
    /// [`open`](Self::open)'s index would.
    pub fn not_created(path: impl Into<PathBuf>, start_offset: i64) -> Self {
        let path = path.into();
        Self {
            start_offset,
            state: Mutex::new(State {
                path,
                file: None,
                len: 0,
                last_offset: LastOffset::Unknown,
                epoch: 0,
            }),
        }
    }

    /// The base offset of the segment this index belongs to (absolute offset).
    pub fn start_offset(&self) -> i64 {
        self.start_offset
    }

    /// The current path of the index file (Kafka's `file()`); it may not exist yet.
    pub fn path(&self) -> PathBuf {
        self.state.lock().path.clone()
    }

    /// Appends one aborted transaction (34 bytes, version `0x0000`) at the end of the file,
    /// creating the file if needed (also after [`close`](Self::close) or
    /// [`delete_if_exists`](Self::delete_if_exists), like Kafka).
    ///
    /// The entry is in the OS page cache when this returns; call [`flush`](Self::flush) for
    /// durability. On error nothing is added: a write that fails half-way is cut back off
    /// the file, so no partial entry is left behind.
    ///
    /// # Errors
    /// * [`TxnIndexError::NonMonotonic`] if the index's last entry has
    ///   `last_offset >= txn.last_offset` (Kafka: `IllegalArgumentException`). Unlike Kafka,
    ///   the last offset is loaded from the file's last entry after open/close, so the check
    ///   also holds across reopen.
    /// * [`TxnIndexError::InvalidAppend`] if `txn.last_offset < start_offset` (Kafka writes
    ///   such an entry and then fails [`sanity_check`](Self::sanity_check)).
    /// * [`TxnIndexError::CorruptIndex`] if the file ends in a partial entry (its length is
    ///   not a multiple of 34 bytes; Kafka would append misaligned and lose the entry), or
    ///   its last entry has an unsupported version.
    /// * [`TxnIndexError::Io`] if opening, reading or writing the file fails.
    pub fn append(&self, txn: &AbortedTxn) -> Result<()> {
        let mut st = self.state.lock();
        let file = open_retained(&mut st)?;
        if !st.len.is_multiple_of(ENTRY_BYTES) {
            return Err(TxnIndexError::corrupt(
                &st.path,
                format!(
                    "refusing to append after a partial trailing entry: the file is {} bytes, \
                     {} whole entries plus {} bytes (repair with truncate_partial_tail, \
                     truncate_to or reset)",
                    st.len,
                    st.len / ENTRY_BYTES,
                    st.len % ENTRY_BYTES
                ),
            ));
        }
        let last = match st.last_offset {
            LastOffset::Known(last) => last,
            LastOffset::Unknown => {
                let last = read_last_entry(&file, st.len, &st.path)?.map(|t| t.last_offset);
                st.last_offset = LastOffset::Known(last);
                last
            }
        };
        if let Some(last) = last {
            if last >= txn.last_offset {
                return Err(TxnIndexError::NonMonotonic {
                    path: st.path.clone(),
                    last_offset: last,
                    new_last_offset: txn.last_offset,
                });
            }
        }
        if txn.last_offset < self.start_offset {
            return Err(TxnIndexError::InvalidAppend {
                path: st.path.clone(),
                reason: format!(
                    "last offset {} of aborted transaction {:?} is below the start offset {}",
                    txn.last_offset, txn, self.start_offset
                ),
            });
        }
        let bytes = txn.to_bytes();
        if let Err(e) = file.write_all_at(&bytes, st.len) {
            // Cut off whatever part of the entry reached the file. If even that fails, drop
            // the handle so that the next append re-reads the real length and refuses to
            // append after the partial tail instead of writing misaligned.
            if file.set_len(st.len).is_err() {
                st.file = None;
                st.last_offset = LastOffset::Unknown;
                st.epoch += 1;
            }
            return Err(TxnIndexError::io(&st.path, e));
        }
        st.len += ENTRY_BYTES;
        st.last_offset = LastOffset::Known(Some(txn.last_offset));
        Ok(())
    }

    /// Forces the file's data and metadata to disk (`fsync`). Mirrors Kafka's `flush`,
    /// which syncs only an open channel: here an index without a retained handle (after
    /// [`open`](Self::open) of an existing file, or [`close`](Self::close)) opens its file
    /// for the fsync, so entries appended before a `close` are made durable too (an fsync
    /// through any descriptor of the file syncs its data). A missing file is not created.
    ///
    /// # Errors
    /// [`TxnIndexError::Io`] if the file exists but cannot be opened, or `fsync` fails.
    pub fn flush(&self) -> Result<()> {
        let (file, path) = {
            let st = self.state.lock();
            (st.file.clone(), st.path.clone())
        };
        let file = match file {
            Some(file) => file,
            // Write access: some platforms (Windows) cannot flush a read-only handle.
            None => match OpenOptions::new().write(true).open(&path) {
                Ok(file) => Arc::new(file),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(TxnIndexError::io(&path, e)),
            },
        };
        file.sync_all().map_err(|e| TxnIndexError::io(&path, e))
    }

    /// Removes every entry: truncates the file to 0 bytes (keeping it) and forgets the last
    /// offset, so any entry may be appended next. Mirrors Kafka's `reset`, except that a
    /// closed index's file is truncated too (Kafka skips the file when its channel is
    /// closed). A missing file stays missing.
    ///
    /// # Errors
    /// [`TxnIndexError::Io`] if opening or truncating the file fails.
    pub fn reset(&self) -> Result<()> {
        let mut st = self.state.lock();
        if let Some(file) = open_for_update(&st)? {
            file.set_len(0)
                .map_err(|e| TxnIndexError::io(&st.path, e))?;
        }
        st.len = 0;
        st.last_offset = LastOffset::Known(None);
        st.epoch += 1;
        Ok(())
    }

    /// Closes the file handle, without `fsync` (like Kafka). Unlike Kafka's, a later
    /// [`flush`](Self::flush) still syncs the file (it opens it for the fsync).
    ///
    /// Unlike Kafka — whose reads return **no entries** after `close` although the file
    /// still holds them — reads after `close` open the file at [`path`](Self::path) for the
    /// duration of the read and return its entries. A later [`append`](Self::append) reopens
    /// the file at its end (as in Kafka) and reloads the last offset from it.
    pub fn close(&self) {
        let mut st = self.state.lock();
        st.file = None;
        st.len = 0;
        st.last_offset = LastOffset::Unknown;
    }

    /// Closes the index and deletes its file. Returns `true` if the file existed.
    /// Mirrors Kafka's `deleteIfExists`. A later [`append`](Self::append) creates a new,
    /// empty file.
    ///
    /// # Errors
    /// [`TxnIndexError::Io`] if the file exists but cannot be deleted.
    pub fn delete_if_exists(&self) -> Result<bool> {
        let mut st = self.state.lock();
        st.file = None;
        st.len = 0;
        st.last_offset = LastOffset::Unknown;
        st.epoch += 1;
        match std::fs::remove_file(&st.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(TxnIndexError::io(&st.path, e)),
        }
    }

    /// Renames the file to `new_path` if it exists (`rename(2)`, same file system), then
    /// records `new_path` as the index's path in every case. An open handle keeps referring
    /// to the renamed file, so appends continue in it. Mirrors Kafka's `renameTo`.
    ///
    /// # Errors
    /// [`TxnIndexError::Io`] (naming the old path) if the existence check or the rename
    /// fails; the recorded path is then unchanged.
    pub fn rename_to(&self, new_path: impl AsRef<Path>) -> Result<()> {
        let new_path = new_path.as_ref();
        let mut st = self.state.lock();
        let exists = st
            .path
            .try_exists()
            .map_err(|e| TxnIndexError::io(&st.path, e))?;
        if exists {
            std::fs::rename(&st.path, new_path).map_err(|e| {
                TxnIndexError::io(
                    &st.path,
                    io::Error::new(
                        e.kind(),
                        format!("rename to {} failed: {e}", new_path.display()),
                    ),
                )
            })?;
        }
        st.path = new_path.to_path_buf();
        Ok(())
    }

    /// Changes the recorded path to `dir/<current file name>` without touching the file
    /// system (Kafka's `updateParentDir`, used after the directory itself was renamed).
    pub fn update_parent_dir(&self, dir: impl AsRef<Path>) {
        let mut st = self.state.lock();
        st.path = match st.path.file_name() {
            Some(name) => dir.as_ref().join(name),
            None => dir.as_ref().to_path_buf(),
        };
    }

    /// Removes all entries with `last_offset >= offset` (absolute offset), as Kafka's
    /// `truncateTo`: scans from the start and, at the first entry with
    /// `last_offset >= offset`, truncates the file at that entry's byte position and sets the
    /// last offset to the previous entry's (or none). If no entry qualifies, nothing changes
    /// (a partial trailing entry, if any, stays; see
    /// [`truncate_partial_tail`](Self::truncate_partial_tail)).
    ///
    /// Unlike Kafka, this also works on a closed index (Kafka sees no entries then).
    ///
    /// # Errors
    /// [`TxnIndexError::CorruptIndex`] if an entry before the truncation point has an
    /// unsupported version; [`TxnIndexError::Io`] on read or truncate failure.
    pub fn truncate_to(&self, offset: i64) -> Result<()> {
        let mut st = self.state.lock();
        let snap = snapshot(&st)?;
        let mut prev = None;
        let mut cut = None;
        scan(&snap, &mut |pos, txn| {
            if txn.last_offset >= offset {
                cut = Some(pos);
                ControlFlow::Break(())
            } else {
                prev = Some(txn.last_offset);
                ControlFlow::Continue(())
            }
        })?;
        let Some(pos) = cut else {
            return Ok(());
        };
        if let Some(file) = open_for_update(&st)? {
            file.set_len(pos)
                .map_err(|e| TxnIndexError::io(&st.path, e))?;
        }
        st.len = pos;
        st.last_offset = LastOffset::Known(prev);
        st.epoch += 1;
        Ok(())
    }

    /// Cuts a partial trailing entry (the last `len % 34` bytes) off the file and returns
    /// how many bytes were removed (0 if the file is whole or missing). Not in Kafka; this
    /// is the explicit repair for the state in which [`append`](Self::append) refuses to
    /// write. The bytes removed never formed a complete entry, so no entry is lost.
    ///
    /// # Errors
    /// [`TxnIndexError::Io`] on failure to open, stat or truncate the file.
    pub fn truncate_partial_tail(&self) -> Result<u64> {
        let mut st = self.state.lock();
        let Some(file) = open_for_update(&st)? else {
            return Ok(0);
        };
        let len = if st.file.is_some() {
            st.len
        } else {
            file.metadata()
                .map_err(|e| TxnIndexError::io(&st.path, e))?
                .len()
        };
        let tail = len % ENTRY_BYTES;
        if tail == 0 {
            return Ok(0);
        }
        file.set_len(len - tail)
            .map_err(|e| TxnIndexError::io(&st.path, e))?;
        if st.file.is_some() {
            st.len = len - tail;
        }
        st.epoch += 1;
        Ok(tail)
    }

    /// All entries in file order (Kafka's `allAbortedTxns`). A partial trailing entry is
    /// ignored, as in Kafka.
    ///
    /// # Errors
    /// [`TxnIndexError::CorruptIndex`] at the first entry with an unsupported version
    /// (Kafka: `KafkaException` "unexpected aborted transaction version"), and
    /// [`TxnIndexError::Io`] on read failure.
    pub fn all_aborted_txns(&self) -> Result<Vec<AbortedTxn>> {
        self.read(Vec::new, |all, _, txn| {
            all.push(txn);
            ControlFlow::Continue(())
        })
        .map(|(all, _)| all)
    }

    /// The aborted transactions a `READ_COMMITTED` fetch of `[fetch_offset,
    /// upper_bound_offset)` must know about, from this segment (Kafka's
    /// `collectAbortedTxns`; absolute offsets).
    ///
    /// Entries are visited in file order; an entry is included iff
    /// `last_offset >= fetch_offset && first_offset < upper_bound_offset`. After an entry is
    /// considered, if its `last_stable_offset >= upper_bound_offset` the search stops with
    /// `is_complete = true`; reaching the end of the file gives `is_complete = false` (the
    /// caller continues with the next segment). A partial trailing entry is ignored.
    ///
    /// # Errors
    /// [`TxnIndexError::CorruptIndex`] if an entry with an unsupported version is reached
    /// before the search stops; [`TxnIndexError::Io`] on read failure.
    pub fn collect_aborted_txns(
        &self,
        fetch_offset: i64,
        upper_bound_offset: i64,
    ) -> Result<TxnIndexSearchResult> {
        self.read(TxnIndexSearchResult::default, |res, _, txn| {
            if txn.last_offset >= fetch_offset && txn.first_offset < upper_bound_offset {
                res.aborted_transactions.push(txn);
            }
            if txn.last_stable_offset >= upper_bound_offset {
                res.is_complete = true;
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .map(|(res, _)| res)
    }

    /// Checks the file against the start offset (Kafka's `sanityCheck`).
    ///
    /// # Errors
    /// [`TxnIndexError::CorruptIndex`] if an entry's `last_offset < start_offset` (naming the
    /// entry, its byte position and the start offset), if an entry has an unsupported
    /// version, or — stricter than Kafka — if the file ends in a partial entry (length not a
    /// multiple of 34 bytes). [`TxnIndexError::Io`] on read failure.
    pub fn sanity_check(&self) -> Result<()> {
        let start = self.start_offset;
        let (bad, len) = self.read(
            || None,
            |bad, pos, txn| {
                if txn.last_offset < start {
                    *bad = Some((pos, txn));
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        )?;
        if let Some((pos, txn)) = bad {
            return Err(TxnIndexError::corrupt(
                &self.path(),
                format!(
                    "last offset of aborted transaction {txn:?} at byte position {pos} \
                     is smaller than the start offset {start}"
                ),
            ));
        }
        if len % ENTRY_BYTES != 0 {
            return Err(TxnIndexError::corrupt(
                &self.path(),
                format!(
                    "partial trailing entry: the file is {len} bytes, {} whole entries plus {} bytes",
                    len / ENTRY_BYTES,
                    len % ENTRY_BYTES
                ),
            ));
        }
        Ok(())
    }

    /// Number of whole entries in the file (file length / 34, rounded down). Reads the
    /// file's length from disk if the index is closed; 0 if the file does not exist.
    ///
    /// # Errors
    /// [`TxnIndexError::Io`] if the closed file cannot be opened or stat'ed.
    pub fn len(&self) -> Result<usize> {
        let bytes = self.size_in_bytes()?;
        Ok(usize::try_from(bytes / ENTRY_BYTES).unwrap_or(usize::MAX))
    }

    /// Whether the index holds no whole entry. See [`len`](Self::len).
    ///
    /// # Errors
    /// As [`len`](Self::len).
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Length of the file in bytes, including a partial trailing entry; 0 if the file does
    /// not exist.
    ///
    /// # Errors
    /// [`TxnIndexError::Io`] if the closed file cannot be opened or stat'ed.
    pub fn size_in_bytes(&self) -> Result<u64> {
        let st = self.state.lock();
        Ok(snapshot(&st)?.len)
    }

    /// Scans the file's whole entries, calling `visit(acc, byte_position, entry)` until it
    /// breaks. Returns the accumulator and the file length the scan was based on.
    ///
    /// Lock-free first: a scan that raced with a truncation/reset/delete (epoch changed) is
    /// discarded and repeated; after [`OPTIMISTIC_SCANS`] attempts it runs under the lock.
    fn read<A>(
        &self,
        init: impl Fn() -> A,
        mut visit: impl FnMut(&mut A, u64, AbortedTxn) -> ControlFlow<()>,
    ) -> Result<(A, u64)> {
        for _ in 0..OPTIMISTIC_SCANS {
            let snap = snapshot(&self.state.lock())?;
            let mut acc = init();
            let res = scan(&snap, &mut |pos, txn| visit(&mut acc, pos, txn));
            if self.state.lock().epoch == snap.epoch {
                return res.map(|()| (acc, snap.len));
            }
        }
        let st = self.state.lock();
        let snap = snapshot(&st)?;
        let mut acc = init();
        scan(&snap, &mut |pos, txn| visit(&mut acc, pos, txn))?;
        Ok((acc, snap.len))
    }
}

/// Takes a consistent view of the file. A closed index opens the file read-only for the
/// duration of the read (a missing file reads as empty).
fn snapshot(st: &State) -> Result<Snapshot> {
    let (file, len) = match &st.file {
        Some(file) => (Some(Arc::clone(file)), st.len),
        None => match File::open(&st.path) {
            Ok(file) => {
                let len = file
                    .metadata()
                    .map_err(|e| TxnIndexError::io(&st.path, e))?
                    .len();
                (Some(Arc::new(file)), len)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => (None, 0),
            Err(e) => return Err(TxnIndexError::io(&st.path, e)),
        },
    };
    Ok(Snapshot {
        path: st.path.clone(),
        file,
        len,
        epoch: st.epoch,
    })
}

/// Visits the whole entries of `snap` in file order, with their byte positions. Entries are
/// read in chunks with `pread` and viewed with `bytemuck::cast_slice`. A partial trailing
/// entry is not visited. An unsupported version stops the scan with `CorruptIndex`.
fn scan(snap: &Snapshot, visit: &mut dyn FnMut(u64, AbortedTxn) -> ControlFlow<()>) -> Result<()> {
    let Some(file) = &snap.file else {
        return Ok(());
    };
    let whole = snap.len - snap.len % ENTRY_BYTES;
    let chunk_bytes = CHUNK_ENTRIES * ENTRY_BYTES;
    let mut buf = vec![0u8; usize::try_from(whole.min(chunk_bytes)).unwrap_or(0)];
    let mut pos = 0u64;
    while pos < whole {
        let n = (whole - pos).min(chunk_bytes);
        // `n <= chunk_bytes`, which fits in usize.
        let chunk = &mut buf[..n as usize];
        file.read_exact_at(chunk, pos)
            .map_err(|e| TxnIndexError::io(&snap.path, e))?;
        let entries: &[RawAbortedTxn] = bytemuck::cast_slice(chunk);
        let mut entry_pos = pos;
        for raw in entries {
            let txn = checked_decode(raw, entry_pos, &snap.path)?;
            if visit(entry_pos, txn).is_break() {
                return Ok(());
            }
            entry_pos += ENTRY_BYTES;
        }
        pos += n;
    }
    Ok(())
}

/// Decodes with Kafka's version rule; an unsupported version is corruption.
fn checked_decode(raw: &RawAbortedTxn, pos: u64, path: &Path) -> Result<AbortedTxn> {
    let txn = raw.decode();
    if txn.is_supported_version() {
        Ok(txn)
    } else {
        Err(TxnIndexError::corrupt(
            path,
            format!(
                "unexpected aborted transaction version {} at byte position {pos}, \
                 current version is {}",
                txn.version,
                AbortedTxn::CURRENT_VERSION
            ),
        ))
    }
}

/// Reads the last whole entry of a file of `len` bytes (a multiple of 34), if any.
fn read_last_entry(file: &File, len: u64, path: &Path) -> Result<Option<AbortedTxn>> {
    if len < ENTRY_BYTES {
        return Ok(None);
    }
    let pos = len - ENTRY_BYTES;
    let mut bytes = [0u8; RawAbortedTxn::SIZE];
    file.read_exact_at(&mut bytes, pos)
        .map_err(|e| TxnIndexError::io(path, e))?;
    let raw: RawAbortedTxn = bytemuck::pod_read_unaligned(&bytes);
    checked_decode(&raw, pos, path).map(Some)
}

/// Returns the retained read/write handle, opening (and creating) the file at its end if
/// the index is not open.
fn open_retained(st: &mut State) -> Result<Arc<File>> {
    if let Some(file) = &st.file {
        return Ok(Arc::clone(file));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&st.path)
        .map_err(|e| TxnIndexError::io(&st.path, e))?;
    let len = file
        .metadata()
        .map_err(|e| TxnIndexError::io(&st.path, e))?
        .len();
    let file = Arc::new(file);
    st.file = Some(Arc::clone(&file));
    st.len = len;
    Ok(file)
}

/// A writable handle for a non-append mutation: the retained one, or (closed index) a
/// temporary one that is dropped afterwards. `None` if the file does not exist.
fn open_for_update(st: &State) -> Result<Option<Arc<File>>> {
    if let Some(file) = &st.file {
        return Ok(Some(Arc::clone(file)));
    }
    match OpenOptions::new().write(true).open(&st.path) {
        Ok(file) => Ok(Some(Arc::new(file))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TxnIndexError::io(&st.path, e)),
    }
}
