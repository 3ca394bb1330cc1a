//! (d) The KAFKA-6432 scenario: 13 pages grown into a 14th.

use bench_harness::scenario::run_kafka_6432;

#[test]
fn binary_moves_to_cold_pages_when_the_index_grows_warm_cold_stays_at_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let s = run_kafka_6432(dir.path(), 4096, 8192).unwrap();
    assert_eq!((s.pages_before, s.pages_after), (13, 14));
    assert_eq!((s.entries_before, s.entries_after), (13 * 512, 14 * 512));

    let b = s.get("binary").unwrap();
    // Slot 0 is compared first, then the bisection path through the middle of the file.
    assert_eq!(b.pages_before, [0, 6, 9, 11, 12]);
    assert_eq!(b.pages_after, [0, 7, 10, 12, 13]);
    assert_eq!(b.new_pages, [7, 10, 13]);
    // At least one page not touched before the growth, other than the appender's page.
    assert!(!b.cold_pages.is_empty());
    assert_eq!(b.cold_pages, [7, 10]);
    assert!(
        b.cold_pages_during_growth >= 2,
        "{}",
        b.cold_pages_during_growth
    );

    let wc = s.get("warm-cold").unwrap();
    // Only pages among the last 3 of the index, in both states.
    assert!(
        wc.pages_before.iter().all(|&p| (10..=12).contains(&p)),
        "{:?}",
        wc.pages_before
    );
    assert!(
        wc.pages_after.iter().all(|&p| (11..=13).contains(&p)),
        "{:?}",
        wc.pages_after
    );
    assert!(wc.cold_pages.is_empty());
    assert_eq!(wc.cold_pages_during_growth, 0);

    // The page directory reads only the last page, in both states.
    let pd = s.get("page-directory").unwrap();
    assert_eq!(pd.pages_before, [12]);
    assert_eq!(pd.pages_after, [13]);
    assert_eq!(pd.new_pages, [13]); // the appender's page
    assert!(pd.cold_pages.is_empty());
    assert_eq!(pd.cold_pages_during_growth, 0);
}

#[test]
fn page_size_must_be_a_power_of_two() {
    let dir = tempfile::tempdir().unwrap();
    assert!(run_kafka_6432(dir.path(), 4100, 8192).is_err());
    assert!(run_kafka_6432(dir.path(), 4104, 8192).is_err());
    assert!(run_kafka_6432(dir.path(), 8192, 8192).is_ok());
}
