//! [`LazyIndex`]: an offset or time index that is memory-mapped only on first use
//! (Kafka's `LazyIndex`, spec §5).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use index_core::IndexError;
use index_offset::OffsetIndex;
use index_time::TimeIndex;
use parking_lot::Mutex;

/// An index type that [`LazyIndex`] can load and whose file operations it can delegate.
/// Implemented for [`OffsetIndex`] and [`TimeIndex`].
pub trait LazyLoad: Send + Sync + Sized {
    /// Opens (creating and preallocating `max_index_size` bytes if missing) the writable
    /// index at `path` for a segment with base offset `base_offset`.
    ///
    /// # Errors
    /// Any [`IndexError`] of the index's `open`.
    fn load(path: &Path, base_offset: i64, max_index_size: usize) -> Result<Self, IndexError>;
    /// The index's current file path.
    fn current_path(&self) -> PathBuf;
    /// Renames the index file (missing source tolerated).
    ///
    /// # Errors
    /// [`IndexError::Io`].
    fn rename_file(&self, to: &Path) -> Result<(), IndexError>;
    /// Unmaps and deletes the file; whether a file was deleted.
    ///
    /// # Errors
    /// [`IndexError::Io`].
    fn delete_file(&self) -> Result<bool, IndexError>;
    /// Trims and unmaps (Kafka's `close`).
    ///
    /// # Errors
    /// [`IndexError::Io`].
    fn close_file(&self) -> Result<(), IndexError>;
    /// Unmaps without trimming or flushing (Kafka's `closeHandler`).
    fn close_handler(&self);
    /// Changes the parent directory of the stored path, without I/O.
    fn update_parent(&self, dir: &Path);
}

macro_rules! impl_lazy_load {
    ($t:ty) => {
        impl LazyLoad for $t {
            fn load(
                path: &Path,
                base_offset: i64,
                max_index_size: usize,
            ) -> Result<Self, IndexError> {
                <$t>::open(path, base_offset, max_index_size)
            }
            fn current_path(&self) -> PathBuf {
                self.path()
            }
            fn rename_file(&self, to: &Path) -> Result<(), IndexError> {
                self.rename_to(to.to_path_buf())
            }
            fn delete_file(&self) -> Result<bool, IndexError> {
                self.delete_if_exists()
            }
            fn close_file(&self) -> Result<(), IndexError> {
                self.index_file().close()
            }
            fn close_handler(&self) {
                self.force_unmap()
            }
            fn update_parent(&self, dir: &Path) {
                self.update_parent_dir(dir)
            }
        }
    };
}
impl_lazy_load!(OffsetIndex);
impl_lazy_load!(TimeIndex);

/// An index that is opened (and its file created) only when [`LazyIndex::get`] is first
/// called.
///
/// Before loading, [`file`](Self::file), [`rename_to`](Self::rename_to),
/// [`update_parent_dir`](Self::update_parent_dir), [`delete_if_exists`](Self::delete_if_exists)
/// and [`close`](Self::close) act on the path only and never create the file (spec §5,
/// case 31). After loading they delegate to the index. Opening a directory with thousands
/// of segments therefore maps no index until a lookup needs it (KAFKA-7283).
///
/// `get` is lock-free once loaded; loading and the path operations serialise on a mutex.
#[derive(Debug)]
pub struct LazyIndex<T: LazyLoad> {
    base_offset: i64,
    max_index_size: usize,
    path: Mutex<PathBuf>,
    loaded: OnceLock<T>,
}

impl<T: LazyLoad> LazyIndex<T> {
    /// A lazy index for the file at `path` (which may not exist) of a segment with base
    /// offset `base_offset`; `max_index_size` (bytes) is used when the file is created or
    /// reset.
    pub fn new(path: impl Into<PathBuf>, base_offset: i64, max_index_size: usize) -> Self {
        LazyIndex {
            base_offset,
            max_index_size,
            path: Mutex::new(path.into()),
            loaded: OnceLock::new(),
        }
    }

    /// The index, opening it on first use (Kafka's `get()`): an existing file is mapped at
    /// its current length, a missing one is created and preallocated to `max_index_size`.
    ///
    /// # Errors
    /// The index's open error (e.g. [`IndexError::Io`]); a later call retries.
    pub fn get(&self) -> Result<&T, IndexError> {
        if let Some(v) = self.loaded.get() {
            return Ok(v);
        }
        let path = self.path.lock();
        if let Some(v) = self.loaded.get() {
            return Ok(v);
        }
        let v = T::load(&path, self.base_offset, self.max_index_size)?;
        Ok(self.loaded.get_or_init(|| v))
    }

    /// The index if it has been loaded, without loading it.
    pub fn get_if_loaded(&self) -> Option<&T> {
        self.loaded.get()
    }

    /// Whether [`get`](Self::get) has opened the index.
    pub fn is_loaded(&self) -> bool {
        self.loaded.get().is_some()
    }

    /// The current file path (it may not exist).
    pub fn file(&self) -> PathBuf {
        match self.loaded.get() {
            Some(v) => v.current_path(),
            None => self.path.lock().clone(),
        }
    }

    /// The segment base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// Renames the file to `to`. Before loading: moves the file if it exists, never creates
    /// it; a missing source is not an error. The stored path becomes `to`.
    ///
    /// # Errors
    /// [`IndexError::Io`] if an existing file cannot be renamed.
    pub fn rename_to(&self, to: impl Into<PathBuf>) -> Result<(), IndexError> {
        let to = to.into();
        let mut path = self.path.lock();
        if let Some(v) = self.loaded.get() {
            v.rename_file(&to)?;
        } else {
            match std::fs::rename(&*path, &to) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !path.exists() => {}
                Err(e) => {
                    return Err(IndexError::Io {
                        path: path.clone(),
                        source: e,
                    })
                }
            }
        }
        *path = to;
        Ok(())
    }

    /// Changes the parent directory of the path without any I/O.
    pub fn update_parent_dir(&self, dir: &Path) {
        let mut path = self.path.lock();
        if let Some(v) = self.loaded.get() {
            v.update_parent(dir);
        }
        if let Some(name) = path.file_name().map(|n| n.to_owned()) {
            *path = dir.join(name);
        }
    }

    /// Deletes the file (unmapping it first if loaded). Returns whether a file was deleted.
    ///
    /// # Errors
    /// [`IndexError::Io`] for failures other than "not found".
    pub fn delete_if_exists(&self) -> Result<bool, IndexError> {
        let path = self.path.lock();
        if let Some(v) = self.loaded.get() {
            return v.delete_file();
        }
        match std::fs::remove_file(&*path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(IndexError::Io {
                path: path.clone(),
                source: e,
            }),
        }
    }

    /// Closes the index (trim + unmap) if loaded; a no-op otherwise.
    ///
    /// # Errors
    /// [`IndexError::Io`] from trimming.
    pub fn close(&self) -> Result<(), IndexError> {
        let _g = self.path.lock();
        match self.loaded.get() {
            Some(v) => v.close_file(),
            None => Ok(()),
        }
    }

    /// Unmaps without trimming if loaded; a no-op otherwise.
    pub fn close_handler(&self) {
        let _g = self.path.lock();
        if let Some(v) = self.loaded.get() {
            v.close_handler();
        }
    }
}
