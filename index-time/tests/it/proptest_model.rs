//! Model-based property tests for the time index: maybe_append's acceptance rules and
//! error order against a plain model, lookups (every strategy) against a sorted Vec, and
//! truncate_to against the model (with duplicate offsets: any slot holding the target
//! offset, Kafka's quirk).

use std::fs;
use std::path::Path;

use crate::common::*;
use index_time::{IndexError, OpenMode, TimeIndex};
use proptest::prelude::*;

/// Strictly increasing timestamps (gaps 1..1000), non-decreasing offsets (gaps 0..3).
fn arb_entries() -> impl Strategy<Value = (i64, Vec<(i64, i64)>)> {
    (
        0i64..5_000_000_000,
        0i64..2_000_000_000_000,
        proptest::collection::vec((1i64..1000, 0i64..3), 0..3000),
    )
        .prop_map(|(base, ts0, gaps)| {
            let (mut ts, mut off) = (ts0, base);
            let entries = gaps
                .into_iter()
                .map(|(dt, doff)| {
                    ts += dt;
                    off += doff;
                    (ts, off)
                })
                .collect();
            (base, entries)
        })
}

fn build(dir: &Path, base: i64, entries: &[(i64, i64)]) -> std::path::PathBuf {
    let path = dir.join(timeindex_name(base));
    let rel: Vec<(i64, i32)> = entries
        .iter()
        .map(|&(t, o)| (t, i32::try_from(o - base).unwrap()))
        .collect();
    fs::write(&path, encode_timeindex(&rel)).unwrap();
    path
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Appended,
    Ignored,
    Full,
    InvalidOffset,
    InvalidTimestamp,
    Overflow,
}

fn outcome(r: Result<bool, IndexError>) -> Outcome {
    match r {
        Ok(true) => Outcome::Appended,
        Ok(false) => Outcome::Ignored,
        Err(IndexError::IndexFull { .. }) => Outcome::Full,
        Err(IndexError::InvalidOffset { .. }) => Outcome::InvalidOffset,
        Err(IndexError::InvalidTimestamp { .. }) => Outcome::InvalidTimestamp,
        Err(IndexError::OffsetOverflow { .. }) => Outcome::Overflow,
        Err(e) => panic!("unexpected error {e}"),
    }
}

/// Kafka's maybeAppend (docs/kafka-behaviour.md#time-maybe-append), with the overflow validated before writing.
fn model_append(
    model: &mut Vec<(i64, i64)>,
    max_entries: usize,
    base: i64,
    (ts, off, skip): (i64, i64, bool),
) -> Outcome {
    let n = model.len();
    if !skip && n + 1 >= max_entries {
        return Outcome::Full;
    }
    if let Some(&(lts, loff)) = model.last() {
        if off < loff {
            return Outcome::InvalidOffset;
        }
        if ts < lts {
            return Outcome::InvalidTimestamp;
        }
    }
    if ts <= model.last().map_or(-1, |l| l.0) {
        return Outcome::Ignored;
    }
    if off < base || off - base > i32::MAX as i64 {
        return Outcome::Overflow;
    }
    if n >= max_entries {
        return Outcome::Full;
    }
    model.push((ts, off));
    Outcome::Appended
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Arbitrary call sequences (timestamps and offsets that may go back, stay, or jump,
    /// sometimes past the relative-offset range; skip_full_check either way) give exactly
    /// the model's outcome per call and the model's final entries.
    #[test]
    fn maybe_append_matches_model(
        base in 0i64..1_000_000,
        slots in 1usize..40,
        calls in proptest::collection::vec(
            (-3i64..6, prop_oneof![8 => -2i64..4, 1 => Just(1i64 << 31)], any::<bool>()),
            0..80,
        ),
    ) {
        let dir = tmp();
        let index = new_index(dir.path(), base, slots * 12);
        let mut model = Vec::new();
        let (mut ts, mut off) = (-2i64, base - 1);
        for (i, (dts, doff, skip)) in calls.into_iter().enumerate() {
            ts += dts;
            off += doff;
            let want = model_append(&mut model, slots, base, (ts, off, skip));
            let got = outcome(if skip {
                index.maybe_append_final(ts, off)
            } else {
                index.maybe_append(ts, off)
            });
            prop_assert_eq!(&got, &want, "call {} ({}, {}, skip {})", i, ts, off, skip);
            if got == Outcome::Overflow {
                off -= 1i64 << 31; // come back into range
            }
        }
        let got: Vec<(i64, i64)> = index.all_entries().unwrap().iter().map(|e| (e.timestamp, e.offset)).collect();
        prop_assert_eq!(got, model.clone());
        prop_assert_eq!(index.is_full(), model.len() + 1 >= slots);
        let expected_bytes = encode_timeindex(
            &model.iter().map(|&(t, o)| (t, (o - base) as i32)).collect::<Vec<_>>(),
        );
        index.close().unwrap();
        prop_assert_eq!(fs::read(dir.path().join(timeindex_name(base))).unwrap(), expected_bytes);
    }

    #[test]
    fn lookup_matches_sorted_vec_model(
        (base, entries) in arb_entries(),
        raw in proptest::collection::vec(any::<u64>(), 32),
    ) {
        let dir = tmp();
        let path = build(dir.path(), base, &entries);
        let (lo, hi) = match (entries.first(), entries.last()) {
            (Some(f), Some(l)) => (f.0 - 10, l.0 + 10),
            _ => (-10, 10),
        };
        let mut targets: Vec<i64> = raw.iter().map(|r| lo + (r % (hi - lo) as u64) as i64).collect();
        for e in entries.iter().step_by((entries.len() / 40).max(1)) {
            targets.extend([e.0 - 1, e.0, e.0 + 1]);
        }
        targets.extend([i64::MIN, i64::MAX, -1, 0]);
        let expected: Vec<_> = targets.iter().map(|&t| model_lookup(&entries, base, t)).collect();
        for strategy in STRATEGIES {
            let index = TimeIndex::open_read_only(&path, base).unwrap().with_search_strategy(strategy);
            for (&t, &want) in targets.iter().zip(&expected) {
                prop_assert_eq!(index.lookup(t).unwrap(), want, "{:?} target {}", strategy, t);
            }
        }
    }

    #[test]
    fn truncate_to_matches_model(
        (base, entries) in arb_entries(),
        pick in any::<u64>(),
        delta in -1i64..=1,
    ) {
        let dir = tmp();
        let src = build(dir.path(), base, &entries);
        let target = match entries.len() {
            0 => base + delta,
            n => entries[(pick % n as u64) as usize].1 + delta,
        };
        let below = entries.iter().filter(|e| e.1 < target).count();
        let at_or_below = entries.iter().filter(|e| e.1 <= target).count();
        for (i, strategy) in STRATEGIES.into_iter().enumerate() {
            let path = dir.path().join(format!("{i}.timeindex"));
            fs::copy(&src, &path).unwrap();
            let index = TimeIndex::open_with(&path, base, None, OpenMode::ReadWrite)
                .unwrap()
                .with_search_strategy(strategy);
            index.truncate_to(target).unwrap();
            let keep = index.entries();
            if below == at_or_below {
                // The target offset is not stored: exactly the entries below it stay.
                prop_assert_eq!(keep, below, "{:?} truncate_to({})", strategy, target);
            } else {
                // Stored (possibly several times): Kafka keeps the entries before
                // whichever equal slot its exact-match bisection hits.
                prop_assert!(below <= keep && keep < at_or_below, "{:?} keep {} of [{}, {})", strategy, keep, below, at_or_below);
                if entries[below..at_or_below].len() == 1 {
                    prop_assert_eq!(keep, below);
                }
            }
            let kept: Vec<(i64, i64)> = index.all_entries().unwrap().iter().map(|e| (e.timestamp, e.offset)).collect();
            prop_assert_eq!(&kept[..], &entries[..keep]);
            prop_assert_eq!(index.last_entry().unwrap(), entries[..keep].last().map_or(to(-1, base), |&(t, o)| to(t, o)));
            prop_assert_eq!(index.length(), entries.len() * 12);
        }
    }
}
