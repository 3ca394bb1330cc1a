//! # segment
//!
//! Kafka log segments, byte-compatible with Apache Kafka: the record formats of `.log`
//! files ([`record`], [`format`]), the `.log` file object ([`LogFile`]), lazily mapped
//! indexes ([`LazyIndex`]), [`LogSegment`], the [`LogSegments`] map and a multi-segment
//! [`Log`] with Kafka's loader and recovery.
//!
//! Behaviour follows `shared/spec/kafka-index-spec.md` §1, §5, §8–§11; deviations (where
//! Kafka can lose or hide data) are documented on the items concerned.
//!
//! Units: offsets are Kafka log offsets (`i64`), timestamps are milliseconds since the Unix
//! epoch (`i64`, −1 = none), positions are byte positions in a `.log` file (`u64`), sizes
//! are bytes.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod format;
pub mod record;

pub mod config;
pub mod dump;
pub mod error;
pub mod fs;
pub mod lazy;
pub mod log;
pub mod log_file;
pub mod names;
pub mod producer;
pub mod scan;
pub mod segment;
pub mod segments;
pub mod time;

pub use config::{LogConfig, RollParams};
pub use error::{Result, SegmentError};
pub use format::{BatchFormat, BatchInfo, KafkaBatchFormat};
pub use lazy::{LazyIndex, LazyLoad};
pub use log::{Log, LogStats};
pub use log_file::LogFile;
pub use producer::{CompletedTxn, LeaderEpochCache, ProducerStateManager};
pub use scan::{LogOffsetPosition, ScanStop, TimestampAndOffset};
pub use segment::{FetchDataInfo, LogOffsetMetadata, LogSegment};
pub use segments::LogSegments;
pub use time::{Clock, MockTime, SystemTime, Time};
