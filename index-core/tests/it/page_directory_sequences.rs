//! Scenario: the page directory (fences, fence entries and block keys) follows any
//! sequence of appends, truncations, re-appends with other keys, resizes (each builds a
//! new directory from the old one), reopens (everything lazy again) and lookups, and
//! every page-directory answer equals a plain binary search over the same slots.
//!
//! The keys are increasing with gaps drawn from a mix that includes gaps past `u32::MAX`
//! (pages whose block keys cannot be kept), on 8- and 12-byte entries and several page
//! sizes, so every path of `index_core::directory` runs: the writer's block stores and
//! its fills of pages from before the directory, readers' lazy fills, unusable pages,
//! and the tail pages bisected whole.

use crate::common::{e12, e8};
use index_core::codec::IndexEntry;
use index_core::{Bound, IndexFile, NoProbe, OpenMode, SearchField, SearchStrategy};
use proptest::prelude::*;

/// One step of a sequence.
#[derive(Clone, Debug)]
enum Op {
    /// Append this many entries, each key above the last by the next gap.
    Append(usize),
    /// Truncate to this share (per mille) of the entries.
    Truncate(u16),
    /// Resize the file to the used bytes plus this many slots (0: trim to the used slots).
    Resize(usize),
    /// Close and reopen the file with the page directory installed lazily.
    Reopen,
    /// Look up every key, and the keys minus and plus one.
    Lookups,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1usize..700).prop_map(Op::Append),
        2 => (0u16..=1000).prop_map(Op::Truncate),
        1 => (0usize..1200).prop_map(Op::Resize),
        1 => Just(Op::Reopen),
        2 => Just(Op::Lookups),
    ]
}

/// Runs `ops` on an index of `E` entries made by `make(key, value)`, with the page
/// directory of `page_size`, checking the answers against a binary search over the keys
/// appended so far (the model).
fn run<E: IndexEntry>(
    make: impl Fn(i64, i64) -> E,
    max_gap_bits: u32,
    page_size: usize,
    gaps: &[u64],
    ops: &[Op],
) {
    let dir = crate::common::tmp();
    let path = dir.path().join("0.idx");
    let pd = SearchStrategy::PageDirectory { page_size };
    let capacity = 4000;
    let open = |mode| {
        IndexFile::<E>::open(&path, 0, Some(capacity * E::SIZE), mode)
            .unwrap()
            .with_search_strategy(pd)
    };
    let mut index = open(OpenMode::ReadWrite);
    let mut keys: Vec<i64> = Vec::new();
    let mut next_gap = gaps.iter().cycle();
    let mut round = 0i64;
    let check = |index: &IndexFile<E>, keys: &[i64]| {
        let snap = index.snapshot().unwrap();
        assert_eq!(snap.len(), keys.len());
        let mut targets: Vec<i64> = keys.iter().flat_map(|&k| [k - 1, k, k + 1]).collect();
        targets.extend([i64::MIN, i64::MAX]);
        for t in targets {
            let want = keys.partition_point(|&k| k <= t).checked_sub(1);
            let got = snap.search_with(
                pd,
                t,
                SearchField::Key,
                Bound::LargestLowerBound,
                &mut NoProbe,
            );
            assert_eq!(got, want, "largest lower bound of {t}");
            let want = keys.partition_point(|&k| k < t);
            let got = snap.search_with(
                pd,
                t,
                SearchField::Key,
                Bound::SmallestUpperBound,
                &mut NoProbe,
            );
            // Kafka's quirk: a target equal to slot 0's key answers slot 1.
            let want = if want == 0 && keys.first() == Some(&t) {
                (keys.len() > 1).then_some(1)
            } else {
                (want < keys.len()).then_some(want)
            };
            assert_eq!(got, want, "smallest upper bound of {t}");
        }
    };
    for op in ops {
        match *op {
            Op::Append(n) => {
                let room = index.max_entries() - keys.len();
                round += 1;
                for i in 0..n.min(room) {
                    let gap = (*next_gap.next().unwrap() % (1u64 << max_gap_bits)).max(1);
                    let key = keys.last().map_or(1000, |&k| k + gap as i64);
                    index.append(&make(key, round * 10_000 + i as i64)).unwrap();
                    keys.push(key);
                }
            }
            Op::Truncate(per_mille) => {
                let n = keys.len() * per_mille as usize / 1000;
                index.truncate_to_entries(n).unwrap();
                keys.truncate(n);
            }
            Op::Resize(extra) => {
                let size = (keys.len() + extra).min(capacity) * E::SIZE;
                index.resize(size).unwrap();
            }
            Op::Reopen => {
                index.close().unwrap();
                drop(index);
                index = open(OpenMode::ReadWrite);
                // Reopening keeps the file's length: the used slots are the model's.
                index
                    .truncate_to_entries(keys.len().min(index.entries()))
                    .unwrap();
                assert_eq!(index.entries(), keys.len());
            }
            Op::Lookups => check(&index, &keys),
        }
    }
    check(&index, &keys);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn page_directory_answers_equal_binary_search_on_12_byte_entries(
        page_size in prop::sample::select(vec![64usize, 512, 4096]),
        gaps in prop::collection::vec(
            prop_oneof![3 => 1u64..50, 1 => (1u64 << 31)..(1u64 << 34)], 1..64),
        ops in prop::collection::vec(op(), 1..14),
    ) {
        run(|k, v| e12(0, k, v), 40, page_size, &gaps, &ops);
    }

    #[test]
    fn page_directory_answers_equal_binary_search_on_8_byte_entries(
        page_size in prop::sample::select(vec![64usize, 512, 4096]),
        gaps in prop::collection::vec(1u64..5000, 1..64),
        ops in prop::collection::vec(op(), 1..14),
    ) {
        // Relative keys stay below i32::MAX: 4000 slots of gaps below 2^16.
        run(|k, v| e8(0, k, v), 16, page_size, &gaps, &ops);
    }
}
