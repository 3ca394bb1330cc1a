//! Our side of `cargo xtask vs-kafka`: the index work that `oracle.VsBench` runs on Kafka
//! 4.4.0's `OffsetIndex` and `TimeIndex`, run on `index-offset` and `index-time`, timed.
//!
//! The binary is a small server driven by xtask over its standard input, one command a
//! line, one reply a line (`ok ...` or `err MESSAGE`); the Java side speaks the same
//! protocol, so xtask can alternate the two sides run by run:
//!
//! ```text
//! gen SEED DIR TARGETS BYTES   write DIR/offset.index (a full offset index of BYTES,
//!                          10 MiB in a run), DIR/time.timeindex (a full time index, trimmed) and
//!                          DIR/{offset,time}-{hot,uniform,lagging,mixed}.targets
//!                          (TARGETS big-endian i64 each; [`WORKLOADS`])
//!                          -> ok OFFSET_ENTRIES TIME_ENTRIES
//! open ID KIND PATH BASE MAX STRATEGY   open an index (KIND offset|time) the way a
//!                          segment does (writable, MAX bytes), with a named strategy or
//!                          `default` (no strategy set: whatever the default is)
//!                          -> ok ENTRIES STRATEGY_NAME
//! targets TID PATH         load targets -> ok COUNT
//! lookup ID TID SABOTAGE   look every target up once -> ok NANOS HASH
//! lookup-batch ID TID SABOTAGE N   the same lookups in batches of N, one
//!                          `with_reader` (one reader-slot announcement) per batch
//!                          ([`Index::run_batches`]) -> ok NANOS HASH
//! append KIND SRC DST BASE MAX MODE SABOTAGE   append every entry of the index SRC to a
//!                          new index DST (MODE call: one `append`/`maybe_append` per
//!                          entry; appender: one `appender()` for the run), timed; then
//!                          trimmed and closed as a segment closes -> ok NANOS ENTRIES
//! gen-log SEED DIR BYTES FETCHES [EPOCH]   write DIR/batches.log (v2 batches of 16
//!                          KiB, BYTES in all, one offset per record, partition leader epoch
//!                          EPOCH, default -1) and DIR/fetch.targets (FETCHES offsets)
//!                          -> ok BATCHES LAST_OFFSET
//! seg-append SRC DIR SABOTAGE [prealloc]   every batch of SRC appended to a new
//!                          segment in DIR (base offset 0, Kafka's default LogConfig; with
//!                          `prealloc`, `preallocate` on: the .log created at
//!                          `segment.bytes`), one append per batch, timed; then
//!                          `on_become_inactive_segment` and close (which trims the .log)
//!                          -> ok NANOS BATCHES
//! seg-recover SRC DIR      DIR emptied, SRC copied to DIR's .log, the segment opened and
//!                          `recover`ed (timed), then made inactive and closed
//!                          -> ok NANOS TRUNCATED_BYTES
//! seg-open SID DIR         open the segment in DIR -> ok SIZE
//! seg-translate SID TID SABOTAGE   `translate_offset` of every target -> ok NANOS HASH
//! gen-leader SEED PATH KIND P N   write N producer batches of KIND (plain, idempotent,
//!                          transactional) from P producers to PATH ([`leader::generate`])
//!                          -> ok ENTRIES BYTES
//! leader PATH DIR CODEC SABOTAGE   every entry of PATH (but the last with SABOTAGE 1)
//!                          appended as leader to a new log in DIR (topic compression
//!                          CODEC: none, lz4), timed, then closed ([`leader::append_all`])
//!                          -> ok NANOS LOG_END_OFFSET HASH
//! seg-fetch SID TID MAX MODE N   a fetch of up to MAX bytes at each of the first N
//!                          targets, delivered by MODE (copy: `read_min_one_message` into
//!                          a `Vec`; pipe, socket: `read_region` then `sendfile(2)` into a
//!                          drained pipe or loopback socket; [`fetch::fetch`])
//!                          -> ok NANOS BYTES HASH
//! gen-segments DIR N B     write N segments of B batches (16 KiB each) into DIR, base
//!                          offsets 0, 16·B, 32·B, … (made inactive and closed) -> ok N
//! seg-open-all DIR N STEP   open the segments of base offsets 0, STEP, … (N of them)
//!                          and `sanity_check` each, as the log loader does after a clean
//!                          shutdown, timed; then close them -> ok NANOS HASH
//! gen-dump SEED DIR BYTES  write DIR/00000000000000000000.log, the input of
//!                          `vs-kafka --only dump`'s data row: about BYTES of batches as
//!                          producers send them ([`generate_dump_log`]) -> ok BATCHES RECORDS
//! gen-doctor SEED DIR N    write a log directory DIR of N small partitions, closed
//!                          cleanly, for the doctor rows ([`generate_log_dir`]) -> ok N
//! ceil-write SRC OUT MODE SABOTAGE   the write(2) ceiling: every batch of SRC written
//!                          with one write(2) to OUT (MODE fresh: a new file; over: over
//!                          OUT's allocated pages; fresh-crc: a new file, each batch's
//!                          CRC-32C checked before its write) -> ok NANOS BYTES (fresh-crc:
//!                          the bytes of the batches whose CRC matched)
//! log-append SRC DIR SEGMENT_BYTES SABOTAGE   every batch of SRC appended with
//!                          `Log::append` (the follower's append: offsets kept) to a new log
//!                          in DIR (`segment.bytes` SEGMENT_BYTES, so it rolls), one call
//!                          per batch, timed; then closed ([`log_append`])
//!                          -> ok NANOS LOG_END_OFFSET:HASH
//! leader-log PATH OUT      the batches of the leader input PATH back to back in OUT (the
//!                          bytes a plain leader row writes, for its ceilings) -> ok BYTES
//! ceil-pread LOG MODE      every batch of LOG read with one pread into a reused buffer
//!                          (MODE crc: and its CRC-32C checked; mapped-crc: no read, LOG
//!                          mapped and each CRC-32C checked in place,
//!                          [`ceiling_mapped_crc`]) -> ok NANOS BYTES|MATCHED
//! ceil-memcpy SRC MODE     every batch of SRC (in memory) copied into fresh (MODE fresh)
//!                          or reused memory -> ok NANOS equal
//! ceil-index KIND SRC DST MAX SABOTAGE   the fill ceiling of an index append: every
//!                          entry of the KIND (offset, time) index SRC stored as its raw
//!                          bytes into a new file DST of MAX bytes, mapped (no lock, no
//!                          check, no count published), then trimmed ([`ceiling_index`])
//!                          -> ok NANOS ENTRIES
//! ceil-crc CRATE SRC SIZE TOTAL   CRC-32C of SRC's first TOTAL bytes in SIZE-byte pieces
//!                          with CRATE (crc32c, crc-fast, crc) -> ok NANOS HASH
//! ceil-fetch SRC LOG TID   one pread of the 12-byte header of each target's batch in LOG
//!                          (found untimed from SRC) -> ok NANOS HASH1:HASH2 (as seg-translate)
//! gen-clean SEED DIR KIND BYTES   write a compacted partition directory DIR (KIND
//!                          updates|small, a dirty first segment of about BYTES and one
//!                          batch in the active segment; [`clean::generate_clean_input`])
//!                          -> ok RECORDS DISTINCT_KEYS LOG_END_OFFSET DIRTY_BYTES
//! clean DIR LEO NOW MAP_BYTES SABOTAGE   one `Log::clean` of DIR (high watermark LEO,
//!                          time NOW, a dedupe buffer of MAP_BYTES), timed
//!                          ([`clean::clean_once`]) -> ok NANOS END_OFFSET MESSAGES_READ
//!                          BYTES_READ MESSAGES_WRITTEN BYTES_WRITTEN MAP_BYTES MAP_PEAK_BYTES
//! ceil-clean DIR OUT RETAINED  the physical limit of that clean ([`clean::ceiling`])
//!                          -> ok NANOS BYTES_READ BATCHES
//! gen-opens SEED DIR N    write a partition directory DIR of N small segments, closed
//!                          cleanly ([`opens::generate`]) -> ok LOG_END_OFFSET BYTES
//! log-open ID DIR CLEAN SABOTAGE   `Log::open` of DIR (CLEAN 0: the clean-shutdown
//!                          marker removed first), timed, the log held as ID
//!                          ([`opens::OpenState::open`]) -> ok NANOS LOG_START LOG_END
//!                          SEGMENTS FDS_BEFORE FDS_AFTER MAPS_BEFORE MAPS_AFTER
//! log-close ID             close the log held as ID -> ok
//! ceil-open DIR MODE ADVISE SABOTAGE   the ceilings of an open of DIR
//!                          ([`opens::ceiling`]): MODE open (list + open + fstat of every
//!                          `.log`) or reads (and the load-time check's reads; ADVISE 1:
//!                          with its cold read-ahead advice); SABOTAGE 1 leaves out the
//!                          last `.log` by name -> ok NANOS LOGS LOG_BYTES MATCHED
//! quit
//! ```
//!
//! `HASH` is [`fold`] over every answer's two fields, the same arithmetic as the Java
//! side's (64-bit wrapping), so equal hashes mean equal answers to every lookup.

pub mod clean;
pub mod fetch;
pub mod leader;
pub mod opens;

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Instant;

use index_core::search::{SearchStrategy, DEFAULT_WARM_SECTION_BYTES};
use index_offset::OffsetIndex;
use index_time::TimeIndex;
use segment::record::{BatchBuilder, RecordBatch};
use segment::{LogConfig, LogSegment, ProducerStateManager, SegmentOptions};

/// Kafka's default `segment.index.bytes`.
pub const INDEX_BYTES: usize = 10 * 1024 * 1024;

/// The first timestamp of the generated time index.
pub const T0: i64 = 1_700_000_000_000;

/// Bytes at the tail of an index that the hot-tail targets fall in (Kafka's warm section).
pub const HOT_BYTES: usize = 8192;

/// How far behind the tail, in index bytes, the lagging targets fall: from twice the warm
/// section to 64 times it (16 KiB to 512 KiB of index: 2,048 to 65,536 offset entries,
/// that is 8 to 256 MiB of log behind at one entry per 4 KiB).
pub const LAG_BYTES: (usize, usize) = (2 * HOT_BYTES, 64 * HOT_BYTES);

/// The lookup workloads of the lookup rows, each a targets file `{offset,time}-NAME.targets`.
pub const WORKLOADS: [&str; 4] = ["hot", "uniform", "lagging", "mixed"];

/// The FNV-1a offset basis: the start of every hash.
pub const FOLD_START: u64 = 0xcbf2_9ce4_8422_2325;

/// Folds one answer `(a, b)` into `h` (FNV-1a on 64-bit words; Java: the same with `long`).
#[inline(always)]
pub fn fold(h: u64, a: i64, b: i64) -> u64 {
    let h = (h ^ a as u64).wrapping_mul(0x100_0000_01b3);
    (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
}

/// SplitMix64: the deterministic generator of every input.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi]` (inclusive; a small bias is irrelevant here).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }
}

/// The named strategies measured besides the default; `default` is the open path with no
/// strategy set, so a new default is measured without a change here.
pub fn named_strategies() -> Vec<(&'static str, SearchStrategy)> {
    vec![
        ("binary", SearchStrategy::Binary),
        (
            "warm-cold",
            SearchStrategy::WarmCold {
                warm_section_bytes: DEFAULT_WARM_SECTION_BYTES,
            },
        ),
        ("page-directory", SearchStrategy::PAGE_DIRECTORY),
        ("hybrid", SearchStrategy::HYBRID),
    ]
}

fn strategy(name: &str) -> Result<Option<SearchStrategy>, String> {
    if name == "default" {
        return Ok(None);
    }
    named_strategies()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| Some(s))
        .ok_or_else(|| format!("no strategy {name}"))
}

fn e<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> String + '_ {
    move |err| format!("{what}: {err}")
}

/// Writes the inputs of a run into `dir` (see the module docs); returns the entry counts
/// of the offset and the time index.
pub fn generate(
    seed: u64,
    dir: &Path,
    targets: usize,
    index_bytes: usize,
) -> Result<(usize, usize), String> {
    let mut rng = Rng::new(seed);
    let opath = dir.join("offset.index");
    let tpath = dir.join("time.timeindex");
    let _ = std::fs::remove_file(&opath);
    let _ = std::fs::remove_file(&tpath);
    // Offsets go up by 1..=64 records per 4 KiB-ish of log, positions by 1000..=1600
    // bytes (1.3 M entries stay below 2^31, Kafka's int position).
    let mut offsets = Vec::new();
    {
        let mut idx = OffsetIndex::open(&opath, 0, index_bytes).map_err(e("open"))?;
        let max = idx.max_entries();
        let mut a = idx.appender().map_err(e("appender"))?;
        let (mut off, mut pos) = (0i64, 0u32);
        for _ in 0..max {
            a.append(off, pos).map_err(e("append"))?;
            offsets.push(off);
            off += rng.range(1, 64);
            pos += rng.range(1000, 1600) as u32;
        }
        drop(a);
        idx.close().map_err(e("close"))?;
    }
    let mut stamps = Vec::new();
    {
        let mut idx = TimeIndex::open(&tpath, 0, index_bytes).map_err(e("open"))?;
        // The last slot is kept for the final entry of a roll (Kafka's `isFull`).
        let n = idx.max_entries() - 1;
        let mut a = idx.appender().map_err(e("appender"))?;
        let (mut ts, mut off) = (T0, 0i64);
        for _ in 0..n {
            a.maybe_append(ts, off).map_err(e("maybe_append"))?;
            stamps.push(ts);
            ts += rng.range(1, 10);
            off += rng.range(1, 64);
        }
        drop(a);
        idx.close().map_err(e("close"))?;
    }
    for (kind, keys, size) in [("offset", &offsets, 8), ("time", &stamps, 12)] {
        let n = keys.len();
        let hot_from = keys[n - 1 - (HOT_BYTES / size).min(n - 1)];
        let last = keys[n - 1];
        let hot: Vec<i64> = (0..targets)
            .map(|_| rng.range(hot_from, last + 64))
            .collect();
        let uniform: Vec<i64> = (0..targets)
            .map(|_| rng.range(keys[0] - 64, last + 64))
            .collect();
        // A lagging consumer: between LAG_BYTES.0 and LAG_BYTES.1 of index behind the
        // tail (past Kafka's warm section, so Kafka's lookups search the cold part).
        let (near, far) = (LAG_BYTES.0 / size, LAG_BYTES.1 / size);
        let lag_from = keys[n - 1 - far.min(n - 1)];
        let lag_to = keys[n - 1 - near.min(n - 1)];
        let lagging: Vec<i64> = (0..targets).map(|_| rng.range(lag_from, lag_to)).collect();
        // Mixed: each lookup drawn from the three above, 80 % hot tail, 10 % lagging and
        // 10 % uniform (the bench harness's `Workload::Mixed`).
        let mixed: Vec<i64> = (0..targets)
            .map(|i| match rng.range(0, 10) {
                0 => lagging[i],
                1 => uniform[i],
                _ => hot[i],
            })
            .collect();
        for (name, t) in [
            ("hot", &hot),
            ("uniform", &uniform),
            ("lagging", &lagging),
            ("mixed", &mixed),
        ] {
            write_targets(&dir.join(format!("{kind}-{name}.targets")), t)?;
        }
    }
    Ok((offsets.len(), stamps.len()))
}

fn write_targets(path: &Path, t: &[i64]) -> Result<(), String> {
    let bytes: Vec<u8> = t.iter().flat_map(|x| x.to_be_bytes()).collect();
    std::fs::write(path, bytes).map_err(e("write targets"))
}

/// Reads a file of big-endian i64 targets.
pub fn read_targets(path: &Path) -> Result<Vec<i64>, String> {
    let b = std::fs::read(path).map_err(e("read targets"))?;
    Ok(b.chunks_exact(8)
        .map(|c| i64::from_be_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

/// An index opened for lookups.
pub enum Index {
    Offset(OffsetIndex),
    Time(TimeIndex),
}

impl Index {
    /// Opens `path` as a segment opens its indexes (writable, `max` bytes), with the
    /// strategy `name` (`default`: none set).
    pub fn open(
        kind: &str,
        path: &Path,
        base: i64,
        max: usize,
        name: &str,
    ) -> Result<Index, String> {
        let s = strategy(name)?;
        Ok(match kind {
            "offset" => {
                let i = OffsetIndex::open(path, base, max).map_err(e("open"))?;
                Index::Offset(match s {
                    Some(s) => i.with_search_strategy(s),
                    None => i,
                })
            }
            "time" => {
                let i = TimeIndex::open(path, base, max).map_err(e("open"))?;
                Index::Time(match s {
                    Some(s) => i.with_search_strategy(s),
                    None => i,
                })
            }
            k => return Err(format!("no index kind {k}")),
        })
    }

    pub fn entries(&self) -> usize {
        match self {
            Index::Offset(i) => i.entries(),
            Index::Time(i) => i.entries(),
        }
    }

    pub fn strategy_name(&self) -> &'static str {
        match self {
            Index::Offset(i) => i.search_strategy().name(),
            Index::Time(i) => i.search_strategy().name(),
        }
    }

    /// One answer as two fields: (offset, position) or (timestamp, offset).
    #[inline]
    pub fn lookup(&self, target: i64) -> Result<(i64, i64), String> {
        match self {
            Index::Offset(i) => i
                .lookup(target)
                .map(|p| (p.offset, i64::from(p.position)))
                .map_err(e("lookup")),
            Index::Time(i) => i
                .lookup(target)
                .map(|t| (t.timestamp, t.offset))
                .map_err(e("lookup")),
        }
    }

    /// [`Index::run`] through the batch API: the targets in batches of `per` (the last
    /// one shorter), each batch one `with_reader` call (the thread announced in its reader
    /// slot once per batch) whose lookups give [`Index::lookup`]'s answers. Returns the
    /// elapsed nanoseconds and the hash of the answers; `sabotage` as in [`Index::run`].
    ///
    /// # Errors
    /// A lookup's error, or `per == 0`.
    pub fn run_batches(
        &self,
        targets: &[i64],
        sabotage: bool,
        per: usize,
    ) -> Result<(u128, u64), String> {
        if per == 0 {
            return Err("lookup-batch: a batch of 0 lookups".into());
        }
        let mut h = FOLD_START;
        let start = Instant::now();
        match self {
            Index::Offset(i) => {
                for batch in targets.chunks(per) {
                    h = i.with_reader(|r| {
                        batch.iter().try_fold(h, |h, &t| {
                            let p = r.lookup(t).map_err(e("lookup"))?;
                            Ok::<_, String>(fold(h, p.offset, i64::from(p.position)))
                        })
                    })?;
                }
            }
            Index::Time(i) => {
                for batch in targets.chunks(per) {
                    h = i.with_reader(|r| {
                        batch.iter().try_fold(h, |h, &t| {
                            let p = r.lookup(t).map_err(e("lookup"))?;
                            Ok::<_, String>(fold(h, p.timestamp, p.offset))
                        })
                    })?;
                }
            }
        }
        let ns = start.elapsed().as_nanos();
        Ok((
            ns,
            if sabotage {
                self.slot_before(targets)?
            } else {
                h
            },
        ))
    }

    /// The hash of the answers one slot before the right ones (the sabotage).
    fn slot_before(&self, targets: &[i64]) -> Result<u64, String> {
        let mut h = FOLD_START;
        for &t in targets {
            let (a, _) = self.lookup(t)?;
            // Keys increase strictly: the largest entry below the answer's key is
            // the slot before it.
            let (a, b) = self.lookup(a - 1)?;
            h = fold(h, a, b);
        }
        Ok(h)
    }

    /// Looks up every target; returns the elapsed nanoseconds and the hash of the answers.
    /// `sabotage` answers the slot before the right one (the check must catch it).
    pub fn run(&self, targets: &[i64], sabotage: bool) -> Result<(u128, u64), String> {
        let mut h = FOLD_START;
        let start = Instant::now();
        match self {
            Index::Offset(i) => {
                for &t in targets {
                    let p = i.lookup(t).map_err(e("lookup"))?;
                    h = fold(h, p.offset, i64::from(p.position));
                }
            }
            Index::Time(i) => {
                for &t in targets {
                    let p = i.lookup(t).map_err(e("lookup"))?;
                    h = fold(h, p.timestamp, p.offset);
                }
            }
        }
        let ns = start.elapsed().as_nanos();
        Ok((
            ns,
            if sabotage {
                self.slot_before(targets)?
            } else {
                h
            },
        ))
    }
}

/// Appends every entry of the index `src` to a new index `dst` (`mode`: `call` or
/// `appender`), timed; then trims and closes it. Returns the nanoseconds and the entries
/// appended. `sabotage` writes one position (or offset) one too high.
pub fn append(
    kind: &str,
    src: &Path,
    dst: &Path,
    base: i64,
    max: usize,
    mode: &str,
    sabotage: bool,
) -> Result<(u128, usize), String> {
    let _ = std::fs::remove_file(dst);
    match kind {
        "offset" => {
            let mut entries = OffsetIndex::open_read_only(src, base)
                .and_then(|i| i.all_entries())
                .map_err(e("read source"))?
                .into_iter()
                .map(|p| (p.offset, p.position))
                .collect::<Vec<_>>();
            if sabotage {
                let m = entries.len() / 2;
                entries[m].1 += 1;
            }
            let mut idx = OffsetIndex::open(dst, base, max).map_err(e("open"))?;
            let start = Instant::now();
            match mode {
                "call" => {
                    for &(o, p) in &entries {
                        idx.append(o, p).map_err(e("append"))?;
                    }
                }
                "appender" => {
                    let mut a = idx.appender().map_err(e("appender"))?;
                    for &(o, p) in &entries {
                        a.append(o, p).map_err(e("append"))?;
                    }
                }
                m => return Err(format!("no append mode {m}")),
            }
            let ns = start.elapsed().as_nanos();
            idx.close().map_err(e("close"))?;
            Ok((ns, entries.len()))
        }
        "time" => {
            let mut entries = TimeIndex::open_read_only(src, base)
                .and_then(|i| i.all_entries())
                .map_err(e("read source"))?
                .into_iter()
                .map(|t| (t.timestamp, t.offset))
                .collect::<Vec<_>>();
            if sabotage {
                let m = entries.len() / 2;
                entries[m].1 += 1;
            }
            let mut idx = TimeIndex::open(dst, base, max).map_err(e("open"))?;
            let start = Instant::now();
            let mut written = 0usize;
            match mode {
                "call" => {
                    for &(t, o) in &entries {
                        written += usize::from(idx.maybe_append(t, o).map_err(e("append"))?);
                    }
                }
                "appender" => {
                    let mut a = idx.appender().map_err(e("appender"))?;
                    for &(t, o) in &entries {
                        written += usize::from(a.maybe_append(t, o).map_err(e("append"))?);
                    }
                }
                m => return Err(format!("no append mode {m}")),
            }
            let ns = start.elapsed().as_nanos();
            idx.close().map_err(e("close"))?;
            Ok((ns, written))
        }
        k => Err(format!("no index kind {k}")),
    }
}

/// Size of one generated batch in bytes (about; the records' varints vary).
pub const BATCH_BYTES: usize = 16 * 1024;

/// Writes `dir/batches.log`: uncompressed v2 batches of about 16 KiB (16 records of 1000
/// bytes each), `bytes` in all, offsets from 0 without gaps, timestamps rising from
/// [`T0`] (now and then one going back, so the time index skips some); and
/// `dir/fetch.targets`, `fetches` offsets uniform over the log. Returns the number of
/// batches and the last offset.
pub fn generate_log(
    seed: u64,
    dir: &Path,
    bytes: usize,
    fetches: usize,
) -> Result<(usize, i64), String> {
    generate_log_with_epoch(seed, dir, bytes, fetches, -1)
}

/// [`generate_log`] with every batch's partition leader epoch set to `epoch` (-1, as a
/// producer sends, or the leader's epoch, as a follower fetches them: Kafka's
/// `appendAsFollower` refuses -1 for its leader-epoch cache).
pub fn generate_log_with_epoch(
    seed: u64,
    dir: &Path,
    bytes: usize,
    fetches: usize,
    epoch: i32,
) -> Result<(usize, i64), String> {
    let mut rng = Rng::new(seed ^ 0x5e67);
    let mut out = Vec::with_capacity(bytes + BATCH_BYTES);
    let mut value = vec![0u8; 1000];
    let (mut offset, mut ts, mut batches) = (0i64, T0, 0usize);
    while out.len() + BATCH_BYTES <= bytes {
        let mut b = BatchBuilder::new(offset).partition_leader_epoch(epoch);
        for _ in 0..16 {
            for v in value.iter_mut().take(8) {
                *v = rng.next_u64() as u8;
            }
            ts += rng.range(-2, 5);
            b = b.record(ts, None, Some(&value));
        }
        let batch = b.build().map_err(e("build"))?;
        offset += 16;
        batches += 1;
        out.extend_from_slice(&batch);
    }
    std::fs::write(dir.join("batches.log"), &out).map_err(e("write batches.log"))?;
    let last = offset - 1;
    let t: Vec<i64> = (0..fetches).map(|_| rng.range(0, last)).collect();
    write_targets(&dir.join("fetch.targets"), &t)?;
    Ok((batches, last))
}

/// The batches of a `.log` image, with the last offset the segment's `append` is told
/// about each: (byte range, last offset). Like Kafka's side (`VsBench.segmentAppend`), the
/// last offsets are found before the timer; the max timestamp is not: Kafka's
/// `LogSegment.append` reads it from each batch inside the timed loop, so ours is read
/// there too ([`segment_append`]).
pub fn split_batches(log: &[u8]) -> Result<Vec<(std::ops::Range<usize>, i64)>, String> {
    let mut v = Vec::new();
    let mut pos = 0usize;
    while pos < log.len() {
        let b = RecordBatch::at(&log[pos..], pos as u64).map_err(e("batch"))?;
        let n = b.size_in_bytes();
        v.push((pos..pos + n, b.last_offset()));
        pos += n;
    }
    Ok(v)
}

fn clear_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(e("clear"))?;
    }
    std::fs::create_dir_all(dir).map_err(e("mkdir"))
}

/// Kafka's segment file name for base offset 0 with `suffix` (`log`, `index`, `timeindex`).
pub fn segment_file(dir: &Path, suffix: &str) -> std::path::PathBuf {
    dir.join(format!("{:020}.{suffix}", 0))
}

/// Every batch of `src` appended to a new segment in `dir` (emptied first), timed; then
/// made inactive (final time-index entry, trims) and closed. `sabotage` appends the
/// batches but the last; `preallocate` creates the `.log` at `segment.bytes` as Kafka's
/// `preallocate` does (the close trims it). Returns the nanoseconds and the batches
/// appended.
pub fn segment_append(
    src: &Path,
    dir: &Path,
    sabotage: bool,
    preallocate: bool,
) -> Result<(u128, usize), String> {
    let log = std::fs::read(src).map_err(e("read source"))?;
    let mut batches = split_batches(&log)?;
    if sabotage {
        batches.pop();
    }
    clear_dir(dir)?;
    let config = LogConfig {
        preallocate,
        ..LogConfig::default()
    };
    let start = Instant::now();
    let seg: LogSegment = LogSegment::open(dir, 0, &config, SegmentOptions::new_segment(&config))
        .map_err(e("open"))?;
    for (range, last) in &batches {
        // Inside the timer, as Kafka's `LogSegment.append` reads each batch's max
        // timestamp from its header while it appends.
        let bytes = &log[range.clone()];
        let max_ts = RecordBatch::new(bytes).map_err(e("batch"))?.max_timestamp();
        seg.append(*last, max_ts, *last, bytes)
            .map_err(e("append"))?;
    }
    let ns = start.elapsed().as_nanos();
    seg.on_become_inactive_segment().map_err(e("inactive"))?;
    seg.close().map_err(e("close"))?;
    Ok((ns, batches.len()))
}

/// Every batch of `src` appended with [`Log::append`](segment::Log::append) (the
/// follower's append: the batches keep their offsets, each CRC-validated) to a new log in
/// `dir` (emptied first) with `segment.bytes` = `segment_bytes`, one call per batch, timed
/// from after the open (as Kafka's `UnifiedLog.appendAsFollower` in `VsBench.logAppend`);
/// then closed, untimed. The batches are split before the timer. `sabotage` leaves out the
/// last batch. Returns the nanoseconds, the log end offset and [`fold`] over each
/// append's first and last offsets.
pub fn log_append(
    src: &Path,
    dir: &Path,
    segment_bytes: u64,
    sabotage: bool,
) -> Result<(u128, i64, u64), String> {
    let (log, mut ranges) = batch_ranges(src)?;
    if sabotage {
        ranges.pop();
    }
    clear_dir(dir)?;
    let config = LogConfig {
        segment_bytes,
        ..LogConfig::default()
    };
    let l = segment::Log::open(dir, config).map_err(e("open"))?;
    let mut h = FOLD_START;
    let start = Instant::now();
    for r in &ranges {
        let info = l.append(&log[r.clone()]).map_err(e("append"))?;
        h = fold(h, info.first_offset, info.last_offset);
    }
    let ns = start.elapsed().as_nanos();
    let leo = l.log_end_offset();
    l.close().map_err(e("close"))?;
    Ok((ns, leo, h))
}

/// `dir` emptied, `src` copied to its `.log`, the segment opened and recovered (timed),
/// then made inactive and closed. Returns the nanoseconds and the bytes truncated.
pub fn segment_recover(src: &Path, dir: &Path) -> Result<(u128, u64), String> {
    clear_dir(dir)?;
    std::fs::copy(src, segment_file(dir, "log")).map_err(e("copy"))?;
    let config = LogConfig::default();
    let seg: LogSegment =
        LogSegment::open(dir, 0, &config, SegmentOptions::existing()).map_err(e("open"))?;
    let mut ps = ProducerStateManager::new();
    let start = Instant::now();
    let truncated = seg.recover(&mut ps, None).map_err(e("recover"))?;
    let ns = start.elapsed().as_nanos();
    seg.on_become_inactive_segment().map_err(e("inactive"))?;
    seg.close().map_err(e("close"))?;
    Ok((ns, truncated))
}

/// `translate_offset(target, 0)` of every target (Kafka's `translateOffset`), timed.
/// Returns the nanoseconds and `HASH1:HASH2`: HASH1 folds (position, size) of each answer
/// ((-1, -1) for none), the batch a fetch reads; HASH2 folds the base offset of that
/// batch, read from the `.log` in a second, untimed pass. Kafka 4.4's
/// `LogOffsetPosition.offset` **is** the base offset (its `searchForOffsetFromPosition`
/// answers `fromBatch`), ours is the batch's last offset (`searchForOffsetWithSize`, Kafka
/// 3.x), so the base offsets are compared instead of that field. `sabotage` looks up
/// the offset 16 below the target.
pub fn segment_translate(
    seg: &LogSegment,
    targets: &[i64],
    sabotage: bool,
) -> Result<(u128, String), String> {
    let mut h = FOLD_START;
    let mut found = Vec::with_capacity(targets.len());
    let start = Instant::now();
    for &t in targets {
        let t = if sabotage { t - 16 } else { t };
        match seg.translate_offset(t, 0).map_err(e("translate_offset"))? {
            Some(p) => {
                h = fold(h, p.position as i64, p.size as i64);
                found.push(p.position);
            }
            None => h = fold(h, -1, -1),
        }
    }
    let ns = start.elapsed().as_nanos();
    let log = std::fs::File::open(seg.log_path()).map_err(e("open .log"))?;
    let mut h2 = FOLD_START;
    for pos in found {
        let mut b = [0u8; 8];
        std::os::unix::fs::FileExt::read_exact_at(&log, &mut b, pos).map_err(e("read"))?;
        h2 = fold(h2, i64::from_be_bytes(b), 0);
    }
    Ok((ns, format!("{h}:{h2}")))
}

/// Writes `n` segments of `batches` batches each into `dir` (see the module docs).
pub fn generate_segments(dir: &Path, n: usize, batches: usize) -> Result<usize, String> {
    clear_dir(dir)?;
    let config = LogConfig::default();
    let value = vec![7u8; 1000];
    for i in 0..n {
        let base = (i * batches * 16) as i64;
        let seg: LogSegment =
            LogSegment::open(dir, base, &config, SegmentOptions::new_segment(&config))
                .map_err(e("open"))?;
        for j in 0..batches {
            let first = base + (j * 16) as i64;
            let mut b = BatchBuilder::new(first);
            for k in 0..16 {
                b = b.record(T0 + first + k, None, Some(&value));
            }
            let batch = b.build().map_err(e("build"))?;
            seg.append(first + 15, T0 + first + 15, first + 15, &batch)
                .map_err(e("append"))?;
        }
        seg.on_become_inactive_segment().map_err(e("inactive"))?;
        seg.close().map_err(e("close"))?;
    }
    Ok(n)
}

/// Printable bytes of the generated values (JSON-like text, no backslash or control
/// character, so that `dump-log` escapes nothing and Kafka's raw text is ours).
const TEXT: &[u8] =
    b"{\"user\":\"u-1234\",\"event\":\"page_view\",\"url\":\"/shop/cart?item=42\",\"ms\":17} ";

/// Writes `dir/00000000000000000000.log` (`dir` emptied first), about `bytes` of v2
/// batches as producers send them: 1 to 64 records a batch, values of 20 to 2,000
/// printable bytes, keys on half the batches, one or two headers on a quarter, a third
/// of the batches from idempotent producers (producer id, epoch, sequences), CreateTime
/// rising with jitter; uncompressed (this crate builds `segment` without codecs).
/// Returns (batches, records).
///
/// # Errors
/// I/O errors and builder errors, as text.
pub fn generate_dump_log(seed: u64, dir: &Path, bytes: usize) -> Result<(usize, i64), String> {
    clear_dir(dir)?;
    let mut rng = Rng::new(seed ^ 0xd0_06);
    let mut out = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(segment_file(dir, "log")).map_err(e("create"))?,
    );
    let text: Vec<u8> = TEXT.iter().copied().cycle().take(4096).collect();
    let (mut offset, mut ts, mut written, mut batches) = (0i64, T0, 0usize, 0usize);
    let mut sequences = [0i32; 8];
    while written < bytes {
        let n = rng.range(1, 64) as usize;
        let mut b = BatchBuilder::new(offset).partition_leader_epoch(rng.range(0, 3) as i32);
        let producer = rng.range(0, 23) as usize;
        if producer < sequences.len() {
            b = b.producer(1000 + producer as i64, 0, sequences[producer]);
            sequences[producer] += n as i32;
        }
        let keyed = rng.range(0, 1) == 0;
        let headers = rng.range(0, 3) == 0;
        for i in 0..n {
            ts += rng.range(-3, 10);
            let len = rng.range(20, 2000) as usize;
            let at = rng.range(0, 2000) as usize;
            let value = &text[at..at + len];
            let key = format!("key-{}", rng.range(0, 99_999));
            let key = keyed.then_some(key.as_bytes());
            b = if headers {
                let h: [(&[u8], Option<&[u8]>); 2] =
                    [(b"trace-id", Some(b"a1b2c3d4")), (b"source", None)];
                b.record_with_headers(ts, key, Some(value), &h[..1 + i % 2])
            } else {
                b.record(ts, key, Some(value))
            };
        }
        let batch = b.build().map_err(e("build"))?;
        out.write_all(&batch).map_err(e("write"))?;
        written += batch.len();
        offset += n as i64;
        batches += 1;
    }
    out.flush().map_err(e("flush"))?;
    Ok((batches, offset))
}

/// Writes a log directory `dir` (emptied first) of `n` partitions `topic-K-P` (10 topics),
/// each opened with [`Log::open`](segment::Log::open), given 1 to 8 batches of 1 to 16
/// records and closed cleanly, as a broker leaves a log directory after a clean shutdown
/// (plus the root checkpoints a broker writes: recovery points, log start offsets, the
/// clean-shutdown marker). Returns `n`.
///
/// # Errors
/// I/O and log errors, as text.
pub fn generate_log_dir(seed: u64, dir: &Path, n: usize) -> Result<usize, String> {
    clear_dir(dir)?;
    let mut rng = Rng::new(seed ^ 0xd0c7);
    let value = vec![b'v'; 200];
    let mut recovery = Vec::with_capacity(n);
    for i in 0..n {
        let (topic, partition) = (format!("topic-{}", i % 10), i / 10);
        let log = segment::Log::open(
            dir.join(format!("{topic}-{partition}")),
            LogConfig::default(),
        )
        .map_err(e("open"))?;
        let mut offset = 0i64;
        for _ in 0..rng.range(1, 8) {
            let mut b = BatchBuilder::new(offset);
            for _ in 0..rng.range(1, 16) {
                b = b.record(T0 + offset, None, Some(&value));
                offset += 1;
            }
            log.append(&b.build().map_err(e("build"))?)
                .map_err(e("append"))?;
        }
        log.close().map_err(e("close"))?;
        recovery.push(format!("{topic} {partition} {offset}"));
    }
    let checkpoint = |entries: &[String]| format!("0\n{}\n{}\n", entries.len(), entries.join("\n"));
    let zeros: Vec<String> = (0..n)
        .map(|i| format!("topic-{} {} 0", i % 10, i / 10))
        .collect();
    for (name, body) in [
        ("recovery-point-offset-checkpoint", checkpoint(&recovery)),
        ("log-start-offset-checkpoint", checkpoint(&zeros)),
        (".kafka_cleanshutdown", String::new()),
    ] {
        std::fs::write(dir.join(name), body).map_err(e("checkpoint"))?;
    }
    Ok(n)
}

/// Opens and sanity-checks `n` segments of `dir` (base offsets `0, step, …`), timed, then
/// closes them. The hash folds (base offset, size) of each.
pub fn open_segments(dir: &Path, n: usize, step: i64) -> Result<(u128, u64), String> {
    let config = LogConfig::default();
    let mut h = FOLD_START;
    let mut open = Vec::with_capacity(n);
    let start = Instant::now();
    for i in 0..n {
        let base = i as i64 * step;
        let seg: LogSegment =
            LogSegment::open(dir, base, &config, SegmentOptions::existing()).map_err(e("open"))?;
        seg.sanity_check(false).map_err(e("sanity_check"))?;
        h = fold(h, base, seg.size() as i64);
        open.push(seg);
    }
    let ns = start.elapsed().as_nanos();
    for seg in open {
        seg.close().map_err(e("close"))?;
    }
    Ok((ns, h))
}

/// The batch ranges of `src` (read whole), for the ceilings: every ceiling moves the same
/// bytes in the same pieces as the segment operation it bounds.
fn batch_ranges(src: &Path) -> Result<(Vec<u8>, Vec<std::ops::Range<usize>>), String> {
    let log = std::fs::read(src).map_err(e("read source"))?;
    let ranges = split_batches(&log)?.into_iter().map(|(r, _)| r).collect();
    Ok((log, ranges))
}

/// Whether the v2 batch `b` (whole, at least its header) holds the CRC-32C of its CRC
/// range (`crc32c`, as `RecordBatch::compute_checksum`): the check the ceilings make of
/// every batch, as a follower's and a leader's append and a recovery do.
fn crc_matches(b: &[u8]) -> bool {
    let at = segment::record::CRC_OFFSET;
    let stored = u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    crc32c::crc32c(&b[at + 4..]) == stored
}

/// The `write(2)` ceiling of a segment append: every batch of `src` written with one
/// `write(2)` to `out`, timed. `over` false: `out` is removed and created anew (fresh
/// pages, as a new segment's `.log`); true: `out` is first given `src`'s bytes (untimed,
/// so its pages are allocated) and the batches are written over them from offset 0.
/// Returns the nanoseconds and the bytes written; the caller compares `out` with `src`.
/// `sabotage` leaves out the last batch (and, over allocated pages, leaves the file one
/// batch shorter).
pub fn ceiling_write(
    src: &Path,
    out: &Path,
    over: bool,
    crc: bool,
    sabotage: bool,
) -> Result<(u128, usize), String> {
    let (log, mut ranges) = batch_ranges(src)?;
    if sabotage {
        ranges.pop();
    }
    if over {
        let len = std::fs::metadata(out).map(|m| m.len()).ok();
        if len != Some(log.len() as u64) {
            std::fs::write(out, &log).map_err(e("preallocate"))?;
        }
    } else if out.exists() {
        std::fs::remove_file(out).map_err(e("remove"))?;
    }
    let start = Instant::now();
    let mut f = if over {
        std::fs::OpenOptions::new().write(true).open(out)
    } else {
        std::fs::File::create_new(out)
    }
    .map_err(e("open"))?;
    let mut checked = 0usize;
    for r in &ranges {
        let b = &log[r.clone()];
        if crc {
            // The check a follower's and a leader's append make of every batch (Kafka's
            // `RecordBatch.isValid` in `analyzeAndValidateRecords`), before its write.
            if crc_matches(b) {
                checked += b.len();
            }
        }
        f.write_all(b).map_err(e("write"))?;
    }
    if sabotage && over {
        f.set_len(ranges.last().map_or(0, |r| r.end as u64))
            .map_err(e("truncate"))?;
    }
    drop(f);
    let ns = start.elapsed().as_nanos();
    let written = ranges.last().map_or(0, |r| r.end);
    Ok((ns, if crc { checked } else { written }))
}

/// The fill ceiling of an index append: every slot of the index `src` (8-byte offset or
/// 12-byte time entries, `entry` bytes each; the file holds exactly its entries) stored as
/// its raw bytes into a new file `dst`, created at `max` bytes (`set_len`: a sparse file,
/// as a new index is created) and mapped read-write, one store a slot, timed; then the
/// mapping is dropped and the file trimmed to the entries. None of an append's work but
/// the store: no writer lock, no rule checked, no entry count published. What is left is
/// what no append avoids, the store and the kernel handing each fresh page to the mapping
/// on its first touch (on this virtual machine the larger part). `sabotage` leaves out the
/// last entry (the trimmed file keeps a zeroed slot there). Returns the nanoseconds and
/// the entries stored.
pub fn ceiling_index(
    src: &Path,
    dst: &Path,
    entry: usize,
    max: usize,
    sabotage: bool,
) -> Result<(u128, usize), String> {
    let bytes = std::fs::read(src).map_err(e("read source"))?;
    if entry == 0 || bytes.len() % entry != 0 || bytes.len() > max {
        return Err(format!(
            "{}: {} bytes is not a whole number of {entry}-byte entries within {max}",
            src.display(),
            bytes.len()
        ));
    }
    let n = bytes.len() / entry;
    let stored = if sabotage { n.saturating_sub(1) } else { n };
    let _ = std::fs::remove_file(dst);
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(dst)
        .map_err(e("create"))?;
    f.set_len(max as u64).map_err(e("preallocate"))?;
    let m = index_core::sys::Mapping::map(&f, max, true).map_err(e("map"))?;
    let start = Instant::now();
    for (i, slot) in bytes.chunks_exact(entry).take(stored).enumerate() {
        if !m.write(i * entry, slot) {
            return Err(format!("slot {i} is out of the mapping"));
        }
    }
    let ns = start.elapsed().as_nanos();
    drop(m);
    f.set_len(bytes.len() as u64).map_err(e("trim"))?;
    Ok((ns, stored))
}

/// The read ceilings of recovery: every batch of `log` (in the page cache) read with one
/// `pread` into one reused buffer, timed; with `crc`, each batch's CRC-32C (`crc32c`, as
/// `RecordBatch::compute_checksum`) is computed over its CRC range and compared with the
/// stored one. Returns the nanoseconds and, with `crc`, the batches whose CRC matched,
/// without, the bytes read.
pub fn ceiling_pread(log: &Path, crc: bool) -> Result<(u128, usize), String> {
    use std::os::unix::fs::FileExt;
    let (_, ranges) = batch_ranges(log)?;
    let f = std::fs::File::open(log).map_err(e("open"))?;
    let mut buf = vec![0u8; ranges.iter().map(|r| r.len()).max().unwrap_or(0)];
    let (mut matched, mut bytes) = (0usize, 0usize);
    let start = Instant::now();
    for r in &ranges {
        let b = &mut buf[..r.len()];
        f.read_exact_at(b, r.start as u64).map_err(e("pread"))?;
        bytes += b.len();
        if crc {
            matched += usize::from(crc_matches(b));
        }
    }
    let ns = start.elapsed().as_nanos();
    Ok((ns, if crc { matched } else { bytes }))
}

/// The no-copy read ceiling of recovery: `log` (in the page cache) mapped read-only for
/// one sequential pass (`Mapping::map_sequential`, as `LogSegment::recover` maps it), each
/// batch's CRC-32C (`crc32c`) computed in place over its CRC range and compared with the
/// stored one, then unmapped; the map, the page faults of the pass and the unmap are all
/// timed, as they are part of a recovery. Returns the nanoseconds and the batches whose
/// CRC matched.
pub fn ceiling_mapped_crc(log: &Path) -> Result<(u128, usize), String> {
    let (_, ranges) = batch_ranges(log)?;
    let f = std::fs::File::open(log).map_err(e("open"))?;
    let len = ranges.last().map_or(0, |r| r.end);
    let mut matched = 0usize;
    let start = Instant::now();
    let m = index_core::sys::Mapping::map_sequential(&f, len).map_err(e("map"))?;
    let bytes = m.bytes(len);
    for r in &ranges {
        let b = bytes.get(r.clone()).ok_or("a batch past the mapping")?;
        matched += usize::from(crc_matches(b));
    }
    drop(m);
    let ns = start.elapsed().as_nanos();
    Ok((ns, matched))
}

/// The `memcpy` ceiling: every batch of `src` (held in memory) appended to `dst`, timed.
/// `fresh`: `dst` is allocated for the run (first touch of its pages; freed after);
/// otherwise the kept `dst` is cleared and refilled (its pages already touched). Returns
/// the nanoseconds and whether the copy equals the source (`equal` or `differ`).
pub fn ceiling_memcpy(
    log: &[u8],
    ranges: &[std::ops::Range<usize>],
    reused: Option<&mut Vec<u8>>,
) -> (u128, &'static str) {
    let mut fresh = Vec::new();
    let start = Instant::now();
    let dst = match reused {
        Some(d) => {
            d.clear();
            d
        }
        None => {
            fresh.reserve_exact(log.len());
            &mut fresh
        }
    };
    for r in ranges {
        dst.extend_from_slice(&log[r.clone()]);
    }
    let ns = start.elapsed().as_nanos();
    (
        ns,
        if dst[..] == log[..] {
            "equal"
        } else {
            "differ"
        },
    )
}

/// The CRC-32C implementations `ceil-crc` measures: the crate in use and the alternatives.
pub const CRC_CRATES: &[&str] = &["crc32c", "crc-fast", "crc"];

/// CRC-32C of `data` in pieces of `size` bytes with the crate `name` ([`CRC_CRATES`]),
/// timed. Returns the nanoseconds and [`fold`] over every piece's CRC, equal for every
/// crate when each computes CRC-32C.
pub fn ceiling_crc(name: &str, data: &[u8], size: usize) -> Result<(u128, u64), String> {
    const CASTAGNOLI: crc::Crc<u32, crc::Table<16>> =
        crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISCSI);
    let f: fn(&[u8]) -> u32 = match name {
        "crc32c" => crc32c::crc32c,
        "crc-fast" => crc_fast::crc32_iscsi,
        "crc" => |b| CASTAGNOLI.checksum(b),
        other => return Err(format!("no CRC crate {other} (there are: {CRC_CRATES:?})")),
    };
    let mut h = FOLD_START;
    let start = Instant::now();
    for piece in data.chunks_exact(size.max(1)) {
        h = fold(h, i64::from(f(piece)), 0);
    }
    Ok((start.elapsed().as_nanos(), h))
}

/// The fetch ceiling: for every target, one `pread` of the 12-byte header (base offset,
/// length) of the batch that holds it, the read a fetch cannot avoid; the batch is found
/// before the timer (from `src`'s batches). Returns the nanoseconds and the answer of
/// [`segment_translate`] (`HASH1:HASH2`), computed from the headers read.
pub fn ceiling_fetch_header(
    src: &Path,
    log: &Path,
    targets: &[i64],
) -> Result<(u128, String), String> {
    use std::os::unix::fs::FileExt;
    let bytes = std::fs::read(src).map_err(e("read source"))?;
    let batches = split_batches(&bytes)?;
    let at: Vec<Option<u64>> = targets
        .iter()
        .map(|&t| {
            let i = batches.partition_point(|(_, last)| *last < t);
            batches.get(i).map(|(r, _)| r.start as u64)
        })
        .collect();
    drop(bytes);
    let f = std::fs::File::open(log).map_err(e("open"))?;
    let (mut h, mut h2) = (FOLD_START, FOLD_START);
    let mut head = [0u8; 12];
    let start = Instant::now();
    for pos in &at {
        match pos {
            Some(p) => {
                f.read_exact_at(&mut head, *p).map_err(e("pread"))?;
                let base = i64::from_be_bytes(head[..8].try_into().expect("8 bytes"));
                let len = i32::from_be_bytes(head[8..].try_into().expect("4 bytes"));
                h = fold(h, *p as i64, 12 + i64::from(len));
                h2 = fold(h2, base, 0);
            }
            None => h = fold(h, -1, -1),
        }
    }
    let ns = start.elapsed().as_nanos();
    Ok((ns, format!("{h}:{h2}")))
}

/// The server loop: reads commands from `input` until `quit` or end of file.
pub fn serve(input: impl BufRead, mut out: impl Write) -> std::io::Result<()> {
    let mut indexes: HashMap<String, Index> = HashMap::new();
    let mut targets: HashMap<String, Vec<i64>> = HashMap::new();
    let mut segments: HashMap<String, LogSegment> = HashMap::new();
    let mut ceil = CeilState::default();
    let mut opened = opens::OpenState::default();
    for line in input.lines() {
        let line = line?;
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.first() == Some(&"quit") {
            break;
        }
        let reply = match arg(&w, 0) {
            Ok(c) if c.starts_with("ceil-") => ceil.command(&w, &targets),
            Ok("log-open") => (|| {
                let o = opened.open(
                    arg(&w, 1)?,
                    Path::new(arg(&w, 2)?),
                    arg(&w, 3)? == "1",
                    arg(&w, 4)? == "1",
                )?;
                Ok(format!(
                    "{} {} {} {} {} {} {} {}",
                    o.nanos,
                    o.log_start,
                    o.log_end,
                    o.segments,
                    o.fds.0,
                    o.fds.1,
                    o.maps.0,
                    o.maps.1
                ))
            })(),
            Ok("log-close") => arg(&w, 1)
                .and_then(|id| opened.close(id))
                .map(|()| String::new()),
            _ => command(&w, &mut indexes, &mut targets, &mut segments),
        };
        match reply {
            Ok(r) => writeln!(out, "ok {r}")?,
            Err(m) => writeln!(out, "err {}", m.replace('\n', " "))?,
        }
        out.flush()?;
    }
    Ok(())
}

/// The ceilings' state: a source held in memory, and the memory the `reused` copies go to.
#[derive(Default)]
struct CeilState {
    /// The source in memory: its path, bytes and batch ranges.
    src: Option<(String, Vec<u8>, Vec<std::ops::Range<usize>>)>,
    reused: Vec<u8>,
}

impl CeilState {
    /// Loads `path` (untimed) unless it is the source already held.
    fn load(&mut self, path: &str) -> Result<(&[u8], &[std::ops::Range<usize>]), String> {
        if self.src.as_ref().is_none_or(|(p, _, _)| p != path) {
            let (log, ranges) = batch_ranges(Path::new(path))?;
            self.src = Some((path.to_string(), log, ranges));
        }
        let (_, log, ranges) = self.src.as_ref().expect("loaded");
        Ok((log, ranges))
    }

    fn command(
        &mut self,
        w: &[&str],
        targets: &HashMap<String, Vec<i64>>,
    ) -> Result<String, String> {
        match arg(w, 0)? {
            "ceil-write" => {
                let (over, crc) = match arg(w, 3)? {
                    "fresh" => (false, false),
                    "fresh-crc" => (false, true),
                    "over" => (true, false),
                    m => return Err(format!("ceil-write: no mode {m}")),
                };
                let (ns, n) = ceiling_write(
                    Path::new(arg(w, 1)?),
                    Path::new(arg(w, 2)?),
                    over,
                    crc,
                    arg(w, 4)? == "1",
                )?;
                Ok(format!("{ns} {n}"))
            }
            "ceil-pread" => {
                let (ns, n) = match arg(w, 2)? {
                    "mapped-crc" => ceiling_mapped_crc(Path::new(arg(w, 1)?))?,
                    mode => ceiling_pread(Path::new(arg(w, 1)?), mode == "crc")?,
                };
                Ok(format!("{ns} {n}"))
            }
            "ceil-memcpy" => {
                let fresh = arg(w, 2)? == "fresh";
                self.load(arg(w, 1)?)?;
                let (_, log, ranges) = self.src.as_ref().expect("loaded");
                let (ns, a) = ceiling_memcpy(log, ranges, (!fresh).then_some(&mut self.reused));
                Ok(format!("{ns} {a}"))
            }
            "ceil-index" => {
                let entry = match arg(w, 1)? {
                    "offset" => 8,
                    "time" => 12,
                    k => return Err(format!("no index kind {k}")),
                };
                let (ns, n) = ceiling_index(
                    Path::new(arg(w, 2)?),
                    Path::new(arg(w, 3)?),
                    entry,
                    num(w, 4)?,
                    arg(w, 5)? == "1",
                )?;
                Ok(format!("{ns} {n}"))
            }
            "ceil-crc" => {
                let total: usize = num(w, 4)?;
                let (log, _) = self.load(arg(w, 2)?)?;
                let data = &log[..total.min(log.len())];
                let (ns, h) = ceiling_crc(arg(w, 1)?, data, num(w, 3)?)?;
                Ok(format!("{ns} {h}"))
            }
            "ceil-fetch" => {
                let t = targets.get(arg(w, 3)?).ok_or("no such targets")?;
                let (ns, h) =
                    ceiling_fetch_header(Path::new(arg(w, 1)?), Path::new(arg(w, 2)?), t)?;
                Ok(format!("{ns} {h}"))
            }
            "ceil-open" => {
                let reads = match arg(w, 2)? {
                    "open" => false,
                    "reads" => true,
                    m => return Err(format!("ceil-open: no mode {m}")),
                };
                let c = opens::ceiling(
                    Path::new(arg(w, 1)?),
                    reads,
                    arg(w, 3)? == "1",
                    arg(w, 4)? == "1",
                )?;
                Ok(format!(
                    "{} {} {} {}",
                    c.nanos, c.logs, c.log_bytes, c.matched
                ))
            }
            "ceil-clean" => {
                let (ns, read, batches) =
                    clean::ceiling(Path::new(arg(w, 1)?), Path::new(arg(w, 2)?), num(w, 3)?)?;
                Ok(format!("{ns} {read} {batches}"))
            }
            c => Err(format!("unknown command {c}")),
        }
    }
}

fn arg<'a>(w: &[&'a str], i: usize) -> Result<&'a str, String> {
    w.get(i)
        .copied()
        .ok_or_else(|| format!("missing argument {i} of {}", w.join(" ")))
}

fn num<T: std::str::FromStr>(w: &[&str], i: usize) -> Result<T, String> {
    arg(w, i)?
        .parse()
        .map_err(|_| format!("argument {i} of {} is not a number", w.join(" ")))
}

fn command(
    w: &[&str],
    indexes: &mut HashMap<String, Index>,
    targets: &mut HashMap<String, Vec<i64>>,
    segments: &mut HashMap<String, LogSegment>,
) -> Result<String, String> {
    match arg(w, 0)? {
        "gen" => {
            let (o, t) = generate(num(w, 1)?, Path::new(arg(w, 2)?), num(w, 3)?, num(w, 4)?)?;
            Ok(format!("{o} {t}"))
        }
        "open" => {
            let idx = Index::open(
                arg(w, 2)?,
                Path::new(arg(w, 3)?),
                num(w, 4)?,
                num(w, 5)?,
                arg(w, 6)?,
            )?;
            let r = format!("{} {}", idx.entries(), idx.strategy_name());
            indexes.insert(arg(w, 1)?.to_string(), idx);
            Ok(r)
        }
        "targets" => {
            let t = read_targets(Path::new(arg(w, 2)?))?;
            let n = t.len();
            targets.insert(arg(w, 1)?.to_string(), t);
            Ok(n.to_string())
        }
        "lookup" => {
            let idx = indexes.get(arg(w, 1)?).ok_or("no such index")?;
            let t = targets.get(arg(w, 2)?).ok_or("no such targets")?;
            let (ns, h) = idx.run(t, arg(w, 3)? == "1")?;
            Ok(format!("{ns} {h}"))
        }
        "lookup-batch" => {
            let idx = indexes.get(arg(w, 1)?).ok_or("no such index")?;
            let t = targets.get(arg(w, 2)?).ok_or("no such targets")?;
            let (ns, h) = idx.run_batches(t, arg(w, 3)? == "1", num(w, 4)?)?;
            Ok(format!("{ns} {h}"))
        }
        "append" => {
            let (ns, n) = append(
                arg(w, 1)?,
                Path::new(arg(w, 2)?),
                Path::new(arg(w, 3)?),
                num(w, 4)?,
                num(w, 5)?,
                arg(w, 6)?,
                arg(w, 7)? == "1",
            )?;
            Ok(format!("{ns} {n}"))
        }
        "gen-log" => {
            let (n, last) = generate_log_with_epoch(
                num(w, 1)?,
                Path::new(arg(w, 2)?),
                num(w, 3)?,
                num(w, 4)?,
                w.get(5).map_or(Ok(-1), |_| num(w, 5))?,
            )?;
            Ok(format!("{n} {last}"))
        }
        "seg-append" => {
            let (ns, n) = segment_append(
                Path::new(arg(w, 1)?),
                Path::new(arg(w, 2)?),
                arg(w, 3)? == "1",
                w.get(4) == Some(&"prealloc"),
            )?;
            Ok(format!("{ns} {n}"))
        }
        "log-append" => {
            let (ns, leo, h) = log_append(
                Path::new(arg(w, 1)?),
                Path::new(arg(w, 2)?),
                num(w, 3)?,
                arg(w, 4)? == "1",
            )?;
            Ok(format!("{ns} {leo}:{h}"))
        }
        "leader-log" => {
            let entries = leader::read_entries(Path::new(arg(w, 1)?))?;
            let out: Vec<u8> = entries.into_iter().flat_map(|(_, b)| b).collect();
            std::fs::write(arg(w, 2)?, &out).map_err(e("write"))?;
            Ok(out.len().to_string())
        }
        "seg-recover" => {
            let (ns, n) = segment_recover(Path::new(arg(w, 1)?), Path::new(arg(w, 2)?))?;
            Ok(format!("{ns} {n}"))
        }
        "seg-open" => {
            let config = LogConfig::default();
            let seg: LogSegment = LogSegment::open(
                Path::new(arg(w, 2)?),
                0,
                &config,
                SegmentOptions::existing(),
            )
            .map_err(e("open"))?;
            let size = seg.size();
            segments.insert(arg(w, 1)?.to_string(), seg);
            Ok(size.to_string())
        }
        "seg-translate" => {
            let seg = segments.get(arg(w, 1)?).ok_or("no such segment")?;
            let t = targets.get(arg(w, 2)?).ok_or("no such targets")?;
            let (ns, h) = segment_translate(seg, t, arg(w, 3)? == "1")?;
            Ok(format!("{ns} {h}"))
        }
        "gen-leader" => {
            let (n, bytes) = leader::generate(
                num(w, 1)?,
                Path::new(arg(w, 2)?),
                arg(w, 3)?,
                num(w, 4)?,
                num(w, 5)?,
            )?;
            Ok(format!("{n} {bytes}"))
        }
        "leader" => {
            let mut entries = leader::read_entries(Path::new(arg(w, 1)?))?;
            if arg(w, 4)? == "1" {
                entries.pop(); // the sabotage `leader-skip-batch`
            }
            let (ns, leo, h) = leader::append_all(&entries, Path::new(arg(w, 2)?), arg(w, 3)?)?;
            Ok(format!("{ns} {leo} {h}"))
        }
        "seg-fetch" => {
            let seg = segments.get(arg(w, 1)?).ok_or("no such segment")?;
            let t = targets.get(arg(w, 2)?).ok_or("no such targets")?;
            let how = fetch::Delivery::parse(arg(w, 4)?)?;
            let (ns, bytes, h) = fetch::fetch(seg, t, num(w, 3)?, how, num(w, 5)?)?;
            Ok(format!("{ns} {bytes} {h}"))
        }
        "gen-dump" => {
            let (b, r) = generate_dump_log(num(w, 1)?, Path::new(arg(w, 2)?), num(w, 3)?)?;
            Ok(format!("{b} {r}"))
        }
        "gen-doctor" => {
            let n = generate_log_dir(num(w, 1)?, Path::new(arg(w, 2)?), num(w, 3)?)?;
            Ok(n.to_string())
        }
        "gen-opens" => {
            let (leo, bytes) = opens::generate(num(w, 1)?, Path::new(arg(w, 2)?), num(w, 3)?)?;
            Ok(format!("{leo} {bytes}"))
        }
        "gen-segments" => {
            let n = generate_segments(Path::new(arg(w, 1)?), num(w, 2)?, num(w, 3)?)?;
            Ok(n.to_string())
        }
        "seg-open-all" => {
            let (ns, h) = open_segments(Path::new(arg(w, 1)?), num(w, 2)?, num(w, 3)?)?;
            Ok(format!("{ns} {h}"))
        }
        "gen-clean" => {
            let i = clean::generate_clean_input(
                num(w, 1)?,
                Path::new(arg(w, 2)?),
                arg(w, 3)?,
                num(w, 4)?,
            )?;
            Ok(format!(
                "{} {} {} {}",
                i.records, i.distinct_keys, i.log_end_offset, i.dirty_bytes
            ))
        }
        "clean" => {
            let r = clean::clean_once(
                Path::new(arg(w, 1)?),
                num(w, 2)?,
                num(w, 3)?,
                num(w, 4)?,
                arg(w, 5)? == "1",
            )?;
            Ok(format!(
                "{} {} {} {} {} {} {} {}",
                r.nanos,
                r.end_offset,
                r.messages_read,
                r.bytes_read,
                r.messages_written,
                r.bytes_written,
                r.map_bytes,
                r.map_peak_bytes
            ))
        }
        c => Err(format!("unknown command {c}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_is_fnv1a_on_words() {
        // Pinned: VsBench.java's `fold` is the same arithmetic on `long`; a run compares
        // the two sides' hashes, so a drift here shows there as a mismatch of every row.
        assert_eq!(fold(FOLD_START, 0, 0), 0x0832_8807_b4eb_6fed);
        assert_ne!(fold(FOLD_START, 1, 0), fold(FOLD_START, 0, 1));
    }

    /// Kafka's `lookup` on strictly increasing keys: the last entry with key <= target,
    /// else `(base, 0)` / `(-1, base)`.
    fn reference(entries: &[(i64, i64)], empty: (i64, i64), targets: &[i64]) -> u64 {
        targets.iter().fold(FOLD_START, |h, &t| {
            let n = entries.partition_point(|e| e.0 <= t);
            let (a, b) = if n == 0 { empty } else { entries[n - 1] };
            fold(h, a, b)
        })
    }

    /// The answer check of `cargo xtask vs-kafka` without Java: every strategy (the
    /// default open path and each named one) gives the same hash on the generated inputs,
    /// the hash of Kafka's lookup rule, per call and in batches (`with_reader`); the
    /// sabotage changes it; appends reproduce the generated files byte for byte, in both
    /// modes.
    #[test]
    fn every_strategy_answers_as_kafka_and_the_sabotage_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = 64 * 1024;
        let (no, nt) = generate(7, dir.path(), 4000, bytes).unwrap();
        assert_eq!(no, bytes / 8);
        assert_eq!(nt, bytes / 12 - 1);
        let mut names = vec!["default"];
        names.extend(named_strategies().iter().map(|(n, _)| *n));
        for (kind, file) in [("offset", "offset.index"), ("time", "time.timeindex")] {
            let path = dir.path().join(file);
            let entries: Vec<(i64, i64)> =
                match Index::open(kind, &path, 0, bytes, "default").unwrap() {
                    Index::Offset(i) => i
                        .all_entries()
                        .unwrap()
                        .iter()
                        .map(|p| (p.offset, i64::from(p.position)))
                        .collect(),
                    Index::Time(i) => i
                        .all_entries()
                        .unwrap()
                        .iter()
                        .map(|t| (t.timestamp, t.offset))
                        .collect(),
                };
            let empty = if kind == "offset" { (0, 0) } else { (-1, 0) };
            for workload in WORKLOADS {
                let targets =
                    read_targets(&dir.path().join(format!("{kind}-{workload}.targets"))).unwrap();
                assert_eq!(targets.len(), 4000);
                let want = reference(&entries, empty, &targets);
                for name in &names {
                    let idx = Index::open(kind, &path, 0, bytes, name).unwrap();
                    let (_, h) = idx.run(&targets, false).unwrap();
                    assert_eq!(h, want, "{kind} {workload} {name}");
                    let (_, bad) = idx.run(&targets, true).unwrap();
                    assert_ne!(bad, want, "{kind} {workload} {name}: sabotage not seen");
                    // The batch API, in batches that do not divide the targets evenly.
                    let (_, h) = idx.run_batches(&targets, false, 999).unwrap();
                    assert_eq!(h, want, "{kind} {workload} {name}: batches");
                    let (_, bad) = idx.run_batches(&targets, true, 999).unwrap();
                    assert_ne!(
                        bad, want,
                        "{kind} {workload} {name}: batch sabotage not seen"
                    );
                }
            }
            let source = std::fs::read(&path).unwrap();
            for mode in ["call", "appender"] {
                let out = dir.path().join(format!("{kind}-{mode}.out"));
                let (_, n) = append(kind, &path, &out, 0, bytes, mode, false).unwrap();
                assert_eq!(n, entries.len());
                assert!(std::fs::read(&out).unwrap() == source, "{kind} {mode}");
                append(kind, &path, &out, 0, bytes, mode, true).unwrap();
                assert!(
                    std::fs::read(&out).unwrap() != source,
                    "{kind} {mode} sabotage"
                );
            }
        }
    }

    /// The segment rows without Java: recovery rebuilds exactly what the appends wrote, the
    /// `.log` is the batches byte for byte, and `translate_offset` finds the batch that
    /// holds each target (Kafka's answer: position, size, base offset), which the sabotage
    /// misses.
    #[test]
    fn segment_append_recover_and_translate_agree() {
        let dir = tempfile::tempdir().unwrap();
        let (n, last) = generate_log(3, dir.path(), 2 << 20, 500).unwrap();
        assert!(n > 100 && last == n as i64 * 16 - 1);
        let src = dir.path().join("batches.log");
        let (a, r) = (dir.path().join("a"), dir.path().join("r"));
        let p = dir.path().join("p");
        assert_eq!(segment_append(&src, &a, false, false).unwrap().1, n);
        assert_eq!(segment_append(&src, &p, false, true).unwrap().1, n);
        assert_eq!(segment_recover(&src, &r).unwrap().1, 0);
        let source = std::fs::read(&src).unwrap();
        assert!(std::fs::read(segment_file(&a, "log")).unwrap() == source);
        // Preallocated, then trimmed by the close: the same files.
        for f in ["log", "index", "timeindex"] {
            let (x, y) = (segment_file(&a, f), segment_file(&p, f));
            assert!(
                std::fs::read(x).unwrap() == std::fs::read(y).unwrap(),
                "preallocated {f}"
            );
        }
        for f in ["log", "index", "timeindex"] {
            let (x, y) = (segment_file(&a, f), segment_file(&r, f));
            assert!(
                std::fs::read(x).unwrap() == std::fs::read(y).unwrap(),
                "{f}"
            );
        }
        let batches = split_batches(&source).unwrap();
        let targets = read_targets(&dir.path().join("fetch.targets")).unwrap();
        let (mut h, mut h2) = (FOLD_START, FOLD_START);
        for &t in &targets {
            let (range, _) = batches.iter().find(|(_, l)| *l >= t).unwrap();
            h = fold(h, range.start as i64, range.len() as i64);
            let base = i64::from_be_bytes(source[range.start..range.start + 8].try_into().unwrap());
            h2 = fold(h2, base, 0);
        }
        let config = LogConfig::default();
        let seg: LogSegment = LogSegment::open(&a, 0, &config, SegmentOptions::existing()).unwrap();
        let (_, got) = segment_translate(&seg, &targets, false).unwrap();
        assert_eq!(got, format!("{h}:{h2}"));
        let (_, bad) = segment_translate(&seg, &targets, true).unwrap();
        assert_ne!(bad, got);
    }

    /// The follower append rows without Java: `Log::append` of every batch rolls at
    /// `segment.bytes` and leaves the batches byte for byte in its segments' `.log`s; the
    /// sabotage leaves out the last batch.
    #[test]
    fn log_append_rolls_and_keeps_the_batches() {
        let dir = tempfile::tempdir().unwrap();
        let (n, last) = generate_log_with_epoch(7, dir.path(), 3 << 20, 0, 0).unwrap();
        let src = dir.path().join("batches.log");
        let source = std::fs::read(&src).unwrap();
        let a = dir.path().join("a");
        let (_, leo, h) = log_append(&src, &a, 1 << 20, false).unwrap();
        assert_eq!(leo, last + 1);
        let mut want = FOLD_START;
        for (r, l) in split_batches(&source).unwrap() {
            let base = i64::from_be_bytes(source[r.start..r.start + 8].try_into().unwrap());
            want = fold(want, base, l);
        }
        assert_eq!(h, want);
        let mut logs: Vec<_> = std::fs::read_dir(&a)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        logs.sort();
        assert!(logs.len() >= 3, "{logs:?}");
        let joined: Vec<u8> = logs
            .iter()
            .flat_map(|p| std::fs::read(p).unwrap())
            .collect();
        assert!(joined == source);
        let (_, bad_leo, bad) = log_append(&src, &a, 1 << 20, true).unwrap();
        assert!(bad_leo != leo && bad != h, "{n} batches");
    }

    #[test]
    fn the_index_fill_ceiling_writes_the_source_index_and_its_sabotage_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let (entries, time_entries) = generate(3, dir.path(), 10, 64 << 10).unwrap();
        for (kind, file, entry, n) in [
            ("offset", "offset.index", 8, entries),
            ("time", "time.timeindex", 12, time_entries),
        ] {
            let src = dir.path().join(file);
            let source = std::fs::read(&src).unwrap();
            assert_eq!(source.len(), n * entry, "{kind}");
            let out = dir.path().join(format!("ceiling.{kind}"));
            let (_, stored) = ceiling_index(&src, &out, entry, 64 << 10, false).unwrap();
            assert_eq!(stored, n, "{kind}");
            assert!(std::fs::read(&out).unwrap() == source, "{kind}");
            let (_, stored) = ceiling_index(&src, &out, entry, 64 << 10, true).unwrap();
            assert_eq!(stored, n - 1, "{kind}");
            let damaged = std::fs::read(&out).unwrap();
            assert_eq!(damaged.len(), source.len(), "{kind}");
            assert!(damaged != source, "{kind}: the sabotage must show");
            // Not a whole number of entries, or larger than the mapping: an error.
            assert!(ceiling_index(&src, &out, entry, source.len() - 1, false).is_err());
            assert!(ceiling_index(&src, &out, 11, 64 << 10, false).is_err());
            assert!(ceiling_index(&src, &out, 0, 64 << 10, false).is_err());
        }
    }

    #[test]
    fn the_ceilings_move_the_same_bytes_and_check_them() {
        let dir = tempfile::tempdir().unwrap();
        let (n, _) = generate_log(5, dir.path(), 1 << 20, 300).unwrap();
        let src = dir.path().join("batches.log");
        let source = std::fs::read(&src).unwrap();
        let out = dir.path().join("out.log");
        for over in [false, true, true] {
            let (_, bytes) = ceiling_write(&src, &out, over, false, false).unwrap();
            assert_eq!(bytes, source.len());
            assert!(std::fs::read(&out).unwrap() == source, "over {over}");
        }
        // With each batch's CRC-32C checked: the same file, every byte's CRC matched.
        let (_, bytes) = ceiling_write(&src, &out, false, true, false).unwrap();
        assert_eq!(bytes, source.len());
        assert!(std::fs::read(&out).unwrap() == source, "fresh-crc");
        for over in [false, true] {
            ceiling_write(&src, &out, over, false, true).unwrap();
            assert!(
                std::fs::read(&out).unwrap() != source,
                "sabotage, over {over}"
            );
        }
        assert_eq!(ceiling_pread(&src, true).unwrap().1, n);
        assert_eq!(ceiling_pread(&src, false).unwrap().1, source.len());
        let mut damaged = source.clone();
        damaged[100] ^= 1;
        std::fs::write(&out, &damaged).unwrap();
        assert_eq!(ceiling_pread(&out, true).unwrap().1, n - 1);
        assert_eq!(ceiling_mapped_crc(&src).unwrap().1, n);
        assert_eq!(ceiling_mapped_crc(&out).unwrap().1, n - 1);
        // A damaged batch's bytes are not counted by the CRC-checking write ceiling.
        let bad_src = dir.path().join("damaged.log");
        std::fs::write(&bad_src, &damaged).unwrap();
        let (_, bytes) = ceiling_write(&bad_src, &out, false, true, false).unwrap();
        assert!(bytes < source.len());
        let (log, ranges) = batch_ranges(&src).unwrap();
        let mut reused = Vec::new();
        assert_eq!(ceiling_memcpy(&log, &ranges, None).1, "equal");
        for _ in 0..2 {
            assert_eq!(ceiling_memcpy(&log, &ranges, Some(&mut reused)).1, "equal");
        }
        assert_eq!(
            ceiling_memcpy(&log, &ranges[1..], Some(&mut reused)).1,
            "differ"
        );
        // The same hash from every crate, a different one from other bytes.
        for size in [100, 1024, 16 * 1024] {
            let hashes: Vec<u64> = CRC_CRATES
                .iter()
                .map(|c| ceiling_crc(c, &source, size).unwrap().1)
                .collect();
            assert!(hashes.iter().all(|h| *h == hashes[0]), "{size}: {hashes:?}");
            assert_ne!(
                ceiling_crc("crc-fast", &damaged, size).unwrap().1,
                hashes[0]
            );
        }
        let check = b"123456789";
        for c in CRC_CRATES {
            let h = ceiling_crc(c, check, check.len()).unwrap().1;
            assert_eq!(h, fold(FOLD_START, 0xE306_9283, 0), "{c}");
        }
        assert!(ceiling_crc("crc32fast", &source, 100).is_err());
        // The fetch ceiling answers as translate_offset does.
        let a = dir.path().join("a");
        segment_append(&src, &a, false, false).unwrap();
        let targets = read_targets(&dir.path().join("fetch.targets")).unwrap();
        let config = LogConfig::default();
        let seg: LogSegment = LogSegment::open(&a, 0, &config, SegmentOptions::existing()).unwrap();
        let (_, want) = segment_translate(&seg, &targets, false).unwrap();
        let log_file = segment_file(&a, "log");
        let (_, got) = ceiling_fetch_header(&src, &log_file, &targets).unwrap();
        assert_eq!(got, want);
    }
}
