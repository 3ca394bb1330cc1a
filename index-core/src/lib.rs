//! # index-core
//!
//! The foundation of the Kafka index crates: the fixed-size entry codec, the
//! memory-mapped index file with Kafka's lifecycle, and the search strategies.
//!
//! * [`codec`]: big-endian field types (`I32Be`, `I64Be`, ...) and the [`IndexEntry`]
//!   trait implemented by `index-offset`'s 8-byte and `index-time`'s 12-byte raw entries.
//! * [`IndexFile`]: a memory-mapped file of entries: preallocate, append, truncate,
//!   resize, trim, flush, close, rename, delete (Kafka's `AbstractIndex`). One appender
//!   and any number of lock-free readers.
//! * [`directory`]: the page directory behind [`SearchStrategy::PageDirectory`], which
//!   reads one index page per lookup: an 8-byte fence, a 4-byte known-block count and
//!   4 bytes per block key for each page, plus a 16-byte fence entry where entries can
//!   straddle a page ([`directory::Directory::bytes_per_page`]: with 4 KiB pages 268
//!   bytes per page of 8-byte entries, 372 per page of 12-byte entries).
//! * [`peek`]: an index file's entry count and first and last entries from two
//!   positioned reads, without mapping it.
//! * [`search`]: the textbook binary search and Kafka's warm/cold search, pure functions of
//!   a slice and a target, instrumented through a [`Probe`] that compiles away when unused
//!   ([`NoProbe`]) or records pages touched ([`PageProbe`]).
//! * [`view`]: [`IndexBytes`], a read-only index over bytes in memory (a remote
//!   segment's index), searched with the same kernels.
//! * [`sys`]: the only `unsafe` code of the workspace (mapping, `mincore`, `madvise`, `sendfile`,
//!   `pread` into a buffer's spare capacity).
//!
//! ```
//! use index_core::{codec::{I64Be, IndexEntry}, IndexFile, OpenMode, PageProbe};
//! use index_core::search::{Bound, SearchField};
//!
//! // A 16-byte entry type: key and value, both absolute.
//! #[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
//! #[repr(C)]
//! struct Pair { key: I64Be, value: I64Be }
//! impl IndexEntry for Pair {
//!     const SIZE: usize = 16;
//!     const KIND: &'static str = "pair index";
//!     fn key(&self, _base: i64) -> i64 { self.key.get() }
//!     fn value(&self, _base: i64) -> i64 { self.value.get() }
//! }
//!
//! let dir = tempfile::tempdir()?;
//! let index = IndexFile::<Pair>::open(dir.path().join("0.idx"), 0, Some(4096), OpenMode::ReadWrite)?;
//! assert_eq!(index.max_entries(), 256);
//! for k in 0..100 {
//!     index.append(&Pair { key: I64Be::new(k * 10), value: I64Be::new(k) })?;
//! }
//! let mut probe = PageProbe::new(4096);
//! let (slot, entry) = index
//!     .search(995, SearchField::Key, Bound::LargestLowerBound, &mut probe)?
//!     .unwrap();
//! assert_eq!((slot, entry.value(0)), (99, 99));
//! assert_eq!(probe.distinct_pages(), 1);
//! index.close()?; // trims the file to 100 * 16 bytes
//! assert_eq!(std::fs::metadata(dir.path().join("0.idx"))?.len(), 1600);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod codec;
pub mod directory;
mod error;
mod file;
pub mod peek;
pub mod pio;
pub mod readers;
pub mod search;
mod sync;
#[allow(unsafe_code)] // the workspace's only `unsafe` (ARCHITECTURE.md, Invariants)
pub mod sys;
mod typed;
pub mod view;

pub use codec::IndexEntry;
pub use error::{IndexError, Result};
pub use file::{IndexFile, IndexWriter, OpenMode, Reader, Snapshot};
pub use search::{
    Bound, NoProbe, PageProbe, Probe, SearchField, SearchStrategy, DEFAULT_PAGE_SIZE,
    DEFAULT_WARM_SECTION_BYTES,
};
pub use typed::TypedIndex;
pub use view::IndexBytes;
