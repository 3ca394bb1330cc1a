//! `dump-log`'s default text output against Kafka 4.4's `DumpLogSegments`, line for line
//! (issue 23): tombstones, `--skip-record-metadata`, producer snapshots, Java's UTF-8
//! replacement, the time-index "not found" report, and the `.log`/`.txnindex` dumps under
//! `--verify-index-only` and `--index-sanity-check`.
//!
//! `tests/dump/parity/*.txt` hold what Kafka 4.4's tool printed (standard output only
//! unless the name says `stderr`) for the in-repo files named in each test, run from the
//! workspace root with `--files <path>`; `<data>/` stands for `segment/tests/data/` and
//! `<parity>/` for `segment/tests/dump/parity/`. `parity/utf8-0` is written by
//! [`write_utf8_fixture`] (ignored test; `DUMP_PARITY_WRITE=1`).

use std::path::Path;
use std::process::Command;

use segment::record::BatchBuilder;

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(crate_dir().join("tests/dump/parity").join(name)).expect("golden file")
}

/// Runs `dump-log --files <files> <args>` (paths relative to `segment/`); stdout, or
/// stderr when `stderr`, with the paths written as in the golden files.
fn ours_stream(files: &[&str], args: &[&str], stderr: bool) -> String {
    let list = files.join(",");
    let out = Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .current_dir(crate_dir())
        .arg("--no-progress")
        .args(args)
        .arg("--files")
        .arg(&list)
        .output()
        .expect("run dump-log");
    let bytes = if stderr { out.stderr } else { out.stdout };
    String::from_utf8(bytes)
        .expect("utf-8 output")
        .replace(&format!("{}/", crate_dir().display()), "")
        .replace("tests/data/", "<data>/")
        .replace("tests/dump/parity/", "<parity>/")
}

fn ours(files: &[&str], args: &[&str]) -> String {
    ours_stream(files, args, false)
}

/// Panics with the differing lines when `ours` is not `kafka` line for line.
fn assert_lines(what: &str, kafka: &str, ours: &str) {
    let k: Vec<&str> = kafka.lines().collect();
    let o: Vec<&str> = ours.lines().collect();
    let differing: Vec<String> = (0..k.len().max(o.len()))
        .filter(|&i| k.get(i) != o.get(i))
        .take(10)
        .map(|i| {
            format!(
                "line {}:\n  kafka: {}\n  ours:  {}",
                i + 1,
                k.get(i).unwrap_or(&"<none>"),
                o.get(i).unwrap_or(&"<none>")
            )
        })
        .collect();
    assert!(
        differing.is_empty(),
        "{what}: differs from Kafka's ({} lines)\n{}",
        k.len(),
        differing.join("\n")
    );
}

const CODECS_LOG: &str = "tests/data/kafka-4.4.0/clean/codecs-0/00000000000000000000.log";
const TXN_CRASH: &str = "tests/data/kafka-4.4.0/crash/txn-0";

/// Tombstones print their key (`key: k-5`, no payload), a record without key or value
/// prints neither. The fixture's values are random bytes (printed raw by Kafka, escaped
/// here), so the golden holds Kafka's lines of the records with a null value.
#[test]
fn tombstones_print_their_key_as_kafka() {
    let out = ours(&[CODECS_LOG], &["--print-data-log"]);
    let tombstones: String = out
        .lines()
        .filter(|l| l.contains(" valueSize: -1 "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_lines(
        "codecs-0 tombstones",
        &golden("codecs-0.tombstones.print-data-log.txt"),
        &tombstones,
    );
}

/// With `--skip-record-metadata` a record printing no key or payload (every record
/// without `--print-data-log`, and control records) is an empty line.
#[test]
fn skip_record_metadata_lines_are_kafkas() {
    let log = format!("{TXN_CRASH}/00000000000000001968.log");
    assert_lines(
        "txn-0 1968.log --deep-iteration --skip-record-metadata",
        &golden("txn-0.1968.deep-iteration.skip-record-metadata.txt"),
        &ours(&[&log], &["--deep-iteration", "--skip-record-metadata"]),
    );
    // With data, control records are still empty lines; tombstones keep `| key:`.
    let out = ours(&[&log], &["--print-data-log", "--skip-record-metadata"]);
    let control: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("isControl: true"))
        .take(2)
        .collect();
    assert_eq!(control.get(1), Some(&""), "{control:?}");
    let out = ours(
        &[CODECS_LOG],
        &["--print-data-log", "--skip-record-metadata"],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.contains(&"| key: k-5"), "tombstone k-5");
    assert!(lines.contains(&""), "a record without key and value");
}

/// Producer snapshots: `currentTxnFirstOffset` as Java's `OptionalLong`, the batch
/// fields only when the last offset is known, and Kafka's sequence wrap-around for the
/// first sequence (`2147483647`).
#[test]
fn producer_snapshots_match_kafka() {
    let files: Vec<String> = ["00000000000000000994", "00000000000000001968"]
        .iter()
        .map(|b| format!("{TXN_CRASH}/{b}.snapshot"))
        .chain(["tests/dump/parity/00000000000000000010.snapshot".to_string()])
        .collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    assert_lines("snapshots", &golden("snapshots.txt"), &ours(&files, &[]));
}

/// Keys, values and header keys that are not UTF-8 print as Java decodes them.
#[test]
fn invalid_utf8_is_replaced_as_java_replaces_it() {
    let log = "tests/dump/parity/utf8-0/00000000000000000000.log";
    assert_lines(
        "utf8-0 --print-data-log",
        &golden("utf8-0.print-data-log.txt"),
        &ours(&[log], &["--print-data-log"]),
    );
}

/// A time-index entry whose offset is not a batch's last offset, reported with
/// `--kafka-strict` as Kafka reports it.
#[test]
fn time_index_offset_not_found_is_worded_as_kafka() {
    let src = crate_dir().join("tests/data/kafka-4.4.0/clean/txn-0");
    let dir = tempfile::tempdir().unwrap();
    for ext in ["log", "index", "timeindex"] {
        let name = format!("00000000000000000000.{ext}");
        std::fs::copy(src.join(&name), dir.path().join(&name)).unwrap();
    }
    // The first entry's relative offset, one below the batch's last offset (58, not 59).
    let ti = dir.path().join("00000000000000000000.timeindex");
    let mut bytes = std::fs::read(&ti).unwrap();
    let rel = i32::from_be_bytes(bytes[8..12].try_into().unwrap());
    bytes[8..12].copy_from_slice(&(rel - 1).to_be_bytes());
    std::fs::write(&ti, bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .args(["--no-progress", "--kafka-strict", "--files"])
        .arg(&ti)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    let kafka = format!(
        "The following indexed offsets are not found in :{}\nIndexed offset: 58, found log offset: 59\n",
        ti.display()
    );
    assert_eq!(err, kafka);
}

/// `--verify-index-only` and `--index-sanity-check` dump `.log`, `.txnindex` and
/// `.snapshot` files in full, as Kafka does.
#[test]
fn index_modes_dump_logs_and_txn_indexes_as_kafka() {
    let files: Vec<String> = ["log", "index", "timeindex", "txnindex", "snapshot"]
        .iter()
        .map(|ext| format!("{TXN_CRASH}/00000000000000001471.{ext}"))
        .collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    for mode in ["verify-index-only", "index-sanity-check"] {
        assert_lines(
            mode,
            &golden(&format!("txn-0.1471.{mode}.txt")),
            &ours(&files, &[&format!("--{mode}")]),
        );
    }
}

/// Writes `parity/utf8-0/00000000000000000000.log` (run with `DUMP_PARITY_WRITE=1
/// cargo test -p segment --test dump -- --ignored write_utf8_fixture`).
#[test]
#[ignore = "writes the fixture"]
fn write_utf8_fixture() {
    if std::env::var_os("DUMP_PARITY_WRITE").is_none() {
        return;
    }
    let ts = 1_750_000_000_000;
    type Case<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);
    let cases: &[Case<'_>] = &[
        (Some(b"plain"), Some(b"text")),
        // An encoded surrogate: one U+FFFD in Java, three in Unicode's practice.
        (Some(b"\xED\xA0\x80"), Some(b"A\xED\xBF\xBFB")),
        // A truncated surrogate at the end, and one followed by ASCII.
        (None, Some(b"x\xED\xA0")),
        (Some(b"\xED\xA0A"), Some(b"\xED\x9F\xBF")),
        // Overlong, truncated four-byte, out of range, lone continuation.
        (Some(b"\xE0\x80\x80"), Some(b"\xF0\x90\x80")),
        (Some(b"\xF4\x90\x80\x80"), Some(b"\x80\xBF\xC0\xC1\xF5\xFF")),
        (Some(b"\xF0\x90\x80A"), Some(b"\xE1\x80")),
        (Some(b"t"), None),
    ];
    let mut b = BatchBuilder::new(0).partition_leader_epoch(0);
    for (key, value) in cases {
        b = b.record_with_headers(ts, *key, *value, &[(b"h\xED\xA0\x80k", None)]);
    }
    let bytes = b.build().unwrap();
    let out = crate_dir().join("tests/dump/parity/utf8-0/00000000000000000000.log");
    std::fs::write(out, bytes).unwrap();
}
