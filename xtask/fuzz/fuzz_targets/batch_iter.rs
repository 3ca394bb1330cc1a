//! The batch iterator with decompression: a `.log` image of arbitrary bytes is iterated
//! with Kafka's stop rules, every batch is validated and its records decoded
//! (decompressing gzip/snappy/lz4/zstd), control records are parsed, and the file
//! searches run. Byte 0's top bit selects a second mode: the rest is fed straight to
//! one codec's decoder (the codec from bits 0..3).
#![no_main]

use libfuzzer_sys::fuzz_target;
use segment::format::{BatchFormat, KafkaBatchFormat};
use segment::record::{
    batches_from, decompress, largest_timestamp_after, search_for_offset_with_size,
    search_for_timestamp, CompressionType, ControlRecordType, EndTransactionMarker, FileBatch,
};

fn walk(batch: &FileBatch<'_>) {
    let _ = batch.ensure_valid();
    let _ = (
        batch.base_offset(),
        batch.last_offset(),
        batch.next_offset(),
    );
    let _ = (
        batch.max_timestamp(),
        batch.offset_of_max_timestamp(),
        batch.last_sequence(),
    );
    let _ = batch.records_count();
    if let Some(legacy) = batch.as_legacy() {
        let _ = legacy.deep_base_offset();
        let _ = legacy.key_value();
    }
    let position = batch.position();
    let bytes = batch.as_bytes();
    let _ = KafkaBatchFormat::parse_header(bytes, position);
    let _ = KafkaBatchFormat::validate(bytes, position);
    let _ = KafkaBatchFormat::end_txn_marker(bytes, position);
    let _ = KafkaBatchFormat::search_timestamp(bytes, position, 0, 0);
    if let Ok(records) = batch.records() {
        for record in records {
            let Ok(r) = record else { break };
            let _ = (r.offset, r.timestamp, r.key(), r.value(), r.headers.len());
            if batch.is_control() {
                let _ = ControlRecordType::parse_key(r.key(), position);
                let _ = EndTransactionMarker::decode(r.key(), r.value(), position);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 0x80 != 0 {
        if let Some(codec) = CompressionType::from_id(mode & 0x07) {
            let _ = decompress(codec, rest);
        }
        return;
    }
    let mut iter = batches_from(rest, 0);
    for batch in iter.by_ref() {
        match batch {
            Ok(b) => walk(&b),
            Err(_) => break,
        }
    }
    let _ = iter.stop_reason();
    let _ = search_for_offset_with_size(rest, i64::from(mode), 0);
    let _ = search_for_timestamp(rest, i64::from(mode), 0, 0);
    let _ = largest_timestamp_after(rest, 0);
});
