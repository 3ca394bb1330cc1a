//! Issue 42, "Concurrency": readers of a tiered log against its uploader, local deletion,
//! local retention and a remote-index cache too small for the segments, for a bounded
//! time (`docs/kafka-behaviour.md#delete-local-through`,
//! `docs/kafka-behaviour.md#remote-index-cache`).
//!
//! One writer appends batches of 1 to 5 records (follower path, every batch's bytes kept
//! before it is handed to the log); one uploader takes `tierable_segments()`, copies each
//! segment's `.log` and indexes into an in-memory remote store, reports the end with
//! `update_highest_offset_in_remote_storage` and runs `delete_local_through` and local
//! retention; readers fetch random offsets with `Log::read`, and on
//! `OffsetMovedToTieredStorage` from the remote store with `read_remote` through a shared
//! `RemoteIndexCache` whose capacity holds about three segments' indexes, so that loads
//! and evictions race the hits. Every answer is checked: the first batch holds the
//! offset asked for, each batch is byte for byte (CRC included) the batch appended at its
//! base offset, the batches follow one another, and the only error is the typed
//! `OffsetMovedToTieredStorage` for an offset below the local log start that the remote
//! store holds. A sabotaged reader (asking for a later offset than it checks) shows the
//! checker failing.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use parking_lot::{Mutex, RwLock};
use segment::format::scan;
use segment::record::BatchBuilder;
use segment::tier::{read_remote_kafka, RemoteIndexCache, RemoteIndexes, RemoteSegment};
use segment::{KafkaBatchFormat, Log, LogConfig, SegmentError, SegmentUpload};

/// One uploaded segment in the in-memory remote store.
#[derive(Clone)]
struct Stored {
    end: i64,
    log: Arc<[u8]>,
    offset_index: Arc<[u8]>,
    time_index: Arc<[u8]>,
    txn_index: Option<Arc<[u8]>>,
}

fn bytes_of(f: &std::fs::File) -> Arc<[u8]> {
    use std::io::Read;
    let mut v = Vec::new();
    (&*f).read_to_end(&mut v).unwrap();
    Arc::from(v)
}

fn store_of(u: &SegmentUpload) -> Stored {
    Stored {
        end: u.end_offset,
        log: Arc::from(u.log.to_vec().unwrap()),
        offset_index: bytes_of(&u.offset_index),
        time_index: bytes_of(&u.time_index),
        txn_index: u.txn_index.as_ref().map(bytes_of),
    }
}

/// What the readers did, and what they found wrong.
#[derive(Debug, Default)]
struct Counts {
    local_reads: AtomicU64,
    moved: AtomicU64,
    remote_reads: AtomicU64,
    /// Remote segments whose indexes a remote read asked the cache for.
    cache_gets: AtomicU64,
    uploads: AtomicU64,
    deleted_local: AtomicU64,
    appended: AtomicU64,
}

/// A deliberate fault in the readers, to show the checker can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sabotage {
    None,
    /// Readers fetch the offset 5 past the one they check (no batch holds more than 5
    /// records, so the answer never holds the checked offset).
    WrongOffset,
}

/// The batches `appended` (base offset → bytes) must explain `records`, an answer for
/// `offset`: the first batch holds `offset`, each batch is the one appended at its base
/// offset, byte for byte, each follows the previous one, and a cut last batch is a prefix
/// of the appended one.
fn check_answer(
    what: &str,
    offset: i64,
    records: &[u8],
    appended: &RwLock<HashMap<i64, Arc<[u8]>>>,
) -> Result<(), String> {
    if records.is_empty() {
        return Err(format!(
            "{what}({offset}): an empty answer below the log end"
        ));
    }
    let appended = appended.read();
    let mut expect_base: Option<i64> = None;
    let mut pos = 0usize;
    for b in scan::<KafkaBatchFormat>(records, 0) {
        let Ok(b) = b else { break };
        let (base, last) = (b.info.base_offset, b.info.last_offset);
        match expect_base {
            None if !(base <= offset && offset <= last) => {
                return Err(format!(
                    "{what}({offset}): the first batch {base}..={last} does not hold the offset"
                ))
            }
            Some(e) if e != base => {
                return Err(format!(
                    "{what}({offset}): batch {base}..={last} follows a batch ending at {}",
                    e - 1
                ))
            }
            _ => {}
        }
        match appended.get(&base) {
            Some(a) if **a == *b.bytes => {}
            Some(_) => {
                return Err(format!(
                    "{what}({offset}): batch {base}..={last} differs from the batch appended there"
                ))
            }
            None => {
                return Err(format!(
                    "{what}({offset}): batch {base}..={last} was never appended"
                ))
            }
        }
        expect_base = Some(last + 1);
        pos += b.bytes.len();
    }
    if expect_base.is_none() {
        return Err(format!("{what}({offset}): no whole batch in the answer"));
    }
    // A cut last batch: a prefix of the batch appended at the next base offset.
    let rest = &records[pos..];
    if !rest.is_empty() {
        let next = expect_base.unwrap_or(offset);
        if !appended.get(&next).is_some_and(|a| a.starts_with(rest)) {
            return Err(format!(
                "{what}({offset}): {} trailing bytes are not the start of the batch at {next}",
                rest.len()
            ));
        }
    }
    Ok(())
}

/// Runs the stress for `run_for` with the readers' `sabotage`; returns the counts, the
/// cache's misses and evictions, and the violations found (at most 10 of each kind).
fn stress(run_for: Duration, sabotage: Sabotage, seed: u64) -> (Counts, (u64, u64), Vec<String>) {
    let dir = tmpdir();
    let cfg = LogConfig {
        segment_bytes: 4096,
        index_interval_bytes: 256,
        remote_storage_enable: true,
        local_retention_bytes: 12_288,
        retention_bytes: -1,
        retention_ms: -1,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    };
    let log = Log::options()
        .clock(mock().1)
        .open(dir.path(), cfg)
        .unwrap();
    let appended: RwLock<HashMap<i64, Arc<[u8]>>> = RwLock::new(HashMap::new());
    let remote: RwLock<BTreeMap<i64, Stored>> = RwLock::new(BTreeMap::new());
    // About three sealed segments' indexes (≈16 offset entries and ≈16 time entries each).
    let cache: RemoteIndexCache<i64> = RemoteIndexCache::new(1024);
    let counts = Counts::default();
    let stop = AtomicBool::new(false);
    let violations: Mutex<Vec<String>> = Mutex::new(Vec::new());
    // At most 10 kept per kind (the text before its first parenthesis).
    let found = |v: String| {
        let kind = |m: &str| m.split('(').next().unwrap_or("").to_string();
        let mut vs = violations.lock();
        if vs.iter().filter(|m| kind(m) == kind(&v)).count() < 10 {
            vs.push(v);
        }
    };
    let deadline = Instant::now() + run_for;
    std::thread::scope(|s| {
        // The writer.
        s.spawn(|| {
            let mut rng = Lcg(seed);
            while !stop.load(Ordering::Relaxed) && counts.appended.load(Ordering::Relaxed) < 50_000
            {
                let base = log.log_end_offset();
                let n = 1 + rng.below(5) as i64;
                let mut b = BatchBuilder::new(base).partition_leader_epoch(0);
                for o in base..base + n {
                    let pad = "x".repeat(rng.below(120) as usize);
                    b = b.record(1_000 + o, None, Some(format!("v-{o}-{pad}").as_bytes()));
                }
                let bytes = b.build().unwrap();
                appended.write().insert(base, Arc::from(bytes.as_slice()));
                if let Err(e) = log.append(&bytes) {
                    found(format!("append at {base}: {e}"));
                    break;
                }
                counts.appended.fetch_add(1, Ordering::Relaxed);
            }
        });
        // The uploader: upload, report, delete locally (by the call and by retention).
        s.spawn(|| {
            let mut rng = Lcg(seed ^ 0x55);
            while !stop.load(Ordering::Relaxed) {
                let ups = match log.tierable_segments() {
                    Ok(u) => u,
                    Err(e) => {
                        found(format!("tierable_segments: {e}"));
                        break;
                    }
                };
                let mut uploaded = log.highest_offset_in_remote_storage();
                for u in &ups {
                    remote.write().insert(u.base_offset, store_of(u));
                    uploaded = u.end_offset;
                    log.update_highest_offset_in_remote_storage(uploaded);
                    counts.uploads.fetch_add(1, Ordering::Relaxed);
                }
                drop(ups);
                let deleted = if rng.below(3) == 0 {
                    log.delete_old_segments()
                } else {
                    log.delete_local_through(uploaded - rng.below(200) as i64, uploaded)
                };
                match deleted {
                    Ok(n) => {
                        counts.deleted_local.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(e) => found(format!("local deletion: {e}")),
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        });
        // The readers.
        for r in 0..3u64 {
            let (log, appended, remote, cache, counts, stop, found) =
                (&log, &appended, &remote, &cache, &counts, &stop, &found);
            s.spawn(move || {
                let mut rng = Lcg(seed.wrapping_add(1000 + r));
                while !stop.load(Ordering::Relaxed) {
                    let (start, end) = (log.log_start_offset(), log.high_watermark());
                    if end <= start {
                        std::thread::yield_now();
                        continue;
                    }
                    // A third uniform, a third about the local log start (where deletion
                    // races the reads), a third in the tail.
                    let (lo, hi) = match rng.below(3) {
                        0 => (start, end),
                        1 => {
                            let local = log.local_log_start_offset();
                            ((local - 300).max(start), (local + 100).min(end))
                        }
                        _ => ((end - 500).max(start), end),
                    };
                    if hi <= lo {
                        continue;
                    }
                    let offset = lo + rng.below((hi - lo) as u64) as i64;
                    let asked = match sabotage {
                        Sabotage::None => offset,
                        Sabotage::WrongOffset => (offset + 5).min(end - 1),
                    };
                    if asked == offset && sabotage == Sabotage::WrongOffset {
                        continue;
                    }
                    let max_bytes = if rng.below(4) == 0 { 64 } else { 1 << 16 };
                    match log.read(asked, max_bytes) {
                        Ok(f) => {
                            counts.local_reads.fetch_add(1, Ordering::Relaxed);
                            if let Err(v) = check_answer("read", offset, &f.records, appended) {
                                found(v);
                            }
                        }
                        Err(SegmentError::OffsetMovedToTieredStorage {
                            offset: o,
                            local_log_start_offset,
                            ..
                        }) => {
                            counts.moved.fetch_add(1, Ordering::Relaxed);
                            if o != asked || asked >= local_log_start_offset {
                                found(format!(
                                    "read({asked}): moved to tiered storage for offset {o}, local log start {local_log_start_offset}"
                                ));
                                continue;
                            }
                            // Served from the remote tier: the segment holding the offset
                            // and the next two, their indexes through the cache.
                            let segs: Vec<(i64, Stored)> = {
                                let remote = remote.read();
                                let from = remote
                                    .range(..=asked)
                                    .next_back()
                                    .map_or(asked, |(b, _)| *b);
                                remote
                                    .range(from..)
                                    .take(3)
                                    .map(|(b, st)| (*b, st.clone()))
                                    .collect()
                            };
                            if !segs.first().is_some_and(|(b, st)| *b <= asked && asked <= st.end)
                            {
                                found(format!(
                                    "read({asked}): moved to tiered storage, but no uploaded segment holds it"
                                ));
                                continue;
                            }
                            let mut remote_segs = Vec::new();
                            for (base, st) in segs {
                                counts.cache_gets.fetch_add(1, Ordering::Relaxed);
                                let idx = cache.get_or_load(&base, || {
                                    RemoteIndexes::from_bytes(
                                        base,
                                        st.offset_index.clone(),
                                        st.time_index.clone(),
                                        st.txn_index.clone(),
                                    )
                                });
                                match idx.and_then(|i| {
                                    RemoteSegment::new(base, st.end, st.log.clone(), i)
                                }) {
                                    Ok(seg) => remote_segs.push(seg),
                                    Err(e) => found(format!("remote segment {base}: {e}")),
                                }
                            }
                            match read_remote_kafka(&remote_segs, asked, max_bytes, true, false) {
                                Ok(f) => {
                                    counts.remote_reads.fetch_add(1, Ordering::Relaxed);
                                    if let Err(v) =
                                        check_answer("read_remote", offset, &f.records, appended)
                                    {
                                        found(v);
                                    }
                                }
                                Err(e) => found(format!("read_remote({asked}): {e}")),
                            }
                        }
                        Err(e) => found(format!("read({asked}): an untyped error: {e}")),
                    }
                }
            });
        }
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.store(true, Ordering::Relaxed);
    });
    let st = cache.stats();
    log.close().unwrap();
    (counts, (st.misses, st.evictions), violations.into_inner())
}

/// A small linear congruential generator: the test needs no statistical quality.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n.max(1)
    }
}

/// Readers, the uploader, local deletion and cache eviction for 3 s: no wrong batch, no
/// error but the typed one, and every path exercised.
#[test]
fn readers_uploads_local_deletion_and_eviction_agree() {
    let (c, (misses, evictions), violations) = stress(Duration::from_secs(3), Sabotage::None, 42);
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    eprintln!(
        "tier stress: {} batches appended, {} uploads, {} local segments deleted, {} local reads, {} moved to tiered storage, {} remote reads, {} cache gets ({misses} misses, {evictions} evictions)",
        get(&c.appended),
        get(&c.uploads),
        get(&c.deleted_local),
        get(&c.local_reads),
        get(&c.moved),
        get(&c.remote_reads),
        get(&c.cache_gets)
    );
    assert!(
        violations.is_empty(),
        "{} violations:\n{}",
        violations.len(),
        violations.join("\n")
    );
    assert!(get(&c.uploads) > 0 && get(&c.deleted_local) > 0, "{c:?}");
    assert!(get(&c.local_reads) > 0 && get(&c.remote_reads) > 0, "{c:?}");
    assert!(evictions > 0, "the cache never evicted: {c:?}");
    assert!(misses < get(&c.cache_gets), "the cache never hit: {c:?}");
}

/// The checker can fail: readers that fetch a later offset than they check are caught,
/// on the local and the remote path.
#[test]
fn a_wrong_offset_reader_is_caught() {
    let (_, _, violations) = stress(Duration::from_millis(1000), Sabotage::WrongOffset, 7);
    for path in ["read(", "read_remote("] {
        assert!(
            violations.iter().any(|v| v.starts_with(path)),
            "{path}: {violations:?}"
        );
    }
    assert!(
        violations
            .iter()
            .all(|v| v.contains("does not hold the offset")),
        "{violations:?}"
    );
}
