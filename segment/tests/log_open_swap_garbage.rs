//! Regression test of a `log_open` fuzz finding (issue 11): a `.log.swap` of garbage
//! beside a clean-shutdown marker. The swap is completed by renaming (as Kafka does), so
//! the garbage became the `.log` and was trusted by the clean open; appends went after
//! it and the next open's recovery truncated the whole file, losing 4 acknowledged
//! records. Since the clean open validates the first batch header, the garbage is
//! recovered away at the first open and the appended records survive a clean close.

use segment::record::BatchBuilder;
use segment::{KafkaBatchFormat, Log, LogConfig, MockTime};
use std::sync::Arc;

fn config() -> LogConfig {
    LogConfig {
        segment_bytes: 4096,
        max_index_size: 4096,
        index_interval_bytes: 128,
        retention_ms: 1000,
        ..LogConfig::default()
    }
}
#[test]
fn appends_after_a_garbage_swap_survive_a_clean_close() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t-0");
    std::fs::create_dir_all(&dir).unwrap();
    let mut swap = Vec::new();
    for (t, o) in [
        (65449u16, 33554431u32),
        (257, 16843009),
        (257, 16843009),
        (257, 16843009),
        (257, 1630547969),
    ] {
        swap.extend((1_700_000_000_000i64 + i64::from(t)).to_be_bytes());
        swap.extend(o.to_be_bytes());
    }
    std::fs::write(dir.join("00000000000000000000.log.swap"), &swap).unwrap();
    std::fs::write(dir.join("00000000000000000000.index"), b"").unwrap();
    std::fs::write(dir.join(".kafka_cleanshutdown"), b"").unwrap();
    let clock = Arc::new(MockTime::new(1_700_000_000_000));
    let log = Log::<KafkaBatchFormat>::open(&dir, config(), clock.clone()).unwrap();
    assert_eq!(log.log_end_offset(), 0);
    assert_eq!(log.size(), 0, "the garbage of the swap file is not served");
    let _ = log.roll(None);
    for n in [3, 1] {
        let end = log.log_end_offset();
        let mut bb = BatchBuilder::new(end);
        for r in 0..n {
            bb = bb.record(1_700_000_000_000 + r, None, Some(b"new"));
        }
        let info = log.append(&bb.build().unwrap()).unwrap();
        assert_eq!(info.first_offset, end);
    }
    log.close().unwrap();
    let log = Log::<KafkaBatchFormat>::open(&dir, config(), clock).unwrap();
    assert_eq!(log.log_end_offset(), 4);
}
