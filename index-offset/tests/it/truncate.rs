//! Acceptance case 14: truncate_to / truncate sequences (OffsetIndexTest.truncate).

use std::fs;

use crate::common::*;

#[test]
fn case14_truncate_to_sequence() {
    for strategy in STRATEGIES {
        let dir = tmp();
        let path = dir.path().join(index_name(0));
        let index = new_index(dir.path(), 0, 80).with_search_strategy(strategy);
        index.truncate().unwrap();
        for i in 1..10 {
            index.append(i, i as u32).unwrap();
        }
        assert_eq!(index.entries(), 9);

        index.truncate_to(12).unwrap();
        assert_eq!(index.lookup(10).unwrap(), op(9, 9));
        assert_eq!(index.last_offset().unwrap(), 9);
        assert_eq!(index.entries(), 9, "truncating past the end is a no-op");

        index.append(10, 10).unwrap();
        index.truncate_to(10).unwrap();
        assert_eq!(index.lookup(10).unwrap(), op(9, 9));
        assert_eq!(index.last_offset().unwrap(), 9);
        assert_eq!(index.entries(), 9);

        index.append(10, 10).unwrap();
        index.truncate_to(9).unwrap();
        assert_eq!(index.lookup(10).unwrap(), op(8, 8));
        assert_eq!(index.last_offset().unwrap(), 8);
        assert_eq!(index.entries(), 8);

        index.append(9, 9).unwrap();
        index.truncate_to(5).unwrap();
        assert_eq!(index.lookup(10).unwrap(), op(4, 4));
        assert_eq!(index.last_offset().unwrap(), 4);
        assert_eq!(index.entries(), 4);

        index.append(5, 5).unwrap();
        assert_eq!(index.entries(), 5);
        assert_eq!(fs::metadata(&path).unwrap().len(), 80, "length unchanged");
        assert_eq!(index.length(), 80);

        index.truncate().unwrap();
        assert_eq!(index.entries(), 0);
        assert_eq!(index.last_offset().unwrap(), 0);
        assert_eq!(index.lookup(10).unwrap(), op(0, 0));
        assert_eq!(fs::metadata(&path).unwrap().len(), 80);
        index.append(3, 3).unwrap();
        assert_eq!(index.all_entries().unwrap(), vec![op(3, 3)]);
    }
}

/// Truncating between entries, at the first entry and below it.
#[test]
fn truncate_to_between_below_and_at_first() {
    for strategy in STRATEGIES {
        let dir = tmp();
        let index = new_index(dir.path(), 100, 800).with_search_strategy(strategy);
        for i in 0..20 {
            index.append(110 + 10 * i, i as u32 * 100).unwrap();
        }
        // Between 150 and 160: keeps 110..=150 (5 entries).
        index.truncate_to(155).unwrap();
        assert_eq!(index.entries(), 5);
        assert_eq!(index.last_entry().unwrap(), op(150, 400));
        // Exactly the first entry: removes everything.
        index.truncate_to(110).unwrap();
        assert_eq!(index.entries(), 0);
        assert_eq!(index.last_entry().unwrap(), op(100, 0));
        for i in 0..20 {
            index.append(110 + 10 * i, i as u32 * 100).unwrap();
        }
        // Below the first entry (even below the base): removes everything.
        index.truncate_to(50).unwrap();
        assert_eq!(index.entries(), 0);
        index.append(100, 0).unwrap();
        index.truncate_to(i64::MAX).unwrap();
        assert_eq!(index.entries(), 1);
        index.truncate_to(i64::MIN).unwrap();
        assert_eq!(index.entries(), 0);
    }
}
