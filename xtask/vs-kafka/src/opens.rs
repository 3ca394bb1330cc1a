//! The opens rows of `cargo xtask vs-kafka --only opens` (issue 41, goal 4), our side: a
//! whole partition directory of many small segments opened by `Log::open`, against Kafka
//! 4.4's `UnifiedLog.create` (its `LogLoader`; `oracle.OpensBench`).
//!
//! The input ([`generate`]) is written once by our `Log` and closed cleanly: `segments`
//! segments of [`BATCHES_PER_SEGMENT`] batches (rolled by `Log::roll`), each of
//! [`RECORDS_PER_BATCH`] records of a 8-byte key and a 120-byte value. A run opens a copy of
//! it ([`OpenState::open`]); the log stays open (its descriptors and mappings are counted) until
//! [`OpenState::close`].

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use segment::record::BatchBuilder;
use segment::{Log, LogConfig};

use super::{clear_dir, e, Rng, T0};

/// Batches of each generated segment.
pub const BATCHES_PER_SEGMENT: usize = 4;

/// Records of each generated batch.
pub const RECORDS_PER_BATCH: i32 = 16;

/// Writes a partition directory of `segments` segments into `dir` (emptied first; see the
/// module docs) and closes the log cleanly. Returns the log end offset and the bytes of
/// the `.log` files.
///
/// # Errors
/// An open, append, roll or close failure.
pub fn generate(seed: u64, dir: &Path, segments: usize) -> Result<(i64, u64), String> {
    clear_dir(dir)?;
    let mut rng = Rng::new(seed ^ 0x09e2);
    let log = Log::open(dir, LogConfig::default()).map_err(e("open"))?;
    let mut offset = 0i64;
    for s in 0..segments {
        if s > 0 {
            log.roll(None).map_err(e("roll"))?;
        }
        for _ in 0..BATCHES_PER_SEGMENT {
            let mut b = BatchBuilder::new(offset);
            for _ in 0..RECORDS_PER_BATCH {
                let key = format!("k{:07}", rng.range(0, 9_999_999));
                let value = format!("{:016x}", rng.next_u64()).repeat(120 / 16 + 1);
                b = b.record(
                    T0 + offset,
                    Some(key.as_bytes()),
                    Some(&value.as_bytes()[..120]),
                );
                offset += 1;
            }
            log.append(&b.build().map_err(e("build"))?)
                .map_err(e("append"))?;
        }
    }
    let bytes = log.size();
    let leo = log.log_end_offset();
    log.close().map_err(e("close"))?;
    Ok((leo, bytes))
}

/// What one open answered and held.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Opened {
    pub nanos: u128,
    pub log_start: i64,
    pub log_end: i64,
    pub segments: usize,
    /// Entries of `/proc/self/fd` before and after the open.
    pub fds: (usize, usize),
    /// Lines of `/proc/self/maps` before and after the open.
    pub maps: (usize, usize),
}

/// Entries of `/proc/self/fd` (0 where there is no `/proc`).
pub fn fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// Lines of `/proc/self/maps`: the mappings of this process (0 where there is no `/proc`).
pub fn map_count() -> usize {
    std::fs::read_to_string("/proc/self/maps").map_or(0, |s| s.lines().count())
}

/// The logs held open between `log-open` and `log-close`.
#[derive(Default)]
pub struct OpenState {
    logs: HashMap<String, Log>,
}

impl OpenState {
    /// Opens the partition directory `dir` with `Log::open` (Kafka's default config),
    /// timed, and holds it as `id`. `clean` false removes the clean-shutdown marker first
    /// (untimed): the open then recovers from the checkpointed recovery point as after a
    /// crash. `sabotage` deletes the first segment's `.log` before the open, so the log
    /// starts one segment later.
    ///
    /// # Errors
    /// `id` already held; an open failure.
    pub fn open(
        &mut self,
        id: &str,
        dir: &Path,
        clean: bool,
        sabotage: bool,
    ) -> Result<Opened, String> {
        if self.logs.contains_key(id) {
            return Err(format!("log {id} is open already"));
        }
        if !clean {
            let marker = dir.join(segment::log::CLEAN_SHUTDOWN_FILE);
            if marker.exists() {
                std::fs::remove_file(&marker).map_err(e("remove marker"))?;
            }
        }
        if sabotage {
            std::fs::remove_file(dir.join(format!("{:020}.log", 0))).map_err(e("sabotage"))?;
        }
        let (fds0, maps0) = (fd_count(), map_count());
        let start = Instant::now();
        let log = Log::open(dir, LogConfig::default()).map_err(e("open"))?;
        let nanos = start.elapsed().as_nanos();
        let out = Opened {
            nanos,
            log_start: log.log_start_offset(),
            log_end: log.log_end_offset(),
            segments: log.segments().number_of_segments(),
            fds: (fds0, fd_count()),
            maps: (maps0, map_count()),
        };
        self.logs.insert(id.to_string(), log);
        Ok(out)
    }

    /// Closes the log held as `id` (untimed).
    ///
    /// # Errors
    /// No such log; a close failure.
    pub fn close(&mut self, id: &str) -> Result<(), String> {
        let log = self
            .logs
            .remove(id)
            .ok_or_else(|| format!("no open log {id}"))?;
        log.close().map_err(e("close"))
    }
}

/// The segments ahead of the one it reads whose files the [`ceiling`] opens (and, with
/// `advise`, advises), as the loader's load-time check does.
pub const CEILING_AHEAD: usize = segment::loader_plan::LOAD_CHECK_AHEAD;

/// Bytes at the start of a `.log` the loader advises when cold.
const ADVISE_HEAD: u64 = segment::loader_plan::LOAD_CHECK_HEAD;

/// Bytes at the end of a `.log` the loader advises when cold.
const ADVISE_TAIL: u64 = segment::loader_plan::LOAD_CHECK_TAIL;

/// An index's last entry is advised apart from its first only this far or more from the
/// start.
const ADVISE_PAGE: u64 = segment::loader_plan::ADVICE_PAGE;

/// The largest `.log` the loader checks whole, and, in a segment that is not the last,
/// without reading its index files (their check waits for their first load).
const WHOLE_LOG_MAX: u64 = segment::loader_plan::DEFER_INDEX_CHECK_MAX_LOG_BYTES;

/// The most of a `.log`'s tail one check reads (the load-time check's
/// `TAIL_SCAN_BUDGET`, `segment::loader_plan::TAIL_SCAN_BUDGET`).
const TAIL_READ_MAX: u64 = segment::loader_plan::TAIL_SCAN_BUDGET;

/// Bytes of a batch header the load-time check reads (Kafka's v2 header, 61 bytes).
const HEADER_BYTES: u64 = 61;

/// What a [`ceiling`] of an open did; its answer is checked against the two sides'
/// segment count and the directory's `.log` bytes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CeilingOpen {
    /// The timed part: listing, opens and `fstat`s (and the check's reads), in ns.
    pub nanos: u128,
    /// `.log` files opened (and held until the timer stopped).
    pub logs: usize,
    /// The sum of their sizes, as `fstat` gave them, in bytes.
    pub log_bytes: u64,
    /// With the check's reads: the `.log`s whose first batch header's base offset (its
    /// first 8 bytes, big-endian) equals the base offset of the file's name; 0 without.
    pub matched: usize,
}

/// One index file as the ceiling reads it: the file and its length (`None`: missing).
type CeilIndex = Option<(std::fs::File, u64)>;

/// The physical ceilings of an open of the partition directory `dir`, issue 41's
/// `ours/ceiling` of the opens rows (docs/performance.md#vs-kafka-opens-ceilings):
///
/// * **list + open** (`reads` false): the work no loader can skip, and all of Kafka's
///   clean open does with the disk: the directory listed once, every `*.log` in it opened
///   read-only and `fstat`ed, the descriptors held until the timer stops (then closed,
///   untimed);
/// * **list + open + check reads** (`reads` true): the same, then for every segment the
///   pages our load-time check reads (`check_loaded_segments`, `read_index_ends`,
///   `segment_check_with`), as plain `pread`s and no checking: the `.index` and
///   `.timeindex` opened and `fstat`ed ([`CEILING_AHEAD`] segments ahead) and their first
///   and last entries read (one read when there is one entry), the `.log`'s first 61
///   bytes (the batch header) when its last offset-index entry is past position 0, and
///   its tail from that entry's position to the end (one read, at most the check's
///   8 MiB budget but for the last segment, which the loader scans to its end). With `advise`, as the loader when it finds the page cache cold:
///   `posix_fadvise(WILLNEED)` of each index's first and last entries and the `.log`'s
///   first 16 KiB and last 64 KiB, [`CEILING_AHEAD`] segments ahead.
///
/// The `.log`s are taken in name order, the loader's (base-offset order for Kafka's
/// zero-padded names; on ext4 the
/// listing's order is the name hash's, so unsorted reads would not follow the loader's
/// I/O order), and only regular files (a FIFO named `*.log` would block the open).
/// `skip_last` (the sabotage `ceiling-open-skip`) leaves out the last
/// `.log`, so the answer is one segment short.
///
/// # Errors
/// The listing, an open, a `fstat` or a read failing (a missing index is not an error:
/// it is read as empty, as the loader's check does).
pub fn ceiling(
    dir: &Path,
    reads: bool,
    advise: bool,
    skip_last: bool,
) -> Result<CeilingOpen, String> {
    let start = Instant::now();
    let mut stems = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(e("list"))? {
        let entry = entry.map_err(e("list"))?;
        let name = entry.file_name();
        if let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".log")) {
            if entry.file_type().map_err(e("list"))?.is_file() {
                stems.push(stem.to_string());
            }
        }
    }
    // By name, as the loader sorts its listing: base-offset order for Kafka's zero-padded
    // names, with no allocation or parse per comparison inside the timer.
    stems.sort_unstable();
    if skip_last {
        stems.pop();
    }
    let mut logs = Vec::with_capacity(stems.len());
    let mut log_bytes = 0u64;
    for stem in &stems {
        let f = std::fs::File::open(dir.join(format!("{stem}.log"))).map_err(e("open"))?;
        let len = f.metadata().map_err(e("fstat"))?.len();
        log_bytes = log_bytes
            .checked_add(len)
            .ok_or("the .log sizes overflow a u64")?;
        logs.push((f, len));
    }
    // The first 8 bytes of each `.log` (its first batch's base offset), compared with
    // the name once the timer stops.
    let mut heads: Vec<Option<[u8; 8]>> = Vec::new();
    if reads {
        heads = read_check_pages(dir, &stems, &logs, advise)?;
    }
    let nanos = start.elapsed().as_nanos();
    let logs_len: Vec<u64> = logs.iter().map(|(_, len)| *len).collect();
    drop(logs);
    let matched = stems
        .iter()
        .zip(&heads)
        .zip(&logs_len)
        .filter(|((stem, head), &len)| {
            // An empty `.log` (a freshly rolled active segment) has no header to match.
            len == 0
                || stem
                    .parse::<i64>()
                    .is_ok_and(|base| head.is_some_and(|h| i64::from_be_bytes(h) == base))
        })
        .count();
    Ok(CeilingOpen {
        nanos,
        logs: stems.len(),
        log_bytes,
        matched,
    })
}

/// The load-time check's reads of every segment ([`ceiling`] with `reads`); returns the
/// first 8 bytes of each `.log` (`None` for an empty one).
fn read_check_pages(
    dir: &Path,
    stems: &[String],
    logs: &[(std::fs::File, u64)],
    advise: bool,
) -> Result<Vec<Option<[u8; 8]>>, String> {
    use std::os::unix::fs::FileExt;
    let open_index = |path: std::path::PathBuf, entry: u64| -> Result<CeilIndex, String> {
        let f = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(er) if er.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(er) => return Err(format!("open {}: {er}", path.display())),
        };
        let len = f.metadata().map_err(e("fstat"))?.len();
        if advise && len >= entry {
            let _ = index_core::sys::advise_range_will_need(&f, 0, entry);
            let last = (len - len % entry) - entry;
            if last >= ADVISE_PAGE {
                let _ = index_core::sys::advise_range_will_need(&f, last, entry);
            }
        }
        Ok(Some((f, len)))
    };
    let open_ahead = |i: usize| -> Result<(CeilIndex, CeilIndex), String> {
        let (log, size) = &logs[i];
        // A small segment that is not the last: its `.log` alone (the loader checks its
        // index files at their first load).
        let pair = if i + 1 < logs.len() && *size <= WHOLE_LOG_MAX {
            (None, None)
        } else {
            (
                open_index(dir.join(format!("{}.index", stems[i])), 8)?,
                open_index(dir.join(format!("{}.timeindex", stems[i])), 12)?,
            )
        };
        if advise && *size > 0 {
            let _ = index_core::sys::advise_range_will_need(log, 0, (*size).min(ADVISE_HEAD));
            if *size > ADVISE_HEAD {
                let from = size.saturating_sub(ADVISE_TAIL).max(ADVISE_HEAD);
                let _ = index_core::sys::advise_range_will_need(log, from, size - from);
            }
        }
        Ok(pair)
    };
    // Reads an index's first and last entries into `first` and `last` (one read when
    // it holds one entry); false when it holds none.
    let ends = |ix: &CeilIndex, first: &mut [u8], last: &mut [u8]| -> Result<bool, String> {
        let Some((f, len)) = ix else {
            return Ok(false);
        };
        let size = first.len() as u64;
        let entries = len / size;
        if entries == 0 {
            return Ok(false);
        }
        f.read_exact_at(first, 0).map_err(e("pread"))?;
        if entries == 1 {
            last.copy_from_slice(first);
        } else {
            f.read_exact_at(last, (entries - 1) * size)
                .map_err(e("pread"))?;
        }
        Ok(true)
    };
    let mut ahead = std::collections::VecDeque::with_capacity(CEILING_AHEAD);
    let mut opened = 0;
    let mut heads = Vec::with_capacity(logs.len());
    let mut tail = Vec::new();
    let (mut o_first, mut o_last, mut t_first, mut t_last) =
        ([0u8; 8], [0u8; 8], [0u8; 12], [0u8; 12]);
    for (i, (log, size)) in logs.iter().enumerate() {
        while opened < logs.len() && opened < i + CEILING_AHEAD {
            ahead.push_back(open_ahead(opened)?);
            opened += 1;
        }
        let (oi, ti) = ahead.pop_front().ok_or("no index files opened")?;
        // The last offset-index entry's position (4 bytes big-endian after the relative
        // offset): where the tail read starts.
        // A small `.log` is read whole, with or without its index.
        let scan_from = if ends(&oi, &mut o_first, &mut o_last)? && *size > WHOLE_LOG_MAX {
            u64::from(u32::from_be_bytes([
                o_last[4], o_last[5], o_last[6], o_last[7],
            ]))
            .min(*size)
        } else {
            0
        };
        ends(&ti, &mut t_first, &mut t_last)?;
        drop((oi, ti));
        let mut head = None;
        if *size > 0 && scan_from > 0 {
            let mut h = [0u8; HEADER_BYTES as usize];
            let n = HEADER_BYTES.min(*size) as usize;
            log.read_exact_at(&mut h[..n], 0).map_err(e("pread"))?;
            head = (n >= 8).then(|| h[..8].try_into().expect("8 bytes"));
        }
        // The loader scans the last segment to its end, the others within its budget.
        let budget = if i + 1 == logs.len() {
            u64::MAX
        } else {
            TAIL_READ_MAX
        };
        let n = (size - scan_from).min(budget) as usize;
        if n > 0 {
            tail.resize(n, 0);
            log.read_exact_at(&mut tail, scan_from)
                .map_err(e("pread"))?;
            if scan_from == 0 && n >= 8 {
                head = Some(tail[..8].try_into().expect("8 bytes"));
            }
        }
        heads.push(head);
    }
    Ok(heads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_log_opens_with_its_segments_and_the_sabotage_drops_one() {
        let d = tempfile::tempdir().unwrap();
        let (leo, bytes) = generate(1, d.path(), 5).unwrap();
        assert_eq!(
            leo,
            5 * BATCHES_PER_SEGMENT as i64 * i64::from(RECORDS_PER_BATCH)
        );
        assert!(bytes > 0);
        let mut st = OpenState::default();
        let o = st.open("a", d.path(), true, false).unwrap();
        assert_eq!((o.log_start, o.log_end, o.segments), (0, leo, 5));
        assert!(st.open("a", d.path(), true, false).is_err());
        st.close("a").unwrap();
        let o = st.open("a", d.path(), false, true).unwrap();
        assert_eq!(o.segments, 4);
        assert!(o.log_start > 0);
        st.close("a").unwrap();
    }

    /// The `.log` bytes of `dir`, from the file system.
    fn log_bytes(dir: &Path) -> u64 {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum()
    }

    #[test]
    fn the_open_ceilings_count_the_logs_and_check_their_first_headers() {
        let d = tempfile::tempdir().unwrap();
        generate(2, d.path(), 6).unwrap();
        let bytes = log_bytes(d.path());
        let c = ceiling(d.path(), false, false, false).unwrap();
        assert_eq!((c.logs, c.log_bytes, c.matched), (6, bytes, 0));
        for advise in [false, true] {
            let c = ceiling(d.path(), true, advise, false).unwrap();
            assert_eq!((c.logs, c.log_bytes, c.matched), (6, bytes, 6));
        }
        // The sabotage: one segment short, in the count and in the bytes.
        for reads in [false, true] {
            let c = ceiling(d.path(), reads, false, true).unwrap();
            assert_eq!(c.logs, 5);
            assert!(c.log_bytes < bytes);
        }
        // A segment without its offset index: its header is read from the tail read
        // (from position 0), and still checked.
        let seg = |base: i64, suffix: &str| d.path().join(format!("{base:020}.{suffix}"));
        let per = BATCHES_PER_SEGMENT as i64 * i64::from(RECORDS_PER_BATCH);
        std::fs::remove_file(seg(per, "index")).unwrap();
        assert_eq!(ceiling(d.path(), true, false, false).unwrap().matched, 6);
        // A first header whose base offset is not the name's fails the check, with and
        // without the offset index.
        for base in [per, 2 * per] {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(seg(base, "log"))
                .unwrap();
            use std::os::unix::fs::FileExt;
            f.write_all_at(&(base + 1).to_be_bytes(), 0).unwrap();
        }
        assert_eq!(ceiling(d.path(), true, true, false).unwrap().matched, 4);
        // An empty `.log` (a freshly rolled active segment) has no header and passes; a
        // directory named `*.log` is not a segment.
        std::fs::write(seg(1 << 40, "log"), b"").unwrap();
        std::fs::create_dir(d.path().join("x.log")).unwrap();
        let c = ceiling(d.path(), true, false, false).unwrap();
        assert_eq!((c.logs, c.log_bytes, c.matched), (7, bytes, 5));
        // The sabotage leaves out the largest base offset: here the empty one.
        let c = ceiling(d.path(), true, false, true).unwrap();
        assert_eq!((c.logs, c.log_bytes, c.matched), (6, bytes, 4));
        assert!(ceiling(&d.path().join("nope"), false, false, false).is_err());
    }
}
