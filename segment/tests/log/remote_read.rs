//! Issue 42, branch `remoteread`: `tier::read_remote` (Kafka 4.4's
//! `RemoteLogManager.read`, `docs/kafka-behaviour.md#remote-read`) over the uploads of
//! `Log::tierable_segments`, checked against the local `Log::read_with` of the same
//! segments (the local path is checked against Kafka's broker) at every offset, several
//! `max_bytes`, with and without min-one-message, for high-watermark and read-committed
//! fetches, on segments with transactions, aborts and multi-record batches.

use std::collections::BTreeSet;
use std::io::Read;
use std::sync::Arc;

use crate::common::*;
use segment::record::{control_batch, BatchBuilder, ControlRecordType};
use segment::tier::{read_remote_kafka, RemoteFetch, RemoteIndexes, RemoteSegment};
use segment::{FetchDataInfo, FetchIsolation, Log, LogConfig, SegmentUpload};

fn bytes_of(mut f: &std::fs::File) -> Vec<u8> {
    let mut v = Vec::new();
    f.read_to_end(&mut v).unwrap();
    v
}

fn remote_of(u: &SegmentUpload) -> RemoteSegment {
    let indexes = RemoteIndexes::from_bytes(
        u.base_offset,
        bytes_of(&u.offset_index),
        bytes_of(&u.time_index),
        u.txn_index.as_ref().map(|f| Arc::from(bytes_of(f))),
    )
    .unwrap();
    RemoteSegment::new(
        u.base_offset,
        u.end_offset,
        u.log.to_vec().unwrap(),
        Arc::new(indexes),
    )
    .unwrap()
}

/// A log of mixed batches: plain ones of 1–4 records, transactional ones of three
/// producers (1–3 records), commit and abort markers, over segments of ~600 bytes, with
/// the offset index sparse (`index_interval_bytes`). Every transaction is decided and
/// the last segment rolled, so all but the empty active segment are tierable.
pub(crate) fn mixed_log(dir: &std::path::Path, index_interval_bytes: u64, seed: u64) -> Log {
    let cfg = LogConfig {
        segment_bytes: 600,
        index_interval_bytes,
        ..LogConfig::default()
    };
    let log = open_log(dir, cfg, mock().1);
    let mut rng = seed;
    let mut next = || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 33) as usize
    };
    let mut o = 0i64;
    let mut open = [false; 3];
    let mut seq = [0i32; 3];
    for _ in 0..120 {
        let pick = next() % 6;
        let bytes = if pick < 2 {
            let n = 1 + next() % 4;
            let mut b = BatchBuilder::new(o);
            for i in 0..n {
                b = b.record(1_000 + o + i as i64, None, Some(b"value-bytes"));
            }
            o += n as i64;
            b.build().unwrap()
        } else {
            let p = next() % 3;
            let pid = 10 + p as i64;
            if open[p] && pick == 5 {
                let kind = if next() % 2 == 0 {
                    ControlRecordType::Abort
                } else {
                    ControlRecordType::Commit
                };
                open[p] = false;
                let b = control_batch(o, pid, 0, kind, 0, 1_000 + o).unwrap();
                o += 1;
                b
            } else {
                let n = 1 + next() % 3;
                let mut b = BatchBuilder::new(o)
                    .producer(pid, 0, seq[p])
                    .transactional(true);
                for i in 0..n {
                    b = b.record(1_000 + o + i as i64, None, Some(b"txn"));
                }
                seq[p] += n as i32;
                open[p] = true;
                o += n as i64;
                b.build().unwrap()
            }
        };
        log.append(&bytes).unwrap();
    }
    for (p, was_open) in open.iter().enumerate() {
        if *was_open {
            log.append(
                &control_batch(o, 10 + p as i64, 0, ControlRecordType::Abort, 0, 1_000 + o)
                    .unwrap(),
            )
            .unwrap();
            o += 1;
        }
    }
    log.roll(None).unwrap();
    assert_eq!(log.last_stable_offset(), log.log_end_offset());
    log
}

fn keys(txns: &[index_txn::AbortedTxn]) -> BTreeSet<(i64, i64)> {
    txns.iter()
        .map(|t| (t.producer_id, t.first_offset))
        .collect()
}

/// The remote answer must be the local one (see the module docs for the two documented
/// differences: a first batch over `max_bytes` without min-one-message, and the
/// message offset of the metadata).
pub(crate) fn check(
    log: &Log,
    remote: &RemoteFetch,
    local: &FetchDataInfo,
    committed: bool,
    what: &str,
) {
    if local.first_entry_incomplete {
        // Kafka 4.4's remote read answers empty, with no aborted list.
        assert!(remote.records.is_empty(), "{what}");
        assert_eq!(remote.fetch_offset_metadata, None, "{what}");
        assert_eq!(remote.aborted_transactions, None, "{what}");
        return;
    }
    assert_eq!(remote.records, local.records, "{what}: bytes");
    if local.records.is_empty() {
        return;
    }
    let m = remote.fetch_offset_metadata.expect(what);
    let l = local.fetch_offset_metadata;
    assert_eq!(m.segment_base_offset, l.segment_base_offset, "{what}");
    assert_eq!(
        m.relative_position_in_segment, l.relative_position_in_segment,
        "{what}"
    );
    assert_eq!(
        Some(&m.message_offset),
        offsets_in(&remote.records).first(),
        "{what}: first batch base"
    );
    if committed {
        let mut got = keys(remote.aborted_transactions.as_deref().expect(what));
        if let Some((start, upper)) = remote.local_aborted_search {
            got.extend(keys(&log.collect_aborted_txns(start, upper).unwrap()));
        }
        assert_eq!(
            got,
            keys(local.aborted_transactions.as_deref().expect(what)),
            "{what}: aborted"
        );
    } else {
        assert_eq!(remote.aborted_transactions, None, "{what}");
    }
}

fn compare_every_offset(index_interval_bytes: u64, seed: u64) -> usize {
    let dir = tmpdir();
    let log = mixed_log(dir.path(), index_interval_bytes, seed);
    let uploads = log.tierable_segments().unwrap();
    assert!(uploads.len() >= 5, "{} segments", uploads.len());
    assert!(
        uploads.iter().any(|u| u.txn_index.is_some()),
        "no aborted transaction"
    );
    let remote: Vec<RemoteSegment> = uploads.iter().map(remote_of).collect();
    let mut checked = 0;
    for (i, seg) in remote.iter().enumerate() {
        for offset in seg.base_offset()..=seg.end_offset() {
            for max in [0u64, 1, 70, 150, 400, 1 << 20] {
                for min_one in [true, false] {
                    for (iso, committed) in [
                        (FetchIsolation::HighWatermark, false),
                        (FetchIsolation::TxnCommitted, true),
                    ] {
                        let local = log.read_with(offset, max, iso, min_one).unwrap();
                        let r = read_remote_kafka(&remote[i..], offset, max, min_one, committed)
                            .unwrap();
                        let what = format!(
                            "offset {offset} max {max} min_one {min_one} committed {committed}"
                        );
                        check(&log, &r, &local, committed, &what);
                        checked += 1;
                    }
                }
            }
        }
    }
    checked
}

#[test]
fn remote_reads_answer_as_local_reads_at_every_offset() {
    for (interval, seed) in [(1, 1), (200, 2), (4096, 3), (1, 4)] {
        let n = compare_every_offset(interval, seed);
        assert!(n > 1000, "{n} reads compared");
    }
}

/// A compacted-away offset (a segment without a batch reaching it) moves on to the next
/// remote segment, as Kafka's loop over `findNextSegmentMetadata` does.
#[test]
fn an_offset_past_a_segments_batches_is_read_from_the_next_segment() {
    let dir = tmpdir();
    let log = mixed_log(dir.path(), 1, 7);
    let remote: Vec<RemoteSegment> = log
        .tierable_segments()
        .unwrap()
        .iter()
        .map(remote_of)
        .collect();
    // Ask the first segment for the second one's base offset: it has no batch reaching it.
    let target = remote[1].base_offset();
    let r = read_remote_kafka(&remote, target, 1 << 20, true, false).unwrap();
    let local = log
        .read_with(target, 1 << 20, FetchIsolation::HighWatermark, true)
        .unwrap();
    assert_eq!(r.records, local.records);
    assert_eq!(r.fetch_offset_metadata.unwrap().segment_base_offset, target);
    // The same segments from downloaded files answer alike.
    let files = tmpdir();
    let from_files: Vec<RemoteSegment> = log
        .tierable_segments()
        .unwrap()
        .iter()
        .map(|u| {
            let p = |ext: &str| files.path().join(format!("{}.{ext}", u.base_offset));
            std::fs::write(p("log"), u.log.to_vec().unwrap()).unwrap();
            std::fs::write(p("index"), bytes_of(&u.offset_index)).unwrap();
            std::fs::write(p("timeindex"), bytes_of(&u.time_index)).unwrap();
            let txn = u.txn_index.as_ref().map(|f| {
                std::fs::write(p("txnindex"), bytes_of(f)).unwrap();
                p("txnindex")
            });
            let indexes =
                RemoteIndexes::open(u.base_offset, &p("index"), &p("timeindex"), txn.as_deref())
                    .unwrap();
            let bytes = segment::tier::read_file(&p("log")).unwrap();
            RemoteSegment::new(u.base_offset, u.end_offset, bytes, Arc::new(indexes)).unwrap()
        })
        .collect();
    for o in 0..=remote.last().unwrap().end_offset() {
        let i = remote.iter().position(|s| s.end_offset() >= o).unwrap();
        assert_eq!(
            read_remote_kafka(&from_files[i..], o, 300, true, true).unwrap(),
            read_remote_kafka(&remote[i..], o, 300, true, true).unwrap()
        );
    }
    // Past every remote segment: empty, with an empty aborted list for read_committed.
    let past = remote.last().unwrap().end_offset() + 1;
    let r = read_remote_kafka(&remote, past, 1 << 20, true, true).unwrap();
    assert!(r.records.is_empty());
    assert_eq!(r.aborted_transactions, Some(vec![]));
}

/// Hostile remote bytes: a `.log` cut inside a batch header or a corrupt size field gives
/// a typed error or a shorter answer, never a panic.
#[test]
fn hostile_log_bytes_give_typed_errors() {
    let dir = tmpdir();
    let log = mixed_log(dir.path(), 1, 9);
    let u = &log.tierable_segments().unwrap()[0];
    let seg = remote_of(u);
    let full = seg.log().to_vec();
    for cut in [0, 5, 30, full.len() / 2, full.len() - 1] {
        let s = RemoteSegment::new(
            seg.base_offset(),
            seg.end_offset(),
            full[..cut].to_vec(),
            seg.indexes().clone(),
        )
        .unwrap();
        for o in seg.base_offset()..=seg.end_offset() {
            match read_remote_kafka(std::slice::from_ref(&s), o, 1 << 20, true, true) {
                // A cut log holds a prefix of the batches: whatever it answers is a
                // prefix of the whole log's answer.
                Ok(r) => {
                    let whole =
                        read_remote_kafka(std::slice::from_ref(&seg), o, 1 << 20, true, true)
                            .unwrap();
                    assert!(
                        whole.records.starts_with(&r.records),
                        "cut {cut} offset {o}"
                    );
                }
                Err(segment::SegmentError::Format { .. }) => {}
                Err(e) => panic!("cut {cut} offset {o}: untyped {e}"),
            }
        }
    }
    let mut bad = full.clone();
    bad[8..12].copy_from_slice(&3i32.to_be_bytes()); // batch size below the minimum
    let s = RemoteSegment::new(
        seg.base_offset(),
        seg.end_offset(),
        bad,
        seg.indexes().clone(),
    )
    .unwrap();
    assert!(matches!(
        read_remote_kafka(
            std::slice::from_ref(&s),
            seg.base_offset(),
            1 << 20,
            true,
            false
        ),
        Err(segment::SegmentError::Format { .. })
    ));
}
