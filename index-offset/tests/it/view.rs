//! `OffsetIndexView` (an offset index over bytes in memory) against the mapped
//! `OffsetIndex` over the same file: the same lookups and upper bounds for every target,
//! on indexes written by the mapped index's own appends and on arbitrary bytes (which the
//! view either refuses with a typed error or answers exactly as the mapped index does).

use std::fs;

use index_offset::{IndexError, OffsetIndex, OffsetIndexView, OffsetPosition};
use proptest::prelude::*;

/// Targets around every entry's offset and position, plus the extremes.
fn offset_targets(entries: &[OffsetPosition], base: i64) -> Vec<i64> {
    let mut t = vec![i64::MIN, i64::MAX, base - 1, base, base + 1];
    for e in entries {
        t.extend([e.offset - 1, e.offset, e.offset + 1]);
    }
    t
}

fn assert_same(mapped: &OffsetIndex, view: &OffsetIndexView) {
    let entries = mapped.all_entries().unwrap();
    assert_eq!(view.all_entries(), entries);
    assert_eq!(view.last_entry(), mapped.last_entry().unwrap());
    for t in offset_targets(&entries, mapped.base_offset()) {
        assert_eq!(view.lookup(t), mapped.lookup(t).unwrap(), "lookup({t})");
    }
    let mut starts = vec![OffsetPosition {
        offset: 0,
        position: 0,
    }];
    starts.extend(entries.iter().copied());
    for s in starts {
        for size in [0, 1, 7, 100, 4096, i32::MAX] {
            assert_eq!(
                view.fetch_upper_bound_offset(s, size),
                mapped.fetch_upper_bound_offset(s, size).unwrap(),
                "fetch_upper_bound_offset({s:?}, {size})"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Indexes written by `OffsetIndex::append` and closed (trimmed, as an uploaded index
    /// is): the view over the file's bytes, and over the file opened by path, answer as
    /// the mapped index does.
    #[test]
    fn view_answers_as_the_mapped_index(
        base in 0i64..5_000_000_000,
        gaps in proptest::collection::vec((1i64..1000, 0u32..5000), 0..2500),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.index");
        let index = OffsetIndex::open(&path, base, 1 << 20).unwrap();
        let (mut off, mut pos) = (base, 0u32);
        for (i, (g, p)) in gaps.iter().enumerate() {
            if i > 0 { off += g; }
            pos += p;
            index.append(off, pos).unwrap();
        }
        index.close().unwrap();
        let mapped = OffsetIndex::open_read_only(&path, base).unwrap();
        let bytes = fs::read(&path).unwrap();
        assert_same(&mapped, &OffsetIndexView::from_bytes(base, bytes).unwrap());
        let by_path = OffsetIndexView::open(&path, base).unwrap();
        prop_assert_eq!(by_path.size_in_bytes(), gaps.len() * 8);
        assert_same(&mapped, &by_path);
    }

    /// Arbitrary bytes: the view refuses them with `CorruptIndex` or answers as the mapped
    /// index over the same file does; it never panics.
    #[test]
    fn hostile_bytes_are_refused_or_answered_alike(
        base in 0i64..1000,
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        sorted in any::<bool>(),
    ) {
        let mut bytes = bytes;
        if sorted {
            // Mostly monotonic entries, so that accepted views are exercised too.
            let n = bytes.len() / 8;
            let mut keys: Vec<[u8; 8]> = (0..n).map(|i| bytes[i * 8..i * 8 + 8].try_into().unwrap()).collect();
            keys.sort();
            for (i, k) in keys.iter().enumerate() { bytes[i * 8..i * 8 + 8].copy_from_slice(k); }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.index");
        fs::write(&path, &bytes).unwrap();
        match OffsetIndexView::from_bytes(base, bytes.clone()) {
            Err(IndexError::CorruptIndex { .. }) => {}
            Err(e) => prop_assert!(false, "unexpected error {e}"),
            Ok(view) => {
                prop_assert!(bytes.len() % 8 == 0);
                let mapped = OffsetIndex::open_read_only(&path, base).unwrap();
                assert_same(&mapped, &view);
            }
        }
    }
}

#[test]
fn hostile_shapes_get_typed_errors() {
    let entry = |rel: i32, pos: u32| {
        let mut b = rel.to_be_bytes().to_vec();
        b.extend(pos.to_be_bytes());
        b
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("partial entry", vec![0; 12]),
        ("negative relative offset", entry(-1, 0)),
        (
            "offsets not increasing",
            [entry(5, 0), entry(5, 10)].concat(),
        ),
        ("offsets decreasing", [entry(5, 0), entry(4, 10)].concat()),
        ("positions decreasing", [entry(1, 10), entry(2, 9)].concat()),
    ];
    for (what, bytes) in cases {
        match OffsetIndexView::from_bytes(100, bytes) {
            Err(IndexError::CorruptIndex { reason, .. }) => assert!(!reason.is_empty(), "{what}"),
            other => panic!("{what}: {other:?}"),
        }
    }
    let empty = OffsetIndexView::from_bytes(100, Vec::new()).unwrap();
    assert_eq!(
        empty.lookup(150),
        OffsetPosition {
            offset: 100,
            position: 0
        }
    );
    assert!(matches!(
        OffsetIndexView::open("/nonexistent/x.index", 0),
        Err(IndexError::Io { .. })
    ));
}
