//! [`IndexBytes`]: a read-only index held in memory, over bytes the caller supplies (a
//! remote segment's index as downloaded) or read once from a file.
//!
//! Kafka's `RemoteIndexCache` keeps the indexes of remote segments it fetched; this is the
//! in-memory form of such an index. Nothing is mapped (so no `unsafe` and no file
//! descriptor is held): the bytes are one `Arc<[u8]>`, shared by every clone, and the
//! entries are viewed in place with [`bytemuck::cast_slice`] (the entry types have
//! alignment 1). Searches run the same kernels as [`crate::IndexFile::search`]
//! ([`crate::search::search`] with the default strategy, whose answers are Kafka's), so a
//! view and a mapped index over the same bytes give the same answers
//! (`docs/kafka-behaviour.md#index-bytes`).
//!
//! The typed views (`index_offset::OffsetIndexView`, `index_time::TimeIndexView`) add
//! their layout's checks on top: hostile bytes are refused with
//! [`IndexError::CorruptIndex`] when the view is built, never with a panic later.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::search::{self, Bound, NoProbe, SearchField, SearchStrategy};
use crate::{IndexEntry, IndexError, Result};

/// The name that errors of a view built from caller bytes give as the "file".
pub const IN_MEMORY_PATH: &str = "<in-memory index>";

/// The used slots of an index of `E` entries, held in memory (see the
/// [module docs](self)). Cheap to clone (one `Arc`).
pub struct IndexBytes<E: IndexEntry> {
    bytes: Arc<[u8]>,
    base_offset: i64,
    origin: Arc<Path>,
    _entry: PhantomData<fn() -> E>,
}

impl<E: IndexEntry> Clone for IndexBytes<E> {
    fn clone(&self) -> Self {
        IndexBytes {
            bytes: Arc::clone(&self.bytes),
            base_offset: self.base_offset,
            origin: Arc::clone(&self.origin),
            _entry: PhantomData,
        }
    }
}

impl<E: IndexEntry> std::fmt::Debug for IndexBytes<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexBytes")
            .field("kind", &E::KIND)
            .field("origin", &self.origin)
            .field("base_offset", &self.base_offset)
            .field("entries", &self.len())
            .finish()
    }
}

impl<E: IndexEntry> IndexBytes<E> {
    /// A view over `bytes`, every `E::SIZE` bytes one entry (a trimmed index file, as
    /// Kafka uploads a sealed segment's), of a segment starting at `base_offset`.
    /// `origin` names the bytes in errors (a path, or [`IN_MEMORY_PATH`]).
    ///
    /// # Errors
    /// [`IndexError::CorruptIndex`] if `bytes.len()` is not a multiple of `E::SIZE`.
    pub fn new(bytes: Arc<[u8]>, base_offset: i64, origin: &Path) -> Result<Self> {
        if !bytes.len().is_multiple_of(E::SIZE) {
            return Err(IndexError::CorruptIndex {
                path: origin.to_path_buf(),
                reason: format!(
                    "{} of {} bytes is not a multiple of the entry size {}",
                    E::KIND,
                    bytes.len(),
                    E::SIZE
                ),
            });
        }
        Ok(IndexBytes {
            bytes,
            base_offset,
            origin: Arc::from(origin),
            _entry: PhantomData,
        })
    }

    /// Reads the file at `path` (opened read-only, read once, not mapped) and builds a
    /// view of its bytes, as [`IndexBytes::new`].
    ///
    /// # Errors
    /// [`IndexError::Io`] (`NotFound` for a missing file); [`IndexError::CorruptIndex`]
    /// as [`IndexBytes::new`].
    pub fn read_file(path: &Path, base_offset: i64) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| IndexError::io(path, e))?;
        Self::new(Arc::from(bytes), base_offset, path)
    }

    /// The entries, in place.
    #[inline]
    pub fn slots(&self) -> &[E] {
        bytemuck::cast_slice(&self.bytes)
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len() / E::SIZE
    }

    /// Whether there is no entry.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The segment's base offset, which relative offsets are added to.
    #[inline]
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// The bytes held, in bytes (the weight of the view in a cache).
    #[inline]
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The path (or [`IN_MEMORY_PATH`]) errors name.
    pub fn origin(&self) -> PathBuf {
        self.origin.to_path_buf()
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &Arc<[u8]> {
        &self.bytes
    }

    /// The slot answering `target` by `field` and `bound`, as
    /// [`crate::IndexFile::search`] answers it (the default strategy's kernel, Kafka's
    /// answers); `None` when no slot qualifies.
    #[inline]
    pub fn search(&self, target: i64, field: SearchField, bound: Bound) -> Option<(usize, E)> {
        let slots = self.slots();
        let slot = search::search(
            slots,
            self.base_offset,
            target,
            field,
            bound,
            SearchStrategy::default(),
            &mut NoProbe,
        )?;
        slots.get(slot).map(|e| (slot, *e))
    }

    /// A [`IndexError::CorruptIndex`] naming this view, for the typed views' checks.
    pub fn corrupt(&self, reason: String) -> IndexError {
        IndexError::CorruptIndex {
            path: self.origin(),
            reason,
        }
    }
}
