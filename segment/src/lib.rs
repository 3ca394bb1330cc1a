//! # segment
//!
//! Kafka log segments, byte-compatible with Apache Kafka: the record formats of `.log`
//! files ([`record`], [`format`](mod@format)), the `.log` file object ([`LogFile`]),
//! lazily mapped indexes ([`LazyIndex`]), [`LogSegment`], the [`LogSegments`] map and a
//! multi-segment [`Log`] with Kafka's loader and recovery.
//!
//! Behaviour follows Kafka's `LogSegment`, `LazyIndex`, `FileRecords`, `LogLoader` and
//! `LogSegments` (sections 1, 5 and 8–11 of `docs/kafka-behaviour.md` in the repository);
//! deviations (where Kafka can lose or hide data) are documented on the items concerned.
//! `docs/kafka-behaviour.md#<name>` (a named anchor), "field case BN" and "acceptance case N"
//! in these docs refer to that document's sections and tables: they say where a rule comes
//! from, and every item's docs stand without them.
//!
//! Units: offsets are Kafka log offsets (`i64`), timestamps are milliseconds since the Unix
//! epoch (`i64`, −1 = none), positions are byte positions in a `.log` file (`u64`), sizes
//! are bytes.
//!
//! # Example
//!
//! A partition directory: open a [`Log`], append record batches built with
//! [`record::BatchBuilder`], read them back, and look records up by offset and by
//! timestamp.
//!
//! ```
//! use segment::record::{batches_from, BatchBuilder};
//! use segment::{Log, LogConfig};
//!
//! let dir = tempfile::tempdir()?;
//! let config = LogConfig {
//!     segment_bytes: 1024, // roll small segments, to show it
//!     ..LogConfig::default()
//! };
//! // `Log` is `Log<KafkaBatchFormat>`: Kafka's `.log` format.
//! let log = Log::open(dir.path().join("orders-0"), config.clone())?;
//!
//! // Ten batches of three records: offsets 0..30, timestamps 10 ms apart.
//! let t0 = 1_700_000_000_000; // ms since the epoch
//! for b in 0..10i64 {
//!     let mut batch = BatchBuilder::new(3 * b);
//!     for r in 0..3 {
//!         let offset = 3 * b + r;
//!         let value = format!("order {offset}");
//!         batch = batch.record(t0 + 10 * offset, Some(b"key"), Some(value.as_bytes()));
//!     }
//!     log.append(&batch.build()?)?;
//! }
//! assert_eq!(log.log_end_offset(), 30);
//! assert!(log.segments().number_of_segments() > 1);
//!
//! // By offset: the read starts at the batch holding offset 17 (offsets 15..=17).
//! let fetch = log.read(17, 1)?; // at least one whole batch
//! let batch = batches_from(&fetch.records, 0).next().unwrap()?;
//! assert_eq!((batch.base_offset(), batch.last_offset()), (15, 17));
//! let record = batch.records()?.find(|r| r.as_ref().is_ok_and(|r| r.offset == 17)).unwrap()?;
//! assert_eq!(record.value(), Some(&b"order 17"[..]));
//!
//! // By timestamp: the first record at or after t0 + 205 ms is offset 21 (t0 + 210 ms).
//! let found = log.offset_for_timestamp(t0 + 205)?.unwrap();
//! assert_eq!((found.offset, found.timestamp), (21, t0 + 210));
//!
//! // A clean close writes the indexes and the clean-shutdown marker: reopening recovers
//! // nothing.
//! log.close()?;
//! let log = Log::open(dir.path().join("orders-0"), config)?;
//! assert_eq!((log.log_end_offset(), log.stats().scanned_segments()), (30, 0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Log::append`] is a follower's append (the batches carry their offsets);
//! [`Log::append_as_leader`] is Kafka's leader append: the log assigns the offsets and
//! applies Kafka's produce validation, the topic's codec and timestamp type, and
//! idempotence and transactions ([`leader`]).
//!
//! # The leader's engine
//!
//! A broker's partition leader: producers' batches (base offset 0, as clients send
//! them) get their offsets from the log, a retried idempotent batch is answered with its
//! original offsets, a `read_committed` fetch stops at the last stable offset and lists
//! the aborted transactions it overlaps, and a fetch can be sent without copying
//! ([`Log::read_region`], Kafka's `FileRecords.slice`; on Linux `sendfile_to` a socket).
//!
//! ```
//! use segment::record::{BatchBuilder, ControlRecordType};
//! use segment::{AppendOrigin, FetchIsolation, KafkaError, Log, LogConfig};
//!
//! let dir = tempfile::tempdir()?;
//! // The high watermark is the replication layer's: here we move it ourselves.
//! let log = Log::options()
//!     .manual_high_watermark(0)
//!     .open(dir.path().join("payments-0"), LogConfig::default())?;
//! let now = 1_700_000_000_000;
//! let leader_epoch = 3;
//!
//! // An idempotent producer (id 7, epoch 0) sends three records from sequence 0.
//! let mut batch = BatchBuilder::new(0).producer(7, 0, 0);
//! for i in 0..3 {
//!     batch = batch.record(now, Some(b"k"), Some(format!("pay {i}").as_bytes()));
//! }
//! let batch = batch.build()?;
//! let info = log.append_as_leader(&batch, leader_epoch, AppendOrigin::Client)?;
//! assert_eq!((info.first_offset, info.last_offset), (0, 2));
//! // Its retry is a duplicate: the original offsets, nothing appended.
//! let retry = log.append_as_leader(&batch, leader_epoch, AppendOrigin::Client)?;
//! assert!(retry.duplicate && retry.first_offset == 0 && log.log_end_offset() == 3);
//! // A sequence gap is refused with Kafka's error (its name and protocol code).
//! let gap = BatchBuilder::new(0).producer(7, 0, 9).record(now, None, Some(b"x")).build()?;
//! let err = log.append_as_leader(&gap, leader_epoch, AppendOrigin::Client).unwrap_err();
//! assert_eq!(err.kafka_error(), KafkaError::OutOfOrderSequenceNumber);
//!
//! // A transaction (producer 8) that its coordinator aborts.
//! let txn = BatchBuilder::new(0).producer(8, 0, 0).transactional(true)
//!     .record(now, Some(b"k"), Some(b"tentative")).build()?;
//! log.append_as_leader(&txn, leader_epoch, AppendOrigin::Client)?; // offset 3
//! let abort = BatchBuilder::new(0).producer(8, 0, -1)
//!     .build_end_txn_marker(ControlRecordType::Abort, 0, now)?;
//! log.append_as_leader(&abort, leader_epoch, AppendOrigin::Coordinator)?; // offset 4
//!
//! // Followers caught up: the high watermark passes the marker, the transaction is stable.
//! log.update_high_watermark(log.log_end_offset())?;
//! assert_eq!(log.last_stable_offset(), 5);
//! let fetch = log.read_with(0, 1 << 20, FetchIsolation::TxnCommitted, true)?;
//! let aborted = fetch.aborted_transactions.unwrap();
//! assert_eq!((aborted[0].producer_id, aborted[0].first_offset), (8, 3));
//!
//! // The same fetch as a file region: no copy into user space until written out.
//! let region = log.read_region(0, 1 << 20, FetchIsolation::HighWatermark, true)?;
//! let mut socket = Vec::new(); // any `Write`; on Linux `region.region.sendfile_to(&tcp)`
//! region.region.write_to(&mut socket)?;
//! assert_eq!(socket, fetch.records);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Another storage engine can use the same machinery with its own batch format by
//! implementing [`BatchFormat`]: the [`format`](mod@format) module docs say what each
//! method must do and when it is called, with a complete example (a length-prefixed,
//! CRC-32C-checked format used with `Log::<Tiny>`, rolled, crashed, recovered and
//! searched). `examples/tiny_queue.rs` in the repository is a longer one.
//!
//! # Features
//!
//! | feature | on by default | what it adds | dependencies |
//! |---|---|---|---|
//! | `gzip`, `snappy`, `lz4` | yes | decompressing and building batches of that codec | `flate2`, `snap`, `lz4_flex` (pure Rust) |
//! | `zstd` | yes | the same for zstd | `zstd` (builds the zstd C library) |
//! | `tracing` | yes | recovery and loader diagnostics as `tracing` events | `tracing` |
//! | `dump` | yes | the [`dump`] module (Kafka's `DumpLogSegments`) | `serde` |
//! | `cli` | yes | the `dump-log` binary | `clap`, `indicatif`, `serde_json` |
//! | `cleaner` | yes | the `clean` module (the log cleaner) and `Log::clean` | `md-5` |
//!
//! Without a codec's feature, reading the records of a batch of that codec is a typed
//! error; headers, CRCs, recovery, indexing and reads of whole batches work on every batch.
//!
//! # Embedding with your own batch format
//!
//! A storage engine that brings its own [`BatchFormat`] needs none of the features:
//!
//! ```toml
//! [dependencies]
//! segment = { version = "0.1", default-features = false }
//! ```
//!
//! That build compiles 29 crates and no C code (the repository's CI checks it with
//! `xtask/lean-embedder`: at most 30 crates, no `cc` or `*-sys` crate). Implement
//! [`BatchFormat`] on a zero-sized type and open it with
//! `LogOptions::<YourFormat>::new().open(..)`; the
//! [`format`](mod@format) module docs have a complete example.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod checkpoint;
#[cfg(feature = "cleaner")]
pub mod clean;
pub mod config;
pub mod deleter;
mod diag;
#[cfg(feature = "dump")]
pub mod dump;
pub mod error;
pub mod format;
pub mod fs;
pub mod lazy;
pub mod leader;
pub mod loader_plan;
pub mod lock;
pub mod log;
pub mod log_file;
pub mod names;
pub mod record;
use index_core::pio;
pub mod producer;
pub mod region;
pub mod scan;
pub mod segment;
pub mod segment_map;
pub mod tier;
pub mod time;
pub(crate) mod validate;

pub use config::{LogConfig, RollParams};
pub use error::{Result, SegmentError};
pub use format::{BatchFormat, BatchInfo, KafkaBatchFormat};
pub use lazy::LazyIndex;
pub use leader::{
    AppendOrigin, KafkaError, LogAppendInfo, RecordError, TimestampType, TopicCompression,
};
pub use lock::DirLock;
#[cfg(feature = "cleaner")]
pub use log::CleanerStats;
#[cfg(feature = "cleaner")]
pub use log::{Cleaner, CleanerError, CleanupPolicy};
pub use log::{FetchIsolation, ListedOffset, Log, LogBounds, LogOptions, LogStats};
pub use log_file::{LogFile, LogFileMode};
pub use producer::{CompletedTxn, LeaderEpochCache, ProducerStateManager};
pub use region::FileRegion;
pub use scan::{LogOffsetPosition, ScanStop, TimestampAndOffset};
pub use segment::{FetchDataInfo, LogOffsetMetadata, LogSegment, RegionFetch, SegmentOptions};
pub use segment_map::{self as segments, LogSegments};
pub use tier::SegmentUpload;
pub use time::{Clock, MockTime, SystemTime, Time};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
