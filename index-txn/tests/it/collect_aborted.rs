//! Acceptance case 35, field case B10 (read_committed across segments) and a model-based proptest
//! of `collect_aborted_txns`.

use crate::common::*;
use index_txn::{AbortedTxn, TransactionIndex, TxnIndexSearchResult};
use proptest::prelude::*;

/// Acceptance case 35: the (fetchOffset, upperBound) → (pids, complete) table, verified against Kafka.
#[test]
fn case35_collect_aborted_txns() {
    let (_dir, path) = temp_path();
    let index = index_with(&path, 0, &four());
    #[rustfmt::skip]
    let table: &[(i64, i64, &[i64], bool)] = &[
        (0, 100, &[0, 1, 2, 3], false),
        (0, 32, &[0, 1, 2], true),
        (0, 35, &[0, 1, 2, 3], true),
        (10, 35, &[0, 1, 2, 3], true),
        (11, 35, &[1, 2, 3], true),
        (20, 41, &[2, 3], false),
        (51, 100, &[], false),
        (0, 0, &[], true),
        (0, 1, &[0], true),
        (0, 11, &[0], true),
        (0, 12, &[0, 1], true),
        (16, 18, &[], true),
        (16, 19, &[2], true),
    ];
    for &(fetch, upper, want_pids, want_complete) in table {
        let res = index.collect_aborted_txns(fetch, upper).unwrap();
        assert_eq!(
            (pids(&res.aborted_transactions), res.is_complete),
            (want_pids.to_vec(), want_complete),
            "collect({fetch}, {upper})"
        );
        // Full entries come back, not just pids.
        for t in &res.aborted_transactions {
            assert_eq!(*t, four()[t.producer_id as usize]);
        }
    }
}

/// What the log layer does: collect from the segment holding `fetch` onwards until one
/// index reports `is_complete` (docs/kafka-behaviour.md#txn-written-on-abort).
fn collect_across(segments: &[&TransactionIndex], fetch: i64, upper: i64) -> Vec<AbortedTxn> {
    let mut all = Vec::new();
    for seg in segments {
        let TxnIndexSearchResult {
            aborted_transactions,
            is_complete,
        } = seg.collect_aborted_txns(fetch, upper).unwrap();
        all.extend(aborted_transactions);
        if is_complete {
            break;
        }
    }
    all
}

/// field case B10 (AutoMQ#754): the upper bound must be an absolute offset, and the
/// search must move on to the next segment's index.
#[test]
fn field_b10_read_committed_across_segments() {
    let dir = tempfile::tempdir().unwrap();
    let a = TransactionIndex::open(dir.path().join("00000000000000000000.txnindex"), 0).unwrap();
    let b = index_with(
        &dir.path().join("00000000000000000002.txnindex"),
        2,
        &[AbortedTxn::new(7, 1, 5, 4), AbortedTxn::new(9, 4, 6, 7)],
    );
    b.sanity_check().unwrap();

    // From 0 (segment A, whose index is missing) with upper bound 8.
    assert_eq!(pids(&collect_across(&[&a, &b], 0, 8)), vec![7, 9]);
    let res = a.collect_aborted_txns(0, 8).unwrap();
    assert!(res.aborted_transactions.is_empty() && !res.is_complete);
    // From 2 returning offsets 2..=4: upper bound 5; complete once pid 9's lso 7 >= 5.
    let res = b.collect_aborted_txns(2, 5).unwrap();
    assert_eq!(pids(&res.aborted_transactions), vec![7, 9]);
    assert!(res.is_complete);
    // From 6 with upper bound 8: pid 9 only.
    assert_eq!(pids(&collect_across(&[&b], 6, 8)), vec![9]);
}

/// The reference model: Kafka's rule written as "consider a prefix, then filter".
fn model(entries: &[AbortedTxn], fetch: i64, upper: i64) -> (Vec<AbortedTxn>, bool) {
    let stop = entries.iter().position(|t| t.last_stable_offset >= upper);
    let considered = match stop {
        Some(i) => &entries[..=i],
        None => entries,
    };
    let found = considered
        .iter()
        .filter(|t| t.last_offset >= fetch && t.first_offset < upper)
        .copied()
        .collect();
    (found, stop.is_some())
}

/// Arbitrary entries with strictly increasing last offsets starting at `start`.
fn entries_strategy(start: i64) -> impl Strategy<Value = Vec<AbortedTxn>> {
    prop::collection::vec((0i64..1000, 0i64..60, 1i64..20, -10i64..40), 0..40).prop_map(
        move |raw| {
            let mut last = start - 1;
            raw.into_iter()
                .map(|(pid, back, gap, lso_delta)| {
                    last += gap;
                    AbortedTxn::new(pid, last - back, last, last + lso_delta)
                })
                .collect()
        },
    )
}

proptest! {
    #[test]
    fn collect_matches_model(
        entries in entries_strategy(100),
        queries in prop::collection::vec((50i64..1000, 50i64..1000), 1..20),
    ) {
        let (_dir, path) = temp_path();
        let index = index_with(&path, 100, &entries);
        prop_assert_eq!(index.all_aborted_txns().unwrap(), entries.clone());
        index.sanity_check().unwrap();
        let reopened = TransactionIndex::open(&path, 100).unwrap();
        index.close();
        for (fetch, upper) in queries {
            let (want, complete) = model(&entries, fetch, upper);
            let got = index.collect_aborted_txns(fetch, upper).unwrap();
            prop_assert_eq!(&got.aborted_transactions, &want);
            prop_assert_eq!(got.is_complete, complete);
            // Same answer from a second handle on the file.
            prop_assert_eq!(reopened.collect_aborted_txns(fetch, upper).unwrap(), got);
        }
    }

    #[test]
    fn truncate_to_matches_model(
        entries in entries_strategy(0),
        offset in -5i64..900,
    ) {
        let (_dir, path) = temp_path();
        let index = index_with(&path, 0, &entries);
        index.truncate_to(offset).unwrap();
        let kept: Vec<AbortedTxn> = if entries.iter().any(|t| t.last_offset >= offset) {
            entries.iter().take_while(|t| t.last_offset < offset).copied().collect()
        } else {
            entries.clone()
        };
        prop_assert_eq!(index.all_aborted_txns().unwrap(), kept.clone());
        prop_assert_eq!(index.size_in_bytes().unwrap(), 34 * kept.len() as u64);
        // The last offset after truncation is the last kept entry's.
        let next_last = kept.last().map_or(0, |t| t.last_offset + 1);
        if let Some(last) = kept.last() {
            let r = index.append(&AbortedTxn::new(1, 0, last.last_offset, 0));
            prop_assert!(matches!(r, Err(index_txn::TxnIndexError::NonMonotonic { .. })), "{:?}", r);
        }
        index.append(&AbortedTxn::new(1, 0, next_last, 0)).unwrap();
    }
}
