//! Transaction index (`.txnindex`) and producer snapshot (`.snapshot`) dumps.

use std::path::Path;

use index_txn::AbortedTxn;

use super::reader::Slots;
use super::{absolute, Bounded, Event, Problem, ProducerLine, Sink};
use crate::producer::snapshot::{
    decode_snapshot_entry, decode_snapshot_header, SnapshotHeader, CRC_START, SNAPSHOT_ENTRY_BYTES,
    SNAPSHOT_HEADER_BYTES, SNAPSHOT_VERSION,
};

/// Transaction index dump: one entry per 34 bytes, read without opening the file for
/// writing. Checks (always, not only with `--index-sanity-check`): supported version,
/// `lastOffset ≥` the segment base offset, whole entries. Entries are printed in every
/// mode, as Kafka prints them (its `--verify-index-only` and `--index-sanity-check` only
/// concern `.index` and `.timeindex`), and no `passed sanity check` line is printed.
pub(crate) fn dump_txn_index(path: &Path, sink: &mut dyn Sink) {
    let Some(base) = super::base_offset_of(path, sink) else {
        return;
    };
    let Some((file, len)) = super::open_bounded(path, Bounded::TxnIndex, sink) else {
        return;
    };
    let mut slots = Slots::new(file, 0, len, AbortedTxn::SIZE);
    let abs = absolute(path);
    for slot in 0..slots.count() {
        let txn = match slots.get_array::<{ AbortedTxn::SIZE }>(slot) {
            Ok(raw) => AbortedTxn::from_bytes(raw),
            Err(e) => {
                sink.event(Event::Problem(Problem::Unreadable {
                    path: path.to_path_buf(),
                    reason: format!("read error at entry {slot}: {e}"),
                }));
                return;
            }
        };
        if !txn.is_supported_version() {
            sink.event(Event::Problem(Problem::CorruptFile {
                path: abs.clone(),
                reason: format!(
                    "entry {slot}: unexpected aborted transaction version {}",
                    txn.version
                ),
            }));
        } else if txn.last_offset < base {
            sink.event(Event::Problem(Problem::CorruptFile {
                path: abs.clone(),
                reason: format!(
                    "entry {slot}: last offset {} is below the segment base offset {base}",
                    txn.last_offset
                ),
            }));
        }
        // Printed in every mode, as Kafka does (its `--verify-index-only` and
        // `--index-sanity-check` only concern `.index` and `.timeindex` files).
        sink.event(Event::TxnEntry {
            slot,
            version: txn.version,
            producer_id: txn.producer_id,
            first_offset: txn.first_offset,
            last_offset: txn.last_offset,
            last_stable_offset: txn.last_stable_offset,
        });
    }
    let partial = slots.partial_bytes();
    if partial != 0 {
        sink.event(Event::Problem(Problem::CorruptFile {
            path: abs.clone(),
            reason: format!(
                "file length {len} is not a multiple of {} ({partial} trailing bytes)",
                AbortedTxn::SIZE
            ),
        }));
    }
    sink.progress(len);
}

/// The first sequence of a batch from its last sequence and offset delta, as Kafka derives
/// it: sequences wrap from `i32::MAX` to 0, so a last sequence below the delta (−1, "no
/// sequence", among them) counts back from `i32::MAX`.
fn first_sequence(last_sequence: i32, offset_delta: i32) -> i32 {
    let (last, delta) = (i64::from(last_sequence), i64::from(offset_delta));
    let first = if last < delta {
        i64::from(i32::MAX) - (delta - last) + 1
    } else {
        last - delta
    };
    i32::try_from(first).unwrap_or(i32::MAX)
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
    if len < SNAPSHOT_HEADER_BYTES as u64 {
        sink.event(corrupt(format!(
            "snapshot of {len} bytes is shorter than its {SNAPSHOT_HEADER_BYTES}-byte header"
        )));
        return;
    }
    // The CRC covers bytes 6.. (count and entries); read them a chunk at a time.
    let crc_input = Slots::new(file, CRC_START as u64, len, 1);
    let mut header = [0u8; SNAPSHOT_HEADER_BYTES];
    if let Err(e) = crc_input.read_at(&mut header, 0) {
        sink.event(read_error(e));
        return;
    }
    let SnapshotHeader {
        version,
        crc: stored,
        count,
    } = decode_snapshot_header(&header);
    if version != SNAPSHOT_VERSION {
        sink.event(corrupt(format!(
            "unsupported producer snapshot version {version}"
        )));
        return;
    }
    let mut computed = 0u32;
    let mut chunk = vec![0u8; 64 << 10];
    let mut at = CRC_START as u64;
    while at < len {
        let n = (len - at).min(chunk.len() as u64) as usize;
        chunk.truncate(n); // shrinks only for the last, short chunk
        if let Err(e) = crc_input.read_at(&mut chunk, at) {
            sink.event(read_error(e));
            return;
        }
        computed = crc32c::crc32c_append(computed, &chunk);
        at += n as u64;
    }
    if stored != computed {
        sink.event(corrupt(format!(
            "snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}"
        )));
        return;
    }
    let body = len - SNAPSHOT_HEADER_BYTES as u64;
    if count < 0 || body != count as u64 * SNAPSHOT_ENTRY_BYTES as u64 {
        sink.event(corrupt(format!(
            "{count} entries declared but {body} entry bytes present"
        )));
        return;
    }
    let mut entries = Slots::new(
        crc_input.into_file(),
        SNAPSHOT_HEADER_BYTES as u64,
        len,
        SNAPSHOT_ENTRY_BYTES,
    );
    for i in 0..entries.count() {
        let e = match entries.get_array::<SNAPSHOT_ENTRY_BYTES>(i) {
            Ok(e) => decode_snapshot_entry(e),
            Err(err) => {
                sink.event(read_error(err));
                return;
            }
        };
        let line = ProducerLine {
            producer_id: e.producer_id,
            producer_epoch: e.producer_epoch,
            last_sequence: e.last_sequence,
            last_offset: e.last_offset,
            offset_delta: e.offset_delta,
            last_timestamp: e.timestamp,
            coordinator_epoch: e.coordinator_epoch,
            current_txn_first_offset: e.current_txn_first_offset,
            first_sequence: first_sequence(e.last_sequence, e.offset_delta),
        };
        sink.event(Event::ProducerEntry(line));
    }
    sink.progress(len);
}

#[cfg(test)]
// Tests may unwrap, index and panic: a panic is how a test reports a failure.
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]
mod tests {
    use super::*;
    use crate::dump::Collect;
    use crate::producer::snapshot::encode_snapshot;

    /// The reasons of the corrupt-file problems and the producer lines the dump reports
    /// for a `.snapshot` holding `bytes`.
    fn dump(bytes: &[u8]) -> (Vec<String>, Vec<ProducerLine>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000007.snapshot");
        std::fs::write(&path, bytes).unwrap();
        let mut sink = Collect::default();
        dump_producer_snapshot(&path, &mut sink);
        let (mut reasons, mut lines) = (Vec::new(), Vec::new());
        for e in sink.0 {
            match e {
                Event::Problem(Problem::CorruptFile { reason, .. }) => reasons.push(reason),
                Event::ProducerEntry(l) => lines.push(l),
                other => panic!("unexpected event {other:?}"),
            }
        }
        (reasons, lines)
    }

    #[test]
    fn snapshot_dump_lines_and_errors() {
        let e = crate::producer::snapshot::example_entry();
        let good = encode_snapshot(&[e]);
        let (reasons, lines) = dump(&good);
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!(
            lines,
            [ProducerLine {
                producer_id: 3,
                producer_epoch: 0,
                coordinator_epoch: -1,
                current_txn_first_offset: -1,
                last_timestamp: 1_713_533_745_000,
                first_sequence: 20,
                last_sequence: 25,
                last_offset: 25,
                offset_delta: 5,
            }]
        );

        assert_eq!(
            dump(&good[..9]).0,
            ["snapshot of 9 bytes is shorter than its 10-byte header"]
        );
        let mut v2 = good.clone();
        v2[1] = 2;
        assert_eq!(dump(&v2).0, ["unsupported producer snapshot version 2"]);
        let mut flipped = good.clone();
        flipped[20] ^= 1;
        let stored = u32::from_be_bytes(good[2..6].try_into().unwrap());
        let computed = crc32c::crc32c(&flipped[6..]);
        assert_eq!(
            dump(&flipped).0,
            [format!(
                "snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}"
            )]
        );
        // A count that does not match the length, with a valid CRC.
        let mut short = good[..good.len() - 1].to_vec();
        let crc = crc32c::crc32c(&short[6..]);
        short[2..6].copy_from_slice(&crc.to_be_bytes());
        assert_eq!(
            dump(&short).0,
            ["1 entries declared but 45 entry bytes present"]
        );
    }
}
