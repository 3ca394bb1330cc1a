//! The leader-epoch cache (Kafka's `LeaderEpochFileCache`) and the read of its
//! `leader-epoch-checkpoint` file.

use std::path::Path;

use super::snapshot;
use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::fs::FileSystem;

/// A leader-epoch cache: `(epoch, start_offset)` pairs, epochs and start offsets both
/// strictly increasing (Kafka's `LeaderEpochFileCache`; [`Log`](crate::Log) persists it in
/// `leader-epoch-checkpoint`). Every way in keeps that order, by Kafka's rules
/// (`docs/kafka-behaviour.md#leader-epoch-assign`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaderEpochCache {
    entries: Vec<(i32, i64)>,
}

impl LeaderEpochCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Kafka's load of a checkpoint (`LeaderEpochFileCache`'s constructor): `entries`, in
    /// file order, each [`assign`](Self::assign)ed in turn. Entries that break the order
    /// are resolved as `assign` resolves them, so `[(0,0),(3,6),(5,6)]` loads as
    /// `[(0,0),(5,6)]`; entries with a negative epoch or offset are skipped (Kafka fails
    /// the load; the checkpoint parser already rejects them).
    pub fn from_entries(entries: Vec<(i32, i64)>) -> Self {
        let mut cache = LeaderEpochCache::new();
        for (epoch, start_offset) in entries {
            cache.assign(epoch, start_offset);
        }
        cache
    }

    /// Kafka's `LeaderEpochFileCache.assign` (the append path,
    /// `docs/kafka-behaviour.md#leader-epoch-assign`): nothing changes when `epoch` is the
    /// latest epoch and `start_offset` is not below its start offset. Otherwise, every
    /// entry at the end of the cache whose epoch is ≥ `epoch` **or** whose start offset is
    /// ≥ `start_offset` is removed (walking from the latest entry down, stopping at the
    /// first that is below in both), and `(epoch, start_offset)` is added. So an equal
    /// start offset replaces the older epoch (`(3,6)` then `(5,6)` keeps `(5,6)`), a
    /// lower start offset removes the entries starting at or after it, and a lower epoch
    /// removes the higher epochs. Returns whether the cache changed. A negative epoch or
    /// offset (Kafka's `IllegalArgumentException`) is ignored: `false`.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) -> bool {
        if epoch < 0 || start_offset < 0 {
            return false;
        }
        if let Some(&(le, lo)) = self.entries.last() {
            if le == epoch && start_offset >= lo {
                return false;
            }
        }
        while let Some(&(e, o)) = self.entries.last() {
            if e >= epoch || o >= start_offset {
                self.entries.pop();
            } else {
                break;
            }
        }
        self.entries.push((epoch, start_offset));
        true
    }

    /// The rule of Kafka's `LogSegment.recover` (and of this crate's rebuild from the
    /// log): [`assign`](Self::assign) only when `epoch` is ≥ 0 and above the latest epoch
    /// (or the cache is empty). Returns whether the cache changed.
    pub fn assign_if_newer(&mut self, epoch: i32, start_offset: i64) -> bool {
        if epoch >= 0 && self.latest_epoch().is_none_or(|l| epoch > l) {
            self.assign(epoch, start_offset)
        } else {
            false
        }
    }

    /// The latest epoch, if any.
    pub fn latest_epoch(&self) -> Option<i32> {
        self.entries.last().map(|e| e.0)
    }

    /// All entries, oldest first.
    pub fn entries(&self) -> &[(i32, i64)] {
        &self.entries
    }

    /// Kafka's `LeaderEpochFileCache.epochForOffset`: the epoch of the entry starting at
    /// `offset`, else of the last entry starting below it; `None` when every entry starts
    /// above it, or the cache is empty (what ListOffsets −4, −5 and −6 answer with,
    /// `docs/kafka-behaviour.md#list-offsets-tiered`).
    pub fn epoch_for_offset(&self, offset: i64) -> Option<i32> {
        let mut previous = None;
        for &(epoch, start) in &self.entries {
            if start == offset {
                return Some(epoch);
            }
            if start > offset {
                return previous;
            }
            previous = Some(epoch);
        }
        previous
    }

    /// Removes entries whose start offset is ≥ `offset` (Kafka's
    /// `truncateFromEndAsyncFlush`, what [`Log::truncate_to`](crate::Log::truncate_to)
    /// calls with the new log end). A negative `offset` removes nothing (Kafka's
    /// `endOffset >= 0` guard), as for any offset above the latest start offset. Returns
    /// whether anything changed.
    pub fn truncate_from_end(&mut self, offset: i64) -> bool {
        if offset < 0 {
            return false;
        }
        let before = self.entries.len();
        self.entries.retain(|e| e.1 < offset);
        self.entries.len() != before
    }

    /// Kafka's `truncateFromStart`: removes the entries starting at or below `offset`
    /// and re-adds the last of them with start offset `offset`. Returns whether anything
    /// changed.
    pub fn truncate_from_start(&mut self, offset: i64) -> bool {
        let n = self.entries.iter().take_while(|e| e.1 <= offset).count();
        if n == 0 {
            return false;
        }
        let epoch = self.entries[n - 1].0;
        let changed = n > 1 || self.entries[0].1 != offset;
        self.entries.drain(..n);
        self.entries.insert(0, (epoch, offset));
        changed
    }

    /// Removes every entry. Returns whether anything changed.
    pub fn clear(&mut self) -> bool {
        let changed = !self.entries.is_empty();
        self.entries.clear();
        changed
    }
}

/// Reads a `leader-epoch-checkpoint` file. A missing file is `Ok(None)`; a malformed one,
/// or one that is not a regular file, is a warning and `Ok(None)` (treated as missing: the
/// log rebuilds the cache from its batches; Kafka would fail to load the log).
///
/// # Errors
/// [`SegmentError::Io`] for read errors other than not-found.
pub fn read_leader_epoch_checkpoint(path: &Path) -> Result<Option<Vec<(i32, i64)>>> {
    read_leader_epoch_checkpoint_with(&crate::fs::RealFs, path)
}

/// [`read_leader_epoch_checkpoint`], opening the file through the seam `fs`
/// ([`FileSystem::open_file`]).
///
/// # Errors
/// As [`read_leader_epoch_checkpoint`].
pub fn read_leader_epoch_checkpoint_with(
    fs: &dyn FileSystem,
    path: &Path,
) -> Result<Option<Vec<(i32, i64)>>> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            // Never open a FIFO or device (it could block forever).
            tracing::warn!(file = %path.display(), "leader-epoch checkpoint is not a regular file; ignoring it");
            return Ok(None);
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(SegmentError::io("stat", path, e)),
    }
    let bytes = match crate::fs::read_file_with(fs, path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(SegmentError::io("read", path, e)),
    };
    match snapshot::decode_leader_epoch_checkpoint(&bytes) {
        Ok(v) => Ok(Some(v)),
        Err(reason) => {
            tracing::warn!(file = %path.display(), %reason, "malformed leader-epoch checkpoint; ignoring it");
            Ok(None)
        }
    }
}
