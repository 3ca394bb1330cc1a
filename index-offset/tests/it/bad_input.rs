//! Bad input: truncated files, lengths that are not a multiple of 8, non-monotonic
//! appends, offsets more than 2^31 - 1 past the base, and arbitrary bytes. Every case
//! ends in a typed error or a defined answer, never a panic.

use std::fs;

use crate::common::*;
use index_offset::{IndexError, OffsetIndex, OffsetPosition};
use proptest::prelude::*;

/// A real fixture cut in the middle of its second slot: one whole slot remains.
#[test]
fn truncated_real_file() {
    let src = fs::read(field_file!(
        "nikhildighe-__consumer_offsets-12/00000000000000000000.index",
    ))
    .unwrap();
    let dir = tmp();
    let path = dir.path().join(index_name(0));
    fs::write(&path, &src[..13]).unwrap();
    let index = OffsetIndex::open_read_only(&path, 0).unwrap();
    assert_eq!(
        (index.entries(), index.max_entries(), index.length()),
        (1, 1, 13)
    );
    assert_eq!(index.all_entries().unwrap(), vec![op(60, 4388)]);
    assert_eq!(index.lookup(1000).unwrap(), op(60, 4388));
    assert!(matches!(
        index.entry(1),
        Err(IndexError::SlotOutOfRange {
            slot: 1,
            entries: 1,
            ..
        })
    ));
    assert!(matches!(
        index.sanity_check(),
        Err(IndexError::CorruptIndex { .. })
    ));

    // Less than one slot: no entries, still corrupt by length.
    fs::write(&path, &src[..5]).unwrap();
    let index = OffsetIndex::open_read_only(&path, 0).unwrap();
    assert_eq!((index.entries(), index.length()), (0, 5));
    assert_eq!(index.lookup(1000).unwrap(), op(0, 0));
    assert_eq!(index.last_offset().unwrap(), 0);
    assert!(matches!(
        index.sanity_check(),
        Err(IndexError::CorruptIndex { .. })
    ));
}

/// Lengths 1..=23 that are not multiples of 8: entries = floor(len / 8), sanity fails.
#[test]
fn lengths_not_multiple_of_entry_size() {
    let dir = tmp();
    let full = encode_index(&[(1, 10), (2, 20), (3, 30)]);
    for len in 1..24usize {
        let path = dir.path().join(format!("{len}.index"));
        fs::write(&path, &full[..len]).unwrap();
        let index = OffsetIndex::open(&path, 100, 1024).unwrap();
        assert_eq!(index.entries(), len / 8, "len {len}");
        assert_eq!(index.max_entries(), len / 8);
        let sanity = index.sanity_check();
        if len % 8 == 0 {
            sanity.unwrap();
        } else {
            assert!(
                matches!(sanity, Err(IndexError::CorruptIndex { .. })),
                "len {len}"
            );
        }
        // Growing it makes it appendable again; the partial slot is overwritten.
        index.resize(64).unwrap();
        index.append(105, 50).unwrap();
        assert_eq!(index.entry(len / 8).unwrap(), op(105, 50));
    }
}

/// Non-monotonic appends after reopening a real index.
#[test]
fn non_monotonic_append_on_real_index() {
    let src = field_file!("rjmfernandes-_confluent-monitoring-0/00000000000000000000.index");
    let dir = tmp();
    let path = dir.path().join(index_name(0));
    fs::copy(&src, &path).unwrap();
    let index = OffsetIndex::open(&path, 0, 4096).unwrap();
    index.resize(4096).unwrap();
    let last = index.last_offset().unwrap();
    let n = index.entries();
    assert_eq!(n, 109);
    for bad in [last, last - 1, 0, -5] {
        match index.append(bad, 1) {
            Err(IndexError::InvalidOffset {
                offset,
                slot,
                last_offset,
                ..
            }) => assert_eq!((offset, slot, last_offset), (bad, n, last)),
            other => panic!("{bad}: expected InvalidOffset, got {other:?}"),
        }
    }
    assert_eq!(index.entries(), n);
}

/// base + 2^31 - 1 is the largest representable offset; one more overflows.
#[test]
fn offset_more_than_i32_max_past_base() {
    let dir = tmp();
    let base = 5_000_000_000i64;
    let index = new_index(dir.path(), base, 64);
    assert!(matches!(
        index.append(base + (1i64 << 31), 0),
        Err(IndexError::OffsetOverflow { offset, base_offset, .. })
            if offset == base + (1i64 << 31) && base_offset == base
    ));
    assert!(matches!(
        index.append(base - 1, 0),
        Err(IndexError::OffsetOverflow { .. })
    ));
    assert_eq!(index.entries(), 0);
    index.append(base + i32::MAX as i64, 9).unwrap();
    assert_eq!(
        index.last_entry().unwrap(),
        OffsetPosition {
            offset: base + i32::MAX as i64,
            position: 9
        }
    );
}

/// Opening a path whose parent does not exist is an I/O error.
#[test]
fn missing_parent_directory_is_io_error() {
    let dir = tmp();
    let p = dir.path().join("no/such/dir").join(index_name(0));
    assert!(matches!(
        OffsetIndex::open(&p, 0, 80),
        Err(IndexError::Io { .. })
    ));
}

fn exercise(index: &OffsetIndex, targets: &[i64]) {
    let n = index.entries();
    let _ = index.sanity_check();
    let _ = index.last_entry().unwrap();
    let all = index.all_entries().unwrap();
    assert_eq!(all.len(), n);
    for (i, e) in all.iter().enumerate() {
        assert_eq!(index.entry(i).unwrap(), *e);
    }
    assert!(matches!(
        index.entry(n),
        Err(IndexError::SlotOutOfRange { .. })
    ));
    for &t in targets {
        let got = index.lookup(t).unwrap();
        // Whatever the data, the answer is a stored entry or the (base, 0) default.
        assert!(
            all.contains(&got)
                || got
                    == OffsetPosition {
                        offset: index.base_offset(),
                        position: 0
                    }
        );
        let _ = index
            .fetch_upper_bound_offset(got, (t & 0xffff) as i32)
            .unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Arbitrary bytes as an `.index` file, with an arbitrary base offset (including
    /// ones where base + relative offset leaves the i64 range): open, lookup, entry,
    /// sanity_check, fetch_upper_bound, truncate_to, resize and append never panic.
    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
        base in prop_oneof![0i64..1000, any::<i64>(), (i64::MAX - 1000)..=i64::MAX],
        targets in proptest::collection::vec(any::<i64>(), 0..8),
    ) {
        let dir = tmp();
        let path = dir.path().join("x.index");
        fs::write(&path, &bytes).unwrap();
        let ro = OffsetIndex::open_read_only(&path, base).unwrap();
        prop_assert_eq!(ro.entries(), bytes.len() / 8);
        exercise(&ro, &targets);
        drop(ro);
        let rw = OffsetIndex::open(&path, base, 1024).unwrap();
        exercise(&rw, &targets);
        for &t in &targets {
            rw.truncate_to(t).unwrap();
            prop_assert!(rw.entries() <= bytes.len() / 8);
        }
        rw.resize(bytes.len() + 64).unwrap();
        for &t in &targets {
            let _ = rw.append(t, 1);
        }
        exercise(&rw, &targets);
        rw.close().unwrap();
    }
}
