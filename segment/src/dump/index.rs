//! Offset and time index dumps and their verification against the `.log` (docs/kafka-behaviour.md#dump-log-segments).

use std::path::Path;

use index_offset::{OffsetIndex, OffsetPosition, RawOffsetEntry};
use index_time::{RawTimeEntry, TimeIndex, TimestampOffset};

use super::reader::{reason_of, LogReader, Slots, Step};
use super::{absolute, sibling, Bounded, DumpOptions, Event, Note, Problem, Sink};
use crate::record::{FileBatch, StopReason};

const OFFSET_ENTRY: usize = 8;
const TIME_ENTRY: usize = 12;

fn offset_entry(bytes: &[u8], base: i64) -> OffsetPosition {
    bytemuck::pod_read_unaligned::<RawOffsetEntry>(bytes).decode(base)
}

fn time_entry(bytes: &[u8], base: i64) -> TimestampOffset {
    bytemuck::pod_read_unaligned::<RawTimeEntry>(bytes).decode(base)
}

/// Entries of Kafka's warm section of an offset index (8 KiB of 8-byte entries): its
/// lookups search them first.
const WARM_ENTRIES: usize = 8192 / 8;

/// Kafka `OffsetIndex.lookup` over a time index's `.index`, slot for slot, reading only the
/// slots the search visits: the entries are the whole file's (a zero-filled tail
/// included: Kafka counts the file length over 8), and the search is Kafka's bisection
/// (the warm section of the last [`WARM_ENTRIES`] entries first when its first key is
/// below the target, an equal key answering at once), so that an index whose keys do not
/// increase is answered as Kafka answers it (`segment/tests/dump/inconsistent`).
///
/// The keys a search visits are remembered (at most [`MEMO_KEYS`]): the first levels of
/// every bisection visit the same slots, and the deeper levels are close together, inside
/// the one chunk [`Slots`] holds, so a lookup costs few reads however large the index.
struct OffsetLookup {
    slots: Option<Slots>,
    base: i64,
    memo: std::collections::HashMap<usize, i64>,
}

/// At most this many keys of an offset index are remembered by [`OffsetLookup`] (about
/// 1 MiB).
const MEMO_KEYS: usize = 1 << 16;

impl OffsetLookup {
    /// No offset index: every lookup answers position 0.
    fn none(base: i64) -> Self {
        OffsetLookup {
            slots: None,
            base,
            memo: Default::default(),
        }
    }

    fn new(slots: Slots, base: i64) -> Self {
        OffsetLookup {
            slots: Some(slots),
            base,
            memo: Default::default(),
        }
    }

    /// The position of the slot Kafka's lookup answers for `target`, else 0.
    fn lookup(&mut self, target: i64) -> std::io::Result<u64> {
        let base = self.base;
        let Some(slots) = self.slots.as_mut() else {
            return Ok(0);
        };
        let entries = slots.count();
        if entries == 0 {
            return Ok(0);
        }
        let memo = &mut self.memo;
        let mut key = |i: usize| -> std::io::Result<i64> {
            if let Some(&k) = memo.get(&i) {
                return Ok(k);
            }
            let k = offset_entry(slots.get(i)?, base).offset;
            if memo.len() < MEMO_KEYS {
                memo.insert(i, k);
            }
            Ok(k)
        };
        let first_hot = entries.saturating_sub(1 + WARM_ENTRIES);
        let (mut lo, mut hi) = if key(first_hot)? < target {
            (first_hot, entries - 1)
        } else if key(0)? > target {
            return Ok(0);
        } else {
            (0, first_hot)
        };
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            let k = key(mid)?;
            if k > target {
                hi = mid - 1;
            } else if k < target {
                lo = mid;
            } else {
                lo = mid;
                break;
            }
        }
        Ok(u64::from(offset_entry(slots.get(lo)?, base).position))
    }
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
        Ok(Step::TooLarge { size, .. }) => Err(format!(
            "the batch there declares {size} bytes, more than --max-message-size"
        )),
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
            Ok(Step::TooLarge { position, size }) => {
                return Found::Error(format!(
                    "the batch at position {position} declares {size} bytes, more than --max-message-size"
                ))
            }
            Ok(Step::Stop(_)) => return Found::None,
        }
    }
}

fn open_log(index: &Path, opts: &DumpOptions, sink: &mut dyn Sink) -> Option<LogReader> {
    let log = sibling(index, ".log");
    match LogReader::open(&log, u64::MAX, opts.max_message_size) {
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

/// Offset index dump (docs/kafka-behaviour.md#dump-log-segments "Offset index dump"), reading the index in
/// bounded chunks.
pub(crate) fn dump_offset_index(path: &Path, opts: &DumpOptions, sink: &mut dyn Sink) {
    let Some(base) = super::base_offset_of(path, sink) else {
        return;
    };
    let Some((file, len)) = super::open_bounded(path, Bounded::Index, sink) else {
        return;
    };
    let mut slots = Slots::new(file, 0, len, OFFSET_ENTRY);
    let abs = absolute(path);
    let count = slots.count();
    if count == 0 {
        sink.event(Event::IndexEmpty {
            path: path.to_path_buf(),
        });
        sink.progress(len);
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
        sink.progress(len);
        return;
    }
    let Some(mut reader) = open_log(path, opts, sink) else {
        return;
    };
    let log_len = reader.file_len();
    let mut prev: Option<OffsetPosition> = None;
    let mut used = count;
    for slot in 0..count {
        let entry = match slots.get(slot) {
            Ok(b) => offset_entry(b, base),
            Err(e) => {
                sink.event(unreadable(path, format!("read error at entry {slot}: {e}")));
                return;
            }
        };
        // Kafka's stop rule: the zero-filled tail starts at the first slot after the
        // first whose offset is the base offset.
        if slot > 0 && entry.offset == base {
            used = slot;
            break;
        }
        let OffsetPosition { offset, position } = entry;
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
        prev = Some(entry);
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
    if used < count {
        sink.event(Event::Note(Note::ZeroFilledTail {
            path: abs,
            slot: used,
            unused_slots: count - used,
        }));
    }
    sink.progress(len);
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

/// Time index dump (docs/kafka-behaviour.md#dump-log-segments "Time index dump"), reading the time index in
/// bounded chunks and looking entries up through [`OffsetLookup`] (Kafka's search).
pub(crate) fn dump_time_index(path: &Path, opts: &DumpOptions, sink: &mut dyn Sink) {
    let Some(base) = super::base_offset_of(path, sink) else {
        return;
    };
    let Some((file, len)) = super::open_bounded(path, Bounded::Index, sink) else {
        return;
    };
    let mut slots = Slots::new(file, 0, len, TIME_ENTRY);
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
        sink.progress(len);
        return;
    }
    let count = slots.count();
    if count == 0 {
        sink.progress(len);
        return;
    }
    let Some(mut reader) = open_log(path, opts, sink) else {
        return;
    };
    let index_path = sibling(path, ".index");
    let mut offsets = match super::open_bounded_io(&index_path, Bounded::Index) {
        Ok((f, l)) => OffsetLookup::new(Slots::new(f, 0, l, OFFSET_ENTRY), base),
        Err(reason) => {
            let too_large = std::fs::metadata(&index_path)
                .is_ok_and(|m| m.is_file() && m.len() > super::MAX_INDEX_FILE_BYTES);
            if too_large {
                sink.event(unreadable(&index_path, reason));
            } else {
                sink.event(Event::Note(Note::MissingOffsetIndex { path: abs.clone() }));
            }
            OffsetLookup::none(base)
        }
    };
    let mut used = count;
    let mut prev_ts = crate::record::NO_TIMESTAMP;
    let mut prev_offset: Option<i64> = None;
    for slot in 0..count {
        let entry = match slots.get(slot) {
            Ok(b) => time_entry(b, base),
            Err(e) => {
                sink.event(unreadable(path, format!("read error at entry {slot}: {e}")));
                return;
            }
        };
        if slot > 0 && entry.offset == base {
            used = slot;
            break;
        }
        let TimestampOffset { timestamp, offset } = entry;
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
        let start = match offsets.lookup(offset) {
            Ok(p) => p,
            Err(e) => {
                sink.event(unreadable(&index_path, format!("read error: {e}")));
                return;
            }
        };
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
    if used < count {
        sink.event(Event::Note(Note::ZeroFilledTail {
            path: abs,
            slot: used,
            unused_slots: count - used,
        }));
    }
    sink.progress(len);
}
