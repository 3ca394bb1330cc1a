//! Issue 11, finding 5: garbage in the `recovery-point` or `log-start-offset` checkpoint
//! (empty, non-UTF-8, wrong version, overflowing or negative numbers, trailing lines, a
//! FIFO) is warned about and treated as missing: `Log::open` recovers every segment, as
//! Kafka's `LogManager.loadLogs` does, and never fails for it (nor hangs).
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use crate::common::*;
use segment::log::{LOG_START_OFFSET_FILE, RECOVERY_POINT_FILE};
use segment::{Log, LogConfig};

fn cfg() -> LogConfig {
    LogConfig {
        segment_bytes: 400,
        ..config(256, 10 << 20)
    }
}

/// A log of 60 offsets over several segments, closed cleanly.
fn build(dir: &Path) -> usize {
    let (_t, clock) = mock();
    let log = open_log(dir, cfg(), clock);
    fill(&log, 0, 12, 5, 1_000);
    let n = log.segments().number_of_segments();
    assert!(n >= 3, "{n} segments");
    log.close().unwrap();
    n
}

/// `Log::open` on another thread, failing the test (instead of hanging it) after 60 s.
fn open_with_timeout(dir: &Path) -> segment::Result<Log> {
    let (tx, rx) = mpsc::channel();
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let (_t, clock) = mock();
        let _ = tx.send(Log::options().clock(clock).open(dir, cfg()));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("Log::open hung on a checkpoint file")
}

const GARBAGE: &[(&str, &[u8])] = &[
    ("empty", b""),
    ("non-UTF-8", b"\xff\xfe\x00\x80\n\xc3\x28\n"),
    ("wrong version", b"1\n60\n"),
    ("overflowing offset", b"0\n99999999999999999999999\n"),
    ("negative offset", b"0\n-7\n"),
    ("no offset", b"0\n"),
    ("garbage lines", b"0\n60\nthis is not a checkpoint\n"),
    ("random bytes", b"\x00\x00\x00\x01\x02garbage"),
];

fn check_recovers_everything(dir: &Path, file: &str, what: &str, segments: usize) {
    let log =
        open_with_timeout(dir).unwrap_or_else(|e| panic!("{file} {what}: Log::open failed: {e:?}"));
    assert_eq!(
        log.stats().scanned_segments(),
        segments as u64,
        "{file} {what}: every segment must be recovered"
    );
    assert_eq!(log.log_end_offset(), 60, "{file} {what}");
    assert_eq!(log.log_start_offset(), 0, "{file} {what}");
    assert_eq!(
        read_all(&log, 0),
        (0..60).collect::<Vec<_>>(),
        "{file} {what}"
    );
    // Still writable, and the checkpoint is rewritten in its valid form.
    log.append(&batch(60, 5, 2_000)).unwrap();
    log.close().unwrap();
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    assert!(
        text.starts_with("0\n"),
        "{file} {what}: rewritten as {text:?}"
    );
    let log = open_with_timeout(dir).unwrap();
    assert_eq!(
        log.stats().scanned_segments(),
        0,
        "{file} {what}: clean again"
    );
    assert_eq!(read_all(&log, 0), (0..65).collect::<Vec<_>>());
}

#[test]
fn garbage_recovery_point_is_treated_as_missing() {
    for (what, bytes) in GARBAGE {
        let dir = tmpdir();
        let n = build(dir.path());
        std::fs::write(dir.path().join(RECOVERY_POINT_FILE), bytes).unwrap();
        check_recovers_everything(dir.path(), RECOVERY_POINT_FILE, what, n);
    }
}

#[test]
fn garbage_log_start_offset_is_treated_as_missing() {
    for (what, bytes) in GARBAGE {
        let dir = tmpdir();
        let n = build(dir.path());
        std::fs::write(dir.path().join(LOG_START_OFFSET_FILE), bytes).unwrap();
        check_recovers_everything(dir.path(), LOG_START_OFFSET_FILE, what, n);
    }
}

#[test]
fn garbage_checkpoint_after_a_crash_is_treated_as_missing() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), cfg(), clock);
    fill(&log, 0, 12, 5, 1_000);
    let n = log.segments().number_of_segments();
    log.flush().unwrap();
    log.close_handlers();
    std::fs::write(dir.path().join(RECOVERY_POINT_FILE), b"\xc3\x28").unwrap();
    std::fs::write(dir.path().join(LOG_START_OFFSET_FILE), b"").unwrap();
    check_recovers_everything(dir.path(), RECOVERY_POINT_FILE, "after a crash", n);
}

#[test]
fn fifo_checkpoint_neither_hangs_nor_fails_the_open() {
    for file in [RECOVERY_POINT_FILE, LOG_START_OFFSET_FILE] {
        let dir = tmpdir();
        let n = build(dir.path());
        let p = dir.path().join(file);
        std::fs::remove_file(&p).unwrap();
        let st = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap();
        assert!(st.success(), "mkfifo");
        check_recovers_everything(dir.path(), file, "FIFO", n);
    }
}

#[test]
fn oversized_checkpoint_is_treated_as_missing() {
    let dir = tmpdir();
    let n = build(dir.path());
    let mut big = b"0\n60\n".to_vec();
    big.resize(1 << 20, b'\n');
    std::fs::write(dir.path().join(RECOVERY_POINT_FILE), big).unwrap();
    check_recovers_everything(dir.path(), RECOVERY_POINT_FILE, "1 MiB", n);
}
