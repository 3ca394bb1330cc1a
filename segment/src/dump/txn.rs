//! Transaction index (`.txnindex`) and producer snapshot (`.snapshot`) dumps.

use std::path::Path;

use index_txn::AbortedTxn;

use super::{absolute, DumpOptions, Event, Problem, ProducerLine, Sink};

/// Transaction index dump: one entry per 34 bytes, read without opening the file for
/// writing. Checks (always, not only with `--index-sanity-check`): supported version,
/// `lastOffset ≥` the segment base offset, whole entries. With `--index-sanity-check`
/// entries are not printed and `passed sanity check` is reported.
pub(crate) fn dump_txn_index(path: &Path, opts: &DumpOptions, sink: &mut dyn Sink) {
    let Some(base) = super::base_offset_of(path, sink) else {
        return;
    };
    let Some(bytes) = super::read_small(path, sink) else {
        return;
    };
    let abs = absolute(path);
    let mut failed = false;
    for (slot, chunk) in bytes.chunks_exact(AbortedTxn::SIZE).enumerate() {
        let raw: &[u8; AbortedTxn::SIZE] = chunk.try_into().expect("chunk size");
        let txn = AbortedTxn::from_bytes(raw);
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
    let partial = bytes.len() % AbortedTxn::SIZE;
    if partial != 0 {
        failed = true;
        sink.event(Event::Problem(Problem::CorruptFile {
            path: abs.clone(),
            reason: format!(
                "file length {} is not a multiple of {} ({partial} trailing bytes)",
                bytes.len(),
                AbortedTxn::SIZE
            ),
        }));
    }
    if opts.index_sanity_check && !failed {
        sink.event(Event::SanityPassed {
            path: path.to_path_buf(),
        });
    }
    sink.progress(bytes.len() as u64);
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
/// after the CRC field).
pub(crate) fn dump_producer_snapshot(path: &Path, sink: &mut dyn Sink) {
    let Some(bytes) = super::read_small(path, sink) else {
        return;
    };
    let abs = absolute(path);
    let corrupt = |reason: String| {
        Event::Problem(Problem::CorruptFile {
            path: abs.clone(),
            reason,
        })
    };
    if bytes.len() < SNAPSHOT_HEADER {
        sink.event(corrupt(format!(
            "snapshot of {} bytes is shorter than its {SNAPSHOT_HEADER}-byte header",
            bytes.len()
        )));
        return;
    }
    let version = i16::from_be_bytes(be(&bytes, 0));
    let stored = u32::from_be_bytes(be(&bytes, 2));
    let computed = crc32c::crc32c(&bytes[6..]);
    if version != 1 {
        sink.event(corrupt(format!(
            "unsupported producer snapshot version {version}"
        )));
        return;
    }
    if stored != computed {
        sink.event(corrupt(format!(
            "snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}"
        )));
        return;
    }
    let count = i32::from_be_bytes(be(&bytes, 6));
    let body = &bytes[SNAPSHOT_HEADER..];
    if count < 0 || body.len() != count as usize * PRODUCER_ENTRY {
        sink.event(corrupt(format!(
            "{count} entries declared but {} entry bytes present",
            body.len()
        )));
        return;
    }
    for e in body.chunks_exact(PRODUCER_ENTRY) {
        let last_sequence = i32::from_be_bytes(be(e, 10));
        let offset_delta = i32::from_be_bytes(be(e, 22));
        sink.event(Event::ProducerEntry(ProducerLine {
            producer_id: i64::from_be_bytes(be(e, 0)),
            producer_epoch: i16::from_be_bytes(be(e, 8)),
            last_sequence,
            last_offset: i64::from_be_bytes(be(e, 14)),
            offset_delta,
            last_timestamp: i64::from_be_bytes(be(e, 26)),
            coordinator_epoch: i32::from_be_bytes(be(e, 34)),
            current_txn_first_offset: i64::from_be_bytes(be(e, 38)),
            first_sequence: last_sequence.wrapping_sub(offset_delta),
        }));
    }
    sink.progress(bytes.len() as u64);
}
