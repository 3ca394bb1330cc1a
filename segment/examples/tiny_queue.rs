//! An embedded "tiny queue": the `segment` crate's [`Log`] storing batches of a format that
//! has nothing to do with Kafka, plugged in through the [`BatchFormat`] seam.
//!
//! The example appends messages as a leader does ([`Log::append_as_leader`]: the log
//! assigns the offsets, whatever base offset the producer wrote; rolling small segments), "crashes" by tearing the last
//! batch of the active `.log` in half and dropping the log without closing it, reopens it
//! (recovery truncates the torn batch and rebuilds the indexes), and looks messages up by
//! offset and by timestamp. Every step asserts its result, so this is also a test.
//!
//! Run: `cargo run -p segment --example tiny_queue`
//!
//! The batch format, [`tiny::Tiny`], is the workspace's one example format
//! (`examples/tiny/format.rs`, also the one of the `segment::format` docs and of
//! `xtask/lean-embedder`): its layout is at the top of that file.

use std::fs::OpenOptions;
use std::sync::Arc;

use segment::{AppendOrigin, BatchFormat, Clock, Log, LogConfig, LogOptions, MockTime};

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
    let log = LogOptions::<Tiny>::new().clock(clock).open(&path, config)?;
    assert_eq!(log.stats().scanned_segments(), 0);
    assert_eq!(lookup(&log, resume)?, message(resume));
    println!(
        "appended offset {resume} after recovery, closed and reopened cleanly ({} segments, nothing recovered)",
        log.segments().number_of_segments()
    );
    log.close()?;
    Ok(())
}
