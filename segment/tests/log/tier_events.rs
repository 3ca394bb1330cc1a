//! Issue 42: the segment events an uploader follows instead of scanning
//! (`docs/kafka-behaviour.md#tier-events`): a roll seals a segment, retention, local
//! deletion and truncation delete them, a truncation is announced; and under concurrency,
//! an uploader that follows the events while appends roll segments sees each sealed
//! segment once, in order, contiguous, and each of its deletions.
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use segment::record::BatchBuilder;
use segment::tier::{DeletionReason, TierEvent, TierListener};
use segment::{Log, LogConfig};

#[derive(Debug)]
struct Chan(Mutex<mpsc::Sender<TierEvent>>);

impl TierListener for Chan {
    fn on_event(&self, event: TierEvent) {
        let _ = self.0.lock().unwrap().send(event);
    }
}

fn open(dir: &std::path::Path, cfg: LogConfig) -> (Log, mpsc::Receiver<TierEvent>) {
    let (tx, rx) = mpsc::channel();
    let log = Log::options()
        .clock(mock().1)
        .tier_listener(Arc::new(Chan(Mutex::new(tx))))
        .open(dir, cfg)
        .unwrap();
    (log, rx)
}

fn batch(base: i64, n: usize) -> Vec<u8> {
    let mut bb = BatchBuilder::new(base);
    for _ in 0..n {
        bb = bb.record(1_000, None, Some(b"0123456789"));
    }
    bb.build().unwrap()
}

fn drain(rx: &mpsc::Receiver<TierEvent>) -> Vec<TierEvent> {
    rx.try_iter().collect()
}

#[test]
fn rolls_deletions_and_truncations_are_told_in_order() {
    use DeletionReason::*;
    use TierEvent::*;
    let dir = tmpdir();
    let cfg = LogConfig {
        remote_storage_enable: true,
        retention_ms: -1,
        ..LogConfig::default()
    };
    let (log, rx) = open(dir.path(), cfg);
    log.append(&batch(0, 2)).unwrap();
    log.roll(None).unwrap();
    // An empty active segment rolled at its own base seals nothing.
    log.roll(None).unwrap();
    log.append(&batch(2, 2)).unwrap();
    log.roll(None).unwrap();
    log.append(&batch(4, 2)).unwrap();
    log.roll(None).unwrap();
    log.append(&batch(6, 2)).unwrap();
    assert_eq!(
        drain(&rx),
        vec![
            SegmentSealed {
                base_offset: 0,
                end_offset: 1
            },
            SegmentSealed {
                base_offset: 2,
                end_offset: 3
            },
            SegmentSealed {
                base_offset: 4,
                end_offset: 5
            },
        ]
    );
    assert_eq!(log.delete_local_through(1, 1).unwrap(), 1);
    assert_eq!(
        drain(&rx),
        vec![SegmentDeleted {
            base_offset: 0,
            reason: LocalDeletion
        }]
    );
    log.update_log_start_offset_from_remote_tier(4).unwrap();
    assert_eq!(log.delete_old_segments().unwrap(), 1);
    assert_eq!(
        drain(&rx),
        vec![SegmentDeleted {
            base_offset: 2,
            reason: Retention
        }]
    );
    assert!(log.truncate_to(5).unwrap());
    assert_eq!(
        drain(&rx),
        vec![
            SegmentDeleted {
                base_offset: 6,
                reason: Truncation
            },
            // Batches are cut whole: [4, 5] is one batch.
            Truncated { offset: 4 },
        ]
    );
    log.truncate_fully_and_start_at(10).unwrap();
    assert_eq!(
        drain(&rx),
        vec![
            SegmentDeleted {
                base_offset: 4,
                reason: Truncation
            },
            Truncated { offset: 10 },
        ]
    );
}

#[test]
fn an_uploader_following_the_events_under_concurrent_rolls_misses_nothing() {
    let dir = tmpdir();
    let cfg = LogConfig {
        remote_storage_enable: true,
        retention_ms: -1,
        segment_bytes: 400,
        ..LogConfig::default()
    };
    let (log, rx) = open(dir.path(), cfg);
    let log = Arc::new(log);
    const N: i64 = 3_000;
    let appender = {
        let log = log.clone();
        std::thread::spawn(move || {
            for o in 0..N {
                log.append(&batch(o, 1)).unwrap();
            }
        })
    };
    // The uploader: every sealed segment must follow the previous one; it "uploads" each
    // at once and deletes it locally, and must hear of that deletion.
    let mut next_base = 0i64;
    let mut sealed = 0usize;
    let mut deleted = Vec::new();
    let mut uploaded_through = -1i64;
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(TierEvent::SegmentSealed {
                base_offset,
                end_offset,
            }) => {
                assert_eq!(
                    base_offset, next_base,
                    "a sealed segment skipped or repeated"
                );
                assert!(end_offset >= base_offset, "an empty sealed segment");
                next_base = end_offset + 1;
                sealed += 1;
                // The segment is on disk and sealed: the scan agrees it is tierable.
                let ups = log.tierable_segments().unwrap();
                let up = ups
                    .iter()
                    .find(|u| u.base_offset == base_offset)
                    .expect("a sealed segment is tierable");
                assert_eq!(up.end_offset, end_offset);
                // Each roll wrote the producer snapshot at the next base (Kafka's roll).
                assert!(up.producer_snapshot.is_some(), "no snapshot at {next_base}");
                log.delete_local_through(end_offset, end_offset).unwrap();
                uploaded_through = end_offset;
            }
            Ok(TierEvent::SegmentDeleted {
                base_offset,
                reason,
            }) => {
                assert_eq!(reason, DeletionReason::LocalDeletion);
                deleted.push(base_offset);
            }
            Ok(e) => panic!("unexpected {e:?}"),
            Err(mpsc::RecvTimeoutError::Timeout) if appender.is_finished() => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(e) => panic!("{e}"),
        }
    }
    appender.join().unwrap();
    assert!(sealed > 20, "only {sealed} rolls");
    // Every segment but the active one was sealed, uploaded and deleted, in order.
    let left = log.segments().base_offsets();
    assert_eq!(left, vec![next_base], "the active segment alone is left");
    assert_eq!(deleted.len(), sealed);
    assert!(deleted.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(log.local_log_start_offset(), uploaded_through + 1);
    assert_eq!(log.log_end_offset(), N);
}
