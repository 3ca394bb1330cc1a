//! Acceptance case 10: fetch_upper_bound_offset, a smallest-upper-bound search by position, with
//! Kafka's slot-0 quirk.

use crate::common::*;
use index_offset::OffsetPosition;

fn fub_cases() -> Vec<((i64, u32), i32, Option<OffsetPosition>)> {
    vec![
        ((45, 0), 5, Some(op(46, 10))),
        ((45, 0), 10, Some(op(46, 10))),
        ((45, 0), 23, Some(op(47, 23))),
        ((45, 0), 22, Some(op(47, 23))),
        ((46, 10), 24, Some(op(48, 37))),
        ((48, 37), 1, None),
        ((45, 0), 200, None),
        ((46, 10), 200, None),
        ((45, 0), 37, Some(op(48, 37))),
        ((45, 0), 36, Some(op(48, 37))),
        // Kafka's quirk: a target exactly equal to slot 0's position yields slot 1.
        ((45, 0), 0, Some(op(46, 10))),
        // A target below slot 0 yields slot 0.
        ((45, 0), -1, Some(op(45, 0))),
    ]
}

/// Acceptance case 10 (OffsetIndexTest.testFetchUpperBoundOffset), for every strategy.
#[test]
fn case10_fetch_upper_bound_offset() {
    for strategy in STRATEGIES {
        let dir = tmp();
        let index = new_index(dir.path(), 45, 240).with_search_strategy(strategy);
        assert_eq!(index.fetch_upper_bound_offset(op(45, 0), 5).unwrap(), None);
        for (o, p) in [(45, 0), (46, 10), (47, 23), (48, 37)] {
            index.append(o, p).unwrap();
        }
        for ((o, p), size, want) in fub_cases() {
            assert_eq!(
                index.fetch_upper_bound_offset(op(o, p), size).unwrap(),
                want,
                "{strategy:?} fub(({o},{p}), {size})"
            );
        }
    }
}

/// The slot-0 quirk on a one-entry index: equality gives none, below gives slot 0.
#[test]
fn fetch_upper_bound_single_entry_quirk() {
    for strategy in STRATEGIES {
        let dir = tmp();
        let index = new_index(dir.path(), 0, 80).with_search_strategy(strategy);
        index.append(5, 100).unwrap();
        assert_eq!(index.fetch_upper_bound_offset(op(0, 0), 100).unwrap(), None);
        assert_eq!(
            index.fetch_upper_bound_offset(op(0, 0), 99).unwrap(),
            Some(op(5, 100))
        );
        assert_eq!(index.fetch_upper_bound_offset(op(0, 0), 101).unwrap(), None);
    }
}
