//! Checks the [`Log`](crate::Log) makes before it trusts an argument or a file.
//!
//! * File types ([`check_regular_file`](crate::fs::check_regular_file), in `fs`, as the
//!   segment and the directory lock check them too): a file named like a segment file must
//!   be a regular file or a symlink to one; anything else is
//!   [`SegmentError::NotARegularFile`], checked before the file is opened.
//! * Arguments that would leave the log stuck or reuse offsets ([`check_roll_base`],
//!   [`check_start_at`]) are typed errors.
//! * The loader's clean-open validation ([`check_loaded_segments`], over the public
//!   [`segment_check`](crate::loader_plan::segment_check)): before trusting the
//!   clean-shutdown marker (or the recovery point) for a segment, a few positioned reads
//!   check that its files agree with each other; a segment that fails is recovered from
//!   its `.log`, so a file that lies costs a recovery, never data.
//!
//! The leader's checks of a producer's batch (Kafka's `LogValidator`) are not here but in
//! `leader/batch_validation.rs`.

use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::loader_plan::LOAD_CHECK_AHEAD;
use crate::names;
use crate::segment::IndexFiles;
use crate::segment_map::LogSegments;

/// `Log::roll(Some(base))`: the base must be at or above the log end offset and below
/// `i64::MAX`.
///
/// # Errors
/// [`SegmentError::InvalidArgument`].
pub(crate) fn check_roll_base(base: i64, log_end_offset: i64) -> Result<()> {
    if base < log_end_offset {
        return Err(SegmentError::arg(format!(
            "cannot roll a segment at base offset {base}, below the log end offset {log_end_offset}"
        )));
    }
    if base == i64::MAX {
        return Err(SegmentError::arg(format!(
            "cannot roll a segment at base offset {base}: no batch could be appended to it"
        )));
    }
    Ok(())
}

/// `Log::truncate_fully_and_start_at(offset)`: the new start must be in
/// `[log_start_offset, i64::MAX)`.
///
/// # Errors
/// [`SegmentError::InvalidArgument`].
pub(crate) fn check_start_at(offset: i64, log_start_offset: i64) -> Result<()> {
    if offset < 0 {
        return Err(SegmentError::arg(format!(
            "cannot start the log at negative offset {offset}"
        )));
    }
    if offset < log_start_offset {
        return Err(SegmentError::arg(format!(
            "cannot start the log at offset {offset}, below the log start offset {log_start_offset}: offsets would be reused"
        )));
    }
    if offset == i64::MAX {
        return Err(SegmentError::arg(format!(
            "cannot start the log at offset {offset}: no batch could be appended"
        )));
    }
    Ok(())
}

/// Reads and removes the clean-shutdown marker at `path`: `Ok(true)` only for a regular
/// file (or a symlink to one), which [`Log::close`](crate::Log::close) writes. Any other
/// kind of file (FIFO, socket, device, dangling symlink) is not a marker to trust: it is
/// warned about and unlinked, and the open proceeds as unclean (recovering).
///
/// # Errors
/// [`SegmentError::NotARegularFile`] for a directory (it cannot be removed safely, and
/// [`Log::close`](crate::Log::close) could never write the marker); [`SegmentError::Io`].
pub(crate) fn take_clean_marker(fs: &dyn crate::fs::FileSystem, path: &Path) -> Result<bool> {
    let clean = match crate::fs::check_regular_file(path) {
        Ok(exists) => exists,
        Err(
            e @ SegmentError::NotARegularFile {
                file_type: "directory",
                ..
            },
        ) => return Err(e),
        Err(SegmentError::NotARegularFile { file_type, .. }) => {
            tracing::warn!(file = %path.display(), file_type, "the clean-shutdown marker is not a regular file: not trusting it, recovering");
            fs.remove_file(path)
                .map_err(|e| SegmentError::io("delete", path, e))?;
            return Ok(false);
        }
        Err(e) => return Err(e),
    };
    if clean {
        fs.remove_file(path)
            .map_err(|e| SegmentError::io("delete", path, e))?;
    }
    Ok(clean)
}

/// Whether `name` is named like a file of a segment: `<offset>` then a kind suffix
/// (`.log`, `.index`, `.timeindex`, `.txnindex`) or `.snapshot`, then optionally a state
/// suffix (`.deleted`, `.cleaned`, `.swap`).
pub(crate) fn is_segment_file_name(name: &str) -> bool {
    if names::offset_from_file_name(name).is_err() {
        return false;
    }
    let Some((_, rest)) = name.split_once('.') else {
        return false;
    };
    let rest = &name[name.len() - rest.len() - 1..];
    let rest = [
        names::DELETED_FILE_SUFFIX,
        names::CLEANED_FILE_SUFFIX,
        names::SWAP_FILE_SUFFIX,
    ]
    .into_iter()
    .find_map(|s| rest.strip_suffix(s))
    .unwrap_or(rest);
    names::FileKind::ALL.iter().any(|k| k.suffix() == rest)
        || rest == names::PRODUCER_SNAPSHOT_FILE_SUFFIX
}

/// A load-time check of one segment that takes longer than this probably waited for the
/// disk (its reads of cached pages take a few microseconds; three reads from the disk at
/// queue depth 1 take 300 µs or more on the development machine).
const SLOW_CHECK: std::time::Duration = std::time::Duration::from_micros(200);

/// [`SLOW_CHECK`] for a check of a `.log` alone (its index files' check deferred): one
/// read of at most 16 KiB, a few microseconds from the page cache, about 100 µs from the
/// disk at queue depth 1 on the development machine. Under the three-read limit such
/// checks never counted as slow, and a cold open the first opens misjudged as warm read
/// its `.log`s one at a time (docs/performance.md#deferred-index-check).
const SLOW_LOG_ONLY_CHECK: std::time::Duration = std::time::Duration::from_micros(60);

/// Consecutive checks slower than [`SLOW_CHECK`] after which [`check_loaded_segments`]
/// asks for read-ahead (for the rest of the open).
const SLOW_CHECKS: u32 = 3;

/// The load-time check of every loaded segment not already `flagged`, in offset order:
/// [`LogSegment::quick_index_check`](crate::LogSegment::quick_index_check) and then
/// [`segment_check`](crate::loader_plan::segment_check) on one read of each index's
/// ends, and offsets increasing across segment boundaries (a segment's next offset is at
/// most the next segment's base offset). The index files of the next
/// [`LOAD_CHECK_AHEAD`] segments are opened ahead; with `advise` (the loader's first opens
/// found the page cache cold), or from the [`SLOW_CHECKS`]th consecutive check slower
/// than [`SLOW_CHECK`] on, with a read-ahead hint for the pages both checks read (a hint
/// to a warm page cache would only cost three calls a segment). Returns the base offsets
/// of the segments that failed (each warned about): the loader recovers them from their
/// `.log`.
pub(crate) fn check_loaded_segments<F: BatchFormat>(
    segments: &LogSegments<F>,
    flagged: &[i64],
    mut advise: bool,
    rebuilt: &Arc<AtomicU64>,
) -> Vec<i64> {
    let all = segments.values();
    let flagged: std::collections::HashSet<i64> = flagged.iter().copied().collect();
    let mut ahead: std::collections::VecDeque<Plan> =
        std::collections::VecDeque::with_capacity(LOAD_CHECK_AHEAD);
    let mut opened = 0;
    let mut slow = 0;
    let mut bad = Vec::new();
    let mut prev: Option<(i64, Option<i64>)> = None;
    for (i, seg) in all.iter().enumerate() {
        while opened < all.len() && opened < i + LOAD_CHECK_AHEAD {
            let s = &all[opened];
            ahead.push_back(if flagged.contains(&s.base_offset()) {
                Plan::Skip
            } else if defers_index_check(s, opened + 1 == all.len()) {
                s.advise_log(advise);
                Plan::LogOnly
            } else {
                Plan::Full(s.open_index_files(advise))
            });
            opened += 1;
        }
        // A run of slow checks, not one: a check can be slow because the thread was
        // descheduled.
        advise |= slow >= SLOW_CHECKS;
        let plan = ahead.pop_front().unwrap_or(Plan::Skip);
        let log_only = matches!(plan, Plan::LogOnly);
        let base = seg.base_offset();
        let is_last = i + 1 == all.len();
        let checked = match plan {
            Plan::Skip => Ok(None),
            Plan::Full(files) => timed(&mut slow, SLOW_CHECK, || check_one(seg, is_last, files)),
            Plan::LogOnly => timed(&mut slow, SLOW_LOG_ONLY_CHECK, || {
                crate::loader_plan::segment_check_with(seg, is_last, None, || Ok(None))
                    .map(|c| c.next_offset)
                    .map_err(Failed::Segment)
            }),
        };
        let next = match checked {
            Ok(next) => {
                if log_only {
                    seg.defer_index_check(check_segment_indexes::<F>, rebuilt.clone());
                }
                next
            }
            Err(reason) => {
                bad.push(base);
                warn_failed(seg, &reason);
                None
            }
        };
        if let Some((pbase, Some(pnext))) = prev {
            if pnext > base && !bad.contains(&pbase) {
                tracing::warn!(
                    segment = pbase,
                    next_offset = pnext,
                    next_segment = base,
                    "segment overlaps the next one; recovering it"
                );
                bad.push(pbase);
            }
        }
        prev = Some((base, next));
    }
    bad
}

/// How [`check_loaded_segments`] checks one segment.
enum Plan {
    /// Not at all: the loader recovers it anyway.
    Skip,
    /// Its index files (opened ahead) and its `.log`.
    Full(IndexFiles),
    /// Its `.log` alone; its index files at their first load.
    LogOnly,
}

/// Whether the load-time check of `seg`'s index files waits for their first load: a
/// segment that is not the last one, with a `.log` of at most
/// [`DEFER_INDEX_CHECK_MAX_LOG_BYTES`](crate::loader_plan::DEFER_INDEX_CHECK_MAX_LOG_BYTES). The last segment's indexes are checked at the
/// open, as it is the one appended to next.
fn defers_index_check<F: BatchFormat>(seg: &crate::segment::LogSegment<F>, is_last: bool) -> bool {
    !is_last && seg.size() <= crate::loader_plan::DEFER_INDEX_CHECK_MAX_LOG_BYTES
}

/// The load-time check of `seg`'s index files against its `.log` (the check
/// [`check_loaded_segments`] makes of a segment it does not defer), for a check the
/// loader deferred to the indexes' first load: `Err(reason)` if they disagree.
pub(crate) fn check_segment_indexes<F: BatchFormat>(
    seg: &crate::segment::LogSegment<F>,
) -> std::result::Result<(), String> {
    match check_one(seg, false, seg.open_index_files(false)) {
        Ok(_) => Ok(()),
        Err(Failed::Index(reason) | Failed::Segment(reason)) => Err(reason),
    }
}

/// Runs `check`; counts it in `slow` if it took longer than `limit`, else
/// restarts the count.
fn timed<T>(slow: &mut u32, limit: std::time::Duration, check: impl FnOnce() -> T) -> T {
    let started = std::time::Instant::now();
    let r = check();
    *slow = if started.elapsed() > limit {
        *slow + 1
    } else {
        0
    };
    r
}

/// Why one segment failed the load-time check.
enum Failed {
    /// [`LogSegment::quick_index_check`](crate::LogSegment::quick_index_check)'s reason.
    Index(String),
    /// [`segment_check`](crate::loader_plan::segment_check)'s reason.
    Segment(String),
}

/// Both load-time checks of one segment on one read of its indexes' ends: the segment's
/// next offset (`None`: its tail was not scanned to the end), or why it failed.
fn check_one<F: BatchFormat>(
    seg: &crate::segment::LogSegment<F>,
    is_last: bool,
    files: IndexFiles,
) -> std::result::Result<Option<i64>, Failed> {
    let ends = seg.read_index_ends(files).map_err(Failed::Index)?;
    seg.quick_check_ends(&ends).map_err(Failed::Index)?;
    crate::loader_plan::segment_check_with(seg, is_last, ends.offset, || Ok(ends.time))
        .map(|c| c.next_offset)
        .map_err(Failed::Segment)
}

fn warn_failed<F: BatchFormat>(seg: &crate::segment::LogSegment<F>, failed: &Failed) {
    match failed {
        Failed::Index(reason) => {
            tracing::warn!(segment = %seg.log_path().display(), %reason, "index failed the load check; rebuilding it from the log");
        }
        Failed::Segment(reason) => {
            tracing::warn!(segment = %seg.log_path().display(), %reason, "segment failed the load-time consistency check; recovering it from its log");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_file_names() {
        for n in [
            "00000000000000000000.log",
            "00000000000000000009.index",
            "00000000000000000009.timeindex.swap",
            "00000000000000000009.txnindex.deleted",
            "00000000000000000009.log.cleaned",
            "00000000000000000009.snapshot",
        ] {
            assert!(is_segment_file_name(n), "{n}");
        }
        for n in [
            "recovery-point",
            "leader-epoch-checkpoint",
            "partition.metadata",
            "00000000000000000009.log.bak",
            "00000000000000000009",
            ".kafka_cleanshutdown",
        ] {
            assert!(!is_segment_file_name(n), "{n}");
        }
    }
}
