//! field case B5(d): a legacy segment whose offsets are not representable relative to its base
//! offset (base 0 holding 0–9 and 3_000_000_000–3_000_000_009) is split into several
//! segments on load (Kafka's `.cleaned` → `.swap` → final), never refused and never
//! indexed with wrapped relative offsets. A failure (or crash) at any step of the split
//! leaves files that the next open rolls back or completes.
use std::path::Path;
use std::sync::Arc;

use crate::common::*;
use segment::fs::{Fault, FaultyFs, FsOp, EIO};
use segment::record::{BatchBuilder, LegacyMessage};
use segment::{Log, LogConfig};

const HIGH: i64 = 3_000_000_000;
const BASE0: &str = "00000000000000000000";
const BASE_HIGH: &str = "00000000003000000000";

fn legacy_v1_bytes() -> Vec<u8> {
    let mut bytes = Vec::new();
    for o in (0..10).chain(HIGH..HIGH + 10) {
        bytes.extend(
            LegacyMessage::v1(o, 1_000 + o % 100, b"v")
                .to_vec()
                .unwrap(),
        );
    }
    bytes
}

fn v2_bytes() -> Vec<u8> {
    let mut bytes = Vec::new();
    for base in [0, 5, HIGH, HIGH + 5] {
        let mut b = BatchBuilder::new(base);
        for _ in 0..5 {
            b = b.record(2_000, None, Some(b"value"));
        }
        bytes.extend(b.build().unwrap());
    }
    bytes
}

fn expected_offsets() -> Vec<i64> {
    (0..10).chain(HIGH..HIGH + 10).collect()
}

/// Every record offset readable from the log, following segments.
fn all_offsets(log: &Log) -> Vec<i64> {
    let mut out = Vec::new();
    let mut o = log.log_start_offset();
    while o < log.log_end_offset() {
        let r = log.read(o, 1 << 20).unwrap();
        let offs = offsets_in(&r.records);
        let Some(&last) = offs.last() else { break };
        out.extend(offs.into_iter().filter(|&x| x >= o));
        o = last + 1;
    }
    out
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Relative offsets of every entry of an offset index file are within `[0, i32::MAX]`
/// and increasing.
fn assert_index_sane(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let mut last = -1i64;
    for e in bytes.chunks_exact(8) {
        let rel = i32::from_be_bytes([e[0], e[1], e[2], e[3]]) as i64;
        assert!(
            rel > last,
            "{}: relative offset {rel} after {last}",
            path.display()
        );
        last = rel;
    }
}

fn assert_split(dir: &Path, original: &[u8], log: &Log) {
    assert_eq!(log.segments().base_offsets(), vec![0, HIGH]);
    assert_eq!(all_offsets(log), expected_offsets());
    assert_eq!(log.log_end_offset(), HIGH + 10);
    let files = names_in(dir);
    assert!(
        files
            .iter()
            .all(|f| !f.ends_with(".cleaned") && !f.ends_with(".swap") && !f.ends_with(".deleted")),
        "leftover temporary files: {files:?}"
    );
    // the pieces hold exactly the original bytes, split at the first batch of HIGH
    let a = std::fs::read(dir.join(format!("{BASE0}.log"))).unwrap();
    let b = std::fs::read(dir.join(format!("{BASE_HIGH}.log"))).unwrap();
    assert_eq!([a, b].concat(), original);
    for base in [BASE0, BASE_HIGH] {
        assert_index_sane(&dir.join(format!("{base}.index")));
    }
    // lookups go to the right piece
    assert_eq!(offsets_in(&log.read(5, 1).unwrap().records)[0], 5);
    let r = log.read(HIGH + 7, 1).unwrap();
    assert!(offsets_in(&r.records).contains(&(HIGH + 7)));
    assert_eq!(r.fetch_offset_metadata.segment_base_offset, HIGH);
}

fn write_legacy_segment(dir: &Path, bytes: &[u8]) {
    std::fs::write(dir.join(format!("{BASE0}.log")), bytes).unwrap();
}

/// Magic v1 messages at `offsets` (timestamp 1000, value `v`), back to back.
fn legacy_messages(offsets: impl IntoIterator<Item = i64>) -> Vec<u8> {
    offsets
        .into_iter()
        .flat_map(|o| LegacyMessage::v1(o, 1_000, b"v").to_vec().unwrap())
        .collect()
}

/// The state after a crash once every piece of the split of `bytes` (segment 0) is a
/// `.swap` file, before the old segment was deleted: real pieces, produced by a first
/// open in another directory, copied in as `.swap` files beside the old `0.log`.
fn pre_swap_dir(bytes: &[u8], cfg: &LogConfig, clock: &segment::Clock) -> tempfile::TempDir {
    let tmp = tmpdir();
    write_legacy_segment(tmp.path(), bytes);
    open_log(tmp.path(), cfg.clone(), clock.clone()).close_handlers();
    let dir = tmpdir();
    for f in names_in(tmp.path()) {
        if f.starts_with(BASE0) || f.starts_with(BASE_HIGH) {
            std::fs::copy(tmp.path().join(&f), dir.path().join(format!("{f}.swap"))).unwrap();
        }
    }
    write_legacy_segment(dir.path(), bytes);
    dir
}

#[test]
fn b5d_legacy_v1_segment_is_split_on_load() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let bytes = legacy_v1_bytes();
    write_legacy_segment(dir.path(), &bytes);
    let mtime = 1_600_000_000_000;
    segment::fs::set_last_modified_ms(&dir.path().join(format!("{BASE0}.log")), mtime).unwrap();
    let log = open_log(dir.path(), config(1, 4096), clock.clone());
    assert_split(dir.path(), &bytes, &log);
    // the pieces keep the old segment's mtime (retention by mtime for timestamp-less data)
    for s in log.segments().values() {
        assert_eq!(s.last_modified().unwrap(), mtime);
    }
    // the log keeps working: appends go after the last piece
    let next = log.log_end_offset();
    log.append(&batch(next, 3, 5_000)).unwrap();
    log.close().unwrap();
    let log = open_log(dir.path(), config(1, 4096), clock);
    assert_eq!(log.stats().scanned_segments(), 0);
    assert_eq!(log.log_end_offset(), HIGH + 13);
}

#[test]
fn b5d_v2_segment_is_split_on_load_also_below_the_recovery_point() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let bytes = v2_bytes();
    write_legacy_segment(dir.path(), &bytes);
    // a clean shutdown and a recovery point past the data: the segment is only
    // recovered because its index is missing, and is split all the same
    std::fs::write(
        dir.path().join("recovery-point"),
        format!("0\n{}\n", HIGH + 10),
    )
    .unwrap();
    std::fs::write(dir.path().join(".kafka_cleanshutdown"), b"").unwrap();
    let log = open_log(dir.path(), config(1, 4096), clock);
    assert_split(dir.path(), &bytes, &log);
}

#[test]
fn b5d_split_keeps_a_torn_tail_for_recovery_to_truncate() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let mut bytes = legacy_v1_bytes();
    let good = bytes.clone();
    bytes.extend(&LegacyMessage::v1(HIGH + 10, 1, b"torn").to_vec().unwrap()[..20]);
    write_legacy_segment(dir.path(), &bytes);
    let log = open_log(dir.path(), config(1, 4096), clock);
    assert_split(dir.path(), &good, &log);
    assert_eq!(
        log.stats()
            .bytes_truncated
            .load(std::sync::atomic::Ordering::Relaxed),
        20
    );
}

/// Fails the `k`-th operation of kind `op` during the first open, then reopens without
/// faults: the result is always the completed split, whatever was left behind.
#[test]
fn b5d_failure_at_every_step_of_the_split_rolls_back_or_completes() {
    let cfg = config(1, 4096);
    let mut saw_cleaned = false;
    let mut saw_swap = false;
    let mut failures = 0;
    for op in [
        FsOp::Write,
        FsOp::Sync,
        FsOp::SetLen,
        FsOp::Rename,
        FsOp::IndexRename,
        FsOp::Remove,
        FsOp::IndexRemove,
        FsOp::IndexTrim,
        FsOp::SyncDir,
        FsOp::WriteFile,
    ] {
        for k in 0.. {
            let dir = tmpdir();
            let (_t, clock) = mock();
            let bytes = legacy_v1_bytes();
            write_legacy_segment(dir.path(), &bytes);
            let fs = Arc::new(FaultyFs::new());
            fs.inject(Fault::new(op, EIO).after(k).times(1));
            let first = Log::options()
                .clock(clock.clone())
                .fs(fs.clone())
                .open(dir.path(), cfg.clone());
            if fs.injected() == 0 {
                // no more operations of this kind: the split completed
                assert_split(dir.path(), &bytes, &first.unwrap());
                break;
            }
            match first {
                Err(e) => {
                    failures += 1;
                    assert!(
                        matches!(
                            e,
                            segment::SegmentError::Io { .. } | segment::SegmentError::Index(_)
                        ),
                        "{op:?}#{k}: {e}"
                    );
                    let files = names_in(dir.path());
                    saw_cleaned |= files.iter().any(|f| f.ends_with(".cleaned"));
                    saw_swap |= files.iter().any(|f| f.ends_with(".swap"));
                    assert!(!files.iter().any(|f| f == ".kafka_cleanshutdown"));
                }
                // a failure the open could absorb (e.g. a deletion it retries later)
                Ok(log) => log.close_handlers(),
            }
            let log = open_log(dir.path(), cfg.clone(), clock);
            assert_split(dir.path(), &bytes, &log);
            assert!(k < 200, "{op:?}: too many operations");
        }
    }
    assert!(
        failures > 10,
        "only {failures} injected failures failed the open"
    );
    assert!(saw_cleaned, "no failure left .cleaned files behind");
    assert!(saw_swap, "no failure left .swap files behind");
}

#[test]
fn leftover_cleaned_and_swap_files_of_an_unfinished_split_are_rolled_back() {
    // the state after a crash in the middle of `.cleaned` → `.swap` (renamed from the
    // highest base down): the high piece is `.swap`, the low one still `.cleaned`
    let dir = tmpdir();
    let (_t, clock) = mock();
    let bytes = legacy_v1_bytes();
    write_legacy_segment(dir.path(), &bytes);
    let split: usize = bytes.len() / 2;
    std::fs::write(
        dir.path().join(format!("{BASE0}.log.cleaned")),
        &bytes[..split],
    )
    .unwrap();
    std::fs::write(
        dir.path().join(format!("{BASE_HIGH}.log.swap")),
        &bytes[split..],
    )
    .unwrap();
    std::fs::write(dir.path().join(format!("{BASE_HIGH}.index.swap")), [0u8; 0]).unwrap();
    let log = open_log(dir.path(), config(1, 4096), clock);
    assert_split(dir.path(), &bytes, &log);
}

#[test]
fn complete_swap_files_replace_the_old_segment() {
    // the state after a crash once every piece is `.swap` and before the old segment was
    // deleted: the swap is completed (the old segment's files in [0, HIGH + 10) go)
    let (_t, clock) = mock();
    let bytes = legacy_v1_bytes();
    let cfg = LogConfig { ..config(1, 4096) };
    let dir = pre_swap_dir(&bytes, &cfg, &clock);
    std::fs::write(dir.path().join(format!("{BASE0}.index")), vec![0u8; 4096]).unwrap();
    let log = open_log(dir.path(), cfg, clock);
    assert_split(dir.path(), &bytes, &log);
}

#[test]
fn an_unfinished_splits_swap_files_are_durably_gone_before_its_cleaned_files() {
    // Rolling back an unfinished split deletes its `.swap` files, syncs the directory,
    // and only then deletes the `.cleaned` files: a crash in between must never leave
    // `.swap` files without `.cleaned` ones, which the next open would take for a
    // complete split. So the first directory sync after the `.swap` file is gone must
    // find the old `.cleaned` file still there (told apart from a new split's piece by
    // its content: a quarter of the bytes, where a new piece holds half).
    let bytes = legacy_v1_bytes();
    let partial = &bytes[..bytes.len() / 4];
    let mut checked = false;
    for k in 0..100 {
        let dir = tmpdir();
        let (_t, clock) = mock();
        write_legacy_segment(dir.path(), &bytes);
        let cleaned = dir.path().join(format!("{BASE0}.log.cleaned"));
        let swap = dir.path().join(format!("{BASE_HIGH}.log.swap"));
        std::fs::write(&cleaned, partial).unwrap();
        std::fs::write(&swap, &bytes[bytes.len() / 2..]).unwrap();
        let fs = Arc::new(FaultyFs::new());
        fs.inject(Fault::new(FsOp::SyncDir, EIO).after(k).times(1));
        let first = Log::options()
            .clock(clock.clone())
            .fs(fs.clone())
            .open(dir.path(), config(1, 4096));
        assert_eq!(fs.injected(), 1, "directory sync #{k} never came");
        assert!(
            matches!(first, Err(segment::SegmentError::Io { .. })),
            "a failed directory sync fails the open"
        );
        if !swap.exists() {
            assert_eq!(
                std::fs::read(&cleaned).ok().as_deref(),
                Some(partial),
                "directory sync #{k}: the old .cleaned file must outlive the sync that makes the .swap deletion durable"
            );
            checked = true;
        }
        let log = open_log(dir.path(), config(1, 4096), clock);
        assert_split(dir.path(), &bytes, &log);
        if checked {
            break;
        }
    }
    assert!(
        checked,
        "no directory sync came after the .swap file's deletion"
    );
}

#[test]
fn completing_a_swap_deletes_the_replaced_segments_and_nothing_else() {
    // A crash after the pieces 0 and HIGH became `.swap` files, before the segments they
    // replace were deleted: besides the split segment 0 (its files are overwritten by the
    // renames), an older segment 5 lies in the replaced range [0, HIGH + 10). Completing
    // the swap must delete it (else offsets 5..10 would be served twice), and must leave
    // alone a file in that range that is not a segment file.
    let bytes = legacy_v1_bytes();
    let (_t, clock) = mock();
    let cfg = config(1, 4096);
    let dir = pre_swap_dir(&bytes, &cfg, &clock);
    let old5 = legacy_messages(5..10);
    let base5 = "00000000000000000005";
    std::fs::write(dir.path().join(format!("{base5}.log")), old5).unwrap();
    let foreign = dir.path().join(format!("{base5}.keep"));
    std::fs::write(&foreign, b"not ours").unwrap();
    // the segment right after the replaced range starts at its end, HIGH + 10: it stays
    let later = legacy_messages(HIGH + 10..HIGH + 13);
    let later_name = format!("{:020}.log", HIGH + 10);
    std::fs::write(dir.path().join(&later_name), &later).unwrap();
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(log.segments().base_offsets(), vec![0, HIGH, HIGH + 10]);
    assert_eq!(std::fs::read(dir.path().join(&later_name)).unwrap(), later);
    let files = names_in(dir.path());
    assert!(
        !files
            .iter()
            .any(|f| f.starts_with(base5) && !f.ends_with(".keep")),
        "the replaced segment's files remain: {files:?}"
    );
    assert_eq!(std::fs::read(&foreign).unwrap(), b"not ours");
    let mut expected = expected_offsets();
    expected.extend(HIGH + 10..HIGH + 13);
    assert_eq!(all_offsets(&log), expected);
}

/// The state a crash can leave under a file system that keeps directory operations in
/// any order (no fsync between the renames): of the split of `bytes` (segment 0, still
/// whole), the lowest piece's files renamed `.cleaned` → `.swap`, the high piece's still
/// `.cleaned`. Kafka's loader keeps a `.swap` below the lowest `.cleaned` and completes
/// it, dropping the high piece's offsets
/// (`docs/kafka-behaviour.md#split-partial-swap`).
fn partial_swap_dir(bytes: &[u8], cfg: &LogConfig, clock: &segment::Clock) -> tempfile::TempDir {
    let tmp = tmpdir();
    write_legacy_segment(tmp.path(), bytes);
    open_log(tmp.path(), cfg.clone(), clock.clone()).close_handlers();
    let dir = tmpdir();
    for f in names_in(tmp.path()) {
        let is_segment_file = [".log", ".index", ".timeindex", ".txnindex"]
            .iter()
            .any(|s| f.ends_with(s));
        let suffix = if f.starts_with(BASE0) {
            ".swap"
        } else if f.starts_with(BASE_HIGH) {
            ".cleaned"
        } else {
            continue;
        };
        if is_segment_file {
            std::fs::copy(tmp.path().join(&f), dir.path().join(format!("{f}{suffix}"))).unwrap();
        }
    }
    write_legacy_segment(dir.path(), bytes);
    dir
}

#[test]
fn a_low_swap_beside_high_cleaned_pieces_rolls_the_split_back() {
    // The lowest piece `.swap`, the high one `.cleaned`, the old segment whole: the
    // replacement never reached its commit point (every piece `.swap`, durably, before
    // the old segment goes), so the open deletes the pieces and splits the old segment
    // again; nothing is lost and no temporary file is left.
    let bytes = legacy_v1_bytes();
    let (_t, clock) = mock();
    let cfg = config(1, 4096);
    let dir = partial_swap_dir(&bytes, &cfg, &clock);
    let files = names_in(dir.path());
    assert!(files.contains(&format!("{BASE0}.log.swap")), "{files:?}");
    assert!(
        files.contains(&format!("{BASE_HIGH}.log.cleaned")),
        "{files:?}"
    );
    let log = Log::options()
        .clock(clock.clone())
        .open(dir.path(), cfg.clone())
        .expect("the open rolls the unfinished split back");
    assert_split(dir.path(), &bytes, &log);
    assert!(log.stats().swap_replacement().is_none());
    log.close().unwrap();
    let log = open_log(dir.path(), cfg, clock);
    assert_split(dir.path(), &bytes, &log);
}

#[test]
fn a_low_swap_beside_high_cleaned_pieces_loses_nothing_below_a_later_segment() {
    // The same state with a later segment above the split one: Kafka's rule would accept
    // the low `.swap` (a segment above it is kept, so it could be a clean's) and drop the
    // high piece's offsets with the old segment. The open rolls the split back instead.
    let bytes = legacy_v1_bytes();
    let (_t, clock) = mock();
    let cfg = config(1, 4096);
    let dir = partial_swap_dir(&bytes, &cfg, &clock);
    let later = legacy_messages(HIGH + 10..HIGH + 13);
    let later_name = format!("{:020}.log", HIGH + 10);
    std::fs::write(dir.path().join(&later_name), &later).unwrap();
    let log = open_log(dir.path(), cfg, clock);
    assert!(log.stats().swap_replacement().is_none());
    assert_eq!(log.segments().base_offsets(), vec![0, HIGH, HIGH + 10]);
    let mut expected = expected_offsets();
    expected.extend(HIGH + 10..HIGH + 13);
    assert_eq!(all_offsets(&log), expected);
    let files = names_in(dir.path());
    assert!(
        files
            .iter()
            .all(|f| !f.ends_with(".cleaned") && !f.ends_with(".swap") && !f.ends_with(".deleted")),
        "leftover temporary files: {files:?}"
    );
}
