//! The Rust side of the comparisons: what this workspace's crates answer about a partition
//! directory (records, offsets for timestamps, read-committed visibility, index rebuilds,
//! `dump-log --verify-index-only`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use segment::dump::rebuild::{rebuild, Comparison, RebuildOptions};
use segment::dump::{self, Collect, DumpOptions};
use segment::record::{ControlRecordType, Record, RecordBatch};
use segment::{Log, LogConfig};

/// One record as the comparisons see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rec {
    pub offset: i64,
    pub timestamp: i64,
    pub hash: u32,
}

/// One batch, as far as the read-committed rule needs it.
#[derive(Clone, Debug)]
pub struct Batch {
    pub last_offset: i64,
    pub producer_id: i64,
    pub transactional: bool,
    /// `Some(abort?)` for a transaction marker.
    pub marker: Option<bool>,
    pub control: bool,
    pub compression: u8,
    pub records: Vec<Rec>,
}

/// The content hash of the Java helper (`Answers.hash`): CRC-32 of key, value and headers,
/// each nullable part prefixed by 0 (null) or 1, the header count as 4 big-endian bytes.
pub fn record_hash(r: &Record<'_>) -> u32 {
    let headers: Vec<(&[u8], Option<&[u8]>)> = r
        .headers
        .iter()
        .map(|h| (&h.key[..], h.value.as_deref()))
        .collect();
    content_hash(r.key(), r.value(), &headers)
}

/// [`record_hash`] of a record's parts, as a producer hands them over (the generator's side
/// of a comparison).
pub fn content_hash(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&[u8], Option<&[u8]>)],
) -> u32 {
    let mut h = crc32fast::Hasher::new();
    let nullable = |h: &mut crc32fast::Hasher, b: Option<&[u8]>| match b {
        None => h.update(&[0]),
        Some(b) => {
            h.update(&[1]);
            h.update(b);
        }
    };
    nullable(&mut h, key);
    nullable(&mut h, value);
    h.update(&(headers.len() as u32).to_be_bytes());
    for (k, v) in headers {
        nullable(&mut h, Some(k));
        nullable(&mut h, *v);
    }
    h.finalize()
}

/// Opens the partition with our [`Log`] and reads every batch through [`Log::read`],
/// checking every CRC. Returns the log and its batches.
pub fn read_log(dir: &Path, config: LogConfig) -> Result<(Log, Vec<Batch>), String> {
    let log = Log::open(dir, config).map_err(|e| format!("Log::open {dir:?}: {e}"))?;
    let mut batches = Vec::new();
    let mut offset = log.log_start_offset();
    let leo = log.log_end_offset();
    while offset < leo {
        let info = log
            .read(offset, 1 << 20)
            .map_err(|e| format!("read {dir:?} at {offset}: {e}"))?;
        if info.records.is_empty() {
            return Err(format!(
                "read {dir:?} at {offset}: nothing returned below the log end {leo}"
            ));
        }
        let mut pos = 0usize;
        let before = offset;
        while pos < info.records.len() {
            let Ok(b) = RecordBatch::at(&info.records[pos..], pos as u64) else {
                break; // a batch cut by max_bytes: read on from its offset
            };
            b.ensure_valid()
                .map_err(|e| format!("{dir:?}: batch at offset {}: {e}", b.base_offset()))?;
            pos += b.size_in_bytes();
            if b.last_offset() < offset {
                continue;
            }
            let mut recs = Vec::new();
            let mut marker = None;
            for r in b.records().map_err(|e| e.to_string())? {
                let r = r.map_err(|e| format!("{dir:?}: record: {e}"))?;
                if b.is_control_batch() {
                    match ControlRecordType::parse_key(r.key(), 0) {
                        Ok(ControlRecordType::Abort) => marker = Some(true),
                        Ok(ControlRecordType::Commit) => marker = Some(false),
                        _ => {}
                    }
                }
                recs.push(Rec {
                    offset: r.offset,
                    timestamp: r.timestamp,
                    hash: record_hash(&r),
                });
            }
            offset = b.next_offset();
            batches.push(Batch {
                last_offset: b.last_offset(),
                producer_id: b.producer_id(),
                transactional: b.is_transactional(),
                marker,
                control: b.is_control_batch(),
                compression: b.attributes().compression_id(),
                records: recs,
            });
        }
        if offset == before {
            // Nothing parsable at the read position: a failure, never a loop.
            return Err(format!(
                "read {dir:?} at {offset}: {} bytes returned, but no whole batch at or above {offset} parses",
                info.records.len()
            ));
        }
    }
    Ok((log, batches))
}

/// The offsets a read_committed consumer returns, computed as Kafka's fetcher does from the
/// aborted transactions our [`Log::collect_aborted_txns`] lists for the whole log: a
/// transactional batch of a producer whose aborted transaction began at or before it (and
/// whose ABORT marker was not yet passed) is skipped; control batches are never returned;
/// nothing at or above the last stable offset (an open transaction) is returned.
pub fn read_committed(log: &Log, batches: &[Batch]) -> Result<Vec<i64>, String> {
    // A read_committed consumer reads up to the last stable offset: an open transaction's
    // records (and everything after its first offset) are not returned yet.
    let lso = log.last_stable_offset();
    let mut aborted = log
        .collect_aborted_txns(log.log_start_offset(), log.log_end_offset())
        .map_err(|e| e.to_string())?;
    aborted.sort_by_key(|a| a.first_offset);
    let mut next = 0usize;
    let mut open: HashSet<i64> = HashSet::new();
    let mut out = Vec::new();
    for b in batches {
        while next < aborted.len() && aborted[next].first_offset <= b.last_offset {
            open.insert(aborted[next].producer_id);
            next += 1;
        }
        if b.control {
            if b.marker == Some(true) {
                open.remove(&b.producer_id);
            }
            continue;
        }
        if b.transactional && open.contains(&b.producer_id) {
            continue;
        }
        out.extend(b.records.iter().map(|r| r.offset).filter(|&o| o < lso));
    }
    Ok(out)
}

/// Our rebuild of every segment's indexes (`dump-log --rebuild-indexes-to`), compared with
/// the files next to each `.log`. Returns (files compared, differences, notes).
///
/// One difference is justified and becomes a note, in exactly the case it exists for: the
/// KRaft metadata log's (`__cluster_metadata-0`) active segment, which the broker never
/// closes on shutdown, so its indexes stay preallocated. There, an existing `.index` whose
/// used entries are exactly ours, or a `.timeindex` whose used entries are ours but for one
/// more of ours that is the segment's max-timestamp entry (the one Kafka's
/// `LogSegment.close`/`onBecomeInactiveSegment` appends, checked against the `.log`), each
/// followed by zero bytes only. Kafka reads such a file as a full index of `(base, 0)`
/// slots and so do we. Anywhere else, any difference is a difference.
pub fn rebuild_compare(
    dir: &Path,
    out: &Path,
    index_interval_bytes: u64,
) -> Result<(usize, Vec<String>, Vec<String>), String> {
    let logs = log_files(dir)?;
    let metadata_log = dir.file_name().is_some_and(|n| n == "__cluster_metadata-0");
    let active = logs.last().cloned();
    let reports = rebuild(
        &logs,
        &RebuildOptions {
            out_dir: out.to_path_buf(),
            index_interval_bytes,
            force: false,
        },
    )?;
    let mut compared = 0;
    let mut diffs = Vec::new();
    let mut notes = Vec::new();
    for r in &reports {
        if r.is_failure() {
            diffs.push(r.render());
            continue;
        }
        for f in &r.files {
            compared += 1;
            match &f.comparison {
                Comparison::Identical => {}
                other => {
                    let existing = std::fs::read(&f.existing).unwrap_or_default();
                    let rebuilt = f
                        .written
                        .as_ref()
                        .and_then(|w| std::fs::read(w).ok())
                        .unwrap_or_default();
                    // The used prefix: up to the last non-zero byte, rounded up to
                    // whole entries.
                    let entry = if f.file_type == segment::dump::FileType::TimeIndex {
                        12
                    } else {
                        8
                    };
                    let used = existing
                        .iter()
                        .rposition(|&b| b != 0)
                        .map_or(0, |p| (p / entry + 1) * entry);
                    let untrimmed = existing.len() > rebuilt.len()
                        && existing[used..].iter().all(|&b| b == 0)
                        && rebuilt.starts_with(&existing[..used]);
                    let of_active = active
                        .as_ref()
                        .is_some_and(|a| a.with_extension("") == f.existing.with_extension(""));
                    let extra_ok = match f.file_type {
                        segment::dump::FileType::OffsetIndex => rebuilt.len() == used,
                        segment::dump::FileType::TimeIndex => {
                            rebuilt.len() == used
                                || (rebuilt.len() == used + entry
                                    && active.as_ref().is_some_and(|a| {
                                        max_timestamp_entry(a)
                                            .is_some_and(|e| rebuilt[used..] == e[..])
                                    }))
                        }
                        _ => false,
                    };
                    if untrimmed && metadata_log && of_active && extra_ok {
                        let extra = if rebuilt.len() > used {
                            " (the extra one: the max-timestamp entry Kafka's close/roll adds)"
                        } else {
                            ""
                        };
                        notes.push(format!(
                            "{}: an index the broker never closed: preallocated ({} bytes, untrimmed), {} entries; ours has {}{extra}",
                            f.existing.display(),
                            existing.len(),
                            used / entry,
                            rebuilt.len() / entry
                        ));
                    } else {
                        diffs.push(format!("{}: {other:?}", f.existing.display()));
                    }
                }
            }
        }
    }
    Ok((compared, diffs, notes))
}

/// The time-index entry Kafka's `LogSegment.close` appends for the segment `log`: the
/// largest batch max timestamp (the first batch to reach it) and that batch's last offset,
/// relative to the segment's base offset; 12 bytes, big-endian. `None` when the `.log`
/// cannot be read whole.
fn max_timestamp_entry(log: &Path) -> Option<[u8; 12]> {
    let bytes = std::fs::read(log).ok()?;
    let base: i64 = log.file_stem()?.to_str()?.parse().ok()?;
    let mut pos = 0usize;
    let mut max: Option<(i64, i64)> = None;
    while pos < bytes.len() {
        let b = RecordBatch::at(bytes.get(pos..)?, pos as u64).ok()?;
        if max.is_none_or(|(t, _)| b.max_timestamp() > t) {
            max = Some((b.max_timestamp(), b.last_offset()));
        }
        pos += b.size_in_bytes();
    }
    let (ts, offset) = max?;
    let mut e = [0u8; 12];
    e[..8].copy_from_slice(&ts.to_be_bytes());
    e[8..].copy_from_slice(&i32::try_from(offset - base).ok()?.to_be_bytes());
    Some(e)
}

/// The `.log` files of a partition directory, in offset order.
pub fn log_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{dir:?}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    Ok(logs)
}

/// `dump-log --verify-index-only DIR` (or another option set): the problems found.
pub fn dump_problems(dir: &Path, opts: &DumpOptions) -> Vec<String> {
    let mut sink = Collect::default();
    let summary = dump::run(&[dir.to_path_buf()], opts, &mut sink);
    let mut out: Vec<String> = sink
        .problems()
        .iter()
        .filter(|p| p.is_failure())
        .map(|p| format!("{p:?}"))
        .collect();
    if summary.failures > 0 && out.is_empty() {
        out.push(format!("{summary:?}"));
    }
    out
}

/// Recursively copies a directory.
pub fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{to:?}: {e}"))?;
    for e in std::fs::read_dir(from).map_err(|e| format!("{from:?}: {e}"))? {
        let e = e.map_err(|e| e.to_string())?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().map_err(|e| e.to_string())?.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| format!("copy {src:?}: {e}"))?;
        }
    }
    Ok(())
}

/// Partition directories (`name-N`) of a log directory, sorted.
pub fn partition_dirs(data: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(data)
        .map_err(|e| format!("{data:?}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.rsplit_once('-'))
                    .is_some_and(|(_, n)| n.parse::<u32>().is_ok())
        })
        .collect();
    out.sort();
    Ok(out)
}
