//! A storage engine that embeds `segment` with its own batch format and
//! `default-features = false`: no Kafka codecs, no operator CLI. `cargo xtask ci` builds
//! it, runs it, and checks that its dependency tree stays small (at most 30 crates) and
//! free of C code (no `cc`, no `*-sys` crate).
//!
//! The format: `[u32 size][u32 checksum][i64 base offset][u32 count][i64 max timestamp]`,
//! then `count` records of `[u32 length][payload]`, all big-endian; `size` counts the whole
//! batch. The checksum is a toy (wrapping sum of bytes 8..size): an embedder brings its own.

use std::sync::Arc;

use segment::format::{scan, BatchFormat, BatchInfo, FormatError};
use segment::{Clock, LogConfig, LogOptions, MockTime, TimestampAndOffset};

const HEADER: usize = 28;

struct Toy;

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn i64_at(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn checksum(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(0u32, |s, &b| s.wrapping_mul(31).wrapping_add(u32::from(b)))
}
fn corrupt(position: u64, reason: &str) -> FormatError {
    FormatError::Corrupt {
        position,
        reason: reason.into(),
    }
}

impl Toy {
    fn encode(base_offset: i64, timestamp: i64, records: &[&[u8]]) -> Vec<u8> {
        let mut b = vec![0; HEADER];
        b[8..16].copy_from_slice(&base_offset.to_be_bytes());
        b[16..20].copy_from_slice(&(records.len() as u32).to_be_bytes());
        b[20..28].copy_from_slice(&timestamp.to_be_bytes());
        for r in records {
            b.extend_from_slice(&(r.len() as u32).to_be_bytes());
            b.extend_from_slice(r);
        }
        let size = b.len() as u32;
        b[0..4].copy_from_slice(&size.to_be_bytes());
        let sum = checksum(&b[8..]);
        b[4..8].copy_from_slice(&sum.to_be_bytes());
        b
    }
}

impl BatchFormat for Toy {
    const NAME: &'static str = "toy";
    const HEADER_PEEK_BYTES: usize = 4;
    const MAX_HEADER_BYTES: usize = HEADER;

    fn peek_size(header: &[u8], position: u64) -> Result<Option<usize>, FormatError> {
        if header.len() < 4 {
            return Ok(None);
        }
        match u32_at(header, 0) as usize {
            size if size < HEADER => Err(corrupt(position, "size below the header size")),
            size => Ok(Some(size)),
        }
    }

    fn parse_header(bytes: &[u8], position: u64) -> Result<BatchInfo, FormatError> {
        let size = Self::peek_size(bytes, position)?.unwrap_or(0);
        if bytes.len() < HEADER || size < HEADER {
            return Err(corrupt(position, "truncated header"));
        }
        let count = i64::from(u32_at(bytes, 16));
        if count == 0 {
            return Err(corrupt(position, "empty batch"));
        }
        let base_offset = i64_at(bytes, 8);
        let last_offset = base_offset
            .checked_add(count - 1)
            .ok_or_else(|| corrupt(position, "last offset overflows"))?;
        Ok(BatchInfo {
            position,
            base_offset,
            last_offset,
            max_timestamp: i64_at(bytes, 20),
            offset_of_max_timestamp: last_offset,
            size_in_bytes: size,
            is_control: false,
            is_transactional: false,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            last_sequence: -1,
            partition_leader_epoch: -1,
            magic: 1,
        })
    }

    fn validate(batch: &[u8], position: u64) -> Result<(), FormatError> {
        let info = Self::parse_header(batch, position)?;
        let batch = batch
            .get(..info.size_in_bytes)
            .ok_or_else(|| corrupt(position, "incomplete batch"))?;
        if u32_at(batch, 4) != checksum(&batch[8..]) {
            return Err(corrupt(position, "checksum mismatch"));
        }
        Ok(())
    }

    fn search_timestamp(
        batch: &[u8],
        position: u64,
        target_timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>, FormatError> {
        let info = Self::parse_header(batch, position)?;
        Ok(
            (info.max_timestamp >= target_timestamp).then(|| TimestampAndOffset {
                timestamp: info.max_timestamp,
                offset: info.base_offset.max(starting_offset),
                leader_epoch: None,
            }),
        )
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A scratch directory by hand: this crate depends on nothing but `segment`.
    let dir = std::env::temp_dir().join(format!("lean-embedder-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = LogConfig {
        segment_bytes: 1024,
        ..LogConfig::default()
    };
    let clock: Clock = Arc::new(MockTime::new(1_700_000_000_000));
    let log = LogOptions::<Toy>::new()
        .clock(clock.clone())
        .open(&dir, config.clone())?;
    for i in 0..100i64 {
        log.append(&Toy::encode(i * 2, 1_700_000_000_000 + i, &[b"a", b"bc"]))?;
    }
    assert_eq!(log.log_end_offset(), 200);
    assert!(log.segments().number_of_segments() > 1);
    let fetch = log.read(77, 1)?;
    let first = scan::<Toy>(&fetch.records, 0)
        .next()
        .ok_or("empty read")??;
    assert_eq!((first.info.base_offset, first.info.last_offset), (76, 77));
    log.close()?;
    let log = LogOptions::<Toy>::new().clock(clock).open(&dir, config)?;
    assert_eq!(log.log_end_offset(), 200);
    log.close()?;
    std::fs::remove_dir_all(&dir)?;
    println!("lean-embedder: 100 batches appended, read back and reopened");
    Ok(())
}
