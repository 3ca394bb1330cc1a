//! The cleaner rows of `cargo xtask vs-kafka --only clean` (issue 40), our side: the
//! compacted inputs, one `Log::clean` of a copy of one, and the physical limit of the
//! same work (read the bytes, check each batch's CRC-32C, write the retained bytes).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use segment::clean::{CleanerConfig, CompactionConfig};
use segment::record::BatchBuilder;
use segment::{Log, LogConfig};

use super::{clear_dir, e, Rng, T0};

/// Records per generated batch.
pub const RECORDS_PER_BATCH: i64 = 50;

/// Records of the `updates` input per GiB: 5 million, 30 % of them updates of an earlier
/// key (so about 3.5 million distinct keys, the latest value of each surviving).
pub const UPDATES_RECORDS_PER_GIB: u64 = 5_000_000;

/// The value of an `updates` record: 194 bytes, so a record takes 213 bytes in its batch
/// (a 10-byte key) and 5 million records about 1 GiB.
pub const UPDATES_VALUE_BYTES: usize = 194;

/// Distinct keys of the `small` input per GiB (drawn uniformly for each record).
pub const SMALL_KEYS_PER_GIB: u64 = 1_000_000;

/// The value of a `small` record: 83 bytes, so that with its 8-byte key a record takes
/// exactly 100 bytes in its batch (length, attributes, deltas, lengths, headers count).
pub const SMALL_VALUE_BYTES: usize = 83;

/// What [`generate_clean_input`] wrote.
pub struct CleanInput {
    pub records: u64,
    pub distinct_keys: u64,
    /// The log end offset (the active segment holds the last batch alone).
    pub log_end_offset: i64,
    /// Bytes of the dirty section (the first segment).
    pub dirty_bytes: u64,
}

/// The log configuration of both the inputs and the cleans: Kafka's defaults (1 GiB
/// segments, 10 MiB indexes, an index entry per 4096 bytes), `cleanup.policy=compact`.
pub fn clean_log_config() -> LogConfig {
    LogConfig {
        compact: true,
        ..LogConfig::default()
    }
}

/// Writes a compacted partition directory `dir` (`<topic>-0`) with our `Log`, closed
/// cleanly: a first segment of at most `bytes` of v2 batches of 50 records (timestamps
/// `T0 + offset`, no producer id), then a roll and one batch in the active segment, so
/// that the whole first segment is the dirty section.
///
/// `kind` `updates`: `UPDATES_RECORDS_PER_GIB` records per GiB of `bytes`, each a new
/// key (`k` and 9 digits) or, with probability 0.3, an update of a uniformly drawn
/// earlier key; `small`: 100-byte records whose keys (8 digits) are drawn uniformly from
/// `SMALL_KEYS_PER_GIB` keys per GiB, until the segment holds `bytes`.
pub fn generate_clean_input(
    seed: u64,
    dir: &Path,
    kind: &str,
    bytes: u64,
) -> Result<CleanInput, String> {
    clear_dir(dir)?;
    let mut rng = Rng::new(seed ^ 0xc1ea);
    let gib = |n: u64| ((n as f64) * bytes as f64 / f64::from(1u32 << 30)).round() as u64;
    let (records_limit, key_space, value) = match kind {
        "updates" => (
            gib(UPDATES_RECORDS_PER_GIB),
            0,
            vec![b'u'; UPDATES_VALUE_BYTES],
        ),
        "small" => (
            u64::MAX,
            gib(SMALL_KEYS_PER_GIB).max(1),
            vec![b's'; SMALL_VALUE_BYTES],
        ),
        k => return Err(format!("no clean input kind {k}")),
    };
    let log = Log::open(dir, clean_log_config()).map_err(e("open"))?;
    let mut offset = 0i64;
    let mut written = 0u64;
    let mut next_key = 0u64;
    let mut seen = vec![false; key_space as usize];
    let mut distinct = 0u64;
    let mut key = Vec::with_capacity(16);
    loop {
        let n = records_limit
            .saturating_sub(offset as u64)
            .min(RECORDS_PER_BATCH as u64) as i64;
        if n <= 0 {
            break;
        }
        let mut b = BatchBuilder::new(offset);
        for i in 0..n {
            key.clear();
            if kind == "updates" {
                let k = if next_key > 0 && rng.next_u64() % 10 < 3 {
                    rng.next_u64() % next_key
                } else {
                    next_key += 1;
                    next_key - 1
                };
                write!(key, "k{k:09}").map_err(e("key"))?;
            } else {
                let k = rng.next_u64() % key_space;
                if !seen[k as usize] {
                    seen[k as usize] = true;
                    distinct += 1;
                }
                write!(key, "{k:08}").map_err(e("key"))?;
            }
            b = b.record(T0 + offset + i, Some(&key), Some(&value));
        }
        let batch = b.build().map_err(e("build"))?;
        if written + batch.len() as u64 > bytes {
            break;
        }
        log.append(&batch).map_err(e("append"))?;
        written += batch.len() as u64;
        offset += n;
    }
    if kind == "updates" {
        distinct = next_key;
    }
    let records = offset as u64;
    log.roll(None).map_err(e("roll"))?;
    let last = BatchBuilder::new(offset)
        .record(T0 + offset, Some(b"active"), Some(&value))
        .build()
        .map_err(e("build"))?;
    log.append(&last).map_err(e("append"))?;
    let leo = offset + 1;
    log.close().map_err(e("close"))?;
    Ok(CleanInput {
        records,
        distinct_keys: distinct,
        log_end_offset: leo,
        dirty_bytes: written,
    })
}

/// What one [`clean_once`] did (the fields of its reply).
pub struct CleanRun {
    pub nanos: u128,
    pub end_offset: i64,
    pub messages_read: u64,
    pub bytes_read: u64,
    pub messages_written: u64,
    pub bytes_written: u64,
    /// Bytes the offset map's table held at the end, and at most at once.
    pub map_bytes: u64,
    pub map_peak_bytes: u64,
}

/// Opens the partition directory `dir` (a copy of an input; high watermark `leo`, a
/// clock at `now`), runs one `Log::clean` with a dedupe buffer of `map_bytes` (load
/// factor 0.9, Kafka's other cleaner defaults) at time `now`, timed, and closes the log.
/// `sabotage` flips one byte of the cleaned first segment's `.log` after the close.
pub fn clean_once(
    dir: &Path,
    leo: i64,
    now: i64,
    map_bytes: i64,
    sabotage: bool,
) -> Result<CleanRun, String> {
    let log = Log::options()
        .manual_high_watermark(leo)
        .clock(Arc::new(segment::time::MockTime::new(now)))
        .open(dir, clean_log_config())
        .map_err(e("open"))?;
    let cleaner = CleanerConfig {
        dedupe_buffer_size: map_bytes,
        dedupe_buffer_load_factor: 0.9,
        ..CleanerConfig::default()
    };
    let compaction = CompactionConfig::default();
    let start = Instant::now();
    let st = log.clean(&cleaner, &compaction, now).map_err(e("clean"))?;
    let nanos = start.elapsed().as_nanos();
    log.close().map_err(e("close"))?;
    if sabotage {
        let p = dir.join(format!("{:020}.log", 0));
        let mut b = std::fs::read(&p).map_err(e("sabotage read"))?;
        if let Some(x) = b.last_mut() {
            *x ^= 1;
        }
        std::fs::write(&p, b).map_err(e("sabotage write"))?;
    }
    Ok(CleanRun {
        nanos,
        end_offset: st.end_offset,
        messages_read: st.messages_read,
        bytes_read: st.bytes_read,
        messages_written: st.messages_written,
        bytes_written: st.bytes_written,
        map_bytes: st.offset_map_bytes,
        map_peak_bytes: st.offset_map_peak_bytes,
    })
}

/// The `.log` files of a partition directory, by name (so by base offset).
fn log_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(e("read_dir"))?
        .filter_map(Result::ok)
        .map(|d| d.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    v.sort();
    Ok(v)
}

/// The physical limit of a clean of `dir`: every `.log` file read once through a 1 MiB
/// buffer, the CRC-32C of every batch computed and checked (Kafka's v2 CRC: from the
/// attributes to the batch's end), and the first `retained` bytes read written to a new
/// file `out` (then `fsync`ed, as the clean flushes its segment), timed. Returns the
/// nanoseconds, the bytes read and the batches checked.
pub fn ceiling(dir: &Path, out: &Path, retained: u64) -> Result<(u128, u64, u64), String> {
    let files = log_files(dir)?;
    let start = Instant::now();
    let mut w = std::fs::File::create(out).map_err(e("create"))?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut read, mut batches, mut to_write) = (0u64, 0u64, retained);
    for f in &files {
        let mut file = std::fs::File::open(f).map_err(e("open"))?;
        let mut have = 0usize;
        loop {
            let n = file.read(&mut buf[have..]).map_err(e("read"))?;
            if n == 0 && have == 0 {
                break;
            }
            if n == 0 {
                return Err(format!("{}: a partial batch at the end", f.display()));
            }
            let w_n = (n as u64).min(to_write) as usize;
            w.write_all(&buf[have..have + w_n]).map_err(e("write"))?;
            to_write -= w_n as u64;
            read += n as u64;
            have += n;
            let mut at = 0usize;
            while have - at >= 12 {
                let len = u32::from_be_bytes(buf[at + 8..at + 12].try_into().unwrap_or_default());
                let size = 12 + len as usize;
                if size < 61 || size > buf.len() {
                    return Err(format!("{}: a batch of {size} bytes", f.display()));
                }
                if have - at < size {
                    break;
                }
                let b = &buf[at..at + size];
                let stored = u32::from_be_bytes(b[17..21].try_into().unwrap_or_default());
                if crc32c::crc32c(&b[21..]) != stored {
                    return Err(format!("{}: a CRC mismatch", f.display()));
                }
                batches += 1;
                at += size;
            }
            buf.copy_within(at..have, 0);
            have -= at;
        }
    }
    w.sync_all().map_err(e("fsync"))?;
    let nanos = start.elapsed().as_nanos();
    Ok((nanos, read, batches))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without Java: our clean of each small input keeps one record per distinct key, and
    /// the ceiling reads every batch of the input with a valid CRC.
    #[test]
    fn a_clean_keeps_the_latest_value_of_each_key() {
        let root = tempfile::tempdir().unwrap();
        for kind in ["updates", "small"] {
            let dir = root.path().join(format!("{kind}-0"));
            let input = generate_clean_input(5, &dir, kind, 2 << 20).unwrap();
            assert!(
                input.records > 5000 && input.distinct_keys < input.records,
                "{kind}: {} records, {} keys",
                input.records,
                input.distinct_keys
            );
            let out = root.path().join("ceiling.out");
            let (_, read, batches) = ceiling(&dir, &out, 1000).unwrap();
            assert!(read > input.dirty_bytes && batches as i64 > input.records as i64 / 50);
            assert_eq!(std::fs::metadata(&out).unwrap().len(), 1000);
            let r = clean_once(&dir, input.log_end_offset, T0 + 1, 128 << 20, false).unwrap();
            assert_eq!(r.end_offset, input.log_end_offset - 1);
            assert_eq!(r.messages_read, input.records);
            assert_eq!(r.messages_written, input.distinct_keys);
            assert!(r.map_bytes > 0 && r.map_peak_bytes >= r.map_bytes);
        }
    }
}
