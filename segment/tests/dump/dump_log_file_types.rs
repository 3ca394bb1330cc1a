//! Issue 11, findings 6 and 8: `dump-log` on paths that are not what they claim to be.
//! A `.log` or `.index` that is a FIFO, a `.log` that is a directory, a log-dir root and
//! an empty directory: each is a clear error naming the path with a non-zero exit (or,
//! for a log-dir root, a dump of its partitions), never a hang and never "nothing,
//! exit 0". The binary runs under a deadline, so a hang fails the test.

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use segment::record::BatchBuilder;

/// Runs `dump-log args…`, killing it after 20 s. Returns (exit code, stdout, stderr).
fn dump_log(args: &[&Path]) -> (i32, String, String) {
    let args: Vec<&OsStr> = args.iter().map(|p| p.as_os_str()).collect();
    let (code, out, err) = dump_log_raw(&args, Stdio::piped());
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

/// Runs `dump-log --no-progress args…` with the given standard output, killing it after
/// 20 s. Returns (exit code, stdout bytes, stderr bytes), exactly as written.
fn dump_log_raw(args: &[&OsStr], stdout: Stdio) -> (i32, Vec<u8>, Vec<u8>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .arg("--no-progress")
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain the pipes while waiting: a dump larger than a pipe buffer must not block.
    let out_reader = child.stdout.take().map(|mut o| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            o.read_to_end(&mut b).unwrap();
            b
        })
    });
    let mut stderr = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        stderr.read_to_end(&mut b).unwrap();
        b
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("dump-log {args:?} hung (killed after 20 s)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = out_reader.map(|t| t.join().unwrap()).unwrap_or_default();
    let err = err_reader.join().unwrap();
    (status.code().unwrap_or(-1), out, err)
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

// ---------------------------------------------------------------------------------------
// Issue 19: hostile names, an unwritable standard output, contradictory flags, and files
// larger than any Kafka writes.
// ---------------------------------------------------------------------------------------

/// A directory name built to attack a terminal and the reader of the dump: it retitles
/// the window (OSC 0), clears the screen (CSI 2J), starts a forged `Dumping` line, holds
/// a C1 CSI (U+009B), a right-to-left override (U+202E), DEL, and a byte that is not
/// UTF-8.
fn hostile_name() -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    let mut b = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J\nDumping forged\u{9b}31m\u{202e}\u{7f}\\"
        .as_bytes()
        .to_vec();
    b.push(0xFF);
    std::ffi::OsString::from_vec(b)
}

/// The escaped form of [`hostile_name`] that text output must show.
const HOSTILE_ESCAPED: &str =
    "evil\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\nDumping forged\\u{9b}31m\\u{202e}\\u{7f}\\\\\\xFF";

/// No terminal control can come out of these bytes: no C0 control but newline, no DEL,
/// no C1 control, no bidi override, and every line is one the tool wrote (no forged
/// `Dumping forged` line).
fn assert_inert(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for c in text.chars() {
        assert!(
            c == '\n' || !(c.is_control() || c == '\u{202e}'),
            "{what} holds {c:?}: {text}"
        );
    }
    assert!(
        !text.lines().any(|l| l.starts_with("Dumping forged")),
        "{what} has a forged line: {text}"
    );
}

#[test]
fn hostile_directory_and_file_names_are_escaped_in_text_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(hostile_name());
    partition(&dir);
    // An index that disagrees with the log: its problem report names the path on stderr.
    std::fs::write(
        dir.join("00000000000000000000.index"),
        [0, 0, 0, 1, 0, 0, 0, 0],
    )
    .unwrap();
    // A file of unknown type and a .log whose name is no offset, both named hostilely.
    let unknown = dir.join("x\u{1b}[2J\n.bin");
    std::fs::write(&unknown, b"?").unwrap();
    let bad_offset = dir.join("\u{1b}]0;t\u{7}.log");
    std::fs::write(&bad_offset, b"").unwrap();
    let args = [dir.as_os_str(), unknown.as_os_str(), bad_offset.as_os_str()];
    let (code, out, err) = dump_log_raw(&args, Stdio::piped());
    assert_inert("stdout", &out);
    assert_inert("stderr", &err);
    let out = String::from_utf8(out).unwrap();
    let err = String::from_utf8(err).unwrap();
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains(&format!(
            "Dumping {}",
            tmp.path().join(HOSTILE_ESCAPED).display()
        )),
        "{out}"
    );
    assert!(out.contains(HOSTILE_ESCAPED), "{out}");
    assert!(err.contains("Ignoring unknown file"), "{err}");
    assert!(err.contains("x\\u{1b}[2J\\n.bin"), "{err}");
    // The reason quotes the name (already escaped by the name parser, escaped again).
    assert!(err.contains("\\u{1b}]0;t\\u{7}.log"), "{err}");
    // The note about the index (a chunk-shaped entry) names it escaped.
    let index = tmp
        .path()
        .join(HOSTILE_ESCAPED)
        .join("00000000000000000000.index");
    assert!(err.contains(&format!(" :{} ", index.display())), "{err}");
}

#[test]
fn hostile_names_stay_valid_json_lines_and_are_not_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(hostile_name());
    partition(&dir);
    let (code, out, err) = dump_log_raw(&[OsStr::new("--json"), dir.as_os_str()], Stdio::piped());
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
    assert_inert("json", &out);
    let out = String::from_utf8(out).unwrap();
    let events: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let dumping: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["type"] == "dumping").collect();
    assert_eq!(dumping.len(), 1, "{out}");
    // The name as a JSON string: exact where it is UTF-8, U+FFFD for the 0xFF byte.
    let want = dir.join("00000000000000000000.log");
    assert_eq!(dumping[0]["path"], want.to_string_lossy().as_ref(), "{out}");
    assert!(dumping[0]["path"]
        .as_str()
        .unwrap()
        .contains("\u{1b}]0;pwned\u{7}"));
    assert_eq!(events.last().unwrap()["type"], "summary", "{out}");
}

#[test]
fn hostile_keys_values_and_header_keys_are_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("00000000000000000000.log");
    let batch = BatchBuilder::new(0)
        .record_with_headers(
            1_000,
            Some(b"k\x1b[2J"),
            Some(b"v\nDumping forged\x1b]0;x\x07"),
            &[(b"h\x1b[31m\r", Some(b"hv"))],
        )
        .build()
        .unwrap();
    std::fs::write(&log, batch).unwrap();
    let (code, out, err) = dump_log_raw(
        &[OsStr::new("--print-data-log"), log.as_os_str()],
        Stdio::piped(),
    );
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    assert_inert("stdout", &out);
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("headerKeys: [h\\u{1b}[31m\\r]"), "{out}");
    assert!(
        out.contains("key: k\\u{1b}[2J payload: v\\nDumping forged\\u{1b}]0;x\\u{7}"),
        "{out}"
    );
}

/// A partition with enough batches that its dump outgrows a pipe buffer.
fn big_partition(dir: &Path, batches: i64) {
    std::fs::create_dir_all(dir).unwrap();
    let mut log = Vec::new();
    for b in 0..batches {
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
fn a_closed_stdout_is_an_error_not_a_silent_success() {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path());
    for extra in [None, Some("--json"), Some("--verify-index-only")] {
        // `exec … >&-`: the binary starts with descriptor 1 closed.
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(r#"exec "$0" "$@" >&-"#)
            .arg(env!("CARGO_BIN_EXE_dump-log"))
            .arg("--no-progress");
        if let Some(e) = extra {
            c.arg(e);
        }
        let o = c.arg(tmp.path()).stdin(Stdio::null()).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: one line: {err}");
        assert!(err.contains("dump-log: standard output is closed"), "{err}");
    }
    // `> /dev/null` is a deliberate discard, not a closed output: the verdict stands.
    let (code, _, err) = dump_log_raw(&[tmp.path().as_os_str()], Stdio::null());
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
}

#[test]
fn a_full_stdout_is_an_error_with_one_line_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path());
    big_partition(&tmp.path().join("big"), 2_000);
    for input in [tmp.path().to_path_buf(), tmp.path().join("big")] {
        for json in [false, true] {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            let mut args = vec![input.as_os_str()];
            if json {
                args.insert(0, OsStr::new("--json"));
            }
            let (code, _, err) = dump_log_raw(&args, Stdio::from(full));
            let err = String::from_utf8_lossy(&err);
            assert_eq!(code, 2, "{input:?} json={json}: {err}");
            let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("dump-log:")).collect();
            assert_eq!(lines.len(), 1, "{err}");
            assert!(
                lines[0].contains("cannot write to standard output: No space left on device"),
                "{err}"
            );
        }
    }
}

#[test]
fn a_broken_pipe_exits_141_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    big_partition(tmp.path(), 5_000);
    let mut child = Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .arg("--no-progress")
        .arg(tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `| head -1`: read one line, then go away.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    assert!(first.starts_with(b"Dumping "));
    drop(stdout);
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(141),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "quiet: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs dump-log with `flags` on a small partition; asserts clap refuses them (exit
/// status 2, a message naming both flags, nothing on stdout but, with `--json`, one
/// error object).
fn assert_refused(flags: &[&str], names: [&str; 2]) {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path());
    let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
    args.push(tmp.path().as_os_str());
    let (code, out, err) = dump_log_raw(&args, Stdio::piped());
    let err = String::from_utf8_lossy(&err);
    assert_eq!(code, 2, "{flags:?} accepted: {err}");
    if flags.contains(&"--json") {
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["type"], "error", "{flags:?}: {v}");
        assert_eq!(v["exit_code"], 2, "{flags:?}: {v}");
    } else {
        assert!(out.is_empty(), "{flags:?}");
    }
    for n in names {
        assert!(err.contains(n), "{flags:?}: {n} not named: {err}");
    }
}

/// Runs dump-log with `flags` on a small partition; asserts it is accepted (exit 0).
fn assert_accepted(flags: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path());
    let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
    args.push(tmp.path().as_os_str());
    let (code, out, err) = dump_log_raw(&args, Stdio::piped());
    assert_eq!(
        code,
        0,
        "{flags:?} refused: {}",
        String::from_utf8_lossy(&err)
    );
    String::from_utf8(out).unwrap()
}

#[test]
fn verify_index_only_and_index_sanity_check_are_refused_together() {
    // Kafka silently runs the sanity check and ignores --verify-index-only.
    assert_refused(
        &["--verify-index-only", "--index-sanity-check"],
        ["--verify-index-only", "--index-sanity-check"],
    );
}

#[test]
fn records_are_printed_in_the_index_modes_as_kafka_prints_them() {
    // Kafka's --verify-index-only and --index-sanity-check only concern .index and
    // .timeindex files: a .log is dumped in full, records and data included.
    for mode in ["--verify-index-only", "--index-sanity-check"] {
        let out = assert_accepted(&[mode]);
        assert!(out.contains("baseOffset: 0 lastOffset:"), "{mode}: {out}");
        assert!(!out.contains("| offset:"), "{mode}: {out}");
        let out = assert_accepted(&["--deep-iteration", mode]);
        assert!(out.contains("| offset: 0 "), "{mode}: {out}");
        assert!(!out.contains("payload: v"), "{mode}: {out}");
        let out = assert_accepted(&["--print-data-log", mode]);
        assert!(out.contains("payload: v"), "{mode}: {out}");
        let out = assert_accepted(&["--skip-record-metadata", "--print-data-log", mode]);
        assert!(out.lines().any(|l| l == "| payload: v"), "{mode}: {out}");
    }
    let out = assert_accepted(&["--deep-iteration", "--print-data-log"]);
    assert!(out.contains("payload: v"), "{out}");
}

#[test]
fn skip_record_metadata_is_refused_where_no_record_is_printed_as_text() {
    // Without deep iteration no record is printed at all.
    assert_refused(
        &["--skip-record-metadata"],
        [
            "--skip-record-metadata",
            "--deep-iteration|--print-data-log",
        ],
    );
    assert_refused(
        &["--skip-record-metadata", "--deep-iteration", "--json"],
        ["--skip-record-metadata", "--json"],
    );
    let out = assert_accepted(&["--skip-record-metadata", "--print-data-log"]);
    assert!(out.lines().any(|l| l == "| payload: v"), "{out}");
    assert_accepted(&["--skip-record-metadata", "--deep-iteration"]);
}

#[test]
fn kafka_strict_is_refused_with_the_sanity_check() {
    assert_refused(
        &["--kafka-strict", "--index-sanity-check"],
        ["--kafka-strict", "--index-sanity-check"],
    );
    assert_accepted(&["--kafka-strict", "--verify-index-only"]);
}

/// A sparse file of `len` bytes (no disk blocks) holding `head` at its start.
fn sparse(path: &Path, head: &[u8], len: u64) {
    std::fs::write(path, head).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

const GIB: u64 = 1 << 30;

/// Runs dump-log under a 512 MiB address-space limit (`ulimit -v`): a dump that
/// allocated in proportion to a multi-GiB input would fail.
fn dump_log_bounded(args: &[&OsStr]) -> (i32, String, String) {
    let o = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 524288 && exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_dump-log"))
        .arg("--no-progress")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_100_gib_sparse_index_is_named_as_larger_than_kafka_writes_not_out_of_memory() {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path());
    let size = 100 * GIB;
    for (name, what) in [
        ("00000000000000000000.index", "index"),
        ("00000000000000000000.timeindex", "index"),
        ("00000000000000000000.txnindex", "transaction index"),
        ("00000000000000000000.snapshot", "producer snapshot"),
    ] {
        let file = tmp.path().join(name);
        sparse(&file, &[], size);
        for mode in [
            None,
            Some("--verify-index-only"),
            Some("--index-sanity-check"),
        ] {
            let mut args: Vec<&OsStr> = mode.iter().map(OsStr::new).collect();
            args.push(file.as_os_str());
            let (code, _, err) = dump_log_bounded(&args);
            assert_eq!(code, 2, "{name} {mode:?}: {err}");
            assert!(!err.to_lowercase().contains("out of memory"), "{err}");
            assert!(
                err.contains(&format!("Problems in :{}", file.display())),
                "{err}"
            );
            assert!(
                err.contains(&format!(
                    "the file is {size} bytes, larger than any {what} Kafka writes (2147483647 bytes at most"
                )),
                "{name}: {err}"
            );
        }
        std::fs::remove_file(&file).unwrap();
    }
    // A time index whose .index is the 100 GiB file: the .index is named, the time
    // index still checked.
    let index = tmp.path().join("00000000000000000000.index");
    sparse(&index, &[], size);
    let timeindex = tmp.path().join("00000000000000000000.timeindex");
    let mut entry = 1_002i64.to_be_bytes().to_vec();
    entry.extend(2i32.to_be_bytes());
    std::fs::write(&timeindex, &entry).unwrap();
    let (code, out, err) = dump_log_bounded(&[timeindex.as_os_str()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("Problems in :{}", index.display())),
        "{err}"
    );
    assert!(err.contains("larger than any index Kafka writes"), "{err}");
    assert!(out.contains("timestamp: 1002 offset: 2"), "{out}");
}

#[test]
fn a_sparse_index_within_kafkas_bound_is_read_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path());
    // 1 GiB (the .timeindex: 1.5 GiB) of zero slots after one real entry (offset 2,
    // position 138): Kafka's stop rule ends the entries at slot 1, the rest is a
    // zero-filled tail.
    let index = tmp.path().join("00000000000000000000.index");
    let len = GIB;
    sparse(&index, &[0, 0, 0, 2, 0, 0, 0, 138], len);
    let timeindex = tmp.path().join("00000000000000000000.timeindex");
    let mut entry = 1_002i64.to_be_bytes().to_vec();
    entry.extend(2i32.to_be_bytes());
    sparse(&timeindex, &entry, len / 8 * 12);
    let txnindex = tmp.path().join("00000000000000000000.txnindex");
    sparse(&txnindex, &[], 34 * (GIB / 34));
    for file in [&index, &timeindex] {
        let (code, out, err) = dump_log_bounded(&[file.as_os_str()]);
        assert_eq!(code, 0, "{}: {err}", file.display());
        assert!(
            out.contains("offset: 2 position: 138") || out.contains("timestamp: 1002 offset: 2"),
            "{out}"
        );
        assert!(err.contains("zero-filled slots from entry 1"), "{err}");
    }
    // The transaction index: every zero entry is a valid-looking entry of version 0, so
    // the dump only needs to get going in bounded memory; it is not run to the end.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 524288 && exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_dump-log"))
        .arg("--no-progress")
        .arg(&txnindex)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut head = vec![0u8; 1 << 16];
    stdout.read_exact(&mut head).unwrap();
    drop(stdout);
    let o = child.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&head).contains("version: 0 producerId: 0"));
    assert_eq!(
        o.status.code(),
        Some(141),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_batch_larger_than_max_message_size_is_not_read_into_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("00000000000000000000.log");
    // A batch header declaring 2 GiB − 13 bytes (2 GiB − 1 with the log overhead: the
    // most the default --max-bytes reads), and the (sparse) bytes to back it.
    let mut head = 0i64.to_be_bytes().to_vec();
    head.extend((i32::MAX - 12).to_be_bytes());
    sparse(&log, &head, 3 * GIB);
    for extra in [None, Some("--deep-iteration"), Some("--verify-index-only")] {
        let mut args: Vec<&OsStr> = extra.iter().map(OsStr::new).collect();
        args.push(log.as_os_str());
        let (code, _, err) = dump_log_bounded(&args);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(
            err.contains("Batch at position: 0 declares 2147483647 bytes, more than --max-message-size 5242880: not read"),
            "{extra:?}: {err}"
        );
        assert!(
            err.contains("rerun with --max-message-size 2147483647"),
            "{err}"
        );
    }
}
