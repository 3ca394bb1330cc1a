//! The loader's plan, read-only: the checks [`Log::open`](crate::Log::open) makes of a
//! partition directory before it trusts or changes anything, as functions that report
//! what they find and change nothing. `Log::open` runs them and acts on the answer;
//! an operator tool (`dump-log doctor`) runs them to predict what an open will do.
//!
//! * [`segment_check`] — the clean-open consistency check of one segment. Kafka's loader
//!   (`docs/kafka-behaviour.md#log-loading`, step 2) trusts a segment below the recovery
//!   point, or any segment after a clean shutdown, once its indexes pass `sanityCheck`;
//!   this library's loader also asks `segment_check`, and recovers a segment that fails
//!   it from its `.log` (so an untrimmed, zero-padded index, field cases
//!   `docs/kafka-behaviour.md#b1` and `docs/kafka-behaviour.md#b3`, or a marker trusted
//!   after a crash, `docs/kafka-behaviour.md#b12`, costs a recovery, never data). It
//!   answers [`SegmentCheck`] or the reason of the first inconsistency.
//! * [`plan_swaps`] — what the `.log.swap` files of a directory would replace once
//!   completed, or why the loader refuses them ([`SwapPlan`];
//!   `docs/kafka-behaviour.md#swap-refusal`: Kafka completes every swap, this library
//!   only those Kafka's cleaner or split can have written).
//! * [`unfinished_split_swaps`] — the `.swap` files that Kafka's rule keeps but that
//!   belong to a split whose `.cleaned` → `.swap` renames did not all happen: the loader
//!   deletes them and keeps the segment they would replace
//!   (`docs/kafka-behaviour.md#split-partial-swap`).
//!
//! Units: offsets are Kafka log offsets (`i64`); offset ranges are half-open
//! `(start, end)` pairs, `start` included, `end` excluded, sorted and coalesced; byte
//! counts are bytes. Nothing here writes, renames, deletes or maps a file:
//! [`segment_check`] makes positioned reads through the segment it is given (open it with
//! [`LogFileMode::ReadOnly`](crate::LogFileMode::ReadOnly) to keep the check read-only)
//! and opens its index files for reading; [`plan_swaps`] opens the `.log` files it is
//! given read-only, through the file-system seam it is given.

use std::path::Path;

use index_core::peek::{self, Ends};
use index_core::IndexEntry;
use index_offset::RawOffsetEntry;
use index_time::RawTimeEntry;

use crate::error::{Result, SegmentError};
use crate::format::BatchFormat;
use crate::names;
use crate::scan::{ScanStop, Scanner};
use crate::segment::LogSegment;

/// Bytes the clean-open check scans at most at the end of a segment that is not the last
/// one (from its last offset index entry on). A well-indexed segment needs at most
/// `index.interval.bytes` plus one append; beyond the budget the end of that segment is
/// trusted (Kafka trusts all of it). The last segment is always scanned to its end, as
/// `readNextOffset` does to find the log end offset.
pub const TAIL_SCAN_BUDGET: u64 = 8 << 20;

/// The largest `.log` of a segment (not the last one) whose index files the loader checks
/// at their first load instead of at the open (docs/kafka-behaviour.md#deferred-index-check):
/// its whole `.log` is checked at the open instead, from its first batch, which reads no
/// page more than the check with the offset index would, since the check's read-ahead
/// gives a `.log`'s first batch this many bytes.
pub const DEFER_INDEX_CHECK_MAX_LOG_BYTES: u64 = crate::segment::LOAD_CHECK_HEAD;

/// Segments ahead of the one it checks whose files the load-time check opens, and whose
/// pages it asks the kernel to read, with a cold page cache: the disk then serves up to
/// this many segments' reads at once instead of one read at a time
/// (docs/performance.md#vs-kafka-opens). It holds two descriptors for each segment whose
/// index files it reads (their `.index` and `.timeindex`), so an open needs up to this
/// many pairs above one descriptor a segment. Public for tools that model the loader's
/// reads, such as `cargo xtask vs-kafka`'s open ceilings.
pub const LOAD_CHECK_AHEAD: usize = 128;

/// Bytes at the start of a `.log` the load-time check asks the kernel to read ahead.
pub const LOAD_CHECK_HEAD: u64 = crate::segment::LOAD_CHECK_HEAD;

/// Bytes at the end of a `.log` the load-time check asks the kernel to read ahead.
pub const LOAD_CHECK_TAIL: u64 = crate::segment::LOAD_CHECK_TAIL;

/// An index's last entry is advised apart from its first only this far or more from the
/// start (the page size the read-ahead hints assume).
pub const ADVICE_PAGE: u64 = crate::segment::ADVICE_PAGE;

/// The entry count and first and last entries of an index file, read with two positioned
/// reads without mapping it: `None` if missing or empty. A trailing partial entry is
/// ignored (the complete entries are checked).
fn index_ends<E: IndexEntry>(path: &Path) -> std::result::Result<Option<Ends<E>>, String> {
    use crate::pio::FileExt;
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    let whole = len - len % E::SIZE as u64;
    peek::peek_ends::<E>(whole, |b, at| f.read_exact_at(b, at)).map_err(|e| e.to_string())
}

/// " after offset N" for the last offset of the batch before, "" when there is none.
fn after(prev_last: Option<i64>) -> String {
    prev_last.map_or_else(String::new, |p| format!(" after offset {p}"))
}

/// What [`segment_check`] learnt about a consistent segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SegmentCheck {
    /// The offset after its last batch (the segment's base offset when it holds none),
    /// when the tail was scanned to the end of the file; `None` when the segment is not
    /// the last one and its tail is longer than [`TAIL_SCAN_BUDGET`] (the rest is trusted).
    pub next_offset: Option<i64>,
}

/// The clean-open check of one segment, without mapping its indexes (a few positioned
/// reads and a scan of the batch headers after the last offset index entry):
///
/// * the first and last offset index entries point inside the `.log`, in order, at a
///   batch whose base offset is not above the entry's offset;
/// * the first batch header is readable, fits in the file, and its offsets are
///   representable relative to the segment base;
/// * from the last index entry (or the start; from the start too when the `.log` is at
///   most [`DEFER_INDEX_CHECK_MAX_LOG_BYTES`]) every batch header up to the end is
///   readable and fits, offsets increase from batch to batch, a batch starts at the last
///   index entry's position, and the scan ends exactly at the end of the file; the last
///   offset index entry and the last time index entry name offsets the segment holds
///   (`is_last`, or within [`TAIL_SCAN_BUDGET`]).
///
/// `is_last` says whether `seg` is the last segment of its log: its tail is then always
/// scanned to the end of the file, as `readNextOffset` does to find the log end offset.
///
/// # Errors
/// `Err(reason)` for the first inconsistency: one sentence naming the file and what
/// disagrees, including an I/O or format error met while reading (the loader then
/// recovers the segment from its `.log`).
pub fn segment_check<F: BatchFormat>(
    seg: &LogSegment<F>,
    is_last: bool,
) -> std::result::Result<SegmentCheck, String> {
    let oi = index_ends::<RawOffsetEntry>(&seg.offset_index_file())?;
    segment_check_with(seg, is_last, oi, || {
        index_ends::<RawTimeEntry>(&seg.time_index_file())
    })
}

/// [`segment_check`] with the offset index's ends already read (`oi`) and the time
/// index's read by `ti` when the check gets to it: the loader reads both once, for this
/// check and for [`LogSegment::quick_index_check`]'s
/// ([`crate::validate::check_loaded_segments`]).
pub(crate) fn segment_check_with<F: BatchFormat>(
    seg: &LogSegment<F>,
    is_last: bool,
    oi_ends: Option<Ends<RawOffsetEntry>>,
    ti_ends: impl FnOnce() -> std::result::Result<Option<Ends<RawTimeEntry>>, String>,
) -> std::result::Result<SegmentCheck, String> {
    let log = seg.log();
    let size = log.size_in_bytes();
    let base = seg.base_offset();
    let log_path = log.path();
    let shown = log_path.display();
    let io = |e: SegmentError| e.to_string();

    // The offset index's ends.
    let oi = seg.offset_index_file();
    let mut scan_from = 0u64;
    let mut last_indexed: Option<i64> = None;
    // Where the last offset index entry points: a batch must start there.
    let mut entry_at: Option<u64> = None;
    if let Some(Ends {
        entries: n,
        first,
        last,
    }) = oi_ends
    {
        // Positions as Java ints (Kafka's `OffsetIndex` reads them with `getInt`): one
        // above `i32::MAX` is negative.
        let (r0, p0) = (first.relative_offset.get(), first.position.get() as i32);
        let (r1, p1) = (last.relative_offset.get(), last.position.get() as i32);
        if r0 < 0 || r1 < 0 || p0 < 0 || p1 < 0 {
            return Err(format!("{}: negative entry", oi.display()));
        }
        let (p0, p1) = (p0 as u64, p1 as u64);
        if p1 >= size || p0 >= size {
            return Err(format!(
                "{}: {n} entries, the last at position {p1}, but {shown} holds {size} bytes",
                oi.display()
            ));
        }
        if n >= 2 && (p1 < p0 || r1 <= r0) {
            return Err(format!(
                "{}: first and last entries out of order",
                oi.display()
            ));
        }
        // A `.log` no longer than the check's read-ahead of its first batch is scanned
        // whole, as when its index check is deferred (`DEFER_INDEX_CHECK_MAX_LOG_BYTES`):
        // the same pages, and every batch's framing checked, with or without its index.
        if size > DEFER_INDEX_CHECK_MAX_LOG_BYTES {
            scan_from = p1;
        }
        entry_at = Some(p1);
        last_indexed = Some(base + r1 as i64);
    }

    // The first batch (read by the tail scan below when there is no index entry): its
    // header alone, where and why a whole-batch scan would stop (`Scanner::headers`).
    if size > 0 && scan_from > 0 {
        let mut sc = Scanner::<F>::headers(log, 0);
        match sc.next_header().map_err(io)? {
            Some((info, _)) => {
                if info.base_offset < base || !seg.can_convert_to_relative_offset(info.last_offset)
                {
                    return Err(format!(
                        "{shown}: the first batch holds offsets {}..={} outside the segment based at {base}",
                        info.base_offset, info.last_offset
                    ));
                }
            }
            None => {
                return Err(format!(
                    "{shown}: the first batch is unreadable ({}) in {size} bytes",
                    sc.stop()
                        .map_or_else(|| "no batch".to_string(), |s| s.to_string())
                ))
            }
        }
    }

    // The tail, from the last offset index entry.
    let mut sc = Scanner::<F>::new(log, scan_from);
    let mut prev_last: Option<i64> = None;
    let mut entry_seen = false;
    while let Some((info, _)) = sc.next_batch().map_err(io)? {
        if !entry_seen && Some(info.position) == entry_at {
            if let Some(x) = last_indexed {
                if info.base_offset > x {
                    return Err(format!(
                        "{}: the last entry names offset {x}, but the batch at its position {} starts at {}",
                        oi.display(),
                        info.position,
                        info.base_offset
                    ));
                }
            }
            entry_seen = true;
        }
        if info.last_offset < info.base_offset || prev_last.is_some_and(|p| info.base_offset <= p) {
            return Err(format!(
                "{shown}: offsets do not increase at position {} (batch {}..={}{})",
                info.position,
                info.base_offset,
                info.last_offset,
                after(prev_last)
            ));
        }
        if info.base_offset < base || !seg.can_convert_to_relative_offset(info.last_offset) {
            return Err(format!(
                "{shown}: the batch at position {} holds offsets {}..={} outside the segment based at {base}",
                info.position, info.base_offset, info.last_offset
            ));
        }
        prev_last = Some(info.last_offset);
        if !is_last && info.position + info.size_in_bytes as u64 - scan_from > TAIL_SCAN_BUDGET {
            return Ok(SegmentCheck { next_offset: None });
        }
    }
    match sc.stop() {
        Some(ScanStop::End) | None => {}
        Some(stop) => {
            return Err(format!(
                "{shown}: the batches do not end at the end of the file: {stop}"
            ))
        }
    }
    let next = match prev_last {
        Some(l) => l
            .checked_add(1)
            .ok_or_else(|| format!("{shown}: a batch ends at i64::MAX"))?,
        None => base,
    };
    if let (Some(p), false) = (entry_at, entry_seen) {
        return Err(format!(
            "{}: the last entry's position {p} is not the start of a batch in {shown}",
            oi.display()
        ));
    }
    if let Some(x) = last_indexed {
        if x >= next {
            return Err(format!(
                "{}: the last entry names offset {x}, beyond the segment's last offset {}",
                oi.display(),
                next - 1
            ));
        }
    }
    let ti = seg.time_index_file();
    if let Some(Ends { last, .. }) = ti_ends()? {
        let rel = last.relative_offset.get();
        let abs = base + i64::from(rel.max(0));
        // An all-zero time index entry with an empty segment is the untrimmed form Kafka
        // leaves for a new active segment; anything else must name a held offset.
        let untouched = size == 0 && bytemuck::bytes_of(&last).iter().all(|&b| b == 0);
        if !untouched && (rel < 0 || abs >= next.max(base + 1)) {
            return Err(format!(
                "{}: the last entry names offset {abs}, beyond the segment's last offset {}",
                ti.display(),
                next - 1
            ));
        }
    }
    Ok(SegmentCheck {
        next_offset: Some(next),
    })
}

/// Adds `[start, end)` to sorted, coalesced intervals (`start` not below the last start).
fn push_interval(v: &mut Vec<(i64, i64)>, start: i64, end: i64) {
    match v.last_mut() {
        Some(last) if start <= last.1 => last.1 = last.1.max(end),
        _ => v.push((start, end)),
    }
}

/// `a` minus `b`, both sorted and coalesced.
fn subtract(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(mut s, e) in a {
        while j < b.len() && b[j].1 <= s {
            j += 1;
        }
        let mut k = j;
        while s < e {
            match b.get(k) {
                Some(&(bs, be)) if bs < e => {
                    if bs > s {
                        out.push((s, bs));
                    }
                    s = s.max(be);
                    k += 1;
                }
                _ => {
                    out.push((s, e));
                    break;
                }
            }
        }
    }
    out
}

/// The offsets the batch headers of a `.log` span, coalesced (`[base, last + 1)` per
/// batch), read without checksum checks up to the first unreadable batch, and the
/// offset after its last readable batch (`base` if none).
fn header_extent<F: BatchFormat>(
    path: &Path,
    base: i64,
    fs: &crate::fs::FsRef,
) -> Result<(Vec<(i64, i64)>, i64)> {
    let file = crate::log_file::LogFile::open_with_fs(
        path,
        crate::log_file::LogFileMode::ReadOnly,
        fs.clone(),
    )?;
    let mut intervals = Vec::new();
    let mut next = base;
    let mut sc = Scanner::<F>::new(&file, 0);
    while let Some((info, _)) = sc.next_batch()? {
        if info.last_offset < info.base_offset || info.last_offset == i64::MAX {
            break;
        }
        push_interval(&mut intervals, info.base_offset, info.last_offset + 1);
        next = next.max(info.last_offset + 1);
    }
    file.close()?;
    Ok((intervals, next))
}

/// The base offsets of the `.swap` files (any kind) that the loader deletes as part of
/// an unfinished split although Kafka's rule (delete a `.swap` at or above the lowest
/// `.cleaned`) keeps them (`docs/kafka-behaviour.md#split-partial-swap`).
///
/// A split renames its pieces `.cleaned` → `.swap`, makes those renames durable with a
/// directory fsync, and only then renames the segment it splits `.deleted`. A `.cleaned`
/// file left beside a kept `.swap` inside the offsets of one live segment therefore means
/// that the renames did not all reach the disk (a file system may keep any subset of
/// unsynced directory operations, so the lowest piece may be `.swap` and a higher one
/// still `.cleaned`), and that the segment is still whole: the replacement is rolled
/// back. For each live segment based at `s`, up to the next live segment's base `n`
/// (`i64::MAX` for the last one): when some `.cleaned` file is based in `[s, n)`, no
/// `.log.deleted` file is (a replacement that began deleting is never rolled back) and
/// some kept `.swap` is based in `[s, n)`, every kept `.swap` based in `[s, n)` is
/// returned. A clean's `.cleaned` file is based at the first segment of its group, a live
/// segment, and every kept `.swap` lies below it, so none shares its range; and a
/// completed replacement (every `.cleaned` renamed, originals being deleted) leaves no
/// `.cleaned` file: both keep Kafka's behaviour.
///
/// `live`: the base offsets of the `.log` files; `deleted`: those of the `.log.deleted`
/// files; `swaps`: those of the `.swap` files Kafka's rule keeps (below the lowest
/// `.cleaned`); `cleaned`: those of the `.cleaned` files. Any order, duplicates allowed.
/// Returns sorted, distinct base offsets, a subset of `swaps`; empty when `cleaned` is.
pub fn unfinished_split_swaps(
    live: &[i64],
    deleted: &[i64],
    swaps: &[i64],
    cleaned: &[i64],
) -> Vec<i64> {
    let mut live = live.to_vec();
    live.sort_unstable();
    live.dedup();
    let any_in = |v: &[i64], lo: i64, hi: i64| v.iter().any(|&b| b >= lo && b < hi);
    let mut out = Vec::new();
    for (i, &s) in live.iter().enumerate() {
        let n = live.get(i + 1).copied().unwrap_or(i64::MAX);
        if any_in(cleaned, s, n) && !any_in(deleted, s, n) {
            out.extend(swaps.iter().copied().filter(|&b| b >= s && b < n));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// What the `.swap` files of a directory replace once they are accepted
/// ([`plan_swaps`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SwapPlan {
    /// Kafka's `minSwapFileOffset`: the lowest base offset of a `.log.swap`.
    pub min_base: i64,
    /// Kafka's `maxSwapFileOffset`: the largest next offset of a `.log.swap`.
    pub max_next: i64,
    /// The base offsets of the `.log.swap` files.
    pub swap_bases: Vec<i64>,
    /// Base offsets of the live segments (`.log` files) the swaps replace: those with a
    /// base in `[min_base, max_next)` (Kafka's rule) or at the base of a swap (its rename
    /// overwrites them).
    pub replaced: Vec<i64>,
    /// Base offsets of the segments the interrupted replacement had already renamed
    /// `.deleted`, by the same rule: replaced too, their files are deleted by the loader.
    pub replaced_deleted: Vec<i64>,
    /// Offsets the replaced segments' batches (live and `.deleted`) spanned that no batch
    /// of the swaps spans, `[start, end)`, sorted.
    pub removed: Vec<(i64, i64)>,
}

/// Checks the `.log.swap` files `swaps` (base offset, path) before the loader completes
/// them, against the live segments `live` and the segments already renamed `.deleted`
/// (`deleted`, which a crash in the middle of a replacement leaves), by what Kafka's
/// cleaner and the loader's split can write (`docs/kafka-behaviour.md#swap-refusal`):
///
/// * each swap holds only whole, valid batches (the format's checksum and framing), with
///   increasing offsets representable relative to its base; swaps do not overlap;
/// * their batches lie inside the offsets the segments they replace spanned (when any of
///   those is left, live or `.deleted`);
/// * no live segment they do not replace holds an offset at or above the lowest swap's
///   base (a cleaned segment starts at the base offset of the first segment it replaces,
///   so the segment below ends there);
/// * unless a live segment they do not replace is left above them (the active segment,
///   which the cleaner never cleans), they are a split's pieces: none is empty and they
///   hold every offset the replaced segments held, so the log end offset never moves.
///
/// The check reads every swap in full, and the batch headers of the replaced segments
/// and of the segment below (a swap is rare: a crash during a clean or a split).
///
/// `swaps`, `live` and `deleted` are `(base offset, path of the .log file)` pairs, in any
/// order: the `.log.swap` files, the live `.log` files and the `.log.deleted` files of
/// `dir`; `dir` names the swap files in the refusal's advice; `fs` opens every file.
///
/// # Errors
/// [`SegmentError::SwapRefused`] naming the first swap that fails, why, and what to do;
/// [`SegmentError::Io`] and the other errors of reading a `.log` (a file that cannot be
/// opened or read).
pub fn plan_swaps<F: BatchFormat>(
    fs: &crate::fs::FsRef,
    dir: &Path,
    swaps: &[(i64, std::path::PathBuf)],
    live: &[(i64, std::path::PathBuf)],
    deleted: &[(i64, std::path::PathBuf)],
) -> Result<SwapPlan> {
    let mut swaps = swaps.to_vec();
    swaps.sort();
    let swap_bases: Vec<i64> = swaps.iter().map(|s| s.0).collect();
    let in_range = |b: i64, lo: i64, hi: i64| (b >= lo && b < hi) || swap_bases.contains(&b);
    let bases_in = |files: &[(i64, std::path::PathBuf)], lo: i64, hi: i64| -> Vec<i64> {
        let mut v: Vec<i64> = files
            .iter()
            .map(|l| l.0)
            .filter(|&b| in_range(b, lo, hi))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let refuse = |path: &Path, reason: String, replaced: &[i64], replaced_deleted: &[i64]| {
        let shown: Vec<String> = swap_bases
            .iter()
            .map(|&b| {
                names::log_file(dir, b, names::SWAP_FILE_SUFFIX)
                    .display()
                    .to_string()
            })
            .collect();
        let mut action = if replaced.is_empty() && replaced_deleted.is_empty() {
            format!(
                "no segment it would replace is left, so its offsets exist nowhere else: move the .swap files ({}) and their index .swap files out of the directory and inspect them with dump-log before deciding",
                shown.join(", ")
            )
        } else if replaced.is_empty() {
            format!(
                "move the .swap files ({}) and their index .swap files out of the directory and inspect them with dump-log before deciding",
                shown.join(", ")
            )
        } else {
            format!(
                "the segments it would replace (base offsets {replaced:?}) are intact: remove the .swap files ({}) and the index .swap files of the same base offsets to keep them",
                shown.join(", ")
            )
        };
        if !replaced_deleted.is_empty() {
            action.push_str(&format!(
                "; the segments based at {replaced_deleted:?} were already renamed .deleted by the interrupted replacement: to keep them, drop the .deleted suffix of their files before the next open (it deletes .deleted files)"
            ));
        }
        SegmentError::SwapRefused {
            path: path.to_path_buf(),
            reason,
            action,
        }
    };

    // Each swap in full: whole valid batches, increasing offsets that fit its base.
    let mut swap_cover: Vec<(i64, i64)> = Vec::new();
    // (base, first offset held, next offset, path)
    let mut checked: Vec<(i64, Option<i64>, i64, std::path::PathBuf)> = Vec::new();
    let mut errors: Vec<(std::path::PathBuf, String)> = Vec::new();
    for (base, path) in &swaps {
        let file = crate::log_file::LogFile::open_with_fs(
            path,
            crate::log_file::LogFileMode::ReadOnly,
            fs.clone(),
        )?;
        let mut sc = Scanner::<F>::new(&file, 0);
        let mut prev_last: Option<i64> = None;
        let mut first: Option<i64> = None;
        let mut bad: Option<String> = None;
        while let Some((info, bytes)) = sc.next_batch()? {
            if let Err(e) = F::validate(bytes, info.position) {
                bad = Some(format!(
                    "the batch at position {} fails validation: {e}",
                    info.position
                ));
                break;
            }
            if info.last_offset < info.base_offset
                || info.base_offset < *base
                || info.last_offset == i64::MAX
                || info.last_offset - *base > i64::from(i32::MAX)
                || prev_last.is_some_and(|p| info.base_offset <= p)
            {
                bad = Some(format!(
                    "the batch at position {} holds offsets {}..={}{}, which do not increase or do not fit the base offset {base}",
                    info.position,
                    info.base_offset,
                    info.last_offset,
                    after(prev_last)
                ));
                break;
            }
            first.get_or_insert(info.base_offset);
            prev_last = Some(info.last_offset);
            push_interval(&mut swap_cover, info.base_offset, info.last_offset + 1);
        }
        if bad.is_none() {
            match sc.stop() {
                Some(ScanStop::End) | None => {}
                Some(stop) => {
                    bad = Some(format!("its bytes do not end with a whole batch: {stop}"))
                }
            }
        }
        file.close()?;
        if let Some(reason) = bad {
            errors.push((path.clone(), reason));
            continue;
        }
        let next = prev_last.map_or(*base, |l| l + 1);
        if let Some((pb, _, pn, _)) = checked.last() {
            if *pn > *base {
                errors.push((
                    path.clone(),
                    format!(
                        "it starts at offset {base}, below the end {pn} of the swap based at {pb}"
                    ),
                ));
                continue;
            }
        }
        checked.push((*base, first, next, path.clone()));
    }
    let min_base = swaps.first().map_or(i64::MAX, |s| s.0);
    let max_next = checked.iter().map(|c| c.2).max().unwrap_or(i64::MIN).max(
        // A refused swap still names its base: the range check below uses what was read.
        min_base,
    );
    let replaced = bases_in(live, min_base, max_next);
    let replaced_deleted = bases_in(deleted, min_base, max_next);
    if let Some((path, reason)) = errors.into_iter().next() {
        return Err(refuse(&path, reason, &replaced, &replaced_deleted));
    }
    let refuse = |path: &Path, reason: String| refuse(path, reason, &replaced, &replaced_deleted);
    let first_swap = checked
        .first()
        .map_or_else(|| dir.to_path_buf(), |c| c.3.clone());

    // The offsets the replaced segments spanned (live, and `.deleted` ones a crash left).
    let mut replaced_cover: Vec<(i64, i64)> = Vec::new();
    let mut hull: Option<(i64, i64)> = None;
    for (b, p) in live.iter().chain(deleted.iter()) {
        if !in_range(*b, min_base, max_next) {
            continue;
        }
        let (cover, next) = header_extent::<F>(p, *b, fs)?;
        replaced_cover.extend(cover);
        hull = Some(hull.map_or((*b, next), |(lo, hi)| (lo.min(*b), hi.max(next))));
    }
    replaced_cover.sort_unstable();
    let mut merged = Vec::new();
    for (s, e) in replaced_cover {
        push_interval(&mut merged, s, e);
    }
    if let Some((lo, hi)) = hull {
        // Segments a crash deleted after their `.deleted` rename leave no trace: the
        // first segment a clean replaces starts at the swap's base, and the last one
        // ends at or below the next segment the swaps do not replace. Their offsets are
        // unknown, not absent (`docs/kafka-behaviour.md#swap-refusal`).
        let lo = lo.min(min_base);
        let hi = live
            .iter()
            .filter(|l| l.0 >= min_base && !replaced.contains(&l.0))
            .map(|l| l.0)
            .min()
            .map_or(hi, |kept| kept.max(hi));
        for (_, first, next, path) in &checked {
            let Some(first) = *first else { continue };
            if first < lo || *next > hi {
                return Err(refuse(
                    path,
                    format!(
                        "its batches hold offsets {first}..{next}, outside the offsets {lo}..{hi} of the segments it replaces"
                    ),
                ));
            }
        }
    }
    // The segment below the swaps, which they do not replace, must end at or below the
    // lowest swap's base: a cleaned segment starts at the base offset of the first segment
    // it replaces, a split's first piece at the first batch of the segment it splits.
    if let Some((b, p)) = live
        .iter()
        .filter(|l| l.0 < min_base && !replaced.contains(&l.0))
        .max_by_key(|l| l.0)
    {
        let (_, next) = header_extent::<F>(p, *b, fs)?;
        if next > min_base {
            return Err(refuse(
                &first_swap,
                format!(
                    "it starts at offset {min_base}, but {} (which it does not replace) holds offsets up to {}",
                    p.display(),
                    next - 1
                ),
            ));
        }
    }
    let removed = subtract(&merged, &swap_cover);
    // Nothing the swaps do not replace above them: they replace the log's last segment,
    // which the cleaner never cleans (it stops below the active segment), so only a split
    // wrote them, and a split keeps every batch in pieces that each hold one.
    let kept_above = live
        .iter()
        .any(|l| l.0 >= min_base && !replaced.contains(&l.0));
    if !kept_above {
        if let Some((_, _, _, path)) = checked.iter().find(|c| c.1.is_none()) {
            return Err(refuse(
                path,
                format!(
                    "it holds no batch and no segment above it is kept, so it would become the last segment of the log (Kafka's cleaner writes only below the active segment, and a split never writes an empty piece){}",
                    if removed.is_empty() {
                        String::new()
                    } else {
                        format!(", dropping offsets {}", show_ranges(&removed))
                    }
                ),
            ));
        }
        if !removed.is_empty() {
            return Err(refuse(
                &first_swap,
                format!(
                    "no segment above it is kept, so it would replace the last segment of the log and drop offsets {} (Kafka's cleaner never cleans the active segment, and a split keeps every offset)",
                    show_ranges(&removed)
                ),
            ));
        }
    }
    Ok(SwapPlan {
        min_base,
        max_next: checked.iter().map(|c| c.2).max().unwrap_or(i64::MIN),
        swap_bases,
        replaced,
        replaced_deleted,
        removed,
    })
}

/// `a..b, c..d` for at most eight ranges, then how many more.
fn show_ranges(v: &[(i64, i64)]) -> String {
    let mut s: Vec<String> = v.iter().take(8).map(|(a, b)| format!("{a}..{b}")).collect();
    if v.len() > 8 {
        s.push(format!("and {} more ranges", v.len() - 8));
    }
    s.join(", ")
}

#[cfg(test)]
mod tests {
    use super::unfinished_split_swaps;

    const HIGH: i64 = 3_000_000_000;

    #[test]
    fn a_swap_piece_beside_a_cleaned_piece_of_the_same_segment_is_rolled_back() {
        // The split segment 0 (next live segment 9e9): piece 0 `.swap`, piece HIGH and
        // 2·HIGH `.cleaned`.
        let got = unfinished_split_swaps(&[0, 9 * HIGH], &[], &[0], &[HIGH, 2 * HIGH]);
        assert_eq!(got, vec![0]);
        // Two swap pieces below one cleaned piece: both go.
        let got = unfinished_split_swaps(&[0], &[], &[0, HIGH], &[2 * HIGH, 2 * HIGH]);
        assert_eq!(got, vec![0, HIGH]);
    }

    #[test]
    fn a_completed_replacement_or_a_cleaners_group_is_left_to_kafkas_rule() {
        // No `.cleaned` file: every piece was renamed, the replacement completes.
        assert!(unfinished_split_swaps(&[0], &[], &[0, HIGH], &[]).is_empty());
        // The replacement began deleting (a `.log.deleted` in the range): never undone.
        assert!(unfinished_split_swaps(&[0], &[0], &[0], &[HIGH]).is_empty());
        // The split segment is gone: nothing live to keep.
        assert!(unfinished_split_swaps(&[], &[], &[0], &[HIGH]).is_empty());
        // A clean's `.cleaned` group starts at a live segment (500), above the swap of an
        // earlier group (100, replacing 100..500): not inside segment 100's range.
        assert!(unfinished_split_swaps(&[100, 500, 900], &[], &[100], &[500]).is_empty());
    }
}
