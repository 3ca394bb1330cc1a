//! `TimeIndex::appender`: a run of `maybe_append` calls under one hold of the writer lock
//! gives exactly what the same calls to `TimeIndex::maybe_append` give: the same answers,
//! skips and errors call by call, the same bytes on disk, the same lookups.

use std::fs;

use crate::common::*;
use index_time::{IndexError, Result, TimeIndex};
use proptest::prelude::*;

/// A result with the index's path (`{path:?}`) taken out, so that results of two indexes
/// can be compared.
fn shape(result: &Result<bool>, path: &str) -> String {
    format!("{result:?}").replace(path, "<path>")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random runs (timestamps and offsets that go back, repeat, skip the full check,
    /// overflow the relative offset, fill the index) give the same results through
    /// `maybe_append` and through one appender.
    #[test]
    fn appender_equals_maybe_append(
        base in prop_oneof![Just(0i64), Just(1_000i64), Just(i64::MAX - (1 << 31))],
        max in 12usize..200,
        preload in 0usize..4,
        steps in prop::collection::vec(
            (-2i64..4, -2i64..4, any::<bool>(), any::<bool>()),
            0..40,
        ),
        strategy in 0usize..STRATEGIES.len(),
    ) {
        let dir = tmp();
        let strategy = STRATEGIES[strategy];
        let one = new_index(dir.path(), base, max).with_search_strategy(strategy);
        let mut run = TimeIndex::open(dir.path().join("run.timeindex"), base, max)
            .unwrap()
            .with_search_strategy(strategy);
        let (p_one, p_run) = (format!("{:?}", one.path()), format!("{:?}", run.path()));
        for i in 0..preload as i64 {
            let a = one.maybe_append(1_000 + 10 * i, base + 2 * i);
            let b = run.maybe_append(1_000 + 10 * i, base + 2 * i);
            prop_assert_eq!(shape(&a, &p_one), shape(&b, &p_run));
        }
        let (mut ts, mut offset) = (1_000 + 10 * preload as i64, base + 2 * preload as i64);
        let mut appender = run.appender().unwrap();
        for (dt, doff, skip_full_check, overflow) in steps {
            let target_offset = if overflow {
                base.saturating_add(i32::MAX as i64).saturating_add(doff.max(0))
            } else {
                offset.saturating_add(doff)
            };
            let target_ts = ts + dt;
            let (a, b) = if skip_full_check {
                (
                    one.maybe_append_final(target_ts, target_offset),
                    appender.maybe_append_final(target_ts, target_offset),
                )
            } else {
                (
                    one.maybe_append(target_ts, target_offset),
                    appender.maybe_append(target_ts, target_offset),
                )
            };
            prop_assert_eq!(shape(&a, &p_one), shape(&b, &p_run));
            prop_assert_eq!(one.entries(), appender.entries());
            prop_assert_eq!(one.last_entry().unwrap(), appender.last_entry());
            if let Ok(true) = a {
                (ts, offset) = (target_ts, target_offset);
            }
        }
        drop(appender);
        prop_assert_eq!(one.entries(), run.entries());
        let slots = one.index_file().snapshot().unwrap().slots().to_vec();
        let keys = slots.iter().map(|e| e.decode(base).timestamp).chain([-1, 0]);
        for key in keys {
            for target in [key - 1, key, key + 1] {
                prop_assert_eq!(one.lookup(target).unwrap(), run.lookup(target).unwrap());
            }
        }
        let path_one = one.path();
        one.close().unwrap();
        run.close().unwrap();
        prop_assert_eq!(
            fs::read(path_one).unwrap(),
            fs::read(dir.path().join("run.timeindex")).unwrap()
        );
    }
}

/// The appender checks Kafka's rules in Kafka's order, skips a timestamp that is not
/// larger than the last one, and names the index in its errors.
#[test]
fn appender_rules_in_kafka_order() {
    let dir = tmp();
    let mut index = new_index(dir.path(), 100, 36);
    let path = index.path();
    let mut a = index.appender().unwrap();
    assert_eq!(a.last_entry(), to(-1, 100));
    // The empty index's last timestamp is -1: -1 itself is never indexed.
    assert!(!a.maybe_append(-1, 100).unwrap());
    assert!(a.maybe_append(5_000, 100).unwrap());
    assert!(!a.maybe_append(5_000, 101).unwrap());
    match a.maybe_append(6_000, 99) {
        Err(IndexError::InvalidOffset {
            path: p,
            offset: 99,
            slot: 1,
            last_offset: 100,
        }) => assert_eq!(p, path),
        other => panic!("expected InvalidOffset, got {other:?}"),
    }
    assert!(matches!(
        a.maybe_append(4_999, 101),
        Err(IndexError::InvalidTimestamp {
            timestamp: 4_999,
            last_timestamp: 5_000,
            ..
        })
    ));
    assert!(matches!(
        a.maybe_append(6_000, 100 + (1 << 31)),
        Err(IndexError::OffsetOverflow { .. })
    ));
    assert!(a.maybe_append(6_000, 110).unwrap());
    // Two of three slots used: the full check keeps the last slot for the roll's entry.
    assert!(matches!(
        a.maybe_append(7_000, 120),
        Err(IndexError::IndexFull { entries: 2, .. })
    ));
    assert!(a.maybe_append_final(7_000, 120).unwrap());
    assert!(matches!(
        a.maybe_append_final(8_000, 130),
        Err(IndexError::IndexFull { entries: 3, .. })
    ));
    assert_eq!(a.entries(), 3);
    drop(a);
    assert_eq!(index.last_entry().unwrap(), to(7_000, 120));
    assert_eq!(index.lookup(6_500).unwrap(), to(6_000, 110));
}

/// An appender on a closed index is `Closed`; on a read-only index it refuses appends
/// as `maybe_append` does, and writes nothing.
#[test]
fn appender_on_closed_and_read_only() {
    let dir = tmp();
    let index = new_index(dir.path(), 0, 120);
    index.maybe_append(10, 3).unwrap();
    let path = index.path();
    index.close().unwrap();
    let mut ro = TimeIndex::open_read_only(&path, 0).unwrap();
    let before = fs::read(&path).unwrap();
    let direct = format!("{:?}", ro.maybe_append_final(20, 4));
    let mut a = ro.appender().unwrap();
    assert_eq!(a.last_entry(), to(10, 3));
    let through = a.maybe_append_final(20, 4);
    assert!(through.is_err(), "{through:?}");
    assert_eq!(format!("{through:?}"), direct);
    drop(a);
    assert_eq!(ro.entries(), 1);
    assert_eq!(fs::read(&path).unwrap(), before);
    ro.index_file().close().unwrap();
    assert!(matches!(ro.appender(), Err(IndexError::Closed { .. })));
}

/// Entries appended through an appender survive a reopen, like any append.
#[test]
fn appender_entries_survive_reopen() {
    let dir = tmp();
    let mut index = new_index(dir.path(), 50, 12 * 1000);
    {
        let mut a = index.appender().unwrap();
        for i in 0..999 {
            assert!(a.maybe_append(1_000 + 7 * i, 50 + 3 * i).unwrap());
        }
    }
    let path = index.path();
    index.close().unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), 12 * 999);
    let reopened = TimeIndex::open(&path, 50, 12 * 1000).unwrap();
    assert_eq!(reopened.entries(), 999);
    assert_eq!(
        reopened.lookup(1_000 + 7 * 500 + 3).unwrap(),
        to(1_000 + 7 * 500, 50 + 1500)
    );
    reopened.sanity_check().unwrap();
}
