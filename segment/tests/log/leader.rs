//! Issue 21: the leader append (`Log::append_as_leader`, Kafka 4.4's
//! `UnifiedLog.appendAsLeader`): offsets and epochs assigned, Kafka's validation, the
//! topic's timestamp type and codec, idempotence and transactions, with a model-based
//! proptest of producers and a concurrency test (docs/kafka-behaviour.md#leader-append).

use std::collections::HashMap;
use std::sync::Arc;

use proptest::prelude::*;

use crate::common::*;
use segment::record::{
    batches_from, BatchBuilder, CompressionType, ControlRecordType, RecordBatch, CRC_OFFSET,
};
use segment::{
    AppendOrigin, KafkaError, Log, LogConfig, MockTime, SegmentError, TimestampType,
    TopicCompression,
};

const NOW: i64 = 1_000_000; // the mock clock of `common::mock`

fn leader_log(cfg: LogConfig) -> (tempfile::TempDir, Log, MockTime) {
    let dir = tmpdir();
    let (t, clock) = mock();
    let log = open_log(dir.path(), cfg, clock);
    (dir, log, t)
}

/// A producer's batch (base offset 0, as clients send) of `n` keyed records at `ts`.
fn produce(pid: i64, epoch: i16, seq: i32, n: usize, ts: i64) -> Vec<u8> {
    let mut b = BatchBuilder::new(0);
    if pid >= 0 {
        b = b.producer(pid, epoch, seq);
    }
    for i in 0..n {
        b = b.record(
            ts,
            Some(b"k"),
            Some(format!("p{pid}-s{}", seq + i as i32).as_bytes()),
        );
    }
    b.build().unwrap()
}

fn plain(n: usize, ts: i64) -> Vec<u8> {
    produce(-1, -1, -1, n, ts)
}

fn rejected(r: segment::Result<segment::LogAppendInfo>) -> (KafkaError, String, Vec<i32>) {
    match r {
        Err(e @ SegmentError::Rejected { .. }) => {
            let idx = e.record_errors().iter().map(|r| r.batch_index).collect();
            let SegmentError::Rejected { error, message, .. } = e else {
                unreachable!()
            };
            (error, message, idx)
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}

fn fix_crc(b: &mut [u8]) {
    let crc = crc32c::crc32c(&b[CRC_OFFSET + 4..]);
    b[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
}

fn stored_batches(log: &Log) -> Vec<Vec<u8>> {
    let r = log.read(log.log_start_offset(), 1 << 30).unwrap();
    batches_from(&r.records, 0)
        .map(|b| b.unwrap().as_bytes().to_vec())
        .collect()
}

#[test]
fn offsets_come_from_the_log_end_and_the_epoch_is_set() {
    let (_d, log, _t) = leader_log(LogConfig::default());
    let input = plain(3, NOW);
    let a = log
        .append_as_leader(&input, 5, AppendOrigin::Client)
        .unwrap();
    assert_eq!((a.first_offset, a.last_offset, a.num_records), (0, 2, 3));
    assert_eq!((a.num_batches, a.valid_bytes), (1, input.len() as u64));
    assert_eq!(
        (a.max_timestamp, a.log_append_time, a.duplicate),
        (NOW, -1, false)
    );
    assert_eq!(
        a.last_leader_epoch, None,
        "Kafka reports the producer's (−1) epoch"
    );
    let b = log
        .append_as_leader(&plain(2, NOW), 6, AppendOrigin::Client)
        .unwrap();
    assert_eq!(
        (b.first_offset, b.last_offset, b.offset_of_max_timestamp),
        (3, 4, 4)
    );
    assert_eq!(log.log_end_offset(), 5);
    assert_eq!(log.leader_epochs(), vec![(5, 0), (6, 3)]);
    let stored = stored_batches(&log);
    let first = RecordBatch::new(&stored[0]).unwrap();
    assert_eq!(
        (first.base_offset(), first.partition_leader_epoch()),
        (0, 5)
    );
    assert!(first.is_valid());
    // Only fields outside the CRC changed: the producer's CRC is kept.
    assert_eq!(
        first.checksum(),
        RecordBatch::new(&input).unwrap().checksum()
    );
    assert_eq!(read_all(&log, 0), (0..5).collect::<Vec<_>>());
}

#[test]
fn log_append_time_stamps_the_batch_and_recomputes_the_crc() {
    let cfg = LogConfig {
        message_timestamp_type: TimestampType::LogAppendTime,
        ..LogConfig::default()
    };
    let (_d, log, t) = leader_log(cfg);
    t.set(NOW + 500);
    let input = plain(2, 17);
    let a = log
        .append_as_leader(&input, 0, AppendOrigin::Client)
        .unwrap();
    assert_eq!((a.log_append_time, a.max_timestamp), (NOW + 500, NOW + 500));
    let stored = stored_batches(&log);
    let b = RecordBatch::new(&stored[0]).unwrap();
    assert!(b.is_valid());
    assert_eq!(
        b.timestamp_type(),
        segment::record::TimestampType::LogAppendTime
    );
    assert_eq!(b.max_timestamp(), NOW + 500);
    assert_ne!(b.checksum(), RecordBatch::new(&input).unwrap().checksum());
    for r in b.records().unwrap() {
        assert_eq!(r.unwrap().timestamp, NOW + 500);
    }
    // A producer may not send LogAppendTime itself.
    let pre = BatchBuilder::new(0)
        .log_append_time(5)
        .record(5, None, Some(b"v"))
        .build()
        .unwrap();
    let (e, _, idx) = rejected(log.append_as_leader(&pre, 0, AppendOrigin::Client));
    assert_eq!((e, idx), (KafkaError::InvalidTimestamp, vec![0]));
}

#[test]
fn create_time_bounds_give_per_record_errors() {
    let cfg = LogConfig {
        message_timestamp_before_max_ms: 1000,
        ..LogConfig::default()
    };
    let (_d, log, _t) = leader_log(cfg);
    // Default after.max.ms is one hour.
    let b = BatchBuilder::new(0)
        .record(NOW, None, Some(b"ok"))
        .record(NOW + 3_600_001, None, Some(b"future"))
        .record(NOW - 1000, None, Some(b"edge"))
        .record(NOW - 1001, None, Some(b"past"))
        .record(-1, None, Some(b"no timestamp"))
        .build()
        .unwrap();
    let (e, _, idx) = rejected(log.append_as_leader(&b, 0, AppendOrigin::Client));
    assert_eq!((e, idx), (KafkaError::InvalidTimestamp, vec![1, 3]));
    assert_eq!(e.name(), "INVALID_TIMESTAMP");
    assert_eq!(log.log_end_offset(), 0, "nothing appended");
}

#[test]
fn compacted_topics_need_keys() {
    let cfg = LogConfig {
        compact: true,
        ..LogConfig::default()
    };
    let (_d, log, _t) = leader_log(cfg);
    let b = BatchBuilder::new(0)
        .record(NOW, Some(b"k"), Some(b"v"))
        .record(NOW, None, Some(b"v"))
        .build()
        .unwrap();
    let r = log.append_as_leader(&b, 0, AppendOrigin::Client);
    let e = r.as_ref().unwrap_err();
    assert_eq!(e.record_errors()[0].batch_index, 1);
    assert!(e.record_errors()[0]
        .message
        .as_deref()
        .unwrap()
        .contains("Compacted topic cannot accept message without key"));
    assert_eq!(e.kafka_error(), KafkaError::InvalidRecord);
    assert!(log
        .append_as_leader(&plain(2, NOW), 0, AppendOrigin::Client)
        .is_ok());
}

#[test]
fn batch_level_rules() {
    let mid = plain(3, NOW);
    let cfg = LogConfig {
        max_message_bytes: mid.len() as u32 + 40,
        segment_bytes: mid.len() as u64 - 1,
        ..LogConfig::default()
    };
    let (_d, log, _t) = leader_log(cfg);
    let client = AppendOrigin::Client;
    // max.message.bytes.
    let big = plain(20, NOW);
    let (e, _, _) = rejected(log.append_as_leader(&big, 0, client));
    assert_eq!(
        (e, e.name(), e.code()),
        (KafkaError::RecordTooLarge, "MESSAGE_TOO_LARGE", 10)
    );
    // segment.bytes.
    let (e, _, _) = rejected(log.append_as_leader(&mid, 0, client));
    assert_eq!((e, e.code()), (KafkaError::RecordBatchTooLarge, 18));
    // CRC.
    let mut bad = plain(1, NOW);
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert_eq!(
        rejected(log.append_as_leader(&bad, 0, client)).0,
        KafkaError::CorruptMessage
    );
    // Base offset 0 from clients.
    let off = BatchBuilder::new(7)
        .record(NOW, None, Some(b"v"))
        .build()
        .unwrap();
    assert_eq!(
        rejected(log.append_as_leader(&off, 0, client)).0,
        KafkaError::InvalidRecord
    );
    // Magic 1 is refused (Kafka 4.x produce requests carry magic 2 only).
    let v1 = segment::record::fixtures::v1(0, &["a"]);
    assert_eq!(
        rejected(log.append_as_leader(&v1, 0, client)).0,
        KafkaError::InvalidRecord
    );
    // One batch per append; the message counts them all.
    let two = [plain(1, NOW), plain(1, NOW)].concat();
    assert_eq!(
        rejected(log.append_as_leader(&two, 0, client)).0,
        KafkaError::InvalidRecord
    );
    let three = [plain(1, NOW), plain(2, NOW), plain(1, NOW)].concat();
    let (e, message, _) = rejected(log.append_as_leader(&three, 0, client));
    assert_eq!(e, KafkaError::InvalidRecord);
    assert!(message.ends_with("one v2 batch, not 3"), "{message}");
    // Record count against the last offset delta.
    let mut count = plain(1, NOW);
    count[57..61].copy_from_slice(&2i32.to_be_bytes());
    fix_crc(&mut count);
    assert_eq!(
        rejected(log.append_as_leader(&count, 0, client)).0,
        KafkaError::InvalidRecord
    );
    // An empty batch.
    let empty = BatchBuilder::new(0).build_empty(0, NOW).unwrap();
    assert_eq!(
        rejected(log.append_as_leader(&empty, 0, client)).0,
        KafkaError::InvalidRecord
    );
    // A producer id without a sequence.
    let noseq = produce(3, 0, -1, 1, NOW);
    assert_eq!(
        rejected(log.append_as_leader(&noseq, 0, client)).0,
        KafkaError::InvalidRecord
    );
    // Control batches from a client.
    let marker = BatchBuilder::new(0)
        .producer(3, 0, -1)
        .build_end_txn_marker(ControlRecordType::Commit, 0, NOW)
        .unwrap();
    let (e, m, _) = rejected(log.append_as_leader(&marker, 0, client));
    assert_eq!(e, KafkaError::InvalidRecord, "{m}");
    assert_eq!(log.log_end_offset(), 0);
    // No complete batch (Kafka's produce request: at least one batch).
    let (e, _, _) = rejected(log.append_as_leader(&mid[..30], 0, client));
    assert_eq!(e, KafkaError::InvalidRecord);
    let (e, _, _) = rejected(log.append_as_leader(&[], 0, client));
    assert_eq!(e, KafkaError::InvalidRecord);
    // A torn tail after a complete batch is ignored (Kafka trims it).
    let one = plain(1, NOW);
    let torn = [one.clone(), one[..20].to_vec()].concat();
    let a = log.append_as_leader(&torn, 0, client).unwrap();
    assert_eq!((a.first_offset, a.valid_bytes), (0, one.len() as u64));
}

#[test]
fn the_topic_codec_recompresses() {
    let gz = LogConfig {
        compression_type: TopicCompression::Gzip,
        ..LogConfig::default()
    };
    let (_d, log, _t) = leader_log(gz);
    log.append_as_leader(&plain(1, NOW), 0, AppendOrigin::Client)
        .unwrap();
    let a = log
        .append_as_leader(&plain(4, NOW), 0, AppendOrigin::Client)
        .unwrap();
    assert_eq!(
        (a.source_compression, a.target_compression),
        (CompressionType::None, CompressionType::Gzip)
    );
    assert_eq!((a.first_offset, a.last_offset), (1, 4));
    let stored = stored_batches(&log);
    let b = RecordBatch::new(&stored[1]).unwrap();
    assert_eq!(b.compression().unwrap(), CompressionType::Gzip);
    assert!(b.is_valid());
    let values: Vec<Vec<u8>> = b
        .records()
        .unwrap()
        .map(|r| r.unwrap().value().unwrap().to_vec())
        .collect();
    assert_eq!(values.len(), 4);
    assert_eq!(values[3], b"p-1-s2".to_vec());
    assert_eq!(read_all(&log, 0), (0..5).collect::<Vec<_>>());

    let none = LogConfig {
        compression_type: TopicCompression::Uncompressed,
        ..LogConfig::default()
    };
    let (_d2, log2, _t2) = leader_log(none);
    let lz = BatchBuilder::new(0)
        .compression(CompressionType::Lz4)
        .record(NOW, None, Some(b"x"))
        .build()
        .unwrap();
    let a = log2.append_as_leader(&lz, 0, AppendOrigin::Client).unwrap();
    assert_eq!(a.target_compression, CompressionType::None);
    assert_eq!(
        RecordBatch::new(&stored_batches(&log2)[0])
            .unwrap()
            .compression()
            .unwrap(),
        CompressionType::None
    );

    // `producer` keeps the codec and assigns in place: the producer's CRC stays.
    let (_d3, log3, _t3) = leader_log(LogConfig::default());
    log3.append_as_leader(&plain(2, NOW), 0, AppendOrigin::Client)
        .unwrap();
    let a = log3.append_as_leader(&lz, 3, AppendOrigin::Client).unwrap();
    assert_eq!(
        (a.first_offset, a.target_compression),
        (2, CompressionType::Lz4)
    );
    let b = RecordBatch::new(&stored_batches(&log3)[1])
        .unwrap()
        .checksum();
    assert_eq!(b, RecordBatch::new(&lz).unwrap().checksum());
    assert_eq!(read_all(&log3, 0), vec![0, 1, 2]);
}

#[test]
fn retries_of_the_last_five_batches_are_duplicates() {
    let (_d, log, _t) = leader_log(LogConfig::default());
    let c = AppendOrigin::Client;
    let mut sent = Vec::new();
    for i in 0..6 {
        let b = produce(1, 0, 2 * i, 2, NOW);
        let a = log.append_as_leader(&b, 0, c).unwrap();
        sent.push((b, a.first_offset, a.last_offset));
    }
    let leo = log.log_end_offset();
    for (b, first, last) in &sent[1..] {
        let a = log.append_as_leader(b, 0, c).unwrap();
        assert!(a.duplicate);
        assert_eq!(
            (a.first_offset, a.last_offset, a.log_append_time),
            (*first, *last, NOW)
        );
    }
    assert_eq!(log.log_end_offset(), leo, "duplicates append nothing");
    // The oldest batch is no longer retained: its sequence is out of order.
    let (e, _, _) = rejected(log.append_as_leader(&sent[0].0, 0, c));
    assert_eq!(e, KafkaError::OutOfOrderSequenceNumber);
    // A gap.
    assert_eq!(
        rejected(log.append_as_leader(&produce(1, 0, 13, 1, NOW), 0, c)).0,
        KafkaError::OutOfOrderSequenceNumber
    );
    // A new epoch starts at 0.
    assert_eq!(
        rejected(log.append_as_leader(&produce(1, 1, 12, 1, NOW), 0, c)).0,
        KafkaError::OutOfOrderSequenceNumber
    );
    log.append_as_leader(&produce(1, 1, 0, 1, NOW), 0, c)
        .unwrap();
    // An old epoch is fenced.
    let (e, _, _) = rejected(log.append_as_leader(&produce(1, 0, 12, 1, NOW), 0, c));
    assert_eq!((e, e.code()), (KafkaError::InvalidProducerEpoch, 47));
    // An unknown producer may start anywhere.
    log.append_as_leader(&produce(2, 0, 40, 1, NOW), 0, c)
        .unwrap();
}

#[test]
fn transactions_and_coordinator_markers() {
    let (_d, log, _t) = leader_log(LogConfig::default());
    let c = AppendOrigin::Client;
    let txn = |epoch: i16, seq: i32| {
        BatchBuilder::new(0)
            .producer(9, epoch, seq)
            .transactional(true)
            .record(NOW, Some(b"k"), Some(b"v"))
            .build()
            .unwrap()
    };
    let marker = |epoch: i16, kind, coordinator_epoch| {
        BatchBuilder::new(0)
            .producer(9, epoch, -1)
            .build_end_txn_marker(kind, coordinator_epoch, NOW)
            .unwrap()
    };
    log.append_as_leader(&plain(1, NOW), 0, c).unwrap();
    let a = log.append_as_leader(&txn(0, 0), 0, c).unwrap();
    assert_eq!(log.last_stable_offset(), a.first_offset);
    // A non-transactional write during the transaction.
    let (e, _, _) = rejected(log.append_as_leader(&produce(9, 0, 1, 1, NOW), 0, c));
    assert_eq!(e, KafkaError::InvalidTxnState);
    log.append_as_leader(&txn(0, 1), 0, c).unwrap();
    // The coordinator commits with coordinator epoch 3.
    let m = log
        .append_as_leader(
            &marker(0, ControlRecordType::Commit, 3),
            0,
            AppendOrigin::Coordinator,
        )
        .unwrap();
    assert_eq!(log.last_stable_offset(), m.last_offset + 1);
    // A zombie coordinator is fenced.
    log.append_as_leader(&txn(0, 2), 0, c).unwrap();
    let (e, _, _) = rejected(log.append_as_leader(
        &marker(0, ControlRecordType::Abort, 2),
        0,
        AppendOrigin::Coordinator,
    ));
    assert_eq!(
        (e, e.name()),
        (
            KafkaError::TransactionCoordinatorFenced,
            "TRANSACTION_COORDINATOR_FENCED"
        )
    );
    // An old producer epoch is fenced for markers and for transactional batches.
    let e1 = log.append_as_leader(&txn(1, 0), 0, c);
    assert!(e1.is_ok(), "a bumped epoch continues at sequence 0: {e1:?}");
    let (e, _, _) = rejected(log.append_as_leader(
        &marker(0, ControlRecordType::Abort, 3),
        0,
        AppendOrigin::Coordinator,
    ));
    assert_eq!(e, KafkaError::InvalidProducerEpoch);
    log.append_as_leader(
        &marker(1, ControlRecordType::Abort, 3),
        0,
        AppendOrigin::Coordinator,
    )
    .unwrap();
    assert_eq!(log.last_stable_offset(), log.log_end_offset());
    // The abort has its `.txnindex` entry: the transaction from offset 4 (txn(0, 2)) to
    // the marker, with the LSO of the moment.
    let aborted = log.collect_aborted_txns(0, log.log_end_offset()).unwrap();
    let end = log.log_end_offset();
    assert_eq!(aborted.len(), 1);
    let t = &aborted[0];
    assert_eq!(
        (
            t.producer_id,
            t.first_offset,
            t.last_offset,
            t.last_stable_offset
        ),
        (9, 4, end - 1, end)
    );
    let (e, _, _) = rejected(log.append_as_leader(&txn(0, 3), 0, c));
    assert_eq!(e, KafkaError::InvalidProducerEpoch);
}

/// One producer step of the model test.
#[derive(Debug, Clone)]
enum Step {
    Next(usize),
    Retry(usize),
    Gap(i32),
    Bump,
    BumpBadSeq,
    OldEpoch,
}

fn step() -> impl Strategy<Value = (i64, Step)> {
    let s = prop_oneof![
        4 => (1usize..4).prop_map(Step::Next),
        3 => (0usize..7).prop_map(Step::Retry),
        1 => (1i32..5).prop_map(Step::Gap),
        1 => Just(Step::Bump),
        1 => Just(Step::BumpBadSeq),
        1 => Just(Step::OldEpoch),
    ];
    (0i64..3, s)
}

/// What the model knows of a producer: epoch, next sequence, last five batches.
#[derive(Default)]
struct Model {
    epoch: i16,
    next_seq: i32,
    retained: Vec<(i32, usize, i64, i64)>, // (first seq, records, first offset, last offset)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random producers, retries, gaps and epochs get Kafka's answers per a small model.
    #[test]
    fn producers_get_kafkas_answers(steps in prop::collection::vec(step(), 1..60)) {
        let (_d, log, _t) = leader_log(LogConfig::default());
        let mut models: HashMap<i64, Model> = HashMap::new();
        let mut appended = 0u64;
        for (pid, s) in steps {
            let known = models.contains_key(&pid);
            let m = models.entry(pid).or_default();
            let leo = log.log_end_offset();
            match s {
                Step::Next(n) => {
                    let a = log.append_as_leader(&produce(pid, m.epoch, m.next_seq, n, NOW), 0, AppendOrigin::Client).unwrap();
                    prop_assert_eq!((a.first_offset, a.last_offset, a.duplicate), (leo, leo + n as i64 - 1, false));
                    m.retained.push((m.next_seq, n, a.first_offset, a.last_offset));
                    if m.retained.len() > 5 { m.retained.remove(0); }
                    m.next_seq += n as i32;
                    appended += n as u64;
                }
                Step::Retry(k) => {
                    if k >= m.retained.len() {
                        if !known { models.remove(&pid); }
                        continue;
                    }
                    let (seq, n, first, last) = m.retained[m.retained.len() - 1 - k];
                    let a = log.append_as_leader(&produce(pid, m.epoch, seq, n, NOW), 0, AppendOrigin::Client).unwrap();
                    prop_assert!(a.duplicate);
                    prop_assert_eq!((a.first_offset, a.last_offset), (first, last));
                    prop_assert_eq!(log.log_end_offset(), leo);
                }
                Step::Gap(g) => {
                    let seq = m.next_seq + g;
                    let r = log.append_as_leader(&produce(pid, m.epoch, seq, 1, NOW), 0, AppendOrigin::Client);
                    if known {
                        prop_assert_eq!(r.unwrap_err().kafka_error(), KafkaError::OutOfOrderSequenceNumber);
                    } else {
                        let a = r.unwrap();
                        m.retained.push((seq, 1, a.first_offset, a.last_offset));
                        m.next_seq = seq + 1;
                        appended += 1;
                    }
                }
                Step::Bump | Step::BumpBadSeq => {
                    let seq = if matches!(s, Step::Bump) { 0 } else { 3 };
                    let r = log.append_as_leader(&produce(pid, m.epoch + 1, seq, 1, NOW), 0, AppendOrigin::Client);
                    if seq != 0 && known {
                        prop_assert_eq!(r.unwrap_err().kafka_error(), KafkaError::OutOfOrderSequenceNumber);
                    } else {
                        let a = r.unwrap();
                        m.epoch += 1;
                        m.retained = vec![(seq, 1, a.first_offset, a.last_offset)];
                        m.next_seq = seq + 1;
                        appended += 1;
                    }
                }
                Step::OldEpoch => {
                    if !known || m.epoch == 0 {
                        if !known { models.remove(&pid); }
                        continue;
                    }
                    let r = log.append_as_leader(&produce(pid, m.epoch - 1, 0, 1, NOW), 0, AppendOrigin::Client);
                    prop_assert_eq!(r.unwrap_err().kafka_error(), KafkaError::InvalidProducerEpoch);
                }
            }
        }
        prop_assert_eq!(log.log_end_offset() as u64, appended);
        prop_assert_eq!(read_all(&log, 0), (0..appended as i64).collect::<Vec<_>>());
    }
}

#[test]
fn concurrent_leaders_get_every_offset_once() {
    let cfg = LogConfig {
        segment_bytes: 16 * 1024,
        ..LogConfig::default()
    };
    let (_d, log, _t) = leader_log(cfg);
    let log = Arc::new(log);
    const THREADS: i64 = 4;
    const BATCHES: i32 = 60;
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                let mut acks = Vec::new();
                for i in 0..BATCHES {
                    // Even threads are idempotent producers, odd ones plain.
                    let b = if t % 2 == 0 {
                        produce(t, 0, 3 * i, 3, NOW)
                    } else {
                        let mut b = BatchBuilder::new(0);
                        for r in 0..3 {
                            b = b.record(
                                NOW,
                                Some(b"k"),
                                Some(format!("p{t}-s{}", 3 * i + r).as_bytes()),
                            );
                        }
                        b.build().unwrap()
                    };
                    let a = log.append_as_leader(&b, 1, AppendOrigin::Client).unwrap();
                    assert!(!a.duplicate);
                    acks.push((a.first_offset, a.last_offset, t, 3 * i));
                }
                acks
            })
        })
        .collect();
    let mut acks: Vec<(i64, i64, i64, i32)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    acks.sort_unstable();
    let mut next = 0;
    for &(first, last, _, _) in &acks {
        assert_eq!(
            (first, last),
            (next, next + 2),
            "contiguous, each offset once"
        );
        next = last + 1;
    }
    assert_eq!(log.log_end_offset(), next);
    assert!(log.segments().number_of_segments() > 1);
    // Read back: every acknowledged record exactly once, at its acknowledged offset.
    let mut by_offset = HashMap::new();
    let r = log.read(0, 1 << 30).unwrap();
    for b in batches_from(&r.records, 0) {
        let b = b.unwrap();
        assert!(b.is_valid());
        for rec in b.records().unwrap() {
            let rec = rec.unwrap();
            let v = String::from_utf8(rec.value().unwrap().to_vec()).unwrap();
            assert!(by_offset.insert(rec.offset, v).is_none());
        }
    }
    // The first read stops at a segment boundary: read the rest.
    let mut from = by_offset.keys().max().map_or(0, |m| m + 1);
    while from < next {
        let r = log.read(from, 1 << 30).unwrap();
        for b in batches_from(&r.records, 0) {
            for rec in b.unwrap().records().unwrap() {
                let rec = rec.unwrap();
                let v = String::from_utf8(rec.value().unwrap().to_vec()).unwrap();
                assert!(by_offset.insert(rec.offset, v).is_none());
            }
        }
        from = by_offset.keys().max().unwrap() + 1;
    }
    assert_eq!(by_offset.len() as i64, next);
    for (first, _, t, seq) in acks {
        for r in 0..3 {
            assert_eq!(by_offset[&(first + r)], format!("p{t}-s{}", seq + r as i32));
        }
    }
}

#[test]
fn other_magic_and_coordinator_offsets() {
    let (_d, log, _t) = leader_log(LogConfig::default());
    let mut m3 = plain(1, NOW);
    m3[16] = 3;
    let (e, _, _) = rejected(log.append_as_leader(&m3, 0, AppendOrigin::Client));
    assert_eq!(e, KafkaError::InvalidRecord);
    // The coordinator's base offset is not checked; the log assigns it anyway.
    let b = BatchBuilder::new(42)
        .record(NOW, Some(b"k"), Some(b"v"))
        .build()
        .unwrap();
    let a = log
        .append_as_leader(&b, 2, AppendOrigin::Coordinator)
        .unwrap();
    assert_eq!((a.first_offset, a.last_offset), (0, 0));
    assert_eq!(
        RecordBatch::new(&stored_batches(&log)[0])
            .unwrap()
            .base_offset(),
        0
    );
}

#[test]
fn a_retry_of_the_last_batch_is_a_duplicate_after_reopening() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), LogConfig::default(), clock.clone());
    for i in 0..3 {
        log.append_as_leader(&produce(4, 0, i, 1, NOW), 0, AppendOrigin::Client)
            .unwrap();
    }
    log.close().unwrap();
    let log = open_log(dir.path(), LogConfig::default(), clock);
    // The snapshot keeps the producer's last batch only (Kafka's snapshot format).
    let a = log
        .append_as_leader(&produce(4, 0, 2, 1, NOW), 0, AppendOrigin::Client)
        .unwrap();
    assert!(a.duplicate);
    assert_eq!((a.first_offset, a.last_offset), (2, 2));
    let (e, _, _) =
        rejected(log.append_as_leader(&produce(4, 0, 1, 1, NOW), 0, AppendOrigin::Client));
    assert_eq!(e, KafkaError::OutOfOrderSequenceNumber);
    log.append_as_leader(&produce(4, 0, 3, 1, NOW), 0, AppendOrigin::Client)
        .unwrap();
    assert_eq!(log.log_end_offset(), 4);
}

/// A minimal non-Kafka format: `[u32 size][i64 base offset][u32 count][i64 max ts]`, then
/// payload bytes; `ASSIGN` says whether it implements the leader's offset assignment.
struct Mini<const ASSIGN: bool>;

impl<const ASSIGN: bool> Mini<ASSIGN> {
    fn encode(base: i64, count: u32, ts: i64) -> Vec<u8> {
        let mut b = vec![0; 24];
        b[4..12].copy_from_slice(&base.to_be_bytes());
        b[12..16].copy_from_slice(&count.to_be_bytes());
        b[16..24].copy_from_slice(&ts.to_be_bytes());
        b.extend_from_slice(b"payload");
        let size = b.len() as u32;
        b[0..4].copy_from_slice(&size.to_be_bytes());
        b
    }
}

impl<const ASSIGN: bool> segment::BatchFormat for Mini<ASSIGN> {
    const NAME: &'static str = "mini";
    const HEADER_PEEK_BYTES: usize = 4;
    const MAX_HEADER_BYTES: usize = 24;

    fn peek_size(h: &[u8], position: u64) -> Result<Option<usize>, segment::format::FormatError> {
        if h.len() < 4 {
            return Ok(None);
        }
        match u32::from_be_bytes(h[..4].try_into().unwrap()) as usize {
            s if s < 24 => Err(segment::format::FormatError::Corrupt {
                position,
                reason: "short".into(),
            }),
            s => Ok(Some(s)),
        }
    }

    fn parse_header(
        b: &[u8],
        position: u64,
    ) -> Result<segment::BatchInfo, segment::format::FormatError> {
        let size = Self::peek_size(b, position)?.unwrap_or(0);
        let base = i64::from_be_bytes(b[4..12].try_into().unwrap());
        let count = i64::from(u32::from_be_bytes(b[12..16].try_into().unwrap())).max(1);
        let ts = i64::from_be_bytes(b[16..24].try_into().unwrap());
        Ok(segment::BatchInfo::new(
            position,
            base,
            base + count - 1,
            ts,
            size,
        ))
    }

    fn validate(_: &[u8], _: u64) -> Result<(), segment::format::FormatError> {
        Ok(())
    }

    fn assign_base_offset(
        b: &mut [u8],
        position: u64,
        base: i64,
    ) -> Result<(), segment::format::FormatError> {
        if !ASSIGN {
            return Err(segment::format::FormatError::Unsupported {
                position,
                reason: "no".into(),
            });
        }
        b[4..12].copy_from_slice(&base.to_be_bytes());
        Ok(())
    }
}

#[test]
fn another_format_gets_offsets_assigned_when_it_can() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = segment::LogOptions::<Mini<true>>::new()
        .clock(clock.clone())
        .open(dir.path().join("a"), LogConfig::default())
        .unwrap();
    let two = [
        Mini::<true>::encode(77, 3, NOW),
        Mini::<true>::encode(0, 2, NOW + 5),
    ]
    .concat();
    let a = log.append_as_leader(&two, 1, AppendOrigin::Client).unwrap();
    assert_eq!(
        (a.first_offset, a.last_offset, a.num_batches, a.num_records),
        (0, 4, 2, 5)
    );
    assert_eq!(a.max_timestamp, NOW + 5);
    let b = log
        .append_as_leader(&Mini::<true>::encode(9, 1, NOW), 1, AppendOrigin::Client)
        .unwrap();
    assert_eq!(b.first_offset, 5);
    let stored: Vec<(i64, i64)> =
        segment::format::scan::<Mini<true>>(&log.read(0, 1 << 20).unwrap().records, 0)
            .map(|b| b.unwrap().info)
            .map(|i| (i.base_offset, i.last_offset))
            .collect();
    assert_eq!(stored, vec![(0, 2), (3, 4), (5, 5)]);
    // The default LogAppendTime stamping refuses.
    let lat = LogConfig {
        message_timestamp_type: TimestampType::LogAppendTime,
        ..LogConfig::default()
    };
    let log2 = segment::LogOptions::<Mini<true>>::new()
        .clock(clock.clone())
        .open(dir.path().join("b"), lat)
        .unwrap();
    let e = log2
        .append_as_leader(&Mini::<true>::encode(0, 1, NOW), 1, AppendOrigin::Client)
        .unwrap_err();
    assert_eq!(e.kafka_error(), KafkaError::UnsupportedForMessageFormat);
    // A format without assign_base_offset cannot be appended to as leader.
    let log3 = segment::LogOptions::<Mini<false>>::new()
        .clock(clock)
        .open(dir.path().join("c"), LogConfig::default())
        .unwrap();
    let e = log3
        .append_as_leader(&Mini::<false>::encode(0, 1, NOW), 1, AppendOrigin::Client)
        .unwrap_err();
    assert_eq!(e.kafka_error(), KafkaError::UnsupportedForMessageFormat);
    assert_eq!(log3.log_end_offset(), 0);
}

#[test]
fn config_defaults_are_kafka_44s() {
    let c = LogConfig::default();
    assert_eq!(c.message_timestamp_type, TimestampType::CreateTime);
    assert_eq!(c.message_timestamp_before_max_ms, i64::MAX);
    assert_eq!(c.message_timestamp_after_max_ms, 3_600_000);
    assert_eq!(c.max_message_bytes, 1_048_588);
    assert_eq!(c.compression_type, TopicCompression::Producer);
    assert_eq!(TopicCompression::Zstd.name(), "zstd");
    assert!(!c.compact);
    for bad in [
        LogConfig {
            message_timestamp_after_max_ms: -1,
            ..LogConfig::default()
        },
        LogConfig {
            message_timestamp_before_max_ms: -1,
            ..LogConfig::default()
        },
        LogConfig {
            max_message_bytes: u32::MAX,
            ..LogConfig::default()
        },
    ] {
        let e = bad.validate().unwrap_err();
        assert!(matches!(e, SegmentError::InvalidConfig { .. }), "{e}");
        assert_eq!(e.kafka_error(), KafkaError::InvalidConfig);
    }
}

#[test]
fn offsets_never_overflow() {
    let (_d, log, _t) = leader_log(LogConfig::default());
    log.truncate_fully_and_start_at(i64::MAX - 2).unwrap();
    let e = log
        .append_as_leader(&plain(3, NOW), 0, AppendOrigin::Client)
        .unwrap_err();
    assert!(matches!(e, SegmentError::InvalidArgument { .. }), "{e}");
    assert_eq!(log.log_end_offset(), i64::MAX - 2);
    let a = log
        .append_as_leader(&plain(2, NOW), 0, AppendOrigin::Client)
        .unwrap();
    assert_eq!(a.last_offset, i64::MAX - 1);
    assert!(log
        .append_as_leader(&plain(1, NOW), 0, AppendOrigin::Client)
        .is_err());
}

/// Kafka's `UnifiedLog.append` assigns a new leader epoch's start offset before the
/// segment-size and producer-state checks (docs/kafka-behaviour.md#leader-append-epoch):
/// a refused batch and a duplicate leave the epoch at the offset they would have had.
#[test]
fn a_new_epoch_starts_even_when_the_batch_is_refused_after_validation() {
    let (_d, log, _t) = leader_log(LogConfig::default());
    let c = AppendOrigin::Client;
    log.append_as_leader(&produce(1, 0, 0, 2, NOW), 0, c)
        .unwrap();
    assert_eq!(log.leader_epochs(), vec![(0, 0)]);
    // A sequence gap at epoch 1: refused, but epoch 1 starts at 2.
    let (e, _, _) = rejected(log.append_as_leader(&produce(1, 0, 5, 1, NOW), 1, c));
    assert_eq!(e, KafkaError::OutOfOrderSequenceNumber);
    assert_eq!(log.leader_epochs(), vec![(0, 0), (1, 2)]);
    assert_eq!(log.log_end_offset(), 2);
    // A retry at epoch 2: a duplicate, and epoch 2 starts at 2 (replacing epoch 1).
    let a = log
        .append_as_leader(&produce(1, 0, 0, 2, NOW), 2, c)
        .unwrap();
    assert!(a.duplicate);
    assert_eq!(log.leader_epochs(), vec![(0, 0), (2, 2)]);
    // A validation failure (a compacted topic's keyless record) comes first: no epoch.
    let (_d2, log2, _t2) = leader_log(LogConfig {
        compact: true,
        ..LogConfig::default()
    });
    let keyless = BatchBuilder::new(0)
        .record(NOW, None, Some(b"v"))
        .build()
        .unwrap();
    assert_eq!(
        rejected(log2.append_as_leader(&keyless, 3, c)).0,
        KafkaError::InvalidRecord
    );
    assert!(log2.leader_epochs().is_empty());
}

/// A clock that moves `STEP` ms forward on every read and counts its reads.
#[derive(Debug, Default)]
struct TickingClock(std::sync::atomic::AtomicI64);

impl TickingClock {
    const STEP: i64 = 1_000;

    fn reads(&self) -> i64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl segment::time::Time for TickingClock {
    fn milliseconds(&self) -> i64 {
        NOW + Self::STEP * self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    }
}

/// One clock read an append: the LogAppendTime stamp and the `segment.ms` roll check
/// see the same time (docs/kafka-behaviour.md#leader-append-one-clock-read), so the
/// segments' boundaries agree with the stamps the batches carry.
#[test]
fn the_stamp_and_the_roll_check_share_one_clock_read() {
    let clock = Arc::new(TickingClock::default());
    let dir = tmpdir();
    let cfg = LogConfig {
        message_timestamp_type: TimestampType::LogAppendTime,
        segment_ms: TickingClock::STEP,
        ..LogConfig::default()
    };
    let log = open_log(dir.path(), cfg, clock.clone());
    let c = AppendOrigin::Client;
    let before = clock.reads();
    let a = log.append_as_leader(&plain(2, 0), 0, c).unwrap();
    assert_eq!(clock.reads() - before, 1, "one clock read a batch");
    let b = log.append_as_leader(&plain(2, 0), 0, c).unwrap();
    assert_eq!(clock.reads() - before, 2, "one clock read a batch");
    // Stamped `segment.ms` apart, not more: no roll (Kafka rolls when the time waited
    // exceeds `segment.ms`).
    assert_eq!(b.log_append_time - a.log_append_time, TickingClock::STEP);
    assert_eq!(log.segments().number_of_segments(), 1);
    // The next is stamped 2·`segment.ms` after the first batch: it starts a segment.
    let c3 = log.append_as_leader(&plain(2, 0), 0, c).unwrap();
    assert_eq!(
        c3.log_append_time - a.log_append_time,
        2 * TickingClock::STEP
    );
    assert_eq!(log.segments().number_of_segments(), 2);
    assert_eq!(log.segments().active_segment().unwrap().base_offset(), 4);
}
