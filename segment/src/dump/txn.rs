//! Transaction index (`.txnindex`) and producer snapshot (`.snapshot`) dumps.

use std::path::Path;

use index_txn::AbortedTxn;

use super::reader::Slots;
use super::{absolute, Bounded, DumpOptions, Event, Problem, ProducerLine, Sink};

/// Transaction index dump: one entry per 34 bytes, read without opening the file for
/// writing. Checks (always, not only with `--index-sanity-check`): supported version,
/// `lastOffset ≥` the segment base offset, whole entries. With `--index-sanity-check`
/// entries are not printed and `passed sanity check` is reported.
pub(crate) fn dump_txn_index(path: &Path, opts: &DumpOptions, sink: &mut dyn Sink) {
    let Some(base) = super::base_offset_of(path, sink) else {
        return;
    };
    let Some((file, len)) = super::open_bounded(path, Bounded::TxnIndex, sink) else {
        return;
    };
    let mut slots = Slots::new(file, 0, len, AbortedTxn::SIZE);
    let abs = absolute(path);
    let mut failed = false;
    for slot in 0..slots.count() {
        let txn = match slots.get(slot) {
            Ok(chunk) => {
                let raw: &[u8; AbortedTxn::SIZE] = chunk.try_into().expect("chunk size");
                AbortedTxn::from_bytes(raw)
            }
            Err(e) => {
                sink.event(Event::Problem(Problem::Unreadable {
                    path: path.to_path_buf(),
                    reason: format!("read error at entry {slot}: {e}"),
                }));
                return;
            }
        };
        if !txn.is_supported_version() {
            failed = true;
            sink.event(Event::Problem(Problem::CorruptFile {
                path: abs.clone(),
                reason: format!(
                    "entry {slot}: unexpected aborted transaction version {}",
                    txn.version
                ),
            }));
        } else if txn.last_offset < base {
            failed = true;
            sink.event(Event::Problem(Problem::CorruptFile {
                path: abs.clone(),
                reason: format!(
                    "entry {slot}: last offset {} is below the segment base offset {base}",
                    txn.last_offset
                ),
            }));
        }
        if opts.prints_entries() {
            sink.event(Event::TxnEntry {
                slot,
                version: txn.version,
                producer_id: txn.producer_id,
                first_offset: txn.first_offset,
                last_offset: txn.last_offset,
                last_stable_offset: txn.last_stable_offset,
            });
        }
    }
    let partial = slots.partial_bytes();
    if partial != 0 {
        failed = true;
        sink.event(Event::Problem(Problem::CorruptFile {
            path: abs.clone(),
            reason: format!(
                "file length {len} is not a multiple of {} ({partial} trailing bytes)",
                AbortedTxn::SIZE
            ),
        }));
    }
    if opts.index_sanity_check && !failed {
        sink.event(Event::SanityPassed {
            path: path.to_path_buf(),
        });
    }
    sink.progress(len);
}

/// Size of one producer snapshot entry (version 1): pid 8, epoch 2, last seq 4, last
/// offset 8, offset delta 4, timestamp 8, coordinator epoch 4, txn first offset 8.
const PRODUCER_ENTRY: usize = 46;
/// Header: version i16, CRC-32C u32, entry count i32.
const SNAPSHOT_HEADER: usize = 10;

fn be<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b[at..at + N].try_into().expect("in bounds")
}

/// Producer state snapshot dump (`.snapshot`, version 1 with a CRC-32C of everything
/// after the CRC field), read in bounded chunks: the CRC is checked over the whole file
/// before any entry is printed, as Kafka does.
pub(crate) fn dump_producer_snapshot(path: &Path, sink: &mut dyn Sink) {
    let Some((file, len)) = super::open_bounded(path, Bounded::Snapshot, sink) else {
        return;
    };
    let abs = absolute(path);
    let corrupt = |reason: String| {
        Event::Problem(Problem::CorruptFile {
            path: abs.clone(),
            reason,
        })
    };
    let read_error = |e: std::io::Error| {
        Event::Problem(Problem::Unreadable {
            path: path.to_path_buf(),
            reason: format!("read error: {e}"),
        })
    };
    if len < SNAPSHOT_HEADER as u64 {
        sink.event(corrupt(format!(
            "snapshot of {len} bytes is shorter than its {SNAPSHOT_HEADER}-byte header"
        )));
        return;
    }
    // The CRC covers bytes 6.. (count and entries); read them a chunk at a time.
    let crc_input = Slots::new(file, 6, len, 1);
    let mut header = [0u8; SNAPSHOT_HEADER];
    if let Err(e) = crc_input.read_at(&mut header, 0) {
        sink.event(read_error(e));
        return;
    }
    let version = i16::from_be_bytes(be(&header, 0));
    let stored = u32::from_be_bytes(be(&header, 2));
    if version != 1 {
        sink.event(corrupt(format!(
            "unsupported producer snapshot version {version}"
        )));
        return;
    }
    let mut computed = 0u32;
    let mut chunk = vec![0u8; 64 << 10];
    let mut at = 6u64;
    while at < len {
        let n = (len - at).min(chunk.len() as u64) as usize;
        if let Err(e) = crc_input.read_at(&mut chunk[..n], at) {
            sink.event(read_error(e));
            return;
        }
        computed = crc32c::crc32c_append(computed, &chunk[..n]);
        at += n as u64;
    }
    if stored != computed {
        sink.event(corrupt(format!(
            "snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}"
        )));
        return;
    }
    let count = i32::from_be_bytes(be(&header, 6));
    let body = len - SNAPSHOT_HEADER as u64;
    if count < 0 || body != count as u64 * PRODUCER_ENTRY as u64 {
        sink.event(corrupt(format!(
            "{count} entries declared but {body} entry bytes present"
        )));
        return;
    }
    let mut entries = Slots::new(
        crc_input.into_file(),
        SNAPSHOT_HEADER as u64,
        len,
        PRODUCER_ENTRY,
    );
    for i in 0..entries.count() {
        let e = match entries.get(i) {
            Ok(e) => e,
            Err(err) => {
                sink.event(read_error(err));
                return;
            }
        };
        let last_sequence = i32::from_be_bytes(be(e, 10));
        let offset_delta = i32::from_be_bytes(be(e, 22));
        let line = ProducerLine {
            producer_id: i64::from_be_bytes(be(e, 0)),
            producer_epoch: i16::from_be_bytes(be(e, 8)),
            last_sequence,
            last_offset: i64::from_be_bytes(be(e, 14)),
            offset_delta,
            last_timestamp: i64::from_be_bytes(be(e, 26)),
            coordinator_epoch: i32::from_be_bytes(be(e, 34)),
            current_txn_first_offset: i64::from_be_bytes(be(e, 38)),
            first_sequence: last_sequence.wrapping_sub(offset_delta),
        };
        sink.event(Event::ProducerEntry(line));
    }
    sink.progress(len);
}
