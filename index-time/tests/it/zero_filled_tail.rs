//! A crash left a preallocated time index untrimmed: a real trimmed `.timeindex` plus
//! zero slots. Kafka counts every slot; each zero slot decodes as `(0, base_offset)`.
//! Unlike the offset index, the time-index sanity check **fails** (last timestamp 0 <
//! first timestamp, docs/kafka-behaviour.md#time-sanity-check check 1), so the loader's sanity pass flags the segment.
//! Either way the segment is rebuilt: after an unclean shutdown `recoverLog` recovers
//! every segment above the recovery point (docs/kafka-behaviour.md#log-loading step 6), and `LogSegment.recover`
//! resets the time index and re-appends one entry per indexed batch plus the final
//! `maybeAppend(maxTimestampSoFar, offset, skipFullCheck = true)`, then trims (docs/kafka-behaviour.md#segment-recover).
//! Expected lookup values were worked out by hand from Kafka's algorithm (docs/kafka-behaviour.md#index-search).

use std::fs;

use crate::common::*;
use index_time::{IndexError, SearchStrategy, TimeIndex};

const BASE: i64 = 30626;
const FIXTURE: &str = "dipendrasaini-invoice-0-broker2-leader/00000000000000030626.timeindex";

fn padded(dir: &std::path::Path, zero_slots: usize) -> Option<(std::path::PathBuf, Vec<u8>)> {
    // The field data (skipped when missing outside CI, a failure under CI=true).
    let kafka = fs::read(field_data::field_data_file(
        concat!(env!("CARGO_PKG_NAME"), " field data"),
        FIXTURE,
    )?)
    .unwrap();
    assert_eq!(kafka.len(), 720);
    let path = dir.join(timeindex_name(BASE));
    let mut bytes = kafka.clone();
    bytes.resize(kafka.len() + 12 * zero_slots, 0);
    fs::write(&path, bytes).unwrap();
    Some((path, kafka))
}

#[test]
fn zero_slots_count_as_entries_and_fail_sanity_check() {
    let dir = tmp();
    let Some((path, _)) = padded(dir.path(), 10) else {
        return;
    };
    let index = TimeIndex::open(&path, BASE, 10 * 1024 * 1024).unwrap();
    assert_eq!((index.entries(), index.max_entries()), (70, 70));
    assert!(index.is_full());
    assert_eq!(index.entry(59).unwrap(), to(1_718_446_827_577, 60411));
    assert_eq!(index.entry(60).unwrap(), to(0, BASE));
    assert_eq!(index.last_entry().unwrap(), to(0, BASE));
    match index.sanity_check() {
        Err(IndexError::CorruptIndex { reason, .. }) => {
            assert!(reason.contains("1718446827213"), "{reason}")
        }
        other => panic!("expected CorruptIndex, got {other:?}"),
    }
}

#[test]
fn lookups_over_zero_tail_behave_as_kafka() {
    let dir = tmp();
    let Some((path, _)) = padded(dir.path(), 10) else {
        return;
    };
    for strategy in [SearchStrategy::default(), SearchStrategy::Binary] {
        let index = TimeIndex::open_read_only(&path, BASE)
            .unwrap()
            .with_search_strategy(strategy);
        assert_eq!(index.lookup(-1).unwrap(), to(-1, BASE));
        assert_eq!(
            index.lookup(0).unwrap(),
            to(-1, BASE),
            "slot 0 > 0: not found"
        );
        assert_eq!(index.lookup(1_718_446_827_212).unwrap(), to(-1, BASE));
        assert_eq!(
            index.lookup(1_718_446_827_213).unwrap(),
            to(1_718_446_827_213, 30845)
        );
        assert_eq!(
            index.lookup(1_718_446_827_453).unwrap(),
            to(1_718_446_827_452, 46166)
        );
        // Above the real data the bisection ends in the zero tail.
        assert_eq!(index.lookup(1_718_446_827_577).unwrap(), to(0, BASE));
        assert_eq!(index.lookup(1_718_446_827_578).unwrap(), to(0, BASE));
    }
    // With 2000 zero slots (n = 2060) the warm section (682 slots) is all zeros: every
    // target >= 1 is answered (0, base) and targets <= 0 are below slot 0.
    let Some((path, _)) = padded(dir.path(), 2000) else {
        return;
    };
    let index = TimeIndex::open_read_only(&path, BASE).unwrap();
    for t in [1, 1_718_446_827_213, 1_718_446_827_453, i64::MAX] {
        assert_eq!(index.lookup(t).unwrap(), to(0, BASE), "{t}");
    }
    assert_eq!(index.lookup(0).unwrap(), to(-1, BASE));
}

#[test]
fn recovery_rebuild_restores_kafka_bytes() {
    let dir = tmp();
    let Some((path, kafka)) = padded(dir.path(), 10) else {
        return;
    };
    let entries = decode_timeindex_bytes(&kafka, BASE);
    let index = TimeIndex::open(&path, BASE, 10 * 1024 * 1024).unwrap();
    index.reset().unwrap();
    assert_eq!((index.entries(), index.max_entries()), (0, 873_813));
    for &(ts, o) in &entries {
        assert!(index.maybe_append(ts, o).unwrap());
    }
    let &(ts, o) = entries.last().unwrap();
    assert!(
        !index.maybe_append_final(ts, o).unwrap(),
        "final entry deduplicated"
    );
    index.sanity_check().unwrap();
    assert!(index.trim_to_valid_size().unwrap());
    index.close().unwrap();
    assert_eq!(fs::read(&path).unwrap(), kafka);
}
