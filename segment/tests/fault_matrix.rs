//! Issue 19, section 2: I/O faults injected through the file-system seam, and the file
//! descriptors a log holds.
//!
//! * F4: a read through every segment of a log holds no index descriptor afterwards
//!   (run in a child process under `ulimit -n 450`), and a flush that cannot *open* a file
//!   (`EMFILE`) returns a typed error and leaves the log online
//!   (`docs/kafka-behaviour.md#file-descriptors`, `#offline-rule`).
//! * A log that cannot grow still opens (`#deferred-snapshots`); `truncate_to` fsyncs the
//!   cut before checkpointing it (`#truncate-fsync`).
//! * Kafka's 2026 bug classes, one named test each (`#durable-trims`): KAFKA-20979 (an
//!   index trim not fsynced on shutdown), KAFKA-21000 (the `.log` flushed before it is
//!   trimmed), KAFKA-19200 (a full-size never-written `.timeindex` below the recovery
//!   point), KAFKA-10207 (an untrimmed index).
//! * Issue 42: `delete_local_through` is a row of the matrix (a log with remote storage;
//!   no fault deletes data that is not uploaded or moves the log start,
//!   `docs/kafka-behaviour.md#delete-local-through`), with its sabotage.
#[expect(
    dead_code,
    reason = "a single-scenario binary: it uses a few of the shared helpers"
)]
mod common;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::*;
use segment::fs::{Fault, FaultyFs, FileSystem, FsOp, OpenMode, RealFs, EIO, ENOSPC};
use segment::record::{BatchBuilder, ControlRecordType};
use segment::{KafkaBatchFormat, Log, LogConfig, SegmentError};

/// Set (to the descriptor limit) in the child processes that [`run_under_fd_limit`]
/// starts; the child tests are `#[ignore]`d so that a plain `cargo test` runs them only
/// through their parent.
const FD_CHILD_ENV: &str = "FAULT_MATRIX_FD_LIMIT";

/// `EMFILE`: the process is out of file descriptors.
const EMFILE: i32 = 24;

/// The OS error number inside `e`, whichever layer reported it.
fn errno(e: &SegmentError) -> Option<i32> {
    match e {
        SegmentError::Io { source, .. } => source.raw_os_error(),
        SegmentError::Index(index_core::IndexError::Io { source, .. }) => source.raw_os_error(),
        SegmentError::TxnIndex(index_txn::TxnIndexError::Io { source, .. }) => {
            source.raw_os_error()
        }
        _ => None,
    }
}

/// Open file descriptors of this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// The soft `RLIMIT_NOFILE` of this process, from `/proc/self/limits`.
fn fd_soft_limit() -> u64 {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    line.split_whitespace().nth(3).unwrap().parse().unwrap()
}

/// Runs the ignored test `name` of this binary in a child process whose descriptor limit
/// is `limit` (`ulimit -n` in a shell that then `exec`s the test binary: no `unsafe` and
/// no libc needed), and fails with the child's output unless it passed.
fn run_under_fd_limit(name: &str, limit: u32) {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
        .arg(&exe)
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(FD_CHILD_ENV, limit.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child {name} under ulimit -n {limit} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

/// In a child started by [`run_under_fd_limit`]: checks that the limit is in force.
fn check_child_limit() {
    if let Ok(limit) = std::env::var(FD_CHILD_ENV) {
        assert_eq!(fd_soft_limit(), limit.parse::<u64>().unwrap());
    }
}

/// A transaction of producer `pid` at `base`: `n` data records then its ABORT marker.
fn aborted_txn(pid: i64, base: i64, n: usize) -> Vec<u8> {
    let mut b = BatchBuilder::new(base)
        .partition_leader_epoch(0)
        .producer(pid, 0, 0)
        .transactional(true);
    for i in 0..n {
        b = b.record(
            base,
            None,
            Some(format!("txn-{}", base + i as i64).as_bytes()),
        );
    }
    let mut out = b.build().unwrap();
    out.extend(
        BatchBuilder::new(base + n as i64)
            .partition_leader_epoch(0)
            .producer(pid, 0, 0)
            .build_end_txn_marker(ControlRecordType::Abort, 0, base)
            .unwrap(),
    );
    out
}

/// Writes `segments` segments of 10 plain records each (with `txn`, each segment also
/// holds an aborted transaction of 3 records, so it has a `.txnindex`), rolling after
/// each, then flushes and closes. Returns the log end offset.
fn write_segments(dir: &Path, cfg: &LogConfig, segments: usize, txn: bool) -> i64 {
    let (_t, clock) = mock();
    let log = open_log(dir, cfg.clone(), clock);
    let mut o = 0;
    for _ in 0..segments {
        if txn {
            log.append(&aborted_txn(7, o, 3)).unwrap();
            o += 4;
        }
        o = fill(&log, o, 1, 10, 0);
        log.roll(None).unwrap();
    }
    log.flush().unwrap();
    log.close().unwrap();
    o
}

/// F4's read-through in this process: 300 segments (with and without transaction
/// indexes) are written, reopened and read from the first offset to the last; the
/// descriptors held afterwards do not grow with the segments read (only each `.log` keeps
/// one, opened by `Log::open`, as Kafka's `FileRecords` do); the aborted transactions of
/// every segment are collected; a flush with no descriptor left fails with a typed
/// `EMFILE` error and leaves the log online, and once descriptors are free again appends
/// and flushes work and a reopen finds everything.
#[test]
#[ignore = "run by f4_read_through_300_segments_under_ulimit_450 in a child process"]
fn f4_child_read_through() {
    check_child_limit();
    let cfg = LogConfig {
        retention_ms: -1,
        ..config(4096, 1 << 16)
    };
    for txn in [false, true] {
        let dir = tmpdir();
        let leo = write_segments(dir.path(), &cfg, 300, txn);
        let (_t, clock) = mock();
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        assert_eq!(log.segments().number_of_segments(), 301);
        let before = open_fds();
        // Half-way, then all the way: the count must not depend on how many were read.
        let half = read_all(&log, 0)
            .into_iter()
            .take_while(|&o| o < leo / 2)
            .count();
        assert!(half > 0);
        let after_half = open_fds();
        let all = read_all(&log, 0);
        let after = open_fds();
        // Every record is served, aborted ones and markers included (read_uncommitted).
        assert_eq!(
            all.len() as i64,
            leo,
            "txn={txn}: a read-through lost offsets"
        );
        assert_eq!(all, (0..leo).collect::<Vec<_>>(), "txn={txn}");
        assert_eq!(
            after, after_half,
            "txn={txn}: reading more segments opened more descriptors ({after_half} after half, {after} after all)"
        );
        assert!(
            after <= before + 2,
            "txn={txn}: a read-through of 300 segments left {} descriptors open ({before} before, {after} after)",
            after - before
        );
        if txn {
            let aborted = log.collect_aborted_txns(0, i64::MAX).unwrap();
            assert_eq!(aborted.len(), 300, "txn={txn}");
            assert_eq!(
                open_fds(),
                after,
                "collecting aborted txns kept descriptors"
            );
        }
        // Flushing with no descriptor to spare: typed error, the log stays online.
        fill(&log, leo, 1, 10, 0);
        let mut hog = Vec::new();
        let exhausted = loop {
            match std::fs::File::open("/dev/null") {
                Ok(f) => hog.push(f),
                Err(e) => break e,
            }
            assert!(hog.len() < 1 << 20, "no descriptor limit in force");
        };
        assert_eq!(exhausted.raw_os_error(), Some(EMFILE));
        let err = log.flush().unwrap_err();
        assert_eq!(errno(&err), Some(EMFILE), "txn={txn}: {err}");
        assert!(
            !log.is_offline(),
            "txn={txn}: a flush that could not open a file took the log offline: {err}"
        );
        drop(hog);
        fill(&log, leo + 10, 1, 10, 0);
        log.flush().unwrap();
        assert_eq!(log.recovery_point(), leo + 20);
        drop(log);
        let log = open_log(dir.path(), cfg.clone(), clock);
        assert_eq!(read_all(&log, 0), (0..leo + 20).collect::<Vec<_>>());
        log.close().unwrap();
    }
}

/// F4 (issue 19): every segment a read touched kept its `.index` descriptor open, so a
/// read-through of 300 segments under `ulimit -n 450` failed at offset 142 with "Too many
/// open files", and the next flush, unable to open the directory for its fsync, took the
/// log offline. See [`f4_child_read_through`] for what is checked.
#[test]
fn f4_read_through_300_segments_under_ulimit_450() {
    run_under_fd_limit("f4_child_read_through", 450);
}

/// Weak point of issue 19: `Log::open` failed on a full disk because it wrote a producer
/// snapshot (and rewrote an unchanged recovery-point checkpoint) while opening. A log
/// holding producer state (an aborted transaction in each segment), closed cleanly or
/// flushed and then crashed, is opened with every write that needs space failing with
/// `ENOSPC`: it opens, serves every record, its aborted transactions and the same
/// producer state, refuses appends with a typed error while staying online; once there is
/// space again appends work and `close` writes the deferred snapshot at the log end.
#[test]
fn full_disk_open_defers_the_producer_snapshot() {
    for crash in [false, true] {
        let dir = tmpdir();
        let (_t, clock) = mock();
        let cfg = LogConfig {
            retention_ms: -1,
            ..config(4096, 1 << 16)
        };
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        let mut o = 0;
        for _ in 0..3 {
            log.append(&aborted_txn(7, o, 3)).unwrap();
            o = fill(&log, o + 4, 2, 10, 0);
            log.roll(None).unwrap();
        }
        // A transaction still open at the end: the producer state matters.
        log.append(&aborted_txn(9, o, 3)[..]).unwrap();
        o += 4;
        let mut open_txn = BatchBuilder::new(o)
            .partition_leader_epoch(0)
            .producer(11, 0, 0)
            .transactional(true);
        open_txn = open_txn.record(o, None, Some(b"open"));
        log.append(&open_txn.build().unwrap()).unwrap();
        o += 1;
        let producers = log.producer_state().snapshot_entries();
        let lso = log.last_stable_offset();
        let aborted = log.collect_aborted_txns(0, i64::MAX).unwrap();
        assert_eq!((lso, aborted.len()), (o - 1, 4));
        if crash {
            log.flush().unwrap();
            drop(log);
        } else {
            log.close().unwrap();
        }
        let snapshot_at_end = dir.path().join(format!("{o:020}.snapshot"));
        if crash {
            assert!(!snapshot_at_end.exists());
        }
        let fs = Arc::new(FaultyFs::new());
        for op in [FsOp::Write, FsOp::WriteFile, FsOp::SetLen] {
            fs.inject(Fault::new(op, ENOSPC));
        }
        let log = Log::options()
            .clock(clock.clone())
            .fs(fs.clone())
            .open(dir.path(), cfg.clone())
            .unwrap_or_else(|e| panic!("crash={crash}: a full disk failed the open: {e}"));
        assert_eq!(log.log_end_offset(), o);
        assert_eq!(read_all(&log, 0), (0..o).collect::<Vec<_>>());
        assert_eq!(log.collect_aborted_txns(0, i64::MAX).unwrap(), aborted);
        assert_eq!(log.producer_state().snapshot_entries(), producers);
        assert_eq!(log.last_stable_offset(), lso);
        if crash {
            assert!(fs.injected() > 0, "the open wanted to write nothing");
            assert!(!snapshot_at_end.exists(), "the snapshot was not deferred");
        }
        let err = log.append(&batch(o, 5, 0)).unwrap_err();
        assert_eq!(errno(&err), Some(ENOSPC), "crash={crash}: {err}");
        assert!(!log.is_offline());
        // Space again: appends, and close takes the deferred snapshot.
        fs.clear();
        log.append(&batch(o, 5, 0)).unwrap();
        log.close().unwrap();
        assert!(dir.path().join(format!("{:020}.snapshot", o + 5)).exists());
        let log = open_log(dir.path(), cfg, clock);
        assert_eq!(log.stats().scanned_segments(), 0);
        assert_eq!(read_all(&log, 0), (0..o + 5).collect::<Vec<_>>());
        assert_eq!(log.last_stable_offset(), lso);
    }
}

/// A [`FileSystem`] that performs every operation with the real file system and records
/// it, with the file name, in order: performed operations by their kind, reported ones
/// (index trims, msyncs, `.txnindex` writes, index opens) by the kind reported.
#[derive(Debug, Default)]
struct Recorder {
    ops: Mutex<Vec<(FsOp, String)>>,
}

impl Recorder {
    fn push(&self, op: FsOp, path: &Path) {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        self.ops.lock().unwrap().push((op, name));
    }

    fn take(&self) -> Vec<(FsOp, String)> {
        std::mem::take(&mut *self.ops.lock().unwrap())
    }
}

impl FileSystem for Recorder {
    fn open_file(&self, path: &Path, mode: OpenMode) -> std::io::Result<std::fs::File> {
        self.push(FsOp::Open, path);
        RealFs.open_file(path, mode)
    }
    fn write_all_at(
        &self,
        path: &Path,
        file: &std::fs::File,
        buf: &[u8],
        pos: u64,
    ) -> std::io::Result<()> {
        self.push(FsOp::Write, path);
        RealFs.write_all_at(path, file, buf, pos)
    }
    fn sync_data(&self, path: &Path, file: &std::fs::File) -> std::io::Result<()> {
        self.push(FsOp::Sync, path);
        RealFs.sync_data(path, file)
    }
    fn set_len(&self, path: &Path, file: &std::fs::File, len: u64) -> std::io::Result<()> {
        self.push(FsOp::SetLen, path);
        RealFs.set_len(path, file, len)
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        self.push(FsOp::Rename, from);
        RealFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        self.push(FsOp::Remove, path);
        RealFs.remove_file(path)
    }
    fn sync_dir(&self, dir: &Path) -> std::io::Result<()> {
        self.push(FsOp::SyncDir, dir);
        RealFs.sync_dir(dir)
    }
    fn write_file(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        self.push(FsOp::WriteFile, path);
        RealFs.write_file(path, bytes)
    }
    fn before(&self, op: FsOp, path: &Path) -> std::io::Result<()> {
        self.push(op, path);
        Ok(())
    }
}

/// The position of the first operation at or after `from` that `op` on a file whose
/// name ends with `suffix`, if any.
fn find(ops: &[(FsOp, String)], from: usize, op: FsOp, suffix: &str) -> Option<usize> {
    (from..ops.len()).find(|&i| ops[i].0 == op && ops[i].1.ends_with(suffix))
}

fn open_recorded(dir: &Path, cfg: &LogConfig, rec: &Arc<Recorder>) -> Log {
    let (_t, clock) = mock();
    Log::options()
        .clock(clock)
        .fs(rec.clone())
        .open(dir, cfg.clone())
        .unwrap()
}

/// Weak point of issue 19 (`docs/kafka-behaviour.md#truncate-fsync`): `truncate_to`
/// below the recovery point wrote the recovery-point checkpoint without fsyncing the
/// truncated `.log` (as Kafka does), so after a power cut the cut batches could come back
/// below a durable checkpoint. For a cut inside the active segment and one inside an
/// earlier segment (the segments above it renamed `.deleted`), the truncated `.log` is
/// cut (`set_len`), then fsynced, and the directory fsynced, before the checkpoint's
/// temporary file is written.
#[test]
fn truncate_to_fsyncs_the_truncated_log_before_the_checkpoint() {
    for cut in [30, 10] {
        let dir = tmpdir();
        let rec = Arc::new(Recorder::default());
        let cfg = config(4096, 1 << 16);
        let log = open_recorded(dir.path(), &cfg, &rec);
        fill(&log, 0, 2, 10, 0);
        log.roll(None).unwrap();
        fill(&log, 20, 2, 10, 0);
        log.flush().unwrap();
        assert_eq!(log.recovery_point(), 40);
        let seg = format!("{:020}.log", if cut < 20 { 0 } else { 20 });
        rec.take();
        assert!(log.truncate_to(cut).unwrap());
        let ops = rec.take();
        let cut_at = find(&ops, 0, FsOp::SetLen, &seg)
            .unwrap_or_else(|| panic!("cut {cut}: {seg} was not truncated: {ops:?}"));
        let checkpoint = find(&ops, cut_at, FsOp::WriteFile, "recovery-point.tmp")
            .unwrap_or_else(|| panic!("cut {cut}: no checkpoint after the cut: {ops:?}"));
        let synced = find(&ops, cut_at, FsOp::Sync, &seg);
        assert!(
            synced.is_some_and(|s| s < checkpoint),
            "cut {cut}: the checkpoint was written before the truncated {seg} was fsynced: {ops:?}"
        );
        let dir_synced = find(&ops, cut_at, FsOp::SyncDir, "");
        assert!(
            dir_synced.is_some_and(|s| s < checkpoint),
            "cut {cut}: the directory was not fsynced before the checkpoint: {ops:?}"
        );
        assert_eq!(log.log_end_offset(), cut);
        assert_eq!(log.recovery_point(), log.log_end_offset());
    }
}

/// Length of the file at `p`.
fn len_of(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().len()
}

/// Extends the file at `p` with zeros to `len` bytes (what a lost trim leaves behind: the
/// preallocated, never-written tail).
fn zero_extend(p: &Path, len: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
    assert!(len >= f.metadata().unwrap().len());
    f.set_len(len).unwrap();
}

const INDEX_BYTES: usize = 1 << 16;

/// The index file at `p` holds whole entries of `entry` bytes, at most `most` of them and
/// at least one, and no zero-filled slot at its end (its preallocated tail is gone).
/// (Recovery rebuilds an index by Kafka's rule, which may index fewer batches than the
/// append path did, acceptance case 51, so the exact count is not fixed.)
fn assert_trimmed(p: &Path, entry: usize, most: usize) {
    let bytes = std::fs::read(p).unwrap();
    assert!(
        !bytes.is_empty() && bytes.len().is_multiple_of(entry) && bytes.len() <= most * entry,
        "{}: {} bytes",
        p.display(),
        bytes.len()
    );
    assert!(
        bytes[bytes.len() - entry..].iter().any(|&b| b != 0),
        "{}: ends in a zero slot",
        p.display()
    );
}

/// Three segments of five 10-record batches, timestamps `ts0 + offset`, an index entry
/// per batch (`index.interval.bytes` 1), closed cleanly. Returns the log end offset.
fn three_segments(dir: &Path, cfg: &LogConfig, ts0: i64) -> i64 {
    let (_t, clock) = mock();
    let log = open_log(dir, cfg.clone(), clock);
    let mut o = 0;
    for _ in 0..3 {
        o = fill(&log, o, 5, 10, ts0);
        log.roll(None).unwrap();
    }
    log.close().unwrap();
    o
}

fn ticket_cfg() -> LogConfig {
    LogConfig {
        retention_ms: -1,
        ..config(1, INDEX_BYTES)
    }
}

/// Every lookup a reader makes, through the indexes of every segment: each offset's
/// batch, and the offset of each timestamp (batches of 10 records at `ts0 + base`).
fn check_lookups(log: &Log, leo: i64, ts0: i64) {
    assert_eq!(read_all(log, 0), (0..leo).collect::<Vec<_>>());
    for o in (0..leo).step_by(7) {
        let r = log.read(o, 1).unwrap();
        assert!(offsets_in(&r.records).contains(&o), "read({o})");
        // A batch's records share its base offset's timestamp: the first record at or
        // after `ts0 + o` starts the first batch whose base is at least `o`.
        let first = (o + 9) / 10 * 10;
        let t = log.offset_for_timestamp(ts0 + o).unwrap();
        assert_eq!(
            t.map(|t| t.offset),
            (first < leo).then_some(first),
            "offset_for_timestamp({})",
            ts0 + o
        );
    }
}

/// KAFKA-20979: Kafka trimmed the indexes at shutdown without fsyncing the trim, so after
/// a power cut a segment could come back with a clean-shutdown marker and an index at its
/// preallocated length. Here every index a close trims (the active segment's `.index` and
/// `.timeindex`) is fsynced after its trim and before the marker is written; the files
/// hold exactly their entries; and the state a lost trim would leave (the index zero
/// extended to its preallocated size, marker present) is detected at open, which answers
/// every lookup correctly and keeps appending at the log end.
#[test]
fn kafka_20979_index_trim_is_fsynced_before_the_clean_shutdown_marker() {
    let dir = tmpdir();
    let cfg = ticket_cfg();
    let rec = Arc::new(Recorder::default());
    let log = open_recorded(dir.path(), &cfg, &rec);
    let leo = fill(&log, 0, 5, 10, 1_000);
    rec.take();
    log.close().unwrap();
    let ops = rec.take();
    let marker = find(&ops, 0, FsOp::WriteFile, ".kafka_cleanshutdown")
        .unwrap_or_else(|| panic!("no marker: {ops:?}"));
    for suffix in [".index", ".timeindex"] {
        let trim = find(&ops, 0, FsOp::IndexTrim, suffix)
            .unwrap_or_else(|| panic!("{suffix} not trimmed at close: {ops:?}"));
        let synced = (trim + 1..marker).find(|&i| {
            matches!(ops[i].0, FsOp::IndexFlush | FsOp::Sync) && ops[i].1.ends_with(suffix)
        });
        assert!(
            synced.is_some(),
            "KAFKA-20979: the {suffix} trim at close was not fsynced before the marker: {ops:?}"
        );
    }
    let index = dir.path().join(format!("{:020}.index", 0));
    let time_index = dir.path().join(format!("{:020}.timeindex", 0));
    assert_trimmed(&index, 8, 5);
    assert_trimmed(&time_index, 12, 5);
    // The trim lost: both indexes back at their preallocated size, marker present.
    zero_extend(&index, INDEX_BYTES as u64);
    zero_extend(&time_index, INDEX_BYTES as u64 / 12 * 12);
    let (_t, clock) = mock();
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    check_lookups(&log, leo, 1_000);
    fill(&log, leo, 2, 10, 1_000);
    check_lookups(&log, leo + 20, 1_000);
    log.close().unwrap();
    assert_trimmed(&index, 8, 7);
    assert_trimmed(&time_index, 12, 7);
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(log.stats().scanned_segments(), 0);
    check_lookups(&log, leo + 20, 1_000);
}

/// KAFKA-21000: with `preallocate` on, Kafka's `FileRecords.close` flushed the `.log`
/// before trimming it, so the trim was never fsynced and a clean shutdown could keep the
/// zero-filled preallocated tail, after which appends went after the zeros. Here the
/// `.log`'s trim at close comes first and an fsync of it follows, before the marker; the
/// file holds exactly its batches; and the state a lost trim would leave (the zero tail
/// back, marker present) opens with the right log end, appends directly after the data
/// and reads back every offset.
#[test]
fn kafka_21000_log_is_trimmed_before_its_final_fsync_with_preallocate() {
    let dir = tmpdir();
    let cfg = LogConfig {
        preallocate: true,
        segment_bytes: 1 << 16,
        ..ticket_cfg()
    };
    let rec = Arc::new(Recorder::default());
    let log = open_recorded(dir.path(), &cfg, &rec);
    let leo = fill(&log, 0, 5, 10, 1_000);
    let data = log.size();
    let path = log.segments().active_segment().unwrap().log_path();
    assert_eq!(len_of(&path), 1 << 16, "not preallocated");
    rec.take();
    log.close().unwrap();
    let ops = rec.take();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let marker = find(&ops, 0, FsOp::WriteFile, ".kafka_cleanshutdown").unwrap();
    let trim = find(&ops, 0, FsOp::SetLen, &name)
        .unwrap_or_else(|| panic!("the .log was not trimmed at close: {ops:?}"));
    assert!(
        find(&ops, trim, FsOp::Sync, &name).is_some_and(|s| s < marker),
        "KAFKA-21000: the .log trim at close was not fsynced before the marker: {ops:?}"
    );
    assert_eq!(len_of(&path), data);
    // The trim lost: the zero-filled preallocated tail back, marker present.
    zero_extend(&path, 1 << 16);
    let (_t, clock) = mock();
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    assert_eq!(log.log_end_offset(), leo);
    assert_eq!(log.size(), data, "the zero tail counts as data");
    let appended = batch(leo, 10, 1_000 + leo);
    log.append(&appended).unwrap();
    check_lookups(&log, leo + 10, 1_000);
    log.close().unwrap();
    assert_eq!(
        len_of(&path),
        data + appended.len() as u64,
        "zeros between the batches"
    );
    let log = open_log(dir.path(), cfg, clock);
    check_lookups(&log, leo + 10, 1_000);
}

/// KAFKA-19200: a segment below the recovery point whose `.timeindex` is at its full
/// preallocated size and was never written (all zeros) was trusted by Kafka's loader: its
/// largest timestamp read as 0, so time-based retention deleted it early and
/// `offsetsForTimes` skipped it. Here the first of three segments gets such a
/// `.timeindex` (after a clean shutdown, and after a crash with the recovery point above
/// the segment): the segment keeps its real largest timestamp, retention does not
/// delete it, every timestamp lookup is right, and the file is rebuilt to its entries.
#[test]
fn kafka_19200_full_size_unwritten_time_index_below_the_recovery_point() {
    const TS0: i64 = 900_000; // the mock clock reads 1_000_000
    for crash in [false, true] {
        let dir = tmpdir();
        let cfg = ticket_cfg();
        let leo = three_segments(dir.path(), &cfg, TS0);
        if crash {
            std::fs::remove_file(dir.path().join(".kafka_cleanshutdown")).unwrap();
        }
        let time_index = dir.path().join(format!("{:020}.timeindex", 0));
        std::fs::write(&time_index, vec![0u8; INDEX_BYTES / 12 * 12]).unwrap();
        // Retention by time that keeps every real timestamp (age ≤ 100 s) but not 0.
        let cfg = LogConfig {
            retention_ms: 500_000,
            ..cfg
        };
        let (_t, clock) = mock();
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        assert_eq!(log.recovery_point(), leo);
        let first = log.segments().get(0).unwrap();
        assert_eq!(
            first.largest_timestamp().unwrap(),
            TS0 + 40,
            "crash={crash}"
        );
        drop(first);
        assert_eq!(
            log.delete_old_segments().unwrap(),
            0,
            "crash={crash}: deleted early"
        );
        check_lookups(&log, leo, TS0);
        log.close().unwrap();
        assert_trimmed(&time_index, 12, 5);
        let log = open_log(dir.path(), cfg, clock);
        assert_eq!(log.delete_old_segments().unwrap(), 0);
        check_lookups(&log, leo, TS0);
    }
}

/// KAFKA-10207: inactive segments whose `.index` and `.timeindex` were left untrimmed
/// (their entries followed by a zero-filled preallocated tail) made Kafka's loader read
/// the zero slots as entries: the time index's last entry gave the segment a largest
/// timestamp of 0, so retention deleted it on startup. Here the first two of three
/// segments get untrimmed indexes (after a clean shutdown): no segment is deleted by
/// retention, every offset and timestamp lookup is right, and close leaves the indexes
/// trimmed to their entries.
#[test]
fn kafka_10207_untrimmed_indexes_of_inactive_segments() {
    const TS0: i64 = 900_000;
    let dir = tmpdir();
    let cfg = ticket_cfg();
    let leo = three_segments(dir.path(), &cfg, TS0);
    for base in [0, 50] {
        zero_extend(
            &dir.path().join(format!("{base:020}.index")),
            INDEX_BYTES as u64,
        );
        zero_extend(
            &dir.path().join(format!("{base:020}.timeindex")),
            INDEX_BYTES as u64 / 12 * 12,
        );
    }
    let cfg = LogConfig {
        retention_ms: 500_000,
        ..cfg
    };
    let (_t, clock) = mock();
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    for base in [0, 50] {
        let seg = log.segments().get(base).unwrap();
        assert_eq!(seg.largest_timestamp().unwrap(), TS0 + base + 40);
    }
    assert_eq!(
        log.delete_old_segments().unwrap(),
        0,
        "KAFKA-10207: deleted on startup"
    );
    check_lookups(&log, leo, TS0);
    log.close().unwrap();
    for base in [0, 50] {
        assert_trimmed(&dir.path().join(format!("{base:020}.index")), 8, 5);
        assert_trimmed(&dir.path().join(format!("{base:020}.timeindex")), 12, 5);
    }
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(log.delete_old_segments().unwrap(), 0);
    check_lookups(&log, leo, TS0);
}

// ---------------------------------------------------------------------------------------
// The fault matrix (issue 19, section 2)
// ---------------------------------------------------------------------------------------

/// The file classes of a partition directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Log,
    Index,
    TimeIndex,
    TxnIndex,
    Snapshot,
    RecoveryPoint,
    LogStart,
    Epochs,
    Marker,
    Dir,
}

impl Class {
    const ALL: [Class; 10] = [
        Class::Log,
        Class::Index,
        Class::TimeIndex,
        Class::TxnIndex,
        Class::Snapshot,
        Class::RecoveryPoint,
        Class::LogStart,
        Class::Epochs,
        Class::Marker,
        Class::Dir,
    ];

    fn name(self) -> &'static str {
        match self {
            Class::Log => "`.log`",
            Class::Index => "`.index`",
            Class::TimeIndex => "`.timeindex`",
            Class::TxnIndex => "`.txnindex`",
            Class::Snapshot => "`.snapshot`",
            Class::RecoveryPoint => "`recovery-point`",
            Class::LogStart => "`log-start-offset`",
            Class::Epochs => "`leader-epoch-checkpoint`",
            Class::Marker => "clean-shutdown marker",
            Class::Dir => "directory",
        }
    }

    /// Substrings of the paths of this class's files as the seam sees them (a producer
    /// snapshot is written as `<20-digit offset>.tmp` and renamed; every snapshot offset of
    /// the workload is a multiple of 10, and no other temporary file name ends in `0.tmp`).
    fn paths(self) -> &'static [&'static str] {
        match self {
            Class::Log => &[".log"],
            Class::Index => &[".index"],
            Class::TimeIndex => &[".timeindex"],
            Class::TxnIndex => &[".txnindex"],
            Class::Snapshot => &[".snapshot", "0.tmp"],
            Class::RecoveryPoint => &["recovery-point"],
            Class::LogStart => &["log-start-offset"],
            Class::Epochs => &["leader-epoch-checkpoint"],
            Class::Marker => &[".kafka_cleanshutdown"],
            Class::Dir => &[""],
        }
    }

    /// The seam operations that change a file of this class, which arm a "failed
    /// directory fsync" fault (the directory fsync that makes them durable).
    fn changes(self) -> &'static [FsOp] {
        match self {
            Class::Log => &[FsOp::Open, FsOp::Rename, FsOp::Remove],
            Class::Index | Class::TimeIndex => &[FsOp::Open, FsOp::IndexRename, FsOp::IndexRemove],
            Class::TxnIndex => &[FsOp::TxnWrite, FsOp::IndexRename, FsOp::IndexRemove],
            Class::Snapshot | Class::RecoveryPoint | Class::LogStart | Class::Epochs => {
                &[FsOp::Rename, FsOp::Remove]
            }
            Class::Marker => &[FsOp::WriteFile, FsOp::Remove],
            Class::Dir => &[],
        }
    }
}

/// The injected faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Enospc,
    Eio,
    ShortWrite,
    FailedFsync,
    FailedDirFsync,
    FailedRename,
    Emfile,
}

impl Kind {
    const ALL: [Kind; 7] = [
        Kind::Enospc,
        Kind::Eio,
        Kind::ShortWrite,
        Kind::FailedFsync,
        Kind::FailedDirFsync,
        Kind::FailedRename,
        Kind::Emfile,
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::Enospc => "`ENOSPC`",
            Kind::Eio => "`EIO`",
            Kind::ShortWrite => "short write",
            Kind::FailedFsync => "failed fsync",
            Kind::FailedDirFsync => "failed dir fsync",
            Kind::FailedRename => "failed rename",
            Kind::Emfile => "`EMFILE` on open",
        }
    }

    fn errno(self) -> i32 {
        match self {
            Kind::Enospc | Kind::ShortWrite => ENOSPC,
            Kind::Emfile => EMFILE,
            _ => EIO,
        }
    }

    /// Whether the state on disk is unknown after this fault (a failed fsync may have
    /// dropped dirty pages): the only faults allowed to take the log offline.
    fn may_go_offline(self) -> bool {
        matches!(self, Kind::FailedFsync | Kind::FailedDirFsync)
    }
}

/// Why a fault cannot occur on a file class at all (whatever the operation).
fn cannot_occur(class: Class, kind: Kind) -> Option<&'static str> {
    use Class::*;
    use Kind::*;
    Some(match (class, kind) {
        (Index | TimeIndex, ShortWrite) => {
            "index entries are stores into a mapping: no `write(2)` that could be short"
        }
        (TxnIndex, ShortWrite) => {
            "index-txn writes an entry with one `pwrite` and cuts a torn one back off itself; the seam reports the write but cannot tear it"
        }
        (Dir, Enospc | Eio | ShortWrite) => {
            "the directory is never written: its entries change by creating, renaming and deleting files, which are faults of those files' classes"
        }
        (Dir, FailedFsync) => "a directory's fsync is the \"failed dir fsync\" column",
        (Dir, FailedRename) => "the directory itself is never renamed",
        (Marker, FailedRename) => "the marker is created in place and deleted, never renamed",
        _ => return None,
    })
}

/// Where the log goes offline on purpose after a fault that leaves the state on disk
/// known, and why (shown in the document).
fn offline_by_design(op: Op, class: Class) -> Option<&'static str> {
    match (op, class) {
        (Op::Append, Class::TxnIndex) => Some(
            "the ABORT marker is in the `.log` (readers may have fetched it) but its `.txnindex` entry could not be written, so read-committed fetches would serve the aborted records; the log refuses service until a reopen rebuilds the index (undoing the append would hand its offsets out twice)",
        ),
        (
            Op::Truncate,
            Class::Log | Class::Index | Class::TimeIndex | Class::TxnIndex | Class::Dir,
        ) => Some(
            "the fault hit `truncate_to` inside its structural change, after the lowered log end was published and while segments leave the map and the active segment is cut (`docs/kafka-behaviour.md#concurrent-reads`): the map and the files may hold any part of the change, so the log refuses service until a reopen recovers it from the files; nothing flushed below the cut is lost",
        ),
        _ => None,
    }
}

/// The fault rules of `kind` on `class`.
fn faults(class: Class, kind: Kind) -> Vec<Fault> {
    let errno = kind.errno();
    let ops: &[FsOp] = match kind {
        Kind::Enospc | Kind::Eio => &[
            FsOp::Write,
            FsOp::WriteFile,
            FsOp::SetLen,
            FsOp::IndexResize,
            FsOp::TxnWrite,
        ],
        Kind::ShortWrite => &[FsOp::Write, FsOp::WriteFile],
        Kind::FailedFsync => &[FsOp::Sync, FsOp::IndexFlush],
        Kind::FailedDirFsync => &[FsOp::SyncDir],
        Kind::FailedRename => &[FsOp::Rename, FsOp::IndexRename],
        Kind::Emfile => &[FsOp::Open, FsOp::WriteFile, FsOp::TxnWrite, FsOp::SyncDir],
    };
    let mut out = Vec::new();
    if kind == Kind::FailedDirFsync {
        if class == Class::Dir {
            out.push(Fault::new(FsOp::SyncDir, errno));
        }
        for &op in class.changes() {
            for p in class.paths() {
                out.push(Fault::new(FsOp::SyncDir, errno).armed_by(op, *p));
            }
        }
        return out;
    }
    for &op in ops {
        // The directory's only operation is its fsync (an open of it, for `EMFILE`).
        if (class == Class::Dir) != (op == FsOp::SyncDir) {
            continue;
        }
        for p in class.paths() {
            let mut f = Fault::new(op, errno).on_path(*p);
            if kind == Kind::ShortWrite {
                f = f.partial();
            }
            out.push(f);
        }
    }
    out
}

/// The log operations the faults are injected into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Append,
    Flush,
    Roll,
    Truncate,
    Retention,
    DeleteLocal,
    Close,
    ReopenClean,
    ReopenCrash,
}

impl Op {
    const ALL: [Op; 9] = [
        Op::Append,
        Op::Flush,
        Op::Roll,
        Op::Truncate,
        Op::Retention,
        Op::DeleteLocal,
        Op::Close,
        Op::ReopenClean,
        Op::ReopenCrash,
    ];

    fn name(self) -> &'static str {
        match self {
            Op::Append => "append",
            Op::Flush => "flush",
            Op::Roll => "roll",
            Op::Truncate => "truncate_to",
            Op::Retention => "retention",
            Op::DeleteLocal => "delete_local_through",
            Op::Close => "close",
            Op::ReopenClean => "open (clean)",
            Op::ReopenCrash => "open (crash)",
        }
    }
}

/// What one cell of the matrix came to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    /// The fault cannot occur on the class (see [`cannot_occur`]).
    CannotOccur,
    /// The operation performs no such file operation on the class: the fault never fired.
    NotReached,
    /// Typed error naming the errno; the log stayed online and usable.
    Error,
    /// Typed error; the log went offline (a failed fsync), a reopen recovered.
    Offline,
    /// The fault fired and the operation still succeeded (a deferred snapshot, a
    /// tolerated failure); everything checked afterwards held.
    Absorbed,
}

impl Outcome {
    fn cell(&self) -> &'static str {
        match self {
            Outcome::CannotOccur => "—",
            Outcome::NotReached => "n/a",
            Outcome::Error => "error",
            Outcome::Offline => "offline",
            Outcome::Absorbed => "absorbed",
        }
    }
}

const MATRIX_TS: i64 = 1_000_000;

fn matrix_cfg() -> LogConfig {
    LogConfig {
        retention_ms: 100_000,
        file_delete_delay_ms: 0,
        ..config(1, 1 << 16)
    }
}

/// A 10-record batch at `base` with partition leader epoch `epoch`.
fn epoch_batch(base: i64, epoch: i32) -> Vec<u8> {
    let mut b = BatchBuilder::new(base).partition_leader_epoch(epoch);
    for i in 0..10 {
        b = b.record(MATRIX_TS, None, Some(format!("m-{}", base + i).as_bytes()));
    }
    b.build().unwrap()
}

/// An aborted transaction of producer 7 at `base`: 9 records and the ABORT marker.
fn epoch_txn(base: i64, epoch: i32) -> Vec<u8> {
    let mut b = BatchBuilder::new(base)
        .partition_leader_epoch(epoch)
        .producer(7, 0, base as i32)
        .transactional(true);
    for i in 0..9 {
        b = b.record(MATRIX_TS, None, Some(format!("t-{}", base + i).as_bytes()));
    }
    let mut out = b.build().unwrap();
    out.extend(
        BatchBuilder::new(base + 9)
            .partition_leader_epoch(epoch)
            .producer(7, 0, 0)
            .build_end_txn_marker(ControlRecordType::Abort, 0, MATRIX_TS)
            .unwrap(),
    );
    out
}

/// What was handed to the log and what a flush acknowledged, batch by batch.
#[derive(Default)]
struct Model {
    /// Every batch handed to an append, also one that failed (it may be in the `.log`,
    /// unacknowledged): base offset → its bytes (a later append at the same base, after
    /// the failed one left nothing, replaces it).
    appended: std::collections::BTreeMap<i64, Vec<u8>>,
    /// Base offsets of the batches a successful flush covered.
    acked: std::collections::BTreeSet<i64>,
    /// Base offsets a truncation was asked to remove: never acknowledged again.
    removed: std::collections::BTreeSet<i64>,
}

impl Model {
    fn append(&mut self, log: &Log, bytes: Vec<u8>) -> Result<(), SegmentError> {
        let batches: Vec<(i64, Vec<u8>)> = segment::format::scan::<KafkaBatchFormat>(&bytes, 0)
            .map(|b| {
                let b = b.unwrap();
                (b.info.base_offset, b.bytes.to_vec())
            })
            .collect();
        // An append at `b` means the log ends at `b`: what an earlier, failed append
        // handed over from `b` on is not in it.
        if let Some((first, _)) = batches.first() {
            self.appended.retain(|b, _| b < first);
        }
        self.appended.extend(batches);
        log.append(&bytes)?;
        Ok(())
    }

    /// A flush succeeded with the log end at `leo`.
    fn flushed(&mut self, leo: i64) {
        let removed = &self.removed;
        self.acked.extend(
            self.appended
                .keys()
                .copied()
                .filter(|b| *b < leo && !removed.contains(b)),
        );
    }

    /// A truncation was asked to remove every batch for which `gone` holds: they are no
    /// longer required (whether or not the call succeeded).
    fn forget(&mut self, gone: impl Fn(i64) -> bool) {
        let bases: Vec<i64> = self.appended.keys().copied().filter(|&b| gone(b)).collect();
        self.acked.retain(|b| !bases.contains(b));
        self.removed.extend(bases);
    }
}

/// The batches `log` serves, from its local log start (its log start unless uploaded
/// segments were deleted locally) to its log end.
fn served(log: &Log) -> Result<Vec<(i64, Vec<u8>)>, SegmentError> {
    let mut out = Vec::new();
    let mut o = log.local_log_start_offset();
    while o < log.log_end_offset() {
        let r = log.read(o, 1 << 20)?;
        let mut last = None;
        for b in segment::format::scan::<KafkaBatchFormat>(&r.records, 0) {
            let b = b.map_err(|e| SegmentError::InvalidArgument {
                reason: format!("unreadable batch served at {o}: {e}"),
            })?;
            if b.info.last_offset >= o {
                out.push((b.info.base_offset, b.bytes.to_vec()));
            }
            last = Some(b.info.last_offset);
        }
        match last {
            Some(l) => o = l + 1,
            None => break,
        }
    }
    Ok(out)
}

/// Checks the invariants of a log against the model: every acknowledged batch at or above
/// the local log start is served with its bytes, and every batch served was appended, with
/// the same bytes. `max_start` is the highest log start the operation allows; `uploaded`
/// the highest offset in remote storage (−1: none), which the local log start may pass
/// by one at most: only uploaded data leaves the local disk.
fn check_log(
    log: &Log,
    m: &Model,
    (max_start, uploaded): (i64, i64),
    what: &str,
) -> Result<(), String> {
    let start = log.log_start_offset();
    if start > max_start {
        return Err(format!("{what}: log start {start} above {max_start}"));
    }
    let local = log.local_log_start_offset();
    if local > start.max(uploaded + 1) {
        return Err(format!(
            "{what}: local log start {local} past the uploaded offset {uploaded}: data not uploaded was deleted"
        ));
    }
    let start = local;
    let served = served(log).map_err(|e| format!("{what}: read failed: {e}"))?;
    for (base, bytes) in &served {
        if m.appended.get(base) != Some(bytes) {
            return Err(format!(
                "{what}: served a batch at {base} that was never appended"
            ));
        }
    }
    for base in m.acked.iter().filter(|&&b| b >= start) {
        if !served
            .iter()
            .any(|(b, bytes)| b == base && Some(bytes) == m.appended.get(b))
        {
            return Err(format!("{what}: acknowledged batch {base} lost"));
        }
    }
    Ok(())
}

/// Runs one cell: the workload up to `op` without faults, `op` with the faults of
/// (`class`, `kind`), then the checks. Returns the outcome, or the violation found.
fn run_cell(op: Op, class: Class, kind: Kind) -> Result<Outcome, String> {
    if cannot_occur(class, kind).is_some() {
        return Ok(Outcome::CannotOccur);
    }
    let dir = tmpdir();
    let (t, clock) = mock();
    // `delete_local_through` needs a log with remote storage, which never moves its log
    // start to its first local segment.
    let cfg = LogConfig {
        remote_storage_enable: op == Op::DeleteLocal,
        ..matrix_cfg()
    };
    let fs = Arc::new(FaultyFs::new());
    let open = |fs: &Arc<FaultyFs>| {
        Log::options()
            .clock(clock.clone())
            .fs(fs.clone())
            .open(dir.path(), cfg.clone())
    };
    let mut m = Model::default();
    let log = open(&fs).unwrap();
    for base in [0, 10, 20] {
        m.append(&log, epoch_batch(base, 0)).unwrap();
    }
    m.append(&log, epoch_txn(30, 0)).unwrap();
    log.roll(None).unwrap();
    m.append(&log, epoch_batch(40, 1)).unwrap();
    m.append(&log, epoch_batch(50, 1)).unwrap();
    log.flush().unwrap();
    m.flushed(log.log_end_offset());
    let mut max_start = 0;
    let mut uploaded = -1;
    let arm = |fs: &FaultyFs| {
        for f in faults(class, kind) {
            fs.inject(f);
        }
    };
    let typed = |e: &SegmentError| -> Result<(), String> {
        if errno(e) == Some(kind.errno()) {
            Ok(())
        } else {
            Err(format!("untyped or unrelated error: {e}"))
        }
    };
    // The operation under faults. `Some(log)`: the log is still open afterwards.
    let (result, log): (Result<(), SegmentError>, Option<Log>) = match op {
        Op::Append => {
            arm(&fs);
            let r = m.append(&log, epoch_txn(60, 2));
            (r, Some(log))
        }
        Op::Flush => {
            m.append(&log, epoch_txn(60, 2)).unwrap();
            arm(&fs);
            let r = log.flush();
            if r.is_ok() {
                m.flushed(log.log_end_offset());
            }
            (r, Some(log))
        }
        Op::Roll => {
            m.append(&log, epoch_batch(60, 1)).unwrap();
            arm(&fs);
            (log.roll(None).map(|_| ()), Some(log))
        }
        Op::Truncate => {
            m.append(&log, epoch_batch(60, 1)).unwrap();
            log.flush().unwrap();
            m.flushed(log.log_end_offset());
            arm(&fs);
            // Whatever happens, the batches at 20 and above may be gone.
            m.forget(|b| b >= 20);
            (log.truncate_to(20).map(|_| ()), Some(log))
        }
        Op::Retention => {
            m.append(&log, epoch_batch(60, 1)).unwrap();
            log.flush().unwrap();
            m.flushed(log.log_end_offset());
            t.sleep(200_000);
            max_start = 70;
            arm(&fs);
            (log.delete_old_segments().map(|_| ()), Some(log))
        }
        Op::DeleteLocal => {
            // Three segments, [0, 40) [40, 70) [70, ..): the first is uploaded, the
            // caller asks for everything through 69: only the first may go.
            m.append(&log, epoch_batch(60, 1)).unwrap();
            log.roll(None).unwrap();
            m.append(&log, epoch_batch(70, 1)).unwrap();
            log.flush().unwrap();
            m.flushed(log.log_end_offset());
            uploaded = 39;
            arm(&fs);
            (log.delete_local_through(69, 39).map(|_| ()), Some(log))
        }
        Op::Close => {
            m.append(&log, epoch_batch(60, 1)).unwrap();
            arm(&fs);
            let leo = log.log_end_offset();
            let r = log.close();
            if r.is_ok() {
                m.flushed(leo);
            }
            (r, None)
        }
        Op::ReopenClean | Op::ReopenCrash => {
            m.append(&log, epoch_batch(60, 1)).unwrap();
            if op == Op::ReopenClean {
                let leo = log.log_end_offset();
                log.close().unwrap();
                m.flushed(leo);
            } else {
                drop(log);
            }
            arm(&fs);
            match open(&fs) {
                Ok(log) => (Ok(()), Some(log)),
                Err(e) => (Err(e), None),
            }
        }
    };
    if fs.injected() == 0 {
        if let Err(e) = result {
            return Err(format!("failed without a fault: {e}"));
        }
        return Ok(Outcome::NotReached);
    }
    let mut outcome = match &result {
        Ok(()) => Outcome::Absorbed,
        Err(e) => {
            typed(e)?;
            Outcome::Error
        }
    };
    fs.clear();
    if let Some(log) = log {
        if log.is_offline() {
            if !kind.may_go_offline() && offline_by_design(op, class).is_none() {
                return Err(format!(
                    "offline after a fault that leaves the state known: {}",
                    result.err().map(|e| e.to_string()).unwrap_or_default()
                ));
            }
            outcome = Outcome::Offline;
            match log.append(&epoch_batch(log.log_end_offset(), 3)) {
                Err(SegmentError::Offline { .. }) => {}
                other => return Err(format!("an offline log took an append: {other:?}")),
            }
        } else {
            // Usable: the state the faulted call left is consistent, and appends and
            // flushes work once the fault is gone.
            check_log(&log, &m, (max_start, uploaded), "after the fault")?;
            let leo = log.log_end_offset();
            m.append(&log, epoch_batch(leo, 3))
                .map_err(|e| format!("append after the fault failed: {e}"))?;
            log.flush()
                .map_err(|e| format!("flush after the fault failed: {e}"))?;
            m.flushed(log.log_end_offset());
            check_log(&log, &m, (max_start, uploaded), "after a retry")?;
        }
        drop(log); // a crash: the next open recovers
    }
    // A reopen with the real file system recovers everything acknowledged.
    let (_t2, clock2) = mock();
    let log = Log::options()
        .clock(clock2)
        .open(dir.path(), cfg.clone())
        .map_err(|e| format!("reopen failed: {e}"))?;
    check_log(&log, &m, (max_start, uploaded), "after reopen")?;
    let leo = log.log_end_offset();
    m.append(&log, epoch_batch(leo, 4))
        .map_err(|e| format!("append after reopen failed: {e}"))?;
    log.flush()
        .map_err(|e| format!("flush after reopen: {e}"))?;
    log.close()
        .map_err(|e| format!("close after reopen: {e}"))?;
    Ok(outcome)
}

/// Renders the matrix as the Markdown document `docs/fault-matrix.md`.
fn render(cells: &[(Op, Class, Vec<Outcome>)]) -> String {
    let mut counts = std::collections::BTreeMap::new();
    for (_, _, row) in cells {
        for o in row {
            *counts.entry(o.cell()).or_insert(0usize) += 1;
        }
    }
    let mut s = String::new();
    s.push_str("# Fault matrix\n\n");
    s.push_str(
        "Generated by `segment/tests/fault_matrix.rs` (`fault_matrix_matches_the_document`); \
         regenerate with `UPDATE_FAULT_MATRIX=1 cargo test -p segment --test fault_matrix`. \
         The test fails when this file differs from what it finds.\n\n",
    );
    s.push_str(
        "Each cell: a log is written (plain batches, an aborted transaction, two leader \
         epochs, a roll, a flush), then the operation runs with the fault injected through \
         `FaultyFs` on every file of the class (`segment/src/fs.rs`). The test then \
         checks: the call returned a typed error carrying the injected errno; every batch a \
         `flush` acknowledged is still served with its bytes and nothing is served that was \
         never appended; the log went offline only for a failed fsync (the state on disk \
         unknown, `docs/kafka-behaviour.md#offline-rule`) and otherwise takes an append \
         and a flush once the fault is gone; a reopen with the real file system recovers \
         everything acknowledged and appends continue. A violation fails the test. \
         `delete_local_through` runs on a log with `remote.storage.enable` whose segments \
         are [0, 40), [40, 70) and the active one, the first uploaded (`delete_local_through(69, 39)`): \
         reads start at the local log start, which must not pass the uploaded offset + 1 \
         (no data that is not uploaded deleted), and the log start offset must stay 0 \
         (`docs/kafka-behaviour.md#delete-local-through`).\n\n",
    );
    s.push_str("| outcome | meaning |\n|---|---|\n");
    s.push_str(
        "| error | typed error with the injected errno; the log stays online and usable |\n",
    );
    s.push_str(
        "| offline | typed error; the log went offline (a failed fsync); a reopen recovers |\n",
    );
    s.push_str("| absorbed | the fault fired and the call still succeeded (e.g. a producer snapshot deferred, `#deferred-snapshots`); all checks held |\n");
    s.push_str("| n/a | the operation performs no such file operation on the class: the fault never fired |\n");
    s.push_str("| — | the fault cannot occur on the class at all (reasons below) |\n\n");
    s.push_str("Totals: ");
    let totals: Vec<String> = ["error", "offline", "absorbed", "n/a", "—"]
        .iter()
        .map(|k| format!("{} {k}", counts.get(k).copied().unwrap_or(0)))
        .collect();
    s.push_str(&totals.join(", "));
    s.push_str(&format!(" ({} cells).\n\n", cells.len() * Kind::ALL.len()));
    s.push_str("| operation | file class |");
    for k in Kind::ALL {
        s.push_str(&format!(" {} |", k.name()));
    }
    s.push_str("\n|---|---|");
    for _ in Kind::ALL {
        s.push_str("---|");
    }
    s.push('\n');
    for (op, class, row) in cells {
        s.push_str(&format!("| {} | {} |", op.name(), class.name()));
        for (o, kind) in row.iter().zip(Kind::ALL) {
            let mark = if *o == Outcome::Offline && !kind.may_go_offline() {
                "*"
            } else {
                ""
            };
            s.push_str(&format!(" {}{mark} |", o.cell()));
        }
        s.push('\n');
    }
    s.push_str("\nOffline on purpose after a fault that leaves the state known (*):\n\n");
    for op in Op::ALL {
        for class in Class::ALL {
            if let Some(why) = offline_by_design(op, class) {
                s.push_str(&format!("* {} × {}: {why}.\n", op.name(), class.name()));
            }
        }
    }
    s.push_str("\nWhy a fault cannot occur (—):\n\n");
    for class in Class::ALL {
        for kind in Kind::ALL {
            if let Some(why) = cannot_occur(class, kind) {
                s.push_str(&format!("* {} × {}: {why}.\n", class.name(), kind.name()));
            }
        }
    }
    s.push_str(
        "\nHow each fault is injected: `ENOSPC` and `EIO` fail the class's writes \
         (`.log` writes, whole-file writes of checkpoints, snapshots and the marker, \
         `set_len`, index resizes, `.txnindex` writes); a short write writes half of the \
         bytes first; a failed fsync fails `fsync`/`msync` of the class's files (a \
         checkpoint's or snapshot's temporary file included); a failed dir fsync fails the \
         first directory fsync after an operation that changed a file of the class \
         (creation, rename, deletion); a failed rename fails renames of the class's files; \
         `EMFILE` fails every open of them (and the open of the directory for its \
         fsync).\n",
    );
    s
}

/// Issue 19, section 2: every operation × file class × fault, injected and checked (see
/// [`run_cell`]); the table of outcomes must equal `docs/fault-matrix.md`
/// (`UPDATE_FAULT_MATRIX=1` rewrites it), so the document cannot go stale.
#[test]
fn fault_matrix_matches_the_document() {
    let mut cells = Vec::new();
    let mut violations = Vec::new();
    for op in Op::ALL {
        for class in Class::ALL {
            let mut row = Vec::new();
            for kind in Kind::ALL {
                match run_cell(op, class, kind) {
                    Ok(o) => row.push(o),
                    Err(v) => {
                        violations.push(format!(
                            "{} × {} × {}: {v}",
                            op.name(),
                            class.name(),
                            kind.name()
                        ));
                        row.push(Outcome::NotReached);
                    }
                }
            }
            cells.push((op, class, row));
        }
    }
    assert!(
        violations.is_empty(),
        "{} violations:\n{}",
        violations.len(),
        violations.join("\n")
    );
    let doc = render(&cells);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/fault-matrix.md");
    if std::env::var_os("UPDATE_FAULT_MATRIX").is_some() {
        std::fs::write(&path, &doc).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == doc,
        "docs/fault-matrix.md is stale; regenerate it with UPDATE_FAULT_MATRIX=1:\n{doc}"
    );
}

/// Found by the fault matrix: an append that changed the leader epoch and could not write
/// `leader-epoch-checkpoint` (`ENOSPC`, `EMFILE`, a failed rename) took the log offline,
/// although the state is known. The write is deferred: the append succeeds, the epoch is
/// in the cache, and the next flush writes the checkpoint before it moves the recovery
/// point; while the write keeps failing the flush fails (online) and the recovery point
/// stays below the batches of the new epoch.
#[test]
fn epoch_checkpoint_write_after_an_append_is_deferred_to_the_flush() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let cfg = matrix_cfg();
    let fs = Arc::new(FaultyFs::new());
    let log = Log::options()
        .clock(clock)
        .fs(fs.clone())
        .open(dir.path(), cfg)
        .unwrap();
    log.append(&epoch_batch(0, 0)).unwrap();
    log.flush().unwrap();
    let checkpoint = dir.path().join("leader-epoch-checkpoint");
    let read = || std::fs::read_to_string(&checkpoint).unwrap();
    assert_eq!(read(), "0\n1\n0 0\n");
    fs.inject(Fault::new(FsOp::WriteFile, ENOSPC).on_path("leader-epoch-checkpoint"));
    log.append(&epoch_batch(10, 1)).unwrap();
    assert!(!log.is_offline());
    assert_eq!(log.leader_epochs(), vec![(0, 0), (1, 10)]);
    assert_eq!(read(), "0\n1\n0 0\n");
    let err = log.flush().unwrap_err();
    assert_eq!(errno(&err), Some(ENOSPC), "{err}");
    assert!(!log.is_offline());
    assert_eq!(
        log.recovery_point(),
        10,
        "the recovery point passed unrecorded epochs"
    );
    fs.clear();
    log.flush().unwrap();
    assert_eq!(read(), "0\n2\n0 0\n1 10\n");
    assert_eq!(log.recovery_point(), 20);
}

/// The sabotage of the `delete_local_through` row: a deletion through more than the
/// uploaded offset (the caller reports 69 uploaded where only 39 is) deletes the second
/// segment too, and [`check_log`], given the true uploaded offset, refuses the result; the
/// real call passes it.
#[test]
fn delete_local_check_catches_a_deletion_past_the_uploaded_offset() {
    for (reported, caught) in [(39, false), (69, true)] {
        let dir = tmpdir();
        let (_t, clock) = mock();
        let cfg = LogConfig {
            remote_storage_enable: true,
            ..matrix_cfg()
        };
        let log = Log::options().clock(clock).open(dir.path(), cfg).unwrap();
        let mut m = Model::default();
        for base in [0, 10, 20, 30] {
            m.append(&log, epoch_batch(base, 0)).unwrap();
        }
        log.roll(None).unwrap();
        for base in [40, 50, 60] {
            m.append(&log, epoch_batch(base, 1)).unwrap();
        }
        log.roll(None).unwrap();
        m.append(&log, epoch_batch(70, 1)).unwrap();
        log.flush().unwrap();
        m.flushed(log.log_end_offset());
        log.delete_local_through(69, reported).unwrap();
        assert_eq!(log.log_start_offset(), 0);
        let r = check_log(&log, &m, (0, 39), "sabotage");
        assert_eq!(r.is_err(), caught, "reported {reported}: {r:?}");
    }
}
