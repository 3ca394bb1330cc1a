//! A segment whose `.index` or `.timeindex` is missing is recovered on open, also below
//! the recovery point of a clean shutdown, and the rebuilt file is byte-identical to the
//! one that was deleted.
//!
//! For the offset index this is Kafka's behaviour (`LogLoader` catches the missing file in
//! `sanityCheck` and calls `recoverSegment`). For the time index Kafka only creates an
//! empty one (`sanityCheck(timeIndexFileNewlyCreated)`), and then the segment's largest
//! timestamp reads as unknown: `offsetsForTimes` skips the segment and answers with a
//! later offset. Here the segment is recovered, so lookups by timestamp stay right.

use crate::common::*;

fn index_paths(dir: &std::path::Path, base: i64) -> [std::path::PathBuf; 2] {
    [
        segment::names::offset_index_file(dir, base, ""),
        segment::names::time_index_file(dir, base, ""),
    ]
}

#[test]
fn a_missing_offset_index_is_rebuilt_byte_for_byte_after_a_clean_shutdown() {
    for which in 0..2 {
        let dir = tmpdir();
        let (_t, clock) = mock();
        let cfg = config(1, 1 << 20); // an index entry for every batch
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        fill(&log, 0, 20, 5, 1_000); // 0..100
        log.roll(None).unwrap();
        fill(&log, 100, 4, 5, 5_000); // 100..120
        log.close().unwrap();
        let path = index_paths(dir.path(), 0)[which].clone();
        let original = std::fs::read(&path).unwrap();
        assert!(original.len() >= 19 * 8, "{} bytes", original.len());
        std::fs::remove_file(&path).unwrap();
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        assert_eq!(
            log.stats().scanned_segments(),
            1,
            "{}: the segment with the missing index is recovered",
            path.display()
        );
        assert_eq!(log.log_end_offset(), 120);
        assert_eq!(read_all(&log, 0), (0..120).collect::<Vec<i64>>());
        if which == 1 {
            assert_eq!(
                log.offset_for_timestamp(1_050).unwrap().map(|t| t.offset),
                Some(50)
            );
        }
        log.close().unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            original,
            "{}",
            path.display()
        );
        // and the next open trusts it again
        let log = open_log(dir.path(), cfg, clock);
        assert_eq!(log.stats().scanned_segments(), 0);
    }
}
