//! `TimeIndexView` (a time index over bytes in memory) against the mapped `TimeIndex`
//! over the same file: the same lookups for every target, on indexes written by the
//! mapped index's own appends and on arbitrary bytes (refused with a typed error, or
//! answered exactly as the mapped index does).

use std::fs;

use index_time::{IndexError, TimeIndex, TimeIndexView, TimestampOffset};
use proptest::prelude::*;

fn assert_same(mapped: &TimeIndex, view: &TimeIndexView) {
    let entries = mapped.all_entries().unwrap();
    assert_eq!(view.all_entries(), entries);
    assert_eq!(view.last_entry(), mapped.last_entry().unwrap());
    let mut targets = vec![i64::MIN, i64::MAX, -1, 0];
    for e in &entries {
        targets.extend([
            e.timestamp.saturating_sub(1),
            e.timestamp,
            e.timestamp.saturating_add(1),
        ]);
    }
    for t in targets {
        assert_eq!(view.lookup(t), mapped.lookup(t).unwrap(), "lookup({t})");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Indexes written by `TimeIndex::maybe_append` and closed: the view over the bytes,
    /// and over the file opened by path, answer as the mapped index does.
    #[test]
    fn view_answers_as_the_mapped_index(
        base in 0i64..5_000_000_000,
        steps in proptest::collection::vec((-5i64..1000, 0i64..50), 0..2000),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.timeindex");
        let index = TimeIndex::open(&path, base, 1 << 20).unwrap();
        let (mut ts, mut off) = (1_700_000_000_000i64, base);
        for (dt, doff) in steps {
            ts += dt; // some steps go back: maybe_append skips or refuses them
            off += doff;
            let _ = index.maybe_append(ts, off);
        }
        index.close().unwrap();
        let mapped = TimeIndex::open_read_only(&path, base).unwrap();
        assert_same(&mapped, &TimeIndexView::from_bytes(base, fs::read(&path).unwrap()).unwrap());
        assert_same(&mapped, &TimeIndexView::open(&path, base).unwrap());
    }

    /// Arbitrary bytes: refused with `CorruptIndex`, or answered as the mapped index over
    /// the same file answers; never a panic.
    #[test]
    fn hostile_bytes_are_refused_or_answered_alike(
        base in 0i64..1000,
        bytes in proptest::collection::vec(any::<u8>(), 0..240),
        sorted in any::<bool>(),
    ) {
        let mut bytes = bytes;
        if sorted {
            let n = bytes.len() / 12;
            let mut e: Vec<[u8; 12]> = (0..n).map(|i| bytes[i * 12..i * 12 + 12].try_into().unwrap()).collect();
            e.sort();
            for (i, k) in e.iter().enumerate() { bytes[i * 12..i * 12 + 12].copy_from_slice(k); }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.timeindex");
        fs::write(&path, &bytes).unwrap();
        match TimeIndexView::from_bytes(base, bytes.clone()) {
            Err(IndexError::CorruptIndex { .. }) => {}
            Err(e) => prop_assert!(false, "unexpected error {e}"),
            Ok(view) => {
                prop_assert!(bytes.len() % 12 == 0);
                assert_same(&TimeIndex::open_read_only(&path, base).unwrap(), &view);
            }
        }
    }
}

#[test]
fn hostile_shapes_get_typed_errors() {
    let entry = |ts: i64, rel: i32| {
        let mut b = ts.to_be_bytes().to_vec();
        b.extend(rel.to_be_bytes());
        b
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("partial entry", vec![0; 8]),
        ("negative relative offset", entry(5, -1)),
        ("timestamps equal", [entry(5, 0), entry(5, 1)].concat()),
        ("timestamps decreasing", [entry(5, 0), entry(4, 1)].concat()),
        ("offsets decreasing", [entry(5, 2), entry(6, 1)].concat()),
    ];
    for (what, bytes) in cases {
        assert!(
            matches!(
                TimeIndexView::from_bytes(100, bytes),
                Err(IndexError::CorruptIndex { .. })
            ),
            "{what}"
        );
    }
    let empty = TimeIndexView::from_bytes(100, Vec::new()).unwrap();
    assert_eq!(
        empty.lookup(150),
        TimestampOffset {
            timestamp: -1,
            offset: 100
        }
    );
}
