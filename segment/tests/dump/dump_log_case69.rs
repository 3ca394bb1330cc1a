//! Acceptance case 69 (docs/kafka-behaviour.md): DumpLogSegments index verification, parts (a)–(d),
//! through the `segment::dump` library and the `dump-log` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use segment::dump::{self, text, Collect, DumpOptions, Event, Note, Problem};
use segment::record::BatchBuilder;
use segment::{LogConfig, LogSegment, MockTime};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dump-log"))
}

fn run_cli(args: &[&str]) -> Output {
    bin()
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run dump-log")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A v2 batch of `n` records from `base`; record `i` has timestamp `ts + i`.
fn batch(base: i64, n: usize, ts: i64) -> Vec<u8> {
    let mut b = BatchBuilder::new(base).partition_leader_epoch(0);
    for i in 0..n {
        let v = format!("value-{}", base + i as i64);
        b = b.record(ts + i as i64, Some(b"key"), Some(v.as_bytes()));
    }
    b.build().unwrap()
}

fn dump(path: &Path, opts: &DumpOptions) -> Collect {
    let mut sink = Collect::default();
    dump::dump_file(path, opts, &mut sink);
    sink
}

fn verify_opts() -> DumpOptions {
    DumpOptions {
        verify_index_only: true,
        ..DumpOptions::default()
    }
}

fn render(events: &Collect) -> String {
    let mut r = text::Report::new();
    for e in &events.0 {
        r.add(e);
    }
    r.render()
}

fn seg_path(dir: &Path, suffix: &str) -> PathBuf {
    dir.join(format!("00000000000000000000{suffix}"))
}

// (a) A 0-byte offset index prints exactly "<path> is empty." and a newline.
#[test]
fn case69a_empty_index() {
    let dir = tempfile::tempdir().unwrap();
    let idx = seg_path(dir.path(), ".index");
    std::fs::write(&idx, b"").unwrap();

    let events = dump(&idx, &DumpOptions::default());
    assert_eq!(
        events.0,
        vec![
            Event::Dumping {
                path: idx.clone(),
                file_type: dump::FileType::OffsetIndex
            },
            Event::IndexEmpty { path: idx.clone() }
        ]
    );
    let line = text::event_line(&events.0[1], false).unwrap();
    assert_eq!(
        line,
        text::Line::Out(format!("{} is empty.", idx.display()))
    );

    let out = run_cli(&[idx.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("Dumping {0}\n{0} is empty.\n", idx.display())
    );
    assert_eq!(stderr(&out), "");
}

/// Acceptance case 69 (b) setup: four batches (10, 20, 20, 10 records), index interval 128, flushed
/// but not closed, so both index files keep their preallocated zero-filled tails.
fn unclosed_segment(dir: &Path) -> LogSegment {
    let cfg = LogConfig {
        index_interval_bytes: 128,
        max_index_size: 1200,
        ..LogConfig::default()
    };
    let clock: segment::Clock = Arc::new(MockTime::new(1_000_000));
    let seg = LogSegment::create(dir, 0, &cfg, clock).unwrap();
    let mut base = 0;
    for (i, n) in [10usize, 20, 20, 10].into_iter().enumerate() {
        let ts = 10_000 * (i as i64 + 1);
        let bytes = batch(base, n, ts);
        let last = base + n as i64 - 1;
        seg.append(last, ts + n as i64 - 1, last, &bytes).unwrap();
        base += n as i64;
    }
    seg.flush().unwrap();
    seg
}

// (b) Verification stops at the first zero slot: no mismatch, no time-index error.
#[test]
fn case69b_unclosed_index_with_zero_tail() {
    let dir = tempfile::tempdir().unwrap();
    let seg = unclosed_segment(dir.path());
    let idx = seg_path(dir.path(), ".index");
    let tidx = seg_path(dir.path(), ".timeindex");
    assert_eq!(std::fs::metadata(&idx).unwrap().len(), 1200, "preallocated");
    assert_eq!(
        std::fs::metadata(&tidx).unwrap().len(),
        1200,
        "preallocated"
    );

    let events = dump(&idx, &verify_opts());
    assert!(events.problems().is_empty(), "{:?}", events.problems());
    assert!(events
        .0
        .iter()
        .all(|e| !matches!(e, Event::OffsetEntry { .. })));
    assert!(matches!(
        events.notes()[..],
        [Note::ZeroFilledTail {
            slot: 3,
            unused_slots: 147,
            ..
        }]
    ));

    let events = dump(&tidx, &verify_opts());
    assert!(events.problems().is_empty(), "{:?}", events.problems());
    assert!(matches!(
        events.notes()[..],
        [Note::ZeroFilledTail { slot: 3, .. }]
    ));

    // Printing mode lists the three real entries and nothing of the zero tail.
    let events = dump(&idx, &DumpOptions::default());
    let entries: Vec<_> = events
        .0
        .iter()
        .filter_map(|e| match e {
            Event::OffsetEntry {
                offset, position, ..
            } => Some((*offset, *position)),
            _ => None,
        })
        .collect();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0].0, 29);
    assert_eq!(entries[1].0, 49);
    assert_eq!(entries[2].0, 59);

    let out = run_cli(&[
        "--verify-index-only",
        idx.to_str().unwrap(),
        tidx.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("Mismatches"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("not found"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("timestamp"), "{}", stderr(&out));
    assert!(stderr(&out).contains("Note: "), "{}", stderr(&out));

    // With --kafka-strict the text report holds Kafka's words only: the notes on the zero
    // tails are left out, as Kafka's tool is silent on them; --json keeps them.
    let args = ["--verify-index-only", "--kafka-strict"];
    let paths = [idx.to_str().unwrap(), tidx.to_str().unwrap()];
    let out = run_cli(&[&args[..], &paths[..]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let out = run_cli(&[&args[..], &["--json"], &paths[..]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("zero_filled_tail"),
        "{}",
        stdout(&out)
    );
    drop(seg);
}

// (c) A first-offset entry for a multi-record batch is a mismatch (index, batch last).
#[test]
fn case69c_first_offset_entry_is_a_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let b0 = batch(0, 10, 1000);
    let b1 = batch(10, 20, 2000);
    let mut log = b0.clone();
    log.extend_from_slice(&b1);
    std::fs::write(seg_path(dir.path(), ".log"), &log).unwrap();
    // A pre-2.0 style entry: offset 10 = the *first* offset of the batch at b0.len().
    let mut index = Vec::new();
    index.extend_from_slice(&10i32.to_be_bytes());
    index.extend_from_slice(&(b0.len() as u32).to_be_bytes());
    let idx = seg_path(dir.path(), ".index");
    std::fs::write(&idx, &index).unwrap();

    for strict in [false, true] {
        let opts = DumpOptions {
            kafka_strict: strict,
            ..verify_opts()
        };
        let events = dump(&idx, &opts);
        assert!(events.notes().is_empty());
        match events.problems()[..] {
            [Problem::OffsetMismatch {
                slot: 0,
                index_offset: 10,
                log_offset: 29,
                position,
                ..
            }] => assert_eq!(*position as usize, b0.len()),
            ref other => panic!("{other:?}"),
        }
        let abs = std::path::absolute(&idx).unwrap();
        assert_eq!(
            render(&events),
            format!(
                "Mismatches in :{}\n  Index offset: 10, log offset: 29\n",
                abs.display()
            )
        );
    }

    let out = run_cli(&["--verify-index-only", idx.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("  Index offset: 10, log offset: 29"));
    assert_eq!(stdout(&out), format!("Dumping {}\n", idx.display()));
}

// (d) Deep iteration over batches 0-1 and 5-6 reports the pair (1, 5).
#[test]
fn case69d_non_consecutive_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = batch(0, 2, 1000);
    log.extend_from_slice(&batch(5, 2, 2000));
    let path = seg_path(dir.path(), ".log");
    std::fs::write(&path, &log).unwrap();

    let opts = DumpOptions {
        deep_iteration: true,
        ..DumpOptions::default()
    };
    let events = dump(&path, &opts);
    let records: Vec<i64> = events
        .0
        .iter()
        .filter_map(|e| match e {
            Event::Record(r) => Some(r.offset),
            _ => None,
        })
        .collect();
    assert_eq!(records, vec![0, 1, 5, 6]);
    match events.problems()[..] {
        [p @ Problem::NonConsecutiveOffsets {
            prev_offset: 1,
            offset: 5,
            ..
        }] => assert!(!p.is_failure(), "gaps are informational (compaction)"),
        ref other => panic!("{other:?}"),
    }
    let abs = std::path::absolute(&path).unwrap();
    assert_eq!(
        render(&events),
        format!(
            "Non-consecutive offsets in {}\n  1 is followed by 5\n",
            abs.display()
        )
    );

    // Without deep iteration, offsets are not tracked (as Kafka).
    assert!(dump(&path, &DumpOptions::default()).problems().is_empty());

    let out = run_cli(&["--deep-iteration", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("  1 is followed by 5"));
    let so = stdout(&out);
    assert!(
        so.contains(
            "| offset: 5 CreateTime: 2000 keySize: 3 valueSize: 7 sequence: -1 headerKeys: []"
        ),
        "{so}"
    );
}

// (d) With --kafka-strict, each file's previous offset starts at -1 as in Kafka's tool: a
// segment whose first record is not offset 0 reports `-1 is followed by N` (informational,
// the exit status stays 0); without it, nothing is reported
// (docs/kafka-behaviour.md#dumplogsegments-findings).
#[test]
fn case69d_strict_starts_each_file_at_minus_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = batch(300, 2, 1000);
    log.extend_from_slice(&batch(305, 1, 2000));
    let path = dir.path().join("00000000000000000300.log");
    std::fs::write(&path, &log).unwrap();
    let first = dir.path().join("00000000000000000000.log");
    std::fs::write(&first, batch(0, 2, 1000)).unwrap();
    let abs = std::path::absolute(&path).unwrap();

    let strict = DumpOptions {
        deep_iteration: true,
        kafka_strict: true,
        ..DumpOptions::default()
    };
    let events = dump(&path, &strict);
    assert!(events.problems().iter().all(|p| !p.is_failure()));
    assert_eq!(
        render(&events),
        format!(
            "Non-consecutive offsets in {}\n  301 is followed by 305\n  -1 is followed by 300\n",
            abs.display()
        )
    );
    // A file starting at offset 0 has no such pair, strict or not.
    assert!(dump(&first, &strict).problems().is_empty());
    // Without --kafka-strict the first record is not checked.
    let lenient = DumpOptions {
        deep_iteration: true,
        ..DumpOptions::default()
    };
    assert_eq!(
        render(&dump(&path, &lenient)),
        format!(
            "Non-consecutive offsets in {}\n  301 is followed by 305\n",
            abs.display()
        )
    );

    // The binary, both files: the previous offset is reset per file, and the pair does not
    // change the exit status. Pairs are listed as Kafka's TreeMap keyed by the previous
    // offset holds them: ascending (the report in found order lists the latest first).
    let out = run_cli(&[
        "--deep-iteration",
        "--kafka-strict",
        first.to_str().unwrap(),
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "Non-consecutive offsets in {}\n  -1 is followed by 300\n  301 is followed by 305\n",
            abs.display()
        )
    );
    let out = run_cli(&[
        "--deep-iteration",
        first.to_str().unwrap(),
        path.to_str().unwrap(),
    ]);
    assert!(
        !stderr(&out).contains("-1 is followed by"),
        "{}",
        stderr(&out)
    );

    // Several files with findings: strict mode lists them in the order of Kafka's
    // HashMap (keyed by absolute path), not the order found.
    let mut paths = Vec::new();
    for base in [600i64, 900, 1276, 1500, 2000, 2500, 3000] {
        let p = std::path::absolute(dir.path().join(format!("{base:020}.log"))).unwrap();
        std::fs::write(&p, batch(base + 1, 1, 1000)).unwrap();
        paths.push(p);
    }
    let args: Vec<&str> = ["--deep-iteration", "--kafka-strict"]
        .into_iter()
        .chain(paths.iter().map(|p| p.to_str().unwrap()))
        .collect();
    let out = run_cli(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed: Vec<String> = stderr(&out)
        .lines()
        .filter_map(|l| l.strip_prefix("Non-consecutive offsets in "))
        .map(str::to_string)
        .collect();
    let keys: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let calls: Vec<usize> = (0..keys.len()).collect();
    let java: Vec<String> = text::java_hash_map_order(&keys, &calls)
        .into_iter()
        .map(|i| keys[i].clone())
        .collect();
    assert_eq!(printed, java);
    // Without --kafka-strict the -1 pairs are not reported: no block at all.
    let lenient: Vec<&str> = args
        .iter()
        .filter(|a| **a != "--kafka-strict")
        .copied()
        .collect();
    assert_eq!(stderr(&run_cli(&lenient)), "");
}

// (d) 30 trailing bytes that start a valid batch whose size runs past the end.
#[test]
fn case69d_trailing_partial_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = batch(0, 2, 1000);
    let next = batch(2, 5, 2000);
    log.extend_from_slice(&next[..30]);
    let path = seg_path(dir.path(), ".log");
    std::fs::write(&path, &log).unwrap();

    let events = dump(&path, &DumpOptions::default());
    match events.problems()[..] {
        [Problem::TrailingBytes {
            bytes: 30,
            ref file_name,
            ..
        }] => assert_eq!(file_name, "00000000000000000000.log"),
        ref other => panic!("{other:?}"),
    }
    let out = run_cli(&[path.to_str().unwrap()]);
    assert!(
        stdout(&out).ends_with("Found 30 invalid bytes at the end of 00000000000000000000.log\n"),
        "{}",
        stdout(&out)
    );
    assert_eq!(out.status.code(), Some(1));

    // With --max-bytes, trailing bytes are not reported (as Kafka).
    let opts = DumpOptions {
        max_bytes: log.len() as u64,
        ..DumpOptions::default()
    };
    assert!(dump(&path, &opts).problems().is_empty());
    let out = run_cli(&["--max-bytes", "100000", path.to_str().unwrap()]);
    assert!(!stdout(&out).contains("invalid bytes"));
    assert_eq!(out.status.code(), Some(0));
}

// (d) 30 zero bytes: size field 0 < 14 is a CorruptRecord, not "invalid bytes".
#[test]
fn case69d_trailing_zeros_are_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let first = batch(0, 2, 1000);
    let mut log = first.clone();
    log.extend_from_slice(&[0u8; 30]);
    let path = seg_path(dir.path(), ".log");
    std::fs::write(&path, &log).unwrap();

    let events = dump(&path, &DumpOptions::default());
    match events.problems()[..] {
        [Problem::CorruptRecord {
            position,
            ref reason,
            ..
        }] => {
            assert_eq!(*position as usize, first.len());
            assert!(reason.contains("size 0"), "{reason}");
        }
        ref other => panic!("{other:?}"),
    }
    let out = run_cli(&[path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!stdout(&out).contains("invalid bytes"));
    assert!(
        stderr(&out).contains(&format!("Corrupt record at position: {}", first.len())),
        "{}",
        stderr(&out)
    );
}

/// Issue 39: a control record whose key cannot be decoded is reported once, as
/// `Invalid record in batch at position: N: <reason>`, without the error's own
/// "invalid record in batch at position N:" prefix repeated inside the line.
#[test]
fn a_hostile_control_key_is_reported_without_a_repeated_prefix() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("00000000000000000000.log");
    let good = batch(0, 2, 1000);
    let mut bytes = good.clone();
    // A control batch whose only record has a 2-byte key (a control key has 4).
    bytes.extend(
        BatchBuilder::new(2)
            .control(true)
            .record(1002, Some(&[0, 0]), None)
            .build()
            .unwrap(),
    );
    std::fs::write(&path, &bytes).unwrap();
    let out = run_cli(&["--deep-iteration", path.to_str().unwrap()]);
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("Invalid record in batch at position:"))
        .unwrap_or_else(|| panic!("no invalid record line in: {err}"));
    assert!(
        line.contains(&format!(
            "Invalid record in batch at position: {}: invalid value size found for control record key",
            good.len()
        )),
        "{line}"
    );
    assert_eq!(
        line.to_lowercase().matches("in batch at position").count(),
        1,
        "the prefix is repeated: {line}"
    );
}

/// Issue 39: given only files it ignores (unknown types), `dump-log` checked nothing and
/// says so with exit status 2; `--kafka-strict` keeps Kafka's exit status 0 and its
/// stderr (docs/kafka-behaviour.md#dump-log-nothing-checked).
#[test]
fn nothing_checked_is_not_a_success() {
    let tmp = tempfile::tempdir().unwrap();
    let junk = tmp.path().join("notes.txt");
    std::fs::write(&junk, b"hello").unwrap();
    let junk = junk.to_str().unwrap();

    let out = run_cli(&[junk]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Ignoring unknown file"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("dump-log: nothing checked"),
        "{}",
        stderr(&out)
    );

    let out = run_cli(&["--kafka-strict", junk]);
    assert_eq!(out.status.code(), Some(0), "Kafka's tool exits 0 here");
    assert!(
        !stderr(&out).contains("nothing checked"),
        "{}",
        stderr(&out)
    );

    let out = run_cli(&["--json", junk]);
    assert_eq!(out.status.code(), Some(2));
    let summary: serde_json::Value =
        serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["exit_code"], 2);
    assert!(summary["error"]
        .as_str()
        .unwrap()
        .starts_with("nothing checked"));

    // One file checked is enough.
    let log = tmp.path().join("00000000000000000000.log");
    std::fs::write(&log, batch(0, 2, 1000)).unwrap();
    let out = run_cli(&[junk, log.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
