//! Reads a real Apache Kafka partition directory through the public API: opens it as a
//! [`Log`], prints its segments and offsets, a few batches, an offset lookup and a
//! timestamp lookup, and checks both lookups against a brute-force scan of every record.
//!
//! Run: `cargo run -p segment --example read_kafka_partition [PARTITION_DIR]`
//!
//! The default directory is the first broker-written partition in the repository
//! (`segment/tests/data/kafka-*/`), else the partition the repository's own writer
//! generated (`segment/tests/data/generated/orders-0`). The directory is copied to a
//! temporary directory first: opening a `Log` writes (a recovery-point checkpoint, rebuilt
//! indexes, the clean-shutdown marker on close), and the source is left untouched.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use segment::record::{self, FileBatch};
use segment::{Log, LogConfig};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn default_dir() -> PathBuf {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    // The first directory (depth first, by name) that holds a `.log` file, below a
    // `kafka-*` set and not among the copies taken after a kill -9 (`crash/`).
    fn first_partition(dir: &Path) -> Option<PathBuf> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .collect();
        entries.sort();
        if entries
            .iter()
            .any(|p| p.is_file() && p.extension().is_some_and(|e| e == "log"))
        {
            return Some(dir.to_path_buf());
        }
        entries
            .into_iter()
            .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n != "crash"))
            .find_map(|p| first_partition(&p))
    }
    let mut sets: Vec<PathBuf> = std::fs::read_dir(&data)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    sets.sort();
    let broker_written = sets
        .iter()
        .filter(|s| {
            s.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("kafka-"))
        })
        .find_map(|set| first_partition(set));
    broker_written.unwrap_or_else(|| data.join("generated/orders-0"))
}

/// Copies the regular files of `src` into a new directory under `tmp`, writable.
fn copy_partition(src: &Path, tmp: &Path) -> Res<(PathBuf, usize, u64)> {
    let name = src.file_name().ok_or("the partition path has no name")?;
    let dst = tmp.join(name);
    std::fs::create_dir(&dst)?;
    let (mut files, mut bytes) = (0, 0);
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        if !entry.file_type()?.is_file() {
            continue;
        }
        let to = dst.join(entry.file_name());
        bytes += std::fs::copy(entry.path(), &to)?;
        // `fs::copy` keeps the source's read-only mode; the log must be able to write.
        let mut perms = std::fs::metadata(&to)?.permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&to, perms)?;
        files += 1;
    }
    Ok((dst, files, bytes))
}

fn describe(b: &FileBatch<'_>) -> String {
    let codec = b
        .compression()
        .map_or_else(|e| e.to_string(), |c| format!("{c:?}"));
    format!(
        "pos {:>6}  offsets {:>4}..={:<4}  magic {}  records {:>3}  max ts {:>13}  {}{}codec {codec}  crc {}",
        b.position(),
        b.base_offset(),
        b.last_offset(),
        b.magic(),
        b.records_count().map_or("?".into(), |n| n.to_string()),
        b.max_timestamp(),
        if b.is_control() { "control " } else { "" },
        if b.is_transactional() { "txn " } else { "" },
        if b.is_valid() { "ok" } else { "BAD" },
    )
}

fn main() -> Res<()> {
    let src = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(default_dir);
    if !src.is_dir() {
        return Err(format!("{} is not a directory", src.display()).into());
    }
    let tmp = tempfile::tempdir()?;
    let (dir, files, bytes) = copy_partition(&src, tmp.path())?;
    println!(
        "copied {files} files ({bytes} bytes) from {} to {}",
        src.display(),
        dir.display()
    );

    // Kafka keeps `.kafka_cleanshutdown` in the parent directory, so a copied partition
    // has no marker here: the log recovers every segment (validates each batch's CRC and
    // rebuilds the indexes), which also proves the broker's data is intact.
    let log = Log::open(&dir, LogConfig::default())?; // Log<KafkaBatchFormat>
    let stats = log.stats();
    println!(
        "opened: {} segments, recovered {}, {} bytes truncated, {} indexes rebuilt",
        log.segments().number_of_segments(),
        stats.scanned_segments(),
        stats.bytes_truncated.load(Ordering::Relaxed),
        stats.indexes_rebuilt.load(Ordering::Relaxed),
    );
    assert_eq!(stats.bytes_truncated.load(Ordering::Relaxed), 0);
    println!(
        "log start offset {}, log end offset {}, {} bytes",
        log.log_start_offset(),
        log.log_end_offset(),
        log.size()
    );
    for s in log.segments().values() {
        println!(
            "  segment {:>20}: .log {:>7} bytes, .index {:>3} entries, .timeindex {:>3} entries, next offset {}, largest timestamp {}",
            s.base_offset(),
            s.size(),
            s.offset_index()?.entries(),
            s.time_index()?.entries(),
            s.read_next_offset()?,
            s.largest_timestamp()?,
        );
    }

    // A few batches, read through the log from the start.
    let fetch = log.read(log.log_start_offset(), 16 * 1024)?;
    println!(
        "first batches (read of {} bytes at offset {}):",
        fetch.records.len(),
        log.log_start_offset()
    );
    for b in record::batches_from(&fetch.records, 0).take(5) {
        let b = b?;
        print!("  {}", describe(&b));
        if let Some(Ok(r)) = b.records()?.next() {
            print!(
                "  first record: offset {} key {} B value {} B",
                r.offset,
                r.key().map_or(0, <[u8]>::len),
                r.value().map_or(0, <[u8]>::len)
            );
        }
        println!();
    }

    // Brute force: every record of every segment, in offset order.
    let mut all = Vec::new(); // (offset, timestamp)
    for s in log.segments().values() {
        let image = record::read_log_file(s.log_path())?;
        for b in record::batches_from(&image, 0) {
            for r in b?.records()? {
                let r = r?;
                all.push((r.offset, r.timestamp));
            }
        }
    }
    println!("{} records in all", all.len());

    // Offset lookup (offset index, then a scan): the batch holding the middle offset.
    let target = (log.log_start_offset() + log.log_end_offset()) / 2;
    let fetch = log.read(target, 1)?;
    let m = fetch.fetch_offset_metadata;
    let batch = record::batches_from(&fetch.records, 0)
        .next()
        .ok_or("empty read")??;
    println!(
        "offset {target}: segment {}, position {}, batch {}..={} ({} bytes)",
        m.segment_base_offset,
        m.relative_position_in_segment,
        batch.base_offset(),
        batch.last_offset(),
        batch.size_in_bytes()
    );
    // The first batch whose last offset is >= target (compaction may leave gaps).
    assert!(batch.last_offset() >= target);
    let first_at_or_after = all.iter().find(|(o, _)| *o >= target).unwrap().0;
    assert!(batch
        .records()?
        .any(|r| r.is_ok_and(|r| r.offset == first_at_or_after)));

    // Timestamp lookup (time index, offset index, then a record-level scan).
    let (_, mid_ts) = all[all.len() / 2];
    for target_ts in [mid_ts, mid_ts + 1, 0] {
        let found = log.offset_for_timestamp(target_ts)?;
        let expected = all
            .iter()
            .find(|(o, t)| *t >= target_ts && *o >= log.log_start_offset());
        match found {
            Some(f) => println!(
                "timestamp {target_ts}: offset {} (record timestamp {}, leader epoch {:?})",
                f.offset, f.timestamp, f.leader_epoch
            ),
            None => println!("timestamp {target_ts}: no record at or after it"),
        }
        assert_eq!(found.map(|f| (f.offset, f.timestamp)), expected.copied());
    }
    println!("lookups agree with a full scan of every record");
    log.close()?;
    Ok(())
}
