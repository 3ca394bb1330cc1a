//! K4 (`k4-leader`): the leader path, differential against Kafka 4.4's own `UnifiedLog`.
//!
//! Seeded workloads of leader operations run on our `Log` (opened with
//! `Log::options().manual_high_watermark(0)` and a mock clock) and on Kafka's `UnifiedLog`
//! in-process (the helper's `LeaderOracle`: a manual `Time`, a scheduler that runs Kafka's
//! one-shot tasks right after the operation that scheduled them), each in a partition
//! directory of its own. The operations are `append_as_leader` (Kafka's `appendAsLeader`,
//! origin CLIENT or COORDINATOR), `update_high_watermark`, `read_with` (Kafka's `read`, at
//! each isolation, with and without `minOneMessage`), `fetch_offset_by_timestamp` (the
//! ListOffsets sentinels −1..−5 and real timestamps), a clock advance, a roll, and finally a
//! clean close. The batches are built at base offset 0, as a producer sends them, with no
//! partition leader epoch (end-txn markers too, as a coordinator sends them: the leader
//! path under test stamps its own). Each is built twice: by our `BatchBuilder` and by
//! Kafka's client classes in the helper (`MemoryRecords.withRecords`, a
//! `MemoryRecordsBuilder`, and `withEndTransactionMarker`), and about half the appends
//! feed both sides Kafka's bytes. Kafka's build is the truth of what a producer sends:
//! ours must equal it whole, or, compressed, in everything but the compressed bytes
//! (the same header but length and CRC, the same records). Sequences wrap as Kafka's
//! (`incrementSequence`: past `i32::MAX` to 0).
//!
//! Case `i` has the kind `KINDS[i % 6]`, so every run has every kind:
//!
//! * idempotent producers: in-order batches, a retry of one of the last 5 batches (a
//!   duplicate: nothing appended, the original offsets answered), sequence gaps, producer
//!   epoch bumps and fenced (older) epochs, plain producers between them;
//! * transactional producers: overlapping transactions committed and aborted with end-txn
//!   markers appended with origin COORDINATOR, a stale coordinator epoch (fenced), a marker
//!   from a client (refused), epoch bumps through a marker, reads at TXN_COMMITTED with
//!   their aborted-transaction lists;
//! * LogAppendTime, with the topic's compression.type differing from the producer's;
//! * CreateTime out of order, with `message.timestamp.before/after.max.ms` and timestamps
//!   outside them, and now and then a batch whose first record's length is an over-long
//!   varint under a valid CRC (what Kafka's record walk answers to it): uncompressed, or
//!   in the decompressed records of a batch of any codec, recompressed with that codec;
//! * limits: `max.message.bytes` below a batch (RECORD_TOO_LARGE) or `segment.bytes` below
//!   a batch (RECORD_BATCH_TOO_LARGE), size rolls;
//! * a compacted topic, with keyless records (INVALID_RECORD and its record errors).
//!
//! Each case picks its topic `compression.type` (producer, uncompressed or a codec) and its
//! producers' codecs among all five.
//!
//! Compared: every answer, line by line in the helper's format (offsets, the LogAppendInfo
//! fields both have, errors by Kafka's `Errors` name with the record errors' batch indices,
//! the read bytes and aborted transactions, the ListOffsets answers), the last stable
//! offset after every operation, whether an append was a duplicate (Kafka: the log end
//! did not move; ours: `LogAppendInfo::duplicate`), and at the end the partition
//! directories' files byte for byte. Every batch of every read answer and every `.log`,
//! on both sides, must carry a valid CRC. Kafka writes no file ours does
//! not, except none at all here: `partition.metadata` needs a topic id, which neither side
//! is given; our lock file is ours alone and skipped (named in the result line).
//!
//! One documented difference is checked exactly rather than skipped
//! (`docs/kafka-behaviour.md#leader-recompression`): when the topic's compression.type is a
//! codec that recompresses a batch, Kafka's Java compressors and ours write different
//! bytes for the same records. Such a case has `index.interval.bytes` 1 and no size rolls,
//! and its reads ask for the whole rest of the log, so that only the bytes can differ:
//! each read answer and the `.log` are then compared batch by batch: equal whole (CRC
//! included), or both compressed with every header field but length and CRC equal, every
//! record decoded equal, and each CRC valid for its own bytes; the `.index`/`.timeindex`
//! entries by offset/timestamp and by the ordinal of the batch their position points at.
//!
//! Our close appends the active segment's final time-index entry, Kafka 4.4's does not
//! (`docs/kafka-behaviour.md#close-no-time-entry`): that entry must be exactly the one
//! Kafka's roll would write, found from Kafka's `.log` (the largest batch max timestamp,
//! at the last offset of the first batch that has it).
//!
//! Sabotages (`cargo xtask kafka --sabotage NAME`): `k4-leader-dup-offsets`,
//! `k4-leader-stale-crc`, `k4-leader-builder-compressed`, `k4-leader-lso-high`,
//! `k4-leader-marker-epoch`, `k4-leader-close-entry`, `k4-leader-prealloc-untrimmed`,
//! `k4-leader-overlong-escapes` ([`Damage`], and the generator's `builder_bug`).
//!
//! Every other round of the case kinds runs with Kafka's `preallocate` on both sides
//! (each new `.log` created at `segment.bytes`, trimmed when the segment rolls): the
//! rolled segments' files must still be equal byte for byte, so a `.log` left
//! preallocated by a roll fails the case. Kafka 4.4's close does not trim the active
//! segment's `.log`, ours does (`docs/kafka-behaviour.md#close-preallocated-log`): that
//! deviation is checked exactly (Kafka's file is ours, then zeros to `segment.bytes`)
//! and counted.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;

use segment::record::{
    compress, decompress, increment_sequence, Attributes, BatchBuilder, CompressionType,
    ControlRecordType, RecordBatch,
};
use segment::{
    AppendOrigin, FetchIsolation, Log, LogConfig, MockTime, TimestampType, TopicCompression,
};

use super::Ctx;

/// Base of the mock clocks (2025-06-15), as the K1 workload.
const BASE_TS: i64 = 1_750_000_000_000;

/// The directory name both sides parse as topic-partition.
const PARTITION: &str = "leader-0";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Idempotent,
    Txn,
    AppendTime,
    CreateTime,
    Limits,
    Compact,
}

const KINDS: [Kind; 6] = [
    Kind::Idempotent,
    Kind::Txn,
    Kind::AppendTime,
    Kind::CreateTime,
    Kind::Limits,
    Kind::Compact,
];

const CODECS: [CompressionType; 5] = CompressionType::ALL;

/// A case's topic config (Kafka's names in [`Topic::props`]).
#[derive(Clone, Debug)]
struct Topic {
    segment_bytes: u32,
    index_interval_bytes: u32,
    log_append_time: bool,
    before_max_ms: i64,
    after_max_ms: i64,
    max_message_bytes: u32,
    /// Kafka's compression.type: `producer`, `uncompressed`, or a codec name.
    compression: &'static str,
    compact: bool,
    /// Kafka's `preallocate`: each new `.log` created at `segment.bytes`, trimmed at roll
    /// and close (`docs/kafka-behaviour.md#case-64`).
    preallocate: bool,
}

impl Topic {
    fn props(&self) -> Vec<(&'static str, String)> {
        vec![
            ("internal.segment.bytes", self.segment_bytes.to_string()),
            (
                "index.interval.bytes",
                self.index_interval_bytes.to_string(),
            ),
            (
                "message.timestamp.type",
                if self.log_append_time {
                    "LogAppendTime"
                } else {
                    "CreateTime"
                }
                .into(),
            ),
            (
                "message.timestamp.before.max.ms",
                self.before_max_ms.to_string(),
            ),
            (
                "message.timestamp.after.max.ms",
                self.after_max_ms.to_string(),
            ),
            ("max.message.bytes", self.max_message_bytes.to_string()),
            ("compression.type", self.compression.into()),
            (
                "cleanup.policy",
                if self.compact { "compact" } else { "delete" }.into(),
            ),
            ("retention.ms", "-1".into()),
            ("preallocate", self.preallocate.to_string()),
        ]
    }

    /// Whether the topic recompresses with a codec (the documented byte difference).
    fn recompresses(&self) -> bool {
        !matches!(self.compression, "producer" | "uncompressed")
    }
}

/// What an append is meant to exercise (the coverage and the findings name it).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
enum What {
    Plain,
    Idempotent,
    Duplicate,
    SequenceGap,
    EpochBump,
    FencedEpoch,
    TxnData,
    Commit,
    Abort,
    StaleCoordinator,
    ClientMarker,
    MarkerEpochBump,
    TooLarge,
    BiggerThanSegment,
    BadTimestamp,
    Keyless,
    LowerLeaderEpoch,
    MalformedLength,
    MalformedLengthCompressed,
}

const WHATS: [What; 19] = [
    What::Plain,
    What::Idempotent,
    What::Duplicate,
    What::SequenceGap,
    What::EpochBump,
    What::FencedEpoch,
    What::TxnData,
    What::Commit,
    What::Abort,
    What::StaleCoordinator,
    What::ClientMarker,
    What::MarkerEpochBump,
    What::TooLarge,
    What::BiggerThanSegment,
    What::BadTimestamp,
    What::Keyless,
    What::LowerLeaderEpoch,
    What::MalformedLength,
    What::MalformedLengthCompressed,
];

impl What {
    fn text(self) -> &'static str {
        match self {
            What::Plain => "a plain producer's batch",
            What::Idempotent => "an idempotent batch in sequence",
            What::Duplicate => "a retry of one of the last 5 batches (a duplicate)",
            What::SequenceGap => "a sequence gap",
            What::EpochBump => "a bumped producer epoch at sequence 0",
            What::FencedEpoch => "an older (fenced) producer epoch",
            What::TxnData => "a transactional batch",
            Self::Commit => "a COMMIT marker from the coordinator",
            What::Abort => "an ABORT marker from the coordinator",
            What::StaleCoordinator => "a marker with a stale coordinator epoch",
            What::ClientMarker => "a marker appended with origin CLIENT",
            What::MarkerEpochBump => "a marker with a bumped producer epoch",
            What::TooLarge => "a batch above max.message.bytes",
            What::BiggerThanSegment => "a batch above segment.bytes",
            What::BadTimestamp => "a timestamp outside before/after.max.ms",
            What::Keyless => "keyless records on a compacted topic",
            What::LowerLeaderEpoch => "a lower leader epoch than the latest",
            What::MalformedLength => {
                "a record length encoded as an over-long varint, the batch's CRC recomputed"
            }
            What::MalformedLengthCompressed => {
                "a record length encoded as an over-long varint in a compressed batch's records, recompressed, the batch's CRC recomputed"
            }
        }
    }
}

/// Kafka's answer to an append: new offsets, a duplicate (the log end did not move), or an
/// error by its `Errors` name.
enum Outcome {
    Appended,
    Duplicate,
    Error(String),
}

impl What {
    /// Whether Kafka's answer is the one the generator meant to provoke: the coverage
    /// counts only those, so that it is Kafka's answers, not the generator's intent, that
    /// show what a run exercised.
    fn meant(self, o: &Outcome) -> bool {
        let error = |name: &str| matches!(o, Outcome::Error(e) if e == name);
        match self {
            What::Duplicate => matches!(o, Outcome::Duplicate),
            What::SequenceGap => error("OUT_OF_ORDER_SEQUENCE_NUMBER"),
            What::FencedEpoch => error("INVALID_PRODUCER_EPOCH"),
            What::StaleCoordinator => error("TRANSACTION_COORDINATOR_FENCED"),
            What::ClientMarker => matches!(o, Outcome::Error(_)),
            // docs/kafka-behaviour.md#record-length-overlong: Kafka's decoder lets the
            // length's `IllegalArgumentException` escape from an uncompressed batch; the
            // stream iterator of a compressed one makes it an `InvalidRecordException`.
            What::MalformedLength => error("UNKNOWN_SERVER_ERROR"),
            What::MalformedLengthCompressed => error("INVALID_RECORD"),
            What::TooLarge => error("MESSAGE_TOO_LARGE"),
            What::BiggerThanSegment => error("RECORD_LIST_TOO_LARGE"),
            What::BadTimestamp => error("INVALID_TIMESTAMP"),
            What::Keyless => error("INVALID_RECORD"),
            What::Plain
            | What::Idempotent
            | What::EpochBump
            | What::TxnData
            | What::Commit
            | What::Abort
            | What::MarkerEpochBump
            | What::LowerLeaderEpoch => matches!(o, Outcome::Appended),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Isolation {
    LogEnd,
    HighWatermark,
    TxnCommitted,
}

impl Isolation {
    fn kafka(self) -> &'static str {
        match self {
            Isolation::LogEnd => "LOG_END",
            Isolation::HighWatermark => "HIGH_WATERMARK",
            Isolation::TxnCommitted => "TXN_COMMITTED",
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Append {
        coordinator: bool,
        leader_epoch: i32,
        /// The batch as our `BatchBuilder` built it.
        bytes: Vec<u8>,
        /// When set, the id of the `build` line whose batch, as Kafka's client classes
        /// built it, both sides append instead.
        kafka: Option<String>,
        what: What,
    },
    Hw(i64),
    Read {
        offset: i64,
        max_bytes: u32,
        isolation: Isolation,
        min_one: bool,
    },
    List(i64),
    Sleep(i64),
    Roll,
}

impl Op {
    fn text(&self) -> String {
        match self {
            Op::Append {
                coordinator,
                leader_epoch,
                bytes,
                kafka,
                ..
            } => format!(
                "append {} {leader_epoch} {}",
                if *coordinator {
                    "COORDINATOR"
                } else {
                    "CLIENT"
                },
                kafka
                    .as_ref()
                    .map_or_else(|| to_hex(bytes), |id| format!("@{id}"))
            ),
            Op::Hw(x) => format!("hw {x}"),
            Op::Read {
                offset,
                max_bytes,
                isolation,
                min_one,
            } => format!("read {offset} {max_bytes} {} {min_one}", isolation.kafka()),
            Op::List(t) => format!("list {t}"),
            Op::Sleep(ms) => format!("sleep {ms}"),
            Op::Roll => "roll".into(),
        }
    }

    /// Named in a finding (without the batch bytes).
    fn what(&self) -> String {
        match self {
            Op::Append {
                coordinator,
                leader_epoch,
                bytes,
                kafka,
                what,
            } => format!(
                "append ({}, {} bytes{}, origin {}, leader epoch {leader_epoch})",
                what.text(),
                bytes.len(),
                if kafka.is_some() {
                    " as Kafka's client built it"
                } else {
                    ""
                },
                if *coordinator {
                    "COORDINATOR"
                } else {
                    "CLIENT"
                }
            ),
            other => format!("`{}`", other.text()),
        }
    }
}

struct Case {
    id: String,
    kind: Kind,
    topic: Topic,
    start_ms: i64,
    ops: Vec<Op>,
    /// The batches also built by Kafka's client classes.
    built: Vec<Built>,
}

fn to_hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(2 * b.len());
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

fn from_hex(s: &str) -> Result<Vec<u8>, String> {
    if s == "-" {
        return Ok(Vec::new());
    }
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd hex length {}", s.len()));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

/// A producer of the generator's model.
struct Prod {
    pid: i64,
    epoch: i16,
    seq: i32,
    transactional: bool,
    open: bool,
    coordinator_epoch: i32,
    codec: CompressionType,
    /// The last batches sent in sequence (for retries).
    recent: VecDeque<Vec<u8>>,
}

struct Gen<'a> {
    rng: &'a mut StdRng,
    topic: Topic,
    kind: Kind,
    now: i64,
    leader_epoch: i32,
    /// An upper bound of the log end (records sent).
    sent: i64,
    prods: Vec<Prod>,
    ops: Vec<Op>,
    cov: &'a mut BTreeMap<What, usize>,
    /// Every batch this case's generator built, also built by Kafka's client classes.
    built: Vec<Built>,
    /// Our bytes of the batches appended as Kafka built them: the id of their `build`
    /// line (a retry appends the same).
    kafka_fed: HashMap<Vec<u8>, String>,
    /// The case's id, the prefix of its `build` ids.
    id: String,
    /// The sabotage `k4-leader-builder-compressed`: our `BatchBuilder` writes every
    /// compressed batch with one record too many in its count.
    builder_bug: bool,
}

/// A batch the generator built with our `BatchBuilder` and asked Kafka's client classes
/// (`MemoryRecords.withRecords`, `withEndTransactionMarker`) to build too.
struct Built {
    id: String,
    /// The helper's `build` or `build-marker` line.
    line: String,
    ours: Vec<u8>,
    codec: CompressionType,
    records: usize,
}

/// A key, value or header value on a `build` line (`~` null, `_` empty, else hex).
fn field(v: Option<&[u8]>) -> String {
    match v {
        None => "~".into(),
        Some([]) => "_".into(),
        Some(b) => to_hex(b),
    }
}

/// Kafka's `Compression.of` name of a codec.
fn kafka_codec(c: CompressionType) -> &'static str {
    match c {
        CompressionType::None => "none",
        CompressionType::Gzip => "gzip",
        CompressionType::Snappy => "snappy",
        CompressionType::Lz4 => "lz4",
        CompressionType::Zstd => "zstd",
        _ => "unknown",
    }
}

/// The sabotage `k4-leader-builder-compressed`: a compressed batch's records count one
/// too high, its CRC recomputed (a builder bug, not a torn batch).
fn corrupt_count(bytes: &mut [u8]) {
    let count = i32::from_be_bytes(bytes[57..61].try_into().unwrap());
    bytes[57..61].copy_from_slice(&(count + 1).to_be_bytes());
    if let Ok(crc) = RecordBatch::new(bytes).map(|b| b.compute_checksum()) {
        bytes[17..21].copy_from_slice(&crc.to_be_bytes());
    }
}

impl Gen<'_> {
    fn value(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        if self.rng.gen_bool(0.5) {
            let w = b"kafka segment index offset leader epoch producer sequence marker ";
            let off = self.rng.gen_range(0..w.len());
            for (i, x) in v.iter_mut().enumerate() {
                *x = w[(off + i) % w.len()];
            }
        } else {
            self.rng.fill(&mut v[..]);
        }
        v
    }

    fn timestamp(&mut self) -> i64 {
        self.now + self.rng.gen_range(-3000..3000)
    }

    /// A batch of `n` records (base offset 0) with `max_value` bytes of value at most.
    fn batch(
        &mut self,
        producer: Option<(i64, i16, i32, bool)>,
        codec: CompressionType,
        n: usize,
        max_value: usize,
        keyless: bool,
        bad_ts: bool,
    ) -> Vec<u8> {
        let mut b = BatchBuilder::new(0).compression(codec);
        if let Some((pid, epoch, seq, txn)) = producer {
            b = b.producer(pid, epoch, seq).transactional(txn);
        }
        let (pid, epoch, seq, txn) = producer.unwrap_or((-1, -1, -1, false));
        let mut line = format!("{} {pid} {epoch} {seq} {txn}", kafka_codec(codec));
        let bad_at = self.rng.gen_range(0..n);
        for i in 0..n {
            let mut ts = self.timestamp();
            if bad_ts && i == bad_at {
                ts = if self.rng.gen_bool(0.5) && self.topic.before_max_ms < i64::MAX / 2 {
                    self.now - self.topic.before_max_ms - 1 - self.rng.gen_range(0..10_000)
                } else {
                    self.now + self.topic.after_max_ms + 1 + self.rng.gen_range(0..10_000)
                };
            }
            let no_key = (keyless && (i == bad_at || self.rng.gen_bool(0.3)))
                || (self.rng.gen_range(0..5) == 0 && !self.topic.compact);
            let key = if no_key {
                None
            } else {
                Some(format!("k-{}", self.rng.gen_range(0..13)).into_bytes())
            };
            let value = if self.rng.gen_range(0..20) == 0 {
                None
            } else {
                let len = self.rng.gen_range(0..=max_value);
                Some(self.value(len))
            };
            let header_value = format!("h{i}").into_bytes();
            let headers: Vec<(&[u8], Option<&[u8]>)> = if self.rng.gen_range(0..4) == 0 {
                vec![(b"hk", Some(&header_value[..])), (b"hn", None)]
            } else {
                Vec::new()
            };
            b = b.record_with_headers(ts, key.as_deref(), value.as_deref(), &headers);
            let hs: Vec<String> = headers
                .iter()
                .map(|(k, v)| format!("{}={}", field(Some(k)), field(*v)))
                .collect();
            let _ = write!(
                line,
                " {ts}/{}/{}/{}",
                field(key.as_deref()),
                field(value.as_deref()),
                if hs.is_empty() {
                    "-".into()
                } else {
                    hs.join(",")
                }
            );
        }
        self.sent += n as i64;
        let mut bytes = b.build().expect("a valid batch");
        if self.builder_bug && codec != CompressionType::None {
            corrupt_count(&mut bytes);
        }
        self.record_built(format!("build {{}} {line}"), &bytes, codec, n);
        bytes
    }

    /// A batch of any codec whose first record's length is an over-long varint (five
    /// bytes, each with its continuation bit set), its CRC recomputed: an encoding bug of
    /// the producer that the batch's CRC does not catch, so only the record walk of the
    /// leader's validation meets it. In a compressed batch the five bytes open the
    /// decompressed records, which are compressed again with the batch's codec (the
    /// batch's length follows the new bytes): Kafka reads those records through another
    /// iterator than an uncompressed batch's. Both sides append these bytes (Kafka's own
    /// build of the batch is compared undamaged).
    fn malformed_length(&mut self) {
        let n = self.rng.gen_range(1..6);
        // Half uncompressed, half in one of the four codecs, so that a run has both.
        let codec = if self.rng.gen_bool(0.5) {
            CompressionType::None
        } else {
            CODECS[self.rng.gen_range(1..CODECS.len())]
        };
        let mut bytes = self.batch(None, codec, n, 100, false, false);
        let what = if codec == CompressionType::None {
            bytes[61..66].fill(0xff);
            What::MalformedLength
        } else {
            let mut records = decompress(codec, &bytes[61..]).expect("our own batch decompresses");
            records[..5].fill(0xff);
            let packed = compress(codec, &records).expect("records compress");
            bytes.truncate(61);
            bytes.extend_from_slice(&packed);
            let length = i32::try_from(bytes.len() - 12).expect("a small batch");
            bytes[8..12].copy_from_slice(&length.to_be_bytes());
            What::MalformedLengthCompressed
        };
        if let Ok(crc) = RecordBatch::new(&bytes).map(|b| b.compute_checksum()) {
            bytes[17..21].copy_from_slice(&crc.to_be_bytes());
        }
        self.push_append(false, bytes, what);
    }

    /// Asks Kafka to build the batch of `line` (`{}` for its id) too; half of them are
    /// appended as Kafka built them, on both sides.
    fn record_built(&mut self, line: String, ours: &[u8], codec: CompressionType, records: usize) {
        let id = format!("{}b{}", self.id, self.built.len());
        if self.rng.gen_bool(0.5) {
            self.kafka_fed.insert(ours.to_vec(), id.clone());
        }
        self.built.push(Built {
            line: line.replacen("{}", &id, 1),
            id,
            ours: ours.to_vec(),
            codec,
            records,
        });
    }

    fn push_append(&mut self, coordinator: bool, bytes: Vec<u8>, what: What) {
        *self.cov.entry(what).or_default() += 1;
        let kafka = self.kafka_fed.get(&bytes).cloned();
        self.ops.push(Op::Append {
            coordinator,
            leader_epoch: self.leader_epoch,
            bytes,
            kafka,
            what,
        });
    }

    fn codec(&mut self) -> CompressionType {
        CODECS[self.rng.gen_range(0..CODECS.len())]
    }

    /// An idempotent or transactional producer's batch, of the shape `what`.
    fn producer_batch(&mut self, p: usize, what: What) {
        let (n, big) = (self.rng.gen_range(1..12), 300);
        let codec = self.prods[p].codec;
        let pr = &self.prods[p];
        let (pid, epoch, seq, txn) = (pr.pid, pr.epoch, pr.seq, pr.transactional);
        match what {
            What::Duplicate => {
                let pr = &self.prods[p];
                let k = self.rng.gen_range(0..pr.recent.len());
                let bytes = pr.recent[k].clone();
                self.push_append(false, bytes, What::Duplicate);
            }
            What::SequenceGap => {
                let gap = self.rng.gen_range(1..4);
                let bytes = self.batch(
                    Some((pid, epoch, increment_sequence(seq, gap), txn)),
                    codec,
                    n,
                    big,
                    false,
                    false,
                );
                self.push_append(false, bytes, What::SequenceGap);
            }
            What::FencedEpoch => {
                let bytes = self.batch(Some((pid, epoch - 1, 0, txn)), codec, n, big, false, false);
                self.push_append(false, bytes, What::FencedEpoch);
            }
            _ => {
                let (epoch, seq) = if what == What::EpochBump {
                    (epoch + 1, 0)
                } else {
                    (epoch, seq)
                };
                let bytes = self.batch(Some((pid, epoch, seq, txn)), codec, n, big, false, false);
                let pr = &mut self.prods[p];
                pr.epoch = epoch;
                pr.seq = increment_sequence(seq, n as i32);
                if txn {
                    pr.open = true;
                }
                pr.recent.push_back(bytes.clone());
                if pr.recent.len() > 5 {
                    pr.recent.pop_front();
                }
                self.push_append(false, bytes, what);
            }
        }
    }

    fn marker(&mut self, p: usize, what: What) {
        let pr = &self.prods[p];
        let (control, coord, epoch, coordinator) = match what {
            What::StaleCoordinator => (
                ControlRecordType::Abort,
                pr.coordinator_epoch - 1,
                pr.epoch,
                true,
            ),
            What::ClientMarker => (
                ControlRecordType::Commit,
                pr.coordinator_epoch,
                pr.epoch,
                false,
            ),
            What::MarkerEpochBump => (
                ControlRecordType::Abort,
                pr.coordinator_epoch,
                pr.epoch + 1,
                true,
            ),
            What::Abort => (
                ControlRecordType::Abort,
                pr.coordinator_epoch,
                pr.epoch,
                true,
            ),
            _ => (
                ControlRecordType::Commit,
                pr.coordinator_epoch,
                pr.epoch,
                true,
            ),
        };
        // As a coordinator sends it (Kafka's `MemoryRecords.withEndTransactionMarker`): no
        // partition leader epoch; the leader path under test stamps its own.
        let bytes = BatchBuilder::new(0)
            .producer(pr.pid, epoch, -1)
            .build_end_txn_marker(control, coord, self.now)
            .expect("a marker");
        let kind = match control {
            ControlRecordType::Abort => "ABORT",
            _ => "COMMIT",
        };
        self.record_built(
            format!(
                "build-marker {{}} {} {epoch} {kind} {coord} {}",
                pr.pid, self.now
            ),
            &bytes,
            CompressionType::None,
            1,
        );
        self.sent += 1;
        if coordinator && what != What::StaleCoordinator {
            let pr = &mut self.prods[p];
            pr.open = false;
            if epoch != pr.epoch {
                pr.epoch = epoch;
                pr.seq = 0;
                pr.recent.clear();
            }
        }
        self.push_append(coordinator, bytes, what);
    }

    /// A read, a ListOffsets, a high-watermark move, a clock advance or a roll.
    fn other(&mut self) {
        let end = self.sent;
        let op = match self.rng.gen_range(0..100) {
            0..=44 => {
                let offset = match self.rng.gen_range(0..10) {
                    0 => -1,
                    1 => end + self.rng.gen_range(0..3),
                    _ => self.rng.gen_range(0..=end.max(0)),
                };
                let max_bytes = if self.topic.recompresses() {
                    1 << 24
                } else {
                    [1, 60, 200, 1000, 5000, 1 << 20][self.rng.gen_range(0..6)]
                };
                let isolation = [
                    Isolation::LogEnd,
                    Isolation::HighWatermark,
                    Isolation::TxnCommitted,
                ][self.rng.gen_range(0..3)];
                Op::Read {
                    offset,
                    max_bytes,
                    isolation,
                    min_one: self.recompresses_or(|r| r.gen_bool(0.6)),
                }
            }
            45..=64 => Op::List(match self.rng.gen_range(0..8) {
                0..=3 => -1 - self.rng.gen_range(0..5),
                4 => 0,
                _ => self.now + self.rng.gen_range(-8000..3000),
            }),
            65..=79 => Op::Hw(match self.rng.gen_range(0..6) {
                0 => -1,
                1 => end + 5,
                _ => self.rng.gen_range(0..=end.max(0)),
            }),
            80..=94 => {
                let ms = self.rng.gen_range(0..4000);
                self.now += ms;
                Op::Sleep(ms)
            }
            _ => Op::Roll,
        };
        self.ops.push(op);
    }

    /// `minOneMessage`: always with the whole-log reads of a recompressing topic.
    fn recompresses_or(&mut self, f: impl FnOnce(&mut StdRng) -> bool) -> bool {
        self.topic.recompresses() || f(self.rng)
    }

    fn plain(&mut self) {
        let codec = self.codec();
        let n = self.rng.gen_range(1..15);
        let bytes = self.batch(None, codec, n, 400, false, false);
        self.push_append(false, bytes, What::Plain);
    }

    /// One step of the kind's workload.
    fn step(&mut self) {
        if self.rng.gen_range(0..100) < 40 {
            return self.other();
        }
        if self.rng.gen_range(0..40) == 0 {
            // A new leader epoch (the leader moved), rarely a lower one.
            if self.leader_epoch > 0 && self.rng.gen_bool(0.2) {
                self.leader_epoch -= 1;
                let codec = self.codec();
                let bytes = self.batch(None, codec, 2, 100, false, false);
                self.push_append(false, bytes, What::LowerLeaderEpoch);
                self.leader_epoch += 2;
            } else {
                self.leader_epoch += 1;
            }
        }
        match self.kind {
            Kind::Idempotent => {
                let p = self.rng.gen_range(0..self.prods.len());
                let what = match self.rng.gen_range(0..100) {
                    0..=14 => What::Plain,
                    15..=29 if !self.prods[p].recent.is_empty() => What::Duplicate,
                    30..=36 => What::SequenceGap,
                    37..=41 => What::EpochBump,
                    42..=46 if self.prods[p].epoch > 0 => What::FencedEpoch,
                    _ => What::Idempotent,
                };
                if what == What::Plain {
                    self.plain()
                } else {
                    self.producer_batch(p, what)
                }
            }
            Kind::Txn => {
                let p = self.rng.gen_range(0..self.prods.len());
                let pr = &self.prods[p];
                let what = if !pr.transactional {
                    match self.rng.gen_range(0..10) {
                        0 if !pr.recent.is_empty() => What::Duplicate,
                        1 => What::Plain,
                        _ => What::Idempotent,
                    }
                } else if pr.open {
                    match self.rng.gen_range(0..100) {
                        0..=44 => What::TxnData,
                        45..=49 if !pr.recent.is_empty() => What::Duplicate,
                        50..=69 => What::Commit,
                        70..=84 => What::Abort,
                        85..=89 => What::StaleCoordinator,
                        90..=94 => What::ClientMarker,
                        95..=97 => What::MarkerEpochBump,
                        _ => What::SequenceGap,
                    }
                } else if pr.epoch > 0 && self.rng.gen_range(0..12) == 0 {
                    What::FencedEpoch
                } else {
                    if self.rng.gen_range(0..4) == 0 {
                        self.prods[p].coordinator_epoch += 1;
                    }
                    What::TxnData
                };
                match what {
                    What::Plain => self.plain(),
                    What::Commit
                    | What::Abort
                    | What::StaleCoordinator
                    | What::ClientMarker
                    | What::MarkerEpochBump => self.marker(p, what),
                    _ => self.producer_batch(p, what),
                }
            }
            Kind::AppendTime | Kind::CreateTime => {
                let bad = self.rng.gen_range(0..8) == 0;
                if bad && self.rng.gen_range(0..2) == 0 {
                    self.malformed_length();
                } else if bad {
                    let codec = self.codec();
                    let n = self.rng.gen_range(1..10);
                    let bytes = self.batch(None, codec, n, 300, false, true);
                    self.push_append(false, bytes, What::BadTimestamp);
                } else if self.rng.gen_bool(0.5) {
                    self.plain()
                } else {
                    let p = self.rng.gen_range(0..self.prods.len());
                    self.producer_batch(p, What::Idempotent)
                }
            }
            Kind::Limits => {
                if self.rng.gen_range(0..6) == 0 {
                    let big = self.topic.max_message_bytes < self.topic.segment_bytes;
                    let limit = self.topic.max_message_bytes.min(self.topic.segment_bytes) as usize;
                    let n = self.rng.gen_range(2..6);
                    // Incompressible values, so that the compressed batch is large too.
                    let mut b = BatchBuilder::new(0).compression(self.codec());
                    for _ in 0..n {
                        let mut v = vec![0u8; limit / n + 200];
                        self.rng.fill(&mut v[..]);
                        b = b.record(self.now, Some(b"big"), Some(&v));
                    }
                    self.sent += n as i64;
                    let bytes = b.build().expect("a batch");
                    // What Kafka answers first: max.message.bytes is checked on the batch
                    // as sent, before segment.bytes.
                    let what = if big || bytes.len() > self.topic.max_message_bytes as usize {
                        What::TooLarge
                    } else {
                        What::BiggerThanSegment
                    };
                    self.push_append(false, bytes, what);
                } else {
                    self.plain()
                }
            }
            Kind::Compact => {
                if self.rng.gen_range(0..6) == 0 {
                    let codec = self.codec();
                    let n = self.rng.gen_range(1..8);
                    let bytes = self.batch(None, codec, n, 200, true, false);
                    self.push_append(false, bytes, What::Keyless);
                } else if self.rng.gen_bool(0.5) {
                    self.plain()
                } else {
                    let p = self.rng.gen_range(0..self.prods.len());
                    self.producer_batch(p, What::Idempotent)
                }
            }
        }
    }
}

fn gen_topic(rng: &mut StdRng, i: usize, kind: Kind) -> Topic {
    let compressions = [
        "producer",
        "producer",
        "uncompressed",
        "gzip",
        "snappy",
        "lz4",
        "zstd",
    ];
    let mut t = Topic {
        segment_bytes: [8 * 1024, 32 * 1024, 1 << 20][rng.gen_range(0..3)],
        index_interval_bytes: [1, 256, 1024, 4096][rng.gen_range(0..4)],
        log_append_time: kind == Kind::AppendTime,
        before_max_ms: i64::MAX,
        after_max_ms: i64::MAX,
        max_message_bytes: 1_048_588,
        compression: compressions[rng.gen_range(0..compressions.len())],
        compact: kind == Kind::Compact,
        // Every other round of the kinds: each kind runs both ways in every run.
        preallocate: (i / KINDS.len()) % 2 == 1,
    };
    match kind {
        Kind::AppendTime => {
            // The producer's codec differs from the topic's in most cases.
            t.compression = ["uncompressed", "gzip", "lz4", "producer"][(i / KINDS.len()) % 4];
            t.before_max_ms = 3_600_000;
            t.after_max_ms = 60_000;
        }
        Kind::CreateTime => {
            t.before_max_ms = [3_600_000, 10_000][rng.gen_range(0..2)];
            t.after_max_ms = [60_000, 5_000][rng.gen_range(0..2)];
        }
        Kind::Limits => {
            if (i / KINDS.len()).is_multiple_of(2) {
                t.max_message_bytes = 3000;
                t.segment_bytes = 64 * 1024;
            } else {
                t.segment_bytes = 6000;
            }
        }
        _ => {}
    }
    if t.recompresses() {
        // Only the bytes may differ: every batch indexed, no size rolls.
        t.index_interval_bytes = 1;
        t.segment_bytes = t.segment_bytes.max(1 << 20);
        if kind == Kind::Limits {
            t.compression = "uncompressed";
            // A batch above the raised segment.bytes must still fit max.message.bytes,
            // which Kafka checks first (MESSAGE_TOO_LARGE before RECORD_LIST_TOO_LARGE).
            if t.max_message_bytes >= t.segment_bytes {
                t.max_message_bytes = 2 * t.segment_bytes;
            }
        }
    }
    t
}

fn gen_case(
    rng: &mut StdRng,
    i: usize,
    cov: &mut BTreeMap<What, usize>,
    builder_bug: bool,
) -> Case {
    let kind = KINDS[i % KINDS.len()];
    let topic = gen_topic(rng, i, kind);
    let start_ms = BASE_TS + rng.gen_range(0..1_000_000);
    let n_prods = rng.gen_range(2..5);
    let prods = (0..n_prods)
        .map(|k| Prod {
            pid: 1000 + k as i64,
            epoch: rng.gen_range(0..3),
            seq: if rng.gen_range(0..6) == 0 {
                i32::MAX - 20
            } else {
                0
            },
            transactional: kind == Kind::Txn && k > 0,
            open: false,
            coordinator_epoch: rng.gen_range(0..3),
            codec: CODECS[rng.gen_range(0..CODECS.len())],
            recent: VecDeque::new(),
        })
        .collect();
    let mut g = Gen {
        rng,
        topic: topic.clone(),
        kind,
        now: start_ms,
        leader_epoch: 0,
        sent: 0,
        prods,
        ops: Vec::new(),
        cov,
        built: Vec::new(),
        kafka_fed: HashMap::new(),
        id: format!("c{i}"),
        builder_bug,
    };
    let n = g.rng.gen_range(40..120);
    for _ in 0..n {
        g.step();
        if g.rng.gen_range(0..3) == 0 {
            g.now += g.rng.gen_range(0..50);
        }
    }
    if kind == Kind::Txn {
        // Every marker shape once in every transactional case.
        for what in [
            What::TxnData,
            What::ClientMarker,
            What::StaleCoordinator,
            What::MarkerEpochBump,
            What::TxnData,
            What::Commit,
        ] {
            match what {
                What::TxnData => g.producer_batch(1, what),
                _ => g.marker(1, what),
            }
            g.other();
        }
    }
    // End with every answer kind once more over the whole log.
    for isolation in [
        Isolation::LogEnd,
        Isolation::HighWatermark,
        Isolation::TxnCommitted,
    ] {
        g.ops.push(Op::Read {
            offset: 0,
            max_bytes: 1 << 24,
            isolation,
            min_one: true,
        });
    }
    for t in [-1, -2, -3, -4, -5] {
        g.ops.push(Op::List(t));
    }
    let ops = std::mem::take(&mut g.ops);
    Case {
        id: format!("c{i}"),
        kind,
        topic,
        start_ms,
        ops,
        built: std::mem::take(&mut g.built),
    }
}

/// A case whose every append Kafka refuses (end-txn markers sent with the client
/// origin): the partition takes no batch, so the files compared are those a log holds
/// before its first append, among them Kafka's empty `leader-epoch-checkpoint`
/// (`docs/kafka-behaviour.md#leader-epoch-checkpoint-created`).
fn gen_refused_case(rng: &mut StdRng, i: usize, cov: &mut BTreeMap<What, usize>) -> Case {
    let mut c = gen_case(rng, i, cov, false);
    c.ops.retain(|op| !matches!(op, Op::Append { .. }));
    c.built.clear();
    let mut g = Gen {
        rng,
        topic: c.topic.clone(),
        kind: c.kind,
        now: c.start_ms,
        leader_epoch: 0,
        sent: 0,
        prods: vec![Prod {
            pid: 1000,
            epoch: 0,
            seq: 0,
            transactional: true,
            open: false,
            coordinator_epoch: 0,
            codec: CODECS[0],
            recent: VecDeque::new(),
        }],
        ops: Vec::new(),
        cov,
        built: Vec::new(),
        kafka_fed: HashMap::new(),
        id: c.id.clone(),
        builder_bug: false,
    };
    for _ in 0..3 {
        g.marker(0, What::ClientMarker);
    }
    let mut ops = std::mem::take(&mut g.ops);
    ops.extend(c.ops);
    c.ops = ops;
    c.built = std::mem::take(&mut g.built);
    c
}

fn case_text(c: &Case, dir: &Path) -> String {
    let mut s = String::new();
    for b in &c.built {
        let _ = writeln!(s, "{}", b.line);
    }
    let _ = writeln!(s, "case {} {} {}", c.id, dir.display(), c.start_ms);
    for (k, v) in c.topic.props() {
        let _ = writeln!(s, "config {k} {v}");
    }
    for op in &c.ops {
        let _ = writeln!(s, "op {}", op.text());
    }
    s.push_str("end\n");
    s
}

/// Our topic config for `t`: Kafka's topic defaults but what the case sets.
fn our_config(t: &Topic) -> LogConfig {
    LogConfig {
        segment_bytes: u64::from(t.segment_bytes),
        index_interval_bytes: u64::from(t.index_interval_bytes),
        retention_ms: -1,
        message_timestamp_type: if t.log_append_time {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        },
        message_timestamp_before_max_ms: t.before_max_ms,
        message_timestamp_after_max_ms: t.after_max_ms,
        max_message_bytes: t.max_message_bytes,
        compression_type: match t.compression {
            "uncompressed" => TopicCompression::Uncompressed,
            "gzip" => TopicCompression::Gzip,
            "snappy" => TopicCompression::Snappy,
            "lz4" => TopicCompression::Lz4,
            "zstd" => TopicCompression::Zstd,
            _ => TopicCompression::Producer,
        },
        compact: t.compact,
        preallocate: t.preallocate,
        ..LogConfig::default()
    }
}

/// An error answer in the helper's format: Kafka's name and the record errors.
fn error_text(e: &segment::SegmentError) -> String {
    let re: Vec<String> = e
        .record_errors()
        .iter()
        .map(|r| {
            format!(
                "{}{}",
                r.batch_index,
                if r.message.is_some() { ":m" } else { "" }
            )
        })
        .collect();
    format!(
        "error {} {}",
        e.kafka_error().name(),
        if re.is_empty() {
            "-".into()
        } else {
            re.join(",")
        }
    )
}

/// The sabotages of `k4-leader`: damage to our side, each of which a check must catch.
#[derive(Clone, Copy, Default)]
struct Damage {
    /// `k4-leader-dup-offsets`: our answer to a duplicate is shifted one offset up.
    dup_offsets: bool,
    /// `k4-leader-lso-high`: our last stable offset is one offset too high.
    lso_high: bool,
    /// `k4-leader-stale-crc`: our compressed LogAppendTime batches keep a stale CRC (the
    /// one of the producer's CreateTime batch, before the leader stamped the time).
    stale_crc: bool,
    /// `k4-leader-marker-epoch`: our leader path leaves an end-txn marker's partition
    /// leader epoch as the coordinator sent it instead of stamping the leader's.
    marker_epoch: bool,
    /// `k4-leader-close-entry`: the last entry of our active segment's `.timeindex` after
    /// the close (the extra entry our close appends) one offset low.
    close_entry: bool,
    /// `k4-leader-no-epoch-file`: the empty `leader-epoch-checkpoint` of a partition that
    /// took no append is removed from our side after the close (as we wrote none before
    /// `docs/kafka-behaviour.md#leader-epoch-checkpoint-created`).
    no_epoch_file: bool,
    /// `k4-leader-prealloc-untrimmed`: the `.log` of a rolled segment of a preallocated
    /// case is left at `segment.bytes` (zero-filled), as if our roll had not trimmed it.
    prealloc_untrimmed: bool,
    /// `k4-leader-overlong-escapes`: our refusal of a compressed batch whose record length
    /// is an over-long varint is answered `UNKNOWN_SERVER_ERROR`, as for an uncompressed
    /// one (the answer before `docs/kafka-behaviour.md#record-length-overlong` told them
    /// apart).
    overlong_escapes: bool,
}

impl Damage {
    fn of(ctx: &Ctx) -> Self {
        Damage {
            dup_offsets: ctx.sabotaged("k4-leader-dup-offsets"),
            lso_high: ctx.sabotaged("k4-leader-lso-high"),
            stale_crc: ctx.sabotaged("k4-leader-stale-crc"),
            marker_epoch: ctx.sabotaged("k4-leader-marker-epoch"),
            close_entry: ctx.sabotaged("k4-leader-close-entry"),
            no_epoch_file: ctx.sabotaged("k4-leader-no-epoch-file"),
            prealloc_untrimmed: ctx.sabotaged("k4-leader-prealloc-untrimmed"),
            overlong_escapes: ctx.sabotaged("k4-leader-overlong-escapes"),
        }
    }

    fn batches(self) -> bool {
        self.stale_crc || self.marker_epoch
    }

    /// Damages the batches of `bytes` (a read answer or a `.log`) in place.
    fn apply(self, bytes: &mut [u8], marker_epochs: &HashMap<i64, i32>) {
        let mut pos = 0usize;
        while pos < bytes.len() {
            let (size, stale, marker) = match RecordBatch::at(&bytes[pos..], pos as u64) {
                Ok(b) if b.size_in_bytes() > 0 => {
                    let lat = b.attributes().0 & Attributes::TIMESTAMP_TYPE != 0;
                    let compressed = b.attributes().0 & Attributes::COMPRESSION_MASK != 0;
                    let stale = (self.stale_crc && lat && compressed).then(|| {
                        // The CRC of the batch as the producer sent it: CreateTime.
                        let mut copy = b.as_bytes().to_vec();
                        copy[21..23].copy_from_slice(
                            &(b.attributes().0 & !Attributes::TIMESTAMP_TYPE).to_be_bytes(),
                        );
                        RecordBatch::new(&copy).map_or(0, |c| c.compute_checksum())
                    });
                    let marker = if self.marker_epoch && b.is_control_batch() {
                        marker_epochs.get(&b.producer_id()).copied()
                    } else {
                        None
                    };
                    (b.size_in_bytes(), stale, marker)
                }
                _ => break,
            };
            if let Some(crc) = stale {
                bytes[pos + 17..pos + 21].copy_from_slice(&crc.to_be_bytes());
            }
            if let Some(e) = marker {
                bytes[pos + 12..pos + 16].copy_from_slice(&e.to_be_bytes());
            }
            pos += size;
        }
    }
}

/// Our side of one case: the answers in the helper's line format (`open ..`, one per
/// operation ending with ` | lso LSO`, `closed ..`), damaged as `damage` says.
fn run_ours(
    c: &Case,
    dir: &Path,
    damage: Damage,
    kafka_built: &HashMap<String, Vec<u8>>,
) -> Result<Vec<String>, String> {
    // The partition leader epoch each producer's markers were sent with (the sabotage
    // `k4-leader-marker-epoch` keeps it).
    let mut marker_epochs: HashMap<i64, i32> = HashMap::new();
    for op in &c.ops {
        if let Op::Append { bytes, .. } = op {
            if let Ok(b) = RecordBatch::new(bytes) {
                if b.is_control_batch() {
                    marker_epochs.insert(b.producer_id(), b.partition_leader_epoch());
                }
            }
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{dir:?}: {e}"))?;
    let clock = MockTime::new(c.start_ms);
    let log = Log::options()
        .clock(Arc::new(clock.clone()))
        .manual_high_watermark(0)
        .open(dir, our_config(&c.topic))
        .map_err(|e| format!("open: {e}"))?;
    let mut out = vec![format!(
        "open {} {}",
        log.log_end_offset(),
        log.high_watermark()
    )];
    for (k, op) in c.ops.iter().enumerate() {
        let answer = match op {
            Op::Append {
                coordinator,
                leader_epoch,
                bytes,
                kafka,
                what,
            } => {
                let bytes = match kafka {
                    Some(id) => kafka_built
                        .get(id)
                        .ok_or_else(|| format!("Kafka built no batch {id}"))?,
                    None => bytes,
                };
                let origin = if *coordinator {
                    AppendOrigin::Coordinator
                } else {
                    AppendOrigin::Client
                };
                match log.append_as_leader(bytes, *leader_epoch, origin) {
                    Ok(mut i) => {
                        if damage.dup_offsets && i.duplicate {
                            i.first_offset += 1;
                            i.last_offset += 1;
                        }
                        format!(
                            "append {} {} {} {} {} {} {} {} {} {}",
                            i.first_offset,
                            i.last_offset,
                            i.max_timestamp,
                            i.log_append_time,
                            i.log_start_offset,
                            i.last_leader_epoch
                                .map_or_else(|| "none".into(), |e| e.to_string()),
                            i.num_records,
                            i.valid_bytes,
                            i.source_compression.name(),
                            log.log_end_offset()
                        )
                    }
                    Err(_)
                        if damage.overlong_escapes && *what == What::MalformedLengthCompressed =>
                    {
                        "error UNKNOWN_SERVER_ERROR -".into()
                    }
                    Err(e) => error_text(&e),
                }
            }
            Op::Hw(x) => match log.update_high_watermark(*x) {
                Ok(hw) => format!("hw {hw}"),
                Err(e) => error_text(&e),
            },
            Op::Read {
                offset,
                max_bytes,
                isolation,
                min_one,
            } => {
                let iso = match isolation {
                    Isolation::LogEnd => FetchIsolation::LogEnd,
                    Isolation::HighWatermark => FetchIsolation::HighWatermark,
                    Isolation::TxnCommitted => FetchIsolation::TxnCommitted,
                };
                match log.read_with(*offset, u64::from(*max_bytes), iso, *min_one) {
                    Ok(f) => {
                        let aborted = match &f.aborted_transactions {
                            None => "none".to_string(),
                            Some(v) if v.is_empty() => "-".into(),
                            Some(v) => v
                                .iter()
                                .map(|a| format!("{}:{}", a.producer_id, a.first_offset))
                                .collect::<Vec<_>>()
                                .join(","),
                        };
                        let hex = if f.records.is_empty() {
                            "-".into()
                        } else if damage.batches() {
                            let mut bytes = f.records.to_vec();
                            damage.apply(&mut bytes, &marker_epochs);
                            to_hex(&bytes)
                        } else {
                            to_hex(&f.records)
                        };
                        format!("read {hex} {aborted}")
                    }
                    Err(e) => error_text(&e),
                }
            }
            Op::List(ts) => match log.fetch_offset_by_timestamp(*ts) {
                Ok(None) => "list none".into(),
                Ok(Some(l)) => format!(
                    "list {} {} {}",
                    l.timestamp,
                    l.offset,
                    l.leader_epoch
                        .map_or_else(|| "none".into(), |e| e.to_string())
                ),
                Err(e) => error_text(&e),
            },
            Op::Sleep(ms) => {
                clock.sleep(*ms);
                "ok".into()
            }
            Op::Roll => match log.roll(None) {
                Ok(_) => "ok".into(),
                Err(e) => error_text(&e),
            },
        };
        let lso = log.last_stable_offset() + i64::from(damage.lso_high);
        out.push(format!("{k} {answer} | lso {lso}"));
    }
    let (leo, hw) = (log.log_end_offset(), log.high_watermark());
    log.close().map_err(|e| format!("close: {e}"))?;
    out.push(format!("closed {leo} {hw}"));
    if damage.close_entry {
        let active = list_files(dir)?
            .into_iter()
            .filter(|n| n.ends_with(".timeindex"))
            .max_by_key(|n| base_of(n));
        if let Some(name) = active {
            let path = dir.join(name);
            let mut b = std::fs::read(&path).map_err(|e| format!("{path:?}: {e}"))?;
            if b.len() >= 12 {
                let at = b.len() - 4;
                let rel = i32::from_be_bytes(b[at..].try_into().unwrap());
                let rel = if rel > 0 { rel - 1 } else { rel + 1 };
                b[at..].copy_from_slice(&rel.to_be_bytes());
                std::fs::write(&path, b).map_err(|e| format!("{path:?}: {e}"))?;
            }
        }
    }
    if damage.prealloc_untrimmed && c.topic.preallocate {
        let logs: Vec<String> = list_files(dir)?
            .into_iter()
            .filter(|n| n.ends_with(".log"))
            .collect();
        let active = logs.iter().filter_map(|n| base_of(n)).max();
        // The first rolled segment (every one but the active).
        if let Some(name) = logs.iter().find(|n| base_of(n) != active) {
            let path = dir.join(name);
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| format!("{path:?}: {e}"))?;
            f.set_len(u64::from(c.topic.segment_bytes))
                .map_err(|e| format!("{path:?}: {e}"))?;
        }
    }
    if damage.no_epoch_file {
        let path = dir.join("leader-epoch-checkpoint");
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == 0) {
            std::fs::remove_file(&path).map_err(|e| format!("{path:?}: {e}"))?;
        }
    }
    if damage.batches() {
        for name in list_files(dir)? {
            if name.ends_with(".log") {
                let path = dir.join(&name);
                let mut bytes = std::fs::read(&path).map_err(|e| format!("{path:?}: {e}"))?;
                damage.apply(&mut bytes, &marker_epochs);
                std::fs::write(&path, bytes).map_err(|e| format!("{path:?}: {e}"))?;
            }
        }
    }
    Ok(out)
}

/// The batches of a read or a `.log`, decoded: every header field but the length and the
/// CRC, and every record (the logical content a recompression keeps).
fn logical(bytes: &[u8]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut pos = 0u64;
    while (pos as usize) < bytes.len() {
        let rest = bytes.get(pos as usize..).unwrap_or_default();
        let b = match RecordBatch::at(rest, pos) {
            Ok(b) => b,
            // A read may end mid-batch.
            Err(_) => {
                out.push(format!("partial {} bytes", bytes.len() - pos as usize));
                break;
            }
        };
        let mut s = format!(
            "base {} delta {} ple {} attrs {:?} base_ts {} max_ts {} pid {} epoch {} seq {} count {} codec {:?}",
            b.base_offset(),
            b.last_offset_delta(),
            b.partition_leader_epoch(),
            b.attributes(),
            b.base_timestamp(),
            b.max_timestamp(),
            b.producer_id(),
            b.producer_epoch(),
            b.base_sequence(),
            b.records_count(),
            b.compression()
        );
        for r in b.records().map_err(|e| e.to_string())? {
            let r = r.map_err(|e| e.to_string())?;
            let _ = write!(
                s,
                " | {} {} {} {:?} {:?} {:?}",
                r.offset, r.timestamp, r.sequence, r.key, r.value, r.headers
            );
        }
        out.push(s);
        if b.size_in_bytes() == 0 {
            break;
        }
        pos += b.size_in_bytes() as u64;
    }
    Ok(out)
}

/// The batch ordinal at each position of a `.log`.
fn batch_starts(log: &[u8]) -> HashMap<u64, usize> {
    let mut m = HashMap::new();
    let mut pos = 0u64;
    let mut k = 0;
    while (pos as usize) < log.len() {
        let Ok(b) = RecordBatch::at(log.get(pos as usize..).unwrap_or_default(), pos) else {
            break;
        };
        if b.size_in_bytes() == 0 {
            break;
        }
        m.insert(pos, k);
        k += 1;
        pos += b.size_in_bytes() as u64;
    }
    m
}

/// An index file's entries with their position mapped to the ordinal of the batch it
/// points at (`.index`: 8-byte entries, `.timeindex`: 12-byte).
fn index_by_ordinal(index: &[u8], entry: usize, log: &[u8]) -> Vec<String> {
    let starts = batch_starts(log);
    // Kafka leaves the active segment's indexes at their preallocated size: the
    // zero-filled slots after the last entry are not entries (an offset index's first
    // entry may be zero: relative offset 0 at position 0).
    let keep = usize::from(entry == 8);
    let mut used = index.len() / entry;
    while used > keep
        && index[(used - 1) * entry..used * entry]
            .iter()
            .all(|&b| b == 0)
    {
        used -= 1;
    }
    index[..used * entry]
        .chunks(entry)
        .map(|e| {
            if entry == 8 {
                let rel = i32::from_be_bytes(e[0..4].try_into().unwrap());
                let pos = u32::from_be_bytes(e[4..8].try_into().unwrap()) as u64;
                format!("{rel} -> batch {:?}", starts.get(&pos))
            } else {
                let ts = i64::from_be_bytes(e[0..8].try_into().unwrap());
                let rel = i32::from_be_bytes(e[8..12].try_into().unwrap());
                format!("{ts} {rel}")
            }
        })
        .collect()
}

fn list_files(dir: &Path) -> Result<BTreeSet<String>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{dir:?}: {e}"))?;
    Ok(rd
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect())
}

/// Files only our side writes in the partition directory and that are not compared: the
/// lock file, and the clean-shutdown marker and the recovery-point / log-start-offset
/// checkpoints, which Kafka's `LogManager` (not `UnifiedLog`) keeps in the log directory.
fn skipped(name: &str) -> bool {
    name == ".lock"
        || name.ends_with(".lock")
        || matches!(
            name,
            ".kafka_cleanshutdown" | "log-start-offset" | "recovery-point"
        )
}

#[derive(Default)]
struct Tally {
    answers: usize,
    /// Last stable offsets compared equal.
    lsos: usize,
    /// Batches whose CRC was checked valid (read answers and `.log` files, both sides).
    crcs: usize,
    /// Extra time-index entries of our close checked exact.
    close_entries: usize,
    /// Active `.log` files Kafka's close left preallocated, checked to be ours and zeros.
    prealloc_tails: usize,
    /// Batches built by both our `BatchBuilder` and Kafka's client classes, and how many
    /// of them are byte-identical.
    built: usize,
    built_whole: usize,
    /// Appends Kafka answered as the generator meant, by what was meant.
    confirmed: BTreeMap<What, usize>,
    files: usize,
    deviations: usize,
    duplicates: usize,
    kafka_errors: BTreeMap<String, usize>,
    skipped_files: BTreeSet<String>,
    diffs: Vec<String>,
}

/// Compares one case's answers; `kafka` are the helper's lines of this case (without the
/// id), `ours` ours in the same format.
fn compare_answers(c: &Case, kafka: &[&str], ours: Option<&[String]>, t: &mut Tally) {
    let mut leo: Option<i64> = kafka
        .first()
        .and_then(|l| l.strip_prefix("open "))
        .and_then(|l| l.split(' ').next())
        .and_then(|x| x.parse().ok());
    let mut first_diff = None;
    for (at, k) in kafka.iter().enumerate() {
        let o = ours
            .and_then(|o| o.get(at))
            .map(String::as_str)
            .unwrap_or("(none)");
        // The helper's line is "K rest" for operation K, ours too.
        let split = |l: &'_ str| -> (Option<usize>, String) {
            match l.split_once(' ') {
                Some((n, rest)) if n.parse::<usize>().is_ok() => (n.parse().ok(), rest.into()),
                _ => (None, l.into()),
            }
        };
        let (label, k_rest) = split(k);
        let (_, o_rest) = split(o);
        // The last stable offset after the operation, compared as a value.
        let lso = |l: &str| -> (String, Option<String>) {
            match l.rsplit_once(" | lso ") {
                Some((a, x)) => (a.to_string(), Some(x.to_string())),
                None => (l.to_string(), None),
            }
        };
        let ((k_rest, k_lso), (o_rest, o_lso)) = (lso(&k_rest), lso(&o_rest));
        let (k_rest, o_rest) = (k_rest.as_str(), o_rest.as_str());
        let op = label.and_then(|n| c.ops.get(n));
        if let Some(rest) = k_rest.strip_prefix("error ") {
            *t.kafka_errors
                .entry(rest.split(' ').next().unwrap_or("").to_string())
                .or_default() += 1;
        }
        // A duplicate: Kafka's log end did not move.
        let mut outcome = None;
        if let Some(rest) = k_rest.strip_prefix("append ") {
            let f: Vec<&str> = rest.split(' ').collect();
            let after: Option<i64> = f.last().and_then(|x| x.parse().ok());
            if after.is_some() && after == leo {
                t.duplicates += 1;
                outcome = Some(Outcome::Duplicate);
            } else {
                outcome = Some(Outcome::Appended);
            }
            leo = after.or(leo);
        } else if let Some(rest) = k_rest.strip_prefix("error ") {
            outcome = Some(Outcome::Error(
                rest.split(' ').next().unwrap_or("").to_string(),
            ));
        }
        // What Kafka made of an append, against what the generator meant.
        if let (Some(Op::Append { what, .. }), Some(outcome)) = (op, outcome) {
            if what.meant(&outcome) {
                *t.confirmed.entry(*what).or_default() += 1;
            }
        }
        // Every batch either side serves must carry a valid CRC.
        for (side, rest) in [("Kafka's", k_rest), ("our", o_rest)] {
            if side == "our" && ours.is_none() {
                continue;
            }
            if let Some(hex) = rest.strip_prefix("read ").and_then(|r| r.split(' ').next()) {
                match from_hex(hex).map(|b| crc_findings(&b)) {
                    Ok((n, None)) => t.crcs += n,
                    Ok((_, Some(bad))) => t.diffs.push(format!(
                        "{} ({:?}, compression.type {}): {side} read answer {at}: {bad}",
                        c.id, c.kind, c.topic.compression
                    )),
                    Err(e) => t.diffs.push(format!("{}: {side} answer {at}: {e}", c.id)),
                }
            }
        }
        if ours.is_none() {
            continue;
        }
        t.answers += 1;
        let what = || op.map_or_else(|| "the open or the close".to_string(), Op::what);
        if k_lso != o_lso {
            t.diffs.push(format!(
                "{} ({:?}): the last stable offset differs after answer {at} ({}): ours {}, Kafka's {}",
                c.id,
                c.kind,
                what(),
                o_lso.as_deref().unwrap_or("(none)"),
                k_lso.as_deref().unwrap_or("(none)")
            ));
        } else if k_lso.is_some() {
            t.lsos += 1;
        }
        let equal = k_rest == o_rest
            || (c.topic.recompresses()
                && k_rest.starts_with("read ")
                && o_rest.starts_with("read ")
                && same_read_batches(k_rest, o_rest, &mut t.deviations));
        if !equal && first_diff.is_none() {
            let what = what();
            let dup = match op {
                Some(Op::Append {
                    what: What::Duplicate,
                    ..
                }) => " [duplicate]",
                _ => "",
            };
            first_diff = Some(format!(
                "{} ({:?}, compression.type {}): answer {at} differs, after {what}{dup}: ours `{}`, Kafka's `{}`",
                c.id,
                c.kind,
                c.topic.compression,
                short(o_rest),
                short(k_rest)
            ));
        }
    }
    if let Some(ours) = ours.filter(|o| o.len() != kafka.len()) {
        first_diff.get_or_insert_with(|| {
            format!(
                "{}: {} answers ours, {} Kafka's",
                c.id,
                ours.len(),
                kafka.len()
            )
        });
    }
    t.diffs.extend(first_diff);
}

/// A read answer with its bytes cut to 160 characters.
fn short(s: &str) -> String {
    if s.len() > 200 {
        format!("{}…({} chars)", &s[..160], s.len())
    } else {
        s.to_string()
    }
}

/// Two read answers of a recompressing topic: the same aborted transactions and the same
/// batches ([`same_batches`]); a match counts as a documented deviation when the bytes
/// differ.
fn same_read_batches(k: &str, o: &str, deviations: &mut usize) -> bool {
    let (kp, op): (Vec<&str>, Vec<&str>) = (k.split(' ').collect(), o.split(' ').collect());
    if kp.len() != 3 || op.len() != 3 || kp[2] != op[2] {
        return false;
    }
    match (from_hex(kp[1]), from_hex(op[1])) {
        (Ok(a), Ok(b)) if same_batches(&b, &a).is_ok() => {
            *deviations += 1;
            true
        }
        _ => false,
    }
}

/// Every complete batch of `bytes` (a read answer or a `.log`, which may end mid-batch)
/// checked against its CRC: the batches checked, and the first invalid one.
fn crc_findings(bytes: &[u8]) -> (usize, Option<String>) {
    let mut pos = 0usize;
    let mut n = 0;
    while pos < bytes.len() {
        let Ok(b) = RecordBatch::at(&bytes[pos..], pos as u64) else {
            break;
        };
        if b.size_in_bytes() == 0 {
            break;
        }
        if !b.is_valid() {
            return (
                n,
                Some(format!(
                    "invalid CRC in the batch at byte {pos} (base offset {}, attributes {:#x}): stored {:#010x}, computed {:#010x}",
                    b.base_offset(),
                    b.attributes().0,
                    b.checksum(),
                    b.compute_checksum()
                )),
            );
        }
        n += 1;
        pos += b.size_in_bytes();
    }
    (n, None)
}

/// Ours and Kafka's batches of a recompressing topic, batch by batch: each pair equal
/// whole (CRC included), or, where Kafka's Java compressor and ours wrote different
/// bytes for the same records (`docs/kafka-behaviour.md#leader-recompression`), both
/// compressed with the same codec, the same header but for the length and the CRC (each
/// side's CRC is checked valid on its own, [`crc_findings`]) and the same records.
fn same_batches(ours: &[u8], kafka: &[u8]) -> Result<(), String> {
    let (a, b) = (batch_views(ours)?, batch_views(kafka)?);
    if a.len() != b.len() {
        return Err(format!("{} batches ours, {} Kafka's", a.len(), b.len()));
    }
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        if x.bytes == y.bytes {
            continue;
        }
        if !(x.compressed && y.compressed && x.logical == y.logical) {
            return Err(format!(
                "batch {k} differs: ours `{}`, Kafka's `{}`",
                short(&x.logical),
                short(&y.logical)
            ));
        }
    }
    Ok(())
}

/// One batch of a read or a `.log`: its bytes, whether it is compressed, and its header
/// (but the length and the CRC) and records decoded.
struct BatchView {
    bytes: Vec<u8>,
    compressed: bool,
    logical: String,
}

fn batch_views(bytes: &[u8]) -> Result<Vec<BatchView>, String> {
    let lines = logical(bytes)?;
    let mut out = Vec::new();
    let mut pos = 0usize;
    for l in lines {
        let (size, compressed) = match RecordBatch::at(&bytes[pos..], pos as u64) {
            Ok(b) => (
                b.size_in_bytes(),
                b.attributes().0 & Attributes::COMPRESSION_MASK != 0,
            ),
            Err(_) => (bytes.len() - pos, false),
        };
        out.push(BatchView {
            bytes: bytes[pos..pos + size].to_vec(),
            compressed,
            logical: l,
        });
        pos += size;
        if size == 0 {
            break;
        }
    }
    Ok(out)
}

/// Where the batches of a `.log` image end: the position of the first that is not a whole
/// batch (its length field below 49, the rest of a 61-byte v2 header, or past the end).
fn batches_end(log: &[u8]) -> usize {
    let mut pos = 0usize;
    while let Some(size) = log
        .get(pos + 8..pos + 12)
        .map(|b| i32::from_be_bytes(b.try_into().unwrap()))
    {
        let size = match usize::try_from(size) {
            Ok(n) if n >= 49 => n + 12,
            _ => break,
        };
        if pos + size > log.len() {
            break;
        }
        pos += size;
    }
    pos
}

/// The base offset of a segment file's name.
fn base_of(name: &str) -> Option<i64> {
    name.split_once('.').and_then(|(stem, _)| stem.parse().ok())
}

/// The time-index entry Kafka's segment would append for `log` at base offset `base`
/// when it becomes inactive (`onBecomeInactiveSegment`: the segment's largest batch max
/// timestamp, at the last offset of the first batch that has it), as (timestamp,
/// relative offset); `None` when it is not above `last_ts` (the index's last timestamp,
/// when it has entries), as Kafka's `maybeAppend` then writes nothing.
fn final_time_entry(log: &[u8], base: i64, last_ts: Option<i64>) -> Option<(i64, i32)> {
    let mut best: Option<(i64, i64)> = None;
    let mut pos = 0usize;
    while pos < log.len() {
        let Ok(b) = RecordBatch::at(&log[pos..], pos as u64) else {
            break;
        };
        if b.size_in_bytes() == 0 {
            break;
        }
        if b.max_timestamp() > best.map_or(-1, |(ts, _)| ts) {
            best = Some((b.max_timestamp(), b.last_offset()));
        }
        pos += b.size_in_bytes();
    }
    let (ts, off) = best?;
    (ts > last_ts.unwrap_or(-1)).then_some((ts, (off - base) as i32))
}

/// A `.timeindex`'s entries (12 bytes each) without the zero-filled slots after them.
fn time_entries(index: &[u8]) -> &[u8] {
    let mut used = index.len() / 12;
    while used > 0 && index[(used - 1) * 12..used * 12].iter().all(|&b| b == 0) {
        used -= 1;
    }
    &index[..used * 12]
}

fn compare_files(c: &Case, ours: &Path, kafka: &Path, t: &mut Tally) -> Result<(), String> {
    let (a, b) = (list_files(ours)?, list_files(kafka)?);
    // The active segment: the only one whose time index our close may extend.
    let active = b
        .iter()
        .filter(|n| n.ends_with(".log"))
        .filter_map(|n| base_of(n))
        .max();
    for name in a.union(&b) {
        if skipped(name) {
            t.skipped_files.insert(name.clone());
            continue;
        }
        let (x, y) = (
            std::fs::read(ours.join(name)),
            std::fs::read(kafka.join(name)),
        );
        let (x, y) = match (x, y) {
            (Ok(x), Ok(y)) => (x, y),
            (Ok(_), Err(_)) => {
                t.diffs
                    .push(format!("{}: {name} only ours (Kafka wrote none)", c.id));
                continue;
            }
            _ => {
                t.diffs
                    .push(format!("{}: {name} only Kafka's (we wrote none)", c.id));
                continue;
            }
        };
        t.files += 1;
        if name.ends_with(".log") {
            // Every batch of both sides' logs must carry a valid CRC.
            for (side, bytes) in [("our", &x), ("Kafka's", &y)] {
                match crc_findings(bytes) {
                    (n, None) => t.crcs += n,
                    (_, Some(bad)) => t.diffs.push(format!(
                        "{} ({:?}, compression.type {}): {side} {name}: {bad}",
                        c.id, c.kind, c.topic.compression
                    )),
                }
            }
        }
        if x == y {
            continue;
        }
        // The documented deviation (docs/kafka-behaviour.md#close-preallocated-log): with
        // preallocate, Kafka 4.4's close leaves the active segment's `.log` at exactly
        // segment.bytes, zero-filled after its batches; ours is trimmed. Kafka's batches
        // are then compared with ours as any `.log` is.
        let tail_at = batches_end(&y);
        let y = if c.topic.preallocate
            && name.ends_with(".log")
            && base_of(name) == active
            && y.len() == c.topic.segment_bytes as usize
            && tail_at < y.len()
            && y[tail_at..].iter().all(|&b| b == 0)
        {
            t.prealloc_tails += 1;
            y[..tail_at].to_vec()
        } else {
            y
        };
        if x == y {
            t.deviations += 1;
            continue;
        }
        let stem = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
        let logs = || {
            (
                std::fs::read(ours.join(format!("{stem}.log"))).unwrap_or_default(),
                std::fs::read(kafka.join(format!("{stem}.log"))).unwrap_or_default(),
            )
        };
        // The documented deviation (docs/kafka-behaviour.md#close-no-time-entry): our
        // close appends the active segment's final time-index entry, Kafka 4.4's does not.
        // Ours must be Kafka's entries plus exactly the entry Kafka's own roll would
        // write, found from Kafka's `.log` ([`final_time_entry`]); checked exactly.
        let close_entry = || -> Result<Option<(i64, i32)>, String> {
            if !name.ends_with(".timeindex") || base_of(name) != active {
                return Ok(None);
            }
            let base = base_of(name).unwrap_or(0);
            let (_, klog) = logs();
            let (xe, ye) = (time_entries(&x), time_entries(&y));
            let last_ts = ye
                .chunks(12)
                .last()
                .map(|e| i64::from_be_bytes(e[0..8].try_into().unwrap()));
            let Some(want) = final_time_entry(&klog, base, last_ts) else {
                return Ok(None);
            };
            let extra = xe.get(ye.len()..).unwrap_or_default();
            let got = (extra.len() == 12).then(|| {
                (
                    i64::from_be_bytes(extra[0..8].try_into().unwrap()),
                    i32::from_be_bytes(extra[8..12].try_into().unwrap()),
                )
            });
            if got != Some(want) {
                return Err(format!(
                    "{} ({:?}, compression.type {}): {name}: the extra entry of our close is {got:?} (timestamp, relative offset), Kafka's roll would write {want:?}",
                    c.id, c.kind, c.topic.compression
                ));
            }
            Ok(Some(want))
        };
        // The documented deviation (docs/kafka-behaviour.md#leader-close-index): Kafka's
        // UnifiedLog.close leaves the active segment's indexes at their preallocated
        // size, zero-filled after the entries; ours are trimmed. Checked exactly.
        let untrimmed = |ours: &[u8]| {
            y.len() > ours.len()
                && y[..ours.len()] == ours[..]
                && y[ours.len()..].iter().all(|&b| b == 0)
        };
        if (name.ends_with(".index") || name.ends_with(".timeindex")) && untrimmed(&x) {
            t.deviations += 1;
            continue;
        }

        if name.ends_with(".timeindex") && !c.topic.recompresses() {
            match close_entry() {
                Ok(Some(_))
                    if x.len() >= 12
                        && (untrimmed(&x[..x.len() - 12]) || y == x[..x.len() - 12]) =>
                {
                    t.deviations += 1;
                    t.close_entries += 1;
                    continue;
                }
                Ok(_) => {}
                Err(e) => {
                    t.diffs.push(e);
                    continue;
                }
            }
        }
        if c.topic.recompresses() {
            // The documented deviation: compare what a recompression keeps.
            let logs = logs();
            let same = if name.ends_with(".log") {
                match same_batches(&x, &y) {
                    Ok(()) => true,
                    Err(e) => {
                        t.diffs.push(format!(
                            "{} ({:?}, compression.type {}): {name}: {e}",
                            c.id, c.kind, c.topic.compression
                        ));
                        continue;
                    }
                }
            } else if name.ends_with(".index") {
                index_by_ordinal(&x, 8, &logs.0) == index_by_ordinal(&y, 8, &logs.1)
            } else if name.ends_with(".timeindex") {
                // Ours may end with the final entry of our close (`#close-no-time-entry`),
                // the one Kafka's roll would write, exactly.
                let (a, b) = (
                    index_by_ordinal(&x, 12, &logs.0),
                    index_by_ordinal(&y, 12, &logs.1),
                );
                if a == b {
                    true
                } else {
                    match close_entry() {
                        Ok(Some((ts, rel))) => {
                            let ok = a.len() == b.len() + 1
                                && a[..b.len()] == b[..]
                                && a[b.len()] == format!("{ts} {rel}");
                            t.close_entries += usize::from(ok);
                            ok
                        }
                        Ok(None) => false,
                        Err(e) => {
                            t.diffs.push(e);
                            continue;
                        }
                    }
                }
            } else {
                false
            };
            if same {
                t.deviations += 1;
                continue;
            }
        }
        let at = x.iter().zip(&y).position(|(p, q)| p != q);
        // A `.log` names its first differing batch, decoded.
        let batch = if name.ends_with(".log") {
            same_batches(&x, &y)
                .err()
                .map_or_else(String::new, |e| format!(": {e}"))
        } else {
            String::new()
        };
        t.diffs.push(format!(
            "{} ({:?}, compression.type {}): {name} differs: {} bytes ours, {} Kafka's, first byte differing at {at:?}{batch}",
            c.id,
            c.kind,
            c.topic.compression,
            x.len(),
            y.len()
        ));
    }
    Ok(())
}

/// Our `BatchBuilder`'s batches against the same batches built by Kafka's client classes
/// (Kafka's answer is the truth of what a producer sends): both CRCs valid; equal whole,
/// or, compressed, equal but for the compressed bytes (length and CRC), as
/// [`same_batches`] (Java's compressors and ours write different bytes).
fn compare_built(c: &Case, kafka_built: &HashMap<String, Vec<u8>>, t: &mut Tally) {
    for b in &c.built {
        let Some(k) = kafka_built.get(&b.id) else {
            t.diffs
                .push(format!("{}: Kafka built no batch {}", c.id, b.id));
            continue;
        };
        t.built += 1;
        for (side, bytes) in [("our BatchBuilder's", &b.ours), ("Kafka's", k)] {
            if let (_, Some(bad)) = crc_findings(bytes) {
                t.diffs
                    .push(format!("{}: {side} batch {}: {bad}", c.id, b.id));
            }
        }
        if &b.ours == k {
            t.built_whole += 1;
            continue;
        }
        let why = if b.codec == CompressionType::None {
            let at = b.ours.iter().zip(k).position(|(p, q)| p != q);
            Some(format!(
                "{} bytes ours, {} Kafka's, first byte differing at {at:?}",
                b.ours.len(),
                k.len()
            ))
        } else {
            same_batches(&b.ours, k).err()
        };
        if let Some(why) = why {
            t.diffs.push(format!(
                "{} ({:?}): batch {} ({:?}, {} records): our BatchBuilder's batch differs from Kafka's MemoryRecordsBuilder's: {why}",
                c.id, c.kind, b.id, b.codec, b.records
            ));
        }
    }
}

/// The `k4-leader` scenario.
pub fn run(ctx: &Ctx) -> Result<String, String> {
    let dir = ctx.scratch.join("k4-leader");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let seed = ctx.seed;
    let replay =
        format!("seed {seed}, replay with `cargo xtask kafka --only k4-leader --seed {seed}`");
    let mut rng = StdRng::seed_from_u64(seed ^ 0x6b34_1ead);
    let mut cov = BTreeMap::new();
    let n_cases = (4 * ctx.scale as usize).max(2) * KINDS.len();
    let builder_bug = ctx.sabotaged("k4-leader-builder-compressed");
    let mut cases: Vec<Case> = (0..n_cases)
        .map(|i| gen_case(&mut rng, i, &mut cov, builder_bug))
        .collect();
    cases.push(gen_refused_case(&mut rng, n_cases, &mut cov));
    let damage = Damage::of(ctx);
    let mut input = String::new();
    let mut dirs: Vec<(PathBuf, PathBuf)> = Vec::new();
    for c in &cases {
        let od = dir.join(format!("{}-ours", c.id)).join(PARTITION);
        let kd = dir.join(format!("{}-kafka", c.id)).join(PARTITION);
        input.push_str(&case_text(c, &kd));
        dirs.push((od, kd));
    }
    let cases_file = dir.join("cases.txt");
    let answers_file = dir.join("answers.txt");
    let built_file = dir.join("built.txt");
    std::fs::write(&cases_file, input).map_err(|e| e.to_string())?;
    ctx.jvm.run(
        "oracle.Oracle",
        &[
            "k4-leader".into(),
            cases_file.display().to_string(),
            answers_file.display().to_string(),
            built_file.display().to_string(),
        ],
        Duration::from_secs(600),
    )?;
    let mut kafka_built: HashMap<String, Vec<u8>> = HashMap::new();
    for line in std::fs::read_to_string(&built_file)
        .map_err(|e| e.to_string())?
        .lines()
    {
        if let Some((id, hex)) = line.split_once(' ') {
            kafka_built.insert(id.to_string(), from_hex(hex)?);
        }
    }
    let mut t = Tally::default();
    for c in &cases {
        compare_built(c, &kafka_built, &mut t);
    }
    let text = std::fs::read_to_string(&answers_file).map_err(|e| e.to_string())?;
    let mut kafka: HashMap<&str, Vec<&str>> = HashMap::new();
    for line in text.lines() {
        if let Some((id, rest)) = line.split_once(' ') {
            kafka.entry(id).or_default().push(rest);
        }
    }
    let mut ops = 0usize;
    for (c, (od, kd)) in cases.iter().zip(&dirs) {
        ops += c.ops.len();
        let Some(k) = kafka.get(c.id.as_str()) else {
            t.diffs.push(format!("{}: no answers from Kafka", c.id));
            continue;
        };
        if !k.last().is_some_and(|l| l.starts_with("closed ")) {
            t.diffs.push(format!(
                "{}: Kafka did not finish the case: {:?}",
                c.id,
                k.last()
            ));
            continue;
        }
        let ours = match run_ours(c, od, damage, &kafka_built) {
            Ok(o) => o,
            Err(e) => {
                // Kafka's side alone: its answers still count for the line.
                compare_answers(c, k, None, &mut t);
                t.diffs.push(format!("{}: our side failed: {e}", c.id));
                continue;
            }
        };
        compare_answers(c, k, Some(&ours), &mut t);
        compare_files(c, od, kd, &mut t)?;
    }
    let missing: Vec<&str> = WHATS
        .iter()
        .filter(|w| cov.get(w).copied().unwrap_or(0) == 0)
        .map(|w| w.text())
        .collect();
    if !missing.is_empty() {
        t.diffs.push(format!(
            "the generated workloads have no {}",
            missing.join(", ")
        ));
    }
    let unconfirmed: Vec<&str> = WHATS
        .iter()
        .filter(|w| t.confirmed.get(w).copied().unwrap_or(0) == 0)
        .map(|w| w.text())
        .collect();
    if !unconfirmed.is_empty() {
        t.diffs.push(format!(
            "Kafka answered no {} as meant (the run did not exercise it)",
            unconfirmed.join(", ")
        ));
    }
    let confirmed: usize = t.confirmed.values().sum();
    let appends: usize = cov.values().sum();
    let errors: Vec<String> = t
        .kafka_errors
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    let skipped: Vec<&str> = t.skipped_files.iter().map(String::as_str).collect();
    let line = format!(
        "seed {seed}: {} cases, {ops} ops ({appends} appends, {confirmed} answered by Kafka as the generator meant, every kind at least once; {} over-long record lengths, {} of them in compressed batches; {} duplicates answered by Kafka; Kafka's errors: {}), {} batches built by both our BatchBuilder and Kafka's client classes ({} byte-identical, the rest compressed with the same records; those Kafka built fed to both sides for about half the appends), {} answers compared ({} last stable offsets), {} batch CRCs checked valid (both sides' reads and logs), {} files compared whole ({} skipped: only ours, kept by Kafka's LogManager or a lock), {} documented deviations checked (recompressed bytes, untrimmed active indexes, {} extra time-index entries of our close at the offset Kafka's roll would write, {} active .log files of {} preallocated cases that Kafka's close left at segment.bytes), {} differences",
        cases.len(),
        cov.get(&What::MalformedLength).copied().unwrap_or(0)
            + cov.get(&What::MalformedLengthCompressed).copied().unwrap_or(0),
        cov.get(&What::MalformedLengthCompressed).copied().unwrap_or(0),
        t.duplicates,
        if errors.is_empty() {
            "none".into()
        } else {
            errors.join(", ")
        },
        t.built,
        t.built_whole,
        t.answers,
        t.lsos,
        t.crcs,
        t.files,
        if skipped.is_empty() {
            "none".into()
        } else {
            skipped.join(", ")
        },
        t.deviations,
        t.close_entries,
        t.prealloc_tails,
        cases.iter().filter(|c| c.topic.preallocate).count(),
        t.diffs.len()
    );
    if t.diffs.is_empty() {
        Ok(line)
    } else {
        let shown: Vec<&str> = t.diffs.iter().take(40).map(String::as_str).collect();
        Err(format!("{line} ({replay}):\n  {}", shown.join("\n  ")))
    }
}
