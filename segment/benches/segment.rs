//! Criterion benchmarks of the segment layer (`cargo bench -p segment`), each side by side
//! with the plain file operation on the same bytes. Throughput is in bytes of `.log` data.
//!
//! The data is ~32 MiB (`SEGMENT_BENCH_MIB` to change) of uncompressed magic v2 batches of
//! 32 records (`SEGMENT_BENCH_RECORDS`) with 100-byte values and 7-byte keys (3731 bytes
//! per batch, so an offset-index entry every second batch at the default
//! `index.interval.bytes` of 4096; 140 records make 16 KiB batches, an entry each), in one
//! segment. Files live in
//! `/dev/shm` when it exists (else the system temp dir), so the numbers are CPU costs, not
//! disk costs.
//!
//! * `segment-append/<what>`: batches appended one at a time to a fresh directory.
//!   `log-append` is [`Log::append`] (framing and CRC-32C validation of the input, roll
//!   check, `.log` write, sparse offset/time index entries); `segment-append` is
//!   [`LogSegment::append`] (write + indexes, no validation); `plain-write` is
//!   `File::write_all` of the same batches. Opening and dropping are not timed.
//! * `segment-read/<what>`: the whole log read sequentially in 1 MiB fetches.
//!   `log-read` is [`Log::read`] (offset index lookup, scan to the batch, `pread` into a
//!   new `Vec`), continuing after the last complete batch of each fetch; `plain-read` is
//!   `pread` of 1 MiB chunks into one reused buffer.
//! * `segment-recover/<what>`: `segment-recover` is [`LogSegment::recover`] (read, CRC
//!   validation of every batch, offset/time/transaction index rebuild, trim);
//!   `read-plus-crc` reads the same file in 1 MiB chunks and checks every batch's CRC-32C
//!   with `crc32c::crc32c` over its CRC range (the I/O and checksum work recovery cannot
//!   avoid); `plain-read` as above.
//! * `segment-dispatch/<what>`: the cost of the generic [`BatchFormat`] seam, on an
//!   in-memory image. `generic-validate` walks it with `format::scan::<KafkaBatchFormat>`
//!   and `KafkaBatchFormat::validate` (what `Log::append` does); `direct-validate` is a
//!   hand-written loop over `record::batches_from` and `FileBatch::ensure_valid`.
//! * `segment-dispatch-headers/<what>`: the same walks without the CRC (header parsing
//!   only, where dispatch overhead would show most), over a cache-resident 1 MiB window of
//!   the image (one scan window; over the whole image a header walk measures one cache
//!   miss per batch). The generic path decodes every [`BatchInfo`](segment::BatchInfo)
//!   field eagerly; `direct-headers` reads three fields from the record module's lazy
//!   view, `direct-headers-all-fields` all of them, and `direct-parse-header` is a
//!   hand-written loop calling `KafkaBatchFormat::parse_header` itself (the same eager
//!   decoding without the generic iterator).
//!
//! * `segment-locate/<what>`: locating the batch of 1,024 fetches at offsets spread
//!   uniformly over the segment (Kafka's `LogSegment.translateOffset`: offset index
//!   lookup, then `FileRecords.searchForOffsetFromPosition` from the index's position,
//!   the "slice only" part of a fetch, no record bytes read). `translate-offset` is
//!   [`LogSegment::translate_offset`]; `pread-header` is one 61-byte `pread` of each
//!   answer's batch header into a reused buffer, the cost of one header read (a locate
//!   reads the headers from the index entry's batch, whose last offset is below the
//!   target unless it is the target, to the answer's: 2.5 on average with an entry every
//!   second batch, 2 with one per batch; `strace -c` counts them).
//!
//! After the benchmarks a **ratios** section measures the ratios again with the
//! competitors interleaved (see the `bench-support` crate), prints them and writes
//! `<criterion dir>/ratios/segment.json`. `RATIOS_ONLY=1` runs only that section,
//! `NO_RATIOS=1` skips it. `LOCATE_ONLY=1` runs only the locate race, for 8 times the
//! rounds, and prints each side's fastest and median round (to compare two builds run
//! one after the other on a busy machine).

use std::fs::File;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use segment::format::{self, BatchFormat, KafkaBatchFormat};
use segment::record::{self, BatchBuilder, CRC_OFFSET, LOG_OVERHEAD, SIZE_OFFSET};
use segment::{Clock, Log, LogConfig, LogSegment, MockTime, ProducerStateManager};

use bench_support as ratios;

mod common;
use common::{config, scratch_root};

const KIND: &str = "segment";
/// Records per batch (`SEGMENT_BENCH_RECORDS` to change; 140 gives ~16 KiB batches).
fn records_per_batch() -> usize {
    std::env::var("SEGMENT_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32)
}
/// Value size of each record, bytes.
const VALUE_BYTES: usize = 100;
/// Timestamp of the first record, ms since the epoch.
const T0: i64 = 1_700_000_000_000;
/// Fetch and read chunk size, bytes.
const CHUNK: usize = 1 << 20;

/// This bench's scratch directory (see `common::scratch`).
fn scratch() -> tempfile::TempDir {
    common::scratch("segment-bench-")
}

/// One batch of the data set: its bytes' range in the image and what
/// `LogSegment::append` needs.
struct Batch {
    start: usize,
    end: usize,
    last_offset: i64,
    max_timestamp: i64,
}

/// The data set: the `.log` image and its batches.
struct Data {
    image: Vec<u8>,
    batches: Vec<Batch>,
}

impl Data {
    fn new(bytes: usize) -> Data {
        let mut image = Vec::with_capacity(bytes + (64 << 10));
        let mut batches = Vec::new();
        let mut value = [0u8; VALUE_BYTES];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let (mut offset, mut ts) = (0i64, T0);
        let records = records_per_batch();
        while image.len() < bytes {
            let mut b = BatchBuilder::new(offset).partition_leader_epoch(0);
            for _ in 0..records {
                for v in value.iter_mut() {
                    seed = seed
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    *v = (seed >> 56) as u8;
                }
                let key = format!("key-{}", offset % 1000);
                b = b.record(ts, Some(key.as_bytes()), Some(&value));
                offset += 1;
                ts += 1;
            }
            let start = image.len();
            b.write_to(&mut image).expect("valid batch");
            batches.push(Batch {
                start,
                end: image.len(),
                last_offset: offset - 1,
                max_timestamp: ts - 1,
            });
        }
        Data { image, batches }
    }

    fn bytes(&self, b: &Batch) -> &[u8] {
        &self.image[b.start..b.end]
    }

    fn len(&self) -> u64 {
        self.image.len() as u64
    }

    /// The whole batches in the first 1 MiB of the image: the size of a scan window
    /// (`segment::scan` reads a `.log` in windows of up to 1 MiB), so cache-resident. A
    /// header-only walk over the whole image would measure memory latency (one cache
    /// miss per 3.7 KiB batch), not code.
    fn window(&self) -> &[u8] {
        let end = self
            .batches
            .iter()
            .take_while(|b| b.end <= CHUNK)
            .last()
            .map_or(0, |b| b.end);
        &self.image[..end]
    }
}

fn clock() -> Clock {
    Arc::new(MockTime::new(T0))
}

/// A log in `dir` holding all of `data` in one segment, closed cleanly.
fn write_log(dir: &Path, data: &Data) -> PathBuf {
    let path = dir.join("topic-0");
    let log = Log::options()
        .clock(clock())
        .open(&path, LogConfig::default())
        .unwrap();
    for b in &data.batches {
        log.append(data.bytes(b)).unwrap();
    }
    assert_eq!(log.segments().number_of_segments(), 1);
    log.close().unwrap();
    path
}

// ---------------------------------------------------------------------------------------
// The operations, each timing only its own work (setup and teardown are excluded).

fn log_append(data: &Data) -> Duration {
    let dir = scratch();
    let log = Log::options()
        .clock(clock())
        .open(dir.path(), LogConfig::default())
        .unwrap();
    let start = Instant::now();
    for b in &data.batches {
        black_box(log.append(data.bytes(b)).unwrap());
    }
    let t = start.elapsed();
    log.close_handlers();
    t
}

fn segment_append(data: &Data) -> Duration {
    let dir = scratch();
    let seg = LogSegment::<KafkaBatchFormat>::create(dir.path(), 0, &LogConfig::default(), clock())
        .unwrap();
    seg.resize_indexes(LogConfig::default().max_index_size)
        .unwrap();
    let start = Instant::now();
    for b in &data.batches {
        seg.append(b.last_offset, b.max_timestamp, b.last_offset, data.bytes(b))
            .unwrap();
    }
    let t = start.elapsed();
    seg.close_handlers();
    t
}

fn plain_write(data: &Data) -> Duration {
    use std::io::Write;
    let dir = scratch();
    let mut f = File::create(dir.path().join("plain.log")).unwrap();
    let start = Instant::now();
    for b in &data.batches {
        f.write_all(data.bytes(b)).unwrap();
    }
    start.elapsed()
}

/// Reads the whole log in 1 MiB fetches; returns the bytes of complete batches read.
fn log_read(log: &Log) -> u64 {
    let (mut offset, mut total) = (log.log_start_offset(), 0u64);
    let end = log.log_end_offset();
    while offset < end {
        let fetch = log.read(offset, CHUNK as u64).unwrap();
        let mut it = record::batches_from(&fetch.records, 0);
        for b in &mut it {
            offset = b.unwrap().next_offset();
        }
        total += it.position();
        black_box(&fetch.records);
    }
    total
}

/// `pread`s the whole file in 1 MiB chunks; returns the bytes read.
fn plain_read(file: &File, len: u64, buf: &mut [u8]) -> u64 {
    let mut pos = 0u64;
    while pos < len {
        let n = (len - pos).min(buf.len() as u64) as usize;
        file.read_exact_at(&mut buf[..n], pos).unwrap();
        black_box(&buf[..n]);
        pos += n as u64;
    }
    pos
}

/// Reads the whole file in 1 MiB chunks and verifies every batch's CRC-32C (v2 batches:
/// over bytes [21, end), stored at 17..21); a batch crossing a chunk end is read again
/// from its start with the next chunk. Returns the number of batches.
fn read_plus_crc(file: &File, len: u64, buf: &mut [u8]) -> usize {
    let (mut pos, mut batches) = (0u64, 0usize);
    while pos < len {
        let n = (len - pos).min(buf.len() as u64) as usize;
        file.read_exact_at(&mut buf[..n], pos).unwrap();
        let mut at = 0usize;
        while at + LOG_OVERHEAD <= n {
            let size =
                i32::from_be_bytes(buf[at + SIZE_OFFSET..at + LOG_OVERHEAD].try_into().unwrap());
            let end = at + LOG_OVERHEAD + size as usize;
            if end > n {
                break;
            }
            let b = &buf[at..end];
            let stored = u32::from_be_bytes(b[CRC_OFFSET..CRC_OFFSET + 4].try_into().unwrap());
            assert_eq!(crc32c::crc32c(&b[CRC_OFFSET + 4..]), stored);
            batches += 1;
            at = end;
        }
        assert!(at > 0, "a batch larger than the chunk");
        pos += at as u64;
    }
    batches
}

fn segment_recover(seg: &LogSegment) -> u64 {
    let mut ps = ProducerStateManager::new();
    let truncated = seg.recover(&mut ps, None).unwrap();
    assert_eq!(truncated, 0);
    seg.size()
}

/// `format::scan::<KafkaBatchFormat>` (+ `validate`): the generic path.
fn generic_scan<F: BatchFormat>(image: &[u8], validate: bool) -> i64 {
    let mut acc = 0i64;
    let mut it = format::scan::<F>(image, 0);
    for b in &mut it {
        let b = b.unwrap();
        if validate {
            F::validate(b.bytes, b.info.position).unwrap();
        }
        black_box(&b.info); // materialised, as for any consumer of the seam
        acc = acc
            .wrapping_add(b.info.last_offset)
            .wrapping_add(b.info.max_timestamp)
            .wrapping_add(b.info.size_in_bytes as i64);
    }
    assert_eq!(it.position(), image.len() as u64);
    acc
}

/// `record::batches_from` (+ `ensure_valid`): the hand-written, Kafka-only path.
fn direct_scan(image: &[u8], validate: bool) -> i64 {
    let mut acc = 0i64;
    let mut it = record::batches_from(image, 0);
    for b in &mut it {
        let b = b.unwrap();
        if validate {
            b.ensure_valid().unwrap();
        }
        acc = acc
            .wrapping_add(b.last_offset())
            .wrapping_add(b.max_timestamp())
            .wrapping_add(b.size_in_bytes() as i64);
    }
    assert_eq!(it.position(), image.len() as u64);
    acc
}

/// `record::batches_from`, reading every header fact that `BatchInfo` holds (what
/// `KafkaBatchFormat::parse_header` decodes eagerly for the generic path).
fn direct_scan_all_fields(image: &[u8]) -> i64 {
    let mut acc = 0i64;
    let mut it = record::batches_from(image, 0);
    for b in &mut it {
        let b = b.unwrap();
        acc = acc
            .wrapping_add(b.position() as i64)
            .wrapping_add(b.base_offset())
            .wrapping_add(b.last_offset())
            .wrapping_add(b.max_timestamp())
            .wrapping_add(b.offset_of_max_timestamp())
            .wrapping_add(b.size_in_bytes() as i64)
            .wrapping_add(i64::from(b.is_control()))
            .wrapping_add(i64::from(b.is_transactional()))
            .wrapping_add(b.producer_id())
            .wrapping_add(i64::from(b.producer_epoch()))
            .wrapping_add(i64::from(b.base_sequence()))
            .wrapping_add(i64::from(b.last_sequence()))
            .wrapping_add(i64::from(b.partition_leader_epoch()))
            .wrapping_add(i64::from(b.magic()));
    }
    assert_eq!(it.position(), image.len() as u64);
    acc
}

/// A hand-written loop (no `Scan`, no generic code) calling `KafkaBatchFormat::parse_header`
/// directly: the same eager `BatchInfo` decoding as the generic path, so the difference to
/// `generic_scan` is the cost of the generic iterator itself.
fn direct_parse_header(image: &[u8]) -> i64 {
    let mut acc = 0i64;
    let mut pos = 0usize;
    while pos < image.len() {
        let size = match record::peek_batch(&image[pos..], pos as u64).unwrap() {
            record::Peek::Batch(size) => size,
            other => panic!("{other:?} at {pos}"),
        };
        let info = KafkaBatchFormat::parse_header(&image[pos..pos + size], pos as u64).unwrap();
        black_box(&info); // no field left undecoded by the optimiser
        acc = acc
            .wrapping_add(info.last_offset)
            .wrapping_add(info.max_timestamp)
            .wrapping_add(info.size_in_bytes as i64);
        pos += size;
    }
    acc
}

/// Locates per `segment-locate` iteration.
const LOCATES: usize = 1024;

/// `LOCATES` offsets spread uniformly over the data, each with the position and size of
/// the batch holding it.
fn locate_targets(data: &Data) -> Vec<(i64, u64, u64)> {
    let end = data.batches.last().map_or(0, |b| b.last_offset + 1);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    (0..LOCATES)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let offset = (seed % end as u64) as i64;
            let b = &data.batches[data.batches.partition_point(|b| b.last_offset < offset)];
            (offset, b.start as u64, (b.end - b.start) as u64)
        })
        .collect()
}

/// [`LogSegment::translate_offset`] of every target; returns the sum of the positions.
fn translate_offsets(seg: &LogSegment, targets: &[(i64, u64, u64)]) -> u64 {
    targets
        .iter()
        .map(|&(offset, _, _)| {
            seg.translate_offset(black_box(offset), 0)
                .unwrap()
                .unwrap()
                .position
        })
        .sum()
}

/// One 61-byte `pread` at each target's batch; returns the sum of the positions.
fn pread_headers(file: &File, targets: &[(i64, u64, u64)]) -> u64 {
    let mut header = [0u8; record::RECORD_BATCH_OVERHEAD];
    targets
        .iter()
        .map(|&(_, position, _)| {
            file.read_exact_at(&mut header, black_box(position))
                .unwrap();
            black_box(&header);
            position
        })
        .sum()
}

// ---------------------------------------------------------------------------------------
// Criterion.

/// A log (one segment) holding the data, its `.log` opened for plain reads, and a
/// reusable 1 MiB buffer.
struct ReadFixture {
    _dir: tempfile::TempDir,
    log: Log,
    file: File,
    len: u64,
    buf: Vec<u8>,
}

impl ReadFixture {
    fn new(data: &Data) -> ReadFixture {
        let dir = scratch();
        let path = write_log(dir.path(), data);
        let log = Log::options()
            .clock(clock())
            .open(&path, LogConfig::default())
            .unwrap();
        let seg = log.segments().active_segment().unwrap();
        let file = File::open(seg.log_path()).unwrap();
        let len = file.metadata().unwrap().len();
        assert_eq!(len, data.len());
        ReadFixture {
            _dir: dir,
            log,
            file,
            len,
            buf: vec![0; CHUNK],
        }
    }
}

fn appends(c: &mut Criterion, data: &Data) {
    let mut group = c.benchmark_group(format!("{KIND}-append"));
    group.throughput(Throughput::Bytes(data.len()));
    for (name, op) in [
        ("log-append", log_append as fn(&Data) -> Duration),
        ("segment-append", segment_append),
        ("plain-write", plain_write),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| op(data)).sum())
        });
    }
    group.finish();
}

fn reads(c: &mut Criterion, f: &mut ReadFixture) {
    let mut group = c.benchmark_group(format!("{KIND}-read"));
    group.throughput(Throughput::Bytes(f.len));
    group.bench_function("log-read", |b| {
        b.iter(|| assert_eq!(log_read(&f.log), f.len))
    });
    group.bench_function("plain-read", |b| {
        b.iter(|| plain_read(&f.file, f.len, &mut f.buf))
    });
    group.finish();
}

fn recovers(c: &mut Criterion, f: &mut ReadFixture) {
    let seg = f.log.segments().active_segment().unwrap();
    let mut group = c.benchmark_group(format!("{KIND}-recover"));
    group.throughput(Throughput::Bytes(f.len));
    group.bench_function("segment-recover", |b| b.iter(|| segment_recover(&seg)));
    group.bench_function("read-plus-crc", |b| {
        b.iter(|| read_plus_crc(&f.file, f.len, &mut f.buf))
    });
    group.bench_function("plain-read", |b| {
        b.iter(|| plain_read(&f.file, f.len, &mut f.buf))
    });
    group.finish();
}

fn locates(c: &mut Criterion, data: &Data, f: &ReadFixture) {
    let seg = f.log.segments().active_segment().unwrap();
    let targets = locate_targets(data);
    for &(offset, position, size) in &targets {
        let t = seg.translate_offset(offset, 0).unwrap().unwrap();
        assert_eq!((t.position, t.size), (position, size), "offset {offset}");
    }
    let sum: u64 = targets.iter().map(|t| t.1).sum();
    let mut group = c.benchmark_group(format!("{KIND}-locate"));
    group.throughput(Throughput::Elements(LOCATES as u64));
    group.bench_function("translate-offset", |b| {
        b.iter(|| assert_eq!(translate_offsets(&seg, &targets), sum))
    });
    group.bench_function("pread-header", |b| {
        b.iter(|| assert_eq!(pread_headers(&f.file, &targets), sum))
    });
    group.finish();
}

fn dispatch(c: &mut Criterion, data: &Data) {
    let image = &data.image[..];
    let window = data.window();
    assert_eq!(
        generic_scan::<KafkaBatchFormat>(image, true),
        direct_scan(image, true)
    );
    let mut group = c.benchmark_group(format!("{KIND}-dispatch"));
    group.throughput(Throughput::Bytes(data.len()));
    group.bench_function("generic-validate", |b| {
        b.iter(|| generic_scan::<KafkaBatchFormat>(black_box(image), true))
    });
    group.bench_function("direct-validate", |b| {
        b.iter(|| direct_scan(black_box(image), true))
    });
    group.finish();
    let mut group = c.benchmark_group(format!("{KIND}-dispatch-headers"));
    group.throughput(Throughput::Bytes(window.len() as u64));
    group.bench_function("generic-headers", |b| {
        b.iter(|| generic_scan::<KafkaBatchFormat>(black_box(window), false))
    });
    group.bench_function("direct-headers", |b| {
        b.iter(|| direct_scan(black_box(window), false))
    });
    group.bench_function("direct-headers-all-fields", |b| {
        b.iter(|| direct_scan_all_fields(black_box(window)))
    });
    group.bench_function("direct-parse-header", |b| {
        b.iter(|| direct_parse_header(black_box(window)))
    });
    group.finish();
}

// ---------------------------------------------------------------------------------------
// Ratios.

/// `translate-offset` and `pread-header` interleaved for `rounds` rounds of 1,024 locates
/// each; prints the fastest and the median round of each (µs per 1,024 locates) and adds
/// the ratio of the fastest rounds to `report`.
fn locate_race(data: &Data, f: &ReadFixture, report: Option<&mut ratios::Report>, rounds: usize) {
    let seg = f.log.segments().active_segment().unwrap();
    let targets = locate_targets(data);
    let file = &f.file;
    let mut racers: Vec<ratios::Competitor> = vec![
        Box::new(|n| {
            (0..n).for_each(|_| {
                black_box(translate_offsets(&seg, &targets));
            })
        }),
        Box::new(|n| {
            (0..n).for_each(|_| {
                black_box(pread_headers(file, &targets));
            })
        }),
    ];
    let per_round = ratios::race_rounds(&mut racers, 1, rounds);
    drop(racers);
    let mut t = Vec::new();
    for (c, name) in ["translate-offset", "pread-header"].iter().enumerate() {
        let mut ns: Vec<f64> = per_round.iter().map(|r| r[c]).collect();
        ns.sort_by(f64::total_cmp);
        let (min, median) = (ns[0], ns[ns.len() / 2]);
        println!(
            "  {:<40} {:8.1} µs fastest, {:8.1} µs median per {LOCATES} locates ({} rounds)",
            format!("locate: {name}"),
            min / 1e3,
            median / 1e3,
            ns.len()
        );
        t.push(min);
    }
    if let Some(report) = report {
        report.add(
            format!("{KIND} locate: translate-offset / pread-header"),
            t[0],
            t[1],
            None,
        );
    }
}

fn ratio_section(data: &Data, f: &mut ReadFixture) {
    let mut report = ratios::Report::default();
    let mb = data.len() as f64 / 1e6;
    let show = |name: &str, ns: f64| println!("  {name:<40} {:8.1} MB/s", mb / (ns / 1e9));

    let t = ratios::race_timed(
        &mut [
            &mut || log_append(data),
            &mut || segment_append(data),
            &mut || plain_write(data),
        ],
        ratios::rounds(),
    );
    println!(
        "\nthroughput (interleaved, fastest of {} rounds):",
        ratios::rounds()
    );
    show("append: log-append", t[0]);
    show("append: segment-append", t[1]);
    show("append: plain-write", t[2]);
    report.add(
        format!("{KIND} append: log-append / plain-write"),
        t[0],
        t[2],
        None,
    );
    report.add(
        format!("{KIND} append: segment-append / plain-write"),
        t[1],
        t[2],
        None,
    );

    let seg = f.log.segments().active_segment().unwrap();
    let (log, file, len) = (&f.log, &f.file, f.len);
    let buf = std::cell::RefCell::new(std::mem::take(&mut f.buf));
    let mut racers: Vec<ratios::Competitor> = vec![
        Box::new(|n| (0..n).for_each(|_| assert_eq!(log_read(log), len))),
        Box::new(|n| {
            (0..n).for_each(|_| {
                black_box(plain_read(file, len, &mut buf.borrow_mut()));
            })
        }),
        Box::new(|n| (0..n).for_each(|_| assert_eq!(segment_recover(&seg), len))),
        Box::new(|n| {
            (0..n).for_each(|_| {
                black_box(read_plus_crc(file, len, &mut buf.borrow_mut()));
            })
        }),
    ];
    let t = ratios::race(&mut racers, 1);
    drop(racers);
    f.buf = buf.into_inner();
    show("read: log-read", t[0]);
    show("read: plain-read", t[1]);
    show("recover: segment-recover", t[2]);
    show("recover: read-plus-crc", t[3]);
    report.add(
        format!("{KIND} read: log-read / plain-read"),
        t[0],
        t[1],
        None,
    );
    report.add(
        format!("{KIND} recover: segment-recover / read-plus-crc"),
        t[2],
        t[3],
        Some(2.0),
    );
    report.add(
        format!("{KIND} read-plus-crc / plain-read"),
        t[3],
        t[1],
        None,
    );

    locate_race(data, f, Some(&mut report), ratios::rounds());

    // Short operations (one pass over the image, 0.3-3 ms) and four times the rounds: the
    // fastest of many short runs filters out preemption on a loaded machine.
    let image = &data.image[..];
    let window = data.window();
    let wmb = window.len() as f64 / 1e6;
    let show_w =
        |name: &str, ns: f64| println!("  {name:<40} {:8.1} MB/s (1 MiB window)", wmb / (ns / 1e9));
    let timed = |f: &dyn Fn() -> i64| {
        let start = Instant::now();
        black_box(f());
        start.elapsed()
    };
    let mut t = ratios::race_timed(
        &mut [
            &mut || timed(&|| generic_scan::<KafkaBatchFormat>(black_box(image), true)),
            &mut || timed(&|| direct_scan(black_box(image), true)),
        ],
        4 * ratios::rounds(),
    );
    // A race of its own: after a 32 MiB walk the window would be cold for the first
    // header walk of the round.
    t.extend(ratios::race_timed(
        &mut [
            &mut || timed(&|| generic_scan::<KafkaBatchFormat>(black_box(window), false)),
            &mut || timed(&|| direct_scan(black_box(window), false)),
            &mut || timed(&|| direct_scan_all_fields(black_box(window))),
            &mut || timed(&|| direct_parse_header(black_box(window))),
        ],
        4 * ratios::rounds(),
    ));
    show("dispatch: generic-validate", t[0]);
    show("dispatch: direct-validate", t[1]);
    show_w("dispatch: generic-headers", t[2]);
    show_w("dispatch: direct-headers", t[3]);
    show_w("dispatch: direct-headers-all-fields", t[4]);
    show_w("dispatch: direct-parse-header", t[5]);
    report.add(
        format!("{KIND} dispatch: generic-validate / direct-validate"),
        t[0],
        t[1],
        Some(1.1),
    );
    report.add(
        format!("{KIND} dispatch: generic-headers / direct-headers"),
        t[2],
        t[3],
        None,
    );
    report.add(
        format!("{KIND} dispatch: generic-headers / direct-headers-all-fields"),
        t[2],
        t[4],
        None,
    );
    report.add(
        format!("{KIND} dispatch: generic-headers / direct-parse-header"),
        t[2],
        t[5],
        None,
    );
    report.finish(KIND);
}

fn main() {
    let mib: usize = std::env::var("SEGMENT_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32);
    let data = Data::new(mib << 20);
    println!(
        "data: {} bytes in {} batches of {} records ({} bytes each), files in {}",
        data.len(),
        data.batches.len(),
        records_per_batch(),
        data.batches[0].end - data.batches[0].start,
        scratch_root().display()
    );
    let mut fixture = ReadFixture::new(&data);
    if std::env::var_os("LOCATE_ONLY").is_some() {
        locate_race(&data, &fixture, None, 8 * ratios::rounds());
        return;
    }
    if std::env::var_os("RATIOS_ONLY").is_none() {
        let mut c = config();
        appends(&mut c, &data);
        reads(&mut c, &mut fixture);
        recovers(&mut c, &mut fixture);
        locates(&mut c, &data, &fixture);
        dispatch(&mut c, &data);
        c.final_summary();
    }
    if std::env::var_os("NO_RATIOS").is_none() {
        ratio_section(&data, &mut fixture);
    }
}
