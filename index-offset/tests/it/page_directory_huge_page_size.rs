//! Regression: a page-directory strategy with a page size above the largest power of two
//! of `usize` panicked ("attempt to add with overflow" in `next_power_of_two`) when the
//! directory was built. It is now clamped to the largest power of two, and lookups give
//! the same answers as every other strategy.

use index_core::SearchStrategy;
use index_offset::{OffsetIndex, OffsetPosition};

#[test]
fn page_directory_with_a_page_size_near_usize_max_does_not_panic() {
    for page_size in [usize::MAX, usize::MAX / 2 + 2, 1usize << (usize::BITS - 1)] {
        let dir = tempfile::tempdir().unwrap();
        let index =
            OffsetIndex::open(dir.path().join("00000000000000000100.index"), 100, 4096).unwrap();
        index.append(110, 4170).unwrap();
        index.append(120, 8000).unwrap();
        let index = index.with_search_strategy(SearchStrategy::PageDirectory { page_size });
        assert_eq!(
            index.lookup(115).unwrap(),
            OffsetPosition {
                offset: 110,
                position: 4170
            }
        );
        // Appends keep the directory up to date.
        index.append(130, 9000).unwrap();
        assert_eq!(index.lookup(i64::MAX).unwrap().offset, 130);
        assert_eq!(index.lookup(99).unwrap().offset, 100);
        // Reopening an existing file with that strategy builds the directory from the slots.
        let path = index.path();
        index.close().unwrap();
        let index = OffsetIndex::open_read_only(&path, 100)
            .unwrap()
            .with_search_strategy(SearchStrategy::PageDirectory { page_size });
        assert_eq!(index.lookup(125).unwrap().offset, 120);
    }
}
