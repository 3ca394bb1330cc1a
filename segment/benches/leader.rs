//! Criterion benchmarks of the leader's engine (`cargo bench -p segment --bench leader`),
//! each side by side with today's path on the same bytes. Throughput is in bytes of
//! `.log` data.
//!
//! The data is ~32 MiB (`LEADER_BENCH_MIB` to change) of uncompressed magic v2 producer
//! batches of 128 records with 100-byte values (about 16 KiB per batch), built with base
//! offset 0 as a producer sends them, and the same batches with their offsets already
//! assigned for the follower path. Files live in `/dev/shm` when it exists (else the
//! system temp dir), so the numbers are CPU costs, not disk costs.
//!
//! * `leader-append/<what>`: the batches appended to a fresh log. `follower-append` is
//!   [`Log::append`] of the batches carrying their offsets (validation, no assignment);
//!   `leader-1-thread` is [`Log::append_as_leader`] from one thread (validation, offset
//!   and leader-epoch assignment in place); `leader-4-threads` is the same batches split
//!   over four threads appending concurrently to one log. Opening and dropping are not
//!   timed.
//! * `leader-fetch/<what>`: the whole log fetched sequentially in 1 MiB fetches and
//!   delivered into a pipe that a second thread drains. `copy-read` is [`Log::read`] (a
//!   new `Vec` per fetch) then `write_all` to the pipe, what a broker without zero-copy
//!   does; `region-write-to` is [`Log::read_region`] and [`FileRegion::write_to`] the
//!   pipe (a `pread` into a reused buffer); `region-sendfile` is [`Log::read_region`] and
//!   [`FileRegion::sendfile_to`] the pipe (Linux: the kernel moves the pages, no copy
//!   through user space).
//!
//! After the benchmarks a **ratios** section measures the same competitors interleaved
//! (see the `bench-support` crate), prints the ratios and writes
//! `<criterion dir>/ratios/leader.json`. `RATIOS_ONLY=1` runs only that section,
//! `NO_RATIOS=1` skips it.
//!
//! [`FileRegion::write_to`]: segment::FileRegion::write_to
//! [`FileRegion::sendfile_to`]: segment::FileRegion::sendfile_to

use std::hint::black_box;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use segment::record::BatchBuilder;
use segment::{AppendOrigin, Clock, FetchIsolation, Log, LogConfig, MockTime};

use bench_support as ratios;

mod common;
use common::{config, scratch_root};

const KIND: &str = "leader";
/// Records per batch.
const RECORDS: usize = 128;
/// Value size of each record, bytes.
const VALUE_BYTES: usize = 100;
/// Timestamp of the first record, ms since the epoch.
const T0: i64 = 1_700_000_000_000;
/// Fetch size, bytes.
const CHUNK: u64 = 1 << 20;
/// Producer threads of the concurrent leader append.
const THREADS: usize = 4;

/// This bench's scratch directory (see `common::scratch`).
fn scratch() -> tempfile::TempDir {
    common::scratch("leader-bench-")
}

fn clock() -> Clock {
    Arc::new(MockTime::new(T0))
}

/// The data set: each batch as a producer sends it (base offset 0) and as a follower
/// receives it (its offsets assigned).
struct Data {
    producer: Vec<Vec<u8>>,
    follower: Vec<Vec<u8>>,
}

impl Data {
    fn new(bytes: usize) -> Data {
        let (mut producer, mut follower) = (Vec::new(), Vec::new());
        let mut value = [0u8; VALUE_BYTES];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let (mut offset, mut total) = (0i64, 0usize);
        while total < bytes {
            let (mut p, mut f) = (
                BatchBuilder::new(0),
                BatchBuilder::new(offset).partition_leader_epoch(0),
            );
            for _ in 0..RECORDS {
                for v in value.iter_mut() {
                    seed = seed
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    *v = (seed >> 56) as u8;
                }
                let ts = T0 + offset;
                p = p.record(ts, None, Some(&value));
                f = f.record(ts, None, Some(&value));
                offset += 1;
            }
            let (p, f) = (p.build().unwrap(), f.build().unwrap());
            total += p.len();
            producer.push(p);
            follower.push(f);
        }
        Data { producer, follower }
    }

    fn len(&self) -> u64 {
        self.producer.iter().map(|b| b.len() as u64).sum()
    }
}

fn open(dir: &Path) -> Log {
    Log::options()
        .clock(clock())
        .open(dir.join("topic-0"), LogConfig::default())
        .unwrap()
}

// ---------------------------------------------------------------------------------------
// The operations, each timing only its own work.

fn follower_append(data: &Data) -> Duration {
    let dir = scratch();
    let log = open(dir.path());
    let start = Instant::now();
    for b in &data.follower {
        black_box(log.append(b).unwrap());
    }
    let t = start.elapsed();
    log.close_handlers();
    t
}

fn leader_append(data: &Data, threads: usize) -> Duration {
    let dir = scratch();
    let log = open(dir.path());
    let per = data.producer.len().div_ceil(threads);
    let start = Instant::now();
    std::thread::scope(|s| {
        for part in data.producer.chunks(per) {
            let log = &log;
            s.spawn(move || {
                for b in part {
                    black_box(log.append_as_leader(b, 0, AppendOrigin::Client).unwrap());
                }
            });
        }
    });
    let t = start.elapsed();
    assert_eq!(log.log_end_offset(), (data.producer.len() * RECORDS) as i64);
    log.close_handlers();
    t
}

/// A pipe whose reading end a thread drains until the writing end is dropped; returns
/// the bytes it read.
struct Drain {
    writer: Option<std::io::PipeWriter>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Drain {
    fn new() -> Drain {
        let (mut reader, writer) = std::io::pipe().expect("pipe");
        let thread = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            let mut total = 0u64;
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return total,
                    Ok(n) => total += n as u64,
                }
            }
        });
        Drain {
            writer: Some(writer),
            thread: Some(thread),
        }
    }

    fn writer(&mut self) -> &mut std::io::PipeWriter {
        self.writer.as_mut().expect("open")
    }

    fn finish(mut self) -> u64 {
        drop(self.writer.take());
        self.thread.take().expect("running").join().expect("drain")
    }
}

#[derive(Clone, Copy)]
enum Fetch {
    Copy,
    RegionWriteTo,
    RegionSendfile,
}

/// Where each batch of the log ends: `(end position in the .log, next offset)`, to find
/// the offset after the last whole batch of a fetch without parsing it (the same lookup
/// for every competitor).
fn batch_ends(data: &Data) -> Vec<(u64, i64)> {
    let mut position = 0u64;
    data.follower
        .iter()
        .enumerate()
        .map(|(i, b)| {
            position += b.len() as u64;
            (position, ((i + 1) * RECORDS) as i64)
        })
        .collect()
}

/// The end position and next offset of the last whole batch that ends at or before
/// `end` (a fetch may end inside a batch, as Kafka's do; a consumer drops that part and
/// fetches it again).
fn last_whole(ends: &[(u64, i64)], end: u64) -> (u64, i64) {
    let i = ends.partition_point(|(e, _)| *e <= end);
    assert!(i > 0, "a fetch holds at least one whole batch");
    ends[i - 1]
}

/// Fetches the whole log in 1 MiB fetches into `out`; returns the bytes delivered and
/// the bytes of whole batches among them.
fn fetch_all(
    log: &Log,
    ends: &[(u64, i64)],
    how: Fetch,
    out: &mut std::io::PipeWriter,
) -> (u64, u64) {
    let (mut offset, mut total, mut whole) = (log.log_start_offset(), 0u64, 0u64);
    let end = log.log_end_offset();
    while offset < end {
        let (at, bytes) = match how {
            Fetch::Copy => {
                let fetch = log.read(offset, CHUNK).unwrap();
                out.write_all(&fetch.records).unwrap();
                let at = fetch.fetch_offset_metadata.relative_position_in_segment;
                (at, fetch.records.len() as u64)
            }
            Fetch::RegionWriteTo | Fetch::RegionSendfile => {
                let fetch = log
                    .read_region(offset, CHUNK, FetchIsolation::LogEnd, true)
                    .unwrap();
                let n = match how {
                    Fetch::RegionWriteTo => fetch.region.write_to(out).unwrap(),
                    _ => fetch.region.sendfile_to(out).unwrap(),
                };
                assert_eq!(n, fetch.region.len());
                (fetch.region.position(), n)
            }
        };
        let (whole_end, next) = last_whole(ends, at + bytes);
        total += bytes;
        whole += whole_end - at;
        offset = next;
    }
    (total, whole)
}

/// A log holding all of `data` (follower path), for the fetches.
struct FetchFixture {
    _dir: tempfile::TempDir,
    log: Log,
    ends: Vec<(u64, i64)>,
    len: u64,
}

impl FetchFixture {
    fn new(data: &Data) -> FetchFixture {
        let dir = scratch();
        let log = open(dir.path());
        for b in &data.follower {
            log.append(b).unwrap();
        }
        assert_eq!(log.segments().number_of_segments(), 1);
        FetchFixture {
            _dir: dir,
            log,
            ends: batch_ends(data),
            len: data.len(),
        }
    }

    /// One whole-log fetch through a fresh drained pipe; checks every byte arrived.
    fn run(&self, how: Fetch) -> u64 {
        let mut drain = Drain::new();
        let (sent, whole) = fetch_all(&self.log, &self.ends, how, drain.writer());
        let received = drain.finish();
        assert_eq!((whole, received), (self.len, sent));
        sent
    }
}

const FETCHES: [(&str, Fetch); 3] = [
    ("copy-read", Fetch::Copy),
    ("region-write-to", Fetch::RegionWriteTo),
    ("region-sendfile", Fetch::RegionSendfile),
];

fn benches(c: &mut Criterion, data: &Data, fetch: &FetchFixture) {
    let mut group = c.benchmark_group("leader-append");
    group.throughput(Throughput::Bytes(data.len()));
    group.bench_function("follower-append", |b| {
        b.iter_custom(|n| (0..n).map(|_| follower_append(data)).sum())
    });
    group.bench_function("leader-1-thread", |b| {
        b.iter_custom(|n| (0..n).map(|_| leader_append(data, 1)).sum())
    });
    group.bench_function(format!("leader-{THREADS}-threads"), |b| {
        b.iter_custom(|n| (0..n).map(|_| leader_append(data, THREADS)).sum())
    });
    group.finish();

    let mut group = c.benchmark_group("leader-fetch");
    group.throughput(Throughput::Bytes(data.len()));
    for (name, how) in FETCHES {
        group.bench_function(name, |b| b.iter(|| black_box(fetch.run(how))));
    }
    group.finish();
}

fn ratio_section(data: &Data, fetch: &FetchFixture) {
    let mut report = ratios::Report::default();
    let mb = data.len() as f64 / 1e6;
    let show = |name: &str, ns: f64| println!("  {name:<40} {:8.1} MB/s", mb / (ns / 1e9));
    let t = ratios::race_timed(
        &mut [
            &mut || follower_append(data),
            &mut || leader_append(data, 1),
            &mut || leader_append(data, THREADS),
        ],
        ratios::rounds(),
    );
    println!(
        "\nthroughput (interleaved, fastest of {} rounds):",
        ratios::rounds()
    );
    show("append: follower-append", t[0]);
    show("append: leader-1-thread", t[1]);
    show(&format!("append: leader-{THREADS}-threads"), t[2]);
    report.add(
        format!("{KIND} append: leader-1-thread / follower-append"),
        t[1],
        t[0],
        None,
    );
    report.add(
        format!("{KIND} append: leader-{THREADS}-threads / follower-append"),
        t[2],
        t[0],
        None,
    );
    report.add(
        format!("{KIND} append: leader-{THREADS}-threads / leader-1-thread"),
        t[2],
        t[1],
        None,
    );

    let timed = |how: Fetch| {
        let start = Instant::now();
        black_box(fetch.run(how));
        start.elapsed()
    };
    let t = ratios::race_timed(
        &mut [
            &mut || timed(Fetch::Copy),
            &mut || timed(Fetch::RegionWriteTo),
            &mut || timed(Fetch::RegionSendfile),
        ],
        ratios::rounds(),
    );
    for ((name, _), ns) in FETCHES.iter().zip(&t) {
        show(&format!("fetch: {name}"), *ns);
    }
    report.add(
        format!("{KIND} fetch: region-sendfile / copy-read"),
        t[2],
        t[0],
        None,
    );
    report.add(
        format!("{KIND} fetch: region-write-to / copy-read"),
        t[1],
        t[0],
        None,
    );
    report.finish(KIND);
}

fn main() {
    let mib: usize = std::env::var("LEADER_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32);
    let data = Data::new(mib << 20);
    println!(
        "data: {} bytes in {} batches of {RECORDS} records ({} bytes each), files in {}",
        data.len(),
        data.producer.len(),
        data.producer[0].len(),
        scratch_root().display()
    );
    let fetch = FetchFixture::new(&data);
    if std::env::var_os("RATIOS_ONLY").is_none() {
        let mut c = config();
        benches(&mut c, &data, &fetch);
        c.final_summary();
    }
    if std::env::var_os("NO_RATIOS").is_none() {
        ratio_section(&data, &fetch);
    }
}
