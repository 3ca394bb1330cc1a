//! Issue 11, findings 6 and 8: `dump-log` on paths that are not what they claim to be.
//! A `.log` or `.index` that is a FIFO, a `.log` that is a directory, a log-dir root and
//! an empty directory: each is a clear error naming the path with a non-zero exit (or,
//! for a log-dir root, a dump of its partitions), never a hang and never "nothing,
//! exit 0". The binary runs under a deadline, so a hang fails the test.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use segment::record::BatchBuilder;

/// Runs `dump-log args…`, killing it after 20 s. Returns (exit code, stdout, stderr).
fn dump_log(args: &[&Path]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .arg("--no-progress")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(_status) = child.try_wait().unwrap() {
            break;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("dump-log {args:?} hung (killed after 20 s)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success(), "mkfifo {}", path.display());
}

/// A partition directory with one segment of three batches and no indexes.
fn partition(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let mut log = Vec::new();
    for b in 0..3 {
        log.extend(
            BatchBuilder::new(b)
                .record(1_000 + b, None, Some(b"v"))
                .build()
                .unwrap(),
        );
    }
    std::fs::write(dir.join("00000000000000000000.log"), log).unwrap();
}

#[test]
fn a_fifo_log_is_an_error_naming_it_not_a_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("00000000000000000000.log");
    mkfifo(&fifo);
    let (code, _, err) = dump_log(&[&fifo]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is a FIFO, not a regular file"), "{err}");
    assert!(err.contains("00000000000000000000.log"), "{err}");
}

#[test]
fn a_fifo_index_is_an_error_naming_it_not_a_hang() {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path());
    let fifo = tmp.path().join("00000000000000000000.index");
    mkfifo(&fifo);
    // Given directly, and found in its partition directory.
    for input in [fifo.as_path(), tmp.path()] {
        let (code, _, err) = dump_log(&[input]);
        assert_eq!(code, 2, "{input:?}: {err}");
        assert!(
            err.contains("00000000000000000000.index is a FIFO"),
            "{err}"
        );
    }
    // The .log whose sibling index is the FIFO: dumped without opening the FIFO.
    let log = tmp.path().join("00000000000000000000.log");
    let (code, _, err) = dump_log(&[&log]);
    assert!(code == 0 || code == 1, "{err}");
}

#[test]
fn a_log_that_is_a_directory_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path());
    let dir_log = tmp.path().join("00000000000000000100.log");
    std::fs::create_dir(&dir_log).unwrap();
    let (code, _, err) = dump_log(&[&dir_log]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("00000000000000000100.log is a directory"),
        "{err}"
    );
    // In its partition directory: the good segment is dumped, the directory reported.
    let (code, out, err) = dump_log(&[tmp.path()]);
    assert_eq!(code, 2, "{err}");
    assert!(out.contains("baseOffset: 2"), "{out}");
    assert!(
        err.contains("00000000000000000100.log is a directory"),
        "{err}"
    );
}

#[test]
fn an_empty_directory_says_there_is_nothing_to_dump() {
    let tmp = tempfile::tempdir().unwrap();
    for verify in [false, true] {
        let mut args: Vec<&Path> = Vec::new();
        if verify {
            args.push(Path::new("--verify-index-only"));
        }
        args.push(tmp.path());
        let (code, _, err) = dump_log(&args);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("nothing to dump"), "{err}");
    }
}

#[test]
fn a_log_dir_root_dumps_each_partition() {
    let root = tempfile::tempdir().unwrap();
    partition(&root.path().join("orders-0"));
    partition(&root.path().join("orders-1"));
    std::fs::write(root.path().join("meta.properties"), "version=1\n").unwrap();
    let (code, out, err) = dump_log(&[root.path()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("orders-0/00000000000000000000.log"), "{out}");
    assert!(out.contains("orders-1/00000000000000000000.log"), "{out}");
    let (code, _, err) = dump_log(&[Path::new("--verify-index-only"), root.path()]);
    assert_eq!(code, 0, "{err}");
}
