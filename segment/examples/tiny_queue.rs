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
//! # The tiny-queue batch format
//!
//! A `.log` file is a concatenation of batches, no file header, no padding. All integers
//! are big-endian.
//!
//! | bytes   | type  | field                                                         |
//! |---------|-------|---------------------------------------------------------------|
//! | 0–7     | `i64` | base offset: offset of the first record                       |
//! | 8–11    | `u32` | length: total size of the batch in bytes, this header included |
//! | 12–15   | `u32` | CRC-32C (Castagnoli) of bytes [16, length)                   |
//! | 16–23   | `i64` | max timestamp: largest record timestamp, ms since the epoch   |
//! | 24–27   | `u32` | record count (≥ 1); record `i` has offset `base offset + i`   |
//! | 28–     |       | records                                                       |
//!
//! Each record is `timestamp i64` (ms since the epoch), `value length u32`, then the value
//! bytes. A batch is valid when its CRC matches and its records fill it exactly.
//!
//! The format tells the segment machinery its framing (12 bytes are enough to learn a
//! batch's size), its header facts ([`BatchInfo`]), its checksum and a record-level
//! timestamp search, and how to write a base offset into a batch
//! ([`BatchFormat::assign_base_offset`], for the leader append); offset and time indexes,
//! rolling, recovery and lookups come for free.

use std::fs::OpenOptions;
use std::sync::Arc;

use segment::format::FormatError;
use segment::{
    AppendOrigin, BatchFormat, BatchInfo, Clock, Log, LogConfig, LogOptions, MockTime,
    TimestampAndOffset,
};

/// The tiny-queue batch format (see the module docs). A zero-sized marker type: every
/// method is an associated function, statically dispatched by `Log<TinyFormat>`.
struct TinyFormat;

/// Size of the batch header in bytes.
const HEADER: usize = 28;
/// Size of a record's own header (timestamp + value length) in bytes.
const RECORD_HEADER: usize = 12;

fn be_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// A decoded record: `(offset, timestamp in ms since the epoch, value)`.
type Record<'a> = (i64, i64, &'a [u8]);

impl TinyFormat {
    /// Encodes one batch of `(timestamp ms, value)` records starting at `base_offset`.
    fn encode(base_offset: i64, records: &[(i64, &[u8])]) -> Vec<u8> {
        assert!(!records.is_empty(), "a batch holds at least one record");
        let body: usize = records.iter().map(|(_, v)| RECORD_HEADER + v.len()).sum();
        let len = HEADER + body;
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&base_offset.to_be_bytes());
        out.extend_from_slice(&u32::try_from(len).expect("batch < 4 GiB").to_be_bytes());
        out.extend_from_slice(&[0; 4]); // CRC, filled in below
        let max_ts = records.iter().map(|(t, _)| *t).max().unwrap_or(-1);
        out.extend_from_slice(&max_ts.to_be_bytes());
        out.extend_from_slice(&(records.len() as u32).to_be_bytes());
        for (ts, value) in records {
            out.extend_from_slice(&ts.to_be_bytes());
            out.extend_from_slice(&(value.len() as u32).to_be_bytes());
            out.extend_from_slice(value);
        }
        let crc = crc32c::crc32c(&out[16..]);
        out[12..16].copy_from_slice(&crc.to_be_bytes());
        out
    }

    /// The records of a complete batch.
    fn decode(batch: &[u8], position: u64) -> Result<Vec<Record<'_>>, FormatError> {
        let info = Self::parse_header(batch, position)?;
        let count = be_u32(batch, 24) as usize;
        let mut out = Vec::with_capacity(count);
        let mut at = HEADER;
        let end = info.size_in_bytes;
        for i in 0..count {
            let corrupt = || FormatError::Corrupt {
                position,
                reason: format!("record {i} runs past the batch end ({end} bytes)"),
            };
            if at + RECORD_HEADER > end {
                return Err(corrupt());
            }
            let ts = be_i64(batch, at);
            let len = be_u32(batch, at + 8) as usize;
            let value = batch
                .get(at + RECORD_HEADER..at + RECORD_HEADER + len)
                .filter(|_| at + RECORD_HEADER + len <= end)
                .ok_or_else(corrupt)?;
            out.push((info.base_offset + i as i64, ts, value));
            at += RECORD_HEADER + len;
        }
        if at != end {
            return Err(FormatError::Corrupt {
                position,
                reason: format!("{} bytes after the last record", end - at),
            });
        }
        Ok(out)
    }
}

impl BatchFormat for TinyFormat {
    const NAME: &'static str = "tiny-queue";
    /// Base offset + length: enough to learn the batch size.
    const HEADER_PEEK_BYTES: usize = 12;
    const MAX_HEADER_BYTES: usize = HEADER;

    fn peek_size(header: &[u8], position: u64) -> Result<Option<usize>, FormatError> {
        if header.len() < Self::HEADER_PEEK_BYTES {
            return Ok(None); // clean end, or a torn tail shorter than a size field
        }
        let len = be_u32(header, 8) as usize;
        if len < HEADER + RECORD_HEADER {
            // Also what a zero-filled (preallocated) tail looks like.
            return Err(FormatError::Corrupt {
                position,
                reason: format!("batch length {len} is below the minimum of one record"),
            });
        }
        Ok(Some(len))
    }

    fn parse_header(bytes: &[u8], position: u64) -> Result<BatchInfo, FormatError> {
        let Some(size) = Self::peek_size(bytes, position)? else {
            return Err(FormatError::Corrupt {
                position,
                reason: "fewer than 12 bytes".into(),
            });
        };
        if bytes.len() < HEADER {
            return Err(FormatError::Corrupt {
                position,
                reason: format!("{} bytes, the header needs {HEADER}", bytes.len()),
            });
        }
        let base_offset = be_i64(bytes, 0);
        let count = be_u32(bytes, 24);
        if count == 0 {
            return Err(FormatError::Corrupt {
                position,
                reason: "a batch without records".into(),
            });
        }
        let last_offset = base_offset
            .checked_add(i64::from(count) - 1)
            .ok_or_else(|| FormatError::Corrupt {
                position,
                reason: "last offset overflows".into(),
            })?;
        Ok(BatchInfo {
            position,
            base_offset,
            last_offset,
            max_timestamp: be_i64(bytes, 16),
            // Batch granularity, as Kafka: the time index points at the batch's last offset.
            offset_of_max_timestamp: last_offset,
            size_in_bytes: size,
            is_control: false,
            is_transactional: false,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            last_sequence: -1,
            partition_leader_epoch: -1,
            // Our own format version. Kafka's producer-state and leader-epoch tracking only
            // applies to formats that set `KAFKA_PRODUCER_STATE` (this one does not).
            magic: 1,
        })
    }

    fn validate(batch: &[u8], position: u64) -> Result<(), FormatError> {
        let info = Self::parse_header(batch, position)?;
        let batch = batch
            .get(..info.size_in_bytes)
            .ok_or(FormatError::Corrupt {
                position,
                reason: "incomplete batch".into(),
            })?;
        let (stored, computed) = (be_u32(batch, 12), crc32c::crc32c(&batch[16..]));
        if stored != computed {
            return Err(FormatError::Corrupt {
                position,
                reason: format!("CRC {stored:#010x} does not match computed {computed:#010x}"),
            });
        }
        Self::decode(batch, position).map(|_| ())
    }

    /// The base offset lies outside the CRC (bytes 0–7): the leader writes it in place.
    fn assign_base_offset(
        batch: &mut [u8],
        position: u64,
        base_offset: i64,
    ) -> Result<(), FormatError> {
        let field = batch.get_mut(0..8).ok_or(FormatError::Corrupt {
            position,
            reason: "batch shorter than its base offset".into(),
        })?;
        field.copy_from_slice(&base_offset.to_be_bytes());
        Ok(())
    }

    /// Record-level: the first record with `timestamp ≥ target` and `offset ≥ starting`.
    fn search_timestamp(
        batch: &[u8],
        position: u64,
        target_timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>, FormatError> {
        Ok(Self::decode(batch, position)?
            .into_iter()
            .find(|&(o, t, _)| t >= target_timestamp && o >= starting_offset)
            .map(|(offset, timestamp, _)| TimestampAndOffset {
                timestamp,
                offset,
                leader_epoch: None,
            }))
    }
}

/// Message `n` of the example and its timestamp (ms since the epoch): 10 ms apart.
fn message(n: i64) -> (i64, String) {
    (T0 + 10 * n, format!("order #{n}: {} widgets", n % 7 + 1))
}

const T0: i64 = 1_700_000_000_000;

/// Finds offset `offset` through the log: the read returns whole batches from the one
/// holding it.
fn lookup(log: &Log<TinyFormat>, offset: i64) -> Result<(i64, String), Box<dyn std::error::Error>> {
    let fetch = log.read(offset, 1)?; // at least one whole batch
    let batch = &fetch.records;
    let size = TinyFormat::peek_size(batch, 0)?.ok_or("empty read")?;
    for (o, ts, value) in TinyFormat::decode(&batch[..size], 0)? {
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
    let log = LogOptions::<TinyFormat>::new()
        .clock(clock.clone())
        .open(&path, config.clone())?;
    let (mut next, mut batches, mut last_batch_size) = (0i64, 0, 0u64);
    while next < 600 {
        let n = (batches % 5 + 1).min(600 - next);
        let msgs: Vec<(i64, String)> = (next..next + n).map(message).collect();
        let records: Vec<(i64, &[u8])> = msgs.iter().map(|(t, m)| (*t, m.as_bytes())).collect();
        let info =
            log.append_as_leader(&TinyFormat::encode(0, &records), 0, AppendOrigin::Client)?;
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
    let log = LogOptions::<TinyFormat>::new()
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
        &TinyFormat::encode(0, &[(ts, m.as_bytes())]),
        0,
        AppendOrigin::Client,
    )?;
    assert_eq!(info.first_offset, resume);
    log.close()?;
    let log = LogOptions::<TinyFormat>::new()
        .clock(clock)
        .open(&path, config)?;
    assert_eq!(log.stats().scanned_segments(), 0);
    assert_eq!(lookup(&log, resume)?, message(resume));
    println!(
        "appended offset {resume} after recovery, closed and reopened cleanly ({} segments, nothing recovered)",
        log.segments().number_of_segments()
    );
    log.close()?;
    Ok(())
}
