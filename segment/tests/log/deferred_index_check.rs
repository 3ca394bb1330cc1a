//! The load-time check of a small segment's index files waits for their first load
//! (docs/kafka-behaviour.md#deferred-index-check): the open reads none of them, every
//! use of a lying index first rebuilds it from the `.log` (once, whoever gets there
//! first), and a large segment's indexes are still checked at the open.
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crate::common::*;
use segment::fs::{FileSystem, FsRef, OpenMode};
use segment::{Log, LogConfig, LogSegment};

fn seg_file(dir: &Path, base: i64, ext: &str) -> PathBuf {
    dir.join(format!("{base:020}.{ext}"))
}

/// Records the index files opened through the seam.
#[derive(Debug, Default)]
struct IndexOpens(Mutex<Vec<PathBuf>>);

impl FileSystem for IndexOpens {
    fn open_file(&self, path: &Path, mode: OpenMode) -> io::Result<std::fs::File> {
        if path
            .extension()
            .is_some_and(|e| e == "index" || e == "timeindex")
        {
            self.0.lock().unwrap().push(path.to_path_buf());
        }
        mode.open(path)
    }
}

fn open_with(dir: &Path, cfg: LogConfig, fs: Option<FsRef>) -> Log {
    let (_t, clock) = mock();
    let mut o = Log::options().clock(clock);
    if let Some(fs) = fs {
        o = o.fs(fs);
    }
    o.open(dir, cfg).unwrap()
}

/// Small segments: about 400 bytes each.
fn small() -> LogConfig {
    LogConfig {
        segment_bytes: 400,
        ..config(100, 10 << 20)
    }
}

/// Segments of about 40 KB, longer than the whole-`.log` check.
fn large() -> LogConfig {
    LogConfig {
        segment_bytes: 40_000,
        ..config(4096, 10 << 20)
    }
}

/// A clean log of `batches` batches of 3 records; returns its segments' base offsets.
fn build(dir: &Path, cfg: &LogConfig, batches: usize) -> Vec<i64> {
    let log = open_with(dir, cfg.clone(), None);
    fill(&log, 0, batches, 3, 1_000);
    let bases = log.segments().base_offsets();
    log.close().unwrap();
    bases
}

fn rebuilt(log: &Log) -> u64 {
    log.stats().indexes_rebuilt.load(Ordering::Relaxed)
}

#[test]
fn a_clean_open_of_small_segments_opens_only_the_last_ones_index_files() {
    let dir = tmpdir();
    let bases = build(dir.path(), &small(), 60);
    assert!(bases.len() >= 10, "{} segments", bases.len());
    let fs = Arc::new(IndexOpens::default());
    let log = open_with(dir.path(), small(), Some(fs.clone()));
    let last = *bases.last().unwrap();
    let opened = fs.0.lock().unwrap().clone();
    assert!(
        opened.iter().all(|p| p
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(&format!("{last:020}"))),
        "index files opened by the open: {opened:?}"
    );
    for &b in &bases[..bases.len() - 1] {
        assert!(log.segments().get(b).unwrap().index_check_pending(), "{b}");
    }
    assert!(!log.segments().get(last).unwrap().index_check_pending());
    // A lookup in a segment makes its check, and only its.
    let mid = bases[bases.len() / 2];
    let r = log.read(mid, 1 << 20).unwrap();
    assert_eq!(offsets_in(&r.records).first(), Some(&mid));
    assert!(!log.segments().get(mid).unwrap().index_check_pending());
    assert!(log.segments().get(bases[0]).unwrap().index_check_pending());
    assert_eq!(read_all(&log, 0), (0..180).collect::<Vec<_>>());
    assert_eq!(rebuilt(&log), 0);
}

#[test]
fn a_large_segments_lying_index_is_still_rebuilt_by_the_open() {
    let dir = tmpdir();
    let bases = build(dir.path(), &large(), 1_200);
    assert!(bases.len() >= 3, "{} segments", bases.len());
    let mid = bases[1];
    assert!(
        std::fs::metadata(seg_file(dir.path(), mid, "log"))
            .unwrap()
            .len()
            > 16 << 10
    );
    lie_in_offset_index(dir.path(), mid);
    let log = open_with(dir.path(), large(), None);
    assert_eq!(rebuilt(&log), 1, "rebuilt by the open");
    assert!(!log.segments().get(mid).unwrap().index_check_pending());
    assert_eq!(read_all(&log, 0), (0..3_600).collect::<Vec<_>>());
}

/// Readers racing to a segment whose offset index lies: each is answered from the
/// rebuilt index, and the index is rebuilt once.
#[test]
fn concurrent_first_reads_of_a_lying_index_rebuild_it_once() {
    for round in 0..20 {
        let dir = tmpdir();
        let bases = build(dir.path(), &small(), 30);
        let mid = bases[bases.len() / 2];
        let next = bases[bases.len() / 2 + 1];
        lie_in_offset_index(dir.path(), mid);
        let log = Arc::new(open_with(dir.path(), small(), None));
        assert_eq!(rebuilt(&log), 0);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let log = log.clone();
                std::thread::spawn(move || {
                    let mut got = Vec::new();
                    for k in 0..(next - mid) {
                        let o = mid + (k + t) % (next - mid);
                        let r = log.read(o, 1 << 20).unwrap();
                        got.push((o, offsets_in(&r.records).into_iter().find(|&x| x >= o)));
                    }
                    got
                })
            })
            .collect();
        for t in threads {
            for (o, first) in t.join().unwrap() {
                assert_eq!(first, Some(o), "round {round}: read({o})");
            }
        }
        assert_eq!(rebuilt(&log), 1, "round {round}");
    }
}

/// What the deferred check rebuilds is what a recovery of the segment writes.
#[test]
fn the_deferred_rebuild_writes_what_recovery_writes() {
    let dir = tmpdir();
    let cfg = small();
    let bases = build(dir.path(), &cfg, 30);
    let mid = bases[1];
    // Recovery's indexes, from a copy of the segment.
    let copy = tmpdir();
    for ext in ["log", "index", "timeindex"] {
        std::fs::copy(
            seg_file(dir.path(), mid, ext),
            seg_file(copy.path(), mid, ext),
        )
        .unwrap();
    }
    let (_t, clock) = mock();
    let seg: LogSegment = reopen_segment(copy.path(), mid, &cfg, clock);
    let mut ps = segment::ProducerStateManager::new();
    assert_eq!(seg.recover(&mut ps, None).unwrap(), 0);
    seg.close().unwrap();
    // The deferred rebuild's, of the same segment with both indexes lying.
    lie_in_offset_index(dir.path(), mid);
    let ti = seg_file(dir.path(), mid, "timeindex");
    let mut bytes = std::fs::read(&ti).unwrap();
    bytes.extend(9_999_999i64.to_be_bytes());
    bytes.extend(500i32.to_be_bytes());
    std::fs::write(&ti, bytes).unwrap();
    let log = open_with(dir.path(), cfg, None);
    assert_eq!(rebuilt(&log), 0);
    log.read(mid, 1).unwrap();
    assert_eq!(rebuilt(&log), 1);
    log.close().unwrap();
    for ext in ["index", "timeindex"] {
        assert_eq!(
            std::fs::read(seg_file(dir.path(), mid, ext)).unwrap(),
            std::fs::read(seg_file(copy.path(), mid, ext)).unwrap(),
            ".{ext}"
        );
    }
}

/// The counter a rebuild is added to is the log's; a second log's is its own.
#[test]
fn a_rebuild_counts_in_its_own_logs_stats() {
    let (a, b) = (tmpdir(), tmpdir());
    let bases = build(a.path(), &small(), 30);
    build(b.path(), &small(), 30);
    lie_in_offset_index(a.path(), bases[2]);
    let (la, lb) = (
        open_with(a.path(), small(), None),
        open_with(b.path(), small(), None),
    );
    read_all(&la, 0);
    read_all(&lb, 0);
    assert_eq!((rebuilt(&la), rebuilt(&lb)), (1, 0));
}

// ---- Review of the deferred check (hostile cases) ----

/// Makes the segment's time index lie: a last entry beyond the segment's offsets, with a
/// timestamp above every record's.
fn lie_in_time_index(dir: &Path, base: i64) {
    let ti = seg_file(dir, base, "timeindex");
    let mut bytes = std::fs::read(&ti).unwrap();
    bytes.extend(9_999_999i64.to_be_bytes());
    bytes.extend(500i32.to_be_bytes());
    std::fs::write(&ti, bytes).unwrap();
}

/// The lazy index wrappers are public: a `get()` through them must not answer from an
/// index whose deferred check is still pending.
#[test]
fn the_lazy_index_wrappers_do_not_bypass_a_pending_check() {
    let dir = tmpdir();
    let bases = build(dir.path(), &small(), 30);
    let mid = bases[1];
    lie_in_offset_index(dir.path(), mid);
    let log = open_with(dir.path(), small(), None);
    let seg = log.segments().get(mid).unwrap();
    assert!(seg.index_check_pending());
    let size = seg.size();
    let oi = seg.lazy_offset_index().unwrap().get().unwrap();
    let last = oi.last_offset().unwrap();
    let at = oi.lookup(last).unwrap().position;
    assert!(
        u64::from(at) < size,
        "the lazy wrapper answered {last} at position {at} in a .log of {size} bytes"
    );
}

/// A truncation into a segment whose check is pending makes it the active segment; it
/// is appended to and read back whole.
#[test]
fn truncating_into_a_pending_lying_segment_then_appending_reads_back() {
    let dir = tmpdir();
    let bases = build(dir.path(), &small(), 30);
    let mid = bases[bases.len() / 2];
    let next = bases[bases.len() / 2 + 1];
    lie_in_offset_index(dir.path(), mid);
    lie_in_time_index(dir.path(), mid);
    let log = open_with(dir.path(), small(), None);
    assert!(log.segments().get(mid).unwrap().index_check_pending());
    let cut = mid + 3;
    assert!(cut < next);
    assert!(log.truncate_to(cut).unwrap());
    assert_eq!(log.log_end_offset(), cut);
    fill(&log, cut, 20, 3, 1_000);
    assert_eq!(read_all(&log, 0), (0..cut + 60).collect::<Vec<_>>());
    // The lie is gone from the time lookups too.
    let got = log.offset_for_timestamp(1_000 + mid).unwrap().unwrap();
    assert_eq!(got.offset, mid);
    log.close().unwrap();
    let log = open_with(dir.path(), small(), None);
    assert_eq!(read_all(&log, 0), (0..cut + 60).collect::<Vec<_>>());
}

/// A lying time index of a pending segment: the largest timestamp (retention, list
/// offsets) comes from the rebuilt index, not the lie.
#[test]
fn a_pending_lying_time_index_does_not_give_the_largest_timestamp() {
    let dir = tmpdir();
    let bases = build(dir.path(), &small(), 30);
    let mid = bases[1];
    lie_in_time_index(dir.path(), mid);
    let log = open_with(dir.path(), small(), None);
    let seg = log.segments().get(mid).unwrap();
    assert!(seg.index_check_pending());
    let ts = seg.largest_timestamp().unwrap();
    assert!(ts < 1_000 + bases[2], "largest timestamp {ts}");
    assert_eq!(rebuilt(&log), 1);
}

/// A pending segment renamed `.deleted` (retention) while a reader still holds it: the
/// reader's first index load neither panics nor answers from the lie.
#[test]
fn a_pending_segment_deleted_under_a_reader() {
    let dir = tmpdir();
    let bases = build(dir.path(), &small(), 30);
    let first = bases[0];
    lie_in_offset_index(dir.path(), first);
    let log = open_with(dir.path(), small(), None);
    let seg = log.segments().get(first).unwrap();
    assert!(seg.index_check_pending());
    log.increment_log_start_offset(bases[1]).unwrap();
    log.delete_old_segments().unwrap();
    // The reader's first load makes the check: the lie is rebuilt, in the renamed files.
    let oi = seg.offset_index().unwrap();
    let last = oi.last_offset().unwrap();
    let at = oi.lookup(last).unwrap().position;
    assert!(u64::from(at) < seg.size(), "{at}");
    assert_eq!(rebuilt(&log), 1);
    // No index file comes back under the segment's live name.
    for ext in ["index", "timeindex"] {
        assert!(!seg_file(dir.path(), first, ext).exists(), ".{ext}");
    }
}

/// Renames the target segment's files `.deleted` (as a retention or truncation deletion
/// does) the first time its live `.index` is opened once armed: the deletion landing
/// between the deferred check's reading of the index's path and its open.
#[derive(Default)]
struct RenameOnOpen {
    target: std::sync::OnceLock<(PathBuf, Arc<LogSegment>)>,
    fired: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for RenameOnOpen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RenameOnOpen")
    }
}

impl FileSystem for RenameOnOpen {
    fn open_file(&self, path: &Path, mode: OpenMode) -> io::Result<std::fs::File> {
        if let Some((p, seg)) = self.target.get() {
            if p == path && !self.fired.swap(true, Ordering::SeqCst) {
                seg.change_file_suffixes("", ".deleted").unwrap();
            }
        }
        mode.open(path)
    }
}

/// A segment renamed `.deleted` while a reader's first load makes its deferred check:
/// the check must not pass on the index it no longer finds under the old name and then
/// hand out the renamed, lying index.
#[test]
fn a_rename_during_the_deferred_check_does_not_let_a_lie_through() {
    let dir = tmpdir();
    let bases = build(dir.path(), &small(), 30);
    let mid = bases[1];
    lie_in_offset_index(dir.path(), mid);
    let fs = Arc::new(RenameOnOpen::default());
    let log = open_with(dir.path(), small(), Some(fs.clone()));
    let seg = log.segments().get(mid).unwrap();
    assert!(seg.index_check_pending());
    fs.target
        .set((seg_file(dir.path(), mid, "index"), seg.clone()))
        .unwrap();
    let size = seg.size();
    match seg.offset_index() {
        Ok(oi) => {
            assert!(fs.fired.load(Ordering::SeqCst), "the rename did not happen");
            let last = oi.last_offset().unwrap();
            let at = oi.lookup(last).unwrap().position;
            assert!(
                u64::from(at) < size,
                "answered {last} at position {at} in a .log of {size} bytes"
            );
            assert_eq!(rebuilt(&log), 1);
        }
        Err(e) => panic!("{e}"),
    }
}

/// A small segment whose `.log` runs into the next segment is recovered by the open
/// (after its index check was deferred): its lying index counts as one rebuild, not one
/// for the recovery and one for a deferred check the recovery's report set off.
#[test]
fn a_deferred_segment_recovered_by_the_open_counts_one_rebuild() {
    let dir = tmpdir();
    let bases = build(dir.path(), &small(), 30);
    assert!(bases.len() >= 4, "{bases:?}");
    let (a, b) = (bases[1], bases[2]);
    // The segment after `a` moves below `a`'s end: `a`'s next offset runs into it.
    for ext in ["log", "index", "timeindex", "txnindex"] {
        let from = seg_file(dir.path(), b, ext);
        if from.exists() {
            std::fs::rename(&from, seg_file(dir.path(), b - 1, ext)).unwrap();
        }
    }
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "snapshot") {
            std::fs::remove_file(p).unwrap();
        }
    }
    lie_in_offset_index(dir.path(), a);
    let log = open_with(dir.path(), small(), None);
    assert!(!log.segments().get(a).unwrap().index_check_pending());
    assert_eq!(rebuilt(&log), 1);
}

/// A close racing the first loads of a lying index: no panic, no hang, and a load that
/// succeeds never answers from the lie.
#[test]
fn a_close_racing_the_first_check() {
    for round in 0..20 {
        let dir = tmpdir();
        let bases = build(dir.path(), &small(), 30);
        let mid = bases[1];
        lie_in_offset_index(dir.path(), mid);
        lie_in_time_index(dir.path(), mid);
        let log = open_with(dir.path(), small(), None);
        let seg = log.segments().get(mid).unwrap();
        let size = seg.size();
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let seg = seg.clone();
                std::thread::spawn(move || match seg.offset_index() {
                    Ok(oi) => match oi.last_offset().and_then(|l| oi.lookup(l)) {
                        Ok(e) => Some(e.position),
                        Err(_) => None,
                    },
                    Err(_) => None,
                })
            })
            .collect();
        let closer = {
            let seg = seg.clone();
            std::thread::spawn(move || seg.close().is_ok())
        };
        for r in readers {
            if let Some(at) = r.join().unwrap() {
                assert!(
                    u64::from(at) < size,
                    "round {round}: position {at} of {size}"
                );
            }
        }
        closer.join().unwrap();
        assert!(rebuilt(&log) <= 1, "round {round}");
    }
}

/// Moves the log's directory away the first time the armed `.index` is opened: an
/// embedder's directory move landing during the deferred check, before it updates the
/// segments' paths (`LogSegments::update_parent_dir`).
#[derive(Debug, Default)]
struct MoveDirOnOpen {
    target: std::sync::OnceLock<(PathBuf, PathBuf, PathBuf)>,
    fired: std::sync::atomic::AtomicBool,
}

impl FileSystem for MoveDirOnOpen {
    fn open_file(&self, path: &Path, mode: OpenMode) -> io::Result<std::fs::File> {
        if let Some((p, from, to)) = self.target.get() {
            if p == path && !self.fired.swap(true, Ordering::SeqCst) {
                std::fs::rename(from, to).unwrap();
            }
        }
        mode.open(path)
    }
}

/// The deferred check finds no index file where the segment's paths say (its directory
/// was moved and the paths not updated yet): it must not count that as an index that
/// passed, or the first load after the paths' update maps the moved, lying index.
#[test]
fn a_directory_moved_during_the_deferred_check_does_not_let_a_lie_through() {
    let root = tmpdir();
    let dir = root.path().join("t-0");
    let moved = root.path().join("t-0.moved");
    std::fs::create_dir(&dir).unwrap();
    let bases = build(&dir, &small(), 30);
    let mid = bases[1];
    lie_in_offset_index(&dir, mid);
    let fs = Arc::new(MoveDirOnOpen::default());
    let log = open_with(&dir, small(), Some(fs.clone()));
    let seg = log.segments().get(mid).unwrap();
    assert!(seg.index_check_pending());
    fs.target
        .set((seg_file(&dir, mid, "index"), dir.clone(), moved.clone()))
        .unwrap();
    // The move lands during this first load's check: whatever it answers, not the lie.
    if let Ok(oi) = seg.offset_index() {
        let last = oi.last_offset().unwrap();
        assert!(u64::from(oi.lookup(last).unwrap().position) < seg.size());
    }
    assert!(fs.fired.load(Ordering::SeqCst));
    log.segments().update_parent_dir(&moved);
    let oi = seg.offset_index().unwrap();
    let last = oi.last_offset().unwrap();
    let at = oi.lookup(last).unwrap().position;
    assert!(
        u64::from(at) < seg.size(),
        "answered {last} at position {at} in a .log of {} bytes",
        seg.size()
    );
}
