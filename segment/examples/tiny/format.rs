// The tiny-queue batch format: the one example `BatchFormat` of the workspace, written
// once and shared by the `segment::format` module docs (a doctest `include!`s this file,
// hence plain comments here: an included file may not carry inner doc comments),
// `examples/tiny_queue.rs` and `xtask/lean-embedder` (both as a `#[path]` module). It is
// not an example of its own: Cargo builds `examples/*.rs`, not this folder.
//
// A `.log` file is a concatenation of batches, no file header, no padding. All integers
// are big-endian.
//
// | bytes   | type  | field                                                         |
// |---------|-------|---------------------------------------------------------------|
// | 0–7     | `i64` | base offset: offset of the first record                       |
// | 8–11    | `u32` | length: total size of the batch in bytes, this header included |
// | 12–15   | `u32` | CRC-32C (Castagnoli) of bytes [16, length)                   |
// | 16–23   | `i64` | max timestamp: largest record timestamp, ms since the epoch   |
// | 24–27   | `u32` | record count (≥ 1); record `i` has offset `base offset + i`   |
// | 28–     |       | records                                                       |
//
// Each record is `timestamp i64` (ms since the epoch), `value length u32`, then the value
// bytes. A batch is valid when its CRC matches and its records fill it exactly.
//
// The format tells the segment machinery its framing (12 bytes are enough to learn a
// batch's size), its header facts (`BatchInfo`), its checksum and a record-level
// timestamp search, and how to write a base offset into a batch
// (`BatchFormat::assign_base_offset`, for the leader append); offset and time indexes,
// rolling, recovery and lookups come for free.

use segment::format::{BatchFormat, BatchInfo, FormatError};
use segment::TimestampAndOffset;

/// The tiny-queue batch format (see the comment at the top of this file). A zero-sized marker type: every
/// method is an associated function, statically dispatched by `Log<Tiny>`.
pub struct Tiny;

/// Size of the batch header in bytes.
pub const HEADER: usize = 28;
/// Size of a record's own header (timestamp + value length) in bytes.
pub const RECORD_HEADER: usize = 12;

fn be_i64(b: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// A decoded record: `(offset, timestamp in ms since the epoch, value)`.
pub type Record<'a> = (i64, i64, &'a [u8]);

impl Tiny {
    /// Encodes one batch of `(timestamp ms, value)` records starting at `base_offset`.
    pub fn encode(base_offset: i64, records: &[(i64, &[u8])]) -> Vec<u8> {
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
    pub fn decode(batch: &[u8], position: u64) -> Result<Vec<Record<'_>>, FormatError> {
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

impl BatchFormat for Tiny {
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
