//! Log dump (`.log` and KRaft `.checkpoint` files): batch lines, deep iteration, CRC and
//! framing checks, non-consecutive offsets, trailing bytes (docs/kafka-behaviour.md#dump-log-segments "Log dump").

use std::path::Path;

use super::decode::{decode_record, write_record_text};
use super::reader::{reason_of, LogReader, Step};
use super::text::{java_lossy, write_batch_text, write_data, write_record_meta, RecordMeta};
use super::{
    absolute, parse_kraft_snapshot_name, BatchLine, Content, ControlLine, DumpOptions, Event,
    FileType, Problem, RecordLine, Sink,
};
use crate::record::{
    decompress_with_limit, ControlRecordType, EndTransactionMarker, FileBatch, LegacyBatch, Record,
    StopReason, LOG_OVERHEAD,
};

/// Header-level line of a batch.
pub(crate) fn batch_line(batch: &FileBatch<'_>) -> BatchLine {
    let compression = match batch.compression() {
        Ok(c) => c.name().to_string(),
        Err(_) => {
            let id = match batch {
                FileBatch::V2(b) => b.attributes().compression_id(),
                FileBatch::Legacy(b) => (b.attributes() & 0x07) as u8,
            };
            format!("unknown({id})")
        }
    };
    BatchLine {
        position: batch.position(),
        magic: batch.magic(),
        base_offset: batch.base_offset(),
        last_offset: batch.last_offset(),
        count: batch.records_count(),
        base_sequence: batch.base_sequence(),
        last_sequence: batch.last_sequence(),
        producer_id: batch.producer_id(),
        producer_epoch: batch.producer_epoch(),
        partition_leader_epoch: batch.partition_leader_epoch(),
        is_transactional: batch.is_transactional(),
        is_control: batch.is_control(),
        delete_horizon_ms: batch.as_v2().and_then(|b| b.delete_horizon_ms()),
        timestamp_type: batch.timestamp_type().name(),
        max_timestamp: batch.max_timestamp(),
        size: batch.size_in_bytes(),
        compression,
        crc: batch.checksum(),
        is_valid: batch.is_valid(),
    }
}

fn computed_checksum(batch: &FileBatch<'_>) -> u32 {
    match batch {
        FileBatch::V2(b) => b.compute_checksum(),
        FileBatch::Legacy(b) => b.compute_checksum(),
    }
}

/// Checksums (stored, valid) of the messages of a legacy entry: the entry itself when
/// uncompressed, the inner messages of a compressed wrapper (best effort: `None` if the
/// wrapper cannot be decoded, the records iterator then reports the error).
fn legacy_crcs(batch: &LegacyBatch<'_>, limit: usize) -> Option<Vec<(u32, bool)>> {
    let codec = batch.compression().ok()?;
    if codec == crate::record::CompressionType::None {
        return Some(vec![(batch.checksum(), batch.is_valid())]);
    }
    let (_, value) = batch.key_value().ok()?;
    let value = crate::record::readable_value(batch.magic(), codec, value?);
    let data = decompress_with_limit(codec, &value, limit).ok()?;
    let mut out = Vec::new();
    let mut at = 0usize;
    loop {
        // at <= data.len(): it only advances by the size of an entry viewed in `rest`.
        let rest = data.get(at..).unwrap_or_default();
        let Some(size_field) = rest.get(8..LOG_OVERHEAD) else {
            break; // fewer than LOG_OVERHEAD bytes left
        };
        let size = index_core::codec::I32Be::from_bytes(*size_field.first_chunk::<4>()?).get();
        if size < 14 {
            break;
        }
        let Some(entry) = rest.get(..LOG_OVERHEAD + size as usize) else {
            break;
        };
        let inner = LegacyBatch::at(entry, 0).ok()?;
        out.push((inner.checksum(), inner.is_valid()));
        at += inner.size_in_bytes();
    }
    Some(out)
}

fn control_line(record: &Record<'_>, position: u64) -> Result<ControlLine, String> {
    let ty = ControlRecordType::parse_key(record.key(), position).map_err(|e| reason_of(&e))?;
    match ty {
        ControlRecordType::Abort | ControlRecordType::Commit => {
            let m = EndTransactionMarker::decode(record.key(), record.value(), position)
                .map_err(|e| reason_of(&e))?;
            Ok(ControlLine::EndTxnMarker {
                marker: m.control_type.name(),
                coordinator_epoch: m.coordinator_epoch,
            })
        }
        other => Ok(
            match super::decode::decode_control(other.id(), record.value()) {
                Some((label, json)) => ControlLine::Kraft {
                    name: other.name(),
                    id: other.id(),
                    label,
                    record: json,
                },
                None => ControlLine::Other {
                    name: other.name(),
                    id: other.id(),
                },
            },
        ),
    }
}

fn text_of(bytes: Option<&[u8]>) -> Option<Content> {
    bytes.map(|b| Content::Text(super::text::java_lossy(b).into_owned()))
}

/// Dumps a `.log` or a KRaft `.checkpoint` file.
pub(crate) fn dump_log(path: &Path, ty: FileType, opts: &DumpOptions, sink: &mut dyn Sink) {
    let abs = absolute(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if ty == FileType::KraftSnapshot && name == "bootstrap.checkpoint" {
        sink.event(Event::BootstrapSnapshot);
    } else if ty == FileType::KraftSnapshot {
        match parse_kraft_snapshot_name(&name) {
            Some((end_offset, epoch)) => sink.event(Event::SnapshotStart { end_offset, epoch }),
            None => {
                sink.event(Event::Problem(Problem::Unreadable {
                    path: path.to_path_buf(),
                    reason: "not a KRaft snapshot name (<offset>-<epoch>.checkpoint)".into(),
                }));
                return;
            }
        }
    } else {
        let Some(base) = super::base_offset_of(path, sink) else {
            return;
        };
        sink.event(Event::LogStart { base_offset: base });
    }
    let mut reader = match LogReader::open(path, opts.max_bytes, opts.max_message_size) {
        Ok(r) => r,
        Err(e) => {
            sink.event(Event::Problem(Problem::Unreadable {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }));
            return;
        }
    };
    // Kafka dumps a `.log` in full in every mode: `--verify-index-only` and
    // `--index-sanity-check` only concern `.index` and `.timeindex` files.
    let print = true;
    let deep = opts.deep();
    let mut last_record_offset: Option<i64> = None;
    let mut reported = 0u64;
    loop {
        let step = match reader.next_batch() {
            Ok(s) => s,
            Err(e) => {
                sink.event(Event::Problem(Problem::Unreadable {
                    path: path.to_path_buf(),
                    reason: format!("read error at position {}: {e}", reader.position()),
                }));
                return;
            }
        };
        let batch = match step {
            Step::Batch(b) => b,
            Step::TooLarge { position, size } => {
                sink.event(Event::Problem(Problem::BatchTooLarge {
                    path: abs.clone(),
                    position,
                    size,
                    limit: opts.max_message_size,
                }));
                break;
            }
            Step::Stop(stop) => {
                match stop {
                    StopReason::End => {}
                    StopReason::TornTail {
                        remaining_bytes, ..
                    } => {
                        if opts.max_bytes == super::DEFAULT_MAX_BYTES {
                            sink.event(Event::Problem(Problem::TrailingBytes {
                                path: abs.clone(),
                                file_name: name.clone(),
                                bytes: remaining_bytes as u64,
                            }));
                        }
                    }
                    StopReason::Corrupt { position, reason } => {
                        sink.event(Event::Problem(Problem::CorruptRecord {
                            path: abs.clone(),
                            position,
                            reason,
                        }));
                    }
                }
                break;
            }
        };
        let line = batch_line(&batch);
        let position = line.position;
        if !line.is_valid {
            sink.event(Event::Problem(Problem::InvalidChecksum {
                path: abs.clone(),
                position,
                base_offset: line.base_offset,
                last_offset: line.last_offset,
                stored_crc: line.crc,
                computed_crc: computed_checksum(&batch),
            }));
        }
        let timestamp_type = line.timestamp_type;
        let magic = line.magic;
        let is_control = line.is_control;
        if print {
            match sink.text_lines() {
                Some((out, _)) => {
                    write_batch_text(out, &line);
                    out.push('\n');
                }
                None => sink.event(Event::Batch(line)),
            }
        }
        if deep {
            let limit = opts.max_decompressed_bytes();
            let legacy_crcs = batch.as_legacy().and_then(|b| legacy_crcs(b, limit));
            match batch.records_with_limit(limit) {
                Err(e) => sink.event(Event::Problem(Problem::InvalidRecord {
                    path: abs.clone(),
                    position,
                    reason: reason_of(&e),
                })),
                Ok(records) => {
                    for (i, record) in records.enumerate() {
                        let record = match record {
                            Ok(r) => r,
                            Err(e) => {
                                sink.event(Event::Problem(Problem::InvalidRecord {
                                    path: abs.clone(),
                                    position,
                                    reason: reason_of(&e),
                                }));
                                break;
                            }
                        };
                        // Kafka's tool starts each file's previous offset at -1: with
                        // --kafka-strict its first record is checked against -1 too, so a
                        // file not starting at offset 0 reports `-1 is followed by N` as
                        // Kafka's does (docs/kafka-behaviour.md#dumplogsegments-findings).
                        let prev = last_record_offset.or(opts.kafka_strict.then_some(-1));
                        if let Some(prev) = prev {
                            if record.offset != prev.wrapping_add(1) {
                                sink.event(Event::Problem(Problem::NonConsecutiveOffsets {
                                    path: abs.clone(),
                                    prev_offset: prev,
                                    offset: record.offset,
                                }));
                            }
                        }
                        last_record_offset = Some(record.offset);
                        let control = if is_control {
                            match control_line(&record, position) {
                                Ok(c) => Some(c),
                                Err(reason) => {
                                    sink.event(Event::Problem(Problem::InvalidRecord {
                                        path: abs.clone(),
                                        position,
                                        reason,
                                    }));
                                    None
                                }
                            }
                        } else {
                            None
                        };
                        if !print {
                            continue;
                        }
                        let v2 = magic >= 2;
                        let crc = legacy_crcs.as_ref().and_then(|c| c.get(i)).copied();
                        if let Some((out, skip)) = sink.text_lines() {
                            // The line `event_line` would render for the event below,
                            // straight from the record.
                            let mark = out.len();
                            if skip {
                                out.push('|');
                            } else {
                                write_record_meta(
                                    out,
                                    &RecordMeta {
                                        offset: record.offset,
                                        timestamp_type,
                                        timestamp: record.timestamp,
                                        key_size: record.key().map_or(-1, |k| k.len() as i64),
                                        value_size: record.value().map_or(-1, |v| v.len() as i64),
                                        sequence: v2.then_some(record.sequence),
                                        crc: if v2 { None } else { crc },
                                        control: control.as_ref(),
                                    },
                                    v2.then(|| record.headers.iter().map(|h| java_lossy(&h.key))),
                                );
                            }
                            let body = out.len();
                            let mut failed = None;
                            match opts.decoder {
                                Some(decoder) if !is_control => {
                                    if let Err(reason) = write_record_text(
                                        decoder,
                                        record.offset,
                                        record.key(),
                                        record.value(),
                                        out,
                                    ) {
                                        failed = Some(reason);
                                    }
                                }
                                _ if opts.prints_data() && !is_control => {
                                    if let Some(k) = record.key() {
                                        write_data(out, " key: ", k);
                                    }
                                    if let Some(v) = record.value() {
                                        write_data(out, " payload: ", v);
                                    }
                                }
                                _ => {}
                            }
                            // Skipped metadata: the `|` only before a key or payload.
                            if skip && out.len() == body {
                                out.truncate(mark);
                            }
                            out.push('\n');
                            if let Some(reason) = failed {
                                sink.event(Event::Problem(Problem::InvalidRecord {
                                    path: abs.clone(),
                                    position,
                                    reason,
                                }));
                            }
                            continue;
                        }
                        let (key, payload) = match opts.decoder {
                            Some(decoder) if !is_control => {
                                match decode_record(
                                    decoder,
                                    record.offset,
                                    record.key(),
                                    record.value(),
                                ) {
                                    Ok(d) => (d.key, d.payload),
                                    Err(reason) => {
                                        sink.event(Event::Problem(Problem::InvalidRecord {
                                            path: abs.clone(),
                                            position,
                                            reason,
                                        }));
                                        (None, None)
                                    }
                                }
                            }
                            _ => {
                                // A tombstone prints its key and no payload; a record
                                // without a key prints its payload only (Kafka's lines).
                                let data = opts.prints_data() && !is_control;
                                if data {
                                    (text_of(record.key()), text_of(record.value()))
                                } else {
                                    (None, None)
                                }
                            }
                        };
                        sink.event(Event::Record(RecordLine {
                            batch_position: position,
                            offset: record.offset,
                            timestamp_type,
                            timestamp: record.timestamp,
                            key_size: record.key().map_or(-1, |k| k.len() as i64),
                            value_size: record.value().map_or(-1, |v| v.len() as i64),
                            magic,
                            sequence: v2.then_some(record.sequence),
                            header_keys: v2.then(|| {
                                record
                                    .headers
                                    .iter()
                                    .map(|h| super::text::java_lossy(&h.key).into_owned())
                                    .collect()
                            }),
                            crc: if v2 { None } else { crc.map(|c| c.0) },
                            crc_valid: if v2 { None } else { crc.map(|c| c.1) },
                            control,
                            key,
                            payload,
                        }));
                    }
                }
            }
        }
        let now = reader.position();
        sink.progress(now - reported);
        reported = now;
    }
    let total = reader.file_len();
    sink.progress(total.saturating_sub(reported));
}
