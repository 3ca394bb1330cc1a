//! Every `.timeindex` of the in-repository partitions (`segment/tests/data`) and of the
//! optional field data (real brokers' partitions): opened read-only, checked against an
//! independent decoder and Kafka's invariants, looked up, and rebuilt byte-for-byte
//! through maybe_append. The field-data tests (exact entries and counts) are skipped when
//! it is missing, except under `CI=true`, where they fail (see the `field-data` helper).

use std::fs;

use crate::common::*;
use index_time::TimeIndex;

const TEN_MIB: usize = 10 * 1024 * 1024;

#[test]
fn fixture_inventory() {
    let Some(files) = field_files(".timeindex") else {
        return;
    };
    assert_eq!(files.len(), 15, "{files:#?}");
    // Every real time index has at least the roll/close entry.
    assert!(files.iter().all(|p| fs::metadata(p).unwrap().len() >= 12));
}

#[test]
fn every_real_timeindex_opens_and_satisfies_kafka_invariants() {
    assert!(check_invariants(in_repo_files(".timeindex")) > 0);
    // 85 + 1 + 1 + 106 + 60 + 1 + 1 + 1 + 1 + 1 + 15 + 1 + 74 + 300 + 109
    if let Some(files) = field_files(".timeindex") {
        assert_eq!(check_invariants(files), 757);
    }
}

/// Checks every time index of `files` and returns their total number of entries.
fn check_invariants(files: Vec<std::path::PathBuf>) -> usize {
    let mut total = 0;
    for path in files {
        let ctx = path.display().to_string();
        let bytes = fs::read(&path).unwrap();
        let base = base_offset_of(&path);
        let expected = decode_timeindex_bytes(&bytes, base);
        let index = TimeIndex::open_read_only(&path, base).unwrap();
        assert_eq!(bytes.len() % 12, 0, "{ctx}");
        assert_eq!(index.entries(), bytes.len() / 12, "{ctx}");
        assert_eq!(index.max_entries(), bytes.len() / 12, "{ctx}");
        assert!(index.is_full(), "{ctx}");
        index.sanity_check().unwrap();
        let got: Vec<(i64, i64)> = index
            .all_entries()
            .unwrap()
            .iter()
            .map(|e| (e.timestamp, e.offset))
            .collect();
        assert_eq!(got, expected, "{ctx}");
        for w in expected.windows(2) {
            assert!(w[0].0 < w[1].0, "{ctx}: timestamps strictly increase {w:?}");
            assert!(w[0].1 <= w[1].1, "{ctx}: offsets never decrease {w:?}");
        }
        for (i, &(ts, o)) in expected.iter().enumerate() {
            assert!(o >= base && ts >= 0, "{ctx}");
            assert_eq!(index.entry(i).unwrap(), to(ts, o));
            assert_eq!(index.lookup(ts).unwrap(), to(ts, o), "{ctx}");
            assert_eq!(
                index.lookup(ts - 1).unwrap(),
                model_lookup(&expected, base, ts - 1)
            );
        }
        assert_eq!(index.lookup(expected[0].0 - 1).unwrap(), to(-1, base));
        total += expected.len();
    }
    total
}

/// nikhildighe __consumer_offsets-12 segment 0: 14 periodic entries plus the roll entry
/// (decoded by hand with xxd, hard-coded here).
#[test]
fn exact_entries_nikhildighe_consumer_offsets_12() {
    let path = field_file!("nikhildighe-__consumer_offsets-12/00000000000000000000.timeindex");
    let index = TimeIndex::open_read_only(&path, 0).unwrap();
    let all = index.all_entries().unwrap();
    assert_eq!(all.len(), 15);
    assert_eq!(
        &all[..3],
        &[
            to(1_721_325_721_277, 60),
            to(1_721_325_771_345, 120),
            to(1_721_325_821_437, 180)
        ]
    );
    assert_eq!(
        &all[12..],
        &[
            to(1_721_326_402_907, 770),
            to(1_721_326_452_990, 830),
            to(1_721_659_255_114, 861) // the roll entry
        ]
    );
    assert_eq!(
        index.lookup(1_721_325_800_000).unwrap(),
        to(1_721_325_771_345, 120)
    );
    assert_eq!(index.lookup(1_721_325_721_276).unwrap(), to(-1, 0));
    assert_eq!(index.lookup(i64::MAX).unwrap(), to(1_721_659_255_114, 861));
    let bytes = fs::read(&path).unwrap();
    assert_eq!(
        &bytes[..12],
        &[0, 0, 1, 0x90, 0xc7, 0x02, 0x16, 0xbd, 0, 0, 0, 0x3c]
    );
}

/// The ksqlDB command topic: one entry (1728561475581, 1).
#[test]
fn exact_entries_itumelengmogase_ksql_command_topic() {
    let path = field_file!(
        "itumelengmogase-_confluent-ksql-default__command_topic-0/00000000000000000000.timeindex",
    );
    assert_eq!(
        fs::read(&path).unwrap(),
        [0, 0, 1, 0x92, 0x76, 0x4a, 0xef, 0xfd, 0, 0, 0, 1]
    );
    let index = TimeIndex::open_read_only(&path, 0).unwrap();
    assert_eq!(index.all_entries().unwrap(), vec![to(1_728_561_475_581, 1)]);
}

/// Follower broker 1's segment 30626: one entry (1718446827577, 60610).
#[test]
fn exact_entries_dipendrasaini_follower() {
    let path =
        field_file!("dipendrasaini-invoice-0-broker1-follower/00000000000000030626.timeindex");
    let index = TimeIndex::open_read_only(&path, 30626).unwrap();
    assert_eq!(
        index.all_entries().unwrap(),
        vec![to(1_718_446_827_577, 60610)]
    );
    assert_eq!(index.lookup(1_718_446_827_576).unwrap(), to(-1, 30626));
    let leader =
        field_file!("dipendrasaini-invoice-0-broker2-leader/00000000000000030626.timeindex");
    let index = TimeIndex::open_read_only(&leader, 30626).unwrap();
    let all = index.all_entries().unwrap();
    assert_eq!(all.len(), 60);
    assert_eq!(all[0], to(1_718_446_827_213, 30845));
    assert_eq!(all[59], to(1_718_446_827_577, 60411));
}

/// Round trip: maybe_append (skip_full_check = false) of every fixture entry into a fresh
/// 10 MiB time index, then close(): byte-identical to Kafka's file.
#[test]
fn round_trip_is_byte_identical_to_kafka() {
    let dir = tmp();
    for (i, path) in kafka_files(".timeindex").iter().enumerate() {
        let kafka = fs::read(path).unwrap();
        let base = base_offset_of(path);
        let out = dir.path().join(format!("{i}.timeindex"));
        let index = TimeIndex::open(&out, base, TEN_MIB).unwrap();
        assert_eq!(index.max_entries(), 873_813);
        for (ts, o) in decode_timeindex_bytes(&kafka, base) {
            assert!(index.maybe_append(ts, o).unwrap(), "{}", path.display());
            // Kafka's roll/close writes the final entry again: deduplicated.
            assert!(!index.maybe_append_final(ts, o).unwrap());
        }
        index.sanity_check().unwrap();
        index.close().unwrap();
        assert_eq!(fs::read(&out).unwrap(), kafka, "{}", path.display());
    }
}

/// The kill -9 copies keep the broker's preallocated, untrimmed index of each active
/// segment: its entries followed by zero-filled slots. As in Kafka, such a file opens (every
/// slot counts as an entry). Kafka's `sanityCheck` compares the last timestamp with the
/// first: a file with real entries before its zero tail fails it, and a file that is all
/// zeros (the active segment had no time-index entry yet, as in these copies) passes, with
/// every slot decoding to `(0, base offset)`. The segment loader recovers either.
#[test]
fn untrimmed_indexes_of_killed_brokers_get_kafkas_sanity_check() {
    const ENTRY: u64 = 12;
    let files = in_repo_untrimmed_files(".timeindex");
    assert!(
        !files.is_empty(),
        "the crash fixtures have untrimmed .timeindex files"
    );
    for path in files {
        let base = base_offset_of(&path);
        let index = TimeIndex::open_read_only(&path, base).unwrap();
        assert_eq!(
            index.entries() as u64,
            fs::metadata(&path).unwrap().len() / ENTRY
        );
        let bytes = fs::read(&path).unwrap();
        if bytes.iter().all(|&b| b == 0) {
            index.sanity_check().unwrap();
        } else {
            match index.sanity_check() {
                Err(index_time::IndexError::CorruptIndex { .. }) => {}
                other => panic!("{}: expected CorruptIndex, got {other:?}", path.display()),
            }
        }
    }
}
