//! An embedded "tiny queue": the `segment` crate's [`Log`] storing batches of a format that
//! has nothing to do with Kafka, plugged in through the [`BatchFormat`] seam.
//!
//! The example appends messages as a leader does ([`Log::append_as_leader`]: the log
//! assigns the offsets, whatever base offset the producer wrote; rolling small segments), "crashes" by tearing the last
//! batch of the active `.log` in half and dropping the log without closing it, reopens it
//! (recovery truncates the torn batch and rebuilds the indexes), and looks messages up by
//! offset and by timestamp. Every step asserts its result, so this is also a test.
//!
//! Its consumers' committed positions live in a second, compacted log of Kafka's record
//! format (as Kafka's `__consumer_offsets`): one keyed record per commit, a tombstone
//! when a consumer leaves, and a [`Cleaner`] thread that keeps the latest commit of each
//! consumer (the cleaner rewrites Kafka's record batches, so this log is not a `Tiny` one).
//!
//! Run: `cargo run -p segment --example tiny_queue`
//!
//! The batch format, [`tiny::Tiny`], is the workspace's one example format
//! (`examples/tiny/format.rs`, also the one of the `segment::format` docs and of
//! `xtask/lean-embedder`): its layout is at the top of that file.

use std::fs::OpenOptions;
use std::sync::Arc;

use segment::clean::{CleanerConfig, CompactionConfig, TopicPartition};
use segment::record::{batches_from, BatchBuilder, FileBatch};
use segment::{
    AppendOrigin, BatchFormat, Cleaner, CleanupPolicy, Clock, Log, LogConfig, LogOptions, MockTime,
};

#[path = "tiny/format.rs"]
mod tiny;
use tiny::Tiny;

/// Message `n` of the example and its timestamp (ms since the epoch): 10 ms apart.
fn message(n: i64) -> (i64, String) {
    (T0 + 10 * n, format!("order #{n}: {} widgets", n % 7 + 1))
}

const T0: i64 = 1_700_000_000_000;

/// Finds offset `offset` through the log: the read returns whole batches from the one
/// holding it.
fn lookup(log: &Log<Tiny>, offset: i64) -> Result<(i64, String), Box<dyn std::error::Error>> {
    let fetch = log.read(offset, 1)?; // at least one whole batch
    let batch = &fetch.records;
    let size = Tiny::peek_size(batch, 0)?.ok_or("empty read")?;
    for (o, ts, value) in Tiny::decode(&batch[..size], 0)? {
        if o == offset {
            return Ok((ts, String::from_utf8(value.to_vec())?));
        }
    }
    Err(format!("offset {offset} not in the batch returned").into())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("tiny-queue-0");
    let config = LogConfig {
        segment_bytes: 4096,       // roll every ~4 KiB of batches
        index_interval_bytes: 256, // a sparse index entry every ~256 bytes
        max_index_size: 64 * 1024,
        ..LogConfig::default()
    };
    let clock: Clock = Arc::new(MockTime::new(T0));

    // 1. Append 600 messages in batches of 1..=5 records. The producer does not know the
    //    offsets (it writes base offset 0); the log assigns them from its end.
    let log = LogOptions::<Tiny>::new()
        .clock(clock.clone())
        .open(&path, config.clone())?;
    let (mut next, mut batches, mut last_batch_size) = (0i64, 0, 0u64);
    while next < 600 {
        let n = (batches % 5 + 1).min(600 - next);
        let msgs: Vec<(i64, String)> = (next..next + n).map(message).collect();
        let records: Vec<(i64, &[u8])> = msgs.iter().map(|(t, m)| (*t, m.as_bytes())).collect();
        let info = log.append_as_leader(&Tiny::encode(0, &records), 0, AppendOrigin::Client)?;
        assert_eq!((info.first_offset, info.last_offset), (next, next + n - 1));
        last_batch_size = info.valid_bytes;
        next += n;
        batches += 1;
    }
    let segments = log.segments().number_of_segments();
    println!(
        "appended {next} messages in {batches} batches ({} bytes): {segments} segments, log end offset {}",
        log.size(),
        log.log_end_offset()
    );
    assert!(segments > 5, "small segment.bytes must roll");
    assert_eq!(log.log_end_offset(), 600);

    // 2. Crash: tear the last batch of the active .log in half, drop without closing.
    let active = log.segments().active_segment()?.log_path();
    let len = std::fs::metadata(&active)?.len();
    let torn_at = len - last_batch_size / 2;
    drop(log); // no close: no clean-shutdown marker, indexes left untrimmed
    OpenOptions::new()
        .write(true)
        .open(&active)?
        .set_len(torn_at)?;
    println!(
        "crash: cut {} from {len} to {torn_at} bytes (mid-batch)",
        active.file_name().unwrap().to_string_lossy()
    );

    // 3. Reopen: recovery validates every unflushed batch and truncates the torn one.
    let log = LogOptions::<Tiny>::new()
        .clock(clock.clone())
        .open(&path, config.clone())?;
    let truncated = log
        .stats()
        .bytes_truncated
        .load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "reopened: recovered {} segments, truncated {truncated} bytes of a torn batch, log end offset {}",
        log.stats().scanned_segments(),
        log.log_end_offset()
    );
    assert_eq!(truncated, last_batch_size - last_batch_size / 2);
    let lost = 600 - log.log_end_offset();
    assert!((1..=5).contains(&lost), "exactly the torn batch is lost");

    // 4. Look up by offset (offset index + scan) and by timestamp (time index + scan).
    for offset in [0, 1, 137, 420, log.log_end_offset() - 1] {
        let (ts, value) = lookup(&log, offset)?;
        println!("offset {offset:>3} -> ts {ts}, {value:?}");
        assert_eq!((ts, value), message(offset));
    }
    for (target, expect) in [(T0 + 2_345, 235), (T0 + 10 * 313, 313), (T0 - 1, 0)] {
        let found = log
            .offset_for_timestamp(target)?
            .expect("a message at or after");
        println!(
            "timestamp {target} -> offset {} (ts {})",
            found.offset, found.timestamp
        );
        assert_eq!((found.offset, found.timestamp), (expect, message(expect).0));
    }
    assert_eq!(log.offset_for_timestamp(T0 + 10 * 600)?, None);

    // 5. Append after recovery, close cleanly; the next open recovers nothing.
    let resume = log.log_end_offset();
    let (ts, m) = message(resume);
    let info = log.append_as_leader(
        &Tiny::encode(0, &[(ts, m.as_bytes())]),
        0,
        AppendOrigin::Client,
    )?;
    assert_eq!(info.first_offset, resume);
    log.close()?;
    let log = LogOptions::<Tiny>::new()
        .clock(clock.clone())
        .open(&path, config)?;
    assert_eq!(log.stats().scanned_segments(), 0);
    assert_eq!(lookup(&log, resume)?, message(resume));
    println!(
        "appended offset {resume} after recovery, closed and reopened cleanly ({} segments, nothing recovered)",
        log.segments().number_of_segments()
    );
    log.close()?;

    // 6. The consumers' positions: a compacted log cleaned by a Cleaner thread.
    consumer_positions(dir.path(), clock)?;
    Ok(())
}

/// Step 6: three consumers commit their positions 200 times each into a compacted log
/// (key: the consumer, value: its next offset), one leaves (a tombstone), and a cleaner
/// thread compacts the log while they commit; the latest commit of each is what remains.
fn consumer_positions(
    dir: &std::path::Path,
    clock: Clock,
) -> Result<(), Box<dyn std::error::Error>> {
    let config = LogConfig {
        compact: true,
        segment_bytes: 4096,
        file_delete_delay_ms: 0,
        ..LogConfig::default()
    };
    let offsets = Arc::new(
        LogOptions::new()
            .clock(clock)
            .open(dir.join("tiny-queue-offsets-0"), config)?,
    );
    let tp = TopicPartition::new("tiny-queue-offsets", 0);
    let mut cleaner = Cleaner::new(CleanerConfig {
        num_threads: 1,
        backoff_ms: 10,
        dedupe_buffer_size: 1 << 20,
        ..CleanerConfig::default()
    })?;
    cleaner.register(
        tp.clone(),
        offsets.clone(),
        CompactionConfig::default(),
        CleanupPolicy::Compact,
    )?;
    let commit =
        |consumer: &str, position: Option<i64>| -> Result<(), Box<dyn std::error::Error>> {
            let value = position.map(|p| p.to_string());
            let batch = BatchBuilder::new(0)
                .record(
                    T0,
                    Some(consumer.as_bytes()),
                    value.as_deref().map(str::as_bytes),
                )
                .build()?;
            offsets.append_as_leader(&batch, 0, AppendOrigin::Client)?;
            Ok(())
        };
    for round in 0..200i64 {
        for (i, consumer) in ["billing", "audit", "search"].iter().enumerate() {
            commit(consumer, Some(round * 3 + i as i64))?;
        }
    }
    commit("audit", None)?; // audit leaves: a tombstone
    offsets.roll(None)?; // the active segment is never cleaned
    cleaner.wake();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while cleaner.last_stats(&tp).map(|s| s.end_offset) != Some(offsets.log_end_offset()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the cleaner made no progress"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    cleaner.shutdown();
    let mut latest = std::collections::BTreeMap::new();
    let mut records = 0;
    let mut next = offsets.log_start_offset();
    while next < offsets.log_end_offset() {
        for batch in batches_from(&offsets.read(next, 1 << 20)?.records, 0) {
            let batch = FileBatch::at(batch?.as_bytes(), 0)?;
            for r in batch.records()? {
                let r = r?;
                let key = String::from_utf8(r.key().unwrap_or_default().to_vec())?;
                let value = r
                    .value()
                    .map(|v| String::from_utf8(v.to_vec()))
                    .transpose()?;
                latest.insert(key, value);
                records += 1;
                next = r.offset + 1;
            }
        }
    }
    println!(
        "consumer positions: {} commits compacted to {records} records: {latest:?}",
        offsets.log_end_offset()
    );
    assert_eq!(latest["billing"].as_deref(), Some("597"));
    assert_eq!(latest["search"].as_deref(), Some("599"));
    assert_eq!(
        latest["audit"], None,
        "the tombstone stays for delete.retention.ms"
    );
    assert_eq!(records, 3);
    cleaner.unregister(&tp)?;
    Ok(())
}
