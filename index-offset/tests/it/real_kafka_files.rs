//! Every `.index` file of the in-repository partitions (`segment/tests/data`) and of the
//! optional field data (real brokers' partitions): opened read-only, checked against an
//! independent decoder, checked for Kafka's invariants, looked up, and rebuilt
//! byte-for-byte by appending its entries to a fresh 10 MiB index and closing it. The
//! field-data tests (exact entries and counts) are skipped when it is missing, except
//! under `CI=true`, where they fail (see the `field-data` test helper).

use std::fs;

use crate::common::*;
use index_offset::OffsetIndex;

const TEN_MIB: usize = 10 * 1024 * 1024;

#[test]
fn fixture_inventory() {
    let Some(files) = field_files(".index") else {
        return;
    };
    // 15 .index files in 13 partition folders (see PROVENANCE.md); 6 of them are 0 bytes.
    assert_eq!(files.len(), 15, "{files:#?}");
    let empty = files
        .iter()
        .filter(|p| fs::metadata(p).unwrap().len() == 0)
        .count();
    assert_eq!(empty, 6);
    // A .timeindex or .txnindex must never be picked up as an offset index.
    assert!(files
        .iter()
        .all(|p| p.extension().unwrap() == "index" && p.to_str().unwrap().ends_with(".index")));
}

#[test]
fn every_real_index_opens_and_satisfies_kafka_invariants() {
    let in_repo = check_invariants(&in_repo_files(".index"));
    assert!(in_repo > 0, "the in-repository indexes have entries");
    // 14 + 1 + 1 + 106 + 60 + 85 + 299 + 109 + 73 = 748 entries over the 9 non-empty files.
    if let Some(files) = field_files(".index") {
        assert_eq!(check_invariants(&files), 748);
    }
}

/// Checks every index of `files` and returns their total number of entries.
fn check_invariants(files: &[std::path::PathBuf]) -> usize {
    assert!(!files.is_empty());
    let mut total_entries = 0;
    for path in files {
        let bytes = fs::read(path).unwrap();
        let base = base_offset_of(path);
        let expected = decode_index_bytes(&bytes, base);
        let index = OffsetIndex::open_read_only(path, base).unwrap();
        let ctx = path.display();
        assert_eq!(bytes.len() % 8, 0, "{ctx}: trimmed Kafka index");
        assert_eq!(index.entries(), bytes.len() / 8, "{ctx}");
        assert_eq!(index.max_entries(), bytes.len() / 8, "{ctx}");
        assert_eq!(index.length(), bytes.len(), "{ctx}");
        assert!(index.is_full(), "{ctx}: a reopened trimmed index is full");
        index.sanity_check().unwrap();
        let got: Vec<(i64, u32)> = index
            .all_entries()
            .unwrap()
            .iter()
            .map(|e| (e.offset, e.position))
            .collect();
        assert_eq!(got, expected, "{ctx}");
        for w in expected.windows(2) {
            assert!(w[0].0 < w[1].0, "{ctx}: offsets strictly increase {w:?}");
            assert!(w[0].1 < w[1].1, "{ctx}: positions strictly increase {w:?}");
        }
        for (i, &(o, p)) in expected.iter().enumerate() {
            assert!(o >= base, "{ctx}");
            assert_eq!(index.entry(i).unwrap(), op(o, p), "{ctx}");
            assert_eq!(index.lookup(o).unwrap(), op(o, p), "{ctx}");
            assert_eq!(
                index.lookup(o - 1).unwrap(),
                model_lookup(&expected, base, o - 1),
                "{ctx}"
            );
            assert_eq!(
                index.lookup(o + 1).unwrap(),
                model_lookup(&expected, base, o + 1),
                "{ctx}"
            );
        }
        assert_eq!(index.lookup(base - 1).unwrap(), op(base, 0), "{ctx}");
        total_entries += expected.len();
    }
    total_entries
}

/// nikhildighe __consumer_offsets-12 segment 0 (Kafka 3.7.1): 14 entries, decoded with
/// `od`/`xxd` by hand and hard-coded here.
#[test]
fn exact_entries_nikhildighe_consumer_offsets_12() {
    let path = field_file!("nikhildighe-__consumer_offsets-12/00000000000000000000.index");
    let index = OffsetIndex::open_read_only(&path, 0).unwrap();
    let expected = [
        (60, 4388),
        (120, 8808),
        (180, 13228),
        (240, 17648),
        (300, 22068),
        (360, 26488),
        (415, 30876),
        (475, 35296),
        (535, 39716),
        (595, 44136),
        (655, 48556),
        (715, 52976),
        (770, 57364),
        (830, 61784),
    ];
    assert_eq!(index.entries(), 14);
    assert_eq!(
        index.all_entries().unwrap(),
        expected.iter().map(|&(o, p)| op(o, p)).collect::<Vec<_>>()
    );
    assert_eq!(index.last_offset().unwrap(), 830);
    assert_eq!(index.lookup(59).unwrap(), op(0, 0));
    assert_eq!(index.lookup(500).unwrap(), op(475, 35296));
    assert_eq!(index.lookup(861).unwrap(), op(830, 61784));
    // fetch_upper_bound_offset on real data: 4388 + 4420 = 8808 is exactly slot 1.
    assert_eq!(
        index.fetch_upper_bound_offset(op(60, 4388), 4420).unwrap(),
        Some(op(120, 8808))
    );
    assert_eq!(
        index.fetch_upper_bound_offset(op(60, 4388), 4421).unwrap(),
        Some(op(180, 13228))
    );
    // Kafka's slot-0 quirk: target == slot 0's position (4388) answers slot 1.
    assert_eq!(
        index.fetch_upper_bound_offset(op(0, 0), 4388).unwrap(),
        Some(op(120, 8808))
    );
    assert_eq!(
        index.fetch_upper_bound_offset(op(0, 0), 4387).unwrap(),
        Some(op(60, 4388))
    );
    assert_eq!(
        index.fetch_upper_bound_offset(op(830, 61784), 1).unwrap(),
        None
    );
    let bytes = fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], &[0, 0, 0, 0x3c, 0, 0, 0x11, 0x24]);
}

/// The ksqlDB command topic (transactional, Kafka 3.8-era): one entry (1 -> 7525).
#[test]
fn exact_entries_itumelengmogase_ksql_command_topic() {
    let path = field_file!(
        "itumelengmogase-_confluent-ksql-default__command_topic-0/00000000000000000000.index",
    );
    assert_eq!(fs::read(&path).unwrap(), [0, 0, 0, 1, 0, 0, 0x1d, 0x65]);
    let index = OffsetIndex::open_read_only(&path, 0).unwrap();
    assert_eq!(index.all_entries().unwrap(), vec![op(1, 7525)]);
    assert_eq!(index.lookup(0).unwrap(), op(0, 0));
    assert_eq!(index.lookup(1).unwrap(), op(1, 7525));
    assert_eq!(index.lookup(2).unwrap(), op(1, 7525));
}

/// Follower broker 1's segment 30626: one chunk-shaped entry (60610 -> 171110); the
/// leader's index for the same bytes has 60 entries ending in (60610 -> 972995).
#[test]
fn exact_entries_dipendrasaini_follower_and_leader() {
    let path = field_file!("dipendrasaini-invoice-0-broker1-follower/00000000000000030626.index");
    let index = OffsetIndex::open_read_only(&path, 30626).unwrap();
    assert_eq!(index.all_entries().unwrap(), vec![op(60610, 171110)]);
    assert_eq!(index.lookup(60609).unwrap(), op(30626, 0));
    assert_eq!(index.lookup(70000).unwrap(), op(60610, 171110));

    let path = field_file!("dipendrasaini-invoice-0-broker2-leader/00000000000000030626.index");
    let index = OffsetIndex::open_read_only(&path, 30626).unwrap();
    let all = index.all_entries().unwrap();
    assert_eq!(all.len(), 60);
    assert_eq!(
        &all[..3],
        &[op(30850, 6119), op(31842, 23825), op(32338, 40190)]
    );
    assert_eq!(
        &all[57..],
        &[op(59618, 940265), op(60114, 956630), op(60610, 972995)]
    );

    let path = field_file!("dipendrasaini-invoice-0-broker0-follower/00000000000000030626.index");
    let index = OffsetIndex::open_read_only(&path, 30626).unwrap();
    assert_eq!(index.entries(), 0);
    assert_eq!(index.lookup(60610).unwrap(), op(30626, 0));
    index.sanity_check().unwrap();
}

/// KRaft metadata log (CP 7.6 / Kafka 3.6): 299 entries.
#[test]
fn exact_counts_rjmfernandes_cluster_metadata() {
    let path = field_file!("rjmfernandes-__cluster_metadata-0/00000000000000000000.index");
    let index = OffsetIndex::open_read_only(&path, 0).unwrap();
    assert_eq!(index.entries(), 299);
    let bytes = fs::read(&path).unwrap();
    let decoded = decode_index_bytes(&bytes, 0);
    assert_eq!(index.entry(0).unwrap(), op(decoded[0].0, decoded[0].1));
    assert_eq!(
        index.entry(298).unwrap(),
        op(decoded[298].0, decoded[298].1)
    );
}

/// Round trip: appending every fixture's entries to a fresh, 10 MiB preallocated index
/// and closing it reproduces Kafka's file byte for byte (0-byte files included).
#[test]
fn round_trip_is_byte_identical_to_kafka() {
    let dir = tmp();
    let files = kafka_files(".index");
    for (i, path) in files.iter().enumerate() {
        let kafka = fs::read(path).unwrap();
        let base = base_offset_of(path);
        let out = dir.path().join(format!(
            "{i}-{}",
            path.file_name().unwrap().to_str().unwrap()
        ));
        let index = OffsetIndex::open(&out, base, TEN_MIB).unwrap();
        assert_eq!(index.length(), TEN_MIB);
        for (o, p) in decode_index_bytes(&kafka, base) {
            index.append(o, p).unwrap();
        }
        index.sanity_check().unwrap();
        index.close().unwrap();
        assert_eq!(fs::read(&out).unwrap(), kafka, "{}", path.display());
    }
}

/// The segment loader's path for an active segment: open the trimmed file read-write
/// (full), resize to the max size, append the next entry, close → the Kafka bytes plus
/// exactly one new slot.
#[test]
fn reopen_grow_append_close_extends_kafka_file() {
    let src = field_file!("nikhildighe-__consumer_offsets-12/00000000000000000000.index");
    let dir = tmp();
    let path = dir.path().join(index_name(0));
    fs::copy(&src, &path).unwrap();
    let index = OffsetIndex::open(&path, 0, TEN_MIB).unwrap();
    assert!(index.is_full());
    assert!(matches!(
        index.append(890, 66204),
        Err(index_offset::IndexError::IndexFull { entries: 14, .. })
    ));
    assert!(index.resize(TEN_MIB).unwrap());
    assert!(matches!(
        index.append(830, 66204),
        Err(index_offset::IndexError::InvalidOffset { .. })
    ));
    index.append(890, 66204).unwrap();
    index.close().unwrap();
    let mut expected = fs::read(&src).unwrap();
    expected.extend_from_slice(&encode_index(&[(890, 66204)]));
    assert_eq!(fs::read(&path).unwrap(), expected);
}

/// The kill -9 copies keep the broker's preallocated, untrimmed index of each active
/// segment: its entries followed by zero-filled slots. As in Kafka, such a file opens (every
/// slot counts as an entry) and even passes `sanity_check`, which only checks the length and
/// that the last offset is not below the base (a zero slot decodes to the base offset).
/// The entries do not increase, so the segment loader's load-time check rebuilds it.
#[test]
fn untrimmed_indexes_of_killed_brokers_pass_kafkas_weak_sanity_check() {
    const ENTRY: u64 = 8;
    let files = in_repo_untrimmed_files(".index");
    assert!(
        !files.is_empty(),
        "the crash fixtures have untrimmed .index files"
    );
    for path in files {
        let base = base_offset_of(&path);
        let index = OffsetIndex::open_read_only(&path, base).unwrap();
        assert_eq!(
            index.entries() as u64,
            fs::metadata(&path).unwrap().len() / ENTRY
        );
        index.sanity_check().unwrap();
        let decoded = decode_index_bytes(&fs::read(&path).unwrap(), base);
        assert!(
            decoded.windows(2).any(|w| w[0].0 >= w[1].0),
            "{}: the zero-filled tail does not increase",
            path.display()
        );
        assert_eq!(decoded.last(), Some(&(base, 0)), "{}", path.display());
    }
}
