//! Regression: a batch whose last offset is `i64::MAX` (the log end offset after it,
//! `last + 1`, is not representable) made
//!
//! * `Log::append` write the batch to the `.log` and then panic ("attempt to add with
//!   overflow"; in release builds the log end offset wrapped to `i64::MIN`);
//! * `Log::open` panic in recovery / `LogSegment::read_next_offset` when such a batch was
//!   on disk;
//! * `dump-log --rebuild-indexes-to` panic on such a `.log`.
//!
//! Now `append` refuses it before writing (typed error), recovery treats it as a corrupt
//! batch (truncated like any invalid tail), `read_next_offset` returns
//! `SegmentError::Corrupt`, and `dump-log` exits 1 with a problem report.

use std::process::Command;

use segment::record::BatchBuilder;
use segment::{Log, LogConfig, SegmentError};

fn batch(base: i64) -> Vec<u8> {
    BatchBuilder::new(base)
        .record(1_700_000_000_000, Some(b"k"), Some(b"v"))
        .build()
        .unwrap()
}

#[test]
fn append_refuses_a_batch_ending_at_i64_max_without_writing_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), LogConfig::default()).unwrap();
    log.append(&batch(i64::MAX - 1)).unwrap();
    assert_eq!(log.log_end_offset(), i64::MAX);
    let size = log.size();
    let err = log.append(&batch(i64::MAX)).unwrap_err();
    assert!(
        matches!(err, SegmentError::InvalidArgument { .. }),
        "{err:?}"
    );
    assert_eq!(log.size(), size, "nothing was written");
    assert_eq!(log.log_end_offset(), i64::MAX);
    log.close().unwrap();
    let log = Log::open(dir.path(), LogConfig::default()).unwrap();
    assert_eq!(log.log_end_offset(), i64::MAX);
    assert_eq!(log.size(), size);
}

#[test]
fn append_refuses_i64_max_also_as_a_later_batch_of_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(dir.path(), LogConfig::default()).unwrap();
    log.truncate_fully_and_start_at(i64::MAX - 1).unwrap();
    let mut input = batch(i64::MAX - 1);
    input.extend(batch(i64::MAX));
    assert!(matches!(
        log.append(&input),
        Err(segment::SegmentError::InvalidArgument { .. })
    ));
    assert_eq!((log.size(), log.log_end_offset()), (0, i64::MAX - 1));
}

/// A partition directory whose `.log` ends with a (CRC-valid) batch at `i64::MAX`.
fn dir_with_max_batch(name: &str, before: &[i64]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut data = Vec::new();
    for &b in before {
        data.extend(batch(b));
    }
    data.extend(batch(i64::MAX));
    std::fs::write(dir.path().join(name), data).unwrap();
    dir
}

#[test]
fn recovery_truncates_a_batch_ending_at_i64_max() {
    for (name, before) in [
        ("00000000000000000000.log", &[0, 1][..]),
        ("09223372036854775806.log", &[i64::MAX - 1][..]),
    ] {
        let dir = dir_with_max_batch(name, before);
        let log =
            Log::open(dir.path(), LogConfig::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected_leo = before.last().map_or(i64::MAX, |&b| b + 1);
        assert_eq!(log.log_end_offset(), expected_leo, "{name}");
        assert_eq!(
            log.size(),
            batch(0).len() as u64 * before.len() as u64,
            "{name}"
        );
        // Appends continue after the kept batches.
        if expected_leo < i64::MAX {
            log.append(&batch(expected_leo)).unwrap();
        }
        log.close().unwrap();
    }
}

#[test]
fn a_segment_based_at_i64_max_holding_a_batch_is_reported_corrupt() {
    // Recovery covers base offsets below i64::MAX only (Kafka's `values(from, to)` is
    // exclusive of `to = Long.MAX_VALUE`), so the segment is met by read_next_offset.
    let dir = dir_with_max_batch("09223372036854775807.log", &[]);
    let err = Log::open(dir.path(), LogConfig::default()).unwrap_err();
    assert!(matches!(err, SegmentError::Corrupt { .. }), "{err:?}");
}

#[test]
fn read_next_offset_reports_corruption_instead_of_overflowing() {
    // A cleanly shut down log: the load-time check finds the batch ending at i64::MAX and
    // recovers the segment, which drops it; the log end then does not go below the
    // clean-shutdown recovery point (2), so no offset handed out is reused.
    let dir = dir_with_max_batch("00000000000000000000.log", &[0]);
    std::fs::write(dir.path().join(".kafka_cleanshutdown"), b"").unwrap();
    std::fs::write(dir.path().join("recovery-point"), b"0\n2\n").unwrap();
    match Log::open(dir.path(), LogConfig::default()) {
        Ok(log) => {
            assert!(log.log_end_offset() <= 2, "{}", log.log_end_offset());
            assert_eq!(
                log.size(),
                batch(0).len() as u64,
                "the i64::MAX batch is gone"
            );
        }
        Err(e) => assert!(matches!(e, SegmentError::Corrupt { .. }), "{e:?}"),
    }
}

#[test]
fn dump_log_rebuild_reports_instead_of_panicking() {
    let dir = dir_with_max_batch("00000000000000000000.log", &[0]);
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_dump-log"))
        .arg("--no-progress")
        .arg("--rebuild-indexes-to")
        .arg(out.path())
        .arg(dir.path())
        .output()
        .expect("run dump-log");
    assert_eq!(
        o.status.code(),
        Some(1),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
}
