//! Issue 11, finding 10: decompressing one batch takes at most the configured limit plus
//! a constant, for every codec; a decompression bomb is a typed error found while
//! streaming, never after inflating it. (Before the fix, a 1 MB gzip batch that inflates
//! to 1 GiB cost 1.05 GB of RSS.)
//!
//! The memory check reads the process's peak RSS (`VmHWM` in `/proc/self/status`), so it
//! is the only test of this file that decompresses a large stream.

#[expect(
    dead_code,
    reason = "a single-scenario binary: it uses a few of the shared helpers"
)]
mod common;

use segment::record::{
    compress, decompress, decompress_with_limit, BatchBuilder, CompressionType, RecordBatch,
    RecordError, DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES,
};

const MIB: usize = 1 << 20;

/// The tests of this file run one at a time: the peak-RSS check must not see another
/// test's allocations.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Peak resident set size of this process, in bytes.
fn peak_rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM line");
    let kb: usize = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("VmHWM value");
    kb * 1024
}

/// A gzip stream of `mib` MiB of zeros: one member of 1 MiB repeated (gzip readers,
/// Kafka's `GZIPInputStream` included, read concatenated members as one stream).
fn gzip_bomb(mib: usize) -> Vec<u8> {
    let member = compress(CompressionType::Gzip, &vec![0u8; MIB]).unwrap();
    member.repeat(mib)
}

/// A v2 batch whose record stream is `stream`, with codec `codec` and a valid CRC.
fn batch_with_stream(stream: &[u8], codec: CompressionType) -> Vec<u8> {
    let plain = BatchBuilder::new(0)
        .record(1, None, Some(b"x"))
        .build()
        .unwrap();
    common::batch_with_stream(&plain, stream, codec.id())
}

#[test]
fn a_gzip_bomb_costs_the_limit_not_its_inflated_size() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 512 MiB inflated from ~0.5 MB: over the default limit (64 MiB).
    let bomb = gzip_bomb(512);
    assert!(bomb.len() < 2 * MIB, "bomb is {} bytes", bomb.len());
    let before = peak_rss();
    let err = decompress(CompressionType::Gzip, &bomb).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    assert!(err.to_string().contains("exceeds"), "{err}");
    let grown = peak_rss().saturating_sub(before);
    assert!(
        grown <= DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES + 16 * MIB,
        "decompressing the bomb grew the peak RSS by {} MiB (limit {} MiB)",
        grown / MIB,
        DEFAULT_MAX_DECOMPRESSED_BATCH_BYTES / MIB
    );
    // A smaller configured limit bounds it further, through the batch API.
    let batch = batch_with_stream(&bomb, CompressionType::Gzip);
    let batch = RecordBatch::new(&batch).unwrap();
    batch.ensure_valid().unwrap();
    let before = peak_rss();
    assert!(matches!(
        batch.records_with_limit(4 * MIB),
        Err(RecordError::DecompressedTooLarge { limit, position: 0 }) if limit == 4 * MIB
    ));
    assert!(
        peak_rss() <= before + 8 * MIB,
        "a 4 MiB limit took more than 8 MiB"
    );
}

#[test]
fn every_codec_stops_at_the_limit_with_a_typed_error() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let data = vec![7u8; 3 * MIB];
    for codec in CompressionType::ALL {
        let stream = compress(codec, &data).unwrap();
        // At the limit exactly: decodes. One byte below: the typed error.
        assert_eq!(
            decompress_with_limit(codec, &stream, data.len())
                .unwrap()
                .len(),
            data.len(),
            "{codec:?}"
        );
        assert!(
            decompress_with_limit(codec, &stream, data.len() - 1)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::InvalidData),
            "{codec:?}"
        );
        if codec == CompressionType::None {
            continue; // records are read in place: nothing is decompressed
        }
        let batch = batch_with_stream(&stream, codec);
        let batch = RecordBatch::new(&batch).unwrap();
        assert!(
            matches!(
                batch.records_with_limit(MIB),
                Err(RecordError::DecompressedTooLarge { limit, .. }) if limit == MIB
            ),
            "{codec:?}"
        );
    }
}
