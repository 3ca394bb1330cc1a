//! field case B14: a segment whose only content is a header-only (0-record) batch.
use crate::common::*;
use segment::record::BatchBuilder;

fn empty_batch() -> Vec<u8> {
    BatchBuilder::new(50)
        .producer(1000, 0, 0)
        .build_empty(52, 1000)
        .unwrap()
}

#[test]
fn b14_empty_batch_segment_reopens_clean_and_unclean() {
    for clean in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let (_t, clock) = mock();
        let cfg = config(4096, 1 << 20);
        std::fs::write(dir.path().join("00000000000000000050.log"), empty_batch()).unwrap();
        std::fs::write(dir.path().join("recovery-point"), "0\n50\n").unwrap();
        std::fs::write(dir.path().join("log-start-offset"), "0\n50\n").unwrap();
        if clean {
            std::fs::write(dir.path().join(".kafka_cleanshutdown"), "").unwrap();
        }
        let log = open_log(dir.path(), cfg, clock);
        assert_eq!(log.log_end_offset(), 53);
        assert_eq!(log.size(), 61, "recovery keeps the batch");
        let r = log.read(50, 61).unwrap();
        assert_eq!(r.records.len(), 61);
        let s = log.segments().active_segment().unwrap();
        let r = s.read_up_to(50, 60, s.size()).unwrap().unwrap();
        assert!(r.first_entry_incomplete);
        log.append(&batch(53, 2, 2000)).unwrap();
        assert_eq!(log.log_end_offset(), 55);
    }
}
