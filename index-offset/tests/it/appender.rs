//! `OffsetIndex::appender`: a run of appends under one hold of the writer lock gives
//! exactly what the same calls to `OffsetIndex::append` give: the same answers and
//! errors call by call, the same bytes on disk, the same lookups.

use std::fs;

use crate::common::*;
use index_offset::{IndexError, OffsetIndex, Result};
use proptest::prelude::*;

/// An append result with the index's path (`{path:?}`) taken out, so that results of two
/// indexes can be compared.
fn shape(result: &Result<()>, path: &str) -> String {
    format!("{result:?}").replace(path, "<path>")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Random runs (steps that go back, repeat, overflow the relative offset, fill the
    /// index) give the same results through `append` and through one appender.
    #[test]
    fn appender_equals_append(
        base in prop_oneof![Just(0i64), Just(1_000i64), Just(i64::MAX - (1 << 31))],
        max in 8usize..160,
        preload in 0usize..4,
        steps in prop::collection::vec((-3i64..6, any::<u32>(), any::<bool>()), 0..40),
        strategy in 0usize..STRATEGIES.len(),
    ) {
        let dir = tmp();
        let strategy = STRATEGIES[strategy];
        let one = new_index(dir.path(), base, max).with_search_strategy(strategy);
        let mut run = OffsetIndex::open(dir.path().join("run.index"), base, max)
            .unwrap()
            .with_search_strategy(strategy);
        let (p_one, p_run) = (format!("{:?}", one.path()), format!("{:?}", run.path()));
        for i in 0..preload as i64 {
            let a = one.append(base + 2 * i, i as u32);
            let b = run.append(base + 2 * i, i as u32);
            prop_assert_eq!(shape(&a, &p_one), shape(&b, &p_run));
        }
        let mut offset = base + 2 * preload as i64;
        let mut appender = run.appender().unwrap();
        for (step, position, overflow) in steps {
            // Either near the last offset, or just past the relative-offset range.
            let target = if overflow {
                base.saturating_add(i32::MAX as i64).saturating_add(step.max(0))
            } else {
                offset.saturating_add(step)
            };
            let a = one.append(target, position);
            let b = appender.append(target, position);
            prop_assert_eq!(shape(&a, &p_one), shape(&b, &p_run));
            prop_assert_eq!(one.entries(), appender.entries());
            prop_assert_eq!(one.last_offset().unwrap(), appender.last_offset());
            if a.is_ok() {
                offset = target;
            }
        }
        drop(appender);
        prop_assert_eq!(one.entries(), run.entries());
        // Every entry's offset and its neighbours, and the base's.
        let slots = one.index_file().snapshot().unwrap().slots().to_vec();
        let keys = slots.iter().map(|e| e.decode(base).offset).chain([base]);
        for key in keys {
            for target in [key.saturating_sub(1), key, key.saturating_add(1)] {
                prop_assert_eq!(one.lookup(target).unwrap(), run.lookup(target).unwrap());
            }
        }
        let path_one = one.path();
        one.close().unwrap();
        run.close().unwrap();
        prop_assert_eq!(
            fs::read(path_one).unwrap(),
            fs::read(dir.path().join("run.index")).unwrap()
        );
    }
}

/// The appender checks the rules in Kafka's order (full, then monotonicity, then the
/// relative-offset range), names the index in its errors, and writes nothing on an error.
#[test]
fn appender_errors_in_kafka_order() {
    let dir = tmp();
    let mut index = new_index(dir.path(), 100, 24);
    let path = index.path();
    let mut a = index.appender().unwrap();
    assert_eq!(a.last_offset(), 100);
    let past = 100 + (1 << 31);
    assert!(matches!(
        a.append(past, 0),
        Err(IndexError::OffsetOverflow { offset, base_offset: 100, .. }) if offset == past
    ));
    assert!(matches!(
        a.append(99, 0),
        Err(IndexError::OffsetOverflow { offset: 99, .. })
    ));
    a.append(100, 0).unwrap();
    match a.append(100, 1) {
        Err(IndexError::InvalidOffset {
            path: p,
            offset: 100,
            slot: 1,
            last_offset: 100,
        }) => assert_eq!(p, path),
        other => panic!("expected InvalidOffset, got {other:?}"),
    }
    a.append(101, 10).unwrap();
    a.append(105, 20).unwrap();
    assert_eq!(a.entries(), 3);
    // Full is checked first, even for an offset that would also be out of order.
    assert!(matches!(
        a.append(1, 0),
        Err(IndexError::IndexFull { entries: 3, .. })
    ));
    drop(a);
    assert_eq!(index.entries(), 3);
    assert_eq!(index.last_offset().unwrap(), 105);
    assert_eq!(index.lookup(104).unwrap(), op(101, 10));
}

/// An appender on a closed index is `Closed`; on a read-only index (every slot of the
/// mapped length counts as used, as in Kafka) it refuses appends with `IndexFull`, as
/// `append` does, and writes nothing.
#[test]
fn appender_on_closed_and_read_only() {
    let dir = tmp();
    let index = new_index(dir.path(), 0, 80);
    index.append(3, 7).unwrap();
    let path = index.path();
    index.close().unwrap();
    let mut ro = OffsetIndex::open_read_only(&path, 0).unwrap();
    let before = std::fs::read(&path).unwrap();
    let direct = format!("{:?}", ro.append(4, 8));
    let mut a = ro.appender().unwrap();
    assert_eq!(a.last_offset(), 3);
    let through = a.append(4, 8);
    assert!(matches!(
        through,
        Err(IndexError::IndexFull { entries: 1, .. })
    ));
    assert_eq!(format!("{through:?}"), direct);
    drop(a);
    assert_eq!(ro.entries(), 1);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    ro.index_file().close().unwrap();
    assert!(matches!(ro.appender(), Err(IndexError::Closed { .. })));
}

/// Entries appended through an appender survive a reopen, like any append.
#[test]
fn appender_entries_survive_reopen() {
    let dir = tmp();
    let mut index = new_index(dir.path(), 50, 8 * 1000);
    {
        let mut a = index.appender().unwrap();
        for i in 0..1000 {
            a.append(50 + 3 * i, (i * 100) as u32).unwrap();
        }
    }
    let path = index.path();
    index.close().unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), 8000);
    let reopened = OffsetIndex::open(&path, 50, 8 * 1000).unwrap();
    assert_eq!(reopened.entries(), 1000);
    assert_eq!(
        reopened.lookup(50 + 3 * 500 + 1).unwrap(),
        op(50 + 3 * 500, 50_000)
    );
    reopened.sanity_check().unwrap();
}
