//! [`LazyIndex`]: an offset or time index that is memory-mapped only on first use
//! (Kafka's `LazyIndex`, docs/kafka-behaviour.md#lazy-indexes).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use index_core::{IndexError, TypedIndex};
use parking_lot::RwLock;

use crate::fs::{FsOp, FsRef};

/// The load state of a [`LazyIndex`].
#[derive(Debug)]
enum Slot<T> {
    /// Not mapped by this wrapper. The `Weak` points at the instance of an earlier
    /// [`LazyIndex::unload`] that readers may still hold: it is revived instead of mapping
    /// the file a second time (so there is never more than one live instance per file,
    /// and index-core's "a shrink waits for readers of longer mappings" rule keeps
    /// covering every reader).
    Unloaded(Weak<T>),
    /// Mapped.
    Loaded(Arc<T>),
    /// Closed or deleted: [`LazyIndex::get`] fails with [`IndexError::Closed`] and never
    /// recreates the file.
    Gone,
}

#[derive(Debug)]
struct State<T> {
    path: PathBuf,
    slot: Slot<T>,
}

/// An index that is opened (and its file created) only when [`LazyIndex::get`] is first
/// called, and that can be unloaded again ([`unload`](Self::unload)).
///
/// Before loading, [`file`](Self::file), [`rename_to`](Self::rename_to),
/// [`update_parent_dir`](Self::update_parent_dir), [`delete_if_exists`](Self::delete_if_exists)
/// and [`close`](Self::close) act on the path only and never create the file (docs/kafka-behaviour.md#lazy-indexes,
/// acceptance case 31). After loading they delegate to the index. Opening a directory with thousands
/// of segments therefore maps no index until a lookup needs it (KAFKA-7283).
///
/// Unlike Kafka's `LazyIndex`, an inactive segment's index can be trimmed and unmapped
/// ([`unload`](Self::unload)) and is mapped again by the next `get` (field case B17: the number of
/// mappings stays flat however often the log rolls). After
/// [`delete_if_exists`](Self::delete_if_exists), [`close`](Self::close) of a loaded index
/// or [`close_handler`](Self::close_handler), `get` returns [`IndexError::Closed`] (a
/// "segment gone" error) instead of recreating a file.
///
/// Concurrency: `get` takes a read lock and clones an `Arc` (readers keep the index, and
/// so its mapping, alive while they use it); loading, unloading and the path operations
/// take the write lock. Mutations (unload, rename, delete, close) must be serialised by
/// the caller, as every segment mutation is.
#[derive(Debug)]
pub struct LazyIndex<T: TypedIndex> {
    /// The seam the open of the index is reported to ([`FsOp::Open`]).
    fs: FsRef,
    base_offset: i64,
    max_index_size: usize,
    state: RwLock<State<T>>,
}

impl<T: TypedIndex> LazyIndex<T> {
    /// A lazy index for the file at `path` (which may not exist) of a segment with base
    /// offset `base_offset`; `max_index_size` (bytes) is used when the file is created or
    /// reset.
    pub fn new(path: impl Into<PathBuf>, base_offset: i64, max_index_size: usize) -> Self {
        Self::with_fs(path, base_offset, max_index_size, crate::fs::real())
    }

    /// [`new`](Self::new) with the file-system seam `fs`: each open of the index file
    /// (which creates and preallocates it when missing) is reported to `fs` as
    /// [`FsOp::Open`] ([`FileSystem::before`](crate::fs::FileSystem::before), whose
    /// error fails the open, and [`FileSystem::after`](crate::fs::FileSystem::after)).
    pub fn with_fs(
        path: impl Into<PathBuf>,
        base_offset: i64,
        max_index_size: usize,
        fs: FsRef,
    ) -> Self {
        LazyIndex {
            fs,
            base_offset,
            max_index_size,
            state: RwLock::new(State {
                path: path.into(),
                slot: Slot::Unloaded(Weak::new()),
            }),
        }
    }

    /// The index, opening it if needed (Kafka's `get()`): an existing file is mapped at
    /// its current length, a missing one is created and preallocated to `max_index_size`.
    ///
    /// # Errors
    /// [`IndexError::Closed`] after the index was closed or deleted; the index's open
    /// error (e.g. [`IndexError::Io`]), in which case a later call retries.
    pub fn get(&self) -> Result<Arc<T>, IndexError> {
        {
            let st = self.state.read();
            match &st.slot {
                Slot::Loaded(v) => return Ok(v.clone()),
                Slot::Gone => {
                    return Err(IndexError::Closed {
                        path: st.path.clone(),
                    })
                }
                Slot::Unloaded(_) => {}
            }
        }
        let mut st = self.state.write();
        let v = match &st.slot {
            Slot::Loaded(v) => return Ok(v.clone()),
            Slot::Gone => {
                return Err(IndexError::Closed {
                    path: st.path.clone(),
                })
            }
            Slot::Unloaded(w) => match w.upgrade() {
                Some(v) => v,
                None => {
                    self.fs
                        .before(FsOp::Open, &st.path)
                        .map_err(|source| IndexError::Io {
                            path: st.path.clone(),
                            source,
                        })?;
                    let v = Arc::new(T::open_writable(
                        &st.path,
                        self.base_offset,
                        self.max_index_size,
                    )?);
                    self.fs.after(FsOp::Open, &st.path, None);
                    v
                }
            },
        };
        st.slot = Slot::Loaded(v.clone());
        Ok(v)
    }

    /// The index if it is loaded, without loading it.
    pub fn get_if_loaded(&self) -> Option<Arc<T>> {
        match &self.state.read().slot {
            Slot::Loaded(v) => Some(v.clone()),
            _ => None,
        }
    }

    /// Whether the index is currently loaded (mapped by this wrapper).
    pub fn is_loaded(&self) -> bool {
        matches!(self.state.read().slot, Slot::Loaded(_))
    }

    /// Whether the index was closed or deleted (`get` fails from now on).
    pub fn is_gone(&self) -> bool {
        matches!(self.state.read().slot, Slot::Gone)
    }

    /// Runs `f` on the file's path while the index is not loaded, holding the wrapper's
    /// lock so that no [`get`](Self::get) loads it (and so creates and preallocates a
    /// missing file, or maps it) and no [`unload`](Self::unload) trims it meanwhile:
    /// what `f` reads of the file is what an unloaded index holds. `None` (and `f` is
    /// not run) when the index is loaded, when an earlier instance is still alive in a
    /// reader's hands (ask it), or after close or delete.
    pub fn with_unloaded_file<R>(&self, f: impl FnOnce(&Path) -> R) -> Option<R> {
        let st = self.state.read();
        match &st.slot {
            Slot::Unloaded(w) if w.strong_count() == 0 => Some(f(&st.path)),
            _ => None,
        }
    }

    /// The current file path (it may not exist).
    pub fn file(&self) -> PathBuf {
        let st = self.state.read();
        match &st.slot {
            Slot::Loaded(v) => v.index_file().path(),
            _ => st.path.clone(),
        }
    }

    /// The segment base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// Trims the index file to its entries and drops this wrapper's reference, so the
    /// mapping is unmapped as soon as no reader holds it; the next [`get`](Self::get)
    /// maps the file again (at its trimmed length: the index is then full, as a reopened
    /// inactive segment's index is). A no-op unless loaded. For inactive segments only:
    /// an index that is still appended to must stay loaded.
    ///
    /// # Errors
    /// [`IndexError::Io`] from trimming (the index then stays loaded).
    pub fn unload(&self) -> Result<(), IndexError> {
        let mut st = self.state.write();
        if let Slot::Loaded(v) = &st.slot {
            let v = v.clone();
            v.index_file().trim_to_valid_size()?;
            st.path = v.index_file().path();
            st.slot = Slot::Unloaded(Arc::downgrade(&v));
        }
        Ok(())
    }

    /// Renames the file to `to`. Before loading: moves the file if it exists, never creates
    /// it; a missing source is not an error. The stored path becomes `to`.
    ///
    /// # Errors
    /// [`IndexError::Io`] if an existing file cannot be renamed.
    pub fn rename_to(&self, to: impl Into<PathBuf>) -> Result<(), IndexError> {
        let to = to.into();
        let mut st = self.state.write();
        let held = match &st.slot {
            Slot::Loaded(v) => Some(v.clone()),
            Slot::Unloaded(w) => w.upgrade(),
            Slot::Gone => None,
        };
        match held {
            Some(v) => v.index_file().rename_to(to.clone())?,
            None => match std::fs::rename(&st.path, &to) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !st.path.exists() => {}
                Err(e) => {
                    return Err(IndexError::Io {
                        path: st.path.clone(),
                        source: e,
                    })
                }
            },
        }
        st.path = to;
        Ok(())
    }

    /// Changes the parent directory of the path without any I/O.
    pub fn update_parent_dir(&self, dir: &Path) {
        let mut st = self.state.write();
        match &st.slot {
            Slot::Loaded(v) => v.index_file().update_parent_dir(dir),
            Slot::Unloaded(w) => {
                if let Some(v) = w.upgrade() {
                    v.index_file().update_parent_dir(dir);
                }
            }
            Slot::Gone => {}
        }
        if let Some(name) = st.path.file_name().map(|n| n.to_owned()) {
            st.path = dir.join(name);
        }
    }

    /// Deletes the file (unmapping it first if loaded); `get` fails from now on. Returns
    /// whether a file was deleted.
    ///
    /// # Errors
    /// [`IndexError::Io`] for failures other than "not found".
    pub fn delete_if_exists(&self) -> Result<bool, IndexError> {
        let mut st = self.state.write();
        let held = match std::mem::replace(&mut st.slot, Slot::Gone) {
            Slot::Loaded(v) => Some(v),
            Slot::Unloaded(w) => w.upgrade(),
            Slot::Gone => None,
        };
        if let Some(v) = held {
            return v.index_file().delete_if_exists();
        }
        match std::fs::remove_file(&st.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(IndexError::Io {
                path: st.path.clone(),
                source: e,
            }),
        }
    }

    /// Closes the index (trim + unmap) if loaded, after which `get` fails; a no-op
    /// otherwise (an unloaded index can still be loaded later, as in Kafka).
    ///
    /// # Errors
    /// [`IndexError::Io`] from trimming.
    pub fn close(&self) -> Result<(), IndexError> {
        let mut st = self.state.write();
        let held = match &st.slot {
            Slot::Loaded(v) => Some(v.clone()),
            Slot::Unloaded(w) => w.upgrade(),
            Slot::Gone => None,
        };
        match held {
            Some(v) => {
                st.path = v.index_file().path();
                st.slot = Slot::Gone;
                v.index_file().close()
            }
            None => Ok(()),
        }
    }

    /// Unmaps without trimming if loaded (after which `get` fails); a no-op otherwise.
    pub fn close_handler(&self) {
        let mut st = self.state.write();
        let held = match &st.slot {
            Slot::Loaded(v) => Some(v.clone()),
            Slot::Unloaded(w) => w.upgrade(),
            Slot::Gone => None,
        };
        if let Some(v) = held {
            st.path = v.index_file().path();
            st.slot = Slot::Gone;
            v.index_file().force_unmap();
        }
    }
}
