//! Issue 11, deliverable 6 applied to the directory lock: a `.lock` that is not a regular
//! file is a typed error naming it, and is never opened (a FIFO could block). Before the
//! fix a FIFO `.lock` was opened and locked, and then failed as an untyped I/O error
//! (`EINVAL` from truncating it before writing the pid); a directory `.lock` failed as an
//! untyped "is a directory". A symlink to a regular file is followed, as Kafka follows
//! them, and still excludes a second open.

use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use crate::common::*;
use segment::{Log, SegmentError};

/// `Log::open` on another thread, with a deadline: a hang is a test failure, not a hung
/// test.
fn open_within_deadline(dir: &Path) -> segment::Result<Log> {
    let (tx, rx) = mpsc::channel();
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let (_t, clock) = mock();
        let _ = tx.send(Log::options().clock(clock).open(dir, config(4096, 1 << 20)));
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("Log::open hung on the .lock file")
}

fn assert_not_regular(res: segment::Result<Log>, lock: &Path, what: &str) {
    match res {
        Err(SegmentError::NotARegularFile { path, file_type }) => {
            assert_eq!(path, lock);
            assert_eq!(file_type, what);
        }
        other => panic!("expected NotARegularFile for a {what} .lock, got {other:?}"),
    }
}

#[test]
fn a_fifo_lock_file_is_a_typed_error_and_never_opened() {
    let dir = tmpdir();
    let lock = dir.path().join(".lock");
    let st = Command::new("mkfifo").arg(&lock).status().unwrap();
    assert!(st.success());
    assert_not_regular(open_within_deadline(dir.path()), &lock, "FIFO");
    // And again, as a second opener would.
    assert_not_regular(open_within_deadline(dir.path()), &lock, "FIFO");
}

#[test]
fn a_directory_or_dangling_symlink_lock_file_is_a_typed_error() {
    let dir = tmpdir();
    let lock = dir.path().join(".lock");
    std::fs::create_dir(&lock).unwrap();
    assert_not_regular(open_within_deadline(dir.path()), &lock, "directory");

    let dir = tmpdir();
    let lock = dir.path().join(".lock");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &lock).unwrap();
    assert_not_regular(open_within_deadline(dir.path()), &lock, "dangling symlink");
}

#[test]
fn a_symlinked_lock_file_is_followed_and_still_excludes_a_second_open() {
    let dir = tmpdir();
    let elsewhere = tmpdir();
    let target = elsewhere.path().join("partition.lock");
    std::fs::write(&target, b"").unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join(".lock")).unwrap();
    let log = open_within_deadline(dir.path()).unwrap();
    fill(&log, 0, 2, 2, 1000);
    match open_within_deadline(dir.path()) {
        Err(SegmentError::DirLocked { holder_pid, .. }) => {
            assert_eq!(holder_pid, Some(std::process::id()));
        }
        other => panic!("a second open must be refused, got {other:?}"),
    }
    log.close().unwrap();
    let log = open_within_deadline(dir.path()).unwrap();
    assert_eq!(log.log_end_offset(), 4);
    log.close().unwrap();
}
