//! Compression codecs of Kafka record batches and their exact stream framings.
//!
//! | id | codec | framing Kafka uses on disk | crate |
//! |---|---|---|---|
//! | 0 | none | – | – |
//! | 1 | gzip | RFC 1952 gzip stream (possibly several members) | `flate2` |
//! | 2 | snappy | xerial `SnappyOutputStream` framing: 16-byte header `"\x82SNAPPY\0"` + version + compatible version (big-endian `i32`s), then blocks of `[i32 length][raw snappy block]`; plain raw snappy (no header) is also accepted when reading, as xerial's reader does | `snap` |
//! | 3 | lz4 | LZ4 frame format (magic `04 22 4d 18`) | `lz4_flex` |
//! | 4 | zstd | zstd frame | `zstd` |
//!
//! Decompression is bounded by [`MAX_DECOMPRESSED_BATCH_BYTES`]; exceeding it is an error.

use std::io::{self, Read, Write};

use index_core::codec::I32Be;

/// Upper bound on the decompressed size of one batch's record stream, in bytes (1 GiB).
///
/// Kafka has no such limit; it exists so that hostile input cannot make the decoder
/// allocate unbounded memory. Real batches are far smaller (`max.message.bytes`
/// defaults to ~1 MiB of *compressed* data).
pub const MAX_DECOMPRESSED_BATCH_BYTES: usize = 1 << 30;

/// The 8-byte magic of xerial's snappy stream framing, as written by Kafka's Java client.
pub const XERIAL_SNAPPY_MAGIC: [u8; 8] = *b"\x82SNAPPY\0";

/// Block size used by [`compress`] for xerial-framed snappy (xerial's default, 32 KiB).
const XERIAL_BLOCK_SIZE: usize = 32 * 1024;

/// The compression codec of a batch (attribute bits 0–2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompressionType {
    /// Id 0: records stored as is.
    None,
    /// Id 1: gzip.
    Gzip,
    /// Id 2: snappy (xerial framing).
    Snappy,
    /// Id 3: lz4 (frame format).
    Lz4,
    /// Id 4: zstd (magic v2 only).
    Zstd,
}

impl CompressionType {
    /// Maps a 3-bit codec id to a codec; `None` for the ids 5–7 that Kafka does not define.
    pub fn from_id(id: u8) -> Option<Self> {
        match id {
            0 => Some(CompressionType::None),
            1 => Some(CompressionType::Gzip),
            2 => Some(CompressionType::Snappy),
            3 => Some(CompressionType::Lz4),
            4 => Some(CompressionType::Zstd),
            _ => None,
        }
    }

    /// The codec id stored in attribute bits 0–2.
    pub fn id(self) -> u8 {
        match self {
            CompressionType::None => 0,
            CompressionType::Gzip => 1,
            CompressionType::Snappy => 2,
            CompressionType::Lz4 => 3,
            CompressionType::Zstd => 4,
        }
    }

    /// Kafka's lowercase name (`"none"`, `"gzip"`, `"snappy"`, `"lz4"`, `"zstd"`), as printed
    /// by `kafka-dump-log.sh` after `compresscodec:`.
    pub fn name(self) -> &'static str {
        match self {
            CompressionType::None => "none",
            CompressionType::Gzip => "gzip",
            CompressionType::Snappy => "snappy",
            CompressionType::Lz4 => "lz4",
            CompressionType::Zstd => "zstd",
        }
    }
}

/// Error used internally when the decompression limit is hit; mapped to
/// [`RecordError::DecompressedTooLarge`](super::RecordError::DecompressedTooLarge).
#[derive(Debug)]
pub(crate) enum DecompressError {
    Io(io::Error),
    TooLarge,
}

impl From<io::Error> for DecompressError {
    fn from(e: io::Error) -> Self {
        DecompressError::Io(e)
    }
}

fn read_bounded(mut reader: impl Read, limit: usize) -> Result<Vec<u8>, DecompressError> {
    let mut out = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    (&mut reader).take(cap).read_to_end(&mut out)?;
    if out.len() > limit {
        return Err(DecompressError::TooLarge);
    }
    Ok(out)
}

fn invalid_data(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

fn snappy_raw(block: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), DecompressError> {
    let len = snap::raw::decompress_len(block).map_err(|e| invalid_data(e.to_string()))?;
    // A snappy element of n input bytes expands to at most 64 output bytes (n >= 2), so a
    // header claiming more than 32x the block size is malformed: reject it before allocating.
    if len > block.len().saturating_mul(32).saturating_add(64) {
        return Err(invalid_data(format!(
            "snappy block of {} bytes claims {len} decompressed bytes",
            block.len()
        ))
        .into());
    }
    if out.len().saturating_add(len) > limit {
        return Err(DecompressError::TooLarge);
    }
    let start = out.len();
    out.resize(start + len, 0);
    let written = snap::raw::Decoder::new()
        .decompress(block, &mut out[start..])
        .map_err(|e| invalid_data(e.to_string()))?;
    out.truncate(start + written);
    Ok(())
}

fn snappy_decompress(data: &[u8], limit: usize) -> Result<Vec<u8>, DecompressError> {
    let mut out = Vec::new();
    if data.len() >= 16 && data[..8] == XERIAL_SNAPPY_MAGIC {
        // 8-byte magic, i32 version, i32 minimum compatible version, then blocks.
        let mut rest = &data[16..];
        while !rest.is_empty() {
            if rest.len() < 4 {
                return Err(invalid_data("truncated xerial snappy block length").into());
            }
            let len: I32Be = bytemuck::pod_read_unaligned(&rest[..4]);
            let len = len.get();
            let len = usize::try_from(len)
                .map_err(|_| invalid_data(format!("negative xerial snappy block length {len}")))?;
            rest = &rest[4..];
            if len > rest.len() {
                return Err(invalid_data(format!(
                    "xerial snappy block of {len} bytes but only {} remain",
                    rest.len()
                ))
                .into());
            }
            snappy_raw(&rest[..len], &mut out, limit)?;
            rest = &rest[len..];
        }
    } else {
        snappy_raw(data, &mut out, limit)?;
    }
    Ok(out)
}

/// Decompresses a whole compressed record stream, producing at most `limit` bytes.
pub(crate) fn decompress_bounded(
    codec: CompressionType,
    data: &[u8],
    limit: usize,
) -> Result<Vec<u8>, DecompressError> {
    match codec {
        CompressionType::None => {
            if data.len() > limit {
                return Err(DecompressError::TooLarge);
            }
            Ok(data.to_vec())
        }
        CompressionType::Gzip => read_bounded(flate2::read::MultiGzDecoder::new(data), limit),
        CompressionType::Snappy => snappy_decompress(data, limit),
        CompressionType::Lz4 => read_bounded(lz4_flex::frame::FrameDecoder::new(data), limit),
        CompressionType::Zstd => read_bounded(zstd::stream::read::Decoder::new(data)?, limit),
    }
}

/// Decompresses a record stream compressed with `codec` in Kafka's framing (see the
/// module table), producing at most [`MAX_DECOMPRESSED_BATCH_BYTES`] bytes.
///
/// # Errors
/// An [`io::Error`] of kind `InvalidData` for malformed input, and also when the output
/// would exceed the limit.
pub fn decompress(codec: CompressionType, data: &[u8]) -> io::Result<Vec<u8>> {
    decompress_bounded(codec, data, MAX_DECOMPRESSED_BATCH_BYTES).map_err(|e| match e {
        DecompressError::Io(e) => e,
        DecompressError::TooLarge => invalid_data(format!(
            "decompressed data exceeds {MAX_DECOMPRESSED_BATCH_BYTES} bytes"
        )),
    })
}

/// Compresses `data` with `codec` in the framing Kafka's Java client writes, so that the
/// result can be stored as the record stream of a batch (or as the value of a legacy
/// wrapper message): gzip stream, xerial-framed snappy (32 KiB blocks), LZ4 frame with
/// independent 64 KiB blocks, zstd frame (level 3). `None` returns a copy.
///
/// # Errors
/// Only if the underlying encoder fails (it does not for in-memory output in practice).
pub fn compress(codec: CompressionType, data: &[u8]) -> io::Result<Vec<u8>> {
    match codec {
        CompressionType::None => Ok(data.to_vec()),
        CompressionType::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(data)?;
            enc.finish()
        }
        CompressionType::Snappy => {
            let mut out = Vec::with_capacity(16 + data.len());
            out.extend_from_slice(&XERIAL_SNAPPY_MAGIC);
            out.extend_from_slice(&I32Be::new(1).to_bytes()); // version
            out.extend_from_slice(&I32Be::new(1).to_bytes()); // minimum compatible version
            let mut enc = snap::raw::Encoder::new();
            for chunk in data.chunks(XERIAL_BLOCK_SIZE) {
                let block = enc
                    .compress_vec(chunk)
                    .map_err(|e| invalid_data(e.to_string()))?;
                let len = i32::try_from(block.len())
                    .map_err(|_| invalid_data("snappy block larger than i32::MAX"))?;
                out.extend_from_slice(&I32Be::new(len).to_bytes());
                out.extend_from_slice(&block);
            }
            Ok(out)
        }
        CompressionType::Lz4 => {
            let info = lz4_flex::frame::FrameInfo::new()
                .block_size(lz4_flex::frame::BlockSize::Max64KB)
                .block_mode(lz4_flex::frame::BlockMode::Independent);
            let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
            enc.write_all(data)?;
            enc.finish().map_err(io::Error::other)
        }
        CompressionType::Zstd => zstd::stream::encode_all(data, 3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        for codec in [
            CompressionType::None,
            CompressionType::Gzip,
            CompressionType::Snappy,
            CompressionType::Lz4,
            CompressionType::Zstd,
        ] {
            let c = compress(codec, &data).unwrap();
            assert_eq!(decompress(codec, &c).unwrap(), data, "{codec:?}");
            assert_eq!(CompressionType::from_id(codec.id()), Some(codec));
        }
        assert_eq!(CompressionType::from_id(5), None);
    }

    #[test]
    fn raw_snappy_is_accepted_and_limit_is_enforced() {
        let data = vec![7u8; 10_000];
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(decompress(CompressionType::Snappy, &raw).unwrap(), data);
        let gz = compress(CompressionType::Gzip, &data).unwrap();
        assert!(matches!(
            decompress_bounded(CompressionType::Gzip, &gz, 100),
            Err(DecompressError::TooLarge)
        ));
        assert!(matches!(
            decompress_bounded(CompressionType::Snappy, &raw, 100),
            Err(DecompressError::TooLarge)
        ));
    }
}
