//! Regression test of a `log_open` fuzz finding (issue 11): a `.log.swap` of garbage
//! beside a clean-shutdown marker. The swap was completed by renaming (as Kafka does), so
//! the garbage became the `.log` and was trusted by the clean open; appends went after
//! it and the next open's recovery truncated the whole file, losing 4 acknowledged
//! records. Since issue 19 (F3) a swap whose batches fail validation is refused
//! ([`SegmentError::SwapRefused`]) before anything is renamed; once the operator removes
//! it, as the error says, the log opens and the appended records survive a clean close.

use segment::record::BatchBuilder;
use segment::{KafkaBatchFormat, Log, LogConfig, MockTime};
use std::sync::Arc;

fn config() -> LogConfig {
    LogConfig {
        segment_bytes: 4096,
        max_index_size: 4096,
        index_interval_bytes: 128,
        retention_ms: 1000,
        ..LogConfig::default()
    }
}
#[test]
fn appends_after_a_garbage_swap_survive_a_clean_close() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    std::fs::create_dir_all(&dir).unwrap();
    let mut swap = Vec::new();
    for (t, o) in [
        (65449u16, 33554431u32),
        (257, 16843009),
        (257, 16843009),
        (257, 16843009),
        (257, 1630547969),
    ] {
        swap.extend((1_700_000_000_000i64 + i64::from(t)).to_be_bytes());
        swap.extend(o.to_be_bytes());
    }
    std::fs::write(dir.join("00000000000000000000.log.swap"), &swap).unwrap();
    std::fs::write(dir.join("00000000000000000000.index"), b"").unwrap();
    std::fs::write(dir.join(".kafka_cleanshutdown"), b"").unwrap();
    let clock = Arc::new(MockTime::new(1_700_000_000_000));
    let swap_file = dir.join("00000000000000000000.log.swap");
    match Log::options().clock(clock.clone()).open(&dir, config()) {
        Err(SegmentError::SwapRefused { path, action, .. }) => {
            assert_eq!(path, swap_file);
            assert!(action.contains("move the .swap files"), "{action}");
        }
        other => panic!("expected SwapRefused, got {other:?}"),
    }
    assert!(
        swap_file.exists(),
        "the refused swap is left for the operator"
    );
    std::fs::remove_file(&swap_file).unwrap();
    let log = Log::options()
        .clock(clock.clone())
        .open(&dir, config())
        .unwrap();
    assert_eq!(log.log_end_offset(), 0);
    assert_eq!(log.size(), 0, "the garbage of the swap file is not served");
    let _ = log.roll(None);
    for n in [3, 1] {
        let end = log.log_end_offset();
        let mut bb = BatchBuilder::new(end);
        for r in 0..n {
            bb = bb.record(1_700_000_000_000 + r, None, Some(b"new"));
        }
        let info = log.append(&bb.build().unwrap()).unwrap();
        assert_eq!(info.first_offset, end);
    }
    log.close().unwrap();
    let log = Log::options().clock(clock).open(&dir, config()).unwrap();
    assert_eq!(log.log_end_offset(), 4);
}

// Issue 19, F3 and the `.index.swap` finding: what a swap replaces is reported, a swap
// that fails validation or holds offsets outside what it replaces is refused, and no
// preallocated index is left behind (docs/kafka-behaviour.md#swap-refusal).

use crate::common::{batch, read_all, tmpdir};
use segment::log::SwapReplacement;
use segment::SegmentError;
use std::path::{Path, PathBuf};

fn swap_config() -> LogConfig {
    LogConfig {
        retention_ms: -1,
        index_interval_bytes: 128,
        ..LogConfig::default() // max_index_size 10 MiB, as in the finding
    }
}

fn clock() -> segment::Clock {
    Arc::new(MockTime::new(1_700_000_000_000))
}

/// Segments 0, 24, 48 and 72, six-record batches, cleanly closed.
fn four_segments(dir: &Path) {
    let log = Log::options()
        .clock(clock())
        .open(dir, swap_config())
        .unwrap();
    for s in 0..4 {
        if s > 0 {
            log.roll(None).unwrap();
        }
        for b in 0..4 {
            let o = s * 24 + b * 6;
            log.append(&batch(o, 6, 1_700_000_000_000 + o)).unwrap();
        }
    }
    log.close().unwrap();
}

fn seg(dir: &Path, base: i64, suffix: &str) -> PathBuf {
    dir.join(format!("{base:020}{suffix}"))
}

fn batches(offsets: &[i64]) -> Vec<u8> {
    offsets
        .iter()
        .flat_map(|&o| batch(o, 6, 1_700_000_000_000 + o))
        .collect()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn open(dir: &Path) -> segment::Result<Log> {
    Log::options().clock(clock()).open(dir, swap_config())
}

fn refused(r: segment::Result<Log>) -> (PathBuf, String) {
    match r {
        Err(SegmentError::SwapRefused {
            path,
            reason,
            action,
        }) => (path, format!("{reason}; {action}")),
        Err(e) => panic!("expected SwapRefused, got {e}"),
        Ok(_) => panic!("expected SwapRefused, the open succeeded"),
    }
}

#[test]
fn an_empty_swap_is_trusted_and_what_it_replaced_is_reported() {
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    std::fs::write(seg(dir, 0, ".log.swap"), b"").unwrap();
    let log = open(dir).unwrap();
    // Kafka's protocol: the swap is the cleaner's commit point and replaces segment 0.
    assert_eq!(
        crate::common::offsets_in(&log.read(0, 1 << 20).unwrap().records).first(),
        Some(&24)
    );
    let r: SwapReplacement = log.stats().swap_replacement().expect("reported");
    assert_eq!(r.swap_base_offsets, vec![0]);
    assert_eq!(r.replaced_base_offsets, vec![0]);
    assert_eq!(r.removed_offsets, vec![0..24]);
    assert_eq!((r.removed_offset_count, r.removed_ranges_omitted), (24, 0));
    assert!(
        names_in(dir).iter().all(|n| !n.ends_with(".swap")),
        "{:?}",
        names_in(dir)
    );
    assert_eq!(read_all(&log, 24), (24..96).collect::<Vec<_>>());
}

#[test]
fn a_cleaned_swap_reports_the_offsets_it_dropped() {
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    // A clean of segments 24 and 48 that kept batches 30, 42 and 66.
    std::fs::write(seg(dir, 24, ".log.swap"), batches(&[30, 42, 66])).unwrap();
    let log = open(dir).unwrap();
    let r = log.stats().swap_replacement().unwrap();
    assert_eq!(r.replaced_base_offsets, vec![24, 48]);
    assert_eq!(r.removed_offsets, vec![24..30, 36..42, 48..66]);
    assert_eq!(r.removed_offset_count, 30);
    assert_eq!(log.segments().base_offsets(), vec![0, 24, 72]);
    let mut want: Vec<i64> = (0..24).collect();
    want.extend(30..36);
    want.extend(42..48);
    want.extend(66..96);
    assert_eq!(read_all(&log, 0), want);
    drop(log);
    // No swap at all: nothing reported.
    let log = open(dir).unwrap();
    assert_eq!(log.stats().swap_replacement(), None);
}

#[test]
fn a_swap_that_fails_its_checksum_is_refused_and_nothing_is_touched() {
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    let mut bytes = batches(&[24, 30, 36, 42]);
    let n = bytes.len();
    bytes[n - 10] ^= 0x5A; // inside the last batch's records: its CRC fails
    std::fs::write(seg(dir, 24, ".log.swap"), &bytes).unwrap();
    let before = names_in(dir);
    let (path, msg) = refused(open(dir));
    assert_eq!(path, seg(dir, 24, ".log.swap"));
    assert!(msg.contains("fails validation"), "{msg}");
    assert!(
        msg.contains("[24]") && msg.contains("remove the .swap files"),
        "{msg}"
    );
    let mut after = names_in(dir);
    after.retain(|n| n != ".lock");
    let mut before = before;
    before.retain(|n| n != ".lock" && n != ".kafka_cleanshutdown");
    assert_eq!(
        after, before,
        "the refused open deleted or renamed nothing but the marker"
    );
    // What the operator is told to do works: remove the swap, keep the originals.
    std::fs::remove_file(seg(dir, 24, ".log.swap")).unwrap();
    let log = open(dir).unwrap();
    assert_eq!(read_all(&log, 0), (0..96).collect::<Vec<_>>());
}

#[test]
fn a_swap_with_a_torn_tail_is_refused() {
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    let bytes = batches(&[48, 54]);
    std::fs::write(seg(dir, 48, ".log.swap"), &bytes[..bytes.len() - 7]).unwrap();
    let (path, msg) = refused(open(dir));
    assert_eq!(path, seg(dir, 48, ".log.swap"));
    assert!(msg.contains("whole batch"), "{msg}");
}

#[test]
fn a_swap_holding_offsets_its_segments_never_held_is_refused() {
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    // Segment 72 holds 72..96; the swap holds offsets up to 125.
    std::fs::write(seg(dir, 72, ".log.swap"), batches(&[72, 96, 120])).unwrap();
    let (path, msg) = refused(open(dir));
    assert_eq!(path, seg(dir, 72, ".log.swap"));
    assert!(msg.contains("outside the offsets 72..96"), "{msg}");
    std::fs::remove_file(seg(dir, 72, ".log.swap")).unwrap();

    // A swap below the segment it replaces, holding offsets segment 0 still holds.
    std::fs::write(seg(dir, 12, ".log.swap"), batches(&[12, 18])).unwrap();
    let (path, msg) = refused(open(dir));
    assert_eq!(path, seg(dir, 12, ".log.swap"));
    assert!(msg.contains("does not replace"), "{msg}");
    assert!(msg.contains("no segment it would replace is left"), "{msg}");
    std::fs::remove_file(seg(dir, 12, ".log.swap")).unwrap();

    // Offsets that go backwards inside the swap.
    std::fs::write(seg(dir, 24, ".log.swap"), batches(&[30, 24])).unwrap();
    let (_, msg) = refused(open(dir));
    assert!(msg.contains("do not increase"), "{msg}");
    std::fs::remove_file(seg(dir, 24, ".log.swap")).unwrap();
    let log = open(dir).unwrap();
    assert_eq!(read_all(&log, 0), (0..96).collect::<Vec<_>>());
}

#[test]
fn a_swap_whose_originals_are_gone_or_deleted_is_completed() {
    // A crash after the old segment was deleted, before the swap was renamed (the
    // split's order): nothing left to compare with, the swap is the only copy.
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    for s in [".log", ".index", ".timeindex"] {
        std::fs::remove_file(seg(dir, 24, s)).unwrap();
    }
    std::fs::write(seg(dir, 24, ".log.swap"), batches(&[24, 30, 36, 42])).unwrap();
    let log = open(dir).unwrap();
    assert_eq!(read_all(&log, 0), (0..96).collect::<Vec<_>>());
    let r = log.stats().swap_replacement().unwrap();
    assert_eq!(
        (r.replaced_base_offsets, r.removed_offsets),
        (vec![], vec![])
    );
    drop(log);

    // A crash in the middle of a clean of 24 and 48: 48 already renamed `.deleted`. The
    // offsets it held that the swap does not hold are reported with the live one's.
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    rename_deleted(dir, 48);
    std::fs::write(seg(dir, 24, ".log.swap"), batches(&[24, 54, 66])).unwrap();
    let log = open(dir).unwrap();
    let r = log.stats().swap_replacement().unwrap();
    assert_eq!(r.replaced_base_offsets, vec![24, 48]);
    assert_eq!(r.deleted_base_offsets, vec![48]);
    assert_eq!(r.removed_offsets, vec![30..54, 60..66]);
    assert_eq!(r.removed_offset_count, 30);
    assert_eq!(log.log_end_offset(), 96);
    assert!(names_in(dir).iter().all(|n| !n.ends_with(".deleted")));
    let mut want: Vec<i64> = (0..30).collect();
    want.extend(54..60);
    want.extend(66..96);
    assert_eq!(read_all(&log, 0), want);
}

/// Renames the files of segment `base` `.deleted`, as Kafka's `replaceSegments` does
/// before the swap is renamed.
fn rename_deleted(dir: &Path, base: i64) {
    for s in [".log", ".index", ".timeindex"] {
        std::fs::rename(seg(dir, base, s), seg(dir, base, &format!("{s}.deleted"))).unwrap();
    }
}

// Issue 37: swaps are never silent. Kafka's cleaner writes one segment at the base offset
// of the first segment it cleans, even when it removed every record, and never cleans the
// active segment; the loader's split keeps every batch (docs/kafka-behaviour.md#swap-refusal).

/// An empty swap whose segment a crash had already renamed `.deleted`: the cleaner removed
/// every record of segment 24. The 24 offsets it held are reported, not dropped silently.
#[test]
fn an_empty_swap_over_a_deleted_segment_reports_its_offsets() {
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    rename_deleted(dir, 24);
    std::fs::write(seg(dir, 24, ".log.swap"), b"").unwrap();
    let log = open(dir).unwrap();
    let r = log.stats().swap_replacement().expect("reported");
    assert_eq!(r.swap_base_offsets, vec![24]);
    assert_eq!(r.replaced_base_offsets, vec![24]);
    assert_eq!(r.deleted_base_offsets, vec![24]);
    assert_eq!(r.removed_offsets, vec![24..48]);
    assert_eq!((r.removed_offset_count, r.removed_ranges_omitted), (24, 0));
    let mut want: Vec<i64> = (0..24).collect();
    want.extend(48..96);
    assert_eq!(read_all(&log, 0), want);
    assert_eq!(log.log_end_offset(), 96);
}

/// A swap that replaces the log's last segment (no segment above it is kept) and drops
/// offsets of it: the cleaner never cleans the active segment and a split keeps every
/// batch, so it is refused before anything is touched, whether the segment is live or a
/// crash had renamed it `.deleted`. A swap holding every batch of the last segment (a
/// split's piece) is still completed.
#[test]
fn a_swap_that_drops_offsets_of_the_last_segment_is_refused() {
    // One 24-record segment and an empty swap: all 24 offsets would be gone.
    let tmp = tmpdir();
    let dir = tmp.path();
    {
        let log = open(dir).unwrap();
        for b in 0..4 {
            log.append(&batch(b * 6, 6, 1_700_000_000_000 + b * 6))
                .unwrap();
        }
        log.close().unwrap();
    }
    std::fs::write(seg(dir, 0, ".log.swap"), b"").unwrap();
    let (path, msg) = refused(open(dir));
    assert_eq!(path, seg(dir, 0, ".log.swap"));
    assert!(msg.contains("holds no batch"), "{msg}");
    assert!(msg.contains("dropping offsets 0..24"), "{msg}");
    assert!(
        msg.contains("[0]") && msg.contains("remove the .swap files"),
        "{msg}"
    );
    assert!(seg(dir, 0, ".log").exists() && seg(dir, 0, ".log.swap").exists());
    std::fs::remove_file(seg(dir, 0, ".log.swap")).unwrap();
    let log = open(dir).unwrap();
    assert_eq!(read_all(&log, 0), (0..24).collect::<Vec<_>>());
    drop(log);

    // The same with the segment already renamed `.deleted`: the operator is told to
    // rename it back, which the refused open leaves possible.
    rename_deleted(dir, 0);
    std::fs::write(seg(dir, 0, ".log.swap"), b"").unwrap();
    let (_, msg) = refused(open(dir));
    assert!(msg.contains("holds no batch"), "{msg}");
    assert!(
        msg.contains("[0] were already renamed .deleted")
            && msg.contains("drop the .deleted suffix"),
        "{msg}"
    );
    assert!(seg(dir, 0, ".log.deleted").exists());
    std::fs::remove_file(seg(dir, 0, ".log.swap")).unwrap();
    for s in [".log", ".index", ".timeindex"] {
        std::fs::rename(seg(dir, 0, &format!("{s}.deleted")), seg(dir, 0, s)).unwrap();
    }
    let log = open(dir).unwrap();
    assert_eq!(read_all(&log, 0), (0..24).collect::<Vec<_>>());
    drop(log);

    // Four segments: an empty swap of the active one, and one that keeps half of it.
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    std::fs::write(seg(dir, 72, ".log.swap"), b"").unwrap();
    let (path, msg) = refused(open(dir));
    assert_eq!(path, seg(dir, 72, ".log.swap"));
    assert!(msg.contains("dropping offsets 72..96"), "{msg}");
    std::fs::write(seg(dir, 72, ".log.swap"), batches(&[72, 78])).unwrap();
    let (_, msg) = refused(open(dir));
    assert!(msg.contains("drop offsets 84..96"), "{msg}");
    // A clean of 48 and the active 72, 72 already `.deleted`: not the cleaner's either.
    std::fs::remove_file(seg(dir, 72, ".log.swap")).unwrap();
    rename_deleted(dir, 72);
    std::fs::write(seg(dir, 48, ".log.swap"), batches(&[48, 78, 90])).unwrap();
    let (_, msg) = refused(open(dir));
    assert!(msg.contains("drop offsets 54..78, 84..90"), "{msg}");
    assert!(msg.contains("[72] were already renamed .deleted"), "{msg}");
    for s in [".log", ".index", ".timeindex"] {
        std::fs::rename(seg(dir, 72, &format!("{s}.deleted")), seg(dir, 72, s)).unwrap();
    }
    // Every batch of the last segment (a split's piece): completed, nothing dropped.
    std::fs::remove_file(seg(dir, 48, ".log.swap")).unwrap();
    std::fs::write(seg(dir, 72, ".log.swap"), batches(&[72, 78, 84, 90])).unwrap();
    let log = open(dir).unwrap();
    let r = log.stats().swap_replacement().unwrap();
    assert_eq!(
        (r.replaced_base_offsets, r.removed_offsets),
        (vec![72], vec![])
    );
    assert_eq!(read_all(&log, 0), (0..96).collect::<Vec<_>>());
}

/// An empty swap that is no cleaner's output because a segment it does not replace
/// holds offsets at or above its base (a cleaned segment starts where the segment it
/// replaces started), or because it lies at the log end with nothing to replace: refused,
/// where it used to become an empty segment inside another's offsets or a new last one.
#[test]
fn an_empty_swap_that_replaces_nothing_is_refused() {
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    for (base, want) in [
        (
            30,
            "00000000000000000024.log (which it does not replace) holds offsets up to 47",
        ),
        (
            5,
            "00000000000000000000.log (which it does not replace) holds offsets up to 23",
        ),
        (96, "holds no batch and no segment above it is kept"),
    ] {
        std::fs::write(seg(dir, base, ".log.swap"), b"").unwrap();
        let (path, msg) = refused(open(dir));
        assert_eq!(path, seg(dir, base, ".log.swap"));
        assert!(msg.contains(want), "{base}: {msg}");
        assert!(msg.contains("move the .swap files"), "{base}: {msg}");
        std::fs::remove_file(seg(dir, base, ".log.swap")).unwrap();
    }
    let log = open(dir).unwrap();
    assert_eq!(read_all(&log, 0), (0..96).collect::<Vec<_>>());
    assert_eq!(log.stats().swap_replacement(), None);
}

/// The old finding: completing a swap mapped its index, which created a preallocated
/// 10 MiB zero-filled `.index.swap` that the renames missed; the next open renamed it over
/// the real `.index` and rebuilt it.
#[test]
fn a_swap_merge_leaves_no_preallocated_index_and_the_next_open_rebuilds_nothing() {
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    // A cleaned segment 0 written as the split writes its pieces: indexes and all,
    // trimmed, then renamed to `.swap`.
    let piece = segment::LogSegment::<KafkaBatchFormat>::open(
        dir,
        0,
        &swap_config(),
        segment::SegmentOptions::existing()
            .suffix(".swap")
            .clock(clock()),
    )
    .unwrap();
    piece.log().append(&batches(&[6, 12, 18])).unwrap();
    piece
        .recover(&mut segment::ProducerStateManager::new(), None)
        .unwrap();
    piece.on_become_inactive_segment().unwrap();
    piece.flush().unwrap();
    piece.close_handlers();
    let index_swap = std::fs::metadata(seg(dir, 0, ".index.swap")).unwrap().len();
    assert!(index_swap < 4096, "{index_swap}");
    // And one without index files, for the next segment of the same clean.
    std::fs::write(seg(dir, 24, ".log.swap"), batches(&[30, 36])).unwrap();

    let log = open(dir).unwrap();
    assert_eq!(
        log.stats()
            .swap_replacement()
            .unwrap()
            .replaced_base_offsets,
        vec![0, 24]
    );
    for n in names_in(dir) {
        assert!(
            !n.ends_with(".swap"),
            "{n} left behind: {:?}",
            names_in(dir)
        );
    }
    for base in [0, 24] {
        for s in [".index", ".timeindex"] {
            let len = std::fs::metadata(seg(dir, base, s)).map_or(0, |m| m.len());
            assert!(len < 4096, "{base}{s}: {len} bytes");
        }
    }
    assert_eq!(
        std::fs::metadata(seg(dir, 0, ".index")).unwrap().len(),
        index_swap
    );
    log.close().unwrap();

    let log = open(dir).unwrap();
    let st = log.stats();
    assert_eq!(
        st.indexes_rebuilt
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );
    assert_eq!(
        st.scanned_segments(),
        0,
        "the clean reopen recovers nothing"
    );
    let mut want: Vec<i64> = (6..24).collect();
    want.extend(30..42);
    want.extend(48..96);
    assert_eq!(read_all(&log, 6), want);
}

/// `cargo xtask crash`'s cleaning workloads: a clean of segments 0 and 24 swapped in at 0
/// keeps only batches of segment 0's upper half and of segment 24; with
/// `file.delete.delay.ms` 0 the crash kept the unlink of segment 0's `.deleted` files but
/// not the renames after it, so segment 0 is gone and segment 24 is `.deleted`. The
/// swap's offsets below 24 were segment 0's (its base is the swap's): the open completes
/// it (it once refused it as holding offsets outside 24..48), as Kafka does.
#[test]
fn a_swap_whose_first_original_is_gone_is_completed() {
    let tmp = tmpdir();
    let dir = tmp.path();
    four_segments(dir);
    std::fs::write(seg(dir, 0, ".log.swap"), batches(&[12, 18, 30, 42])).unwrap();
    for ext in [".log", ".index", ".timeindex"] {
        std::fs::remove_file(seg(dir, 0, ext)).unwrap();
        std::fs::rename(seg(dir, 24, ext), seg(dir, 24, &format!("{ext}.deleted"))).unwrap();
    }
    let log = open(dir).unwrap();
    let mut want: Vec<i64> = (12..24).collect();
    want.extend(30..36);
    want.extend(42..96);
    assert_eq!(read_all(&log, 0), want);
    let report = log
        .stats()
        .swap_replacement()
        .expect("a completed swap is reported");
    assert_eq!(report.swap_base_offsets, vec![0]);
    assert_eq!(report.deleted_base_offsets, vec![24]);
    log.close().unwrap();
}
