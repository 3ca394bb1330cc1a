//! Helpers shared by the integration tests of `segment` (`log`, `segments` and the
//! single-scenario binaries).
use std::path::Path;
use std::sync::Arc;

use segment::record::fixtures;
use segment::{Clock, LogConfig, LogSegment, MockTime, SegmentOptions};

pub fn config(index_interval_bytes: u64, max_index_size: usize) -> LogConfig {
    LogConfig {
        index_interval_bytes,
        max_index_size,
        ..LogConfig::default()
    }
}

pub fn mock() -> (MockTime, Clock) {
    let t = MockTime::new(1_000_000);
    (t.clone(), Arc::new(t))
}

pub fn new_segment(dir: &Path, base: i64, cfg: &LogConfig, clock: Clock) -> LogSegment {
    LogSegment::create(dir, base, cfg, clock).unwrap()
}

/// The segment at `base` whose files are already in `dir`, opened again as the loader
/// does (`file_already_exists`, no preallocation, no suffix); its indexes map lazily.
pub fn reopen_segment(dir: &Path, base: i64, cfg: &LogConfig, clock: Clock) -> LogSegment {
    LogSegment::open(dir, base, cfg, SegmentOptions::existing().clock(clock)).unwrap()
}

/// V2(o, ts): 73-byte one-record batch.
pub fn v2(o: i64, ts: i64) -> Vec<u8> {
    fixtures::v2(o, ts)
}

#[allow(dead_code, reason = "used by the `segments` binary, not by `log`")]
pub fn v1(o: i64, values: &[&str]) -> Vec<u8> {
    fixtures::v1(o, values)
}

/// A v2 batch of `n` records starting at `base`, all at timestamp `ts`.
pub fn batch(base: i64, n: usize, ts: i64) -> Vec<u8> {
    let mut b = segment::record::BatchBuilder::new(base).partition_leader_epoch(0);
    for i in 0..n {
        b = b.record(
            ts,
            None,
            Some(format!("value-{}", base + i as i64).as_bytes()),
        );
    }
    b.build().unwrap()
}

/// Offsets of the records in a v2/legacy byte slice (whole batches only).
pub fn offsets_in(bytes: &[u8]) -> Vec<i64> {
    let mut out = Vec::new();
    for b in segment::record::batches_from(bytes, 0) {
        let Ok(b) = b else { break };
        for r in b.records().unwrap() {
            out.push(r.unwrap().offset);
        }
    }
    out
}

pub fn open_log(dir: &Path, cfg: LogConfig, clock: Clock) -> segment::Log {
    segment::Log::options().clock(clock).open(dir, cfg).unwrap()
}

/// Appends `n` batches of `per` records starting at `start`, timestamps `ts0 + offset`.
pub fn fill(log: &segment::Log, start: i64, n: usize, per: usize, ts0: i64) -> i64 {
    let mut o = start;
    for _ in 0..n {
        log.append(&batch(o, per, ts0 + o)).unwrap();
        o += per as i64;
    }
    o
}

/// All record offsets readable from `from` to the end of the log.
pub fn read_all(log: &segment::Log, from: i64) -> Vec<i64> {
    let mut out = Vec::new();
    let mut o = from;
    while o < log.log_end_offset() {
        let r = log.read(o, 1 << 20).unwrap();
        let offs = offsets_in(&r.records);
        let Some(&last) = offs.last() else { break };
        out.extend(offs.into_iter().filter(|&x| x >= o));
        o = last + 1;
    }
    out
}

/// A temporary directory, on tmpfs (`/dev/shm`) when available (tests that fsync a lot
/// are otherwise bound by the disk), else in the default temp dir.
pub fn tmpdir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::Builder::new().prefix("seg-test").tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().unwrap()
}

/// Live mappings of `.index`/`.timeindex` files under `dir`: `(all, deleted)`.
pub fn index_mappings(dir: &Path) -> (usize, usize) {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let dir = dir.to_string_lossy();
    let mut all = 0;
    let mut deleted = 0;
    for line in maps.lines().filter(|l| l.contains(dir.as_ref())) {
        let line = line.trim_end();
        let (name, is_deleted) = match line.strip_suffix(" (deleted)") {
            Some(n) => (n, true),
            None => (line, false),
        };
        let name = name.split(".deleted").next().unwrap();
        if name.ends_with(".index") || name.ends_with(".timeindex") {
            all += 1;
            deleted += usize::from(is_deleted);
        }
    }
    (all, deleted)
}

/// Makes the offset index of the segment at `base` in `dir` lie: appends an entry one
/// offset above its last entry (offset 1 above the base when it is empty) at position
/// 1,000,000, past the end of the tests' small `.log` files. The entries stay in order,
/// so only a check against the `.log` finds it.
#[allow(dead_code, reason = "used by the `log` tests only")]
pub fn lie_in_offset_index(dir: &Path, base: i64) {
    let p = dir.join(format!("{base:020}.index"));
    let mut bytes = std::fs::read(&p).unwrap();
    let last_rel = if bytes.len() >= 8 {
        i32::from_be_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap())
    } else {
        0
    };
    bytes.extend((last_rel + 1).to_be_bytes());
    bytes.extend(1_000_000i32.to_be_bytes());
    std::fs::write(&p, bytes).unwrap();
}

/// `plain` (an uncompressed v2 batch) with its records replaced by `stream` (them, or
/// anything, in codec `codec_id`): the length, the compression bits and the CRC-32C
/// fixed up, as a producer that wrote those bytes would have.
#[allow(
    dead_code,
    reason = "used by the `record` tests, not by `log` or `segments`"
)]
pub fn batch_with_stream(plain: &[u8], stream: &[u8], codec_id: u8) -> Vec<u8> {
    let mut out = plain[..61].to_vec();
    out.extend_from_slice(stream);
    let len = (out.len() - 12) as i32;
    out[8..12].copy_from_slice(&len.to_be_bytes());
    set_codec(&mut out, codec_id);
    out
}

/// Sets the compression id (attribute bits 0-2) of the v2 batch `batch` to `codec_id`
/// and recomputes its CRC-32C.
#[allow(
    dead_code,
    reason = "used by `segments` and `batch_with_stream`, not by `log`"
)]
pub fn set_codec(batch: &mut [u8], codec_id: u8) {
    let attributes = i16::from_be_bytes([batch[21], batch[22]]) & !0x07 | i16::from(codec_id);
    batch[21..23].copy_from_slice(&attributes.to_be_bytes());
    let crc = crc32c::crc32c(&batch[21..]);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());
}
