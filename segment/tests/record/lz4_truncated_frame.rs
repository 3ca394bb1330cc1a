//! Issue 11, finding 12: an LZ4 batch whose frame misses part or all of its 4-byte end
//! marker (or its announced content checksum) is rejected, as Kafka's
//! `KafkaLZ4BlockInputStream` rejects it; it never decodes as a valid, shorter stream.

use crate::common::batch_with_stream;
use segment::record::{
    compress, decompress, BatchBuilder, CompressionType, RecordBatch, RecordError,
};

fn plain_batch() -> Vec<u8> {
    let mut b = BatchBuilder::new(0);
    for i in 0..20 {
        b = b.record(1_000 + i, Some(b"key"), Some(b"some value that compresses"));
    }
    b.build().unwrap()
}

#[test]
fn a_complete_lz4_frame_decodes() {
    let plain = plain_batch();
    let frame = compress(CompressionType::Lz4, &plain[61..]).unwrap();
    assert_eq!(
        &frame[frame.len() - 4..],
        &[0, 0, 0, 0],
        "the frame ends with its end mark"
    );
    let batch = batch_with_stream(&plain, &frame, CompressionType::Lz4.id());
    let batch = RecordBatch::new(&batch).unwrap();
    batch.ensure_valid().unwrap();
    let n = batch.records().unwrap().filter(|r| r.is_ok()).count();
    assert_eq!(n, 20);
}

#[test]
fn every_cut_of_the_end_marker_is_rejected() {
    let plain = plain_batch();
    let frame = compress(CompressionType::Lz4, &plain[61..]).unwrap();
    for cut in 1..=4 {
        let short = &frame[..frame.len() - cut];
        let err = decompress(CompressionType::Lz4, short).unwrap_err();
        assert_eq!(
            err.kind(),
            std::io::ErrorKind::InvalidData,
            "cut {cut}: {err}"
        );
        assert!(err.to_string().contains("end marker"), "cut {cut}: {err}");
        // The same through a batch whose CRC matches the cut stream (so only the codec
        // can notice): a typed decompression error.
        let batch = batch_with_stream(&plain, short, CompressionType::Lz4.id());
        let batch = RecordBatch::new(&batch).unwrap();
        batch.ensure_valid().unwrap();
        assert!(
            matches!(
                batch.records(),
                Err(RecordError::Decompression {
                    codec: CompressionType::Lz4,
                    ..
                })
            ),
            "cut {cut} of the end marker was accepted"
        );
    }
}

#[test]
fn a_frame_cut_inside_a_block_or_header_is_rejected() {
    let plain = plain_batch();
    let frame = compress(CompressionType::Lz4, &plain[61..]).unwrap();
    for len in 0..frame.len() - 4 {
        assert!(
            decompress(CompressionType::Lz4, &frame[..len])
                .is_err_and(|e| e.kind() == std::io::ErrorKind::InvalidData),
            "a frame cut to {len} of {} bytes was accepted",
            frame.len()
        );
    }
}

#[test]
fn a_missing_content_checksum_is_rejected() {
    // Kafka's own LZ4 writer sets no content checksum; a frame that announces one must
    // carry it. Frame: magic, FLG (version 01, independent blocks, content checksum),
    // BD (64 KiB blocks), header checksum, one uncompressed block, end mark, checksum.
    let data = b"hello";
    let info = lz4_flex::frame::FrameInfo::new().content_checksum(true);
    let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
    std::io::Write::write_all(&mut enc, data).unwrap();
    let frame = enc.finish().unwrap();
    assert_eq!(decompress(CompressionType::Lz4, &frame).unwrap(), data);
    for cut in 1..=8 {
        let err = decompress(CompressionType::Lz4, &frame[..frame.len() - cut]).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "cut {cut}");
    }
}
