//! Issue 11, deliverable 9: every `LogConfig` value outside Kafka's range, and every API
//! argument that would leave the log stuck or reuse offsets, is a typed error (and the
//! directory is left as it was).
use crate::common::*;
use segment::{Log, LogConfig, LogSegment, SegmentError};

fn invalid_configs() -> Vec<(&'static str, LogConfig)> {
    let d = LogConfig::default;
    vec![
        (
            "segment.bytes",
            LogConfig {
                segment_bytes: 0,
                ..d()
            },
        ),
        (
            "segment.bytes",
            LogConfig {
                segment_bytes: 13,
                ..d()
            },
        ),
        (
            "segment.bytes",
            LogConfig {
                segment_bytes: i32::MAX as u64 + 1,
                ..d()
            },
        ),
        (
            "segment.index.bytes",
            LogConfig {
                max_index_size: 0,
                ..d()
            },
        ),
        (
            "segment.index.bytes",
            LogConfig {
                max_index_size: 4,
                ..d()
            },
        ),
        (
            "segment.index.bytes",
            LogConfig {
                max_index_size: 12,
                ..d()
            },
        ),
        (
            "segment.index.bytes",
            LogConfig {
                max_index_size: 23,
                ..d()
            },
        ),
        (
            "segment.index.bytes",
            LogConfig {
                max_index_size: i32::MAX as usize + 1,
                ..d()
            },
        ),
        (
            "index.interval.bytes",
            LogConfig {
                index_interval_bytes: i32::MAX as u64 + 1,
                ..d()
            },
        ),
        (
            "segment.ms",
            LogConfig {
                segment_ms: 0,
                ..d()
            },
        ),
        (
            "segment.ms",
            LogConfig {
                segment_ms: -1,
                ..d()
            },
        ),
        (
            "segment.jitter.ms",
            LogConfig {
                segment_jitter_ms: -1,
                ..d()
            },
        ),
        (
            "max.compaction.lag.ms",
            LogConfig {
                max_compaction_lag_ms: 0,
                ..d()
            },
        ),
        (
            "retention.ms",
            LogConfig {
                retention_ms: -2,
                ..d()
            },
        ),
        (
            "retention.ms",
            LogConfig {
                retention_ms: i64::MIN,
                ..d()
            },
        ),
        (
            "file.delete.delay.ms",
            LogConfig {
                file_delete_delay_ms: -1,
                ..d()
            },
        ),
        (
            "producer.id.expiration.ms",
            LogConfig {
                producer_id_expiration_ms: 0,
                ..d()
            },
        ),
        (
            "producer.id.expiration.ms",
            LogConfig {
                producer_id_expiration_ms: i64::from(i32::MAX) + 1,
                ..d()
            },
        ),
    ]
}

#[test]
fn out_of_range_values_are_invalid_config_errors() {
    for (name, cfg) in invalid_configs() {
        match cfg.validate() {
            Err(SegmentError::InvalidConfig { name: n, .. }) => assert_eq!(n, name, "{cfg:?}"),
            other => panic!("{name}: expected InvalidConfig, got {other:?} for {cfg:?}"),
        }
    }
}

#[test]
fn boundary_values_are_accepted() {
    let d = LogConfig::default;
    for cfg in [
        d(),
        LogConfig {
            segment_bytes: 14,
            ..d()
        },
        LogConfig {
            segment_bytes: i32::MAX as u64,
            ..d()
        },
        LogConfig {
            max_index_size: 24,
            ..d()
        },
        LogConfig {
            index_interval_bytes: 0,
            ..d()
        },
        LogConfig {
            segment_ms: 1,
            ..d()
        },
        LogConfig {
            segment_jitter_ms: 0,
            ..d()
        },
        LogConfig {
            retention_ms: -1,
            ..d()
        },
        LogConfig {
            retention_bytes: -5,
            ..d()
        },
        LogConfig {
            file_delete_delay_ms: 0,
            ..d()
        },
        LogConfig {
            producer_id_expiration_ms: 1,
            ..d()
        },
    ] {
        cfg.validate().unwrap_or_else(|e| panic!("{cfg:?}: {e}"));
    }
}

#[test]
fn log_open_refuses_an_invalid_config_and_touches_nothing() {
    for (name, cfg) in invalid_configs() {
        let dir = tempfile::tempdir().unwrap();
        let (_t, clock) = mock();
        let log = open_log(dir.path(), LogConfig::default(), clock.clone());
        fill(&log, 0, 3, 2, 1_000);
        log.close().unwrap();
        let before = listing(dir.path());
        match Log::options().clock(clock.clone()).open(dir.path(), cfg) {
            Err(SegmentError::InvalidConfig { name: n, .. }) => assert_eq!(n, name),
            Err(e) => panic!("{name}: expected InvalidConfig, got {e:?}"),
            Ok(_) => panic!("{name}: an invalid config was accepted"),
        }
        assert_eq!(
            listing(dir.path()),
            before,
            "{name}: the directory was changed"
        );
        // the clean-shutdown marker is still there: the next open trusts it
        let log = open_log(dir.path(), LogConfig::default(), clock);
        assert_eq!(log.stats().scanned_segments(), 0);
        assert_eq!(read_all(&log, 0), (0..6).collect::<Vec<_>>());
    }
}

#[test]
fn log_segment_open_refuses_an_invalid_config() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    for (name, cfg) in invalid_configs() {
        match LogSegment::<segment::KafkaBatchFormat>::create(dir.path(), 0, &cfg, clock.clone()) {
            Err(SegmentError::InvalidConfig { name: n, .. }) => assert_eq!(n, name),
            other => panic!(
                "{name}: expected InvalidConfig, got {:?}",
                other.map(|_| ())
            ),
        }
    }
}

/// The smallest accepted index size still takes records (no roll per append forever,
/// no stuck log).
#[test]
fn smallest_index_size_still_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let too_small = config(0, 23);
    assert!(matches!(
        Log::options()
            .clock(clock.clone())
            .open(dir.path(), too_small),
        Err(SegmentError::InvalidConfig {
            name: "segment.index.bytes",
            ..
        })
    ));
    let cfg = config(0, 24);
    let log = open_log(dir.path(), cfg.clone(), clock.clone());
    fill(&log, 0, 20, 3, 1_000);
    assert_eq!(read_all(&log, 0), (0..60).collect::<Vec<_>>());
    log.close().unwrap();
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(read_all(&log, 0), (0..60).collect::<Vec<_>>());
    assert_eq!(log.log_end_offset(), 60);
}

fn invalid_argument<T: std::fmt::Debug>(r: segment::Result<T>, what: &str) {
    match r {
        Err(SegmentError::InvalidArgument { .. }) => {}
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn roll_below_the_log_end_is_an_invalid_argument() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    fill(&log, 0, 5, 2, 1_000);
    invalid_argument(log.roll(Some(3)).map(|_| ()), "roll(Some(3)) at log end 10");
    invalid_argument(log.roll(Some(i64::MIN)).map(|_| ()), "roll(Some(MIN))");
    invalid_argument(log.roll(Some(i64::MAX)).map(|_| ()), "roll(Some(MAX))");
    assert_eq!(log.segments().base_offsets(), vec![0], "nothing rolled");
    // At or above the log end is fine.
    assert_eq!(log.roll(Some(10)).unwrap().base_offset(), 10);
    assert_eq!(
        log.roll(Some(10)).unwrap().base_offset(),
        10,
        "empty active reused"
    );
    assert_eq!(log.roll(None).unwrap().base_offset(), 10);
    log.append(&batch(10, 2, 1_000)).unwrap();
    assert_eq!(read_all(&log, 0), (0..12).collect::<Vec<_>>());
}

#[test]
fn truncate_arguments_that_would_reuse_offsets_are_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    fill(&log, 0, 5, 2, 1_000);
    invalid_argument(log.truncate_to(-1), "truncate_to(-1)");
    invalid_argument(log.truncate_to(i64::MIN), "truncate_to(MIN)");
    log.increment_log_start_offset(4).unwrap();
    invalid_argument(
        log.truncate_fully_and_start_at(3),
        "start at 3 below the log start 4",
    );
    invalid_argument(log.truncate_fully_and_start_at(-1), "start at -1");
    invalid_argument(log.truncate_fully_and_start_at(i64::MAX), "start at MAX");
    assert_eq!(
        read_all(&log, 4),
        (4..10).collect::<Vec<_>>(),
        "nothing was truncated"
    );
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (4, 10));
    // Forward is fine.
    log.truncate_fully_and_start_at(20).unwrap();
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (20, 20));
}

fn listing(dir: &std::path::Path) -> Vec<(String, u64)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Kafka's `LogConfig.maxSegmentMs` (`docs/kafka-behaviour.md#cleaner-max-lag-roll`): a
/// compacted log rolls by time after the lower of `segment.ms` and
/// `max.compaction.lag.ms`; a log that is not compacted after `segment.ms` only.
#[test]
fn a_compacted_log_rolls_by_its_max_compaction_lag() {
    use segment::record::BatchBuilder;
    let t0 = 1_700_000_000_000i64;
    let segments_after = |compact: bool| {
        let tmp = tempfile::tempdir().unwrap();
        let config = LogConfig {
            compact,
            max_compaction_lag_ms: 1_000,
            ..LogConfig::default()
        };
        assert_eq!(
            config.max_segment_ms(),
            if compact { 1_000 } else { config.segment_ms }
        );
        let log = Log::open(tmp.path().join("t-0"), config).unwrap();
        for ts in [t0, t0 + 500, t0 + 1_500] {
            let b = BatchBuilder::new(log.log_end_offset())
                .record(ts, Some(b"k"), Some(b"v"))
                .build()
                .unwrap();
            log.append(&b).unwrap();
        }
        log.segments().values().len()
    };
    assert_eq!(
        segments_after(true),
        2,
        "rolled at the batch 1.5 s after the first"
    );
    assert_eq!(segments_after(false), 1);
}
