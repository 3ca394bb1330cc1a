//! `dump-log`: Kafka's `DumpLogSegments` (`kafka-dump-log.sh`, docs/kafka-behaviour.md#dump-log-segments) as a library.
//!
//! The functions here read Kafka partition files **read-only** and report what they find
//! as a stream of [`Event`]s delivered to a [`Sink`]: the entries, batches and records that
//! the Kafka tool prints, and every [`Problem`] (an index that disagrees with its log, a
//! corrupt batch, a failed sanity check, …) and [`Note`] (something unusual that Kafka's
//! broker writes legitimately). [`dump_file`] handles one file, [`run`] a list of inputs
//! (files or partition directories, see [`expand_inputs`]), and [`rebuild()`] writes the
//! indexes recovery would build into a separate directory. The `dump-log` binary is a
//! thin command-line front end over these functions; [`text`] renders events the way the
//! Kafka tool prints them.
//!
//! # Verification rules
//!
//! Index verification uses Kafka's rules of docs/kafka-behaviour.md#dump-log-segments (an offset-index entry must name the last
//! offset of the first batch at its position; a time-index entry must name the last offset
//! of a batch whose largest record timestamp is the entry's timestamp), with these
//! differences, all chosen so that valid broker data is never reported as an error:
//!
//! * **Follower (chunk-shaped) offset-index entries.** A follower appends a whole fetched
//!   chunk at once, so its entries are `(last offset of the chunk, position of the chunk's
//!   first batch)`. Kafka's tool reports those as mismatches whenever the chunk holds more
//!   than one batch. Here, an entry whose offset is larger than the first batch's last
//!   offset **and** equals the last offset of a later batch (reached by scanning forward
//!   from the position) is accepted and reported as a [`Note::ChunkOffsetEntry`]. Lookups
//!   through such an entry are correct (the position is a batch boundary at or before the
//!   offset's batch). An entry whose offset is *below* the first batch's last offset (a
//!   pre-2.0 first-offset entry, acceptance case 69 c) is still a mismatch.
//! * **Record-level time-index offsets.** Brokers 2.x–3.7 on the leader path stored the
//!   offset of the *record* holding the max timestamp (or the first offset of the append)
//!   instead of a batch's last offset (docs/kafka-behaviour.md#old-data-versions). Kafka's tool reports those as "indexed
//!   offsets are not found". Here, an entry whose offset lies inside the batch found
//!   and whose record at that offset carries exactly the entry's timestamp is accepted as a
//!   [`Note::RecordLevelTimeEntry`].
//! * **Stricter checks Kafka's tool does not make:** offset-index entries must strictly
//!   increase in offset and position, and time-index offsets must not decrease (both are
//!   enforced by Kafka's append path, and binary search relies on them); v2 batch CRCs
//!   are checked in log dumps ([`Problem::InvalidChecksum`]).
//!
//! [`DumpOptions::kafka_strict`] turns the first two relaxations off, reproducing the Kafka
//! tool's verdicts exactly (the stricter checks stay on), and reports each `.log` whose
//! first record is not offset 0 as Kafka's deep iteration does (`-1 is followed by N`);
//! [`text::Report::kafka_order`] prints the report in Kafka's order. How `dump-log
//! --kafka-strict` compares with Kafka's tool, stream by stream and exit status, is in
//! docs/kafka-behaviour.md#dump-log-strict-comparison.
//!
//! Units: offsets are Kafka log offsets (`i64`), timestamps are milliseconds since the Unix
//! epoch (`i64`, −1 = none), positions are byte positions in a `.log` file, sizes are bytes.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

pub mod decode;
pub mod doctor;
mod index;
mod log;
mod reader;
pub mod rebuild;
pub mod text;
mod txn;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use decode::{Content, Decoder, Json};
pub use rebuild::{rebuild, RebuildOptions, RebuildReport, RebuiltFile};

/// Default `--max-message-size`: 5 MiB (Kafka's default).
pub const DEFAULT_MAX_MESSAGE_SIZE: u64 = 5 * 1024 * 1024;
/// Default `--max-bytes`: `Int.MAX` (Kafka's default; also "not given").
pub const DEFAULT_MAX_BYTES: u64 = i32::MAX as u64;

/// The largest `.index`, `.timeindex`, `.txnindex` or producer `.snapshot` the dump
/// reads: 2147483647 bytes. No Kafka broker writes a larger one: it maps an offset or
/// time index whole, and a Java mapping holds at most `Int.MaxValue` bytes
/// (`segment.index.bytes` is an `int`); a `.txnindex` holds one 34-byte entry per ABORT
/// marker, each a batch of at least 61 bytes, in a segment of at most `Int.MaxValue`
/// bytes (`segment.bytes` is an `int`); a snapshot is read into one Java array. A larger
/// file is reported as [`Problem::Unreadable`] naming its size and this bound
/// (`docs/kafka-behaviour.md#dump-log-operator-deviations`). Files within the bound are
/// still read in bounded chunks, never whole.
pub const MAX_INDEX_FILE_BYTES: u64 = i32::MAX as u64;

/// Options of a dump (the flags of `kafka-dump-log.sh`, docs/kafka-behaviour.md#dump-log-segments, plus our own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpOptions {
    /// `--print-data-log`: print record keys and values (implies `deep_iteration`).
    pub print_data_log: bool,
    /// `--deep-iteration`: iterate the records inside batches.
    pub deep_iteration: bool,
    /// `--verify-index-only`: check `.index` and `.timeindex` entries against the log
    /// without printing them. As in Kafka, `.log`, `.txnindex` and `.snapshot` files are
    /// still dumped in full (batches, and records with `deep_iteration`).
    pub verify_index_only: bool,
    /// `--index-sanity-check`: only run the index `sanityCheck` on `.index`/`.timeindex`
    /// (no entries printed). As in Kafka, `.log`, `.txnindex` and `.snapshot` files are
    /// still dumped in full; a `.txnindex` is checked as always, with no sanity-check line.
    pub index_sanity_check: bool,
    /// `--max-message-size`: the largest batch, in bytes (default 5 MiB, Kafka's): the
    /// bytes read at an offset-index position to find its first batch, and the most one
    /// batch's record stream may inflate to when it is decompressed (more is reported as
    /// an invalid record, and memory stays bounded by this plus a constant).
    pub max_message_size: u64,
    /// `--max-bytes`: only the first N bytes of a `.log` are read (default `i32::MAX`,
    /// meaning "not given": trailing invalid bytes are then reported).
    pub max_bytes: u64,
    /// `--skip-record-metadata`: with deep iteration, omit offset/timestamp/size fields.
    pub skip_record_metadata: bool,
    /// `--kafka-strict`: report follower chunk entries and record-level time-index offsets
    /// as the Kafka tool does (mismatch / offset not found) instead of as notes, and with
    /// deep iteration start each `.log`'s previous offset at -1 as Kafka's tool does (a
    /// file whose first record is not offset 0 reports the informational pair `-1 is
    /// followed by N`, docs/kafka-behaviour.md#dumplogsegments-findings).
    pub kafka_strict: bool,
    /// `--offsets-decoder`, `--transaction-log-decoder`, `--cluster-metadata-decoder`,
    /// `--share-group-state-decoder`, `--remote-log-metadata-decoder`: keys and values are decoded as that topic's records
    /// (implies `print_data_log`, as in Kafka's tool). `None`: printed as UTF-8 text.
    pub decoder: Option<Decoder>,
}

impl Default for DumpOptions {
    fn default() -> Self {
        DumpOptions {
            print_data_log: false,
            deep_iteration: false,
            verify_index_only: false,
            index_sanity_check: false,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            max_bytes: DEFAULT_MAX_BYTES,
            skip_record_metadata: false,
            kafka_strict: false,
            decoder: None,
        }
    }
}

impl DumpOptions {
    /// Deep iteration is on (explicitly or implied by `print_data_log`).
    pub fn deep(&self) -> bool {
        self.deep_iteration || self.prints_data()
    }

    /// Record keys and values are printed (`print_data_log`, or a decoder, which implies
    /// it as in Kafka's tool).
    pub fn prints_data(&self) -> bool {
        self.print_data_log || self.decoder.is_some()
    }

    /// The decompression limit of one batch: `max_message_size` as a `usize`.
    pub fn max_decompressed_bytes(&self) -> usize {
        usize::try_from(self.max_message_size).unwrap_or(usize::MAX)
    }

    /// `.index` and `.timeindex` entries are printed (neither verify-only nor
    /// sanity-only; every other file prints its entries in every mode, as in Kafka).
    pub fn prints_entries(&self) -> bool {
        !self.verify_index_only && !self.index_sanity_check
    }
}

/// What a file is, from the suffix after its **last** dot (Kafka's dispatch, docs/kafka-behaviour.md#dump-log-segments).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileType {
    /// `.log`: a segment's records.
    Log,
    /// `.index`: offset index.
    OffsetIndex,
    /// `.timeindex`: time index.
    TimeIndex,
    /// `.txnindex`: transaction index.
    TxnIndex,
    /// `.snapshot`: producer state snapshot.
    ProducerSnapshot,
    /// `.checkpoint` named `<offset>-<epoch>.checkpoint`: a KRaft snapshot (a log).
    KraftSnapshot,
    /// Anything else (ignored).
    Unknown,
}

impl FileType {
    /// Classifies a path by its file name.
    pub fn of(path: &Path) -> FileType {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some(dot) = name.rfind('.') else {
            return FileType::Unknown;
        };
        match &name[dot..] {
            ".log" => FileType::Log,
            ".index" => FileType::OffsetIndex,
            ".timeindex" => FileType::TimeIndex,
            ".txnindex" => FileType::TxnIndex,
            ".snapshot" => FileType::ProducerSnapshot,
            ".checkpoint" => FileType::KraftSnapshot,
            _ => FileType::Unknown,
        }
    }
}

/// Header-level view of one batch, as printed by the log dump.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchLine {
    /// Byte position of the batch (cumulative size of the batches before it).
    pub position: u64,
    /// Magic (0, 1 or 2).
    pub magic: i8,
    /// v2 base offset; for legacy entries the entry offset.
    pub base_offset: i64,
    /// Last offset.
    pub last_offset: i64,
    /// Record count from the header (`None` for a compressed legacy wrapper).
    pub count: Option<i32>,
    /// Base sequence (−1 = none).
    pub base_sequence: i32,
    /// Last sequence (−1 = none).
    pub last_sequence: i32,
    /// Producer id (−1 = none).
    pub producer_id: i64,
    /// Producer epoch (−1 = none).
    pub producer_epoch: i16,
    /// Partition leader epoch (−1 = none).
    pub partition_leader_epoch: i32,
    /// Transactional batch.
    pub is_transactional: bool,
    /// Control batch.
    pub is_control: bool,
    /// Delete horizon, if set.
    pub delete_horizon_ms: Option<i64>,
    /// `CreateTime`, `LogAppendTime` or `NoTimestampType`.
    pub timestamp_type: &'static str,
    /// Max timestamp.
    pub max_timestamp: i64,
    /// Size in bytes.
    pub size: usize,
    /// Codec name (`none`, `gzip`, …; `unknown(N)` for an undefined id).
    pub compression: String,
    /// Stored checksum.
    pub crc: u32,
    /// Whether the stored checksum matches the computed one.
    pub is_valid: bool,
}

/// The decoded content of a control record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "control_type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ControlLine {
    /// A transaction marker.
    EndTxnMarker {
        /// `COMMIT` or `ABORT`.
        marker: &'static str,
        /// Coordinator epoch.
        coordinator_epoch: i32,
    },
    /// A KRaft control record (leader change, snapshot header and footer, KRaft version,
    /// voters), decoded as Kafka's tool always prints it.
    Kraft {
        /// Kafka's name (`LEADER_CHANGE`, `SNAPSHOT_HEADER`, …).
        name: &'static str,
        /// The type id.
        id: i16,
        /// The label Kafka prints before the record (`LeaderChange:`, `SnapshotHeader`, …).
        label: &'static str,
        /// The record, as Kafka's JSON converter writes it.
        record: Json,
    },
    /// Any other control record type (name and id).
    Other {
        /// Kafka's name (`LEADER_CHANGE`, `SNAPSHOT_HEADER`, …, `UNKNOWN`).
        name: &'static str,
        /// The type id.
        id: i16,
    },
}

/// One record, as printed by a deep iteration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordLine {
    /// Position of the batch holding the record.
    pub batch_position: u64,
    /// Offset.
    pub offset: i64,
    /// Timestamp type name of the batch.
    pub timestamp_type: &'static str,
    /// Timestamp.
    pub timestamp: i64,
    /// Key size (−1 = null).
    pub key_size: i64,
    /// Value size (−1 = null).
    pub value_size: i64,
    /// Magic of the batch.
    pub magic: i8,
    /// v2: the record's sequence.
    pub sequence: Option<i32>,
    /// v2: header keys.
    pub header_keys: Option<Vec<String>>,
    /// Legacy: the message checksum.
    pub crc: Option<u32>,
    /// Legacy: whether the message checksum is valid.
    pub crc_valid: Option<bool>,
    /// Control batches: the decoded control record.
    pub control: Option<ControlLine>,
    /// With `--print-data-log`: the key as (lossy UTF-8) text; with a decoder, what the
    /// decoder prints after `key:` (a [`Content::Json`] record, or a line of text such as
    /// `Unknown record type 9 at offset 4, skipping.`).
    pub key: Option<Content>,
    /// With `--print-data-log`: the value as (lossy UTF-8) text; with a decoder, what it
    /// prints after `payload:` (a record, or `<DELETE>` for a tombstone).
    pub payload: Option<Content>,
}

/// Something in a file that disagrees with Kafka's invariants. All problems except
/// [`Problem::NonConsecutiveOffsets`] make the run fail ([`Problem::is_failure`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum Problem {
    /// Offset index entry whose offset is not the last offset of the first batch at its
    /// position (Kafka's "Mismatches in").
    OffsetMismatch {
        /// Absolute path of the index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Entry number (slot).
        slot: usize,
        /// The entry's offset.
        index_offset: i64,
        /// The entry's position.
        position: u32,
        /// Last offset of the first batch at that position.
        log_offset: i64,
    },
    /// Offset index entries not strictly increasing in offset and position.
    OffsetIndexOutOfOrder {
        /// Absolute path of the index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Entry number.
        slot: usize,
        /// Its offset.
        offset: i64,
        /// Its position.
        position: u32,
        /// The previous entry's offset.
        prev_offset: i64,
        /// The previous entry's position.
        prev_position: u32,
    },
    /// No batch can be read at an index entry's position (past the end of the log, a
    /// corrupt batch, or a batch larger than `--max-message-size`).
    IndexEntryUnreadable {
        /// Absolute path of the index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Entry number.
        slot: usize,
        /// The entry's offset.
        offset: i64,
        /// The position looked at.
        position: u64,
        /// Why.
        reason: String,
    },
    /// Time index entry whose timestamp is not the max record timestamp of its batch.
    TimestampMismatch {
        /// Absolute path of the time index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Entry number.
        slot: usize,
        /// The entry's offset.
        offset: i64,
        /// The entry's timestamp.
        index_timestamp: i64,
        /// Max record timestamp of the batch.
        log_timestamp: i64,
    },
    /// Time index timestamp not greater than the previous entry's.
    OutOfOrderTimestamp {
        /// Absolute path of the time index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Entry number.
        slot: usize,
        /// The entry's timestamp.
        index_timestamp: i64,
        /// The previous entry's timestamp.
        prev_timestamp: i64,
    },
    /// Time index offsets going backwards.
    TimeIndexOffsetOutOfOrder {
        /// Absolute path of the time index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Entry number.
        slot: usize,
        /// The entry's offset.
        offset: i64,
        /// The previous entry's offset.
        prev_offset: i64,
    },
    /// Time index offset that is not the last offset of a batch (Kafka's `indexed offsets
    /// are not found in :<path>`); `log_offset` is the last offset of the batch found, −1 if
    /// none.
    ShallowOffsetNotFound {
        /// Absolute path of the time index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Entry number.
        slot: usize,
        /// The entry's offset.
        index_offset: i64,
        /// Last offset of the first batch at/after it, or −1.
        log_offset: i64,
    },
    /// A batch whose stored checksum does not match its content.
    InvalidChecksum {
        /// Absolute path of the log.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Batch position.
        position: u64,
        /// Base offset from the header.
        base_offset: i64,
        /// Last offset from the header.
        last_offset: i64,
        /// Stored checksum.
        stored_crc: u32,
        /// Computed checksum.
        computed_crc: u32,
    },
    /// The framing at `position` is corrupt (Kafka `CorruptRecordException`); reading the
    /// file stopped there.
    CorruptRecord {
        /// Absolute path of the file.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Position of the bad batch.
        position: u64,
        /// What is wrong.
        reason: String,
    },
    /// The records of a batch cannot be decoded (Kafka `InvalidRecordException`,
    /// decompression failure).
    InvalidRecord {
        /// Absolute path of the log.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Batch position.
        position: u64,
        /// What is wrong.
        reason: String,
    },
    /// A batch declaring more bytes than `--max-message-size`: it is not read into
    /// memory, and reading the file stopped there (Kafka's tool would load it whole, up
    /// to 2 GiB). An operational error: rerun with a larger `--max-message-size` to read
    /// it.
    BatchTooLarge {
        /// Absolute path of the log.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Position of the batch.
        position: u64,
        /// Its declared size in bytes, the 12-byte log overhead included.
        size: u64,
        /// `--max-message-size`.
        limit: u64,
    },
    /// Bytes after the last complete batch (only reported without `--max-bytes`).
    TrailingBytes {
        /// Absolute path of the log.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// The file name as Kafka prints it.
        file_name: String,
        /// Number of bytes.
        bytes: u64,
    },
    /// An index failed its sanity check.
    SanityCheckFailed {
        /// Absolute path of the index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A transaction index or producer snapshot entry is invalid.
    CorruptFile {
        /// Absolute path.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The file could not be read (missing, permission, bad name).
    Unreadable {
        /// Path.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Records whose offset is not the previous record's + 1 (deep iteration only).
    /// Informational: compaction creates gaps legitimately.
    NonConsecutiveOffsets {
        /// Absolute path of the log.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Previous record offset.
        prev_offset: i64,
        /// The offset that followed.
        offset: i64,
    },
}

impl Problem {
    /// Whether this problem makes the run fail (non-zero exit status).
    pub fn is_failure(&self) -> bool {
        !matches!(self, Problem::NonConsecutiveOffsets { .. })
    }

    /// Whether this is an operational error (the file could not be read) rather than a
    /// finding about its content.
    pub fn is_operational(&self) -> bool {
        matches!(
            self,
            Problem::Unreadable { .. } | Problem::BatchTooLarge { .. }
        )
    }
}

/// Unusual but valid things, accepted by our rules (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "note", rename_all = "snake_case")]
pub enum Note {
    /// A follower-style offset index entry: offset of a later batch, position of the first
    /// batch of the appended chunk. Kafka's tool reports it as a mismatch.
    ChunkOffsetEntry {
        /// Absolute path of the index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Entry number.
        slot: usize,
        /// The entry's offset (last offset of the chunk).
        offset: i64,
        /// The entry's position (first batch of the chunk).
        position: u32,
        /// Last offset of the first batch at the position.
        first_batch_last_offset: i64,
    },
    /// A time index entry holding a record-level offset (brokers 2.x–3.7, leader path).
    /// Kafka's tool reports it as an indexed offset not found.
    RecordLevelTimeEntry {
        /// Absolute path of the time index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Entry number.
        slot: usize,
        /// The entry's timestamp.
        timestamp: i64,
        /// The entry's offset (a record inside the batch).
        offset: i64,
        /// Last offset of the batch holding that record.
        batch_last_offset: i64,
    },
    /// The index has a zero-filled tail (not trimmed: active segment or unclean shutdown);
    /// iteration stopped at `slot` as Kafka's does.
    ZeroFilledTail {
        /// Absolute path of the index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// First zero slot.
        slot: usize,
        /// Slots from there to the end of the file.
        unused_slots: usize,
    },
    /// The time index has no `.index` next to it; lookups scan from position 0.
    MissingOffsetIndex {
        /// Absolute path of the time index.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
    },
}

/// A producer-state snapshot entry (`.snapshot`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProducerLine {
    /// Producer id.
    pub producer_id: i64,
    /// Producer epoch.
    pub producer_epoch: i16,
    /// Coordinator epoch.
    pub coordinator_epoch: i32,
    /// First offset of the ongoing transaction (−1 = none).
    pub current_txn_first_offset: i64,
    /// Timestamp of the last batch.
    pub last_timestamp: i64,
    /// First sequence of the last batch (`last_sequence − offset_delta`, wrapping from
    /// `i32::MAX` to 0 as Kafka's sequences do: `2147483647` for −1 and 0).
    pub first_sequence: i32,
    /// Last sequence of the last batch.
    pub last_sequence: i32,
    /// Last offset of the last batch (−1: none; the text line then ends at
    /// `lastTimestamp`, as Kafka's).
    pub last_offset: i64,
    /// `last_offset − first offset` of the last batch.
    pub offset_delta: i32,
}

/// Everything the dump reports, in output order. Serialized as one JSON object per event
/// with a `"type"` field (JSON lines).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// Start of a file (`Dumping <file>`), with the path as given.
    Dumping {
        /// The path as given.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
        /// Its type.
        file_type: FileType,
    },
    /// A file that is not a Kafka partition file (`Ignoring unknown file`).
    Ignored {
        /// The path.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
    },
    /// Start of a `.log` (`Log starting offset: <base>`).
    LogStart {
        /// Base offset from the file name.
        base_offset: i64,
    },
    /// Start of the KRaft bootstrap snapshot, `bootstrap.checkpoint` (the metadata a
    /// controller formats its log with): `KRaft bootstrap snapshot`.
    BootstrapSnapshot,
    /// Start of a KRaft snapshot (`Snapshot end offset: O, epoch: E`).
    SnapshotStart {
        /// End offset from the file name.
        end_offset: i64,
        /// Epoch from the file name.
        epoch: i64,
    },
    /// A batch.
    Batch(BatchLine),
    /// A record (deep iteration).
    Record(RecordLine),
    /// An offset index entry.
    OffsetEntry {
        /// Slot number.
        slot: usize,
        /// Absolute offset.
        offset: i64,
        /// Position in the log.
        position: u32,
    },
    /// A time index entry.
    TimeEntry {
        /// Slot number.
        slot: usize,
        /// Timestamp.
        timestamp: i64,
        /// Absolute offset.
        offset: i64,
    },
    /// A transaction index entry.
    TxnEntry {
        /// Entry number.
        slot: usize,
        /// Version as Kafka reads it.
        version: i16,
        /// Producer id.
        producer_id: i64,
        /// First offset of the aborted transaction.
        first_offset: i64,
        /// Offset of the ABORT marker.
        last_offset: i64,
        /// LSO when the abort was written.
        last_stable_offset: i64,
    },
    /// A producer snapshot entry.
    ProducerEntry(ProducerLine),
    /// An offset index with no entries (`<file> is empty.`).
    IndexEmpty {
        /// The path as given.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
    },
    /// `<file> passed sanity check.`
    SanityPassed {
        /// The path as given.
        #[serde(serialize_with = "lossy_path")]
        path: PathBuf,
    },
    /// A problem, as soon as it is found.
    Problem(Problem),
    /// A note, as soon as it is found.
    Note(Note),
}

/// Receives the events of a dump, in order, plus progress ticks (bytes of input
/// processed).
pub trait Sink {
    /// One event.
    fn event(&mut self, event: Event);
    /// `bytes` more input bytes processed (for a progress bar). Default: ignored.
    fn progress(&mut self, _bytes: u64) {}
    /// A sink that prints the text lines of Kafka's tool
    /// ([`text::event_line`], docs/kafka-behaviour.md#dump-log-segments) may take a `.log`
    /// dump's batch and record lines already rendered, in place of [`Event::Batch`] and
    /// [`Event::Record`] events: it answers the buffer each line is appended to (with its
    /// newline), and whether the lines are `--skip-record-metadata`'s. The lines are
    /// exactly the ones [`text::event_line`] renders for those events; no tree of a
    /// decoded record is built. Asked once per line. Default: `None`, every batch and
    /// record comes as an event.
    fn text_lines(&mut self) -> Option<(&mut String, bool)> {
        None
    }
}

/// A [`Sink`] that keeps every event (for tests and small inputs).
#[derive(Debug, Default, Clone)]
pub struct Collect(pub Vec<Event>);

impl Sink for Collect {
    fn event(&mut self, event: Event) {
        self.0.push(event);
    }
}

impl Collect {
    /// The problems, in the order found.
    pub fn problems(&self) -> Vec<&Problem> {
        self.0
            .iter()
            .filter_map(|e| match e {
                Event::Problem(p) => Some(p),
                _ => None,
            })
            .collect()
    }

    /// The notes, in the order found.
    pub fn notes(&self) -> Vec<&Note> {
        self.0
            .iter()
            .filter_map(|e| match e {
                Event::Note(n) => Some(n),
                _ => None,
            })
            .collect()
    }
}

/// Result of a run over several inputs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Files dumped (including ignored ones).
    pub files: usize,
    /// Files ignored as of an unknown type (`Ignoring unknown file`), counted in `files`
    /// too: when every file was ignored, nothing was checked.
    pub ignored: usize,
    /// Problems that make the run fail.
    pub failures: usize,
    /// Operational errors among them (unreadable files).
    pub operational_errors: usize,
    /// Informational problems (non-consecutive offsets).
    pub warnings: usize,
    /// Notes.
    pub notes: usize,
}

impl Summary {
    /// Exit status: 2 if a file could not be read, 1 if any other failing problem was
    /// found, 0 otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.operational_errors > 0 {
            2
        } else if self.failures > 0 {
            1
        } else {
            0
        }
    }
}

/// A sink adaptor that counts problems and notes into a [`Summary`].
struct Counting<'a> {
    inner: &'a mut dyn Sink,
    summary: Summary,
}

impl Sink for Counting<'_> {
    fn event(&mut self, event: Event) {
        match &event {
            Event::Dumping { .. } => self.summary.files += 1,
            Event::Ignored { .. } => self.summary.ignored += 1,
            Event::Problem(p) if p.is_failure() => {
                self.summary.failures += 1;
                if p.is_operational() {
                    self.summary.operational_errors += 1;
                }
            }
            Event::Problem(_) => self.summary.warnings += 1,
            Event::Note(_) => self.summary.notes += 1,
            _ => {}
        }
        self.inner.event(event);
    }
    fn progress(&mut self, bytes: u64) {
        self.inner.progress(bytes);
    }
    fn text_lines(&mut self) -> Option<(&mut String, bool)> {
        self.inner.text_lines()
    }
}

/// Serializes a path as a JSON string: exactly when it is UTF-8 (JSON escapes its control
/// characters), with U+FFFD for each invalid sequence otherwise, so that an event about
/// a file whose name is not UTF-8 is still printed instead of failing to encode (the text
/// output shows such a name's exact bytes, see [`text::escape_path`]).
pub(crate) fn lossy_path<S: serde::Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

/// [`lossy_path`] for an optional path (`null` when absent).
pub(crate) fn lossy_path_opt<S: serde::Serializer>(
    path: &Option<PathBuf>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match path {
        Some(p) => lossy_path(p, s),
        None => s.serialize_none(),
    }
}

/// Absolute form of a path for reports (Kafka prints `getAbsolutePath`).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Splits inputs given as `--files a,b` (comma-separated) into paths; empty items are
/// dropped.
pub fn split_files_arg(arg: &str) -> Vec<PathBuf> {
    arg.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// Expands inputs: a directory becomes its partition files in offset order (for each base
/// offset: `.log`, `.index`, `.timeindex`, `.txnindex`, producer `.snapshot`; KRaft
/// `<offset>-<epoch>.checkpoint` snapshots after all of them); a log-dir root (a
/// directory without partition files of its own) becomes the partition files of each of
/// its subdirectories, in name order (see [`directory_files`]). Other paths are kept as
/// given, and so is a directory whose own name is a segment file's (`….log` that is a
/// directory), which [`dump_file`] then reports as not a regular file. Other directory
/// entries (`partition.metadata`, `leader-epoch-checkpoint`, `.deleted`/`.cleaned`/`.swap`
/// files, …) are skipped.
///
/// # Errors
/// A directory cannot be listed.
pub fn expand_inputs(inputs: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in inputs {
        if is_dump_dir(input) {
            out.extend(directory_files(input)?);
        } else {
            out.push(input.clone());
        }
    }
    Ok(out)
}

/// `true` for a directory that is to be expanded (not one named like a segment file).
fn is_dump_dir(path: &Path) -> bool {
    path.is_dir() && FileType::of(path) == FileType::Unknown
}

/// The files a directory input stands for: its own partition files
/// ([`partition_files`]) or, when it has none (a log-dir root), those of each
/// subdirectory in name order. Empty when there is nothing to dump.
///
/// # Errors
/// The directory cannot be listed.
pub fn directory_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let own = partition_files(dir)?;
    if !own.is_empty() {
        return Ok(own);
    }
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| is_dump_dir(p))
        .collect();
    subdirs.sort();
    let mut out = Vec::new();
    for sub in subdirs {
        out.extend(partition_files(&sub)?);
    }
    Ok(out)
}

/// The partition files of a directory, in dump order (see [`expand_inputs`]).
///
/// # Errors
/// The directory cannot be listed.
pub fn partition_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut keyed = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        // Not only regular files: a segment file that is a directory, FIFO, socket or
        // device is listed, so that the dump reports it instead of skipping it.
        if std::fs::metadata(&path).is_err() {
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let ty = FileType::of(&path);
        let key = match ty {
            FileType::Log
            | FileType::OffsetIndex
            | FileType::TimeIndex
            | FileType::TxnIndex
            | FileType::ProducerSnapshot => {
                let Some((prefix, _)) = name.split_once('.') else {
                    continue;
                };
                let Ok(offset) = prefix.parse::<i64>() else {
                    continue;
                };
                (0u8, offset, 0i64, ty)
            }
            FileType::KraftSnapshot => match parse_kraft_snapshot_name(name) {
                Some((offset, epoch)) => (1u8, offset, epoch, ty),
                None => continue,
            },
            FileType::Unknown => continue,
        };
        keyed.push((key, path));
    }
    keyed.sort();
    Ok(keyed.into_iter().map(|(_, p)| p).collect())
}

/// Parses `<20-digit offset>-<10-digit epoch>.checkpoint` (a KRaft snapshot name) into
/// `(end offset, epoch)`.
pub fn parse_kraft_snapshot_name(name: &str) -> Option<(i64, i64)> {
    let stem = name.strip_suffix(".checkpoint")?;
    let (offset, epoch) = stem.split_once('-')?;
    if offset.is_empty()
        || epoch.is_empty()
        || !offset.bytes().all(|b| b.is_ascii_digit())
        || !epoch.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((offset.parse().ok()?, epoch.parse().ok()?))
}

/// Dumps one file: emits `Dumping`, then dispatches on its type (docs/kafka-behaviour.md#dump-log-segments).
pub fn dump_file(path: &Path, opts: &DumpOptions, sink: &mut dyn Sink) {
    let file_type = FileType::of(path);
    sink.event(Event::Dumping {
        path: path.to_path_buf(),
        file_type,
    });
    if file_type != FileType::Unknown {
        if let Err(e) = ensure_regular_file(path) {
            sink.event(Event::Problem(Problem::Unreadable {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }));
            return;
        }
    }
    match file_type {
        FileType::Log | FileType::KraftSnapshot => log::dump_log(path, file_type, opts, sink),
        FileType::OffsetIndex => index::dump_offset_index(path, opts, sink),
        FileType::TimeIndex => index::dump_time_index(path, opts, sink),
        FileType::TxnIndex => txn::dump_txn_index(path, sink),
        FileType::ProducerSnapshot => txn::dump_producer_snapshot(path, sink),
        FileType::Unknown => sink.event(Event::Ignored {
            path: path.to_path_buf(),
        }),
    }
}

/// Why a directory input is reported as [`Problem::Unreadable`] when it holds nothing to
/// dump.
pub const NOTHING_TO_DUMP: &str = "nothing to dump: no segment files (.log, .index, .timeindex, .txnindex, .snapshot, KRaft .checkpoint) in this directory or in its partition directories";

/// Why `dump-log` exits 2 when every file it was given is of an unknown type (without
/// `--kafka-strict`: Kafka's tool exits 0 there, docs/kafka-behaviour.md#dump-log-nothing-checked).
pub const NOTHING_CHECKED: &str = "nothing checked: every file given is of an unknown type and was ignored (dump-log reads .log, .index, .timeindex, .txnindex, .snapshot and KRaft .checkpoint files)";

/// Dumps every input (directories expanded with [`expand_inputs`]) and returns the
/// [`Summary`]. An input that does not exist, and a directory with nothing to dump
/// (no partition files of its own nor in its subdirectories), are reported as
/// [`Problem::Unreadable`] (exit status 2), never as an empty success.
pub fn run(inputs: &[PathBuf], opts: &DumpOptions, sink: &mut dyn Sink) -> Summary {
    let mut counting = Counting {
        inner: sink,
        summary: Summary::default(),
    };
    for input in inputs {
        let files = if is_dump_dir(input) {
            match directory_files(input) {
                Ok(f) if f.is_empty() => {
                    counting.event(Event::Problem(Problem::Unreadable {
                        path: input.clone(),
                        reason: NOTHING_TO_DUMP.into(),
                    }));
                    continue;
                }
                Ok(f) => f,
                Err(e) => {
                    counting.event(Event::Problem(Problem::Unreadable {
                        path: input.clone(),
                        reason: format!("cannot list directory: {e}"),
                    }));
                    continue;
                }
            }
        } else {
            vec![input.clone()]
        };
        for f in files {
            dump_file(&f, opts, &mut counting);
        }
    }
    counting.summary
}

/// What a path is when it is not a regular file (after following symlinks), for
/// messages: `"a directory"`, `"a FIFO"`, `"a socket"`, `"a character device"`,
/// `"a block device"`, `"not a regular file"`.
fn kind_of(ft: std::fs::FileType) -> &'static str {
    use index_core::pio::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

/// Checks, before anything opens it, that `path` is a regular file (symlinks are
/// followed, as Kafka follows them). Opening a FIFO for reading blocks until a writer
/// comes, so every file the dump tool reads goes through this first.
///
/// # Errors
/// `InvalidInput` naming what the path is (a directory, FIFO, socket or device);
/// the `metadata` error (e.g. `NotFound`) otherwise.
pub fn ensure_regular_file(path: &Path) -> std::io::Result<()> {
    let ft = std::fs::metadata(path)?.file_type();
    if ft.is_file() {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a regular file: a segment file must be a regular file",
                path.display(),
                kind_of(ft)
            ),
        ))
    }
}

/// [`std::fs::read`] after [`ensure_regular_file`] (for files already bounded by the
/// caller).
pub(crate) fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    ensure_regular_file(path)?;
    std::fs::read(path)
}

/// What an index-like file is, for the size check of [`open_bounded`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bounded {
    /// `.index` or `.timeindex`.
    Index,
    /// `.txnindex`.
    TxnIndex,
    /// Producer `.snapshot`.
    Snapshot,
}

/// Why a file larger than [`MAX_INDEX_FILE_BYTES`] cannot be Kafka's, and what to do.
pub(crate) fn too_large_reason(kind: Bounded, len: u64) -> String {
    let limit = MAX_INDEX_FILE_BYTES;
    let (what, why, todo) = match kind {
        Bounded::Index => (
            "index",
            "a broker maps an index whole and a mapping holds at most 2147483647 bytes (segment.index.bytes is an int)",
            "`dump-log --rebuild-indexes-to DIR` on its .log builds the index recovery would write, to compare with or replace it",
        ),
        Bounded::TxnIndex => (
            "transaction index",
            "it holds one 34-byte entry per ABORT marker, each a batch of at least 61 bytes, in a segment of at most 2147483647 bytes",
            "`dump-log --rebuild-indexes-to DIR` on its .log builds the transaction index recovery would write",
        ),
        Bounded::Snapshot => (
            "producer snapshot",
            "a broker reads a snapshot into one array of at most 2147483647 bytes",
            "a snapshot is only a cache: moved aside, the broker rebuilds producer state from the log",
        ),
    };
    format!(
        "the file is {len} bytes, larger than any {what} Kafka writes ({limit} bytes at most: {why}); it is not a Kafka {what} (a sparse, corrupted or foreign file) and was not read. Check what wrote it; {todo}"
    )
}

/// Opens an index-like file for chunked reads, after checking that it is a regular file
/// no larger than [`MAX_INDEX_FILE_BYTES`]; returns it with its length. A failure is
/// reported as [`Problem::Unreadable`] (naming the size and the bound for a file that is
/// too large) and gives `None`.
pub(crate) fn open_bounded(
    path: &Path,
    kind: Bounded,
    sink: &mut dyn Sink,
) -> Option<(std::fs::File, u64)> {
    match open_bounded_io(path, kind) {
        Ok(f) => Some(f),
        Err(reason) => {
            sink.event(Event::Problem(Problem::Unreadable {
                path: path.to_path_buf(),
                reason,
            }));
            None
        }
    }
}

/// [`open_bounded`] without the report: the reason as text.
pub(crate) fn open_bounded_io(path: &Path, kind: Bounded) -> Result<(std::fs::File, u64), String> {
    ensure_regular_file(path).map_err(|e| e.to_string())?;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    if len > MAX_INDEX_FILE_BYTES {
        return Err(too_large_reason(kind, len));
    }
    Ok((file, len))
}

/// Base offset from a file name (characters before the first dot), or a reported
/// [`Problem::Unreadable`].
pub(crate) fn base_offset_of(path: &Path, sink: &mut dyn Sink) -> Option<i64> {
    match crate::names::offset_from_file(path) {
        Ok(o) => Some(o),
        Err(e) => {
            sink.event(Event::Problem(Problem::Unreadable {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }));
            None
        }
    }
}

/// `<dir>/<prefix>.<suffix>` where prefix is the file name before its first dot
/// (Kafka: `file.getName.split("\\.")(0)`).
pub(crate) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let prefix = name.split('.').next().unwrap_or("");
    path.with_file_name(format!("{prefix}{suffix}"))
}
