//! One partition directory: its files, the loader's checks of each segment, and the
//! prediction of what the loader will rescan.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Context, DataLoss, Finding, FindingKind, PartitionReport, Severity, Throughput};
use crate::config::LogConfig;
use crate::format::{BatchFormat, KafkaBatchFormat};
use crate::log_file::LogFileMode;
use crate::names::{self, CLEANED_FILE_SUFFIX, DELETED_FILE_SUFFIX, SWAP_FILE_SUFFIX};
use crate::scan::{ScanStop, Scanner};
use crate::segment::{LogSegment, SegmentOptions};

/// The largest index file read whole to count its zero slots (a larger one is only
/// checked by the loader's checks).
const MAX_INDEX_READ: u64 = 64 << 20;

/// How a torn-tail finding ends when recovery (Kafka's and this library's) cuts the bytes.
const TRUNCATES: &str = ": recovery truncates them";

/// How the finding of a segment that overlaps the next one ends, unless the doctor
/// predicts the loader's cut (its finding then says the cut instead).
const OVERLAP_RECOVERS: &str = ": the loader recovers it";

/// Bytes read at a time when checking that a `.log` tail is all zeros.
const ZERO_CHUNK: u64 = 1 << 20;

/// How an index finding ends when the open rebuilds the index.
const INDEX_AT_OPEN: &str = "this library's loader rebuilds it";

/// [`INDEX_AT_OPEN`] for a segment whose index check the loader defers
/// (docs/kafka-behaviour.md#deferred-index-check).
const INDEX_AT_FIRST_USE: &str =
    "this library rebuilds it at the segment's first index lookup (deferred index check), not at the open";

/// What the open does with a segment whose index files fail the loader's check.
const SEGMENT_AT_OPEN: &str = "this library's loader rebuilds the segment from its .log";

/// [`SEGMENT_AT_OPEN`] for a segment whose index check the loader defers: the open checks
/// its `.log` alone (which passed), and the indexes are rebuilt when first used.
const SEGMENT_AT_FIRST_USE: &str = "this library rebuilds the segment's indexes from its .log at its first index lookup (deferred index check: the open checks only the .log of a small segment that is not the last one), not at the open";

fn finding(severity: Severity, kind: FindingKind, file: Option<&str>, detail: String) -> Finding {
    Finding {
        severity,
        kind,
        file: file.map(str::to_string),
        detail,
    }
}

/// What a full scan of a `.log` (as recovery makes it: framing, offsets, checksums) found.
struct Scan {
    /// Bytes of whole valid batches from the start.
    valid_end: u64,
    /// The offset after the last valid batch (`None`: no batch).
    next_offset: Option<i64>,
    /// Why the scan stopped before the end, if it did.
    stop: Option<String>,
    /// The first batch holding an offset not representable relative to the segment's
    /// base (`(position, last offset)`): recovery splits the segment there.
    overflow: Option<(u64, i64)>,
    /// With an overflow, the base offsets of the pieces the split writes (each starts at
    /// its first batch and holds the batches representable relative to it); else empty.
    split_bases: Vec<i64>,
    /// With an overflow, the pieces the split writes, in file order, as their recovery
    /// leaves them; `None` if the split fails (a piece could copy nothing).
    pieces: Option<Vec<Piece>>,
    /// The position of the first valid batch holding an offset at or above the base of
    /// the next non-empty segment: where the loader cuts a recovered segment that
    /// overlaps it (`resolve_overlap`: `truncate_to` that base), and that base.
    cut_at: Option<(u64, i64)>,
}

/// One piece of a split segment (the loader's `split_overflowed_segment`) and what its
/// recovery leaves of it.
#[derive(Clone, Copy, Debug)]
struct Piece {
    /// Its base offset: the base offset of its first batch.
    base: i64,
    /// Its size, bytes (the last piece also holds the bytes after the last whole batch).
    size: u64,
    /// Bytes of it that its recovery keeps (whole valid batches from its start).
    valid: u64,
    /// The offset after its last valid batch (its base if none is).
    next_offset: i64,
}

/// Whether recovery keeps the batch `info` of a segment based at `base`, after a batch
/// whose last offset is `prev_last` (the loader's `recovery_verdict`, less control
/// records and the overflow check): `Err` with the reason it stops there.
fn recovery_keeps(
    base: i64,
    info: &crate::format::BatchInfo,
    bytes: &[u8],
    prev_last: Option<i64>,
) -> Result<(), String> {
    if let Err(e) = KafkaBatchFormat::validate(bytes, info.position) {
        return Err(format!("invalid batch at position {}: {e}", info.position));
    }
    if info.base_offset < base
        || info.last_offset < info.base_offset
        || prev_last.is_some_and(|p| info.base_offset <= p)
        || info.last_offset == i64::MAX
    {
        return Err(format!(
            "offsets go backwards at position {} (batch {}..={})",
            info.position, info.base_offset, info.last_offset
        ));
    }
    Ok(())
}

/// The pieces the loader's split of `seg` writes (each from its first batch on, holding
/// the framed batches whose last offset is representable relative to its base; the bytes
/// after the last framed batch go to the last piece), each with what its recovery keeps.
/// `None` if the split fails: a piece whose first batch does not fit its own base.
fn split_pieces(seg: &LogSegment<KafkaBatchFormat>) -> Result<Option<Vec<Piece>>, String> {
    let log = seg.log();
    let size = log.size_in_bytes();
    let mut pieces: Vec<Piece> = Vec::new();
    let mut position = 0u64;
    let mut sc = Scanner::<KafkaBatchFormat>::new(log, 0);
    let mut pending = sc.next_batch().map_err(|e| e.to_string())?.map(|(i, b)| {
        let ok = |base| recovery_keeps(base, &i, b, None).is_ok();
        (i, ok(i.base_offset))
    });
    while let Some((first, first_ok)) = pending.take() {
        let base = first.base_offset;
        if index_core::codec::relative_offset(base, first.last_offset).is_none() {
            return Ok(None);
        }
        let mut piece = Piece {
            base,
            size: 0,
            valid: 0,
            next_offset: base,
        };
        let mut keeping = first_ok;
        let mut prev_last = None;
        let mut info = first;
        loop {
            if keeping {
                piece.valid += info.size_in_bytes as u64;
                piece.next_offset = info.last_offset + 1;
                prev_last = Some(info.last_offset);
            }
            piece.size += info.size_in_bytes as u64;
            position += info.size_in_bytes as u64;
            let Some((next, bytes)) = sc.next_batch().map_err(|e| e.to_string())? else {
                break;
            };
            if index_core::codec::relative_offset(base, next.last_offset).is_none() {
                let ok = recovery_keeps(next.base_offset, &next, bytes, None).is_ok();
                pending = Some((next, ok));
                break;
            }
            keeping = keeping && recovery_keeps(base, &next, bytes, prev_last).is_ok();
            info = next;
        }
        pieces.push(piece);
    }
    if position < size {
        match pieces.last_mut() {
            Some(last) => last.size += size - position,
            None => return Ok(None),
        }
    }
    Ok(Some(pieces))
}

/// Scans `seg`'s `.log` from the start with recovery's rules; `cut_base` is the base
/// offset of the next non-empty segment ([`Scan::cut_at`]).
fn scan_log(seg: &LogSegment<KafkaBatchFormat>, cut_base: Option<i64>) -> Result<Scan, String> {
    let mut sc = Scanner::<KafkaBatchFormat>::new(seg.log(), 0);
    let mut valid_end = 0u64;
    let mut cut_at = None;
    let mut prev_last: Option<i64> = None;
    let mut stop = None;
    let mut overflow = None;
    loop {
        let next = sc.next_batch().map_err(|e| e.to_string())?;
        let Some((info, bytes)) = next else {
            match sc.stop() {
                Some(ScanStop::End) | None => {}
                Some(s) => stop = Some(s.to_string()),
            }
            break;
        };
        if let Err(e) = KafkaBatchFormat::validate(bytes, info.position) {
            stop = Some(format!("invalid batch at position {}: {e}", info.position));
            break;
        }
        if let Err(why) = recovery_keeps(seg.base_offset(), &info, bytes, prev_last) {
            stop = Some(why);
            break;
        }
        if !seg.can_convert_to_relative_offset(info.last_offset) {
            // Recovery stops here and splits the whole segment: the batches after this
            // one are judged in their pieces, each by its own base and batches.
            overflow = Some((info.position, info.last_offset));
            break;
        }
        if let Some(b) = cut_base.filter(|&b| cut_at.is_none() && info.last_offset >= b) {
            cut_at = Some((info.position, b));
        }
        prev_last = Some(info.last_offset);
        valid_end = info.position + info.size_in_bytes as u64;
    }
    if overflow.is_none() {
        return Ok(Scan {
            valid_end,
            cut_at,
            next_offset: prev_last.map(|l| l.saturating_add(1)),
            stop,
            split_bases: Vec::new(),
            pieces: None,
            overflow,
        });
    }
    // What the split's pieces keep after their recovery: the segment's bytes, less each
    // piece's invalid tail. Its end is the end of the piece with the highest base.
    let pieces = split_pieces(seg)?;
    let size = seg.log().size_in_bytes();
    let mut scan = Scan {
        valid_end: size,
        cut_at: None,
        next_offset: prev_last.map(|l| l.saturating_add(1)),
        stop: None,
        split_bases: Vec::new(),
        pieces: None,
        overflow,
    };
    if let Some(pieces) = pieces {
        scan.split_bases = pieces.iter().map(|p| p.base).collect();
        scan.next_offset = pieces.iter().max_by_key(|p| p.base).map(|p| p.next_offset);
        let cut: u64 = pieces.iter().map(|p| p.size - p.valid).sum();
        if let Some(p) = pieces.iter().find(|p| p.valid < p.size) {
            scan.valid_end = size - cut;
            scan.stop = Some(format!(
                "the split's piece based at {} keeps {} of its {} bytes",
                p.base, p.valid, p.size
            ));
        }
        scan.pieces = Some(pieces);
    }
    Ok(scan)
}

/// Whether bytes `[from, to)` of the `.log` are all zero.
fn all_zero(seg: &LogSegment<KafkaBatchFormat>, from: u64, to: u64) -> Result<bool, String> {
    let mut at = from;
    while at < to {
        let n = (to - at).min(ZERO_CHUNK);
        let bytes = seg.log().read(at, n).map_err(|e| e.to_string())?;
        if bytes.iter().any(|&b| b != 0) {
            return Ok(false);
        }
        if bytes.is_empty() {
            break;
        }
        at += bytes.len() as u64;
    }
    Ok(true)
}

/// Slots of `entry` bytes in `path`, and how many of them at the end are all zero.
/// `None` if the file is missing, too large, or not whole slots.
fn zero_slots(path: &Path, entry: usize) -> Option<(usize, usize)> {
    let len = std::fs::metadata(path).ok()?.len();
    if len == 0 || len > MAX_INDEX_READ {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes.len() % entry != 0 {
        return None;
    }
    let slots: Vec<&[u8]> = bytes.chunks_exact(entry).collect();
    let zero = slots
        .iter()
        .rev()
        .take_while(|s| s.iter().all(|&b| b == 0))
        .count();
    Some((slots.len(), zero))
}

/// One segment as found.
struct Seg {
    base: i64,
    file: String,
    size: u64,
    /// The offset after its last batch, when known.
    next_offset: Option<i64>,
    /// Why the loader's checks fail (it is then rebuilt from its `.log`).
    check_failed: Option<String>,
    /// Why the check of its index files, which the loader defers to their first use
    /// (docs/kafka-behaviour.md#deferred-index-check), fails there: the indexes are then
    /// rebuilt at that use, not at the open (unless the open recovers the segment for
    /// another reason). Its findings say [`INDEX_AT_FIRST_USE`] / [`SEGMENT_AT_FIRST_USE`].
    deferred_rebuild: Option<String>,
    /// The segment's own findings, with the severity for a segment the loader trusts;
    /// lowered to `Info` when the segment is rescanned anyway.
    findings: Vec<Finding>,
    /// What a full scan found (only made for a segment that fails the checks).
    scan: Option<Scan>,
}

/// Opens the segment at `base` read-only; `suffix` (`""` or [`SWAP_FILE_SUFFIX`]) names
/// its files: a swap's files are what the segment will be once the loader completes it.
///
/// An index of a live segment (`suffix` `""`) that also exists as a `.swap` file (a crash
/// between a swap's renames) is read from the `.swap`: the loader renames every such file
/// over the live one before it loads the segments.
///
/// `index_swaps`: whether the loader renames this base's index `.swap` files (it deletes
/// those at or above the lowest `.cleaned` file, and those of an unfinished split, instead).
fn open_segment(
    dir: &Path,
    base: i64,
    suffix: &str,
    index_swaps: bool,
) -> Result<LogSegment<KafkaBatchFormat>, String> {
    let index_suffix = |kind: names::FileKind| {
        let swap = names::segment_file(dir, base, kind, SWAP_FILE_SUFFIX);
        if suffix.is_empty() && index_swaps && swap.exists() {
            SWAP_FILE_SUFFIX
        } else {
            suffix
        }
    };
    LogSegment::open(
        dir,
        base,
        &LogConfig::default(),
        SegmentOptions::existing()
            .mode(LogFileMode::ReadOnly)
            .suffix(suffix)
            .index_suffixes(
                index_suffix(names::FileKind::OffsetIndex),
                index_suffix(names::FileKind::TimeIndex),
                index_suffix(names::FileKind::TxnIndex),
            ),
    )
    .map_err(|e| e.to_string())
}

/// `next`: the base offsets of the next segment and of the next non-empty one.
fn check_segment(
    dir: &Path,
    (base, path, suffix): (i64, &Path, &str),
    (is_last, index_swaps): (bool, bool),
    (next_base, cut_base): (Option<i64>, Option<i64>),
    deep: bool,
) -> Seg {
    let file = names::file_name(path).to_string();
    let mut s = Seg {
        base,
        file: file.clone(),
        size: std::fs::metadata(path).map_or(0, |m| m.len()),
        next_offset: None,
        check_failed: None,
        deferred_rebuild: None,
        findings: Vec::new(),
        scan: None,
    };
    let seg = match open_segment(dir, base, suffix, index_swaps) {
        Ok(seg) => seg,
        Err(e) => {
            s.findings.push(finding(
                Severity::Error,
                FindingKind::Unreadable,
                Some(&file),
                format!("cannot open the segment: {e}; the broker fails to load the partition"),
            ));
            return s;
        }
    };
    let oi = seg.offset_index_file();
    let ti = seg.time_index_file();
    let oi_name = names::file_name(&oi).to_string();
    let ti_name = names::file_name(&ti).to_string();
    if s.size > 0 && !oi.exists() {
        s.check_failed = Some(format!("{oi_name} is missing"));
        s.findings.push(finding(
            Severity::Warning,
            FindingKind::MissingIndex,
            Some(&oi_name),
            "missing: the broker rebuilds the segment's indexes from its .log".into(),
        ));
    }
    if s.size > 0 && !ti.exists() {
        s.check_failed
            .get_or_insert_with(|| format!("{ti_name} is missing"));
        s.findings.push(finding(
            Severity::Warning,
            FindingKind::MissingIndex,
            Some(&ti_name),
            "missing: Kafka 4.4 creates it empty (the segment's timestamps are then unknown to offsetsForTimes and retention); this library's loader rebuilds it from the .log".into(),
        ));
    }
    // An index `.swap` beside a live `.log` (no `.log.swap` of this base): the loader
    // renames it into place and rebuilds the segment's indexes, since a crash may have
    // kept that rename and lost the cleaned `.log`'s.
    if suffix.is_empty()
        && index_swaps
        && s.check_failed.is_none()
        && [
            names::FileKind::OffsetIndex,
            names::FileKind::TimeIndex,
            names::FileKind::TxnIndex,
        ]
        .iter()
        .any(|k| names::segment_file(dir, base, *k, SWAP_FILE_SUFFIX).exists())
    {
        s.check_failed = Some("an index .swap without its .log.swap".into());
        s.findings.push(finding(
            Severity::Warning,
            FindingKind::IndexDisagrees,
            Some(&file),
            "an index .swap without its .log.swap (a crash between a clean's renames): the loader renames it into place and rebuilds the segment's indexes from its .log (Kafka 4.4 trusts the renamed index, which may be the cleaned segment's)".into(),
        ));
    }
    // A `.txnindex` that fails its sanity check (an entry ending below the segment's base,
    // a partial trailing entry, an unknown entry version): this library's loader rebuilds
    // the segment from its `.log` at the open, before any other check, as Kafka's does
    // when its sanityCheck fails (docs/kafka-behaviour.md#log-loading step 2).
    let txn = names::segment_file(dir, base, names::FileKind::TxnIndex, suffix);
    let txn = if suffix.is_empty() && index_swaps {
        let swap = names::segment_file(dir, base, names::FileKind::TxnIndex, SWAP_FILE_SUFFIX);
        if swap.exists() {
            swap
        } else {
            txn
        }
    } else {
        txn
    };
    // Checked only beside an `.index` (without one the loader's check stops there: an
    // empty segment is then kept as it is, a non-empty one recovered).
    if s.check_failed.is_none() && txn.exists() && oi.exists() {
        let txn_name = names::file_name(&txn).to_string();
        match seg.sanity_check_listed(false, true, true) {
            Ok(()) => {}
            Err(e) if e.is_corruption() => {
                s.check_failed = Some(format!("{txn_name} fails the sanity check"));
                s.findings.push(finding(
                    Severity::Warning,
                    FindingKind::IndexDisagrees,
                    Some(&txn_name),
                    format!("fails the sanity check ({e}): this library's loader rebuilds the segment from its .log at the open (Kafka 4.4 does when its TransactionIndex.sanityCheck fails)"),
                ));
            }
            Err(e) => s.findings.push(finding(
                Severity::Error,
                FindingKind::Unreadable,
                Some(&txn_name),
                format!("cannot be checked: {e}; the broker fails to load the partition"),
            )),
        }
    }
    let index_missing = s.check_failed.is_some();
    // A small segment that is not the last one: the loader checks its `.log` alone at the
    // open and its index files at their first use (crate::validate's rule).
    let defers =
        !index_missing && !is_last && s.size <= crate::loader_plan::DEFER_INDEX_CHECK_MAX_LOG_BYTES;
    if defers {
        match crate::loader_plan::segment_check_with(&seg, is_last, None, || Ok(None)) {
            Ok(c) => {
                s.next_offset = c.next_offset;
                if let Err(reason) = crate::validate::check_segment_indexes(&seg) {
                    s.deferred_rebuild = Some(reason);
                }
            }
            Err(reason) => s.check_failed = Some(reason),
        }
    }
    let rebuilds = if defers && s.check_failed.is_none() {
        INDEX_AT_FIRST_USE
    } else {
        INDEX_AT_OPEN
    };
    if let Some((slots, zero)) = zero_slots(&oi, 8) {
        if zero > 0 && slots >= 2 {
            s.findings.push(finding(
                Severity::Warning,
                FindingKind::UntrimmedIndex,
                Some(&oi_name),
                format!(
                    "{zero} of its {slots} slots are zero (an untrimmed or preallocated index, KAFKA-10207): Kafka 4.4 reads them as entries pointing at position 0; {rebuilds}"
                ),
            ));
        }
    }
    if let Some((slots, zero)) = zero_slots(&ti, 12) {
        if zero == slots && slots >= 2 {
            s.findings.push(finding(
                Severity::Warning,
                FindingKind::UnwrittenTimeIndex,
                Some(&ti_name),
                format!(
                    "all {slots} slots are zero (a full-size, never-written time index, KAFKA-19200): Kafka 4.4 reads the segment's largest timestamp as 0 (early retention) and finds the index full, throwing at the next roll; {rebuilds}"
                ),
            ));
        } else if zero > 0 && slots >= 2 {
            s.findings.push(finding(
                Severity::Warning,
                FindingKind::UntrimmedIndex,
                Some(&ti_name),
                format!(
                    "{zero} of its {slots} slots are zero (untrimmed or preallocated, KAFKA-10207): Kafka 4.4 reads a last entry with timestamp 0; {rebuilds}"
                ),
            ));
        }
    }
    if s.check_failed.is_none() && !defers {
        if let Err(reason) = seg.quick_index_check() {
            s.check_failed = Some(reason);
        }
    }
    if s.check_failed.is_none() && !defers {
        match crate::loader_plan::segment_check(&seg, is_last) {
            Ok(c) => s.next_offset = c.next_offset,
            Err(reason) => s.check_failed = Some(reason),
        }
    }
    let disagrees = match (&s.check_failed, &s.deferred_rebuild) {
        (Some(reason), _) if !index_missing => Some((reason, SEGMENT_AT_OPEN)),
        (None, Some(reason)) => Some((reason, SEGMENT_AT_FIRST_USE)),
        _ => None,
    };
    if let Some((reason, rebuilds)) = disagrees {
        s.findings.push(finding(
            Severity::Warning,
            FindingKind::IndexDisagrees,
            Some(&file),
            format!(
                "the loader's consistency check fails ({reason}): {rebuilds} (Kafka 4.4 only when its sanityCheck fails or the segment is above the recovery point without a marker)"
            ),
        ));
    }
    // The doctor reads in full a segment the loader rebuilds at the open (its tail decides
    // what recovery cuts), and one whose indexes a deferred check rebuilds at their first
    // use (a small `.log`, which the open still recovers when it is above the recovery
    // point without a marker); with --deep, every segment. The prediction counts only the
    // segments the open rebuilds. One that reaches past the next segment's base is
    // recovered and cut there: read in full too, to predict the cut.
    let overlaps = s
        .next_offset
        .is_some_and(|n| next_base.is_some_and(|b| n > b));
    if s.check_failed.is_some() || s.deferred_rebuild.is_some() || overlaps || deep {
        match scan_log(&seg, cut_base) {
            Ok(scan) => {
                // Another segment's next offset is the open's header scan's, as the
                // loader's overlap check and log end use it (a batch failing its checksum
                // there is kept: --deep reads it, the open does not).
                if s.check_failed.is_some() {
                    s.next_offset = scan.next_offset;
                }
                s.scan = Some(scan);
            }
            Err(e) => s.findings.push(finding(
                Severity::Error,
                FindingKind::Unreadable,
                Some(&file),
                format!("cannot read the .log: {e}"),
            )),
        }
    }
    if deep {
        s.findings
            .extend(super::deep::verify_indexes(&[oi.clone(), ti.clone()]));
    }
    if let Some((position, last)) = s.scan.as_ref().and_then(|sc| sc.overflow) {
        s.findings.push(finding(
            Severity::Warning,
            FindingKind::OffsetOverflow,
            Some(&file),
            format!(
                "the batch at position {position} holds offset {last}, more than 2^31 - 1 above the base {base} (legacy data written before Kafka 2.0): recovery splits the segment into segments that each start at their first batch (Kafka's splitOverflowedSegment) and rescans the pieces; no record is lost. Kafka 4.4 splits only a segment its recovery meets (without a clean-shutdown marker, from the recovery point on) and then restarts recovery from the recovery point; this library's loader also splits a segment it rebuilds under the marker or below the recovery point, and resumes recovery at the split segment"
            ),
        ));
    }
    if let Some(scan) = &s.scan {
        if scan.valid_end < s.size {
            let rest = s.size - scan.valid_end;
            match all_zero(&seg, scan.valid_end, s.size) {
                Ok(true) => s.findings.push(finding(
                    Severity::Warning,
                    FindingKind::ZeroFilledLogTail,
                    Some(&file),
                    format!(
                        "{rest} zero bytes after the last batch at position {} (a preallocated .log, KAFKA-21000): recovery rescans the segment and cuts them; no record is lost",
                        scan.valid_end
                    ),
                )),
                Ok(false) => s.findings.push(finding(
                    Severity::Error,
                    FindingKind::TornLogTail,
                    Some(&file),
                    format!(
                        "{rest} bytes after position {} are not valid batches ({}){TRUNCATES}",
                        scan.valid_end,
                        scan.stop.as_deref().unwrap_or("torn tail")
                    ),
                )),
                Err(e) => s.findings.push(finding(
                    Severity::Error,
                    FindingKind::Unreadable,
                    Some(&file),
                    e,
                )),
            }
        }
    }
    if s.size == 0 {
        s.next_offset = Some(base);
    }
    s
}

/// The split of one recovered segment whose offsets overflow, among the partition's
/// segments: [`SplitPlan::predicts`] says whether the doctor's prediction (the segments
/// it recovers plus the pieces, each once; the cuts it computes) is what the loader does.
struct SplitPlan<'a> {
    segs: &'a [Seg],
    split: &'a Seg,
    pieces: &'a [Piece],
    recovered: &'a BTreeSet<i64>,
    first_unflushed: Option<i64>,
    rp: i64,
}

impl SplitPlan<'_> {
    /// `Some((end, more))` if the loader does what the doctor predicts, with `end`
    /// `Some(log end)` when the highest segment after the split is a piece, and `more`
    /// the segments the second pass recovers besides those the doctor counts; `None` if
    /// the doctor cannot say. `ends(seg)` is a segment's end after its recovery.
    ///
    /// The loader (`Log::open_with`) recovers the segments up to the split one, splits
    /// it, and then recovers again from the split segment with the pieces flagged: the
    /// unflushed segments now start at the floor, among the new segments, of the larger
    /// of the recovery point and the split segment's base (with no piece at the split
    /// segment's base, that floor can be a segment below it, as in Kafka's restart of
    /// recovery from the recovery point: `more`). The prediction holds when that
    /// recovers every segment at most once, the ones in `more` cut nothing (or were not
    /// read: their outcome is then unknown), no piece shares a base with another
    /// segment or overlaps its neighbour, and no piece is cut but the highest segment (a
    /// cut elsewhere deletes the segments after it).
    fn predicts(&self, ends: &dyn Fn(&Seg) -> i64) -> Option<(Option<i64>, Vec<i64>)> {
        let sb = self.split.base;
        let flagged = |o: &Seg| o.check_failed.is_some();
        // (base, end, is a piece), in base order.
        let mut merged: Vec<(i64, i64, bool)> = self
            .segs
            .iter()
            .filter(|o| o.base != sb)
            .map(|o| (o.base, ends(o), false))
            .chain(self.pieces.iter().map(|p| (p.base, p.next_offset, true)))
            .collect();
        merged.sort_unstable();
        for (&(a, a_end, a_piece), &(b, _, b_piece)) in merged.iter().zip(merged.iter().skip(1)) {
            if a == b || ((a_piece || b_piece) && a_end > b) {
                return None;
            }
        }
        let &(last_base, last_end, last_is_piece) = merged.last()?;
        for p in self.pieces {
            let is_last = last_is_piece && p.base == last_base;
            if p.valid < p.size && !(is_last && self.segs.last().is_some_and(|l| l.base == sb)) {
                return None;
            }
        }
        // The loader's recoveries, as (is a piece, base), in both passes.
        let mut loader: Vec<(bool, i64)> = Vec::new();
        let originals = self.segs.iter().filter(|o| o.base != sb);
        match self.first_unflushed {
            Some(f) => {
                for o in self.segs {
                    let first_pass = if sb >= f {
                        (flagged(o) && o.base < f) || (f..=sb).contains(&o.base)
                    } else {
                        flagged(o) && o.base <= sb
                    };
                    if first_pass {
                        loader.push((false, o.base));
                    }
                }
                let from = self.rp.max(sb);
                let floor = merged
                    .iter()
                    .rev()
                    .find(|m| m.0 <= from)
                    .or(merged.first())
                    .map_or(i64::MAX, |m| m.0);
                for o in originals {
                    if o.base >= floor || (flagged(o) && o.base > sb) {
                        loader.push((false, o.base));
                    }
                }
                loader.extend(self.pieces.iter().map(|p| (true, p.base)));
            }
            None => {
                for o in self.segs.iter().filter(|o| flagged(o)) {
                    loader.push((false, o.base));
                }
                loader.extend(self.pieces.iter().map(|p| (true, p.base)));
            }
        }
        loader.sort_unstable();
        if loader.windows(2).any(|w| w.first() == w.last()) {
            return None; // a segment recovered twice
        }
        let mut more = Vec::new();
        for &(piece, b) in &loader {
            if piece || self.recovered.contains(&b) {
                continue;
            }
            let o = self.segs.iter().find(|o| o.base == b)?;
            let cuts = o
                .scan
                .as_ref()
                .is_some_and(|sc| sc.valid_end < o.size || sc.cut_at.is_some());
            if cuts {
                return None;
            }
            more.push(b);
        }
        // Every segment the doctor counts is one the loader recovers.
        if self
            .recovered
            .iter()
            .any(|b| loader.binary_search(&(false, *b)).is_err())
        {
            return None;
        }
        Some((last_is_piece.then_some(last_end), more))
    }
}

/// Whether the name ends with a suffix the loader parses an offset from (a segment's
/// `.log` or index, a producer snapshot, or one of those with `.swap`, `.cleaned` or
/// `.deleted` after it).
fn has_kafka_suffix(p: &Path) -> bool {
    let name = names::file_name(p);
    let name = [
        names::SWAP_FILE_SUFFIX,
        names::CLEANED_FILE_SUFFIX,
        names::DELETED_FILE_SUFFIX,
    ]
    .iter()
    .find_map(|s| name.strip_suffix(s))
    .unwrap_or(name);
    names::kind_of(Path::new(name)).is_some()
        || name.ends_with(names::PRODUCER_SNAPSHOT_FILE_SUFFIX)
}

/// Examines the partition directory `dir` named `name` under the marker and checkpoints
/// of `ctx`.
pub(super) fn examine_partition(
    dir: &Path,
    name: &str,
    ctx: Context,
    throughput: &Throughput,
    deep: bool,
) -> PartitionReport {
    let mut findings = ctx.findings.clone();
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => {
            let (regular, other): (Vec<PathBuf>, Vec<PathBuf>) = rd
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .partition(|p| p.is_file());
            for p in other.iter().filter(|p| has_kafka_suffix(p)) {
                let what = match std::fs::symlink_metadata(p) {
                    Ok(m) if m.file_type().is_symlink() => match std::fs::metadata(p) {
                        Ok(t) if t.is_dir() => "a symbolic link to a directory".to_string(),
                        Ok(_) => "a symbolic link to a special file".to_string(),
                        Err(e) => format!("a symbolic link that does not resolve ({e})"),
                    },
                    Ok(m) if m.is_dir() => "a directory".to_string(),
                    Ok(_) => "a special file (a FIFO, socket or device)".to_string(),
                    Err(e) => format!("unreadable ({e})"),
                };
                findings.push(finding(
                    Severity::Error,
                    FindingKind::NotARegularFile,
                    Some(names::file_name(p)),
                    format!("is {what}, not a regular file: the loader cannot open it and the partition does not load"),
                ));
            }
            regular
        }
        Err(e) => {
            findings.push(finding(
                Severity::Error,
                FindingKind::Unreadable,
                None,
                format!("cannot list the directory: {e}"),
            ));
            Vec::new()
        }
    };
    files.sort();
    for p in files
        .iter()
        .filter(|p| has_kafka_suffix(p) && names::offset_from_file(p).is_err())
    {
        findings.push(finding(
            Severity::Error,
            FindingKind::BadFileName,
            Some(names::file_name(p)),
            "its name does not start with an offset: Kafka's loader parses the prefix as a long and fails, and this library's refuses the partition".into(),
        ));
    }

    // Leftovers of unfinished operations (Kafka's removeTempFilesAndCollectSwapFiles).
    let min_cleaned = files
        .iter()
        .filter(|p| names::file_name(p).ends_with(CLEANED_FILE_SUFFIX))
        .filter_map(|p| names::offset_from_file(p).ok())
        .min()
        .unwrap_or(i64::MAX);
    // Stricter than Kafka: kept `.swap` pieces beside a `.cleaned` one inside one live
    // segment are an unfinished split too (the loader's rule,
    // crate::loader_plan::unfinished_split_swaps).
    let rolled_back = {
        let cleaned: Vec<i64> = files
            .iter()
            .filter(|p| names::file_name(p).ends_with(CLEANED_FILE_SUFFIX))
            .filter_map(|p| names::offset_from_file(p).ok())
            .collect();
        let bases_of = |suffix: &str| -> Vec<i64> {
            files
                .iter()
                .filter(|p| names::file_name(p).ends_with(&format!(".log{suffix}")))
                .filter_map(|p| names::canonical_offset_from_file(p).ok())
                .collect()
        };
        let kept: Vec<i64> = files
            .iter()
            .filter(|p| names::file_name(p).ends_with(SWAP_FILE_SUFFIX))
            .filter_map(|p| names::offset_from_file(p).ok())
            .filter(|&o| o < min_cleaned)
            .collect();
        crate::loader_plan::unfinished_split_swaps(
            &bases_of(""),
            &bases_of(DELETED_FILE_SUFFIX),
            &kept,
            &cleaned,
        )
    };
    let mut log_swaps = Vec::new();
    let mut deleted_logs = Vec::new();
    for p in &files {
        let n = names::file_name(p);
        if n.ends_with(DELETED_FILE_SUFFIX) && !n.ends_with(".checkpoint.deleted") {
            if n.ends_with(".log.deleted") {
                if let Ok(o) = names::canonical_offset_from_file(p) {
                    deleted_logs.push((o, p.clone()));
                }
            }
            findings.push(finding(
                Severity::Info,
                FindingKind::DeletedFile,
                Some(n),
                "scheduled for deletion before the broker stopped: the loader deletes it".into(),
            ));
        } else if n.ends_with(CLEANED_FILE_SUFFIX) {
            findings.push(finding(
                Severity::Warning,
                FindingKind::CleanedFile,
                Some(n),
                "an unfinished clean or split: the loader deletes it (the original segment is still complete)".into(),
            ));
        } else if n.ends_with(SWAP_FILE_SUFFIX) {
            if names::offset_from_file(p).map_or(true, |o| o >= min_cleaned) {
                findings.push(finding(
                    Severity::Warning,
                    FindingKind::SwapDeleted,
                    Some(n),
                    "at or above the lowest .cleaned file (an unfinished split, KAFKA-6264): the loader deletes it".into(),
                ));
            } else if names::offset_from_file(p).is_ok_and(|o| rolled_back.contains(&o)) {
                findings.push(finding(
                    Severity::Warning,
                    FindingKind::SwapDeleted,
                    Some(n),
                    "a piece of an unfinished split whose other pieces are still .cleaned (the renames reached the disk out of order): this library's loader deletes it, keeps the segment it would replace and splits that again; Kafka 4.4 completes it and loses the .cleaned pieces' offsets".into(),
                ));
            } else if n.ends_with(".log.swap") {
                if let Ok(o) = names::canonical_offset_from_file(p) {
                    log_swaps.push((o, p.clone()));
                }
            }
        } else if n.ends_with(".tmp") {
            findings.push(finding(
                Severity::Info,
                FindingKind::TempFile,
                Some(n),
                "an interrupted atomic write: the loader ignores it; safe to remove".into(),
            ));
        } else if names::is_index_file(p) && names::offset_from_file(p).is_ok() {
            let log = names::kind_of(p)
                .and_then(|k| names::replace_suffix(p, k.suffix(), names::LOG_FILE_SUFFIX).ok());
            if log.is_some_and(|l| !l.exists()) {
                findings.push(finding(
                    Severity::Info,
                    FindingKind::OrphanIndex,
                    Some(n),
                    "an index without its .log: the loader deletes it".into(),
                ));
            }
        }
    }

    // Segments.
    let mut bases: Vec<(i64, PathBuf)> = files
        .iter()
        .filter(|p| names::is_log_file(p))
        .filter_map(|p| Some((names::canonical_offset_from_file(p).ok()?, p.clone())))
        .collect();
    bases.sort();
    // The segments the loader will hold: with swaps it completes, the segments they
    // replace (and any file based in the range they cover) are gone and each swap is
    // its segment, its indexes those renamed from `.swap` (a missing one is rebuilt).
    let mut layout: Vec<(i64, PathBuf, &str)> =
        bases.iter().map(|(b, p)| (*b, p.clone(), "")).collect();
    if !log_swaps.is_empty() {
        match crate::loader_plan::plan_swaps::<KafkaBatchFormat>(
            &crate::fs::real(),
            dir,
            &log_swaps,
            &bases,
            &deleted_logs,
        ) {
            Ok(plan) => {
                layout.retain(|(b, _, _)| {
                    !((*b >= plan.min_base && *b < plan.max_next) || plan.swap_bases.contains(b))
                });
                layout.extend(log_swaps.iter().map(|(b, p)| (*b, p.clone(), SWAP_FILE_SUFFIX)));
                layout.sort_by_key(|(b, _, _)| *b);
                let removed = if plan.removed.is_empty() {
                    String::new()
                } else {
                    let ranges: Vec<String> =
                        plan.removed.iter().map(|(s, e)| format!("{s}..{e}")).collect();
                    format!("; offsets no swap holds are dropped: {}", ranges.join(", "))
                };
                let deleted = if plan.replaced_deleted.is_empty() {
                    String::new()
                } else {
                    format!(
                        " and the segments already renamed .deleted based at {:?}",
                        plan.replaced_deleted
                    )
                };
                for (_, p) in &log_swaps {
                    findings.push(finding(
                        Severity::Warning,
                        FindingKind::SwapCompleted,
                        Some(names::file_name(p)),
                        format!(
                            "an interrupted clean or split: the loader completes it, replacing the segments based at {:?}{deleted}{removed}",
                            plan.replaced
                        ),
                    ));
                }
            }
            Err(e) => findings.push(finding(
                Severity::Error,
                FindingKind::SwapRefused,
                None,
                format!("Kafka 4.4 completes the swap files, replacing the segments they cover; this library's loader refuses them: {e}"),
            )),
        }
    }
    let n = layout.len();
    // The base offset of each segment with a non-empty `.log`.
    let non_empty: Vec<i64> = layout
        .iter()
        .filter(|(_, p, _)| std::fs::metadata(p).is_ok_and(|m| m.len() > 0))
        .map(|(b, _, _)| *b)
        .collect();
    let mut segs: Vec<Seg> = layout
        .iter()
        .enumerate()
        .map(|(i, (b, p, suffix))| {
            let index_swaps = *b < min_cleaned && !rolled_back.contains(b);
            let next_base = layout.get(i + 1).map(|(b, _, _)| *b);
            let cut_base = non_empty.iter().copied().find(|&nb| nb > *b);
            check_segment(
                dir,
                (*b, p, suffix),
                (i + 1 == n, index_swaps),
                (next_base, cut_base),
                deep,
            )
        })
        .collect();
    // Offsets must increase across segments: a segment reaching past the next one's base
    // is recovered.
    for i in 1..segs.len() {
        let (base, prev_next) = match (segs.get(i), segs.get(i - 1)) {
            (Some(s), Some(p)) => (s.base, p.next_offset),
            _ => continue,
        };
        if let Some(prev) = segs.get_mut(i - 1) {
            if prev_next.is_some_and(|x| x > base) && prev.check_failed.is_none() {
                prev.check_failed = Some(format!("overlaps the segment based at {base}"));
                prev.findings.push(finding(
                    Severity::Warning,
                    FindingKind::IndexDisagrees,
                    Some(&prev.file.clone()),
                    format!("holds offsets at or above the next segment's base {base}{OVERLAP_RECOVERS}"),
                ));
            }
        }
    }

    let log_end_offset = segs.last().and_then(|s| s.next_offset.or(Some(s.base)));
    let bytes: u64 = segs.iter().map(|s| s.size).sum();

    // What the loader rescans.
    let clean = ctx.clean_marker;
    let rp = ctx.recovery_point.unwrap_or(0);
    let first_unflushed = if clean {
        None
    } else {
        // The segment holding the recovery point (Kafka's `values(recoveryPoint, MAX)`
        // starts at its floor), or the first one.
        segs.iter()
            .rev()
            .find(|s| s.base <= rp)
            .or(segs.first())
            .map(|s| s.base)
    };
    let mut recovered: BTreeSet<i64> = BTreeSet::new();
    let mut deleted_after: Option<(i64, i64)> = None;
    let mut cascade_from: Option<i64> = None;
    for s in &segs {
        let unflushed = first_unflushed.is_some_and(|f| s.base >= f);
        if let Some((_, _)) = deleted_after {
            continue;
        }
        if unflushed || s.check_failed.is_some() {
            recovered.insert(s.base);
        }
        let truncates = s.scan.as_ref().is_some_and(|sc| sc.valid_end < s.size);
        if unflushed && truncates && s.base != segs.last().map_or(s.base, |l| l.base) {
            let end = segs.last().and_then(|l| l.next_offset).unwrap_or(s.base);
            cascade_from = Some(s.base);
            deleted_after = Some((
                s.scan
                    .as_ref()
                    .and_then(|x| x.next_offset)
                    .unwrap_or(s.base),
                end,
            ));
        }
    }
    // A recovered segment whose offsets overflow is split; the pieces join the other
    // segments and are recovered in turn. Whether the doctor predicts what that leaves:
    // the log end the pieces give (`Some(end)` when the highest segment is a piece), or
    // the segment is listed as one whose outcome is unknown.
    let mut split_unknown: Vec<i64> = Vec::new();
    let mut split_end: Option<i64> = None;
    let mut split_more: Vec<i64> = Vec::new();
    let split: Vec<&Seg> = segs
        .iter()
        .filter(|s| {
            recovered.contains(&s.base) && s.scan.as_ref().is_some_and(|sc| sc.overflow.is_some())
        })
        .collect();
    for s in &split {
        let ends = |o: &Seg| match &o.scan {
            Some(sc) if recovered.contains(&o.base) => sc.next_offset.unwrap_or(o.base),
            _ => o.next_offset.unwrap_or(o.base),
        };
        let predicted = s
            .scan
            .as_ref()
            .and_then(|sc| sc.pieces.as_deref())
            .and_then(|pieces| {
                let plan = SplitPlan {
                    segs: &segs,
                    split: s,
                    pieces,
                    recovered: &recovered,
                    first_unflushed,
                    rp,
                };
                (split.len() == 1 && cascade_from.is_none_or(|c| c < s.base))
                    .then(|| plan.predicts(&ends))
                    .flatten()
            });
        match predicted {
            Some((end, more)) => {
                split_end = end;
                split_more.extend(more);
            }
            None => split_unknown.push(s.base),
        }
    }
    recovered.extend(split_more);
    if let Some((from, to)) = deleted_after {
        findings.push(finding(
            Severity::Error,
            FindingKind::TornLogTail,
            None,
            format!(
                "recovery truncates a segment that is not the last one: the loader deletes every later segment (offsets {from}..{to} are lost)"
            ),
        ));
    }
    for s in &mut segs {
        let rescanned = recovered.contains(&s.base);
        for mut f in s.findings.drain(..) {
            // A deferred index check is dropped when the open recovers the segment anyway
            // (above the recovery point, or overlapping the next segment): the open
            // rebuilds its indexes then.
            if rescanned {
                f.detail = f
                    .detail
                    .replace(INDEX_AT_FIRST_USE, INDEX_AT_OPEN)
                    .replace(SEGMENT_AT_FIRST_USE, SEGMENT_AT_OPEN);
            }
            // An index of a segment that recovery rescans anyway costs nothing more.
            if rescanned
                && matches!(
                    f.kind,
                    FindingKind::UntrimmedIndex
                        | FindingKind::UnwrittenTimeIndex
                        | FindingKind::IndexDisagrees
                        | FindingKind::MissingIndex
                )
                && first_unflushed.is_some_and(|fu| s.base >= fu)
            {
                f.severity = Severity::Info;
                f.detail
                    .push_str(" (the segment is above the recovery point and recovered anyway)");
            }
            // Rescanned only because this library's end check failed: Kafka trusts the
            // marker (or the recovery point) and never reads these bytes at start-up.
            if rescanned
                && f.kind == FindingKind::TornLogTail
                && first_unflushed.is_none_or(|fu| s.base < fu)
            {
                if let Some(head) = f.detail.strip_suffix(TRUNCATES) {
                    let trusted = if clean {
                        "the clean-shutdown marker"
                    } else {
                        "the recovery point (the segment is below it)"
                    };
                    f.detail = format!(
                        "{head}: Kafka 4.4's broker keeps the torn bytes: it trusts {trusted}, does not recover this segment (its sanity check reads only the index files) and appends after them, so readers and followers meet a corrupt batch there; this library's loader checks the segment's last batches before trusting {trusted}, recovers the segment and truncates them"
                    );
                }
            }
            if !rescanned && f.kind == FindingKind::TornLogTail {
                f.detail.push_str(
                    "; but the loader trusts this segment (clean shutdown or below the recovery point) and keeps them: readers get a corrupt batch there",
                );
            }
            findings.push(f);
        }
    }
    // A recovered segment reaching past the next non-empty segment's base is cut there
    // after its recovery (the loader's `resolve_overlap`); after a crash only if its
    // recovery cut nothing (a cut deletes every later segment instead).
    let overlap_cut = |s: &Seg| -> Option<(u64, u64, i64)> {
        // A segment whose offsets overflow is split instead.
        let sc = s
            .scan
            .as_ref()
            .filter(|sc| recovered.contains(&s.base) && sc.overflow.is_none())?;
        let unflushed = first_unflushed.is_some_and(|f| s.base >= f);
        if unflushed && sc.valid_end < s.size {
            return None;
        }
        let (at, next) = sc.cut_at.filter(|&(at, _)| at < sc.valid_end)?;
        Some((at, sc.valid_end - at, next))
    };
    for s in &segs {
        if let Some((at, n, next)) = overlap_cut(s) {
            findings.retain(|f| {
                f.file.as_deref() != Some(s.file.as_str()) || !f.detail.contains(OVERLAP_RECOVERS)
            });
            findings.push(finding(
                Severity::Error,
                FindingKind::IndexDisagrees,
                Some(&s.file),
                format!(
                    "holds offsets at or above the next segment's base {next}: this library's loader recovers it and cuts its last {n} bytes, from the batch at position {at} (truncating it to offset {next}); records only this segment held there are lost"
                ),
            ));
        }
    }
    let truncate_bytes: u64 = segs
        .iter()
        .filter(|s| recovered.contains(&s.base))
        .filter_map(|s| {
            s.scan.as_ref().map(|sc| {
                s.size.saturating_sub(sc.valid_end) + overlap_cut(s).map_or(0, |(_, n, _)| n)
            })
        })
        .sum();
    let rescan_bytes: u64 = segs
        .iter()
        .filter(|s| recovered.contains(&s.base))
        .map(|s| s.size)
        .sum();
    // What the open leaves: the segments it deletes and the log end. A rescanned segment
    // the doctor did not read in full may still hold a corrupt batch (recovery's CRC
    // check), so its cut, and all that follows from it, is unknown without --deep.
    let unread_recovered: Vec<i64> = segs
        .iter()
        .filter(|s| {
            recovered.contains(&s.base)
                && ((s.scan.is_none() && s.size > 0) || split_unknown.contains(&s.base))
        })
        .map(|s| s.base)
        .collect();
    let mut deleted_segments: Vec<i64> = Vec::new();
    if let Some(b) = cascade_from {
        deleted_segments.extend(segs.iter().filter(|s| s.base > b).map(|s| s.base));
    }
    // The empty segments inside the offsets of a recovered one before them are removed
    // (the loader's `resolve_overlap`, one after another).
    let mut empty_removed: Vec<i64> = Vec::new();
    for (i, prev) in segs.iter().enumerate() {
        // Its end after its recovery.
        let end = prev
            .scan
            .as_ref()
            .map(|sc| sc.next_offset.unwrap_or(prev.base))
            .or(prev.next_offset);
        let Some(end) = end.filter(|_| recovered.contains(&prev.base)) else {
            continue;
        };
        for next in segs
            .iter()
            .skip(i + 1)
            .take_while(|next| next.size == 0 && end > next.base)
        {
            if !deleted_segments.contains(&next.base) {
                deleted_segments.push(next.base);
                empty_removed.push(next.base);
            }
        }
    }
    // A removed segment is not recovered: the loader looks each segment up first.
    for b in &empty_removed {
        recovered.remove(b);
    }
    // The log end of the segments the open keeps: with the last segment removed as an
    // empty one inside the one before, that one's end (after its recovery).
    let kept_end = segs
        .iter()
        .rev()
        .find(|s| !empty_removed.contains(&s.base))
        .and_then(|s| match &s.scan {
            Some(sc) if recovered.contains(&s.base) => Some(sc.next_offset.unwrap_or(s.base)),
            _ => s.next_offset.or(Some(s.base)),
        });
    // The highest segment is a piece of a split: the log end is its end.
    let kept_end = split_end.or(kept_end);
    let cut = truncate_bytes > 0 || deleted_after.is_some();
    let mut recovered_log_end_offset = match deleted_after {
        Some((from, _)) => Some(from),
        None => kept_end,
    }
    .filter(|_| unread_recovered.is_empty());
    if let (Some(end), Some(ls)) = (recovered_log_end_offset, ctx.log_start_offset) {
        if end < ls {
            // deleteSegmentsIfLogStartGreaterThanLogEnd: a new segment at the log start.
            deleted_segments = segs.iter().map(|s| s.base).collect();
            recovered_log_end_offset = Some(ls.max(0));
        }
    }
    if let Some(end) = recovered_log_end_offset {
        if clean && end < rp && cut && rp < i64::MAX {
            // The loader starts a segment at the clean-shutdown log end rather than reuse
            // offsets handed out before the shutdown.
            recovered_log_end_offset = Some(rp);
        }
    }
    deleted_segments.sort_unstable();
    deleted_segments.dedup();
    if let Some(f) = first_unflushed {
        let count = segs.iter().filter(|s| s.base >= f).count();
        findings.push(finding(
            Severity::Warning,
            FindingKind::RecoveryNeeded,
            None,
            format!(
                "no clean-shutdown marker{}: the broker recovers {count} segment(s) from the one based at {f} (recovery point {rp}{})",
                if ctx.malformed { " trusted (a checkpoint is unreadable)" } else { "" },
                if ctx.recovery_point.is_none() { ", none checkpointed" } else { "" },
            ),
        ));
    }

    // Producer snapshots, leader epochs and checkpointed offsets against the log end.
    if let Some(leo) = kept_end {
        check_snapshots(dir, leo, &mut findings);
        check_epochs(dir, leo, &mut findings);
        // The log start and the high watermark are compared with the log end the open
        // leaves (recovery may cut below them), when the doctor knows it.
        let read_end = leo;
        // (A cut inside an unread segment before it can only lower it further.)
        let leo = match deleted_after {
            Some((from, _)) => from,
            None => leo,
        };
        if let Some(ls) = ctx.log_start_offset {
            if ls > leo {
                let after_cut = if leo < read_end {
                    format!(
                        " recovery leaves (it cuts the log end from {read_end} down to {leo}, deleting the segments after the truncated one, and only then compares it with the log start, as Kafka 4.4's recoverLog does)"
                    )
                } else {
                    String::new()
                };
                findings.push(finding(
                    Severity::Error,
                    FindingKind::LogStartAheadOfLog,
                    None,
                    format!(
                        "the checkpointed log start offset {ls} is above the log end offset {leo}{after_cut}: the broker deletes every segment (deleteSegmentsIfLogStartGreaterThanLogEnd) and starts an empty one at {ls}"
                    ),
                ));
            }
        }
        if let Some(hw) = ctx.high_watermark {
            if hw > leo {
                findings.push(finding(
                    Severity::Error,
                    FindingKind::HighWatermarkAheadOfLog,
                    None,
                    format!(
                        "the checkpointed high watermark {hw} is above the log end offset {leo}: records {leo} to {} were acknowledged and are not in this log (lost unless another replica has them); the broker lowers the high watermark to the log end",
                        hw - 1
                    ),
                ));
            }
        }
    }
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let data_loss = if findings.iter().any(|f| f.severity == Severity::Error) {
        DataLoss::Lost
    } else if !unread_recovered.is_empty() {
        DataLoss::Unknown
    } else {
        DataLoss::None
    };
    let split_pieces: Vec<i64> = segs
        .iter()
        .filter(|s| recovered.contains(&s.base))
        .filter_map(|s| s.scan.as_ref())
        .flat_map(|sc| sc.split_bases.iter().copied())
        .collect();
    let predicted_seconds = throughput.seconds(rescan_bytes, recovered.len());
    let cleaner = ctx
        .cleaner_checkpoint
        .and_then(|cp| cleaner_report(cp, &segs, &ctx, log_end_offset?, &mut findings));
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    drop(segs);
    PartitionReport {
        name: name.to_string(),
        dir: dir.to_path_buf(),
        layout: ctx.layout,
        segments: n,
        bytes,
        log_end_offset,
        recovery_point: ctx.recovery_point,
        log_start_offset: ctx.log_start_offset,
        high_watermark: ctx.high_watermark,
        clean_shutdown: clean,
        recovered_segments: recovered.into_iter().collect(),
        split_pieces,
        rescan_bytes,
        truncate_bytes,
        unread_recovered_segments: unread_recovered,
        deleted_segments,
        recovered_log_end_offset,
        data_loss,
        predicted_seconds,
        cleaner,
        findings,
    }
}

/// The log cleaner's view of a partition whose `cleaner-offset-checkpoint` entry is `cp`
/// (`docs/kafka-behaviour.md#cleaner-cleanable-offsets`), and a finding that says it.
#[cfg(feature = "cleaner")]
fn cleaner_report(
    cp: i64,
    segs: &[Seg],
    ctx: &Context,
    log_end: i64,
    findings: &mut Vec<Finding>,
) -> Option<super::CleanerReport> {
    use crate::clean::{CompactionConfig, LogSummary, LogToClean, SegmentSummary};
    let log_start = ctx
        .log_start_offset
        .unwrap_or_else(|| segs.first().map_or(0, |s| s.base));
    let summary = LogSummary {
        log_start_offset: log_start,
        log_end_offset: log_end,
        // Offline: the checkpointed high watermark bounds it, else the log end.
        last_stable_offset: ctx.high_watermark.unwrap_or(log_end).min(log_end),
        segments: segs
            .iter()
            .map(|s| SegmentSummary {
                base_offset: s.base,
                size: s.size,
                largest_timestamp: 0,
                first_batch_timestamp: i64::MAX,
                last_modified: 0,
                offset_index_bytes: 0,
                time_index_bytes: 0,
            })
            .collect(),
    };
    let compaction = CompactionConfig::default();
    let (offsets, ltc) = LogToClean::plan(&summary, Some(cp), 0, &compaction);
    let ratio = (ltc.total_bytes > 0).then_some(ltc.cleanable_ratio);
    let due = ltc.is_cleanable(compaction.min_cleanable_dirty_ratio);
    let reset = offsets.first_dirty_offset != cp;
    findings.push(Finding {
        severity: Severity::Info,
        kind: FindingKind::CleanerState,
        file: None,
        detail: format!(
            "cleaner-offset-checkpoint {cp}{}: dirty from offset {} to {} ({} of {} bytes, dirty ratio {}); {}",
            if reset {
                format!(
                    " lies outside the log ({log_start}..{log_end}): the cleaner resets it to the log start and writes that back"
                )
            } else {
                String::new()
            },
            offsets.first_dirty_offset,
            offsets.first_uncleanable_dirty_offset,
            ltc.cleanable_bytes,
            ltc.total_bytes,
            ratio.map_or_else(|| "none, empty".to_string(), |r| format!("{r:.3}")),
            if due {
                "with Kafka's default min.cleanable.dirty.ratio 0.5 the next clean is due"
            } else {
                "not due at Kafka's default min.cleanable.dirty.ratio 0.5"
            }
        ),
    });
    Some(super::CleanerReport {
        checkpoint: cp,
        first_dirty_offset: offsets.first_dirty_offset,
        checkpoint_reset: reset,
        first_uncleanable_offset: offsets.first_uncleanable_dirty_offset,
        clean_bytes: ltc.clean_bytes,
        cleanable_bytes: ltc.cleanable_bytes,
        dirty_ratio: ratio,
        due_at_default_ratio: due,
    })
}

/// Without the `cleaner` feature there is no cleaner view.
#[cfg(not(feature = "cleaner"))]
fn cleaner_report(
    _cp: i64,
    _segs: &[Seg],
    _ctx: &Context,
    _log_end: i64,
    _findings: &mut Vec<Finding>,
) -> Option<super::CleanerReport> {
    None
}

fn check_snapshots(dir: &Path, leo: i64, findings: &mut Vec<Finding>) {
    let Ok(snaps) = crate::producer::snapshot::list_snapshot_files(dir) else {
        return;
    };
    for (offset, path) in snaps {
        let name = names::file_name(&path).to_string();
        let len = std::fs::metadata(&path).map_or(0, |m| m.len());
        let decoded = if len > super::super::MAX_INDEX_FILE_BYTES {
            Err(format!(
                "{len} bytes, larger than any snapshot a broker writes"
            ))
        } else {
            std::fs::read(&path)
                .map_err(|e| e.to_string())
                .and_then(|b| {
                    crate::producer::snapshot::decode_snapshot(&b).map_err(|e| e.to_string())
                })
        };
        if let Err(why) = decoded {
            findings.push(finding(
                Severity::Warning,
                FindingKind::CorruptSnapshot,
                Some(&name),
                format!("{why}: the broker deletes it and rebuilds the producer state from an earlier snapshot or the log"),
            ));
        }
        if offset > leo {
            findings.push(finding(
                Severity::Warning,
                FindingKind::SnapshotAheadOfLog,
                Some(&name),
                format!("at offset {offset}, above the log end offset {leo}: the broker deletes it (truncateAndReload) and rebuilds the producer state from an earlier snapshot or the log"),
            ));
        }
    }
}

fn check_epochs(dir: &Path, leo: i64, findings: &mut Vec<Finding>) {
    let path = dir.join("leader-epoch-checkpoint");
    let Ok(meta) = std::fs::metadata(&path) else {
        return;
    };
    const NAME: &str = "leader-epoch-checkpoint";
    if !meta.is_file() || meta.len() > crate::checkpoint::MAX_CHECKPOINT_BYTES * 1024 {
        findings.push(finding(
            Severity::Error,
            FindingKind::CorruptLeaderEpochCheckpoint,
            Some(NAME),
            "not a regular file of a plausible size: Kafka 4.4 fails to load the partition".into(),
        ));
        return;
    }
    let parsed = std::fs::read(&path)
        .map_err(|e| e.to_string())
        .and_then(|b| crate::producer::snapshot::decode_leader_epoch_checkpoint(&b));
    match parsed {
        Err(why) => findings.push(finding(
            Severity::Error,
            FindingKind::CorruptLeaderEpochCheckpoint,
            Some(NAME),
            format!("{why}: Kafka 4.4 fails to load the partition (the log directory goes offline); this library's loader rebuilds the cache from the batches"),
        )),
        Ok(entries) => {
            let ahead: Vec<(i32, i64)> = entries.into_iter().filter(|&(_, o)| o > leo).collect();
            if !ahead.is_empty() {
                findings.push(finding(
                    Severity::Warning,
                    FindingKind::LeaderEpochAheadOfLog,
                    Some(NAME),
                    format!("entries {ahead:?} start above the log end offset {leo}: the broker removes them (truncateFromEnd)"),
                ));
            }
        }
    }
}
