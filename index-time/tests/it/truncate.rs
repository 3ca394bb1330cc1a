//! Acceptance case 22 and the duplicate-offset quirk of docs/kafka-behaviour.md#time-truncate: truncate_to searches by offset
//! (the entry value).

use std::fs;

use crate::common::*;
use index_time::SearchStrategy;

/// Acceptance case 22 (TimeIndexTest.testTruncate).
#[test]
fn case22_truncation() {
    for strategy in STRATEGIES {
        let dir = tmp();
        let path = dir.path().join(timeindex_name(45));
        let index = new_index(dir.path(), 45, 360).with_search_strategy(strategy);
        let fill = || {
            for i in 1..30 {
                assert!(index.maybe_append(10 * i, 45 + 10 * i).unwrap());
            }
        };
        fill();
        index.truncate().unwrap();
        assert_eq!(index.entries(), 0);
        assert_eq!(index.last_entry().unwrap(), to(-1, 45));
        fill();
        assert_eq!(index.entries(), 29);
        index.truncate_to(55).unwrap();
        assert_eq!(
            index.entries(),
            0,
            "{strategy:?}: first entry's offset is exactly 55"
        );
        assert_eq!(index.last_entry().unwrap(), to(-1, 45));
        fill();
        index.truncate_to(100).unwrap(); // between 95 and 105: keeps 10..=50
        assert_eq!(index.entries(), 5, "{strategy:?}");
        assert_eq!(index.last_entry().unwrap(), to(50, 95));
        index.truncate_to(95).unwrap(); // exactly 95: drops it
        assert_eq!(index.entries(), 4);
        index.truncate_to(10_000).unwrap(); // past the end: no-op
        assert_eq!(index.entries(), 4);
        assert_eq!(index.lookup(1_000).unwrap(), to(40, 85));
        assert!(index.maybe_append(41, 86).unwrap());
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            360,
            "file length unchanged"
        );
    }
}

/// Spec docs/kafka-behaviour.md#time-truncate (verified in Kafka): entries [(10,48),(20,50),(30,50),(40,50)],
/// truncate_to(50) keeps 2 entries, because the exact-match bisection hits the middle
/// duplicate, so an entry with offset 50 survives. Kafka's warm/cold (and the textbook
/// binary search) give exactly that.
#[test]
fn duplicate_offsets_truncate_quirk() {
    for strategy in [SearchStrategy::default(), SearchStrategy::Binary] {
        let dir = tmp();
        let index = new_index(dir.path(), 45, 360).with_search_strategy(strategy);
        for (t, o) in [(10, 48), (20, 50), (30, 50), (40, 50)] {
            assert!(index.maybe_append(t, o).unwrap());
        }
        index.truncate_to(50).unwrap();
        assert_eq!(index.entries(), 2, "{strategy:?}");
        assert_eq!(index.all_entries().unwrap(), vec![to(10, 48), to(20, 50)]);
    }
    // Whatever the strategy, the kept count is one of the slots holding offset 50
    // (slots 1..=3), never fewer entries than those below 50.
    for strategy in STRATEGIES {
        let dir = tmp();
        let index = new_index(dir.path(), 45, 360).with_search_strategy(strategy);
        for (t, o) in [(10, 48), (20, 50), (30, 50), (40, 50)] {
            index.maybe_append(t, o).unwrap();
        }
        index.truncate_to(50).unwrap();
        assert!((1..=3).contains(&index.entries()), "{strategy:?}");
    }
}
