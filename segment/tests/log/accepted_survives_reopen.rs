//! Issue 37, item 2: every batch the log accepts survives a reopen
//! (docs/kafka-behaviour.md#accepted-survives-reopen).
//!
//! Property: a random history of what the validators accept — client batches through
//! `append_as_leader` (plain, idempotent and transactional producers, every codec, every
//! topic `compression.type`, CreateTime and LogAppendTime, retries answered as
//! duplicates), coordinator batches (end-transaction markers and keyed data batches),
//! and follower appends through `Log::append` (magic 2 with every codec, idempotent and
//! transactional producers with their markers, several batches per call; magic 0 and 1,
//! plain and in gzip/snappy/lz4 wrappers), with leader epoch bumps, flushes and rolls —
//! then four reopens of the same directory:
//!
//! 1. `close`, then `open` (clean);
//! 2. a crash (`close_handlers`: no close, the active indexes left untrimmed), `open`;
//! 3. `close`, the clean-shutdown marker and the recovery-point checkpoint deleted: every
//!    segment is recovered, so re-validated;
//! 4. a crash with the marker, the recovery point, every producer snapshot and the
//!    `leader-epoch-checkpoint` deleted: producer state and epochs are rebuilt from the
//!    `.log` bytes alone.
//!
//! After each: the whole log reads back byte for byte as the appends stored it (each
//! append's stored batch read right after it), at the same offsets, with nothing cut (no
//! truncation reported), the same log end offset, producer state (as a snapshot holds
//! it), ongoing transactions, aborted transactions, last stable offset and leader epochs
//! (Kafka's load drops epochs starting at or after the log end); and one more batch of
//! every producer still continues its sequence.
//!
//! `PROPTEST_CASES` raises the case count (default 128, a few seconds in a debug build).

use std::path::Path;

use proptest::prelude::*;

use crate::common::*;
use segment::record::{
    batches_from, legacy_wrapper, BatchBuilder, CompressionType, ControlRecordType, LegacyMessage,
    RecordBatch,
};
use segment::{AppendOrigin, Log, LogConfig, MockTime, TimestampType, TopicCompression};

const NOW: i64 = 1_000_000; // `common::mock`'s clock
const CLEAN_SHUTDOWN: &str = ".kafka_cleanshutdown";
const RECOVERY_POINT: &str = "recovery-point";

const CODECS: [CompressionType; 5] = CompressionType::ALL;

const TOPIC_CODECS: [TopicCompression; 6] = TopicCompression::ALL;

/// One record of a generated batch: key, value, timestamp delta from the clock, headers.
#[derive(Debug, Clone)]
struct Rec {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    ts: i64,
    headers: usize,
}

#[derive(Debug, Clone)]
enum Op {
    /// A client batch through `append_as_leader` from producer slot `p` (0: no producer
    /// id, 1-2: idempotent, 3-4: transactional).
    Produce {
        p: usize,
        codec: usize,
        recs: Vec<Rec>,
    },
    /// The same bytes as producer `p`'s last batch again: a duplicate.
    Retry {
        p: usize,
    },
    /// The coordinator ends producer `p`'s transaction (3-4).
    EndTxn {
        p: usize,
        commit: bool,
    },
    /// A keyed coordinator batch without producer id (as the group coordinator writes).
    CoordinatorData {
        codec: usize,
        recs: Vec<Rec>,
    },
    /// The producer `p` bumps its epoch (sequence back to 0), when not in a transaction.
    BumpProducer {
        p: usize,
    },
    /// Follower appends of `n` v2 batches from follower producer slots (same numbering,
    /// other producer ids), one call; a transactional slot's batch may be its marker.
    Replicate {
        batches: Vec<(usize, usize, bool, Vec<Rec>)>,
    },
    /// A follower append of legacy messages: magic, codec (0 none, 1 gzip, 2 snappy, 3 lz4).
    Legacy {
        magic: i8,
        codec: usize,
        recs: Vec<Rec>,
    },
    /// A transactional batch the coordinator writes for its own producer (slot 3 or 4 of
    /// the coordinator's producers, as the group coordinator writes transactional offset
    /// commits: no sequence), or that producer's marker.
    CoordinatorTxn {
        p: usize,
        end: Option<bool>,
        codec: usize,
        recs: Vec<Rec>,
    },
    /// A follower append of what a cleaned log holds: a batch whose offsets have gaps, an
    /// empty batch kept for its producer state, or a KRaft leader-change control batch.
    ReplicateCleaned {
        kind: usize,
        p: usize,
        codec: usize,
        recs: Vec<Rec>,
    },
    /// The leader epoch moves up by one.
    BumpEpoch,
    Flush,
}

fn rec() -> impl Strategy<Value = Rec> {
    (
        prop::option::weighted(0.7, prop::collection::vec(any::<u8>(), 0..8)),
        prop::option::weighted(0.9, prop::collection::vec(any::<u8>(), 0..160)),
        -5_000i64..5_000,
        0usize..3,
    )
        .prop_map(|(key, value, ts, headers)| Rec {
            key,
            value,
            ts,
            headers,
        })
}

fn recs() -> impl Strategy<Value = Vec<Rec>> {
    prop::collection::vec(rec(), 1..6)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0usize..5, 0usize..5, recs()).prop_map(|(p, codec, recs)| Op::Produce { p, codec, recs }),
        1 => (0usize..5).prop_map(|p| Op::Retry { p }),
        3 => (3usize..5, any::<bool>()).prop_map(|(p, commit)| Op::EndTxn { p, commit }),
        1 => (0usize..5, recs()).prop_map(|(codec, recs)| Op::CoordinatorData { codec, recs }),
        1 => (1usize..5).prop_map(|p| Op::BumpProducer { p }),
        4 => prop::collection::vec((0usize..5, 0usize..5, prop::bool::weighted(0.3), recs()), 1..4)
            .prop_map(|batches| Op::Replicate { batches }),
        2 => (0i8..2, 0usize..4, recs()).prop_map(|(magic, codec, recs)| Op::Legacy { magic, codec, recs }),
        2 => (3usize..5, prop::option::weighted(0.4, any::<bool>()), 0usize..5, recs())
            .prop_map(|(p, end, codec, recs)| Op::CoordinatorTxn { p, end, codec, recs }),
        2 => (0usize..3, 0usize..5, 0usize..5, recs())
            .prop_map(|(kind, p, codec, recs)| Op::ReplicateCleaned { kind, p, codec, recs }),
        1 => Just(Op::BumpEpoch),
        1 => Just(Op::Flush),
    ]
}

/// A record's key, value and timestamp.
type Plain = (Option<Vec<u8>>, Option<Vec<u8>>, i64);

/// A producer slot of the model: what the next batch must carry.
#[derive(Debug, Clone, Default)]
struct Producer {
    epoch: i16,
    seq: i32,
    in_txn: bool,
    /// The log has an entry of this producer: its next sequence must follow the last.
    known: bool,
    last: Option<(Vec<u8>, i64, i64)>,
}

fn header_pairs(n: usize) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
    (0..n)
        .map(|i| {
            (
                format!("h{i}").into_bytes(),
                (i % 2 == 0).then(|| vec![i as u8; i]),
            )
        })
        .collect()
}

/// `recs` appended to `b`, timestamps relative to the clock.
fn add_records(mut b: BatchBuilder, recs: &[Rec], keyed: bool) -> BatchBuilder {
    for r in recs {
        let h = header_pairs(r.headers);
        let hs: Vec<(&[u8], Option<&[u8]>)> =
            h.iter().map(|(k, v)| (&k[..], v.as_deref())).collect();
        let key = match (&r.key, keyed) {
            (Some(k), _) => Some(&k[..]),
            (None, true) => Some(&b"key"[..]),
            (None, false) => None,
        };
        b = b.record_with_headers(NOW + r.ts, key, r.value.as_deref(), &hs);
    }
    b
}

fn pid(slot: usize, follower: bool) -> i64 {
    slot as i64 + if follower { 10 } else { 0 }
}

/// What the whole log must show after a reopen.
#[derive(PartialEq)]
struct Seen {
    log_end: i64,
    bytes: Vec<u8>,
    producers: Vec<segment::producer::snapshot::SnapshotEntry>,
    ongoing: Vec<(i64, i64)>,
    aborted: Vec<(i64, i64, i64, i64)>,
    lso: i64,
    epochs: Vec<(i32, i64)>,
}

impl std::fmt::Debug for Seen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seen")
            .field("log_end", &self.log_end)
            .field("bytes", &self.bytes.len())
            .field("producers", &self.producers)
            .field("ongoing", &self.ongoing)
            .field("aborted", &self.aborted)
            .field("lso", &self.lso)
            .field("epochs", &self.epochs)
            .finish()
    }
}

/// The leader epochs after a recovery from offset `from` (`None`: nothing recovered) that
/// started with the checkpoint's `before`, by Kafka's rule: `LogSegment.recover` assigns a
/// v2 batch's epoch when it is above the latest; the load then drops epochs starting at
/// or after the log end (`truncateFromEnd`).
fn recovered_epochs(
    before: &[(i32, i64)],
    bytes: &[u8],
    from: Option<i64>,
    log_end: i64,
) -> Vec<(i32, i64)> {
    let mut out = before.to_vec();
    if let Some(from) = from {
        for b in batches_from(bytes, 0) {
            let b = b.unwrap();
            if b.magic() < 2 || b.last_offset() < from {
                continue;
            }
            let e = b.partition_leader_epoch();
            if e >= 0 && out.last().is_none_or(|&(l, _)| e > l) {
                out.push((e, b.base_offset()));
            }
        }
    }
    out.retain(|&(_, start)| start < log_end);
    out
}

/// The base offset of the first segment the open recovered (recovery covers the
/// segments from the recovery point on: the last `segments_recovered`).
fn recovered_from(log: &Log) -> Option<i64> {
    let bases = log.segments().base_offsets();
    let n = log.stats().scanned_segments() as usize;
    (n > 0).then(|| bases[bases.len().saturating_sub(n)])
}

fn all_bytes(log: &Log) -> Vec<u8> {
    let mut out = Vec::new();
    let mut o = log.log_start_offset();
    while o < log.log_end_offset() {
        let r = log.read(o, 1 << 20).unwrap();
        let mut last = None;
        for b in batches_from(&r.records, 0) {
            let b = b.unwrap();
            out.extend_from_slice(b.as_bytes());
            last = Some(b.last_offset());
        }
        o = last.expect("a read below the log end returns a batch") + 1;
    }
    out
}

fn seen(log: &Log) -> Seen {
    let ps = log.producer_state();
    let mut producers = ps.snapshot_entries();
    producers.sort_by_key(|e| e.producer_id);
    Seen {
        log_end: log.log_end_offset(),
        bytes: all_bytes(log),
        producers,
        ongoing: ps.ongoing_txns(),
        aborted: log
            .collect_aborted_txns(0, log.log_end_offset())
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t.producer_id,
                    t.first_offset,
                    t.last_offset,
                    t.last_stable_offset,
                )
            })
            .collect(),
        lso: log.last_stable_offset(),
        epochs: log.leader_epochs(),
    }
}

fn remove_matching(dir: &Path, keep: impl Fn(&str) -> bool) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if !keep(&name) {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
}

struct Run {
    log: Log,
    producers: [Producer; 5],
    followers: [Producer; 5],
    coordinator: [Producer; 5],
    epoch: i32,
    /// The batches stored, concatenated, in offset order.
    stored: Vec<u8>,
}

impl Run {
    fn leo(&self) -> i64 {
        self.log.log_end_offset()
    }

    /// The batch the leader stored at `first..=last`, checked against what was sent.
    fn record_stored(&mut self, first: i64, last: i64, sent: &[u8], lat: bool) {
        let r = self.log.read(first, 1).unwrap();
        let b = batches_from(&r.records, 0).next().unwrap().unwrap();
        assert_eq!((b.base_offset(), b.last_offset()), (first, last));
        assert!(b.is_valid(), "the leader stored a batch with a bad CRC");
        assert_eq!(b.partition_leader_epoch(), self.epoch);
        let stored = RecordBatch::new(b.as_bytes()).unwrap();
        let input = RecordBatch::new(sent).unwrap();
        let values = |x: &RecordBatch<'_>| -> Vec<Plain> {
            x.records()
                .unwrap()
                .map(|r| {
                    let r = r.unwrap();
                    (
                        r.key().map(<[u8]>::to_vec),
                        r.value().map(<[u8]>::to_vec),
                        r.timestamp,
                    )
                })
                .collect()
        };
        let (s, i) = (values(&stored), values(&input));
        assert_eq!(s.len(), i.len());
        for (s, i) in s.iter().zip(&i) {
            assert_eq!((&s.0, &s.1), (&i.0, &i.1));
            if lat {
                assert_eq!(s.2, NOW);
            } else {
                assert_eq!(s.2, i.2);
            }
        }
        self.stored.extend_from_slice(b.as_bytes());
    }

    fn leader(&mut self, bytes: &[u8], origin: AppendOrigin, lat: bool) -> (i64, i64) {
        let leo = self.leo();
        let info = self
            .log
            .append_as_leader(bytes, self.epoch, origin)
            .unwrap_or_else(|e| panic!("the leader refused a valid batch: {e}"));
        assert!(!info.duplicate);
        assert_eq!(info.first_offset, leo);
        self.record_stored(info.first_offset, info.last_offset, bytes, lat);
        (info.first_offset, info.last_offset)
    }

    fn apply(&mut self, op: &Op, lat: bool) {
        match op {
            Op::Produce { p, codec, recs } => {
                let slot = &self.producers[*p];
                let mut b = BatchBuilder::new(0).compression(CODECS[*codec]);
                if *p > 0 {
                    b = b
                        .producer(pid(*p, false), slot.epoch, slot.seq)
                        .transactional(*p >= 3);
                }
                let bytes = add_records(b, recs, false).build().unwrap();
                let (first, last) = self.leader(&bytes, AppendOrigin::Client, lat);
                let slot = &mut self.producers[*p];
                slot.seq = slot.seq.wrapping_add(recs.len() as i32) & i32::MAX;
                slot.in_txn |= *p >= 3;
                slot.known = true;
                slot.last = Some((bytes, first, last));
            }
            Op::Retry { p } => {
                let Some((bytes, first, last)) = self.producers[*p].last.clone() else {
                    return;
                };
                if *p == 0 {
                    return; // without a producer id a retry is a new batch
                }
                let leo = self.leo();
                let info = self
                    .log
                    .append_as_leader(&bytes, self.epoch, AppendOrigin::Client)
                    .unwrap();
                assert!(info.duplicate, "a retry of the last batch is a duplicate");
                assert_eq!((info.first_offset, info.last_offset), (first, last));
                assert_eq!(self.leo(), leo);
            }
            Op::EndTxn { p, commit } => {
                let slot = &self.producers[*p];
                let kind = if *commit {
                    ControlRecordType::Commit
                } else {
                    ControlRecordType::Abort
                };
                let bytes = BatchBuilder::new(0)
                    .producer(pid(*p, false), slot.epoch, -1)
                    .build_end_txn_marker(kind, 3, NOW)
                    .unwrap();
                self.leader(&bytes, AppendOrigin::Coordinator, lat);
                let slot = &mut self.producers[*p];
                slot.in_txn = false;
                if !slot.known {
                    // The marker created the producer's entry without a sequence: it
                    // starts at 0 (Kafka's `inSequence(-1, 0)`).
                    slot.known = true;
                    slot.seq = 0;
                }
            }
            Op::CoordinatorData { codec, recs } => {
                let b = BatchBuilder::new(0).compression(CODECS[*codec]);
                let bytes = add_records(b, recs, true).build().unwrap();
                self.leader(&bytes, AppendOrigin::Coordinator, lat);
            }
            Op::BumpProducer { p } => {
                for slots in [
                    &mut self.producers,
                    &mut self.followers,
                    &mut self.coordinator,
                ] {
                    let s = &mut slots[*p];
                    if !s.in_txn {
                        s.epoch += 1;
                        s.seq = 0;
                        s.last = None;
                    }
                }
            }
            Op::Replicate { batches } => {
                let mut input = Vec::new();
                let mut next = self.leo();
                for (p, codec, marker, recs) in batches {
                    let slot = &mut self.followers[*p];
                    let base = BatchBuilder::new(next).partition_leader_epoch(self.epoch);
                    let bytes = if *marker && *p >= 3 {
                        let kind = if recs.len() % 2 == 0 {
                            ControlRecordType::Commit
                        } else {
                            ControlRecordType::Abort
                        };
                        slot.in_txn = false;
                        base.producer(pid(*p, true), slot.epoch, -1)
                            .build_end_txn_marker(kind, 5, NOW)
                            .unwrap()
                    } else {
                        let mut b = base.compression(CODECS[*codec]);
                        if *p > 0 {
                            b = b
                                .producer(pid(*p, true), slot.epoch, slot.seq)
                                .transactional(*p >= 3);
                            slot.seq = slot.seq.wrapping_add(recs.len() as i32) & i32::MAX;
                            slot.in_txn |= *p >= 3;
                        }
                        add_records(b, recs, false).build().unwrap()
                    };
                    next = RecordBatch::new(&bytes).unwrap().last_offset() + 1;
                    input.extend_from_slice(&bytes);
                }
                self.log
                    .append(&input)
                    .unwrap_or_else(|e| panic!("the follower refused valid batches: {e}"));
                self.stored.extend_from_slice(&input);
            }
            Op::Legacy { magic, codec, recs } => {
                let leo = self.leo();
                let n = recs.len() as i64;
                let magic = *magic;
                fn msg(magic: i8, r: &Rec, offset: i64) -> LegacyMessage<'_> {
                    LegacyMessage {
                        magic,
                        offset,
                        timestamp: NOW + r.ts,
                        log_append_time: false,
                        key: r.key.as_deref(),
                        value: r.value.as_deref(),
                    }
                }
                let mut input = Vec::new();
                if *codec == 0 {
                    for (i, r) in recs.iter().enumerate() {
                        msg(magic, r, leo + i as i64).write_to(&mut input).unwrap();
                    }
                } else {
                    let codec = CODECS[*codec];
                    // Magic 1: inner offsets relative, the wrapper's the last absolute one;
                    // magic 0: absolute offsets.
                    let inner: Vec<LegacyMessage<'_>> = recs
                        .iter()
                        .enumerate()
                        .map(|(i, r)| {
                            let o = if magic == 1 { i as i64 } else { leo + i as i64 };
                            msg(magic, r, o)
                        })
                        .collect();
                    let wrapper = LegacyMessage {
                        magic,
                        offset: leo + n - 1,
                        timestamp: NOW,
                        log_append_time: false,
                        key: None,
                        value: None,
                    };
                    input = legacy_wrapper(wrapper, codec, &inner).unwrap();
                }
                self.log
                    .append(&input)
                    .unwrap_or_else(|e| panic!("the follower refused valid legacy input: {e}"));
                assert_eq!(self.leo(), leo + n);
                self.stored.extend_from_slice(&input);
            }
            Op::CoordinatorTxn {
                p,
                end,
                codec,
                recs,
            } => {
                let id = pid(*p, false) + 20;
                let epoch = self.coordinator[*p].epoch;
                let bytes = match end {
                    Some(commit) => {
                        let kind = if *commit {
                            ControlRecordType::Commit
                        } else {
                            ControlRecordType::Abort
                        };
                        BatchBuilder::new(0)
                            .producer(id, epoch, -1)
                            .build_end_txn_marker(kind, 3, NOW)
                            .unwrap()
                    }
                    None => {
                        let b = BatchBuilder::new(0)
                            .compression(CODECS[*codec])
                            .producer(id, epoch, -1)
                            .transactional(true);
                        add_records(b, recs, true).build().unwrap()
                    }
                };
                self.leader(&bytes, AppendOrigin::Coordinator, lat);
            }
            Op::ReplicateCleaned {
                kind,
                p,
                codec,
                recs,
            } => {
                let leo = self.leo();
                let slot = &mut self.followers[*p];
                let mut b = BatchBuilder::new(leo)
                    .partition_leader_epoch(self.epoch)
                    .compression(CODECS[*codec]);
                // Cleaned batches of an idempotent producer keep its fields; the next
                // batch continues after the offsets the batch spans.
                let span = 2 * recs.len() as i64;
                if *p > 0 && *kind < 2 && !slot.in_txn {
                    b = b.producer(pid(*p, true), slot.epoch, slot.seq);
                    slot.seq = slot.seq.wrapping_add(span as i32) & i32::MAX;
                }
                let bytes = match kind {
                    0 => {
                        for (i, r) in recs.iter().enumerate() {
                            b = b.record_at(
                                leo + 2 * i as i64 + 1,
                                NOW + r.ts,
                                Some(b"k"),
                                r.value.as_deref(),
                                &[],
                            );
                        }
                        b.build().unwrap()
                    }
                    1 => b.build_empty(leo + span - 1, NOW).unwrap(),
                    _ => BatchBuilder::new(leo)
                        .partition_leader_epoch(self.epoch)
                        .control(true)
                        .record(
                            NOW,
                            Some(&ControlRecordType::LeaderChange.key_bytes()),
                            Some(&[0, 0, 0, 0, 0, 1, 0, 0, 0, 0]),
                        )
                        .build()
                        .unwrap(),
                };
                self.log
                    .append(&bytes)
                    .unwrap_or_else(|e| panic!("the follower refused a cleaned batch: {e}"));
                self.stored.extend_from_slice(&bytes);
            }
            Op::BumpEpoch => self.epoch += 1,
            Op::Flush => self.log.flush().unwrap(),
        }
    }
}

fn reopen(dir: &Path, cfg: &LogConfig, t: &MockTime) -> Log {
    let clock: segment::Clock = std::sync::Arc::new(t.clone());
    open_log(dir, cfg.clone(), clock)
}

/// Checks the reopened `log` against `want`, whose epochs are those of the checkpoint
/// the open found: the epochs the recovery must add to them are added here first.
fn check(log: &Log, want: &mut Seen, how: &str) {
    assert_eq!(log.stats().truncated_offsets(), None, "{how}: recovery cut");
    want.epochs = recovered_epochs(&want.epochs, &want.bytes, recovered_from(log), want.log_end);
    let got = seen(log);
    assert_eq!(got.log_end, want.log_end, "{how}: log end");
    if got.bytes != want.bytes {
        let at = got
            .bytes
            .iter()
            .zip(&want.bytes)
            .position(|(a, b)| a != b)
            .unwrap_or(got.bytes.len().min(want.bytes.len()));
        panic!(
            "{how}: the bytes read back differ from byte {at} ({} read, {} stored)",
            got.bytes.len(),
            want.bytes.len()
        );
    }
    assert_eq!(got, *want, "{how}");
}

/// Producer slots whose first sequence is 0, or near `i32::MAX` (a new producer may start
/// anywhere; its sequence then wraps to 0).
fn start_seqs(wrap: bool) -> [Producer; 5] {
    let mut p: [Producer; 5] = Default::default();
    if wrap {
        for s in &mut p {
            s.seq = i32::MAX - 3;
        }
    }
    p
}

fn run(ops: &[Op], cfg: LogConfig, wrap: bool) {
    let dir = tmpdir();
    let (t, clock) = mock();
    let lat = cfg.message_timestamp_type == TimestampType::LogAppendTime;
    let log = open_log(dir.path(), cfg.clone(), clock);
    let mut run = Run {
        log,
        producers: start_seqs(wrap),
        followers: start_seqs(wrap),
        coordinator: Default::default(),
        epoch: 0,
        stored: Vec::new(),
    };
    for op in ops {
        run.apply(op, lat);
    }
    let mut want = seen(&run.log);
    assert_eq!(want.bytes, run.stored, "the log serves what was appended");
    let Run { log, .. } = run;

    log.close().unwrap();
    let log = reopen(dir.path(), &cfg, &t);
    check(&log, &mut want, "clean reopen");

    log.close_handlers();
    let log = reopen(dir.path(), &cfg, &t);
    check(&log, &mut want, "reopen after a crash");

    log.close().unwrap();
    remove_matching(dir.path(), |n| n != CLEAN_SHUTDOWN && n != RECOVERY_POINT);
    let log = reopen(dir.path(), &cfg, &t);
    assert!(log.stats().scanned_segments() > 0 || want.log_end == 0);
    check(&log, &mut want, "forced recovery");

    log.close_handlers();
    remove_matching(dir.path(), |n| {
        n != CLEAN_SHUTDOWN
            && n != RECOVERY_POINT
            && n != "leader-epoch-checkpoint"
            && !n.ends_with(".snapshot")
    });
    let log = reopen(dir.path(), &cfg, &t);
    // Without the checkpoint, the epochs are those the batches carry: an epoch started
    // by a leader append that stored nothing (a duplicate) is not among them.
    want.epochs.clear();
    check(&log, &mut want, "recovery from the .log bytes alone");
    log.close().unwrap();
}

fn topic() -> impl Strategy<Value = LogConfig> {
    (
        prop::sample::select(vec![2_400u64, 6_000, 1 << 20]),
        prop::sample::select(vec![1u64, 256, 4096]),
        0usize..6,
        any::<bool>(),
    )
        .prop_map(|(segment_bytes, interval, codec, lat)| LogConfig {
            segment_bytes,
            compression_type: TOPIC_CODECS[codec],
            message_timestamp_type: if lat {
                TimestampType::LogAppendTime
            } else {
                TimestampType::CreateTime
            },
            ..config(interval, 4096)
        })
}

/// `PROPTEST_CASES` if set, else 128.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(128)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]
    #[test]
    fn every_accepted_batch_survives_a_reopen(
        ops in prop::collection::vec(op(), 1..40),
        cfg in topic(),
        wrap in prop::bool::weighted(0.3),
    ) {
        run(&ops, cfg, wrap);
    }
}

/// A control batch without a producer id is not an end-transaction marker to Kafka: its
/// control record is never parsed (`UnifiedLog.analyzeAndValidateProducerState` and
/// `LogSegment.updateProducerState` only look at batches with `hasProducerId`), so one
/// whose record is not a well-formed marker is appended by a follower and by the
/// coordinator, and kept by recovery (docs/kafka-behaviour.md#accepted-survives-reopen).
#[test]
fn a_control_batch_without_producer_id_is_not_parsed() {
    let dir = tmpdir();
    let (t, clock) = mock();
    let cfg = LogConfig::default();
    let log = open_log(dir.path(), cfg.clone(), clock);
    // A COMMIT key with a 2-byte value (a marker value has 6), and a key of 2 bytes.
    let odd = |base: i64, key: &[u8]| {
        BatchBuilder::new(base)
            .partition_leader_epoch(0)
            .control(true)
            .record(NOW, Some(key), Some(&[0, 1]))
            .build()
            .unwrap()
    };
    let commit_key = ControlRecordType::Commit.key_bytes();
    let a = odd(0, &commit_key);
    log.append(&a)
        .expect("a follower appends it, as Kafka's does");
    let b = odd(1, &[0, 1]);
    log.append(&b)
        .expect("a follower appends it, as Kafka's does");
    let info = log
        .append_as_leader(&odd(0, &commit_key), 0, AppendOrigin::Coordinator)
        .expect("the coordinator may write it, as to Kafka's leader");
    assert_eq!(info.first_offset, 2);
    let want = all_bytes(&log);
    log.close_handlers();
    remove_matching(dir.path(), |n| n != CLEAN_SHUTDOWN && n != RECOVERY_POINT);
    let log = reopen(dir.path(), &cfg, &t);
    assert_eq!(log.stats().truncated_offsets(), None);
    assert_eq!(log.log_end_offset(), 3);
    assert_eq!(all_bytes(&log), want);
}

/// Kafka 4.4's follower append clears the leader-epoch cache, and flushes the empty
/// checkpoint, when it appends a magic 0 or 1 batch (`UnifiedLog.append`: "Clearing
/// leader epoch cache after unexpected append with message format v{}"), so that a later
/// election falls back to truncation by high watermark; later v2 batches start the
/// epochs again (docs/kafka-behaviour.md#legacy-append-clears-epochs).
#[test]
fn a_legacy_follower_append_clears_the_leader_epochs() {
    let dir = tmpdir();
    let (t, clock) = mock();
    let cfg = LogConfig::default();
    let log = open_log(dir.path(), cfg.clone(), clock);
    let v2 = |base: i64, epoch: i32| {
        BatchBuilder::new(base)
            .partition_leader_epoch(epoch)
            .record(NOW, None, Some(b"v"))
            .build()
            .unwrap()
    };
    log.append(&v2(0, 3)).unwrap();
    log.append(&v2(1, 5)).unwrap();
    assert_eq!(log.leader_epochs(), vec![(3, 0), (5, 1)]);
    let legacy = LegacyMessage::v1(2, NOW, b"old").to_vec().unwrap();
    log.append(&legacy).unwrap();
    assert_eq!(
        log.leader_epochs(),
        vec![],
        "cleared, as Kafka's clearAndFlush"
    );
    let checkpoint = std::fs::read_to_string(dir.path().join("leader-epoch-checkpoint")).unwrap();
    assert_eq!(
        checkpoint, "0\n0\n",
        "the empty checkpoint is written at once"
    );
    // A later v2 batch starts the epochs again; a clean reopen keeps what the cache holds.
    log.append(&v2(3, 5)).unwrap();
    assert_eq!(log.leader_epochs(), vec![(5, 3)]);
    log.close().unwrap();
    let log = reopen(dir.path(), &cfg, &t);
    assert_eq!(log.leader_epochs(), vec![(5, 3)]);
    log.close().unwrap();
}

/// An epoch that recovery finds in the batches but the checkpoint lacks (its write lost
/// in a crash) is written to the checkpoint at once, as Kafka's `LeaderEpochFileCache.assign`
/// writes the file on every change, also from `LogSegment.recover`: a later clean
/// reopen, which recovers nothing, must still know it
/// (docs/kafka-behaviour.md#recovered-epochs-checkpointed).
#[test]
fn epochs_recovery_assigns_are_checkpointed() {
    let dir = tmpdir();
    let (t, clock) = mock();
    let cfg = LogConfig::default();
    let log = open_log(dir.path(), cfg.clone(), clock);
    for (base, epoch) in [(0, 0), (1, 3)] {
        let b = BatchBuilder::new(base)
            .partition_leader_epoch(epoch)
            .record(NOW, None, Some(b"v"))
            .build()
            .unwrap();
        log.append(&b).unwrap();
    }
    log.close().unwrap();
    // The second epoch's checkpoint write was lost; the batches and nothing else say so.
    std::fs::write(dir.path().join("leader-epoch-checkpoint"), "0\n1\n0 0\n").unwrap();
    remove_matching(dir.path(), |n| n != CLEAN_SHUTDOWN && n != RECOVERY_POINT);
    let log = reopen(dir.path(), &cfg, &t);
    assert_eq!(log.leader_epochs(), vec![(0, 0), (3, 1)], "recovered");
    log.close().unwrap();
    let log = reopen(dir.path(), &cfg, &t);
    assert_eq!(
        log.leader_epochs(),
        vec![(0, 0), (3, 1)],
        "kept after a clean reopen"
    );
    log.close().unwrap();
}
