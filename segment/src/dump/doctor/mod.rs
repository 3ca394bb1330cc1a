//! `dump-log doctor DIR`: a read-only pre-flight check of a broker's log directory (or of
//! one partition directory) that says what a Kafka 4.4 broker, and this library's loader
//! ([`crate::Log::open`]), will find and do when they open it, and how long the recovery
//! will take.
//!
//! Nothing is written, renamed, locked or mapped: segments are opened with
//! [`LogFileMode::ReadOnly`](crate::LogFileMode::ReadOnly), indexes are read with
//! positioned reads, and the loader's own checks are reused
//! through the public API, as any embedder would ([`crate::loader_plan::segment_check`],
//! [`crate::LogSegment::quick_index_check`], [`crate::loader_plan::plan_swaps`], the
//! snapshot and checkpoint decoders).
//!
//! Both layouts are understood: Kafka's (the clean-shutdown marker
//! `.kafka_cleanshutdown` and the `recovery-point-offset-checkpoint`,
//! `log-start-offset-checkpoint` and `replication-offset-checkpoint` files at the log-dir
//! root, one `topic partition offset` line per partition) and this library's (the marker
//! and single-entry `recovery-point` / `log-start-offset` files inside the partition
//! directory); a partition directory with the library's files uses those.
//!
//! The prediction models this library's loader (`segment/src/log/load.rs`): without a
//! clean-shutdown marker every segment from the one holding the recovery point on is
//! rescanned, and, marker or not, every segment that fails the loader's consistency checks
//! is rebuilt from its `.log`. Seconds are bytes over a throughput, measured by
//! [`calibrate`] (recovering a temporary segment with [`crate::LogSegment::recover`]) or
//! given. Findings say where Kafka 4.4 differs (it trusts some files the library rebuilds).
//!
//! Exit codes ([`DoctorReport::exit_code`]): 0 nothing to do (no finding above
//! [`Severity::Info`]); 1 warnings, among them "the broker will run recovery"; 2 errors:
//! data the broker will truncate, delete or refuse to load (and, in the binary, usage or
//! I/O errors).

mod calibrate;
pub mod checkpoints;
mod deep;
mod partition;
mod render;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use calibrate::{calibrate, measure_recovery, MeasuredRecovery};
pub use render::render_text;

use checkpoints::{
    RootCheckpoint, CLEANER_OFFSET_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_OFFSET_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT,
};

/// How serious a [`Finding`] is; the exit code is that of the most serious one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; the broker handles it without cost or loss.
    Info,
    /// The broker will do work (recovery, a rebuilt index, a completed swap) or trust a file
    /// that lies; no acknowledged data is lost.
    Warning,
    /// Acknowledged data is missing (a high watermark above the log end), or the broker
    /// will truncate or delete data, or refuse to load the partition.
    Error,
}

impl Severity {
    /// The lower-case name used in text output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// What a [`Finding`] is about (stable names for scripts; `--json` prints them in
/// snake case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// No clean-shutdown marker: the loader recovers from the recovery point.
    RecoveryNeeded,
    /// A segment fails the loader's consistency checks and is rebuilt from its `.log`.
    IndexDisagrees,
    /// A `.log` ends in zeros after its last batch (a preallocated file, KAFKA-21000).
    ZeroFilledLogTail,
    /// A `.log` ends in bytes that are not a complete, valid batch (recovery truncates them).
    TornLogTail,
    /// A legacy segment holding an offset more than `i32::MAX` above its base: recovery
    /// splits it (Kafka's `splitOverflowedSegment`).
    OffsetOverflow,
    /// An `.index`/`.timeindex` with zero slots after its entries (untrimmed or
    /// preallocated, KAFKA-10207).
    UntrimmedIndex,
    /// A `.timeindex` that is all zeros (full-size, never written, KAFKA-19200).
    UnwrittenTimeIndex,
    /// A non-empty segment without `.index` or `.timeindex`.
    MissingIndex,
    /// An index file without its `.log`.
    OrphanIndex,
    /// A `*.deleted` file.
    DeletedFile,
    /// A `*.cleaned` file.
    CleanedFile,
    /// A `*.swap` file the loader completes.
    SwapCompleted,
    /// A `*.swap` file the loader deletes (an unfinished split or clean).
    SwapDeleted,
    /// A `*.swap` file this library's loader refuses (Kafka would complete it).
    SwapRefused,
    /// A `*.tmp` file.
    TempFile,
    /// A producer snapshot that does not decode.
    CorruptSnapshot,
    /// A producer snapshot above the log end offset.
    SnapshotAheadOfLog,
    /// A `leader-epoch-checkpoint` that does not parse.
    CorruptLeaderEpochCheckpoint,
    /// Leader-epoch entries starting above the log end offset.
    LeaderEpochAheadOfLog,
    /// A checkpoint (root or partition) that cannot be parsed.
    MalformedCheckpoint,
    /// No recovery-point entry for the partition: it is recovered from offset 0.
    MissingRecoveryPoint,
    /// The checkpointed log start offset is above the log end offset.
    LogStartAheadOfLog,
    /// The checkpointed high watermark is above the log end offset: acknowledged records
    /// are missing from this log (an error).
    HighWatermarkAheadOfLog,
    /// A directory of a Kafka log dir whose name is not `<topic>-<partition>` (nor one of
    /// the `-delete`, `-future`, `-stray` forms).
    NotAPartitionName,
    /// The partition's `cleaner-offset-checkpoint` entry against its log: the first dirty
    /// offset, the dirty ratio and whether a clean is due (a compacted partition).
    CleanerState,
    /// A file could not be read or a segment could not be opened.
    Unreadable,
    /// An entry with a segment or snapshot suffix that is not a regular file (a FIFO, a
    /// directory, a dangling or looping symbolic link): the loader cannot open it.
    NotARegularFile,
    /// A segment, index or snapshot file whose name does not start with an offset: Kafka's
    /// loader parses the prefix as a `long` and fails on it.
    BadFileName,
}

impl FindingKind {
    /// The snake-case name (as in `--json`), e.g. `zero_filled_log_tail`.
    pub fn name(self) -> String {
        let mut out = String::new();
        for (i, c) in format!("{self:?}").chars().enumerate() {
            if c.is_ascii_uppercase() {
                if i > 0 {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            } else {
                out.push(c);
            }
        }
        out
    }
}

/// One thing the doctor found, with what the broker will do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// How serious it is.
    pub severity: Severity,
    /// What it is about.
    pub kind: FindingKind,
    /// The file it is about (its name inside the partition directory), if any.
    pub file: Option<String>,
    /// What was found, and what the broker (and this library) will do.
    pub detail: String,
}

/// Where a partition's recovery point and clean-shutdown marker come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// Kafka's: marker and checkpoints at the log-dir root (the partition's parent).
    Kafka,
    /// This library's: marker and single-entry checkpoints inside the partition directory.
    Library,
}

/// What the doctor found in one partition directory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionReport {
    /// The directory's name (`<topic>-<partition>`).
    pub name: String,
    /// The directory.
    #[serde(serialize_with = "crate::dump::lossy_path")]
    pub dir: PathBuf,
    /// Where the marker and recovery point were read.
    pub layout: Layout,
    /// Segments (`.log` files without a state suffix).
    pub segments: usize,
    /// Bytes of those `.log` files.
    pub bytes: u64,
    /// The log end offset read from the last segment (`None` if it could not be read).
    pub log_end_offset: Option<i64>,
    /// The checkpointed recovery point (`None` when missing or unreadable: 0 is used).
    pub recovery_point: Option<i64>,
    /// The checkpointed log start offset, if any.
    pub log_start_offset: Option<i64>,
    /// The checkpointed high watermark, if any (Kafka layout only).
    pub high_watermark: Option<i64>,
    /// A clean-shutdown marker is present (and every checkpoint readable).
    pub clean_shutdown: bool,
    /// Base offsets of the segments the loader will rescan.
    pub recovered_segments: Vec<i64>,
    /// Base offsets of the segments the loader writes by splitting a rescanned segment
    /// whose offsets overflow (Kafka's `splitOverflowedSegment`, field case B5d), in
    /// offset order; each piece is rescanned after the split, so the loader rescans
    /// `recovered_segments.len() + split_pieces.len()` segments
    /// (`LogStats::segments_recovered`). Complete only for the rescanned segments read in
    /// full (not in `unread_recovered_segments`).
    pub split_pieces: Vec<i64>,
    /// Bytes the loader will rescan (the sizes of those segments' `.log` files).
    pub rescan_bytes: u64,
    /// Bytes recovery will cut from the ends of those segments (zero-filled or torn
    /// tails; as `LogStats::bytes_truncated` counts them). Without `--deep` only the
    /// segments that fail the loader's checks are read in full, so a corrupt batch in the
    /// middle of another rescanned segment is not counted.
    pub truncate_bytes: u64,
    /// Rescanned segments that were not read in full (their `.log` passed the loader's
    /// end checks, so only `--deep` reads the rest): recovery may still find a corrupt
    /// batch in them, so the bytes cut, the segments deleted and the log end after the
    /// open are unknown without `--deep` when this is not empty.
    pub unread_recovered_segments: Vec<i64>,
    /// Base offsets of the segments the loader deletes (those after a segment whose
    /// recovery cuts bytes; every segment when the log start offset is above the log end;
    /// an empty segment lying inside the offsets of the one before it). Complete only
    /// when `unread_recovered_segments` is empty.
    pub deleted_segments: Vec<i64>,
    /// The log end offset after the open (`None`: unknown without `--deep`, or the log
    /// end could not be read).
    pub recovered_log_end_offset: Option<i64>,
    /// Whether opening the partition loses records, as far as the doctor can tell.
    pub data_loss: DataLoss,
    /// `rescan_bytes` at the report's throughput, plus its per-segment overhead.
    pub predicted_seconds: f64,
    /// The log cleaner's view of the partition, when the log directory's
    /// `cleaner-offset-checkpoint` has an entry for it (a compacted partition).
    pub cleaner: Option<CleanerReport>,
    /// Everything found, most serious first.
    pub findings: Vec<Finding>,
}

/// The log cleaner's view of one partition, from its `cleaner-offset-checkpoint` entry and
/// its segments' sizes, as `LogCleanerManager.cleanableOffsets` and `LogToClean` compute
/// it (`docs/kafka-behaviour.md#cleaner-cleanable-offsets`). Offline, the last stable offset is taken
/// as the checkpointed high watermark (else the log end) and `min.compaction.lag.ms` as
/// Kafka's default 0, so the first uncleanable offset may be higher than the broker's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CleanerReport {
    /// The checkpointed first dirty offset.
    pub checkpoint: i64,
    /// The first dirty offset the next clean starts from: the checkpoint, or the log start
    /// offset when the checkpoint lies below it or above the log end (KAFKA-6266,
    /// KAFKA-8724; the broker writes the reset back).
    pub first_dirty_offset: i64,
    /// The checkpoint was out of the log's range and is reset.
    pub checkpoint_reset: bool,
    /// The first offset the next clean leaves alone (the active segment's base offset, or
    /// the last stable offset if lower).
    pub first_uncleanable_offset: i64,
    /// Bytes of the clean section (Kafka's `cleanBytes`).
    pub clean_bytes: u64,
    /// Bytes of the dirty section the next clean may read (Kafka's `cleanableBytes`).
    pub cleanable_bytes: u64,
    /// `cleanable_bytes / (clean_bytes + cleanable_bytes)`; `None` for an empty log.
    pub dirty_ratio: Option<f64>,
    /// Whether the log cleaner would choose the partition with Kafka's default
    /// `min.cleanable.dirty.ratio` (0.5): its dirty ratio is above it.
    pub due_at_default_ratio: bool,
}

impl PartitionReport {
    /// The most serious finding's severity (`Info` when there is none).
    pub fn severity(&self) -> Severity {
        self.findings
            .iter()
            .map(|f| f.severity)
            .max()
            .unwrap_or(Severity::Info)
    }

    /// Findings of at least `min` severity.
    pub fn count(&self, min: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity >= min).count()
    }
}

/// Whether opening a partition loses records: the doctor's answer to "is acknowledged data
/// lost?". It never says [`DataLoss::None`] when the loader would cut or delete a record:
/// where the cheap checks cannot know, it says [`DataLoss::Unknown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DataLoss {
    /// Nothing is lost: recovery cuts at most zero-filled tails.
    None,
    /// Unknown without `--deep`: the loader rescans segments the doctor did not read in
    /// full (they pass the end checks; a corrupt batch inside one would be cut, and the
    /// segments after it deleted).
    Unknown,
    /// Records are cut, deleted or missing, or the partition is refused (an error
    /// finding says which).
    Lost,
}

impl DataLoss {
    /// The words of the verdict.
    pub fn as_str(self) -> &'static str {
        match self {
            DataLoss::None => "no acknowledged data lost",
            DataLoss::Unknown => "whether acknowledged data is lost is unknown without --deep",
            DataLoss::Lost => "data lost or refused",
        }
    }
}

/// Where the throughput of the prediction comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "source")]
pub enum Throughput {
    /// Measured on this machine by [`calibrate`].
    Calibrated {
        /// MB (10^6 bytes) per second of [`crate::LogSegment::recover`].
        mb_per_s: f64,
        /// Bytes recovered by the calibration.
        bytes: u64,
        /// Seconds it took.
        seconds: f64,
        /// Seconds a recovered segment costs whatever its size (its index files resized,
        /// the segment flushed): from timed [`crate::Log::open`]s of partitions of one and
        /// of three one-batch segments without a clean-shutdown marker.
        segment_overhead_s: f64,
        /// Seconds a recovering partition costs besides its segments (the marker, the
        /// producer snapshot and the checkpoints written and fsynced).
        partition_overhead_s: f64,
    },
    /// Given on the command line (`--throughput-mbps`), or the default with
    /// `--no-calibrate`.
    Given {
        /// MB (10^6 bytes) per second.
        mb_per_s: f64,
        /// Seconds added per recovered segment (`--segment-overhead-ms`, default 0).
        segment_overhead_s: f64,
        /// Seconds added per partition with a recovered segment
        /// (`--partition-overhead-ms`, default 0).
        partition_overhead_s: f64,
    },
}

impl Throughput {
    /// MB (10^6 bytes) per second.
    pub fn mb_per_s(&self) -> f64 {
        match self {
            Throughput::Calibrated { mb_per_s, .. } | Throughput::Given { mb_per_s, .. } => {
                *mb_per_s
            }
        }
    }

    /// Seconds added per recovered segment.
    pub fn segment_overhead_s(&self) -> f64 {
        match self {
            Throughput::Calibrated {
                segment_overhead_s, ..
            }
            | Throughput::Given {
                segment_overhead_s, ..
            } => *segment_overhead_s,
        }
    }

    /// Seconds added per partition that recovers a segment.
    pub fn partition_overhead_s(&self) -> f64 {
        match self {
            Throughput::Calibrated {
                partition_overhead_s,
                ..
            }
            | Throughput::Given {
                partition_overhead_s,
                ..
            } => *partition_overhead_s,
        }
    }

    /// Seconds to rescan `bytes` in `segments` segments of one partition.
    pub fn seconds(&self, bytes: u64, segments: usize) -> f64 {
        let rate = self.mb_per_s() * 1e6;
        let scan = if rate > 0.0 {
            bytes as f64 / rate
        } else {
            f64::INFINITY
        };
        let fixed = if segments > 0 {
            self.partition_overhead_s()
        } else {
            0.0
        };
        scan + segments as f64 * self.segment_overhead_s() + fixed
    }
}

/// The throughput assumed with `--no-calibrate` and no `--throughput-mbps`: 500 MB/s, a
/// round figure below what `calibrate` measures on a laptop with a warm page cache.
pub const DEFAULT_THROUGHPUT_MBPS: f64 = 500.0;

/// The whole check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DoctorReport {
    /// The directory given.
    #[serde(serialize_with = "crate::dump::lossy_path")]
    pub path: PathBuf,
    /// Whether it was a log-dir root (`false`: one partition directory).
    pub log_dir: bool,
    /// The throughput of the prediction.
    pub throughput: Throughput,
    /// Findings about the directory itself (root checkpoints, stray files).
    pub findings: Vec<Finding>,
    /// One report per partition directory, by name.
    pub partitions: Vec<PartitionReport>,
}

impl DoctorReport {
    /// The most serious finding's severity, over the directory and every partition.
    pub fn severity(&self) -> Severity {
        self.findings
            .iter()
            .map(|f| f.severity)
            .chain(self.partitions.iter().map(PartitionReport::severity))
            .max()
            .unwrap_or(Severity::Info)
    }

    /// The exit status: 0 when no finding is above [`Severity::Info`], 1 for warnings
    /// (the broker will recover, rebuild or complete something), 2 for errors (it will
    /// truncate or delete data, or refuse the partition).
    pub fn exit_code(&self) -> i32 {
        match self.severity() {
            Severity::Info => 0,
            Severity::Warning => 1,
            Severity::Error => 2,
        }
    }

    /// Whether opening the directory loses records: the worst of the partitions'
    /// answers ([`DataLoss::Lost`] too for an error about the directory itself).
    pub fn data_loss(&self) -> DataLoss {
        let worst = |a: DataLoss, b: DataLoss| match (a, b) {
            (DataLoss::Lost, _) | (_, DataLoss::Lost) => DataLoss::Lost,
            (DataLoss::Unknown, _) | (_, DataLoss::Unknown) => DataLoss::Unknown,
            _ => DataLoss::None,
        };
        let root = if self.findings.iter().any(|f| f.severity == Severity::Error) {
            DataLoss::Lost
        } else {
            DataLoss::None
        };
        self.partitions
            .iter()
            .map(|p| p.data_loss)
            .fold(root, worst)
    }

    /// Bytes every partition's loader will rescan.
    pub fn rescan_bytes(&self) -> u64 {
        self.partitions.iter().map(|p| p.rescan_bytes).sum()
    }

    /// The partitions' predicted seconds, summed (one recovery thread; Kafka's default
    /// `num.recovery.threads.per.data.dir=2` halves it at best).
    pub fn predicted_seconds(&self) -> f64 {
        self.partitions.iter().map(|p| p.predicted_seconds).sum()
    }
}

/// What a partition directory's loader will read as its marker and checkpoints.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub(crate) layout: Layout,
    pub(crate) clean_marker: bool,
    pub(crate) recovery_point: Option<i64>,
    pub(crate) log_start_offset: Option<i64>,
    pub(crate) high_watermark: Option<i64>,
    /// A checkpoint was unreadable: the marker and recovery point are not trusted.
    pub(crate) malformed: bool,
    /// Findings about the checkpoints of this partition.
    pub(crate) findings: Vec<Finding>,
    /// The partition's entry in the log directory's `cleaner-offset-checkpoint`.
    pub(crate) cleaner_checkpoint: Option<i64>,
}

/// The root of a Kafka log directory as read once.
struct Root {
    marker: bool,
    recovery: RootCheckpoint,
    log_start: RootCheckpoint,
    replication: RootCheckpoint,
    cleaner: RootCheckpoint,
}

impl Root {
    fn read(dir: &Path) -> Root {
        Root {
            marker: std::fs::metadata(dir.join(crate::log::CLEAN_SHUTDOWN_FILE))
                .is_ok_and(|m| m.is_file()),
            recovery: RootCheckpoint::read(dir, RECOVERY_POINT_OFFSET_CHECKPOINT),
            log_start: RootCheckpoint::read(dir, LOG_START_OFFSET_CHECKPOINT),
            replication: RootCheckpoint::read(dir, REPLICATION_OFFSET_CHECKPOINT),
            cleaner: RootCheckpoint::read(dir, CLEANER_OFFSET_CHECKPOINT),
        }
    }

    fn findings(&self) -> Vec<Finding> {
        let mut out = Vec::new();
        for (name, c) in [
            (RECOVERY_POINT_OFFSET_CHECKPOINT, &self.recovery),
            (LOG_START_OFFSET_CHECKPOINT, &self.log_start),
            (REPLICATION_OFFSET_CHECKPOINT, &self.replication),
        ] {
            if let RootCheckpoint::Malformed(why) = c {
                out.push(Finding {
                    severity: Severity::Warning,
                    kind: FindingKind::MalformedCheckpoint,
                    file: Some(name.to_string()),
                    detail: format!(
                        "{why}: Kafka treats every entry as missing (recovery from offset 0 for every partition)"
                    ),
                });
            }
        }
        if let RootCheckpoint::Malformed(why) = &self.cleaner {
            out.push(Finding {
                severity: Severity::Warning,
                kind: FindingKind::MalformedCheckpoint,
                file: Some(CLEANER_OFFSET_CHECKPOINT.to_string()),
                detail: format!(
                    "{why}: the log cleaner cannot read it, so every compacted partition counts as dirty from its log start"
                ),
            });
        }
        out
    }

    fn context(&self, name: &str) -> Context {
        let tp = checkpoints::topic_partition(name);
        let get = |c: &RootCheckpoint| tp.as_ref().and_then(|(t, p)| c.get(t, *p));
        let malformed = matches!(self.recovery, RootCheckpoint::Malformed(_))
            || matches!(self.log_start, RootCheckpoint::Malformed(_));
        let recovery_point = get(&self.recovery);
        let mut findings = Vec::new();
        if tp.is_none() {
            // Kafka's other directory names: `<tp>.<uuid>-delete`, `-future`, `-stray`.
            let (severity, kind, what) = if name.ends_with("-delete") {
                (
                    Severity::Info,
                    FindingKind::MissingRecoveryPoint,
                    "scheduled for deletion: the broker deletes it after start-up",
                )
            } else if name.ends_with("-future") {
                (
                    Severity::Info,
                    FindingKind::MissingRecoveryPoint,
                    "the future replica of a log-dir move: the broker resumes the move",
                )
            } else if name.ends_with("-stray") {
                (
                    Severity::Info,
                    FindingKind::MissingRecoveryPoint,
                    "a stray replica: the broker deletes it",
                )
            } else {
                (
                    Severity::Error,
                    FindingKind::NotAPartitionName,
                    "not named <topic>-<partition> (UnifiedLog.parseTopicPartitionName): the broker refuses to start with it in the log directory",
                )
            };
            findings.push(Finding {
                severity,
                kind,
                file: None,
                detail: format!("{what}; no checkpoint entry can name it"),
            });
        }
        if recovery_point.is_none() && !self.marker {
            findings.push(Finding {
                severity: Severity::Info,
                kind: FindingKind::MissingRecoveryPoint,
                file: None,
                detail: format!(
                    "no {RECOVERY_POINT_OFFSET_CHECKPOINT} entry for this partition: the broker recovers it from offset 0"
                ),
            });
        }
        Context {
            layout: Layout::Kafka,
            clean_marker: self.marker && !malformed,
            recovery_point,
            log_start_offset: get(&self.log_start),
            high_watermark: get(&self.replication),
            malformed,
            findings,
            cleaner_checkpoint: get(&self.cleaner),
        }
    }
}

/// This library's layout: the marker and single-entry checkpoints inside `dir`, if any of
/// them is there.
fn library_context(dir: &Path) -> Option<Context> {
    use crate::checkpoint::{read_checkpoint_file, CheckpointRead};
    let marker = dir.join(crate::log::CLEAN_SHUTDOWN_FILE);
    let rp_path = dir.join(crate::log::RECOVERY_POINT_FILE);
    let ls_path = dir.join(crate::log::LOG_START_OFFSET_FILE);
    if !marker.exists() && !rp_path.exists() && !ls_path.exists() {
        return None;
    }
    let mut findings = Vec::new();
    let mut read = |path: &Path| match read_checkpoint_file(path) {
        Ok(CheckpointRead::Valid(v)) => (Some(v), false),
        Ok(CheckpointRead::Missing) => (None, false),
        Ok(CheckpointRead::Malformed(why)) => {
            findings.push(Finding {
                severity: Severity::Warning,
                kind: FindingKind::MalformedCheckpoint,
                file: Some(crate::names::file_name(path).to_string()),
                detail: format!("{why}: treated as missing, every segment is recovered"),
            });
            (None, true)
        }
        Err(e) => {
            findings.push(Finding {
                severity: Severity::Error,
                kind: FindingKind::Unreadable,
                file: Some(crate::names::file_name(path).to_string()),
                detail: e.to_string(),
            });
            (None, true)
        }
    };
    let (recovery_point, bad_rp) = read(&rp_path);
    let (log_start_offset, bad_ls) = read(&ls_path);
    let malformed = bad_rp || bad_ls;
    Some(Context {
        layout: Layout::Library,
        clean_marker: std::fs::metadata(&marker).is_ok_and(|m| m.is_file()) && !malformed,
        // The loader recovers everything when either file is unreadable
        // (`crate::checkpoint::load_checkpoints`).
        recovery_point: recovery_point.filter(|_| !malformed),
        log_start_offset,
        high_watermark: None,
        malformed,
        findings,
        // `Log::clean` keeps it in the parent (the log directory), as Kafka does.
        cleaner_checkpoint: dir.parent().and_then(|root| {
            let tp = checkpoints::topic_partition(crate::names::file_name(dir))?;
            RootCheckpoint::read(root, CLEANER_OFFSET_CHECKPOINT).get(&tp.0, tp.1)
        }),
    })
}

/// Whether `dir` holds a segment `.log` (so is a partition directory).
fn is_partition_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.filter_map(|e| e.ok()).any(|e| {
            let p = e.path();
            crate::names::is_log_file(&p) && crate::names::offset_from_file(&p).is_ok()
        })
    })
}

/// Options of [`examine`].
#[derive(Debug, Clone, PartialEq)]
pub struct DoctorOptions {
    /// The throughput of the prediction (from [`calibrate`], or given).
    pub throughput: Throughput,
    /// `--deep`: also read every `.log` in full (recovery's framing, offset and checksum
    /// rules) and verify every index entry against it (the dump's `--verify-index-only`),
    /// finding what the loader's end checks cannot. Costs a read of every byte.
    pub deep: bool,
}

/// Examines `path`, a log-dir root (every sub-directory holding a segment is a partition)
/// or one partition directory, calling `progress(done, total, name)` before each
/// partition. Reads only.
///
/// # Errors
/// A description when `path` is not a directory or cannot be listed, or holds no
/// partition.
pub fn examine(
    path: &Path,
    opts: &DoctorOptions,
    progress: &mut dyn FnMut(usize, usize, &str),
) -> Result<DoctorReport, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Err(format!("{}: not a directory", path.display()));
    }
    let mut report = DoctorReport {
        path: path.to_path_buf(),
        log_dir: false,
        throughput: opts.throughput.clone(),
        findings: Vec::new(),
        partitions: Vec::new(),
    };
    if is_partition_dir(path) {
        let name = crate::names::file_name(path).to_string();
        let ctx = library_context(path).unwrap_or_else(|| {
            let parent = path.parent().unwrap_or(Path::new("."));
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            let root = Root::read(parent);
            report.findings.extend(root.findings());
            root.context(&name)
        });
        progress(0, 1, &name);
        report.partitions.push(partition::examine_partition(
            path,
            &name,
            ctx,
            &opts.throughput,
            opts.deep,
        ));
        return Ok(report);
    }
    report.log_dir = true;
    let root = Root::read(path);
    report.findings.extend(root.findings());
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir() && is_partition_dir(p))
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(format!(
            "{}: neither a partition directory (no segment .log) nor a log directory (no sub-directory holds one)",
            path.display()
        ));
    }
    let total = dirs.len();
    for (i, dir) in dirs.iter().enumerate() {
        let name = crate::names::file_name(dir).to_string();
        progress(i, total, &name);
        let ctx = library_context(dir).unwrap_or_else(|| root.context(&name));
        report.partitions.push(partition::examine_partition(
            dir,
            &name,
            ctx,
            &opts.throughput,
            opts.deep,
        ));
    }
    Ok(report)
}
