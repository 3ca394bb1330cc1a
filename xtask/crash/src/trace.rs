//! The trace recorder: a [`FileSystem`] that performs every operation on the real file
//! system and logs it, with the bytes needed to rebuild each file's content at any point
//! of the trace.
//!
//! Operations the segment crate performs through the seam (`.log` writes, truncations,
//! fsyncs, renames, deletions, whole-file writes, directory fsyncs) are logged as they
//! happen. Operations the index crates perform on their own files (mapped `.index` and
//! `.timeindex` pages, `.txnindex` appends) are invisible to the seam; the segment
//! reports them (`before`/`after`), and the recorder then reads the file back from disk
//! (through the page cache, which a shared mapping writes into) and logs its content.
//! Before every fsync-family operation it also re-reads every index file, so that the
//! content of each index is exact at every such cut point.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use segment::fs::{FileSystem, FsOp, OpenMode, RealFs};

/// One recorded operation. Names are file names inside the log directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// A new directory entry for a new, empty file.
    Create(String),
    /// `data` written at byte `pos` of the file.
    Write(String, u64, Vec<u8>),
    /// The file's length set (ftruncate).
    SetLen(String, u64),
    /// The file's whole current content, read back after an index crate changed it
    /// (content and length).
    Capture(String, Vec<u8>),
    /// fsync/fdatasync/msync of the file: its current content and length are durable.
    Sync(String),
    /// `rename(from, to)`, replacing `to`.
    Rename(String, String),
    /// `unlink`.
    Remove(String),
    /// fsync of the log directory: every earlier creation, rename and unlink is durable.
    SyncDir,
    /// fsync of its parent (the log dir): the same for the parent's files
    /// ([`PARENT`]-prefixed names).
    SyncParentDir,
}

/// The name prefix of the files the recorder follows in the parent directory: the
/// `cleaner-offset-checkpoint` (and its temporary file) that `Log::clean` keeps there.
pub const PARENT: &str = "../";

/// The parent directory's files the recorder follows.
const PARENT_FILES: &str = "cleaner-offset-checkpoint";

impl Op {
    /// Whether this is an fsync-family operation (a cut point of the enumeration).
    pub fn is_sync(&self) -> bool {
        matches!(self, Op::Sync(_) | Op::SyncDir | Op::SyncParentDir)
    }
}

/// Whether `name` is a file the index crates write behind the seam.
pub fn is_index_class(name: &str) -> bool {
    let base = name
        .strip_suffix(".deleted")
        .or_else(|| name.strip_suffix(".swap"))
        .or_else(|| name.strip_suffix(".cleaned"))
        .unwrap_or(name);
    base.ends_with(".index") || base.ends_with(".timeindex") || base.ends_with(".txnindex")
}

#[derive(Debug, Default)]
struct State {
    ops: Vec<Op>,
    /// The names that currently exist (as far as the recorder knows).
    names: std::collections::BTreeSet<String>,
}

/// The recorder. Thread-safe; one per recorded run.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    state: Mutex<State>,
}

impl Recorder {
    /// A recorder for the log directory `dir`, whose files `initial` (names) already exist.
    pub fn new(dir: &Path, initial: impl IntoIterator<Item = String>) -> Self {
        Recorder {
            dir: dir.to_path_buf(),
            state: Mutex::new(State {
                ops: Vec::new(),
                names: initial.into_iter().collect(),
            }),
        }
    }

    /// Operations recorded so far.
    pub fn len(&self) -> usize {
        self.lock().ops.len()
    }

    /// The recorded trace (a copy).
    pub fn ops(&self) -> Vec<Op> {
        self.lock().ops.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The name of `path` if it is in the log directory.
    fn name(&self, path: &Path) -> Option<String> {
        let file = path.file_name().map(|n| n.to_string_lossy().into_owned())?;
        if path.parent() == Some(self.dir.as_path()) {
            return Some(file);
        }
        (path.parent().is_some()
            && path.parent() == self.dir.parent()
            && file.starts_with(PARENT_FILES))
        .then(|| format!("{PARENT}{file}"))
    }

    fn push(&self, op: Op) {
        let mut st = self.lock();
        match &op {
            Op::Create(n) => {
                st.names.insert(n.clone());
            }
            Op::Rename(f, t) => {
                st.names.remove(f);
                st.names.insert(t.clone());
            }
            Op::Remove(n) => {
                st.names.remove(n);
            }
            _ => {}
        }
        st.ops.push(op);
    }

    fn known(&self, name: &str) -> bool {
        self.lock().names.contains(name)
    }

    /// Logs a creation if `name` is new.
    fn note_created(&self, name: &str) {
        if !self.known(name) {
            self.push(Op::Create(name.to_string()));
        }
    }

    /// Reads `name` back from disk and logs its content (and its creation if new).
    fn capture(&self, name: &str) {
        match std::fs::read(self.dir.join(name)) {
            Ok(bytes) => {
                self.note_created(name);
                self.push(Op::Capture(name.to_string(), bytes));
            }
            Err(_) => {
                // Gone (deleted behind our back) or never created (a txn index with
                // no entries): nothing on disk to log.
            }
        }
    }

    /// Re-reads every index-class file (exact index content at a cut point).
    fn capture_indexes(&self) {
        let names: Vec<String> = self
            .lock()
            .names
            .iter()
            .filter(|n| is_index_class(n))
            .cloned()
            .collect();
        for n in names {
            self.capture(&n);
        }
    }
}

impl FileSystem for Recorder {
    fn open_file(&self, path: &Path, mode: OpenMode) -> io::Result<File> {
        let new = mode == OpenMode::Create && !path.exists();
        let f = RealFs.open_file(path, mode)?;
        if let (true, Some(n)) = (new, self.name(path)) {
            self.note_created(&n);
        }
        Ok(f)
    }

    fn write_all_at(&self, path: &Path, file: &File, buf: &[u8], pos: u64) -> io::Result<()> {
        RealFs.write_all_at(path, file, buf, pos)?;
        if let Some(n) = self.name(path) {
            self.push(Op::Write(n, pos, buf.to_vec()));
        }
        Ok(())
    }

    fn sync_data(&self, path: &Path, file: &File) -> io::Result<()> {
        self.capture_indexes();
        RealFs.sync_data(path, file)?;
        if let Some(n) = self.name(path) {
            self.push(Op::Sync(n));
        }
        Ok(())
    }

    fn set_len(&self, path: &Path, file: &File, len: u64) -> io::Result<()> {
        RealFs.set_len(path, file, len)?;
        if let Some(n) = self.name(path) {
            self.push(Op::SetLen(n, len));
        }
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        RealFs.rename(from, to)?;
        if let (Some(f), Some(t)) = (self.name(from), self.name(to)) {
            self.push(Op::Rename(f, t));
        }
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        RealFs.remove_file(path)?;
        if let Some(n) = self.name(path) {
            self.push(Op::Remove(n));
        }
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.capture_indexes();
        RealFs.sync_dir(dir)?;
        if dir == self.dir {
            self.push(Op::SyncDir);
        } else if Some(dir) == self.dir.parent() {
            self.push(Op::SyncParentDir);
        }
        Ok(())
    }

    fn write_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let existed = path.exists();
        RealFs.write_file(path, bytes)?;
        if let Some(n) = self.name(path) {
            if existed && self.known(&n) {
                self.push(Op::SetLen(n.clone(), 0));
            } else {
                self.note_created(&n);
            }
            self.push(Op::Write(n.clone(), 0, bytes.to_vec()));
            self.capture_indexes();
            self.push(Op::Sync(n));
        }
        Ok(())
    }

    fn after(&self, op: FsOp, path: &Path, to: Option<&Path>) {
        let Some(n) = self.name(path) else { return };
        match op {
            FsOp::Open | FsOp::TxnWrite | FsOp::IndexTrim | FsOp::IndexResize => self.capture(&n),
            FsOp::IndexFlush => {
                self.capture_indexes();
                self.capture(&n);
                if self.known(&n) {
                    self.push(Op::Sync(n));
                }
            }
            FsOp::IndexRename => {
                if let Some(t) = to.and_then(|t| self.name(t)) {
                    if self.known(&n) {
                        self.push(Op::Rename(n, t));
                    }
                }
            }
            FsOp::IndexRemove if self.known(&n) => self.push(Op::Remove(n)),
            _ => {}
        }
    }
}
