//! `Log::open` on directory contents made from a small grammar: segment files with
//! Kafka's names and suffixes (and some wrong ones), built from real batches, raw bytes
//! or index entries, truncated anywhere; recovery-point and log-start-offset checkpoints
//! (valid, out of range or garbage); the clean-shutdown marker. After a successful open,
//! a few operations run and the log is closed and reopened.
//!
//! Checked beyond "no panic": a log that opened has `log_start <= log_end`, an append
//! after open gets offsets at or past the log end, and what a clean close left is what
//! the reopen sees (same log end offset).
#![no_main]

use std::sync::{Arc, OnceLock};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use segment::record::{control_batch, BatchBuilder, ControlRecordType, LegacyMessage};
use segment::{KafkaBatchFormat, Log, LogConfig, MockTime};

fn scratch() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        if shm.is_dir() {
            tempfile::tempdir_in(shm).expect("scratch dir")
        } else {
            tempfile::tempdir().expect("scratch dir")
        }
    })
}

#[derive(Arbitrary, Debug)]
enum Base {
    Zero,
    Small(u8),
    Mid(u16),
    Huge,
    /// A name that is not a 20-digit offset.
    Garbage(u8),
}

impl Base {
    fn prefix(&self) -> String {
        match self {
            Base::Zero => format!("{:020}", 0),
            Base::Small(n) => format!("{:020}", n),
            Base::Mid(n) => format!("{:020}", u64::from(*n) * 7),
            Base::Huge => format!("{:020}", i64::MAX - 3),
            Base::Garbage(n) => match n % 4 {
                0 => "abc".into(),
                1 => format!("{:019}", n),
                2 => "-0000000000000000001".into(),
                _ => "99999999999999999999".into(),
            },
        }
    }
    fn offset(&self) -> i64 {
        match self {
            Base::Zero | Base::Garbage(_) => 0,
            Base::Small(n) => i64::from(*n),
            Base::Mid(n) => i64::from(*n) * 7,
            Base::Huge => i64::MAX - 3,
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Kind {
    Log,
    Index,
    TimeIndex,
    TxnIndex,
    Snapshot,
    Other,
}

#[derive(Arbitrary, Debug)]
enum State {
    Live,
    Deleted,
    Cleaned,
    Swap,
}

#[derive(Arbitrary, Debug)]
enum Batch {
    V2 {
        delta: u8,
        records: u8,
        ts: u16,
        epoch: u8,
    },
    Marker {
        delta: u8,
        abort: bool,
        pid: u8,
    },
    Txn {
        delta: u8,
        records: u8,
        pid: u8,
    },
    V1 {
        delta: u8,
    },
}

#[derive(Arbitrary, Debug)]
enum Content {
    Batches(Vec<Batch>),
    Raw(Vec<u8>),
    /// Offset-index style entries (relative offset, position), big-endian.
    Entries(Vec<(u32, u32)>),
    /// Time-index style entries (timestamp, relative offset), big-endian.
    TimeEntries(Vec<(u16, u32)>),
    Empty,
}

#[derive(Arbitrary, Debug)]
struct FileSpec {
    base: Base,
    kind: Kind,
    state: State,
    content: Content,
    /// Cut the content to this many bytes (a truncation).
    truncate: Option<u16>,
}

#[derive(Arbitrary, Debug)]
enum Checkpoint {
    Offset(u16),
    Negative,
    Huge,
    Garbage(Vec<u8>),
}

impl Checkpoint {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Checkpoint::Offset(n) => format!("0\n{n}\n").into_bytes(),
            Checkpoint::Negative => b"0\n-5\n".to_vec(),
            Checkpoint::Huge => format!("0\n{}\n", i64::MAX).into_bytes(),
            Checkpoint::Garbage(g) => g.clone(),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Append { records: u8 },
    Read { offset: u16, max: u16 },
    ByTime { ts: u16 },
    Roll,
    TruncateTo { offset: u16 },
    DeleteRecords { offset: u16 },
    Retention,
    Aborted,
}

#[derive(Arbitrary, Debug)]
struct Input {
    files: Vec<FileSpec>,
    recovery_point: Option<Checkpoint>,
    log_start: Option<Checkpoint>,
    clean_shutdown: bool,
    ops: Vec<Op>,
}

fn batch_bytes(base: i64, batches: &[Batch]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut next = base;
    for b in batches.iter().take(16) {
        let bytes = match b {
            Batch::V2 {
                delta,
                records,
                ts,
                epoch,
            } => {
                let start = next.saturating_add(i64::from(*delta % 4));
                let mut bb = BatchBuilder::new(start).partition_leader_epoch(i32::from(*epoch % 4));
                for r in 0..(records % 8).max(1) {
                    bb = bb.record(
                        1_700_000_000_000 + i64::from(*ts) + i64::from(r),
                        None,
                        Some(b"v"),
                    );
                }
                bb.build()
            }
            Batch::Txn {
                delta,
                records,
                pid,
            } => {
                let start = next.saturating_add(i64::from(*delta % 4));
                let mut bb = BatchBuilder::new(start)
                    .producer(i64::from(*pid % 4), 0, 0)
                    .transactional(true);
                for r in 0..(records % 8).max(1) {
                    bb = bb.record(1_700_000_000_000 + i64::from(r), Some(b"k"), Some(b"v"));
                }
                bb.build()
            }
            Batch::Marker { delta, abort, pid } => control_batch(
                next.saturating_add(i64::from(*delta % 4)),
                i64::from(*pid % 4),
                0,
                if *abort {
                    ControlRecordType::Abort
                } else {
                    ControlRecordType::Commit
                },
                0,
                1_700_000_000_000,
            ),
            Batch::V1 { delta } => {
                LegacyMessage::v1(next.saturating_add(i64::from(*delta % 4)), 1_000, b"legacy")
                    .to_vec()
            }
        };
        let Ok(bytes) = bytes else { continue };
        if let Ok(fb) = segment::record::FileBatch::at(&bytes, 0) {
            next = fb.next_offset();
        }
        out.extend_from_slice(&bytes);
    }
    out
}

fn content_bytes(spec: &FileSpec) -> Vec<u8> {
    let mut out = match &spec.content {
        Content::Batches(b) => batch_bytes(spec.base.offset(), b),
        Content::Raw(r) => r.clone(),
        Content::Entries(e) => e
            .iter()
            .take(64)
            .flat_map(|(o, p)| o.to_be_bytes().into_iter().chain(p.to_be_bytes()))
            .collect(),
        Content::TimeEntries(e) => e
            .iter()
            .take(64)
            .flat_map(|(t, o)| {
                (1_700_000_000_000i64 + i64::from(*t))
                    .to_be_bytes()
                    .into_iter()
                    .chain(o.to_be_bytes())
            })
            .collect(),
        Content::Empty => Vec::new(),
    };
    if let Some(n) = spec.truncate {
        out.truncate(usize::from(n));
    }
    out
}

fn config() -> LogConfig {
    LogConfig {
        segment_bytes: 4096,
        max_index_size: 4096,
        index_interval_bytes: 128,
        retention_ms: 1000,
        ..LogConfig::default()
    }
}

fn run_ops(log: &Log<KafkaBatchFormat>, ops: &[Op]) {
    for op in ops.iter().take(8) {
        match op {
            Op::Append { records } => {
                let end = log.log_end_offset();
                let mut bb = BatchBuilder::new(end);
                for r in 0..(records % 5).max(1) {
                    bb = bb.record(1_700_000_000_000 + i64::from(r), None, Some(b"new"));
                }
                if let Ok(bytes) = bb.build() {
                    if let Ok(info) = log.append(&bytes) {
                        assert!(
                            info.first_offset >= end,
                            "append reused offset {} below log end {end}",
                            info.first_offset
                        );
                    }
                }
            }
            Op::Read { offset, max } => {
                let _ = log.read(i64::from(*offset), u64::from(*max));
            }
            Op::ByTime { ts } => {
                let _ = log.offset_for_timestamp(1_700_000_000_000 + i64::from(*ts));
            }
            Op::Roll => {
                let _ = log.roll(None);
            }
            Op::TruncateTo { offset } => {
                let _ = log.truncate_to(i64::from(*offset));
            }
            Op::DeleteRecords { offset } => {
                let _ = log.delete_records(i64::from(*offset));
            }
            Op::Retention => {
                let _ = log.delete_old_segments();
            }
            Op::Aborted => {
                let _ = log.collect_aborted_txns(0, i64::MAX);
            }
        }
        assert!(log.log_start_offset() <= log.log_end_offset());
    }
}

fuzz_target!(|input: Input| {
    let dir = scratch().path().join("topic-0");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for spec in input.files.iter().take(8) {
        let suffix = match spec.kind {
            Kind::Log => ".log",
            Kind::Index => ".index",
            Kind::TimeIndex => ".timeindex",
            Kind::TxnIndex => ".txnindex",
            Kind::Snapshot => ".snapshot",
            Kind::Other => ".tmp",
        };
        let state = match spec.state {
            State::Live => "",
            State::Deleted => ".deleted",
            State::Cleaned => ".cleaned",
            State::Swap => ".swap",
        };
        let name = format!("{}{suffix}{state}", spec.base.prefix());
        std::fs::write(dir.join(name), content_bytes(spec)).unwrap();
    }
    if let Some(c) = &input.recovery_point {
        std::fs::write(dir.join("recovery-point"), c.bytes()).unwrap();
    }
    if let Some(c) = &input.log_start {
        std::fs::write(dir.join("log-start-offset"), c.bytes()).unwrap();
    }
    if input.clean_shutdown {
        std::fs::write(dir.join(".kafka_cleanshutdown"), b"").unwrap();
    }
    let clock = Arc::new(MockTime::new(1_700_000_000_000));
    let Ok(log) = Log::options().clock(clock.clone()).open(&dir, config()) else {
        return;
    };
    assert!(log.log_start_offset() <= log.log_end_offset());
    run_ops(&log, &input.ops);
    let end = log.log_end_offset();
    let start = log.log_start_offset();
    if log.close().is_err() {
        return;
    }
    // A clean close is trusted on the reopen: nothing is lost or invented.
    let log =
        Log::options().clock(clock).open(&dir, config()).expect("reopen after a clean close");
    assert_eq!(
        log.log_end_offset(),
        end,
        "log end changed across a clean close"
    );
    assert_eq!(
        log.log_start_offset(),
        start,
        "log start changed across a clean close"
    );
    let _ = log.close();
});
