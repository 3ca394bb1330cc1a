//! `dump-log` on transaction indexes (synthetic: no real fixture has an aborted
//! transaction), on a corrupted copy of a real time index, and index sanity checks.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use segment::dump::{self, Collect, DumpOptions, Event, Problem};
use segment::record::{control_batch, BatchBuilder, ControlRecordType};
use segment::{LogConfig, LogSegment, MockTime, ProducerStateManager};

fn run_cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .args(args)
        .output()
        .expect("run dump-log")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn dump(path: &Path, opts: &DumpOptions) -> Collect {
    let mut sink = Collect::default();
    dump::dump_file(path, opts, &mut sink);
    sink
}

fn txn_batch(base: i64, pid: i64) -> Vec<u8> {
    BatchBuilder::new(base)
        .partition_leader_epoch(15)
        .producer(pid, 0, 0)
        .transactional(true)
        .record(base, None, Some(b"a"))
        .record(base, None, Some(b"b"))
        .build()
        .unwrap()
}

/// Segment 100: pid 5 commits, pid 10 aborts (acceptance case 59 shape); recovered, so a
/// `.txnindex` with one entry `(10, 102, 106, 100)` exists.
fn txn_segment(dir: &Path) -> PathBuf {
    let cfg = LogConfig {
        index_interval_bytes: 10,
        max_index_size: 1000,
        ..LogConfig::default()
    };
    let clock: segment::Clock = Arc::new(MockTime::new(1_000_000));
    let seg: LogSegment = LogSegment::create(dir, 100, &cfg, clock).unwrap();
    seg.append(101, 100, 101, &txn_batch(100, 5)).unwrap();
    seg.append(103, 102, 103, &txn_batch(102, 10)).unwrap();
    let abort = control_batch(104, 10, 0, ControlRecordType::Abort, 7, 104).unwrap();
    seg.append(104, 104, 104, &abort).unwrap();
    let commit = control_batch(105, 5, 0, ControlRecordType::Commit, 7, 105).unwrap();
    seg.append(105, 105, 105, &commit).unwrap();
    seg.recover(&mut ProducerStateManager::new(), None).unwrap();
    seg.close().unwrap();
    dir.join("00000000000000000100.txnindex")
}

#[test]
fn txn_index_dump_markers_and_rebuild() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("p-0");
    std::fs::create_dir(&src).unwrap();
    let txn = txn_segment(&src);
    assert!(txn.exists());

    let events = dump(&txn, &DumpOptions::default());
    assert!(events.problems().is_empty());
    assert!(events.0.contains(&Event::TxnEntry {
        slot: 0,
        version: 0,
        producer_id: 10,
        first_offset: 102,
        last_offset: 104,
        last_stable_offset: 100,
    }));
    let out = run_cli(&[txn.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        format!(
            "Dumping {}\nversion: 0 producerId: 10 firstOffset: 102 lastOffset: 104 lastStableOffset: 100\n",
            txn.display()
        )
    );
    // Kafka prints a .txnindex's entries under --index-sanity-check and
    // --verify-index-only too, and no "passed sanity check." line for it.
    for mode in ["--index-sanity-check", "--verify-index-only"] {
        let out = run_cli(&[mode, txn.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            stdout(&out),
            format!(
                "Dumping {}\nversion: 0 producerId: 10 firstOffset: 102 lastOffset: 104 lastStableOffset: 100\n",
                txn.display()
            ),
            "{mode}"
        );
    }

    // Deep iteration decodes both markers.
    let out = run_cli(&["--deep-iteration", src.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let so = stdout(&out);
    assert!(
        so.contains(" endTxnMarker: ABORT coordinatorEpoch: 7"),
        "{so}"
    );
    assert!(
        so.contains(" endTxnMarker: COMMIT coordinatorEpoch: 7"),
        "{so}"
    );
    assert!(so.contains("isTransactional: true isControl: true"), "{so}");

    // The rebuild writes the same .txnindex.
    let out_dir = tmp.path().join("rebuilt");
    let out = run_cli(&[
        "--rebuild-indexes-to",
        out_dir.to_str().unwrap(),
        src.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(out_dir.join("00000000000000000100.txnindex")).unwrap(),
        std::fs::read(&txn).unwrap()
    );
    assert!(stdout(&out).contains("00000000000000000100.txnindex (1 entries, 34 bytes): identical"));

    // An entry below the segment base offset is corrupt.
    let mut bytes = std::fs::read(&txn).unwrap();
    bytes[18..26].copy_from_slice(&50i64.to_be_bytes()); // last offset
    std::fs::write(&txn, &bytes).unwrap();
    let out = run_cli(&["--index-sanity-check", txn.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("last offset 50 is below the segment base offset 100"));
}

/// A writable copy of a field-data partition; `None` when the field data is missing
/// (skipped outside CI, a failure under `CI=true`).
fn real_copy(name: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let src = field_data::field_data_dir("dump-log field data")?.join(name);
    assert!(
        src.is_dir(),
        "field-data partition {} is missing",
        src.display()
    );
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join(name);
    std::fs::create_dir(&dst).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        std::fs::write(dst.join(p.file_name().unwrap()), std::fs::read(&p).unwrap()).unwrap();
    }
    Some((tmp, dst))
}

#[test]
fn corrupted_time_index_timestamp() {
    let Some((_t, dir)) = real_copy("rjmfernandes-MonitoringVerifierStore-changelog-0") else {
        return;
    };
    let tidx = dir.join("00000000000000000000.timeindex");
    let mut bytes = std::fs::read(&tidx).unwrap();
    let at = 5 * 12;
    let ts = i64::from_be_bytes(bytes[at..at + 8].try_into().unwrap());
    let off = i32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as i64;
    bytes[at..at + 8].copy_from_slice(&(ts + 1).to_be_bytes());
    std::fs::write(&tidx, &bytes).unwrap();

    let opts = DumpOptions {
        verify_index_only: true,
        ..DumpOptions::default()
    };
    let events = dump(&tidx, &opts);
    match events.problems()[..] {
        [Problem::TimestampMismatch {
            slot: 5,
            offset,
            index_timestamp,
            log_timestamp,
            ..
        }] => {
            assert_eq!(*offset, off);
            assert_eq!((*index_timestamp, *log_timestamp), (ts + 1, ts));
        }
        ref other => panic!("{other:?}"),
    }
    let out = run_cli(&["--verify-index-only", tidx.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let abs = std::path::absolute(&tidx).unwrap();
    assert_eq!(
        stderr(&out),
        format!(
            "Found timestamp mismatch in :{}\n  Index timestamp: {}, log timestamp: {ts}\n",
            abs.display(),
            ts + 1
        )
    );
}

#[test]
fn sanity_check_failures() {
    let Some((_t, dir)) = real_copy("nikhildighe-__consumer_offsets-12") else {
        return;
    };
    // Time index whose last timestamp is below its first.
    let tidx = dir.join("00000000000000000000.timeindex");
    let mut bytes = std::fs::read(&tidx).unwrap();
    let last = bytes.len() - 12;
    bytes[last..last + 8].copy_from_slice(&0i64.to_be_bytes());
    std::fs::write(&tidx, &bytes).unwrap();
    // Offset index with a partial trailing entry.
    let idx = dir.join("00000000000000000000.index");
    let mut bytes = std::fs::read(&idx).unwrap();
    bytes.extend_from_slice(&[0, 0, 0]);
    std::fs::write(&idx, &bytes).unwrap();

    let out = run_cli(&["--index-sanity-check", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("Sanity check failed"), "{err}");
    assert!(
        err.contains("last timestamp 0 is less than the first timestamp"),
        "{err}"
    );
    assert!(err.contains("not a multiple of the entry size 8"), "{err}");
    let so = stdout(&out);
    assert!(
        so.contains("00000000000000000862.timeindex passed sanity check."),
        "{so}"
    );
    assert!(!so.contains("00000000000000000000.index passed"), "{so}");
}
