//! Bad input for the time index: truncated files, lengths not a multiple of 12,
//! non-monotonic appends, offsets more than 2^31 - 1 past the base, arbitrary bytes.
//! Typed errors or defined answers, never a panic.

use std::fs;

use crate::common::*;
use index_time::{IndexError, TimeIndex, TimestampOffset};
use proptest::prelude::*;

#[test]
fn truncated_real_file() {
    let src = fs::read(field_file!(
        "nikhildighe-__consumer_offsets-12/00000000000000000000.timeindex",
    ))
    .unwrap();
    let dir = tmp();
    let path = dir.path().join(timeindex_name(0));
    fs::write(&path, &src[..30]).unwrap(); // 2 whole slots + 6 bytes
    let index = TimeIndex::open_read_only(&path, 0).unwrap();
    assert_eq!((index.entries(), index.length()), (2, 30));
    assert_eq!(
        index.all_entries().unwrap(),
        vec![to(1_721_325_721_277, 60), to(1_721_325_771_345, 120)]
    );
    assert!(matches!(
        index.sanity_check(),
        Err(IndexError::CorruptIndex { .. })
    ));
    assert!(matches!(
        index.entry(2),
        Err(IndexError::SlotOutOfRange {
            slot: 2,
            entries: 2,
            ..
        })
    ));
    fs::write(&path, &src[..11]).unwrap();
    let index = TimeIndex::open_read_only(&path, 0).unwrap();
    assert_eq!(index.entries(), 0);
    assert_eq!(index.lookup(i64::MAX).unwrap(), to(-1, 0));
    assert!(matches!(
        index.sanity_check(),
        Err(index_core::IndexError::CorruptIndex { .. })
    ));
}

#[test]
fn lengths_not_multiple_of_entry_size() {
    let dir = tmp();
    let full = encode_timeindex(&[(10, 1), (20, 2), (30, 3)]);
    for len in 1..36usize {
        let path = dir.path().join(format!("{len}.timeindex"));
        fs::write(&path, &full[..len]).unwrap();
        let index = TimeIndex::open(&path, 100, 1024).unwrap();
        assert_eq!(index.entries(), len / 12);
        assert_eq!(index.sanity_check().is_ok(), len % 12 == 0, "len {len}");
        index.resize(120).unwrap();
        assert!(index.maybe_append(1000, 200).unwrap());
        assert_eq!(index.entry(len / 12).unwrap(), to(1000, 200));
    }
}

#[test]
fn non_monotonic_appends_on_real_index() {
    let src = field_file!("rjmfernandes-_confluent-monitoring-0/00000000000000000000.timeindex");
    let dir = tmp();
    let path = dir.path().join(timeindex_name(0));
    fs::copy(&src, &path).unwrap();
    let index = TimeIndex::open(&path, 0, 4096).unwrap();
    index.resize(4096).unwrap();
    let last = index.last_entry().unwrap();
    let n = index.entries();
    assert_eq!(n, 109);
    assert!(matches!(
        index.maybe_append(last.timestamp + 1, last.offset - 1),
        Err(IndexError::InvalidOffset { slot, .. }) if slot == n
    ));
    assert!(matches!(
        index.maybe_append(last.timestamp - 1, last.offset + 1),
        Err(IndexError::InvalidTimestamp { slot, .. }) if slot == n
    ));
    assert!(!index.maybe_append(last.timestamp, last.offset + 1).unwrap());
    assert_eq!(index.entries(), n);
}

#[test]
fn offset_more_than_i32_max_past_base() {
    let dir = tmp();
    let base = 7_000_000_000i64;
    let index = new_index(dir.path(), base, 120);
    assert!(matches!(
        index.maybe_append(1, base + (1i64 << 31)),
        Err(IndexError::OffsetOverflow { offset, base_offset, .. })
            if offset == base + (1i64 << 31) && base_offset == base
    ));
    assert_eq!(index.entries(), 0);
    assert!(index.maybe_append(1, base + i32::MAX as i64).unwrap());
    assert_eq!(index.last_entry().unwrap(), to(1, base + i32::MAX as i64));
}

fn exercise(index: &TimeIndex, targets: &[i64]) {
    let n = index.entries();
    let _ = index.sanity_check();
    let all = index.all_entries().unwrap();
    assert_eq!(all.len(), n);
    let _ = index.last_entry().unwrap();
    for (i, e) in all.iter().enumerate() {
        assert_eq!(index.entry(i).unwrap(), *e);
    }
    assert!(matches!(
        index.entry(n),
        Err(IndexError::SlotOutOfRange { .. })
    ));
    for &t in targets {
        let got = index.lookup(t).unwrap();
        assert!(
            all.contains(&got)
                || got
                    == TimestampOffset {
                        timestamp: -1,
                        offset: index.base_offset()
                    }
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Arbitrary bytes as a `.timeindex`, arbitrary base offset: open, lookup, entry,
    /// sanity_check, truncate_to, resize and maybe_append never panic.
    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..250),
        base in prop_oneof![0i64..1000, any::<i64>(), (i64::MAX - 1000)..=i64::MAX],
        targets in proptest::collection::vec(any::<i64>(), 0..8),
    ) {
        let dir = tmp();
        let path = dir.path().join("x.timeindex");
        fs::write(&path, &bytes).unwrap();
        let ro = TimeIndex::open_read_only(&path, base).unwrap();
        prop_assert_eq!(ro.entries(), bytes.len() / 12);
        exercise(&ro, &targets);
        drop(ro);
        let rw = TimeIndex::open(&path, base, 1024).unwrap();
        exercise(&rw, &targets);
        for &t in &targets {
            rw.truncate_to(t).unwrap();
        }
        rw.resize(bytes.len() + 120).unwrap();
        for &t in &targets {
            let _ = rw.maybe_append(t, t);
            let _ = rw.maybe_append_final(t, t);
        }
        exercise(&rw, &targets);
        rw.close().unwrap();
    }
}
