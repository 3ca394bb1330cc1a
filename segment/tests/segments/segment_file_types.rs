//! Issue 11, finding 6: segment files that are not regular files. Symlinks to regular
//! files are followed (the segment is loaded, not skipped); a segment file that is a
//! directory, FIFO, socket or dangling symlink is `SegmentError::NotARegularFile` naming
//! it: never skipped (its offsets would vanish), never opened (a FIFO blocks forever).
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::*;
use segment::{Log, LogConfig, SegmentError};

fn cfg() -> LogConfig {
    LogConfig {
        segment_bytes: 300,
        ..config(100, 10 << 20)
    }
}

/// A log of 45 offsets (15 batches of 3) over several segments, closed cleanly; returns
/// the base offset of a middle segment.
fn build(dir: &Path) -> i64 {
    let (_t, clock) = mock();
    let log = open_log(dir, cfg(), clock);
    fill(&log, 0, 15, 3, 1_000);
    let bases = log.segments().base_offsets();
    assert!(bases.len() >= 3, "{bases:?}");
    log.close().unwrap();
    bases[bases.len() / 2]
}

fn seg_file(dir: &Path, base: i64, ext: &str) -> PathBuf {
    dir.join(format!("{base:020}.{ext}"))
}

/// `Log::open` on another thread; fails the test (instead of hanging it) after 60 s.
fn open_with_timeout(dir: &Path) -> segment::Result<Log> {
    let (tx, rx) = mpsc::channel();
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let (_t, clock) = mock();
        let _ = tx.send(Log::options().clock(clock).open(dir, cfg()));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("Log::open hung on a segment file")
}

fn mkfifo(p: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success(), "mkfifo {}", p.display());
}

fn expect_not_regular(r: segment::Result<Log>, path: &Path, file_type: &str) {
    match r {
        Err(SegmentError::NotARegularFile {
            path: p,
            file_type: t,
        }) => {
            assert_eq!(p, path);
            assert_eq!(t, file_type);
        }
        Err(e) => panic!("expected NotARegularFile for {}, got {e:?}", path.display()),
        Ok(log) => panic!(
            "{} was accepted; the log holds {:?}",
            path.display(),
            log.segments().base_offsets()
        ),
    }
}

fn check_all_there(log: &Log, n: i64) {
    assert_eq!(log.log_end_offset(), n);
    assert_eq!(read_all(log, 0), (0..n).collect::<Vec<_>>());
    for o in 0..n {
        let r = log.read(o, 1).unwrap();
        let offs = offsets_in(&r.records);
        assert!(offs.contains(&o), "read({o}) returned {offs:?}");
    }
}

#[test]
fn a_middle_segment_of_symlinks_is_loaded() {
    for clean in [true, false] {
        let dir = tmpdir();
        let elsewhere = tmpdir();
        let base = build(dir.path());
        if !clean {
            std::fs::remove_file(dir.path().join(".kafka_cleanshutdown")).unwrap();
            std::fs::write(dir.path().join("recovery-point"), "0\n0\n").unwrap();
        }
        let mut moved = 0;
        for ext in ["log", "index", "timeindex", "txnindex"] {
            let p = seg_file(dir.path(), base, ext);
            if !p.exists() {
                continue;
            }
            let target = elsewhere.path().join(p.file_name().unwrap());
            std::fs::rename(&p, &target).unwrap();
            std::os::unix::fs::symlink(&target, &p).unwrap();
            moved += 1;
        }
        assert!(moved >= 3, "moved {moved}");
        let log = open_with_timeout(dir.path()).unwrap();
        assert!(
            log.segments().base_offsets().contains(&base),
            "clean={clean}: the symlinked segment {base} was skipped: {:?}",
            log.segments().base_offsets()
        );
        check_all_there(&log, 45);
        log.append(&batch(45, 3, 2_000)).unwrap();
        log.close().unwrap();
        let log = open_with_timeout(dir.path()).unwrap();
        check_all_there(&log, 48);
    }
}

#[test]
fn a_log_that_is_a_directory_is_a_typed_error_not_skipped() {
    let dir = tmpdir();
    let base = build(dir.path());
    let p = seg_file(dir.path(), base, "log");
    let aside = dir.path().join("aside");
    std::fs::rename(&p, &aside).unwrap();
    std::fs::create_dir(&p).unwrap();
    expect_not_regular(open_with_timeout(dir.path()), &p, "directory");
    // The failed open destroyed nothing (no index deleted as an orphan, no segment
    // dropped): put the file back and every offset is there.
    std::fs::remove_dir(&p).unwrap();
    std::fs::rename(&aside, &p).unwrap();
    let log = open_with_timeout(dir.path()).unwrap();
    check_all_there(&log, 45);
}

#[test]
fn an_index_that_is_a_fifo_neither_hangs_nor_is_skipped() {
    for ext in ["index", "timeindex", "txnindex", "log"] {
        let dir = tmpdir();
        let base = build(dir.path());
        let p = seg_file(dir.path(), base, ext);
        let aside = dir.path().join("aside");
        let existed = p.exists();
        if existed {
            std::fs::rename(&p, &aside).unwrap();
        }
        mkfifo(&p);
        expect_not_regular(open_with_timeout(dir.path()), &p, "FIFO");
        std::fs::remove_file(&p).unwrap();
        if existed {
            std::fs::rename(&aside, &p).unwrap();
        }
        let log = open_with_timeout(dir.path()).unwrap();
        check_all_there(&log, 45);
    }
}

#[test]
fn a_timeindex_directory_and_a_dangling_log_symlink_are_typed_errors() {
    let dir = tmpdir();
    let base = build(dir.path());
    let p = seg_file(dir.path(), base, "timeindex");
    std::fs::remove_file(&p).unwrap();
    std::fs::create_dir(&p).unwrap();
    expect_not_regular(open_with_timeout(dir.path()), &p, "directory");

    let dir = tmpdir();
    let base = build(dir.path());
    let p = seg_file(dir.path(), base, "log");
    std::fs::remove_file(&p).unwrap();
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &p).unwrap();
    expect_not_regular(open_with_timeout(dir.path()), &p, "dangling symlink");
}

#[test]
fn a_socket_segment_file_is_a_typed_error() {
    let dir = tmpdir();
    let base = build(dir.path());
    let p = seg_file(dir.path(), base, "index");
    std::fs::remove_file(&p).unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(&p).unwrap();
    expect_not_regular(open_with_timeout(dir.path()), &p, "socket");
}

#[test]
fn log_segment_open_checks_the_file_types_first() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let p = seg_file(dir.path(), 0, "txnindex");
    mkfifo(&p);
    let (tx, rx) = mpsc::channel();
    let d = dir.path().to_path_buf();
    std::thread::spawn(move || {
        let r = segment::LogSegment::<segment::KafkaBatchFormat>::open(
            &d,
            0,
            &cfg(),
            segment::SegmentOptions::existing().clock(clock),
        );
        let _ = tx.send(r.map(|_| ()));
    });
    match rx
        .recv_timeout(Duration::from_secs(60))
        .expect("LogSegment::open hung")
    {
        Err(SegmentError::NotARegularFile { path, file_type }) => {
            assert_eq!((path, file_type), (p, "FIFO"));
        }
        other => panic!("expected NotARegularFile, got {other:?}"),
    }
}
