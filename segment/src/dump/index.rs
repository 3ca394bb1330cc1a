//! Offset and time index dumps and their verification against the `.log` (kafka-behaviour §12).

use std::path::Path;

use index_offset::{OffsetIndex, OffsetPosition, RawOffsetEntry};
use index_time::{RawTimeEntry, TimeIndex, TimestampOffset};

use super::reader::{reason_of, LogReader, Step};
use super::{absolute, sibling, DumpOptions, Event, Note, Problem, Sink};
use crate::record::{FileBatch, StopReason};

const OFFSET_ENTRY: usize = 8;
const TIME_ENTRY: usize = 12;

/// Decodes every whole slot of an offset index image (Kafka: entries = length / 8).
pub(crate) fn offset_slots(bytes: &[u8], base: i64) -> Vec<OffsetPosition> {
    bytes
        .chunks_exact(OFFSET_ENTRY)
        .map(|c| bytemuck::pod_read_unaligned::<RawOffsetEntry>(c).decode(base))
        .collect()
}

/// Decodes every whole slot of a time index image (entries = length / 12).
pub(crate) fn time_slots(bytes: &[u8], base: i64) -> Vec<TimestampOffset> {
    bytes
        .chunks_exact(TIME_ENTRY)
        .map(|c| bytemuck::pod_read_unaligned::<RawTimeEntry>(c).decode(base))
        .collect()
}

/// Number of slots before the zero-filled tail: iteration stops at the first slot
/// `i > 0` whose offset equals the base offset (Kafka's rule).
fn used_slots(offsets: impl Iterator<Item = i64>, base: i64) -> usize {
    let mut n = 0;
    for (i, o) in offsets.enumerate() {
        if i > 0 && o == base {
            break;
        }
        n = i + 1;
    }
    n
}

fn unreadable(path: &Path, reason: String) -> Event {
    Event::Problem(Problem::Unreadable {
        path: path.to_path_buf(),
        reason,
    })
}

/// Reads the first batch at `position` within `[position, end)`; `Err(reason)` if there is
/// none.
fn first_batch_at<'r>(
    reader: &'r mut LogReader,
    position: u64,
    end: u64,
) -> Result<FileBatch<'r>, String> {
    reader.seek(position, end);
    match reader.next_batch() {
        Err(e) => Err(format!("read error: {e}")),
        Ok(Step::Batch(b)) => Ok(b),
        Ok(Step::Stop(StopReason::End)) => Err("no batch at this position (end of log)".into()),
        Ok(Step::Stop(StopReason::TornTail {
            remaining_bytes, ..
        })) => Err(format!(
            "no complete batch in the {remaining_bytes} bytes read at this position (batch larger than --max-message-size, or a torn tail)"
        )),
        Ok(Step::Stop(StopReason::Corrupt { reason, .. })) => Err(reason),
    }
}

/// What scanning forward from a position for `target` found.
enum Found {
    /// `(base offset, last offset, position)` of the first batch with last offset ≥ target.
    Batch(i64, i64, u64),
    /// No such batch before the end.
    None,
    /// Scanning failed (corrupt batch, I/O).
    Error(String),
}

/// Kafka `searchForOffsetWithSize` from `start` over the whole log.
fn search(reader: &mut LogReader, target: i64, start: u64) -> Found {
    reader.seek(start, u64::MAX);
    loop {
        match reader.next_batch() {
            Err(e) => return Found::Error(format!("read error: {e}")),
            Ok(Step::Batch(b)) => {
                if b.last_offset() >= target {
                    let base = match &b {
                        FileBatch::V2(v) => v.base_offset(),
                        FileBatch::Legacy(l) => l.deep_base_offset().unwrap_or(l.offset()),
                    };
                    return Found::Batch(base, b.last_offset(), b.position());
                }
            }
            Ok(Step::Stop(StopReason::Corrupt { reason, position })) => {
                return Found::Error(format!("corrupt batch at position {position}: {reason}"))
            }
            Ok(Step::Stop(_)) => return Found::None,
        }
    }
}

fn open_log(index: &Path, sink: &mut dyn Sink) -> Option<LogReader> {
    let log = sibling(index, ".log");
    match LogReader::open(&log, u64::MAX) {
        Ok(r) => Some(r),
        Err(e) => {
            sink.event(unreadable(
                &log,
                format!("cannot open the log of {}: {e}", index.display()),
            ));
            None
        }
    }
}

/// Offset index dump (kafka-behaviour §12 "Offset index dump").
pub(crate) fn dump_offset_index(path: &Path, opts: &DumpOptions, sink: &mut dyn Sink) {
    let Some(base) = super::base_offset_of(path, sink) else {
        return;
    };
    let Some(bytes) = super::read_small(path, sink) else {
        return;
    };
    let abs = absolute(path);
    let slots = offset_slots(&bytes, base);
    if slots.is_empty() {
        sink.event(Event::IndexEmpty {
            path: path.to_path_buf(),
        });
        sink.progress(bytes.len() as u64);
        return;
    }
    if opts.index_sanity_check {
        let result = OffsetIndex::open_read_only(path, base).and_then(|i| i.sanity_check());
        match result {
            Ok(()) => sink.event(Event::SanityPassed {
                path: path.to_path_buf(),
            }),
            Err(e) => sink.event(Event::Problem(Problem::SanityCheckFailed {
                path: abs,
                reason: e.to_string(),
            })),
        }
        sink.progress(bytes.len() as u64);
        return;
    }
    let Some(mut reader) = open_log(path, sink) else {
        return;
    };
    let log_len = reader.file_len();
    let used = used_slots(slots.iter().map(|s| s.offset), base);
    let mut prev: Option<OffsetPosition> = None;
    for (slot, entry) in slots.iter().take(used).enumerate() {
        let OffsetPosition { offset, position } = *entry;
        if let Some(p) = prev {
            if offset <= p.offset || position <= p.position {
                sink.event(Event::Problem(Problem::OffsetIndexOutOfOrder {
                    path: abs.clone(),
                    slot,
                    offset,
                    position,
                    prev_offset: p.offset,
                    prev_position: p.position,
                }));
            }
        }
        prev = Some(*entry);
        let pos = u64::from(position);
        if pos > log_len {
            sink.event(Event::Problem(Problem::IndexEntryUnreadable {
                path: abs.clone(),
                slot,
                offset,
                position: pos,
                reason: format!("position is past the end of the log ({log_len} bytes)"),
            }));
        } else {
            let end = pos.saturating_add(opts.max_message_size);
            match first_batch_at(&mut reader, pos, end) {
                Err(reason) => sink.event(Event::Problem(Problem::IndexEntryUnreadable {
                    path: abs.clone(),
                    slot,
                    offset,
                    position: pos,
                    reason,
                })),
                Ok(batch) => {
                    let first_last = batch.last_offset();
                    if first_last != offset {
                        let chunk = !opts.kafka_strict
                            && offset > first_last
                            && matches!(search(&mut reader, offset, pos),
                                        Found::Batch(_, last, _) if last == offset);
                        if chunk {
                            sink.event(Event::Note(Note::ChunkOffsetEntry {
                                path: abs.clone(),
                                slot,
                                offset,
                                position,
                                first_batch_last_offset: first_last,
                            }));
                        } else {
                            sink.event(Event::Problem(Problem::OffsetMismatch {
                                path: abs.clone(),
                                slot,
                                index_offset: offset,
                                position,
                                log_offset: first_last,
                            }));
                        }
                    }
                }
            }
        }
        if opts.prints_entries() {
            sink.event(Event::OffsetEntry {
                slot,
                offset,
                position,
            });
        }
    }
    if used < slots.len() {
        sink.event(Event::Note(Note::ZeroFilledTail {
            path: abs,
            slot: used,
            unused_slots: slots.len() - used,
        }));
    }
    sink.progress(bytes.len() as u64);
}

/// Kafka `OffsetIndex.lookup` over the used entries: the position of the largest entry
/// with offset ≤ target, else `(base, 0)`.
fn lookup(entries: &[OffsetPosition], target: i64) -> u64 {
    let n = entries.partition_point(|e| e.offset <= target);
    if n == 0 {
        0
    } else {
        u64::from(entries[n - 1].position)
    }
}

/// The timestamp of the record at `offset` in the batch at `position`, and the batch's
/// max record timestamp.
fn record_timestamps(
    reader: &mut LogReader,
    position: u64,
    offset: i64,
    limit: usize,
) -> Result<(Option<i64>, i64), String> {
    let batch = first_batch_at(reader, position, u64::MAX)?;
    let mut at = None;
    let mut max = crate::record::NO_TIMESTAMP;
    for r in batch.records_with_limit(limit).map_err(|e| reason_of(&e))? {
        let r = r.map_err(|e| reason_of(&e))?;
        if r.offset == offset {
            at = Some(r.timestamp);
        }
        max = max.max(r.timestamp);
    }
    Ok((at, max))
}

/// Time index dump (kafka-behaviour §12 "Time index dump").
pub(crate) fn dump_time_index(path: &Path, opts: &DumpOptions, sink: &mut dyn Sink) {
    let Some(base) = super::base_offset_of(path, sink) else {
        return;
    };
    let Some(bytes) = super::read_small(path, sink) else {
        return;
    };
    let abs = absolute(path);
    if opts.index_sanity_check {
        // Kafka does not special-case an empty time index here.
        let result = TimeIndex::open_read_only(path, base).and_then(|i| i.sanity_check());
        match result {
            Ok(()) => sink.event(Event::SanityPassed {
                path: path.to_path_buf(),
            }),
            Err(e) => sink.event(Event::Problem(Problem::SanityCheckFailed {
                path: abs,
                reason: e.to_string(),
            })),
        }
        sink.progress(bytes.len() as u64);
        return;
    }
    let slots = time_slots(&bytes, base);
    if slots.is_empty() {
        sink.progress(bytes.len() as u64);
        return;
    }
    let Some(mut reader) = open_log(path, sink) else {
        return;
    };
    let index_path = sibling(path, ".index");
    let offset_entries = match super::read_regular(&index_path) {
        Ok(b) => {
            let all = offset_slots(&b, base);
            let used = used_slots(all.iter().map(|e| e.offset), base);
            all[..used].to_vec()
        }
        Err(_) => {
            sink.event(Event::Note(Note::MissingOffsetIndex { path: abs.clone() }));
            Vec::new()
        }
    };
    let used = used_slots(slots.iter().map(|s| s.offset), base);
    let mut prev_ts = crate::record::NO_TIMESTAMP;
    let mut prev_offset: Option<i64> = None;
    for (slot, entry) in slots.iter().take(used).enumerate() {
        let TimestampOffset { timestamp, offset } = *entry;
        if let Some(p) = prev_offset {
            if offset < p {
                sink.event(Event::Problem(Problem::TimeIndexOffsetOutOfOrder {
                    path: abs.clone(),
                    slot,
                    offset,
                    prev_offset: p,
                }));
            }
        }
        prev_offset = Some(offset);
        let start = lookup(&offset_entries, offset);
        let out_of_order = |sink: &mut dyn Sink| {
            if prev_ts >= timestamp {
                sink.event(Event::Problem(Problem::OutOfOrderTimestamp {
                    path: abs.clone(),
                    slot,
                    index_timestamp: timestamp,
                    prev_timestamp: prev_ts,
                }));
            }
        };
        match search(&mut reader, offset, start) {
            Found::Error(reason) => sink.event(Event::Problem(Problem::IndexEntryUnreadable {
                path: abs.clone(),
                slot,
                offset,
                position: start,
                reason,
            })),
            Found::None => sink.event(Event::Problem(Problem::ShallowOffsetNotFound {
                path: abs.clone(),
                slot,
                index_offset: offset,
                log_offset: -1,
            })),
            Found::Batch(batch_base, last, pos) if last != offset => {
                let record_level = !opts.kafka_strict
                    && batch_base <= offset
                    && matches!(record_timestamps(&mut reader, pos, offset, opts.max_decompressed_bytes()),
                                Ok((Some(ts), _)) if ts == timestamp);
                if record_level {
                    sink.event(Event::Note(Note::RecordLevelTimeEntry {
                        path: abs.clone(),
                        slot,
                        timestamp,
                        offset,
                        batch_last_offset: last,
                    }));
                    out_of_order(sink);
                } else {
                    sink.event(Event::Problem(Problem::ShallowOffsetNotFound {
                        path: abs.clone(),
                        slot,
                        index_offset: offset,
                        log_offset: last,
                    }));
                }
            }
            Found::Batch(_, _, pos) => {
                match record_timestamps(&mut reader, pos, offset, opts.max_decompressed_bytes()) {
                    Err(reason) => sink.event(Event::Problem(Problem::InvalidRecord {
                        path: absolute(&sibling(path, ".log")),
                        position: pos,
                        reason,
                    })),
                    Ok((_, max)) if max != timestamp => {
                        sink.event(Event::Problem(Problem::TimestampMismatch {
                            path: abs.clone(),
                            slot,
                            offset,
                            index_timestamp: timestamp,
                            log_timestamp: max,
                        }))
                    }
                    Ok(_) => {}
                }
                out_of_order(sink);
            }
        }
        if opts.prints_entries() {
            sink.event(Event::TimeEntry {
                slot,
                timestamp,
                offset,
            });
        }
        prev_ts = timestamp;
    }
    if used < slots.len() {
        sink.event(Event::Note(Note::ZeroFilledTail {
            path: abs,
            slot: used,
            unused_slots: slots.len() - used,
        }));
    }
    sink.progress(bytes.len() as u64);
}
