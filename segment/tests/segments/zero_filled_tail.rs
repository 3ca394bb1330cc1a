//! A zero-filled tail (preallocated `.log` after a crash, or zero pages) is corrupt to
//! Kafka's iterator (size 0 < 14) and truncated by recovery; reads stop before it.
use crate::common::*;
use segment::{KafkaBatchFormat, LogSegment, ProducerStateManager, SegmentOptions};

#[test]
fn zero_filled_tail_after_crash_with_preallocation() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let cfg = config(1, 4096);
    {
        let seg = LogSegment::<KafkaBatchFormat>::open(
            dir.path(),
            0,
            &cfg,
            SegmentOptions::existing()
                .mode(segment::LogFileMode::Preallocate(1 << 20))
                .clock(clock.clone()),
        )
        .unwrap();
        for i in 0..4 {
            seg.append(i, 1000 + i, i, &v2(i, 1000 + i)).unwrap();
        }
        seg.flush().unwrap();
        seg.close_handlers(); // crash: .log stays 1 MiB, indexes untrimmed
    }
    let seg = LogSegment::<KafkaBatchFormat>::open(
        dir.path(),
        0,
        &cfg,
        SegmentOptions::existing().clock(clock),
    )
    .unwrap();
    assert_eq!(seg.size(), 1 << 20);
    // reads before the zeros work; the zero region is reported as corrupt, not served
    assert_eq!(
        offsets_in(&seg.read(2, 73).unwrap().unwrap().records),
        vec![2]
    );
    assert!(matches!(
        seg.read(4, 100),
        Err(segment::SegmentError::Format { .. })
    ));
    let truncated = seg.recover(&mut ProducerStateManager::new(), None).unwrap();
    assert_eq!(truncated, (1 << 20) - 4 * 73);
    assert_eq!(seg.read_next_offset().unwrap(), 4);
    assert_eq!(std::fs::metadata(seg.log_path()).unwrap().len(), 4 * 73);
}
