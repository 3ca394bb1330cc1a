//! The log cleaner's plan (`segment::clean`): Kafka 4.4's settings, offset-map capacity
//! and stop rule, cleanable offsets, dirty ratio, segment grouping and
//! `cleaner-offset-checkpoint`, rule by rule (`docs/kafka-behaviour.md#log-cleaner`).

use std::collections::HashMap;

use proptest::prelude::*;
use segment::clean::*;
use segment::fs::{Fault, FaultyFs, FsOp, RealFs, ENOSPC};

// ---------------------------------------------------------------- settings

#[test]
fn cleaner_config_defaults_are_kafkas() {
    let c = CleanerConfig::default();
    assert_eq!(c.num_threads, 1);
    assert_eq!(c.dedupe_buffer_size, 134_217_728);
    assert_eq!(c.dedupe_buffer_load_factor, 0.9);
    assert_eq!(c.io_buffer_size, 524_288);
    assert_eq!(c.max_message_size, 1_048_588);
    assert_eq!(c.io_max_bytes_per_second, f64::MAX);
    assert_eq!(c.backoff_ms, 15_000);
    assert!(c.enable);
    c.validate().unwrap();
    assert_eq!(c.io_buffer_size_per_thread(), 262_144);
    let t = CompactionConfig::default();
    assert_eq!(t.min_cleanable_dirty_ratio, 0.5);
    assert_eq!(t.min_compaction_lag_ms, 0);
    assert_eq!(t.max_compaction_lag_ms, i64::MAX);
    assert_eq!(t.delete_retention_ms, 86_400_000);
    t.validate().unwrap();
}

fn refused_name(r: Result<(), CleanError>) -> &'static str {
    match r {
        Err(CleanError::InvalidConfig { name, .. }) => name,
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
}

#[test]
fn cleaner_config_ranges_are_checked() {
    let base = CleanerConfig::default();
    let cases: Vec<(CleanerConfig, &str)> = vec![
        (
            CleanerConfig {
                dedupe_buffer_size: -1,
                ..base.clone()
            },
            "log.cleaner.dedupe.buffer.size",
        ),
        (
            CleanerConfig {
                dedupe_buffer_load_factor: 0.0,
                ..base.clone()
            },
            "log.cleaner.io.buffer.load.factor",
        ),
        (
            CleanerConfig {
                dedupe_buffer_load_factor: 1.01,
                ..base.clone()
            },
            "log.cleaner.io.buffer.load.factor",
        ),
        (
            CleanerConfig {
                dedupe_buffer_load_factor: f64::NAN,
                ..base.clone()
            },
            "log.cleaner.io.buffer.load.factor",
        ),
        (
            CleanerConfig {
                io_buffer_size: -1,
                ..base.clone()
            },
            "log.cleaner.io.buffer.size",
        ),
        (
            CleanerConfig {
                max_message_size: -1,
                ..base.clone()
            },
            "message.max.bytes",
        ),
        (
            CleanerConfig {
                io_max_bytes_per_second: 0.0,
                ..base.clone()
            },
            "log.cleaner.io.max.bytes.per.second",
        ),
        (
            CleanerConfig {
                backoff_ms: -1,
                ..base.clone()
            },
            "log.cleaner.backoff.ms",
        ),
    ];
    for (c, name) in cases {
        assert_eq!(refused_name(c.validate()), name);
    }
    let none = CleanerConfig {
        num_threads: 0,
        ..base
    };
    none.validate().unwrap(); // Kafka's atLeast(0): no cleaner
    assert!(matches!(
        none.offset_map_capacity(),
        Err(CleanError::InvalidConfig {
            name: "log.cleaner.threads",
            ..
        })
    ));
    assert_eq!(none.io_buffer_size_per_thread(), 0);
}

#[test]
fn compaction_config_ranges_are_checked() {
    let base = CompactionConfig::default();
    let bad = |c: CompactionConfig| refused_name(c.validate());
    for r in [-0.1, 1.1, f64::NAN] {
        assert_eq!(
            bad(CompactionConfig {
                min_cleanable_dirty_ratio: r,
                ..base.clone()
            }),
            "min.cleanable.dirty.ratio"
        );
    }
    for r in [0.0, 1.0] {
        CompactionConfig {
            min_cleanable_dirty_ratio: r,
            ..base.clone()
        }
        .validate()
        .unwrap();
    }
    assert_eq!(
        bad(CompactionConfig {
            min_compaction_lag_ms: -1,
            ..base.clone()
        }),
        "min.compaction.lag.ms"
    );
    assert_eq!(
        bad(CompactionConfig {
            max_compaction_lag_ms: 0,
            ..base.clone()
        }),
        "max.compaction.lag.ms"
    );
    assert_eq!(
        bad(CompactionConfig {
            delete_retention_ms: -1,
            ..base.clone()
        }),
        "delete.retention.ms"
    );
    // LogConfig.validateValues: min lag > max lag conflicts.
    assert_eq!(
        bad(CompactionConfig {
            min_compaction_lag_ms: 10,
            max_compaction_lag_ms: 9,
            ..base.clone()
        }),
        "min.compaction.lag.ms"
    );
    CompactionConfig {
        min_compaction_lag_ms: 10,
        max_compaction_lag_ms: 10,
        ..base
    }
    .validate()
    .unwrap();
}

// ---------------------------------------------------------------- offset map capacity

#[test]
fn capacity_is_kafkas_slot_accounting() {
    // The default: 128 MiB for one thread, 24 bytes a slot, 90 % of them.
    let c = CleanerConfig::default().offset_map_capacity().unwrap();
    assert_eq!(
        (c.memory_bytes(), c.slots(), c.max_entries()),
        (134_217_728, 5_592_405, 5_033_164)
    );
    // Three threads share it (long division), each map of its share.
    let c = CleanerConfig {
        num_threads: 3,
        ..CleanerConfig::default()
    }
    .offset_map_capacity()
    .unwrap();
    assert_eq!(
        (c.memory_bytes(), c.slots(), c.max_entries()),
        (44_739_242, 1_864_135, 1_677_721)
    );
    // A thread's share is capped at Integer.MAX_VALUE bytes.
    let c = CleanerConfig {
        dedupe_buffer_size: 10 << 30,
        ..CleanerConfig::default()
    }
    .offset_map_capacity()
    .unwrap();
    assert_eq!(
        (c.memory_bytes(), c.slots(), c.max_entries()),
        (2_147_483_647, 89_478_485, 80_530_636)
    );
    // slots × load factor must be at least 1: a map that takes no key never makes
    // progress (Kafka 4.4 only asserts it).
    assert!(matches!(
        OffsetMapCapacity::new(47, 0.9),
        Err(CleanError::OffsetMapTooSmall { slots: 1, .. })
    ));
    assert!(matches!(
        OffsetMapCapacity::new(23, 1.0),
        Err(CleanError::OffsetMapTooSmall { slots: 0, .. })
    ));
    let c = OffsetMapCapacity::new(48, 0.5).unwrap();
    assert_eq!((c.slots(), c.max_entries()), (2, 1));
    let c = OffsetMapCapacity::new(48, 0.9).unwrap();
    assert_eq!((c.slots(), c.max_entries()), (2, 1));
    assert!(OffsetMapCapacity::new(u32::MAX, 0.9).is_err());
}

#[test]
fn offset_map_counts_keys_and_refuses_a_put_when_slots_are_full() {
    let cap = OffsetMapCapacity::new(3 * 24, 1.0).unwrap();
    let mut m = OffsetMap::new(cap);
    assert_eq!((m.size(), m.latest_offset(), m.get(b"a")), (0, -1, None));
    m.put(b"a", 5).unwrap();
    m.put(b"b", 6).unwrap();
    m.put(b"a", 7).unwrap(); // a known key: the count stays
    assert_eq!((m.size(), m.latest_offset()), (2, 7));
    assert_eq!(
        (m.get(b"a"), m.get(b"b"), m.get(b"c")),
        (Some(7), Some(6), None)
    );
    m.put(b"c", 8).unwrap();
    // Full at `slots` keys: even a known key is refused (Kafka checks before the lookup).
    assert!(matches!(
        m.put(b"a", 9),
        Err(CleanError::OffsetMapFull {
            entries: 3,
            slots: 3
        })
    ));
    assert_eq!(m.get(b"a"), Some(7));
    assert!((m.utilization() - 1.0).abs() < 1e-12);
    // A full table: a get of an absent key ends (every slot probed once).
    assert_eq!(m.get(b"absent"), None);
    m.update_latest_offset(42);
    assert_eq!(m.latest_offset(), 42);
    m.clear();
    assert_eq!((m.size(), m.latest_offset(), m.get(b"a")), (0, -1, None));
    // An empty key is a key (Kafka maps the MD5 of zero bytes).
    m.put(b"", 1).unwrap();
    assert_eq!(m.get(b""), Some(1));
    assert_eq!(key_digest(b"").len(), 16);
}

#[test]
fn offset_map_memory_grows_with_keys_and_never_passes_kafkas() {
    let cap = CleanerConfig::default().offset_map_capacity().unwrap();
    let mut m = OffsetMap::new(cap);
    assert_eq!(m.memory_bytes(), 0);
    for i in 0..10_000u32 {
        m.put(&i.to_be_bytes(), i64::from(i)).unwrap();
    }
    assert_eq!(m.size(), 10_000);
    // Kafka holds 128 MiB for these 10 000 keys; this table well under 1 MiB.
    assert!(m.memory_bytes() < 1 << 20, "{}", m.memory_bytes());
    // Filled to its slots, a small map holds no more than Kafka's buffer.
    let cap = OffsetMapCapacity::new(24 * 5000, 1.0).unwrap();
    let mut m = OffsetMap::new(cap);
    for i in 0..5000u32 {
        m.put(&i.to_le_bytes(), 1).unwrap();
    }
    assert!(m.memory_bytes() <= 24 * 5000);
    for i in 0..5000u32 {
        assert_eq!(m.get(&i.to_le_bytes()), Some(1));
    }
}

proptest! {
    #[test]
    fn offset_map_agrees_with_a_map_of_whole_keys(
        puts in prop::collection::vec((prop::collection::vec(0u8..4, 0..4), 0i64..1000), 0..300),
    ) {
        let cap = OffsetMapCapacity::new(24 * 400, 1.0).unwrap();
        let mut m = OffsetMap::new(cap);
        let mut model: HashMap<Vec<u8>, i64> = HashMap::new();
        for (k, o) in &puts {
            m.put(k, *o).unwrap();
            model.insert(k.clone(), *o);
            prop_assert_eq!(m.latest_offset(), *o);
        }
        prop_assert_eq!(m.size() as usize, model.len());
        for (k, o) in &model {
            prop_assert_eq!(m.get(k), Some(*o));
        }
        prop_assert_eq!(m.get(b"not a key"), None);
    }
}

// ---------------------------------------------------------------- the build's stop rule

/// A batch as the build reads it.
#[derive(Clone, Debug)]
enum B {
    Control(i64),
    Aborted(i64),
    Data(Vec<(i64, Option<Vec<u8>>)>),
}

impl B {
    fn last(&self) -> i64 {
        match self {
            B::Control(l) | B::Aborted(l) => *l,
            B::Data(r) => r.last().map_or(-1, |r| r.0),
        }
    }
}

/// Feeds segments of batches to a `MapFill` as `buildOffsetMap` reads them; `end` is
/// the build's end offset.
fn feed(map: &mut OffsetMap, start: i64, segs: &[(i64, Vec<B>)], end: i64) -> (i64, bool) {
    let mut fill = MapFill::new(map, start);
    'segs: for (i, (_, batches)) in segs.iter().enumerate() {
        for b in batches {
            if let B::Data(records) = b {
                for (o, k) in records {
                    if fill.record(*o, k.as_deref()).unwrap() == Fill::Full {
                        break 'segs;
                    }
                }
            }
            fill.end_batch(b.last());
        }
        let next = segs.get(i + 1).map_or(end, |s| s.0);
        fill.end_segment(next);
    }
    (fill.end_offset(), fill.is_full())
}

fn k(s: &str) -> Option<Vec<u8>> {
    Some(s.as_bytes().to_vec())
}

#[test]
fn a_full_map_stops_the_build_at_the_last_completed_step() {
    // slots 4 × 0.75: 3 keys per clean.
    let cap = OffsetMapCapacity::new(96, 0.75).unwrap();
    assert_eq!(cap.max_entries(), 3);
    let mut m = OffsetMap::new(cap);
    let segs = vec![
        (
            0,
            vec![
                B::Data(vec![(10, k("k1")), (11, k("k2"))]),
                B::Data(vec![(12, k("k1")), (13, k("k3")), (14, None)]),
                // The map holds 3 keys: this keyed record stops the build, known key or not.
                B::Data(vec![(15, k("k1")), (16, k("k9"))]),
            ],
        ),
        (20, vec![B::Data(vec![(20, k("k5"))])]),
    ];
    assert_eq!(feed(&mut m, 10, &segs, 30), (15, true));
    assert_eq!((m.size(), m.get(b"k1")), (3, Some(12)));
    // A record without a key does not check the map: a build of keyless records runs to
    // the end, and the segment end forwards over the gap to the next base offset.
    let segs = vec![
        (0, vec![B::Data(vec![(10, None), (11, None)])]),
        (20, vec![B::Data(vec![(20, None)])]),
    ];
    assert_eq!(feed(&mut m, 10, &segs, 25), (25, false));
    // Mid-batch: records put before the stop count, the batch end does not.
    let segs = vec![(
        0,
        vec![B::Data(vec![
            (10, k("a")),
            (11, k("b")),
            (12, k("c")),
            (13, k("d")),
            (14, k("e")),
        ])],
    )];
    assert_eq!(feed(&mut m, 10, &segs, 30), (13, true));
}

#[test]
fn the_build_skips_records_before_the_start_aborted_and_control_batches() {
    let cap = OffsetMapCapacity::new(24 * 10, 1.0).unwrap();
    let mut m = OffsetMap::new(cap);
    let segs = vec![(
        0,
        vec![
            // Before the start: neither put nor moving the latest offset.
            B::Data(vec![(3, k("old")), (4, k("old2"))]),
            // A batch straddling the start: only its records at or after it.
            B::Data(vec![(4, k("x")), (5, k("y"))]),
            B::Aborted(7),
            B::Control(8),
        ],
    )];
    assert_eq!(feed(&mut m, 5, &segs, 9), (9, false));
    assert_eq!(
        (m.get(b"old"), m.get(b"x"), m.get(b"y")),
        (None, None, Some(5))
    );
    assert_eq!(m.size(), 1);
    // A control batch as the last step moves the latest offset to its last offset, then
    // the segment end to end − 1.
    let mut fill = MapFill::new(&mut m, 5);
    fill.end_batch(8);
    assert_eq!(fill.end_offset(), 9);
    fill.end_batch(4); // before the start: ignored
    assert_eq!(fill.end_offset(), 9);
}

fn arb_segments() -> impl Strategy<Value = (i64, Vec<(i64, Vec<B>)>, i64)> {
    // Batches of 1..4 records, keys from a small alphabet, some keyless, some aborted
    // or control batches; segments of consecutive batches with gaps between segments.
    let batch = prop_oneof![
        6 => prop::collection::vec(prop::option::weighted(0.8, 0u8..12), 1..4)
            .prop_map(|ks| (0u8, ks)),
        1 => Just((1u8, vec![None])),
        1 => Just((2u8, vec![None])),
    ];
    (
        prop::collection::vec((prop::collection::vec(batch, 1..6), 0i64..3), 1..5),
        0i64..6,
    )
        .prop_map(|(segs, start_skip)| {
            let mut offset = 0i64;
            let mut out = Vec::new();
            for (batches, gap) in segs {
                offset += gap;
                let base = offset;
                let mut bs = Vec::new();
                for (kind, keys) in batches {
                    let b = match kind {
                        0 => B::Data(
                            keys.iter()
                                .map(|key| {
                                    offset += 1;
                                    (offset - 1, key.map(|c| vec![c]))
                                })
                                .collect(),
                        ),
                        1 => {
                            offset += 1;
                            B::Aborted(offset - 1)
                        }
                        _ => {
                            offset += 1;
                            B::Control(offset - 1)
                        }
                    };
                    bs.push(b);
                }
                out.push((base, bs));
            }
            let start = start_skip.min(offset);
            (start, out, offset + 1)
        })
}

proptest! {
    #[test]
    fn the_map_holds_exactly_the_keys_below_the_end_offset(
        (start, segs, end) in arb_segments(),
        memory in 48u32..24 * 14,
    ) {
        let cap = OffsetMapCapacity::new(memory, 0.9).unwrap();
        let mut m = OffsetMap::new(cap);
        let (end_offset, full) = feed(&mut m, start, &segs, end);
        // The model: the latest offset of each key of a data batch in [start, end_offset).
        let mut model: HashMap<Vec<u8>, i64> = HashMap::new();
        for (_, batches) in &segs {
            for b in batches {
                if let B::Data(records) = b {
                    for (o, key) in records {
                        if let Some(key) = key {
                            if *o >= start && *o < end_offset {
                                model.insert(key.clone(), *o);
                            }
                        }
                    }
                }
            }
        }
        prop_assert_eq!(m.size() as usize, model.len());
        for (key, o) in &model {
            prop_assert_eq!(m.get(key), Some(*o));
        }
        if full {
            prop_assert_eq!(m.size(), cap.max_entries());
            prop_assert!(end_offset > start && end_offset < end);
        } else {
            prop_assert_eq!(end_offset, end);
        }
    }
}

// ---------------------------------------------------------------- cleanable offsets

fn seg(base: i64, size: u64, largest_ts: i64, first_ts: i64) -> SegmentSummary {
    SegmentSummary {
        base_offset: base,
        size,
        largest_timestamp: largest_ts,
        first_batch_timestamp: first_ts,
        last_modified: 0,
        offset_index_bytes: 8,
        time_index_bytes: 12,
    }
}

/// Segments at 0, 100, 200, 300 (active), 100 bytes each, timestamps 1000 × base.
fn log4() -> LogSummary {
    LogSummary {
        log_start_offset: 0,
        log_end_offset: 350,
        last_stable_offset: 350,
        segments: [0, 100, 200, 300]
            .iter()
            .map(|&b| seg(b, 100, 1000 * (b + 99), 1000 * b.max(1)))
            .collect(),
    }
}

#[test]
fn first_dirty_offset_comes_from_the_checkpoint_or_resets_to_the_log_start() {
    let c = CompactionConfig::default();
    let mut log = log4();
    log.log_start_offset = 50;
    let o = cleanable_offsets(&log, None, 0, &c);
    assert_eq!(
        (o.first_dirty_offset, o.force_update_checkpoint),
        (50, false)
    );
    let o = cleanable_offsets(&log, Some(120), 0, &c);
    assert_eq!(
        (o.first_dirty_offset, o.force_update_checkpoint),
        (120, false)
    );
    // KAFKA-6266: below the log start (retention moved it).
    let o = cleanable_offsets(&log, Some(49), 0, &c);
    assert_eq!(
        (o.first_dirty_offset, o.force_update_checkpoint),
        (50, true)
    );
    // KAFKA-8724: past the log end (the log was truncated).
    let o = cleanable_offsets(&log, Some(351), 0, &c);
    assert_eq!(
        (o.first_dirty_offset, o.force_update_checkpoint),
        (50, true)
    );
    // At the log end: kept.
    let o = cleanable_offsets(&log, Some(350), 0, &c);
    assert_eq!(
        (o.first_dirty_offset, o.first_uncleanable_dirty_offset),
        (350, 350)
    );
}

#[test]
fn first_uncleanable_offset_is_the_lowest_bound() {
    let c = CompactionConfig::default();
    let mut log = log4();
    // The active segment.
    assert_eq!(
        cleanable_offsets(&log, None, 0, &c).first_uncleanable_dirty_offset,
        300
    );
    // The last stable offset (an open transaction at 150).
    log.last_stable_offset = 150;
    assert_eq!(
        cleanable_offsets(&log, None, 0, &c).first_uncleanable_dirty_offset,
        150
    );
    // Never below the first dirty offset.
    assert_eq!(
        cleanable_offsets(&log, Some(250), 0, &c).first_uncleanable_dirty_offset,
        250
    );
}

#[test]
fn min_compaction_lag_holds_back_young_segments() {
    let log = log4(); // largest timestamps 99 000, 199 000, 299 000 (and active)
    let lag = |ms| CompactionConfig {
        min_compaction_lag_ms: ms,
        ..CompactionConfig::default()
    };
    // now − lag = 150 000: the segment at 100 (largest 199 000) is the first too young.
    assert_eq!(
        cleanable_offsets(&log, None, 160_000, &lag(10_000)).first_uncleanable_dirty_offset,
        100
    );
    // Exactly at the bound is old enough (uncleanable only when strictly after).
    assert_eq!(
        cleanable_offsets(&log, None, 209_000, &lag(10_000)).first_uncleanable_dirty_offset,
        200
    );
    // Only segments from the first dirty offset are looked at.
    assert_eq!(
        cleanable_offsets(&log, Some(250), 160_000, &lag(10_000)).first_uncleanable_dirty_offset,
        250
    );
    // No lag: no timestamp is read.
    assert_eq!(
        cleanable_offsets(&log, None, 0, &lag(0)).first_uncleanable_dirty_offset,
        300
    );
}

#[test]
fn max_compaction_lag_makes_a_log_overdue() {
    let log = log4(); // first-batch timestamps 1000, 100 000, 200 000 (non-active)
    let lag = |ms| CompactionConfig {
        max_compaction_lag_ms: ms,
        ..CompactionConfig::default()
    };
    assert_eq!(
        max_compaction_delay(&log, 0, 1_000_000, &CompactionConfig::default()),
        0
    );
    // now − lag = 6000: the oldest dirty first batch (1000) is 5000 ms overdue.
    assert_eq!(max_compaction_delay(&log, 0, 16_000, &lag(10_000)), 5000);
    // From offset 150: the segment holding it (first batch 100 000) is the oldest.
    assert_eq!(
        max_compaction_delay(&log, 150, 210_000, &lag(10_000)),
        100_000
    );
    // Not past the lag: 0.
    assert_eq!(max_compaction_delay(&log, 0, 11_000, &lag(10_000)), 0);
    // Timestamps ≤ 0 and i64::MAX (no batch) are not dirty data's age.
    let mut log = log4();
    for s in &mut log.segments {
        s.first_batch_timestamp = 0;
    }
    log.segments[1].first_batch_timestamp = i64::MAX;
    assert_eq!(max_compaction_delay(&log, 0, i64::MAX, &lag(1)), 0);
}

#[test]
fn dirty_ratio_is_kafkas_with_the_straddling_segment_counted_twice() {
    let log = log4();
    // Checkpoint at a segment boundary: clean 0..100, cleanable 100..300.
    let l = LogToClean::new(&log, 100, 300, false);
    assert_eq!(
        (l.clean_bytes, l.cleanable_bytes, l.total_bytes),
        (100, 200, 300)
    );
    assert_eq!(l.first_uncleanable_offset, 300);
    assert!((l.cleanable_ratio - 2.0 / 3.0).abs() < 1e-12);
    // Checkpoint inside the segment at 100: it is in both clean and cleanable bytes.
    let l = LogToClean::new(&log, 150, 300, false);
    assert_eq!(
        (l.clean_bytes, l.cleanable_bytes, l.total_bytes),
        (200, 200, 400)
    );
    // An uncleanable offset inside a segment: the clean stops at that segment's base.
    let l = LogToClean::new(&log, 0, 250, false);
    assert_eq!((l.first_uncleanable_offset, l.cleanable_bytes), (200, 200));
    // Uncleanable below the first dirty offset's segment end: nothing cleanable.
    let l = LogToClean::new(&log, 150, 150, false);
    assert_eq!(
        (l.first_uncleanable_offset, l.cleanable_bytes, l.clean_bytes),
        (100, 0, 200)
    );
    assert_eq!(l.cleanable_ratio, 0.0);
    // An empty log: 0 / 0, Java's NaN bit for bit.
    let empty = LogSummary {
        segments: vec![seg(0, 0, 0, i64::MAX)],
        log_end_offset: 0,
        last_stable_offset: 0,
        log_start_offset: 0,
    };
    let l = LogToClean::new(&empty, 0, 0, false);
    assert_eq!(l.cleanable_ratio.to_bits(), 0x7ff8_0000_0000_0000);
}

#[test]
fn the_filthiest_cleanable_log_is_chosen() {
    let log = log4();
    let at = |dirty, now| LogToClean::new(&log, dirty, 300, now);
    let half = at(200, false); // 100 / 300
    let two_thirds = at(100, false);
    assert!(!at(300, false).is_cleanable(0.0)); // 0 cleanable bytes, ratio 0
    assert!(two_thirds.is_cleanable(0.5));
    assert!(!half.is_cleanable(0.5)); // 1/3 is not above 0.5
                                      // Above, strictly.
    assert!(!two_thirds.is_cleanable(two_thirds.cleanable_ratio));
    // Overdue logs are cleaned whatever their ratio, if they have cleanable bytes.
    assert!(at(200, true).is_cleanable(0.99));
    assert!(!at(300, true).is_cleanable(0.0));
    let logs = [
        (half, 0.5),
        (two_thirds, 0.5),
        (two_thirds, 0.5),
        (at(200, true), 0.9),
    ];
    assert_eq!(filthiest(&logs), Some(1)); // the highest ratio, first on a tie
    assert_eq!(filthiest(&[(half, 0.9)]), None);
    let empty = LogSummary {
        segments: vec![seg(0, 0, 0, i64::MAX)],
        log_end_offset: 0,
        last_stable_offset: 0,
        log_start_offset: 0,
    };
    let e = LogToClean::new(&empty, 0, 0, true);
    assert!(e.total_bytes == 0 && !e.is_cleanable(0.0));
}

fn arb_log() -> impl Strategy<Value = LogSummary> {
    (
        prop::collection::vec((1i64..50, 0u64..500, 0i64..1000, 0i64..1000), 1..8),
        0i64..40,
        0i64..60,
    )
        .prop_map(|(segs, start_in, lso_back)| {
            let mut base = 0;
            let mut segments = Vec::new();
            for (len, size, ts, first) in segs {
                segments.push(seg(base, size, ts, first));
                base += len;
            }
            let leo = base;
            LogSummary {
                log_start_offset: start_in.min(leo),
                log_end_offset: leo,
                last_stable_offset: (leo - lso_back).max(start_in.min(leo)),
                segments,
            }
        })
}

proptest! {
    #[test]
    fn cleanable_offsets_stay_in_the_log(
        log in arb_log(),
        checkpoint in prop::option::of(-5i64..400),
        now in 0i64..2000,
        min_lag in 0i64..500,
    ) {
        let c = CompactionConfig { min_compaction_lag_ms: min_lag, ..CompactionConfig::default() };
        let o = cleanable_offsets(&log, checkpoint, now, &c);
        prop_assert!(o.first_dirty_offset >= log.log_start_offset);
        prop_assert!(o.first_dirty_offset <= log.log_end_offset);
        prop_assert!(o.first_uncleanable_dirty_offset >= o.first_dirty_offset);
        let bound = log.last_stable_offset.min(log.active_base_offset()).max(o.first_dirty_offset);
        prop_assert!(o.first_uncleanable_dirty_offset <= bound);
        prop_assert_eq!(o.force_update_checkpoint, o.first_dirty_offset != checkpoint.unwrap_or(log.log_start_offset));
        let l = LogToClean::new(&log, o.first_dirty_offset, o.first_uncleanable_dirty_offset, false);
        prop_assert!(l.first_uncleanable_offset <= o.first_uncleanable_dirty_offset.max(l.first_uncleanable_offset));
        prop_assert!(l.first_uncleanable_offset <= log.active_base_offset());
        prop_assert_eq!(l.total_bytes, l.clean_bytes + l.cleanable_bytes);
        let all: u64 = log.segments.iter().map(|s| s.size).sum();
        // At most one segment (the one holding the first dirty offset) counts twice.
        let max_seg = log.segments.iter().map(|s| s.size).max().unwrap_or(0);
        prop_assert!(l.total_bytes <= all + max_seg);
        if l.total_bytes > 0 {
            prop_assert!((0.0..=1.0).contains(&l.cleanable_ratio));
        }
    }
}

// ---------------------------------------------------------------- grouping

fn gseg(base: i64, size: u64, idx: u64, tidx: u64) -> SegmentSummary {
    SegmentSummary {
        offset_index_bytes: idx,
        time_index_bytes: tidx,
        ..seg(base, size, 0, 0)
    }
}

#[test]
fn groups_are_bounded_by_log_bytes_index_bytes_and_offset_span() {
    let s = |size| gseg(0, size, 8, 12);
    let with_bases = |mut v: Vec<SegmentSummary>| {
        for (i, x) in v.iter_mut().enumerate() {
            x.base_offset = 10 * i as i64;
        }
        v
    };
    // Log bytes: 400 + 300 + 300 = 1000 ≤ 1000, the next 1 byte would pass it.
    let segs = with_bases(vec![s(400), s(300), s(300), s(1), s(2000)]);
    assert_eq!(
        group_segments_by_size(&segs, 1000, 1 << 20, 50),
        vec![0..3, 3..4, 4..5]
    );
    // Offset index bytes (entries × 8), and time index bytes separately.
    let segs = with_bases(vec![
        gseg(0, 1, 16, 12),
        gseg(0, 1, 16, 12),
        gseg(0, 1, 8, 12),
    ]);
    assert_eq!(
        group_segments_by_size(&segs, 1000, 32, 30),
        vec![0..2, 2..3]
    );
    let segs = with_bases(vec![
        gseg(0, 1, 8, 24),
        gseg(0, 1, 8, 12),
        gseg(0, 1, 8, 12),
    ]);
    assert_eq!(
        group_segments_by_size(&segs, 1000, 36, 30),
        vec![0..2, 2..3]
    );
    assert!(group_segments_by_size(&[], 1000, 36, 30).is_empty());
}

#[test]
fn the_offset_span_uses_the_next_base_or_the_first_uncleanable_offset() {
    let m = i64::from(i32::MAX);
    let mk = |bases: &[i64], sizes: &[u64]| -> Vec<SegmentSummary> {
        bases
            .iter()
            .zip(sizes)
            .map(|(&b, &s)| gseg(b, s, 8, 12))
            .collect()
    };
    // Second segment's estimated last offset = third base − 1 = m: span m − 0 fits.
    let segs = mk(&[0, 10, m + 1], &[1, 1, 1]);
    assert_eq!(
        group_segments_by_size(&segs, 1 << 30, 1 << 20, m + 5),
        vec![0..2, 2..3]
    );
    // One more and it does not.
    let segs = mk(&[0, 10, m + 2], &[1, 1, 1]);
    assert_eq!(
        group_segments_by_size(&segs, 1 << 30, 1 << 20, m + 5),
        vec![0..1, 1..3]
    );
    // An empty segment is taken whatever its span.
    let segs = mk(&[0, 10, m + 2], &[1, 0, 1]);
    assert_eq!(
        group_segments_by_size(&segs, 1 << 30, 1 << 20, m + 5),
        vec![0..2, 2..3]
    );
    // The last segment's estimate is first_uncleanable − 1.
    let segs = mk(&[0, 10], &[1, 1]);
    assert_eq!(
        group_segments_by_size(&segs, 1 << 30, 1 << 20, m + 1),
        vec![0..2]
    );
    assert_eq!(
        group_segments_by_size(&segs, 1 << 30, 1 << 20, m + 2),
        vec![0..1, 1..2]
    );
}

proptest! {
    #[test]
    fn groups_partition_the_segments_and_are_maximal(
        specs in prop::collection::vec((1i64..1000, 0u64..300, 0u64..5, 0u64..5), 0..20),
        max_size in 1u64..800,
        max_index in 8u64..60,
        span in 1i64..3000,
    ) {
        let mut base = 0;
        let mut segs = Vec::new();
        for (len, size, i, t) in specs {
            segs.push(gseg(base, size, 8 * i, 12 * t));
            base += len;
        }
        let first_uncleanable = base;
        // A small offset budget: shift the test's bound by scaling offsets.
        let scaled: Vec<SegmentSummary> = segs
            .iter()
            .map(|s| SegmentSummary { base_offset: s.base_offset * (i64::from(i32::MAX) / span), ..*s })
            .collect();
        let fu = first_uncleanable * (i64::from(i32::MAX) / span);
        let groups = group_segments_by_size(&scaled, max_size, max_index, fu);
        let mut next = 0;
        for g in &groups {
            prop_assert_eq!(g.start, next);
            prop_assert!(g.end > g.start);
            next = g.end;
            let ss = &scaled[g.clone()];
            if ss.len() > 1 {
                prop_assert!(ss.iter().map(|s| s.size).sum::<u64>() <= max_size);
                prop_assert!(ss.iter().map(|s| s.offset_index_bytes).sum::<u64>() <= max_index);
                prop_assert!(ss.iter().map(|s| s.time_index_bytes).sum::<u64>() <= max_index);
            }
            // Maximal: the segment after the group breaks a rule.
            if let Some(after) = scaled.get(g.end) {
                let est = scaled.get(g.end + 1).map_or(fu - 1, |s| s.base_offset - 1);
                let fits = ss.iter().map(|s| s.size).sum::<u64>() + after.size <= max_size
                    && ss.iter().map(|s| s.offset_index_bytes).sum::<u64>() + after.offset_index_bytes <= max_index
                    && ss.iter().map(|s| s.time_index_bytes).sum::<u64>() + after.time_index_bytes <= max_index
                    && (after.size == 0 || est - ss[0].base_offset <= i64::from(i32::MAX));
                prop_assert!(!fits);
            }
        }
        prop_assert_eq!(next, scaled.len());
    }
}

// ---------------------------------------------------------------- checkpoint

fn tp(t: &str, p: i32) -> TopicPartition {
    TopicPartition::new(t, p)
}

#[test]
fn checkpoint_is_written_in_kafkas_format_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    assert!(read_cleaner_checkpoint(&RealFs, dir.path())
        .unwrap()
        .is_empty());
    let mut entries = CleanerCheckpoints::new();
    entries.insert(tp("orders", 1), 42);
    entries.insert(tp("__consumer_offsets", 17), 0);
    entries.insert(tp("orders", 0), 9_000_000_000);
    write_cleaner_checkpoint(&RealFs, dir.path(), &entries).unwrap();
    let text = std::fs::read_to_string(dir.path().join("cleaner-offset-checkpoint")).unwrap();
    assert_eq!(
        text,
        "0\n3\n__consumer_offsets 17 0\norders 0 9000000000\norders 1 42\n"
    );
    assert!(!dir.path().join("cleaner-offset-checkpoint.tmp").exists());
    assert_eq!(
        read_cleaner_checkpoint(&RealFs, dir.path()).unwrap(),
        entries
    );
}

#[test]
fn checkpoint_reading_follows_kafkas_checkpoint_file() {
    let p = std::path::Path::new("cleaner-offset-checkpoint");
    let parse = |s: &str| parse_cleaner_checkpoint(p, s.as_bytes());
    let ok = |s: &str| parse(s).unwrap();
    let bad = |s: &str| matches!(parse(s), Err(CleanError::MalformedCheckpoint { .. }));
    // No entry: an empty file, only the version, a count of 0.
    assert!(ok("").is_empty());
    assert!(ok("0\n").is_empty());
    assert!(ok("0\n0\n").is_empty());
    // Line ends \n, \r\n, \r; a last line without one; whitespace runs; trailing blanks.
    let one: CleanerCheckpoints = [(tp("t", 3), 7)].into_iter().collect();
    assert_eq!(ok("0\n1\nt 3 7\n"), one);
    assert_eq!(ok("0\r\n1\r\nt 3 7"), one);
    assert_eq!(ok("0\r1\rt\t3   7 \r"), one);
    // Signs as Java's parseInt and parseLong take them; a negative offset is read (the
    // cleaner resets it to the log start).
    assert_eq!(
        ok("+0\n+1\nt +3 -7\n"),
        [(tp("t", 3), -7)].into_iter().collect()
    );
    // A partition twice: the last offset.
    assert_eq!(ok("0\n2\nt 3 1\nt 3 7\n"), one);
    // Malformed.
    assert!(bad("1\n0\n")); // version
    assert!(bad(" 0\n0\n")); // parseInt does not trim
    assert!(bad("0\nx\n"));
    assert!(bad("0\n1\n")); // fewer entries than the count
    assert!(bad("0\n0\nt 3 7\n")); // more
    assert!(bad("0\n1\nt 3 7\n\n")); // a blank line is a malformed entry
    assert!(bad("0\n1\n t 3 7\n")); // leading whitespace: four fields
    assert!(bad("0\n1\nt 3\n"));
    assert!(bad("0\n1\nt 3 7 8\n"));
    assert!(bad("0\n1\nt 2147483648 7\n")); // partition overflows an int
    assert!(bad("0\n1\nt 3 9223372036854775808\n"));
    assert!(bad("0\n1\nt 3 7.0\n"));
    assert!(matches!(
        parse_cleaner_checkpoint(p, b"0\n1\nt 3 \xff\n"),
        Err(CleanError::MalformedCheckpoint { .. })
    ));
}

#[test]
fn a_failed_checkpoint_write_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let old: CleanerCheckpoints = [(tp("t", 0), 5)].into_iter().collect();
    write_cleaner_checkpoint(&RealFs, dir.path(), &old).unwrap();
    for op in [FsOp::WriteFile, FsOp::Rename] {
        let fs = FaultyFs::new();
        fs.inject(Fault::new(op, ENOSPC).on_path("cleaner-offset-checkpoint"));
        let new: CleanerCheckpoints = [(tp("t", 0), 9)].into_iter().collect();
        let err = write_cleaner_checkpoint(&fs, dir.path(), &new).unwrap_err();
        assert!(matches!(err, CleanError::Segment(_)), "{err}");
        assert_eq!(read_cleaner_checkpoint(&RealFs, dir.path()).unwrap(), old);
    }
    // The directory is fsynced after the rename.
    let fs = FaultyFs::new();
    write_cleaner_checkpoint(&fs, dir.path(), &old).unwrap();
    assert_eq!(fs.count(FsOp::SyncDir), 1);
}

proptest! {
    #[test]
    fn many_partitions_round_trip(
        entries in prop::collection::btree_map(
            ("[a-zA-Z0-9._-]{1,20}", 0i32..i32::MAX),
            any::<i64>(),
            0..200,
        ),
    ) {
        let entries: CleanerCheckpoints =
            entries.into_iter().map(|((t, p), o)| (tp(&t, p), o)).collect();
        let text = format_cleaner_checkpoint(&entries);
        let p = std::path::Path::new("x");
        prop_assert_eq!(parse_cleaner_checkpoint(p, text.as_bytes()).unwrap(), entries);
    }

    #[test]
    fn parsing_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = parse_cleaner_checkpoint(std::path::Path::new("x"), &bytes);
    }
}

// ---------------------------------------------------------------- a live log

#[test]
fn a_live_logs_summary_feeds_the_rules() {
    use segment::record::BatchBuilder;
    use segment::{Log, LogConfig};
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        segment_bytes: 1024,
        compact: true,
        ..LogConfig::default()
    };
    let log = Log::open(dir.path().join("topic-0"), config).unwrap();
    let t0 = 1_700_000_000_000i64;
    for b in 0..40i64 {
        let mut batch = BatchBuilder::new(2 * b);
        for r in 0..2 {
            let key = format!("k{}", (2 * b + r) % 7);
            batch = batch.record(t0 + b, Some(key.as_bytes()), Some(&[0u8; 40]));
        }
        log.append(&batch.build().unwrap()).unwrap();
    }
    let summary = LogSummary::of(&log).unwrap();
    let bases: Vec<i64> = summary.segments.iter().map(|s| s.base_offset).collect();
    assert_eq!(bases, log.segments().base_offsets());
    assert!(bases.len() > 2);
    assert_eq!(
        summary.segments.iter().map(|s| s.size).sum::<u64>(),
        log.segments().size_in_bytes()
    );
    assert_eq!(
        (summary.log_end_offset, summary.last_stable_offset),
        (80, 80)
    );
    // Every segment but the active one is dirty, from the start.
    let (offsets, ltc) = LogToClean::plan(&summary, None, t0, &CompactionConfig::default());
    assert_eq!(
        offsets.first_uncleanable_dirty_offset,
        summary.active_base_offset()
    );
    assert_eq!(ltc.clean_bytes, 0);
    assert_eq!(ltc.cleanable_ratio, 1.0);
    assert!(ltc.is_cleanable(0.5));
    // The first batch timestamps are the segments' first batches'.
    assert_eq!(summary.segments[0].first_batch_timestamp, t0);
    // min.compaction.lag.ms with `now` just after the first segment's records: it is the
    // only one old enough.
    let young = CompactionConfig {
        min_compaction_lag_ms: 1,
        ..CompactionConfig::default()
    };
    let last_ts = summary.segments[0].largest_timestamp;
    let o = cleanable_offsets(&summary, None, last_ts + 1, &young);
    assert_eq!(o.first_uncleanable_dirty_offset, bases[1]);
    // The groups of the whole dirty section fit in one 1 KiB segment each, in order.
    let groups = group_segments_by_size(
        &summary.segments[..bases.len() - 1],
        1024,
        10 << 20,
        bases[bases.len() - 1],
    );
    assert_eq!(groups.last().unwrap().end, bases.len() - 1);
}

// ---------------------------------------------------------------- the build over a live log

#[test]
fn the_build_over_a_log_skips_aborted_transactions_and_stops_where_kafka_does() {
    use segment::record::{BatchBuilder, ControlRecordType};
    use segment::{AppendOrigin, Log, LogConfig};
    let dir = tempfile::tempdir().unwrap();
    let log = Log::options()
        .manual_high_watermark(0)
        .open(
            dir.path().join("t-0"),
            LogConfig {
                compact: true,
                ..LogConfig::default()
            },
        )
        .unwrap();
    let now = 1_700_000_000_000i64;
    let append = |b: Vec<u8>, origin| log.append_as_leader(&b, 0, origin).unwrap();
    let plain = |keys: &[&str]| {
        let mut b = BatchBuilder::new(0);
        for k in keys {
            b = b.record(now, Some(k.as_bytes()), Some(b"v"));
        }
        b.build().unwrap()
    };
    append(plain(&["a", "b"]), AppendOrigin::Client); // 0, 1
    let txn = |pid, key: &str| {
        BatchBuilder::new(0)
            .producer(pid, 0, 0)
            .transactional(true)
            .record(now, Some(key.as_bytes()), Some(b"t"))
            .build()
            .unwrap()
    };
    let marker = |pid, t| {
        BatchBuilder::new(0)
            .producer(pid, 0, -1)
            .build_end_txn_marker(t, 0, now)
            .unwrap()
    };
    append(txn(8, "x"), AppendOrigin::Client); // 2, aborted
    append(txn(9, "y"), AppendOrigin::Client); // 3, committed
    append(
        marker(8, ControlRecordType::Abort),
        AppendOrigin::Coordinator,
    ); // 4
    append(
        marker(9, ControlRecordType::Commit),
        AppendOrigin::Coordinator,
    ); // 5
    append(plain(&["a"]), AppendOrigin::Client); // 6
    log.roll(None).unwrap();
    append(plain(&["c"]), AppendOrigin::Client); // 7
    log.update_high_watermark(log.log_end_offset()).unwrap();
    let summary = LogSummary::of(&log).unwrap();
    let (offsets, ltc) = LogToClean::plan(&summary, None, now, &CompactionConfig::default());
    assert_eq!(
        (offsets.first_dirty_offset, ltc.first_uncleanable_offset),
        (0, 7)
    );

    let mut map = OffsetMap::new(OffsetMapCapacity::new(24 * 100, 0.9).unwrap());
    let built = build_offset_map(&log, &mut map, 0, 7, 1 << 20).unwrap();
    assert_eq!((built.end_offset, built.full), (7, false));
    assert_eq!(built.batches_read, 6);
    assert_eq!(
        (map.get(b"a"), map.get(b"b"), map.get(b"y")),
        (Some(6), Some(1), Some(3))
    );
    assert_eq!(
        map.get(b"x"),
        None,
        "a key only in an aborted transaction is not mapped"
    );
    assert_eq!(map.size(), 3);

    // Two keys a clean: a and b are put; the aborted batch at 2 moves the latest offset
    // without a look at the map; the committed y at 3 finds it full: the clean ends at 3.
    let mut map = OffsetMap::new(OffsetMapCapacity::new(48, 1.0).unwrap());
    let built = build_offset_map(&log, &mut map, 0, 7, 1 << 20).unwrap();
    assert_eq!((built.end_offset, built.full), (3, true));
    // From offset 1: b, then y; a at 6 finds it full. The aborted batch and both markers
    // moved the latest offset on the way.
    let built = build_offset_map(&log, &mut map, 1, 7, 1 << 20).unwrap();
    assert_eq!((built.end_offset, built.full), (6, true));
    assert_eq!(
        (map.get(b"a"), map.get(b"b"), map.get(b"y")),
        (None, Some(1), Some(3))
    );
    // An empty range maps nothing; end < start is refused (as Kafka's logSegments).
    let built = build_offset_map(&log, &mut map, 7, 7, 1 << 20).unwrap();
    assert_eq!((built.end_offset, built.batches_read), (0, 0));
    assert!(build_offset_map(&log, &mut map, 7, 3, 1 << 20).is_err());
}
