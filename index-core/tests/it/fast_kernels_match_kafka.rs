//! The fast (branch-free) kernels of every strategy answer exactly as Kafka's search,
//! run step by step (`search::kafka_search`, the oracle), on valid indexes (strictly
//! increasing keys and values): every bound, both fields, including the slot-0 quirk of
//! the smallest upper bound, for 8-byte and 12-byte entries, every warm-section size and
//! page size. On merely monotonic data (duplicates: a corrupt index) they find the same
//! field as Kafka, as documented on `search::search`.

use crate::common::{E12, E8};
use index_core::codec::IndexEntry;
use index_core::search::{kafka_search, search};
use index_core::{Bound, IndexFile, NoProbe, OpenMode, SearchField, SearchStrategy};
use proptest::prelude::*;

const BASE: i64 = 1000;

fn running(start: i64, deltas: &[i64]) -> Vec<i64> {
    deltas
        .iter()
        .scan(start, |acc, d| {
            *acc += d;
            Some(*acc)
        })
        .collect()
}

/// The strategies every check runs: each kind, with the defaults and with the case's
/// warm section and page size.
fn strategies(page_size: usize, warm_bytes: usize) -> [SearchStrategy; 6] {
    [
        SearchStrategy::Binary,
        SearchStrategy::WARM_COLD,
        SearchStrategy::WarmCold {
            warm_section_bytes: warm_bytes,
        },
        SearchStrategy::PageDirectory { page_size },
        SearchStrategy::HYBRID,
        SearchStrategy::Hybrid {
            warm_section_bytes: warm_bytes,
            page_size,
        },
    ]
}

/// An index of `keys`/`values` searched with `strategy`, in a directory that lives as long
/// as the returned guard.
fn filled<E: IndexEntry>(
    make: &impl Fn(i64, i64) -> E,
    keys: &[i64],
    values: &[i64],
    strategy: SearchStrategy,
) -> (tempfile::TempDir, IndexFile<E>) {
    let dir = crate::common::tmp();
    let index = IndexFile::<E>::open(
        dir.path().join("0.idx"),
        BASE,
        Some((keys.len() + 1) * E::SIZE),
        OpenMode::ReadWrite,
    )
    .unwrap()
    .with_search_strategy(strategy);
    for (&k, &v) in keys.iter().zip(values) {
        index.append(&make(k, v)).unwrap();
    }
    (dir, index)
}

/// The targets of a field: `extra`, and each field value, one below it and one above.
fn targets(extra: &[i64], fields: &[i64]) -> Vec<i64> {
    let mut targets = extra.to_vec();
    for &f in fields {
        targets.extend([f - 1, f, f + 1]);
    }
    targets
}

/// Builds an index of `keys`/`values` with the page directory of `page_size`, and checks
/// every strategy's search against Kafka's on every field, bound and target.
fn check<E: IndexEntry>(
    make: impl Fn(i64, i64) -> E,
    keys: &[i64],
    values: &[i64],
    page_size: usize,
    warm_bytes: usize,
    strict: bool,
    extra: &[i64],
) -> Result<(), TestCaseError> {
    let pd = SearchStrategy::PageDirectory { page_size };
    let (_dir, index) = filled(&make, keys, values, pd);
    let snap = index.snapshot().unwrap();
    let slots = snap.slots();
    for (which, fields) in [(SearchField::Key, keys), (SearchField::Value, values)] {
        let targets = targets(extra, fields);
        for &t in &targets {
            for bound in [Bound::LargestLowerBound, Bound::SmallestUpperBound] {
                for s in strategies(page_size, warm_bytes) {
                    let want = kafka_search(slots, BASE, t, which, bound, s, &mut NoProbe);
                    let fast = snap.search_with(s, t, which, bound, &mut NoProbe);
                    let plain = search(slots, BASE, t, which, bound, s, &mut NoProbe);
                    if strict {
                        prop_assert_eq!(
                            plain,
                            fast,
                            "{:?} {:?} {:?} target {}",
                            s,
                            which,
                            bound,
                            t
                        );
                        prop_assert_eq!(fast, want, "{:?} {:?} {:?} target {}", s, which, bound, t);
                    } else if !(bound == Bound::SmallestUpperBound && fields.first() == Some(&t)) {
                        let f = |r: Option<usize>| r.map(|s| fields[s]);
                        prop_assert_eq!(
                            f(fast),
                            f(want),
                            "{:?} {:?} {:?} target {}",
                            s,
                            which,
                            bound,
                            t
                        );
                    }
                }
            }
        }
        // The lookup path (`IndexFile::search`) answers as the snapshot does.
        for &t in targets.iter().take(64) {
            let got = index
                .search(t, which, Bound::LargestLowerBound, &mut NoProbe)
                .unwrap()
                .map(|(s, _)| s);
            let want = kafka_search(
                slots,
                BASE,
                t,
                which,
                Bound::LargestLowerBound,
                pd,
                &mut NoProbe,
            );
            if strict {
                prop_assert_eq!(got, want);
            }
        }
    }
    Ok(())
}

/// The lookup path, `IndexFile::search` and `Reader::search`, of an index configured with
/// each strategy (its own page directory, if the strategy keeps one), answers as Kafka's
/// search does for both fields and both bounds: the slot (on increasing data; on merely
/// monotonic data the field of the answer, but for the smallest upper bound's slot-0
/// quirk), and the entry of that slot, byte for byte (a fence slot's entry comes from the
/// page directory's copy).
fn check_lookup_path<E: IndexEntry>(
    make: impl Fn(i64, i64) -> E,
    keys: &[i64],
    values: &[i64],
    page_size: usize,
    warm_bytes: usize,
    strict: bool,
    extra: &[i64],
) -> Result<(), TestCaseError> {
    for s in strategies(page_size, warm_bytes) {
        let (_dir, index) = filled(&make, keys, values, s);
        let snap = index.snapshot().unwrap();
        let slots = snap.slots();
        for (which, fields) in [(SearchField::Key, keys), (SearchField::Value, values)] {
            let targets = targets(extra, fields);
            for bound in [Bound::LargestLowerBound, Bound::SmallestUpperBound] {
                index.with_reader(|reader| -> Result<(), TestCaseError> {
                    for &t in &targets {
                        let want = kafka_search(slots, BASE, t, which, bound, s, &mut NoProbe);
                        let got = index.search(t, which, bound, &mut NoProbe).unwrap();
                        let batched = reader.search(t, which, bound, &mut NoProbe).unwrap();
                        let slot = |r: Option<(usize, E)>| r.map(|(i, _)| i);
                        prop_assert_eq!(
                            slot(batched),
                            slot(got),
                            "{:?} {:?} {:?} target {}",
                            s,
                            which,
                            bound,
                            t
                        );
                        for (i, e) in got.iter().chain(batched.iter()) {
                            prop_assert_eq!(
                                bytemuck::bytes_of(e),
                                bytemuck::bytes_of(&slots[*i]),
                                "{:?} {:?} {:?} target {} slot {}",
                                s,
                                which,
                                bound,
                                t,
                                i
                            );
                        }
                        if strict {
                            prop_assert_eq!(
                                slot(got),
                                want,
                                "{:?} {:?} {:?} target {}",
                                s,
                                which,
                                bound,
                                t
                            );
                        } else if !(bound == Bound::SmallestUpperBound
                            && fields.first() == Some(&t))
                        {
                            let f = |r: Option<usize>| r.map(|i| fields[i]);
                            prop_assert_eq!(
                                f(slot(got)),
                                f(want),
                                "{:?} {:?} {:?} target {}",
                                s,
                                which,
                                bound,
                                t
                            );
                        }
                    }
                    Ok(())
                })?;
            }
        }
    }
    Ok(())
}

fn e8(k: i64, v: i64) -> E8 {
    crate::common::e8(BASE, k, v)
}

fn e12(k: i64, v: i64) -> E12 {
    crate::common::e12(BASE, k, v)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn fast_kernels_equal_kafka_on_valid_indexes(
        kd in proptest::collection::vec(1i64..50, 0..1200),
        vd in proptest::collection::vec(1i64..9, 1200),
        page_size in proptest::sample::select(vec![8usize, 16, 64, 256, 4096]),
        warm_bytes in proptest::sample::select(vec![0usize, 8, 24, 96, 1000]),
        extra in proptest::collection::vec(-100i64..70_000, 8),
    ) {
        let keys = running(BASE, &kd);
        let values = running(BASE, &vd[..keys.len()]);
        check(e8, &keys, &values, page_size, warm_bytes, true, &extra)?;
        check(e12, &keys, &values, page_size, warm_bytes, true, &extra)?;
    }

    #[test]
    fn fast_kernels_find_kafkas_field_on_monotonic_indexes(
        kd in proptest::collection::vec(0i64..3, 0..600),
        vd in proptest::collection::vec(0i64..3, 600),
        page_size in proptest::sample::select(vec![8usize, 16, 4096]),
        warm_bytes in proptest::sample::select(vec![0usize, 24, 1000]),
        extra in proptest::collection::vec(-100i64..3000, 8),
    ) {
        let keys = running(BASE, &kd);
        let values = running(BASE, &vd[..keys.len()]);
        check(e8, &keys, &values, page_size, warm_bytes, false, &extra)?;
        check(e12, &keys, &values, page_size, warm_bytes, false, &extra)?;
    }

    #[test]
    fn the_lookup_path_answers_as_kafka_for_every_field_bound_and_strategy(
        kd in proptest::collection::vec(1i64..50, 0..700),
        vd in proptest::collection::vec(1i64..9, 700),
        page_size in proptest::sample::select(vec![8usize, 16, 64, 4096]),
        warm_bytes in proptest::sample::select(vec![0usize, 24, 96, 1000]),
        extra in proptest::collection::vec(-100i64..40_000, 8),
    ) {
        let keys = running(BASE, &kd);
        let values = running(BASE, &vd[..keys.len()]);
        check_lookup_path(e8, &keys, &values, page_size, warm_bytes, true, &extra)?;
        check_lookup_path(e12, &keys, &values, page_size, warm_bytes, true, &extra)?;
    }

    #[test]
    fn the_lookup_path_finds_kafkas_field_on_monotonic_indexes(
        kd in proptest::collection::vec(0i64..3, 0..400),
        vd in proptest::collection::vec(0i64..3, 400),
        page_size in proptest::sample::select(vec![8usize, 16, 4096]),
        warm_bytes in proptest::sample::select(vec![0usize, 24, 1000]),
        extra in proptest::collection::vec(-100i64..2000, 8),
    ) {
        let keys = running(BASE, &kd);
        let values = running(BASE, &vd[..keys.len()]);
        check_lookup_path(e8, &keys, &values, page_size, warm_bytes, false, &extra)?;
        check_lookup_path(e12, &keys, &values, page_size, warm_bytes, false, &extra)?;
    }
}
