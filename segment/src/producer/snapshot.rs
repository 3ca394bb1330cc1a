//! Kafka's producer-state snapshot files (`<20-digit offset>.snapshot`) and the
//! leader-epoch checkpoint (`leader-epoch-checkpoint`): the byte formats and the files in a
//! partition directory.
//!
//! # Producer-state snapshot (version 1)
//!
//! The layout of Kafka's `ProducerSnapshot` message (written by
//! `ProducerStateManager.writeSnapshot`, read by `readSnapshot`); all integers big-endian:
//!
//! | bytes | field | type |
//! | ---: | --- | --- |
//! | 0..2 | version (always 1) | i16 |
//! | 2..6 | CRC-32C (Castagnoli) of bytes 6..end | u32 |
//! | 6..10 | number of producer entries *n* | i32 |
//! | 10 + 46 *i* .. | entry *i* (46 bytes, below) | |
//!
//! Each entry: producer id (i64), producer epoch (i16), last sequence (i32, −1 = none),
//! last offset (i64, −1 = no batch), offset delta (i32: last offset − first offset of the
//! last batch), timestamp (i64, ms since epoch, of the last batch or marker), coordinator
//! epoch (i32), current transaction first offset (i64, −1 = no ongoing transaction).
//!
//! A snapshot with no producers is the 10 bytes `00 01 | CRC of 00 00 00 00 | 00 00 00 00`.
//! The offset in the file name is the producer state's map end offset when it was taken:
//! the state is that of every batch below that offset.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bytemuck::{Pod, Zeroable};
use index_core::codec::{I16Be, I32Be, I64Be, U32Be};

use crate::error::{Result, SegmentError};
use crate::fs::FileSystem;
use crate::names::{self, PRODUCER_SNAPSHOT_FILE_SUFFIX};

/// The only producer snapshot version Kafka reads and writes.
pub const SNAPSHOT_VERSION: i16 = 1;
/// Bytes before the first entry (version, CRC, entry count).
pub const SNAPSHOT_HEADER_BYTES: usize = 10;
/// Bytes of one producer entry.
pub const SNAPSHOT_ENTRY_BYTES: usize = 46;
/// Offset of the first byte covered by the CRC (Kafka's `PRODUCER_ENTRIES_OFFSET`).
pub const CRC_START: usize = 6;
/// Name of the leader-epoch checkpoint file inside a partition directory.
pub const LEADER_EPOCH_CHECKPOINT_FILE: &str = "leader-epoch-checkpoint";

/// One producer entry of a snapshot file, field for field (Kafka's
/// `ProducerSnapshot.ProducerEntry`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SnapshotEntry {
    /// Producer id.
    pub producer_id: i64,
    /// Producer epoch.
    pub producer_epoch: i16,
    /// Last sequence of the last batch (−1 = none).
    pub last_sequence: i32,
    /// Last offset of the last batch (−1 = no batch retained).
    pub last_offset: i64,
    /// Last offset − first offset of the last batch.
    pub offset_delta: i32,
    /// Timestamp of the last batch or marker, ms since epoch.
    pub timestamp: i64,
    /// Epoch of the transaction coordinator that wrote the last marker.
    pub coordinator_epoch: i32,
    /// First offset of the ongoing transaction (−1 = none).
    pub current_txn_first_offset: i64,
}

/// Why a snapshot file was rejected (Kafka's `CorruptSnapshotException`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("corrupt producer snapshot: {0}")]
pub struct CorruptSnapshot(pub String);

/// The 10-byte header of a snapshot file exactly as stored (alignment 1).
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
struct RawSnapshotHeader {
    version: I16Be,
    crc: U32Be,
    count: I32Be,
}

/// One 46-byte producer entry exactly as stored (alignment 1).
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
struct RawSnapshotEntry {
    producer_id: I64Be,
    producer_epoch: I16Be,
    last_sequence: I32Be,
    last_offset: I64Be,
    offset_delta: I32Be,
    timestamp: I64Be,
    coordinator_epoch: I32Be,
    current_txn_first_offset: I64Be,
}

const _: () = assert!(std::mem::size_of::<RawSnapshotHeader>() == SNAPSHOT_HEADER_BYTES);
const _: () = assert!(std::mem::align_of::<RawSnapshotHeader>() == 1);
const _: () = assert!(std::mem::size_of::<RawSnapshotEntry>() == SNAPSHOT_ENTRY_BYTES);
const _: () = assert!(std::mem::align_of::<RawSnapshotEntry>() == 1);

impl From<&SnapshotEntry> for RawSnapshotEntry {
    fn from(e: &SnapshotEntry) -> Self {
        RawSnapshotEntry {
            producer_id: e.producer_id.into(),
            producer_epoch: e.producer_epoch.into(),
            last_sequence: e.last_sequence.into(),
            last_offset: e.last_offset.into(),
            offset_delta: e.offset_delta.into(),
            timestamp: e.timestamp.into(),
            coordinator_epoch: e.coordinator_epoch.into(),
            current_txn_first_offset: e.current_txn_first_offset.into(),
        }
    }
}

/// The header fields of a snapshot file, decoded but not checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotHeader {
    /// File version (Kafka reads and writes only [`SNAPSHOT_VERSION`]).
    pub version: i16,
    /// The stored CRC-32C of bytes [`CRC_START`]`..`.
    pub crc: u32,
    /// Declared number of producer entries (may be negative in a corrupt file).
    pub count: i32,
}

/// Decodes the first [`SNAPSHOT_HEADER_BYTES`] of a snapshot file, without checking them.
pub fn decode_snapshot_header(b: &[u8; SNAPSHOT_HEADER_BYTES]) -> SnapshotHeader {
    let h: RawSnapshotHeader = bytemuck::pod_read_unaligned(b);
    SnapshotHeader {
        version: h.version.get(),
        crc: h.crc.get(),
        count: h.count.get(),
    }
}

/// Decodes one [`SNAPSHOT_ENTRY_BYTES`]-byte producer entry.
pub fn decode_snapshot_entry(b: &[u8; SNAPSHOT_ENTRY_BYTES]) -> SnapshotEntry {
    let e: RawSnapshotEntry = bytemuck::pod_read_unaligned(b);
    SnapshotEntry {
        producer_id: e.producer_id.get(),
        producer_epoch: e.producer_epoch.get(),
        last_sequence: e.last_sequence.get(),
        last_offset: e.last_offset.get(),
        offset_delta: e.offset_delta.get(),
        timestamp: e.timestamp.get(),
        coordinator_epoch: e.coordinator_epoch.get(),
        current_txn_first_offset: e.current_txn_first_offset.get(),
    }
}

/// Encodes a version-1 snapshot holding `entries`, in the given order.
pub fn encode_snapshot(entries: &[SnapshotEntry]) -> Vec<u8> {
    let n = i32::try_from(entries.len()).unwrap_or(i32::MAX);
    let count = I32Be::new(n);
    let raw: Vec<RawSnapshotEntry> = entries
        .iter()
        .take(n as usize)
        .map(RawSnapshotEntry::from)
        .collect();
    let body: &[u8] = bytemuck::cast_slice(&raw);
    // The CRC covers bytes CRC_START.. : the count, then the entries.
    let crc = crc32c::crc32c_append(crc32c::crc32c(&count.to_bytes()), body);
    let header = RawSnapshotHeader {
        version: SNAPSHOT_VERSION.into(),
        crc: U32Be::new(crc),
        count,
    };
    let mut b = Vec::with_capacity(SNAPSHOT_HEADER_BYTES + body.len());
    b.extend_from_slice(bytemuck::bytes_of(&header));
    b.extend_from_slice(body);
    b
}

/// Decodes a snapshot. Stricter than Kafka in one point: bytes after the last declared
/// entry are rejected (Kafka ignores them when the CRC over them matches).
///
/// # Errors
/// [`CorruptSnapshot`] for a short file, an unknown version, a CRC mismatch, or an entry
/// count that does not match the length.
pub fn decode_snapshot(bytes: &[u8]) -> std::result::Result<Vec<SnapshotEntry>, CorruptSnapshot> {
    let Some((header, body)) = bytes.split_first_chunk::<SNAPSHOT_HEADER_BYTES>() else {
        return Err(CorruptSnapshot(format!(
            "{} bytes, shorter than the {SNAPSHOT_HEADER_BYTES}-byte header",
            bytes.len()
        )));
    };
    let SnapshotHeader {
        version,
        crc: stored,
        count,
    } = decode_snapshot_header(header);
    if version != SNAPSHOT_VERSION {
        return Err(CorruptSnapshot(format!("unknown file version {version}")));
    }
    let computed = crc32c::crc32c_append(crc32c::crc32c(&header[CRC_START..]), body);
    if stored != computed {
        return Err(CorruptSnapshot(format!(
            "CRC is no longer valid: stored {stored}, computed {computed}"
        )));
    }
    if count < 0 || body.len() != count as usize * SNAPSHOT_ENTRY_BYTES {
        return Err(CorruptSnapshot(format!(
            "{count} entries declared but {} entry bytes present",
            body.len()
        )));
    }
    // No remainder: body.len() is a multiple of SNAPSHOT_ENTRY_BYTES (checked above).
    let (raw, _) = body.as_chunks::<SNAPSHOT_ENTRY_BYTES>();
    Ok(raw.iter().map(decode_snapshot_entry).collect())
}

/// `<dir>/<20-digit offset>.snapshot` (Kafka's `LogFileUtils.producerSnapshotFile`).
pub fn producer_snapshot_file(dir: &Path, offset: i64) -> PathBuf {
    dir.join(format!(
        "{}{PRODUCER_SNAPSHOT_FILE_SUFFIX}",
        names::filename_prefix_from_offset(offset)
    ))
}

/// The snapshot files of `dir` by offset (Kafka's `listSnapshotFiles`): regular files (or
/// symlinks to them) named `<offset>.snapshot`; other names are ignored.
///
/// # Errors
/// [`SegmentError::Io`] if the directory cannot be listed.
pub fn list_snapshot_files(dir: &Path) -> Result<BTreeMap<i64, PathBuf>> {
    let mut out = BTreeMap::new();
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(SegmentError::io("list dir", dir, e)),
    };
    for e in rd {
        let e = e.map_err(|e| SegmentError::io("list dir", dir, e))?;
        let path = e.path();
        let name = names::file_name(&path);
        let Some(stem) = name.strip_suffix(PRODUCER_SNAPSHOT_FILE_SUFFIX) else {
            continue;
        };
        if stem.len() != 20 || !stem.bytes().all(|c| c.is_ascii_digit()) {
            continue;
        }
        // A regular file as the directory reports it (`d_type`) needs no `stat`; a
        // symlink (followed) or an entry of unknown type is asked of the file system.
        let regular = e.file_type().is_ok_and(|t| t.is_file())
            || std::fs::metadata(&path).is_ok_and(|m| m.is_file());
        if !regular {
            continue;
        }
        if let Ok(offset) = stem.parse::<i64>() {
            out.insert(offset, path);
        }
    }
    Ok(out)
}

/// Writes `bytes` to `path` through `fs`: a temporary file, fsynced, renamed over `path`,
/// directory fsynced (a crash leaves the old file or the new one, never a torn one; Kafka
/// writes in place).
///
/// # Errors
/// [`SegmentError::Io`].
pub fn write_file_atomically(fs: &dyn FileSystem, path: &Path, bytes: &[u8]) -> Result<()> {
    crate::fs::write_atomically_with(fs, path, bytes)
}

/// Encodes a leader-epoch checkpoint (Kafka's `LeaderEpochCheckpointFile`): the version
/// line `0`, the entry count, then one `epoch start_offset` line per entry.
pub fn encode_leader_epoch_checkpoint(entries: &[(i32, i64)]) -> String {
    let mut s = format!("0\n{}\n", entries.len());
    for (epoch, offset) in entries {
        s.push_str(&format!("{epoch} {offset}\n"));
    }
    s
}

/// Parses a leader-epoch checkpoint into its entries, in file order. An empty file is an
/// empty cache (Kafka creates the file empty). Entries are not required to be in order:
/// Kafka's reader accepts any order and its load resolves it by `assign`
/// ([`LeaderEpochCache::from_entries`](crate::LeaderEpochCache::from_entries),
/// `docs/kafka-behaviour.md#leader-epoch-assign`).
///
/// # Errors
/// A description of what is malformed: version other than 0, a count that does not match
/// the lines, a malformed line, or a negative epoch or offset.
pub fn decode_leader_epoch_checkpoint(
    bytes: &[u8],
) -> std::result::Result<Vec<(i32, i64)>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("0") {
        return Err("expected version 0".into());
    }
    let count: usize = lines
        .next()
        .and_then(|l| l.trim().parse().ok())
        .ok_or("expected an entry count")?;
    let mut out: Vec<(i32, i64)> = Vec::new();
    for _ in 0..count {
        let line = lines.next().ok_or("fewer entries than the count")?;
        let mut parts = line.split_whitespace();
        let (Some(e), Some(o), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("malformed line {line:?}"));
        };
        let epoch: i32 = e.parse().map_err(|_| format!("malformed line {line:?}"))?;
        let offset: i64 = o.parse().map_err(|_| format!("malformed line {line:?}"))?;
        if epoch < 0 || offset < 0 {
            return Err(format!("negative value in line {line:?}"));
        }
        out.push((epoch, offset));
    }
    if lines.any(|l| !l.trim().is_empty()) {
        return Err("more entries than the count".into());
    }
    Ok(out)
}

/// The entry of `docs/format.md`'s producer snapshot example, for the unit tests of the
/// snapshot codec and of its dump.
#[cfg(test)]
pub(crate) fn example_entry() -> SnapshotEntry {
    SnapshotEntry {
        producer_id: 3,
        producer_epoch: 0,
        last_sequence: 25,
        last_offset: 25,
        offset_delta: 5,
        timestamp: 1_713_533_745_000,
        coordinator_epoch: -1,
        current_txn_first_offset: -1,
    }
}

#[cfg(test)]
// Tests may unwrap, index and panic: a panic is how a test reports a failure.
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]
mod tests {
    use super::*;

    #[test]
    fn empty_snapshot_is_ten_bytes() {
        let b = encode_snapshot(&[]);
        assert_eq!(b.len(), 10);
        assert_eq!(decode_snapshot(&b).unwrap(), vec![]);
    }

    #[test]
    fn roundtrip_and_corruption() {
        let e = SnapshotEntry {
            producer_id: 7,
            producer_epoch: 2,
            last_sequence: 9,
            last_offset: 100,
            offset_delta: 4,
            timestamp: 1_700_000_000_000,
            coordinator_epoch: 3,
            current_txn_first_offset: 96,
        };
        let b = encode_snapshot(&[e, e]);
        assert_eq!(b.len(), 10 + 2 * 46);
        assert_eq!(decode_snapshot(&b).unwrap(), vec![e, e]);
        for cut in 0..b.len() {
            assert!(decode_snapshot(&b[..cut]).is_err(), "cut at {cut}");
        }
        let mut flipped = b.clone();
        flipped[20] ^= 1;
        assert!(decode_snapshot(&flipped).is_err());
    }

    #[test]
    fn layout_matches_the_format_docs() {
        // docs/format.md: the empty snapshot, and a real broker's entry.
        let empty = [0x00, 0x01, 0x48, 0x67, 0x4b, 0xc7, 0, 0, 0, 0];
        assert_eq!(encode_snapshot(&[]), empty);
        assert_eq!(
            decode_snapshot_header(&empty),
            SnapshotHeader {
                version: 1,
                crc: 0x4867_4bc7,
                count: 0
            }
        );
        let raw: [u8; SNAPSHOT_ENTRY_BYTES] = [
            0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0x19, 0, 0, 0, 0, 0, 0, 0, 0x19, 0, 0, 0, 5, 0,
            0, 0x01, 0x8e, 0xf6, 0x91, 0xf7, 0x68, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0xff,
        ];
        let e = example_entry();
        assert_eq!(decode_snapshot_entry(&raw), e);
        assert_eq!(encode_snapshot(&[e])[SNAPSHOT_HEADER_BYTES..], raw);
    }

    #[test]
    fn epoch_checkpoint_roundtrip() {
        let s = encode_leader_epoch_checkpoint(&[(0, 0), (3, 10)]);
        assert_eq!(s, "0\n2\n0 0\n3 10\n");
        assert_eq!(
            decode_leader_epoch_checkpoint(s.as_bytes()).unwrap(),
            vec![(0, 0), (3, 10)]
        );
        assert!(decode_leader_epoch_checkpoint(b"0\n2\n0 0\n").is_err());
        assert!(decode_leader_epoch_checkpoint(b"1\n0\n").is_err());
        // Out of order is not malformed: the load resolves it (LeaderEpochCache::from_entries).
        assert_eq!(
            decode_leader_epoch_checkpoint(b"0\n2\n3 0\n1 5\n").unwrap(),
            vec![(3, 0), (1, 5)]
        );
        assert!(decode_leader_epoch_checkpoint(b"0\n1\n-1 5\n").is_err());
        assert_eq!(decode_leader_epoch_checkpoint(b"").unwrap(), vec![]);
    }
}
