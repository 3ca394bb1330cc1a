//! Issue 11, finding 1 and deliverables 1 and 7: `Log::open` takes an exclusive lock on the
//! partition directory's `.lock` file.
//!
//! Without it, a second process could open the same directory: its recovery and close
//! trimmed the writer's mapped index (the writer died of SIGBUS), and its appends
//! overwrote records the writer had acknowledged. The scenarios run in real processes:
//! this test binary re-executes itself, running the ignored test `child_process` with the
//! role in `DIR_LOCK_ROLE`.
#[expect(
    dead_code,
    reason = "a single-scenario binary: it uses a few of the shared helpers"
)]
mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use common::*;
use segment::record::BatchBuilder;
use segment::{Log, LogConfig, SegmentError};

const ROLE: &str = "DIR_LOCK_ROLE";
const DIR: &str = "DIR_LOCK_DIR";

/// Every batch gets an index entry (interval 1) and the indexes are large, so the
/// writer's active `.index` is mapped far beyond its entries.
fn cfg() -> LogConfig {
    config(1, 1 << 20)
}

fn tagged_batch(base: i64, tag: &str) -> Vec<u8> {
    BatchBuilder::new(base)
        .record(1_000 + base, None, Some(format!("{tag}-{base}").as_bytes()))
        .build()
        .unwrap()
}

/// `(offset, value)` of every record in the log.
fn contents(log: &Log) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    let mut o = log.log_start_offset();
    while o < log.log_end_offset() {
        let r = log.read(o, 1 << 20).unwrap();
        let mut last = None;
        for b in segment::record::batches_from(&r.records, 0) {
            let b = b.unwrap();
            for rec in b.records().unwrap() {
                let rec = rec.unwrap();
                let v = String::from_utf8(rec.value().unwrap().to_vec()).unwrap();
                out.push((rec.offset, v));
            }
            last = Some(b.last_offset());
        }
        o = last.expect("a read inside the log returned no batch") + 1;
    }
    out
}

fn open(dir: &Path) -> segment::Result<Log> {
    let (_t, clock) = mock();
    Log::options().clock(clock).open(dir, cfg())
}

/// What an intruder process prints about its open.
fn describe(r: &segment::Result<Log>) -> String {
    match r {
        Ok(_) => "OPENED".into(),
        Err(SegmentError::DirLocked { path, holder_pid }) => {
            format!(
                "LOCKED {} {}",
                holder_pid.map_or(-1, i64::from),
                path.display()
            )
        }
        Err(e) => format!("ERROR {e}"),
    }
}

/// The child roles. Ignored so that a plain `cargo test` does not run it on its own.
#[test]
#[ignore = "helper process of the other tests in this file, started by them"]
fn child_process() {
    let role = std::env::var(ROLE).expect("run by the other tests");
    let dir = std::path::PathBuf::from(std::env::var(DIR).unwrap());
    let say = |s: &str| {
        println!("CHILD:{s}");
        std::io::stdout().flush().unwrap();
    };
    let wait = || {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).unwrap();
    };
    match role.as_str() {
        // Opens and closes the directory, as the second process did.
        "open-close" => {
            let r = open(&dir);
            say(&describe(&r));
            if let Ok(log) = r {
                log.close().unwrap();
            }
        }
        // Opens the directory and appends 150 records at its own log end.
        "open-append" => {
            let r = open(&dir);
            say(&describe(&r));
            if let Ok(log) = r {
                let leo = log.log_end_offset();
                for o in leo..leo + 150 {
                    log.append(&tagged_batch(o, "intruder")).unwrap();
                }
                log.close().unwrap();
            }
        }
        // The writer: appends, waits for the parent, appends across several index pages
        // of the mapped active index, checks everything, closes.
        "writer" => {
            let log = open(&dir).unwrap();
            for o in 0..100 {
                log.append(&tagged_batch(o, "writer")).unwrap();
            }
            assert!(log
                .segments()
                .active_segment()
                .unwrap()
                .offset_index()
                .is_ok());
            say(&format!("READY {}", log.log_end_offset()));
            wait();
            // 2000 more index entries: 16 KB of the mapped `.index`, past the page that
            // held the end of an index trimmed by an intruder's close.
            for o in 100..2100 {
                log.append(&tagged_batch(o, "writer")).unwrap();
                log.segments()
                    .active_segment()
                    .unwrap()
                    .offset_index()
                    .unwrap()
                    .lookup(o)
                    .unwrap();
            }
            let want: Vec<(i64, String)> = (0..2100).map(|o| (o, format!("writer-{o}"))).collect();
            assert_eq!(contents(&log), want);
            log.close().unwrap();
            say("DONE");
        }
        // Holds the lock until stdin is closed, then exits without closing the log.
        "hold" => {
            let log = open(&dir).unwrap();
            say("HOLDING");
            wait();
            std::process::exit(if log.log_end_offset() >= 0 { 0 } else { 1 });
        }
        other => panic!("unknown role {other}"),
    }
}

fn spawn(role: &str, dir: &Path) -> (Child, BufReader<ChildStdout>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_process",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env(DIR, dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    (child, out)
}

/// The next `CHILD:` line of a child's output (panics if the child ends first).
fn next_line(out: &mut BufReader<ChildStdout>) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the child process ended without reporting"
        );
        // libtest prints `test child_process ... ` on the same line before the first one.
        if let Some(at) = line.find("CHILD:") {
            return line[at + "CHILD:".len()..].trim_end().to_string();
        }
    }
}

/// Runs a one-shot intruder role and returns its report.
fn intrude(role: &str, dir: &Path) -> String {
    let (mut child, mut out) = spawn(role, dir);
    let line = next_line(&mut out);
    let status = child.wait().unwrap();
    assert!(status.success(), "{role} child failed: {status:?}");
    line
}

fn expect_locked_by(report: &str, pid: u32, dir: &Path) {
    let lock = dir.join(".lock");
    assert_eq!(
        report,
        format!("LOCKED {pid} {}", lock.display()),
        "a second process must be refused with the lock file and the holder's pid"
    );
}

#[test]
fn second_open_in_the_same_process_is_refused_and_names_the_lock_file() {
    let dir = tmpdir();
    let log = open(dir.path()).unwrap();
    log.append(&tagged_batch(0, "writer")).unwrap();
    assert_eq!(log.lock_file(), dir.path().join(".lock"));
    match open(dir.path()) {
        Err(SegmentError::DirLocked { path, holder_pid }) => {
            assert_eq!(path, dir.path().join(".lock"));
            assert_eq!(holder_pid, Some(std::process::id()));
            let msg = SegmentError::DirLocked { path, holder_pid }.to_string();
            assert!(msg.contains(".lock") && msg.contains(&std::process::id().to_string()));
        }
        other => panic!("expected DirLocked, got {}", describe(&other)),
    }
    // The refused open touched nothing: the log is intact and still writable.
    log.append(&tagged_batch(1, "writer")).unwrap();
    log.close().unwrap();
    // Released on close: the directory opens again, cleanly.
    let log = open(dir.path()).unwrap();
    assert_eq!(log.stats().scanned_segments(), 0);
    assert_eq!(contents(&log).len(), 2);
    drop(log);
    // Released on drop too (a crash-like drop): the next open recovers.
    let log = open(dir.path()).unwrap();
    assert_eq!(contents(&log).len(), 2);
}

#[test]
fn a_second_process_opening_and_closing_the_dir_does_not_kill_the_writer() {
    let dir = tmpdir();
    let (mut writer, mut out) = spawn("writer", dir.path());
    assert_eq!(next_line(&mut out), "READY 100");
    // The intruder opens and closes the directory while the writer's index is mapped
    // (without the lock, its recovery and close trim that index under the writer).
    let report = intrude("open-close", dir.path());
    writer.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    let status = writer.wait().unwrap();
    assert!(
        status.success(),
        "the writer died ({status:?}; signal 7 is SIGBUS) after the intruder reported {report:?}"
    );
    assert_eq!(next_line(&mut out), "DONE");
    expect_locked_by(&report, writer.id(), dir.path());
}

#[test]
fn a_second_process_cannot_overwrite_acknowledged_records() {
    let dir = tmpdir();
    let (mut writer, mut out) = spawn("writer", dir.path());
    assert_eq!(next_line(&mut out), "READY 100");
    let report = intrude("open-append", dir.path());
    writer.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    let status = writer.wait().unwrap();
    // Every acknowledged record of the writer is there after its close, nothing else.
    let log = open(dir.path()).unwrap();
    let got = contents(&log);
    let lost: Vec<&(i64, String)> = got
        .iter()
        .enumerate()
        .filter(|(i, (o, v))| *o != *i as i64 || *v != format!("writer-{i}"))
        .map(|(_, r)| r)
        .collect();
    assert!(
        lost.is_empty() && got.len() == 2100,
        "{} records, {} not the writer's (first: {:?}); writer {status:?}; intruder {report:?}",
        got.len(),
        lost.len(),
        lost.first()
    );
    assert!(status.success());
    assert_eq!(next_line(&mut out), "DONE");
    expect_locked_by(&report, writer.id(), dir.path());
}

#[test]
fn the_lock_of_a_process_that_exits_without_closing_is_released() {
    let dir = tmpdir();
    let (mut holder, mut out) = spawn("hold", dir.path());
    assert_eq!(next_line(&mut out), "HOLDING");
    match open(dir.path()) {
        Err(SegmentError::DirLocked { holder_pid, .. }) => {
            assert_eq!(holder_pid, Some(holder.id()));
        }
        other => panic!("expected DirLocked, got {}", describe(&other)),
    }
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    // The OS released the lock with the process; the stale pid in the file is harmless.
    let log = open(dir.path()).unwrap();
    assert_eq!(log.log_end_offset(), 0);
    let again = open(dir.path());
    assert!(matches!(
        again,
        Err(SegmentError::DirLocked { holder_pid: Some(p), .. }) if p == std::process::id()
    ));
    drop(log);
}

#[test]
fn dump_log_reads_a_locked_directory_without_taking_the_lock() {
    let dir = tmpdir();
    let log = open(dir.path()).unwrap();
    for o in 0..3 {
        log.append(&tagged_batch(o, "writer")).unwrap();
    }
    let segment = log.segments().active_segment().unwrap().log_path();
    let out = Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .arg("--files")
        .arg(&segment)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("lastOffset: 2"), "{text}");
    // The writer still holds the lock and goes on.
    assert!(matches!(
        open(dir.path()),
        Err(SegmentError::DirLocked { .. })
    ));
    log.append(&tagged_batch(3, "writer")).unwrap();
}
