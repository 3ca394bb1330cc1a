//! Issue 19, finding F1 and section 3: readers racing the log's structural changes.
//!
//! Three reader threads call [`Log::read`] at varied offsets while the main thread loops
//! one kind of change — `truncate_to` and re-append, `roll`, retention
//! (`delete_old_segments`), `delete_records`, `truncate_fully_and_start_at` — or, for
//! `close`, closes and reopens the log under readers that hold its segments. Each read is
//! checked against the contract of `Log::read`
//! (`docs/kafka-behaviour.md#concurrent-reads`): a read of offset `o` returns a batch that
//! contains `o` (every workload here is gap-free), an empty fetch only where `o` may have
//! been the log end during the read, or `OffsetOutOfRange` only where `o` may have been
//! out of range; never another error. Every anomaly is counted by kind, and each scenario
//! prints `reads: N, anomalies: M` (run with `--nocapture` to see them) and fails unless
//! `M` is 0.
//!
//! Bounded in time: every scenario runs `LOG_STRESS_SECS` seconds (default 5; fractions
//! allowed), the readers' offsets come from a fixed LCG per thread, only the
//! interleaving varies.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use segment::{FetchDataInfo, Log, LogConfig, LogSegment, MockTime, SegmentError, Time};

/// Batch (base, last) pairs in a byte slice.
fn batch_ranges(bytes: &[u8]) -> Vec<(i64, i64)> {
    segment::format::scan::<segment::KafkaBatchFormat>(bytes, 0)
        .filter_map(|b| b.ok())
        .map(|b| (b.info.base_offset, b.info.last_offset))
        .collect()
}

/// Records per batch in every workload (offsets `3k..=3k+2` per batch).
const PER: i64 = 3;
/// The `truncate_to` workload's full log: offsets `0..FULL_END`.
const FULL_END: i64 = 102;
/// The lowest cut of the `truncate_to` workload, a batch boundary: the log end never goes
/// below it, so offsets below it always hold data.
const MIN_CUT: i64 = 60;
const READERS: u64 = 3;
const DEFAULT_DELAY_MS: i64 = 60_000;

fn stress_time() -> Duration {
    let secs = std::env::var("LOG_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(5.0);
    Duration::from_secs_f64(secs)
}

fn lcg(x: &mut u64) -> u64 {
    *x = x
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *x >> 16
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    TruncateTo,
    Roll,
    Retention,
    DeleteRecords,
    StartAt,
}

/// What the readers saw.
#[derive(Default, Debug)]
struct Counts {
    reads: u64,
    /// A batch that does not hold the offset, or bytes that are not consecutive batches.
    wrong_batch: u64,
    /// An empty fetch for an offset that was never the log end during the read.
    empty_fetch: u64,
    /// `SegmentError::Io`.
    io_error: u64,
    /// Any other error but `OffsetOutOfRange`.
    other_error: u64,
    /// `OffsetOutOfRange` for an offset that was in range during the whole read.
    bad_out_of_range: u64,
    examples: Vec<String>,
}

impl Counts {
    fn anomalies(&self) -> u64 {
        self.wrong_batch
            + self.empty_fetch
            + self.io_error
            + self.other_error
            + self.bad_out_of_range
    }

    fn add(&mut self, o: Counts) {
        self.reads += o.reads;
        self.wrong_batch += o.wrong_batch;
        self.empty_fetch += o.empty_fetch;
        self.io_error += o.io_error;
        self.other_error += o.other_error;
        self.bad_out_of_range += o.bad_out_of_range;
        for e in o.examples {
            if self.examples.len() < 8 {
                self.examples.push(e);
            }
        }
    }

    fn note(&mut self, example: String) {
        if self.examples.len() < 8 {
            self.examples.push(example);
        }
    }

    /// Checks the bytes of a non-empty fetch of `o`: the first batch holds `o` and the
    /// batches after it follow it without a gap (all workloads are gap-free within a
    /// segment). Returns whether they passed.
    fn check_records(&mut self, what: &str, o: i64, info: &FetchDataInfo) -> bool {
        let ranges = batch_ranges(&info.records);
        let holds = ranges.first().is_some_and(|&(b, l)| b <= o && o <= l);
        let consecutive = ranges.windows(2).all(|w| w[1].0 == w[0].1 + 1);
        if !(holds && consecutive) {
            self.wrong_batch += 1;
            let shown: Vec<String> = ranges
                .iter()
                .take(3)
                .map(|(b, l)| format!("{b}..={l}"))
                .collect();
            self.note(format!(
                "{what}: read({o}) -> batches [{}] ({} bytes)",
                shown.join(", "),
                info.records.len()
            ));
        }
        holds && consecutive
    }

    fn report(&self, name: &str, writer_ops: u64) {
        println!(
            "{name}: reads: {}, anomalies: {} (wrong batch {}, empty fetch {}, I/O error {}, \
             other error {}, out of range inside the log {}); writer operations: {writer_ops}",
            self.reads,
            self.anomalies(),
            self.wrong_batch,
            self.empty_fetch,
            self.io_error,
            self.other_error,
            self.bad_out_of_range,
        );
        for e in &self.examples {
            println!("  {name}: {e}");
        }
    }
}

/// The log bounds a reader saw before and after its read.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    end_before: i64,
    start_after: i64,
    end_after: i64,
}

/// Whether `o` may have been the log end at some moment of a read with `bounds`.
fn may_be_end(kind: Kind, o: i64, b: Bounds) -> bool {
    match kind {
        // The log end moves down to a batch boundary at or above MIN_CUT and back up.
        Kind::TruncateTo => {
            o == b.end_before || (o % PER == 0 && (MIN_CUT..=FULL_END).contains(&o))
        }
        // The log end only grows (the restart of `truncate_fully_and_start_at` moves it up).
        _ => b.end_before <= o && o <= b.end_after,
    }
}

/// Whether `o` may have been out of range at some moment of a read with `bounds`.
fn may_be_out_of_range(kind: Kind, o: i64, b: Bounds) -> bool {
    match kind {
        // The log start stays 0; the log end never goes below MIN_CUT.
        Kind::TruncateTo => o > MIN_CUT,
        // Both bounds only grow.
        _ => o < b.start_after || o > b.end_before,
    }
}

fn classify(kind: Kind, c: &mut Counts, o: i64, b: Bounds, r: segment::Result<FetchDataInfo>) {
    c.reads += 1;
    let what = format!("{kind:?}");
    match r {
        Ok(info) if info.records.is_empty() => {
            if !may_be_end(kind, o, b) {
                c.empty_fetch += 1;
                c.note(format!("{what}: read({o}) -> empty fetch, bounds {b:?}"));
            }
        }
        Ok(info) => {
            c.check_records(&what, o, &info);
        }
        Err(SegmentError::OffsetOutOfRange {
            log_start_offset,
            log_end_offset,
            ..
        }) => {
            let own_bounds = o < log_start_offset || o > log_end_offset;
            if !own_bounds || !may_be_out_of_range(kind, o, b) {
                c.bad_out_of_range += 1;
                c.note(format!(
                    "{what}: read({o}) -> OffsetOutOfRange [{log_start_offset}, {log_end_offset}], bounds {b:?}"
                ));
            }
        }
        Err(e @ SegmentError::Io { .. }) => {
            c.io_error += 1;
            c.note(format!("{what}: read({o}) -> {e}"));
        }
        Err(e) => {
            c.other_error += 1;
            c.note(format!("{what}: read({o}) -> {e}"));
        }
    }
}

fn one_batch_len() -> u64 {
    batch(0, PER as usize, 0).len() as u64
}

fn append_to(log: &Log, end: i64, ts: i64) {
    let mut o = log.log_end_offset();
    while o < end {
        log.append(&batch(o, PER as usize, ts)).unwrap();
        o += PER;
    }
}

/// Runs `kind` with `file_delete_delay_ms` and returns what the readers saw; the log's
/// clock is a `MockTime` advanced 1 s per writer step, so with the default delay the
/// segments removed stay readable (as `.deleted`) for 60 steps.
fn stress(kind: Kind, file_delete_delay_ms: i64) -> (Counts, u64) {
    let dir = tmpdir();
    let one = one_batch_len();
    let t = MockTime::new(1_000_000);
    let cfg = LogConfig {
        segment_bytes: match kind {
            Kind::TruncateTo => 7 * one + 8,
            _ => 4 * one + 8,
        },
        index_interval_bytes: 1,
        max_index_size: 4096,
        retention_ms: -1,
        retention_bytes: if kind == Kind::Retention {
            40 * one as i64
        } else {
            -1
        },
        file_delete_delay_ms,
        ..LogConfig::default()
    };
    let log = Arc::new(
        Log::options()
            .clock(Arc::new(t.clone()))
            .open(dir.path(), cfg)
            .unwrap(),
    );
    if kind == Kind::TruncateTo {
        append_to(&log, FULL_END, t.milliseconds());
        assert!(log.segments().number_of_segments() >= 4, "several segments");
    }
    let done = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for seed in 0..READERS {
        let (log, done) = (log.clone(), done.clone());
        readers.push(std::thread::spawn(move || {
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5DEE_CE66;
            let mut c = Counts::default();
            while !done.load(Ordering::Acquire) {
                let r = lcg(&mut x);
                let start_before = log.log_start_offset();
                let end_before = log.log_end_offset();
                let o = match kind {
                    Kind::TruncateTo => (r % (FULL_END as u64 + 4)) as i64,
                    _ => {
                        // A quarter of the reads at the log end (where an append and a
                        // roll can race them), a quarter near it, the rest anywhere, a
                        // little outside the bounds too.
                        let o = match r & 3 {
                            0 => end_before,
                            1 => end_before - 10 + ((r >> 2) % 13) as i64,
                            _ => {
                                let span = (end_before - start_before).max(0) as u64 + 7;
                                start_before - 3 + ((r >> 2) % span) as i64
                            }
                        };
                        o.max(0)
                    }
                };
                let max_bytes = 1 + (r >> 24) % 600;
                let res = log.read(o, max_bytes);
                let b = Bounds {
                    end_before,
                    start_after: log.log_start_offset(),
                    end_after: log.log_end_offset(),
                };
                classify(kind, &mut c, o, b, res);
            }
            c
        }));
    }
    let deadline = Instant::now() + stress_time();
    let mut ops = 0u64;
    let mut x = 0x1234_5678u64;
    while Instant::now() < deadline {
        let r = lcg(&mut x);
        let ts = t.milliseconds();
        match kind {
            Kind::TruncateTo => {
                let cut = MIN_CUT + (r % (100 - MIN_CUT as u64 + 1)) as i64;
                assert!(log.truncate_to(cut).unwrap());
                append_to(&log, FULL_END, ts);
            }
            Kind::Roll => {
                // Rolls; `delete_records` every 100 rolls keeps the log (and its open
                // files) bounded.
                let leo = log.log_end_offset();
                log.append(&batch(leo, PER as usize, ts)).unwrap();
                log.roll(None).unwrap();
                if ops % 100 == 99 {
                    log.delete_records(log.log_end_offset() - 30).unwrap();
                }
            }
            Kind::Retention => {
                let leo = log.log_end_offset();
                log.append(&batch(leo, PER as usize, ts)).unwrap();
                if ops % 5 == 4 {
                    log.delete_old_segments().unwrap();
                }
            }
            Kind::DeleteRecords => {
                let leo = log.log_end_offset();
                log.append(&batch(leo, PER as usize, ts)).unwrap();
                if ops % 5 == 4 {
                    let to = (leo - 20 - (r % 10) as i64).max(log.log_start_offset());
                    log.delete_records(to).unwrap();
                }
            }
            Kind::StartAt => {
                let leo = log.log_end_offset();
                log.append(&batch(leo, PER as usize, ts)).unwrap();
                if ops % 20 == 19 {
                    log.truncate_fully_and_start_at(leo + PER + (r % 7) as i64)
                        .unwrap();
                }
            }
        }
        ops += 1;
        t.sleep(1000);
    }
    done.store(true, Ordering::Release);
    let mut total = Counts::default();
    for r in readers {
        total.add(r.join().unwrap());
    }
    // The log is whole after the run: every offset from the start to the end is readable.
    let start = log.log_start_offset();
    let all = read_all(&log, start);
    if kind != Kind::StartAt || !all.is_empty() {
        let expected: Vec<i64> = (start..log.log_end_offset()).collect();
        assert_eq!(all, expected, "{kind:?}: the log after the run");
    }
    (total, ops)
}

fn run(kind: Kind, file_delete_delay_ms: i64) {
    let name = format!("{kind:?} (file_delete_delay_ms {file_delete_delay_ms})");
    let (c, ops) = stress(kind, file_delete_delay_ms);
    c.report(&name, ops);
    assert!(c.reads >= 1000, "{name}: only {} reads", c.reads);
    assert!(ops >= 20, "{name}: only {ops} writer operations");
    assert_eq!(c.anomalies(), 0, "{name}: {c:?}");
}

#[test]
fn readers_against_truncate_to_no_delay() {
    run(Kind::TruncateTo, 0);
}

#[test]
fn readers_against_truncate_to_default_delay() {
    run(Kind::TruncateTo, DEFAULT_DELAY_MS);
}

#[test]
fn readers_against_roll() {
    run(Kind::Roll, 0);
}

#[test]
fn readers_against_retention_no_delay() {
    run(Kind::Retention, 0);
}

#[test]
fn readers_against_retention_default_delay() {
    run(Kind::Retention, DEFAULT_DELAY_MS);
}

#[test]
fn readers_against_delete_records_no_delay() {
    run(Kind::DeleteRecords, 0);
}

#[test]
fn readers_against_delete_records_default_delay() {
    run(Kind::DeleteRecords, DEFAULT_DELAY_MS);
}

#[test]
fn readers_against_truncate_fully_and_start_at_no_delay() {
    run(Kind::StartAt, 0);
}

#[test]
fn readers_against_truncate_fully_and_start_at_default_delay() {
    run(Kind::StartAt, DEFAULT_DELAY_MS);
}

/// `close` takes the log by value, so no read through the `Log` can overlap it (the
/// compiler enforces it). What can overlap it are readers that hold its segments
/// (`Arc<LogSegment>` from [`Log::segments`]): their reads return the batch holding the
/// offset, or a typed "segment gone" error (`Index(Closed)`, `SegmentDeleted`) once the
/// segment is closed, never another batch or an I/O error. The readers are joined before
/// the directory is opened again (a new `Log` may shrink index files they still map).
#[test]
fn segment_readers_against_close() {
    let dir = tmpdir();
    let one = one_batch_len();
    let (t, clock) = mock();
    let cfg = LogConfig {
        segment_bytes: 7 * one + 8,
        index_interval_bytes: 1,
        max_index_size: 4096,
        ..LogConfig::default()
    };
    {
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        append_to(&log, FULL_END, t.milliseconds());
        log.close().unwrap();
    }
    let deadline = Instant::now() + stress_time();
    let mut total = Counts::default();
    let mut cycles = 0u64;
    let mut gone = 0u64;
    while Instant::now() < deadline {
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        let segs: Arc<Vec<Arc<LogSegment>>> = Arc::new(log.segments().values());
        let closed = Arc::new(AtomicBool::new(false));
        let after_close = Arc::new(AtomicU64::new(0));
        let mut readers = Vec::new();
        for seed in 0..READERS {
            let (segs, closed, after_close) = (segs.clone(), closed.clone(), after_close.clone());
            readers.push(std::thread::spawn(move || {
                let mut x = (seed + 1).wrapping_mul(cycles + 7);
                let mut c = Counts::default();
                let mut gone = 0u64;
                // Read until 200 reads were made after the close.
                while after_close.load(Ordering::Acquire) < 200 {
                    let was_closed = closed.load(Ordering::Acquire);
                    let r = lcg(&mut x);
                    let o = (r % FULL_END as u64) as i64;
                    let seg = segs.iter().rev().find(|s| s.base_offset() <= o).unwrap();
                    let max_bytes = 1 + (r >> 24) % 600;
                    c.reads += 1;
                    match seg.read_min_one_message(o, max_bytes, seg.size()) {
                        Ok(Some(info)) => {
                            c.check_records("close", o, &info);
                        }
                        Ok(None) => {
                            c.wrong_batch += 1;
                            c.note(format!(
                                "close: read({o}) in segment {} -> None",
                                seg.base_offset()
                            ));
                        }
                        Err(SegmentError::Index(index_core::IndexError::Closed { .. }))
                        | Err(SegmentError::SegmentDeleted { .. })
                            if closed.load(Ordering::Acquire) =>
                        {
                            gone += 1;
                        }
                        Err(e @ SegmentError::Io { .. }) => {
                            c.io_error += 1;
                            c.note(format!("close: read({o}) -> {e}"));
                        }
                        Err(e) => {
                            c.other_error += 1;
                            c.note(format!("close: read({o}) -> {e}"));
                        }
                    }
                    if was_closed {
                        after_close.fetch_add(1, Ordering::AcqRel);
                    }
                }
                (c, gone)
            }));
        }
        std::thread::sleep(Duration::from_micros(200 + (cycles % 5) * 300));
        // The segments' `Arc`s live on in the readers; closing flushes and closes them.
        let begun = Arc::clone(&closed);
        begun.store(true, Ordering::Release);
        log.close().unwrap();
        for r in readers {
            let (c, g) = r.join().unwrap();
            total.add(c);
            gone += g;
        }
        cycles += 1;
    }
    total.report("close", cycles);
    println!("  close: {gone} reads answered \"segment gone\" after the close");
    assert!(
        cycles >= 3 && total.reads >= 1000,
        "{cycles} cycles, {} reads",
        total.reads
    );
    assert_eq!(total.anomalies(), 0, "close: {total:?}");
    let log = open_log(dir.path(), cfg, clock);
    assert_eq!(read_all(&log, 0), (0..FULL_END).collect::<Vec<_>>());
}

/// Issue 19 weak point: `roll(None)` at log end `i64::MAX` would create a segment no batch
/// can be appended to; it is refused with the error `roll(Some(i64::MAX))` gives.
#[test]
fn roll_none_at_log_end_i64_max_is_refused_like_roll_some() {
    let dir = tmpdir();
    let (t, clock) = mock();
    let log = open_log(dir.path(), LogConfig::default(), clock);
    log.append(&batch(i64::MAX - 1, 1, t.milliseconds()))
        .unwrap();
    assert_eq!(log.log_end_offset(), i64::MAX);
    let before = log.segments().base_offsets();
    for (what, base) in [
        ("roll(None)", None),
        ("roll(Some(i64::MAX))", Some(i64::MAX)),
    ] {
        match log.roll(base) {
            Err(SegmentError::InvalidArgument { reason }) => {
                assert!(reason.contains(&i64::MAX.to_string()), "{what}: {reason}")
            }
            other => panic!("{what}: expected InvalidArgument, got {other:?}"),
        }
        assert_eq!(
            log.segments().base_offsets(),
            before,
            "{what}: nothing rolled"
        );
    }
    // The log is still usable: the last batch reads back, and it closes and reopens.
    let r = log.read(i64::MAX - 1, 1 << 16).unwrap();
    assert_eq!(batch_ranges(&r.records), vec![(i64::MAX - 1, i64::MAX - 1)]);
    log.close().unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), LogConfig::default(), clock);
    assert_eq!(log.log_end_offset(), i64::MAX);
    assert_eq!(log.segments().base_offsets(), before);
}

/// A `truncate_to` that fails inside its structural change (here: the `.log` of the
/// segment holding the cut cannot be shortened, after the segments above it left the
/// map) has published a lowered log end over segments in an unknown state: the log goes
/// offline (appends and truncations refused with a typed error), reads still answer
/// (the structural change ended with the error, so no reader waits for it) and stay
/// inside the contract, and a reopen recovers a gap-free log.
#[test]
fn truncate_to_failing_inside_its_structural_change_takes_the_log_offline() {
    use segment::fs::{Fault, FaultyFs, FsOp, EIO};
    let dir = tmpdir();
    let (t, clock) = mock();
    let cfg = LogConfig {
        segment_bytes: 7 * one_batch_len() + 8,
        index_interval_bytes: 1,
        max_index_size: 4096,
        ..LogConfig::default()
    };
    let fs = Arc::new(FaultyFs::new());
    let log = Arc::new(
        Log::options()
            .clock(clock.clone())
            .fs(fs.clone())
            .open(dir.path(), cfg.clone())
            .unwrap(),
    );
    append_to(&log, FULL_END, t.milliseconds());
    let cut = 70;
    let holder = log.segments().floor_segment(cut).unwrap();
    assert!(holder.base_offset() < cut && log.segments().higher_segment(cut).is_some());
    let name = holder
        .log_path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    fs.inject(Fault::new(FsOp::SetLen, EIO).on_path(name));
    let err = log.truncate_to(cut).unwrap_err();
    assert!(matches!(err, SegmentError::Io { .. }), "{err:?}");
    assert!(
        log.is_offline(),
        "a failed structural change takes the log offline"
    );
    assert!(
        log.log_end_offset() <= cut,
        "the lowered end stays published"
    );
    for refused in [
        log.append(&batch(log.log_end_offset(), PER as usize, 0))
            .map(|_| ()),
        log.truncate_to(cut - 10).map(|_| ()),
        // An offline log deletes nothing and writes no checkpoint (before: these three
        // moved the log start, renamed segments `.deleted` and wrote checkpoints).
        log.increment_log_start_offset(9).map(|_| ()),
        log.delete_old_segments().map(|_| ()),
        log.delete_records(12).map(|_| ()),
    ] {
        // The refusal says why the log is offline, not "a failed flush".
        assert!(
            matches!(&refused, Err(SegmentError::Offline { reason, .. })
                if reason.contains("truncate_to failed inside its structural change")),
            "{refused:?}"
        );
    }
    assert_eq!(log.log_start_offset(), 0, "the log start did not move");
    // Reads answer (from another thread, bounded: a change left odd would make them wait
    // forever) and keep the contract.
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = {
        let log = log.clone();
        std::thread::spawn(move || {
            let answers: Vec<_> = [10, cut - 1, cut + 5, 100]
                .into_iter()
                .map(|o| (o, log.read(o, 1 << 16)))
                .collect();
            tx.send(answers).unwrap();
        })
    };
    let answers = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("reads must not wait for a failed change");
    reader.join().unwrap();
    let end = log.log_end_offset();
    for (o, r) in answers {
        match r {
            Ok(info) if o < end => {
                let first = batch_ranges(&info.records)[0];
                assert!(first.0 <= o && o <= first.1, "read({o}) -> {first:?}");
            }
            Err(SegmentError::OffsetOutOfRange { .. }) if o > end => {}
            other => panic!("read({o}) with log end {end}: {other:?}"),
        }
    }
    drop(log);
    let log = open_log(dir.path(), cfg, clock);
    let end = log.log_end_offset();
    assert!(end >= cut - PER, "recovered log end {end}");
    assert_eq!(read_all(&log, 0), (0..end).collect::<Vec<_>>());
}
