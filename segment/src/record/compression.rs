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
//! Decompression is bounded: one batch's record stream never inflates to more than a
//! limit ([`DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES`] unless the caller passes its own, e.g.
//! `dump-log --max-message-size`); exceeding it is an error. The decoders stream into an
//! output buffer whose capacity never exceeds the limit (no "inflate, then check"), so
//! the memory one decompression takes is the limit plus a constant: the codec's state
//! (gzip: a 32 KiB window; lz4: at most two 4 MiB blocks; snappy: none; zstd: its window,
//! capped at the smallest power of two ≥ the limit, within 2^24..=2^27 bytes; 2^27 is
//! zstd's default cap). Iterating the records of a decompressed batch copies one record
//! at a time out of the buffer.
//!
//! LZ4 frames are checked as Kafka's `KafkaLZ4BlockInputStream` reads them: the frame
//! magic `04 22 4d 18`, and the 4-byte end marker (plus the content checksum, when the
//! frame descriptor announces one) must be present; a frame cut anywhere is an error,
//! never a shorter record stream. Bytes after the end of the first frame are ignored, as
//! Kafka ignores them.
//!
//! Each codec is a Cargo feature of this crate (`gzip`, `snappy`, `lz4`, `zstd`, all on by
//! default). With a codec's feature off, [`compress`] and [`decompress`] (and so reading the
//! records of such a batch) return an [`io::Error`] of kind [`io::ErrorKind::Unsupported`]
//! that names the feature; batch headers, CRC validation, recovery and indexing never
//! decompress, so they work on every batch whatever the features.

use std::io::{self, Read};

#[cfg(feature = "snappy")]
use index_core::codec::I32Be;

/// Default upper bound on the decompressed size of one batch's record stream, in bytes
/// (64 MiB), used by [`decompress`], [`RecordBatch::records`](super::RecordBatch::records)
/// and the other readers that take no limit of their own.
///
/// Kafka bounds a batch by `max.message.bytes` (default 1 MiB + 12 bytes) of *compressed*
/// data and has no limit on what it inflates to; this bound exists so that a hostile
/// batch (a 1 MB gzip stream of zeros inflates to 1 GiB) cannot make a reader allocate
/// unbounded memory. 64 times Kafka's default `max.message.bytes` leaves room for any
/// batch a producer builds with default settings (`batch.size` 16 KiB, `max.request.size`
/// 1 MiB) even at extreme compression ratios. Pass another limit with
/// [`decompress_with_limit`] or [`RecordBatch::records_with_limit`](super::RecordBatch::records_with_limit).
pub const DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES: usize = 64 << 20;

/// Largest zstd window accepted (2^27 bytes = 128 MiB, zstd's default
/// `ZSTD_WINDOWLOG_LIMIT_DEFAULT`, which is also what Kafka's zstd-jni decoder accepts).
#[cfg(feature = "zstd")]
const ZSTD_MAX_WINDOW_LOG: u32 = 27;

/// The 4-byte magic of an LZ4 frame (`0x184D2204`, little-endian on disk).
#[cfg(feature = "lz4")]
const LZ4_FRAME_MAGIC: [u8; 4] = [0x04, 0x22, 0x4d, 0x18];

/// The 8-byte magic of xerial's snappy stream framing, as written by Kafka's Java client.
pub const XERIAL_SNAPPY_MAGIC: [u8; 8] = *b"\x82SNAPPY\0";

/// Block size used by [`compress`] for xerial-framed snappy (xerial's default, 32 KiB).
#[cfg(feature = "snappy")]
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
    /// Every codec, in id order (`None` first): the one list of Kafka's codecs that
    /// tests, fuzz seeds and workloads iterate over.
    pub const ALL: [CompressionType; 5] = [
        CompressionType::None,
        CompressionType::Gzip,
        CompressionType::Snappy,
        CompressionType::Lz4,
        CompressionType::Zstd,
    ];

    /// The codecs that compress ([`ALL`](Self::ALL) without `None`), in id order.
    pub const COMPRESSED: [CompressionType; 4] = [
        CompressionType::Gzip,
        CompressionType::Snappy,
        CompressionType::Lz4,
        CompressionType::Zstd,
    ];

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
    /// Every decoder error is `InvalidData`: the decoders read in-memory slices, so no
    /// error is a real I/O failure; a stream that ends early (`UnexpectedEof` from gzip)
    /// or that zstd rejects (`Other`) is malformed input.
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::InvalidData => DecompressError::Io(e),
            io::ErrorKind::UnexpectedEof => {
                DecompressError::Io(invalid_data(format!("truncated stream: {e}")))
            }
            _ => DecompressError::Io(invalid_data(e.to_string())),
        }
    }
}

/// First capacity of a decompression buffer.
const INITIAL_OUTPUT: usize = 64 << 10;

/// Makes room for `additional` more bytes in `out` without ever giving it a capacity
/// above `limit` (doubling, as `Vec` does, but capped), or fails with `TooLarge`.
fn reserve_bounded(
    out: &mut Vec<u8>,
    additional: usize,
    limit: usize,
) -> Result<(), DecompressError> {
    let needed = out.len().saturating_add(additional);
    if needed > limit {
        return Err(DecompressError::TooLarge);
    }
    if needed > out.capacity() {
        let target = out
            .capacity()
            .saturating_mul(2)
            .max(INITIAL_OUTPUT)
            .max(needed)
            .min(limit);
        out.reserve_exact(target - out.len());
    }
    Ok(())
}

/// Streams `reader` into a buffer of at most `limit` bytes: reads go straight into the
/// buffer's spare capacity, which grows by doubling up to `limit` and never past it, and
/// one byte more than `limit` is an error, detected before it is stored.
#[cfg_attr(
    not(any(feature = "gzip", feature = "lz4", feature = "zstd")),
    allow(dead_code)
)]
fn read_bounded(mut reader: impl Read, limit: usize) -> Result<Vec<u8>, DecompressError> {
    let mut out: Vec<u8> = Vec::new();
    let mut filled = 0usize;
    loop {
        if filled == out.len() {
            if filled == limit {
                // Full: anything more is over the limit (one probe byte on the stack).
                let mut probe = [0u8; 1];
                return match read_retrying(&mut reader, &mut probe)? {
                    0 => Ok(out),
                    _ => Err(DecompressError::TooLarge),
                };
            }
            reserve_bounded(&mut out, 1, limit)?;
            let cap = out.capacity().min(limit);
            out.resize(cap, 0);
        }
        #[expect(
            clippy::indexing_slicing,
            reason = "filled <= out.len(): filled starts at 0, out only grows (to at least \
                      filled + 1 when full) and read returns n <= the buffer's length"
        )]
        let n = read_retrying(&mut reader, &mut out[filled..])?;
        if n == 0 {
            out.truncate(filled);
            return Ok(out);
        }
        filled += n;
    }
}

#[cfg_attr(
    not(any(feature = "gzip", feature = "lz4", feature = "zstd")),
    allow(dead_code)
)]
fn read_retrying(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// The bytes of the first LZ4 frame of `data`, checked to be complete as Kafka's
/// `KafkaLZ4BlockInputStream` requires: the frame magic, a full frame descriptor, every
/// block (with its checksum when the descriptor announces block checksums), the 4-byte
/// end marker and, when announced, the 4-byte content checksum. The checksums themselves
/// are verified by the decoder.
#[cfg(feature = "lz4")]
fn lz4_frame(data: &[u8]) -> io::Result<&[u8]> {
    let short = |what: &str| invalid_data(format!("truncated lz4 frame: {what} missing"));
    let Some(magic) = data.first_chunk::<4>() else {
        return Err(short("frame magic"));
    };
    if *magic != LZ4_FRAME_MAGIC {
        return Err(invalid_data(format!(
            "not an lz4 frame: magic {magic:02x?}, expected {LZ4_FRAME_MAGIC:02x?}"
        )));
    }
    let flg = *data.get(4).ok_or_else(|| short("frame descriptor"))?;
    let block_checksums = flg & 0x10 != 0;
    let content_size = flg & 0x08 != 0;
    let content_checksum = flg & 0x04 != 0;
    let dict_id = flg & 0x01 != 0;
    // FLG, BD, [content size 8], [dictionary id 4], header checksum 1.
    let mut at = 4 + 2 + if content_size { 8 } else { 0 } + if dict_id { 4 } else { 0 } + 1;
    if data.len() < at {
        return Err(short("frame descriptor"));
    }
    loop {
        let word = data
            .get(at..)
            .and_then(<[u8]>::first_chunk::<4>)
            .ok_or_else(|| short("end marker"))?;
        let word = u32::from_le_bytes(*word);
        at += 4;
        if word == 0 {
            break;
        }
        let len = (word & 0x7FFF_FFFF) as usize;
        at = at
            .checked_add(len)
            .and_then(|a| a.checked_add(if block_checksums { 4 } else { 0 }))
            .filter(|&a| a <= data.len())
            .ok_or_else(|| short("block data"))?;
    }
    if content_checksum {
        at += 4;
    }
    // Without a content checksum, `at <= data.len()` already (the block loop checks it).
    data.get(..at).ok_or_else(|| short("content checksum"))
}

/// A magic 0 LZ4 frame as Kafka reads it: Kafka's legacy writer computed the frame
/// header checksum over the frame magic as well as the descriptor (a known defect of its
/// first LZ4 framing), so its reader does not check that byte for magic 0 messages
/// (docs/kafka-behaviour.md#legacy-message-sets). Returns the frame with the header
/// checksum recomputed over the descriptor alone, which the decoder then accepts; the
/// frame itself is unchanged when the descriptor is incomplete (the decoder reports it).
#[cfg(feature = "lz4")]
pub(crate) fn lz4_magic0_frame(data: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    use std::borrow::Cow;
    let Some(&flg) = data.get(4) else {
        return Cow::Borrowed(data);
    };
    let hc_at = 4 + 2 + if flg & 0x08 != 0 { 8 } else { 0 } + if flg & 0x01 != 0 { 4 } else { 0 };
    let (Some(descriptor), Some(_)) = (data.get(4..hc_at), data.get(hc_at)) else {
        return Cow::Borrowed(data);
    };
    let hc = (twox_hash::XxHash32::oneshot(0, descriptor) >> 8) as u8;
    let mut fixed = data.to_vec();
    if let Some(b) = fixed.get_mut(hc_at) {
        *b = hc;
    }
    Cow::Owned(fixed)
}

/// Sets the header checksum of an LZ4 frame to the one Kafka's writer puts in magic 0
/// messages: xxHash32 over the frame magic and the descriptor (see [`lz4_magic0_frame`]).
#[cfg(feature = "lz4")]
pub(crate) fn lz4_magic0_writer_checksum(frame: &mut [u8]) {
    let Some(&flg) = frame.get(4) else {
        return;
    };
    let hc_at = 4 + 2 + if flg & 0x08 != 0 { 8 } else { 0 } + if flg & 0x01 != 0 { 4 } else { 0 };
    let Some(header) = frame.get(..hc_at) else {
        return;
    };
    let hc = (twox_hash::XxHash32::oneshot(0, header) >> 8) as u8;
    if let Some(b) = frame.get_mut(hc_at) {
        *b = hc;
    }
}

/// Smallest zstd window cap (2^24 bytes = 16 MiB): above every window a producer's zstd
/// levels 1–19 choose (at most 2^23), so a small limit never rejects a valid batch for
/// its window.
#[cfg(feature = "zstd")]
const ZSTD_MIN_WINDOW_LOG: u32 = 24;

/// Zstd decoder whose window is capped by `limit` (a window larger than the whole output
/// is of no use to a valid frame), but never below [`ZSTD_MIN_WINDOW_LOG`] nor above
/// [`ZSTD_MAX_WINDOW_LOG`].
#[cfg(feature = "zstd")]
fn zstd_decoder(data: &[u8], limit: usize) -> io::Result<impl Read + '_> {
    let mut d = zstd::stream::read::Decoder::new(data)?;
    let needed = usize::BITS - limit.max(1).saturating_sub(1).leading_zeros();
    d.window_log_max(needed.clamp(ZSTD_MIN_WINDOW_LOG, ZSTD_MAX_WINDOW_LOG))?;
    Ok(d)
}

fn invalid_data(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// The error for a codec whose Cargo feature is off.
#[cfg_attr(
    all(
        feature = "gzip",
        feature = "snappy",
        feature = "lz4",
        feature = "zstd"
    ),
    allow(dead_code)
)]
fn disabled(codec: CompressionType) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "{} support is not compiled in (enable the `{}` feature of the segment crate)",
            codec.name(),
            codec.name()
        ),
    )
}

#[cfg(feature = "snappy")]
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
    reserve_bounded(out, len, limit)?;
    let start = out.len();
    out.resize(start + len, 0);
    #[expect(
        clippy::indexing_slicing,
        reason = "start is out.len() before the resize to start + len, so it is in bounds"
    )]
    let written = snap::raw::Decoder::new()
        .decompress(block, &mut out[start..])
        .map_err(|e| invalid_data(e.to_string()))?;
    out.truncate(start + written);
    Ok(())
}

#[cfg(feature = "snappy")]
fn snappy_decompress(data: &[u8], limit: usize) -> Result<Vec<u8>, DecompressError> {
    let mut out = Vec::new();
    let xerial = data
        .split_first_chunk::<16>()
        .filter(|(header, _)| header.starts_with(&XERIAL_SNAPPY_MAGIC));
    if let Some((_, blocks)) = xerial {
        // 8-byte magic, i32 version, i32 minimum compatible version, then blocks.
        let mut rest = blocks;
        while !rest.is_empty() {
            let Some((len, tail)) = rest.split_first_chunk::<4>() else {
                return Err(invalid_data("truncated xerial snappy block length").into());
            };
            let len: I32Be = bytemuck::pod_read_unaligned(len.as_slice());
            let len = len.get();
            let len = usize::try_from(len)
                .map_err(|_| invalid_data(format!("negative xerial snappy block length {len}")))?;
            rest = tail;
            let Some((block, tail)) = rest.split_at_checked(len) else {
                return Err(invalid_data(format!(
                    "xerial snappy block of {len} bytes but only {} remain",
                    rest.len()
                ))
                .into());
            };
            snappy_raw(block, &mut out, limit)?;
            rest = tail;
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
        #[cfg(feature = "gzip")]
        CompressionType::Gzip => read_bounded(flate2::read::MultiGzDecoder::new(data), limit),
        #[cfg(feature = "snappy")]
        CompressionType::Snappy => snappy_decompress(data, limit),
        #[cfg(feature = "lz4")]
        CompressionType::Lz4 => {
            read_bounded(lz4_flex::frame::FrameDecoder::new(lz4_frame(data)?), limit)
        }
        #[cfg(feature = "zstd")]
        CompressionType::Zstd => read_bounded(zstd_decoder(data, limit)?, limit),
        #[allow(unreachable_patterns)]
        other => Err(disabled(other).into()),
    }
}

/// Decompresses a record stream compressed with `codec` in Kafka's framing (see the
/// module table), producing at most [`DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES`] bytes.
///
/// # Errors
/// As [`decompress_with_limit`].
pub fn decompress(codec: CompressionType, data: &[u8]) -> io::Result<Vec<u8>> {
    decompress_with_limit(codec, data, DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES)
}

/// Decompresses a record stream compressed with `codec`, producing at most `limit` bytes
/// and taking at most `limit` bytes of output buffer plus the codec's constant state
/// (see the module docs).
///
/// # Errors
/// An [`io::Error`] of kind `InvalidData` for malformed input (including an LZ4 frame
/// without its end marker), and also when the output would exceed `limit`; of kind
/// `Unsupported` when the codec's Cargo feature is off.
pub fn decompress_with_limit(
    codec: CompressionType,
    data: &[u8],
    limit: usize,
) -> io::Result<Vec<u8>> {
    decompress_bounded(codec, data, limit).map_err(|e| match e {
        DecompressError::Io(e) => e,
        DecompressError::TooLarge => {
            invalid_data(format!("decompressed data exceeds {limit} bytes"))
        }
    })
}

/// Compresses `data` with `codec` in the framing Kafka's Java client writes, so that the
/// result can be stored as the record stream of a batch (or as the value of a legacy
/// wrapper message): gzip stream, xerial-framed snappy (32 KiB blocks), LZ4 frame with
/// independent 64 KiB blocks, zstd frame (level 3). `None` returns a copy.
///
/// # Errors
/// Of kind `Unsupported` when the codec's Cargo feature is off; otherwise only if the
/// underlying encoder fails (it does not for in-memory output in practice).
pub fn compress(codec: CompressionType, data: &[u8]) -> io::Result<Vec<u8>> {
    match codec {
        CompressionType::None => Ok(data.to_vec()),
        #[cfg(feature = "gzip")]
        CompressionType::Gzip => {
            use std::io::Write;
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(data)?;
            enc.finish()
        }
        #[cfg(feature = "snappy")]
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
        #[cfg(feature = "lz4")]
        CompressionType::Lz4 => {
            use std::io::Write;
            let info = lz4_flex::frame::FrameInfo::new()
                .block_size(lz4_flex::frame::BlockSize::Max64KB)
                .block_mode(lz4_flex::frame::BlockMode::Independent);
            let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
            enc.write_all(data)?;
            enc.finish().map_err(io::Error::other)
        }
        #[cfg(feature = "zstd")]
        CompressionType::Zstd => zstd::stream::encode_all(data, 3),
        #[allow(unreachable_patterns)]
        other => Err(disabled(other)),
    }
}

#[cfg(all(
    test,
    feature = "gzip",
    feature = "snappy",
    feature = "lz4",
    feature = "zstd"
))]
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
    fn every_codec_round_trips() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        for codec in CompressionType::ALL {
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
