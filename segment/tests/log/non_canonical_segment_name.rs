//! A `.log` whose name is not the 20-digit canonical name of its base offset
//! (`0000000000000000221.log`, 19 digits) was opened under the canonical name instead: the
//! loader created an empty `00000000000000000221.log` beside it and the records in the
//! original file were hidden (found by the `log_open` fuzz target). It is now a typed error
//! naming the file, and nothing in the directory is created or changed.

use crate::common::*;
use segment::{Log, SegmentError};

fn files(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".lock")
        .collect();
    v.sort();
    v
}

#[test]
fn a_non_canonical_log_name_is_a_typed_error_and_creates_nothing() {
    let dir = tmpdir();
    {
        let log = open_log(dir.path(), config(1, 1 << 16), mock().1);
        assert_eq!(fill(&log, 0, 4, 3, 1_000), 12);
        log.close().unwrap();
    }
    // Rename every file of the segment to a 19-digit prefix.
    for name in files(dir.path()) {
        if let Some(rest) = name.strip_prefix("00000000000000000000") {
            std::fs::rename(
                dir.path().join(&name),
                dir.path().join(format!("0000000000000000000{rest}")),
            )
            .unwrap();
        }
    }
    let before = files(dir.path());
    match Log::options()
        .clock(mock().1)
        .open(dir.path(), config(1, 1 << 16))
    {
        Err(SegmentError::FileName { name, reason }) => {
            assert!(name.ends_with("0000000000000000000.log"), "{name}");
            assert!(reason.contains("canonical"), "{reason}");
        }
        Err(e) => panic!("expected SegmentError::FileName, got {e:?}"),
        Ok(log) => panic!(
            "opened with log end {} over a hidden segment file",
            log.log_end_offset()
        ),
    }
    let after: Vec<String> = files(dir.path())
        .into_iter()
        .filter(|n| n != ".kafka_cleanshutdown")
        .collect();
    let before: Vec<String> = before
        .into_iter()
        .filter(|n| n != ".kafka_cleanshutdown")
        .collect();
    assert_eq!(
        after, before,
        "the failed open created or removed segment files"
    );
}
