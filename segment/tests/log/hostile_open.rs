//! A hostile operator's files behind a clean-shutdown marker: lying indexes, torn,
//! padded or rewritten `.log` files, odd `.txnindex` layouts, directories and symlinks
//! named like segment files. Each attack ends as a typed error at open or as an open
//! whose reads serve exactly the records Kafka's recovery would keep (everything up to
//! the first invalid batch of the damaged segment): no panic, no wrong batch, nothing
//! valid hidden, and appends after the open survive a clean and an unclean reopen.
//!
//! The oracle is the data written, not the loader: every record written is
//! `(offset, "value-{offset}")` at timestamp `1000 + base offset of its batch`, so a
//! record served with another value, offset or timestamp is a wrong batch, and a
//! surviving record a read or a timestamp lookup skips is hidden.
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::common::*;
use segment::{Log, LogConfig, SegmentError};

const TS0: i64 = 1_000;

fn cfg(segment_bytes: u64, interval: u64, max_index_size: usize) -> LogConfig {
    LogConfig {
        segment_bytes,
        ..config(interval, max_index_size)
    }
}

/// Three segments of three 3-record batches each, about two index entries each.
fn small() -> LogConfig {
    cfg(400, 100, 10 << 20)
}

fn seg_file(dir: &Path, base: i64, ext: &str) -> PathBuf {
    dir.join(format!("{base:020}.{ext}"))
}

/// One batch as written: position and size in its `.log`, first and last offsets.
#[derive(Debug, Clone, Copy)]
struct B {
    pos: u64,
    size: u64,
    base: i64,
    last: i64,
}

/// Per segment, its base offset and its batches.
type Layout = Vec<(i64, Vec<B>)>;

/// A clean log of `batches` batches of 3 records under `c`, closed cleanly.
fn build(dir: &Path, c: &LogConfig, batches: usize) -> Layout {
    let (_t, clock) = mock();
    let log = Log::options().clock(clock).open(dir, c.clone()).unwrap();
    fill(&log, 0, batches, 3, TS0);
    let bases = log.segments().base_offsets();
    log.close().unwrap();
    assert!(dir.join(".kafka_cleanshutdown").exists());
    bases
        .into_iter()
        .map(|base| {
            let bytes = std::fs::read(seg_file(dir, base, "log")).unwrap();
            let bs = segment::record::batches_from(&bytes, 0)
                .map(|b| {
                    let b = b.unwrap();
                    B {
                        pos: b.position(),
                        size: b.size_in_bytes() as u64,
                        base: b.base_offset(),
                        last: b.last_offset(),
                    }
                })
                .collect();
            (base, bs)
        })
        .collect()
}

fn all(lay: &Layout) -> Vec<i64> {
    lay.iter()
        .flat_map(|(_, bs)| bs.iter().flat_map(|b| b.base..=b.last))
        .collect()
}

/// What Kafka's recovery of segment `k` keeps when its batch `j` is the first invalid
/// one: every offset but those of that batch and the segment's later batches.
/// Every offset but those of batch `j` of segment `k`.
fn lose_batch(lay: &Layout, k: usize, j: usize) -> Vec<i64> {
    let b = lay[k].1[j];
    all(lay)
        .into_iter()
        .filter(|o| !(b.base..=b.last).contains(o))
        .collect()
}

fn lose_from(lay: &Layout, k: usize, j: usize) -> Vec<i64> {
    let lost: Vec<i64> = lay[k].1[j..].iter().flat_map(|b| b.base..=b.last).collect();
    all(lay).into_iter().filter(|o| !lost.contains(o)).collect()
}

/// Whether the attack at hand may leave a batch that fails its checksum to be served as
/// stored (Kafka serves such a batch at a clean open; a consumer's checksum check
/// rejects it). Per test thread.
fn corrupt_ok() -> bool {
    CORRUPT_OK.with(|c| c.load(Ordering::Relaxed))
}

thread_local! {
    static CORRUPT_OK: AtomicBool = const { AtomicBool::new(false) };
}

fn ts_of(o: i64) -> i64 {
    TS0 + o - o % 3
}

fn value(o: i64) -> String {
    format!("value-{o}")
}

/// `(offset, value, timestamp)` of every record in `bytes` from offset `from`, and
/// whether the first batch fails its checksum (its records are not decoded: it may only
/// be served, as stored, when [`corrupt_ok`]); the walk stops at such a batch.
fn served_or_corrupt(bytes: &[u8], from: i64) -> (Vec<(i64, String, i64)>, Option<i64>) {
    let mut out = Vec::new();
    for b in segment::record::batches_from(bytes, 0) {
        let Ok(b) = b else { break };
        if !b.is_valid() {
            assert!(
                corrupt_ok(),
                "a batch failing its checksum served at {}",
                b.position()
            );
            return (out, Some(b.last_offset()));
        }
        for rec in b.records().unwrap() {
            let rec = rec.unwrap();
            if rec.offset >= from {
                let v = String::from_utf8_lossy(rec.value().unwrap_or_default()).into_owned();
                out.push((rec.offset, v, rec.timestamp));
            }
        }
    }
    (out, None)
}

/// Every offset the log serves, walking `read` from 0.
/// Every offset the log serves, walking `read` from 0, and the offsets whose read is a
/// typed format error (allowed only with [`corrupt_ok`]: the damaged bytes are left in
/// place by a clean open and a read that meets them says so).
fn walk_with_errors(log: &Log) -> (Vec<i64>, Vec<i64>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut o = 0;
    while o < log.log_end_offset() {
        let r = match log.read(o, 1 << 20) {
            Ok(r) => r,
            Err(SegmentError::Format { .. }) if corrupt_ok() => {
                errors.push(o);
                o += 1;
                continue;
            }
            Err(e) => panic!("read({o}): {e}"),
        };
        let (recs, corrupt) = served_or_corrupt(&r.records, o);
        let Some(last) = corrupt.or(recs.last().map(|r| r.0)) else {
            break;
        };
        out.extend(recs.iter().map(|r| r.0));
        o = last + 1;
    }
    (out, errors)
}

/// The served offsets are `expected` but for those whose read is a typed error.
fn assert_walk(log: &Log, expected: &[i64], what: &str) {
    let (got, errors) = walk_with_errors(log);
    let want: Vec<i64> = expected
        .iter()
        .copied()
        .filter(|o| !errors.contains(o))
        .collect();
    assert_eq!(got, want, "{what} (read errors at {errors:?})");
}

/// Checks an opened log against the survivors: every read from every offset, every
/// timestamp lookup; then appends and two reopens.
fn verify(dir: &Path, c: &LogConfig, log: Log, survivors: &[i64], what: &str) {
    assert_walk(&log, survivors, &format!("{what}: records served"));
    let leo = log.log_end_offset();
    let top = survivors.last().map_or(0, |o| o + 1);
    assert!(leo >= top, "{what}: log end {leo} below {top}");
    for o in 0..leo {
        let r = match log.read(o, 1 << 20) {
            Ok(r) => r,
            Err(SegmentError::Format { .. }) if corrupt_ok() => continue,
            Err(e) => panic!("{what}: read({o}): {e}"),
        };
        let (recs, corrupt) = served_or_corrupt(&r.records, o);
        for (x, v, t) in &recs {
            assert!(
                survivors.contains(x) && *v == value(*x) && *t == ts_of(*x),
                "{what}: read({o}) served a record not in the files: ({x}, {v}, {t})"
            );
        }
        let want = survivors.iter().find(|&&s| s >= o);
        if recs.is_empty() && corrupt.is_some() {
            // A stored batch that fails its checksum comes first: a consumer stops there.
            continue;
        }
        assert_eq!(
            recs.first().map(|r| r.0),
            want.copied(),
            "{what}: read({o}) skips or invents"
        );
    }
    for t in TS0 - 2..=TS0 + top + 4 {
        let want = survivors
            .iter()
            .find(|&&s| ts_of(s) >= t)
            .map(|&s| (ts_of(s), s));
        // A record of a stored batch that fails its checksum (its fields as written) may
        // come first where such a batch may be served.
        let stored = |got: Option<(i64, i64)>| {
            corrupt_ok()
                && got.is_some_and(|(ts, x)| {
                    ts == ts_of(x) && ts >= t && want.is_none_or(|w| x < w.1)
                })
        };
        let got = match log.offset_for_timestamp(t) {
            Ok(f) => f.map(|f| (f.timestamp, f.offset)),
            Err(SegmentError::Format { .. }) if corrupt_ok() => continue,
            Err(e) => panic!("{what}: offset_for_timestamp({t}): {e}"),
        };
        if !stored(got) {
            assert_eq!(got, want, "{what}: offset_for_timestamp({t})");
        }
        let got = match log.fetch_offset_by_timestamp(t) {
            Ok(f) => f.map(|f| (f.timestamp, f.offset)),
            Err(SegmentError::Format { .. }) if corrupt_ok() => continue,
            Err(e) => panic!("{what}: fetch_offset_by_timestamp({t}): {e}"),
        };
        if !stored(got) {
            assert_eq!(got, want, "{what}: fetch_offset_by_timestamp({t})");
        }
    }
    // Appends after the open: an offset below the log end is refused, the next ones
    // are readable and survive a clean and an unclean reopen.
    if leo > 0 {
        assert!(
            matches!(
                log.append(&batch(leo - 1, 1, 9_000)),
                Err(SegmentError::NonMonotonicOffset { .. })
            ),
            "{what}: offset reuse accepted"
        );
    }
    log.append(&batch(leo, 3, 9_000)).unwrap();
    let mut expected = survivors.to_vec();
    expected.extend(leo..leo + 3);
    assert_walk(&log, &expected, &format!("{what}: after an append"));
    log.close().unwrap();
    let (_t, clock) = mock();
    let log = Log::options().clock(clock).open(dir, c.clone()).unwrap();
    assert_eq!(
        log.stats().scanned_segments(),
        0,
        "{what}: the second clean open recovers nothing"
    );
    assert_walk(&log, &expected, &format!("{what}: after a clean reopen"));
    log.append(&batch(leo + 3, 2, 9_000)).unwrap();
    expected.extend(leo + 3..leo + 5);
    log.close_handlers();
    let (_t, clock) = mock();
    let log = Log::options().clock(clock).open(dir, c.clone()).unwrap();
    assert_walk(&log, &expected, &format!("{what}: after an unclean reopen"));
}

/// Opens `dir` (marker present) and checks the outcome: a typed error if `error_ok`,
/// else an open that serves one of `options`.
fn attack(dir: &Path, c: &LogConfig, options: &[Vec<i64>], error_ok: bool, what: &str) {
    attack_with(dir, c, options, error_ok, false, what);
}

fn attack_with(
    dir: &Path,
    c: &LogConfig,
    options: &[Vec<i64>],
    error_ok: bool,
    corrupt: bool,
    what: &str,
) {
    CORRUPT_OK.with(|c| c.store(corrupt, Ordering::Relaxed));
    assert!(dir.join(".kafka_cleanshutdown").exists(), "{what}: marker");
    eprintln!("attack: {what}");
    let (_t, clock) = mock();
    match Log::options().clock(clock).open(dir, c.clone()) {
        Err(e) => assert!(error_ok, "{what}: open failed: {e}"),
        Ok(log) => {
            let (got, errors) = walk_with_errors(&log);
            let Some(s) = options.iter().find(|o| {
                o.iter()
                    .copied()
                    .filter(|x| !errors.contains(x))
                    .eq(got.iter().copied())
            }) else {
                panic!("{what}: served {got:?} (read errors at {errors:?}), expected one of {options:?}");
            };
            verify(dir, c, log, &s.clone(), what);
        }
    }
}

fn write_at(path: &Path, at: u64, bytes: &[u8]) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(bytes, at).unwrap();
}

fn truncate(path: &Path, len: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(len).unwrap();
}

/// The `(relative offset, position)` entries of an offset index.
fn index_entries(path: &Path) -> Vec<(i32, i32)> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(8)
        .map(|e| {
            (
                i32::from_be_bytes(e[..4].try_into().unwrap()),
                i32::from_be_bytes(e[4..].try_into().unwrap()),
            )
        })
        .collect()
}

fn write_index(path: &Path, entries: &[(i32, i32)]) {
    let bytes: Vec<u8> = entries
        .iter()
        .flat_map(|(r, p)| r.to_be_bytes().into_iter().chain(p.to_be_bytes()))
        .collect();
    std::fs::write(path, bytes).unwrap();
}

/// The `(timestamp, relative offset)` entries of a time index.
fn time_entries(path: &Path) -> Vec<(i64, i32)> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(12)
        .map(|e| {
            (
                i64::from_be_bytes(e[..8].try_into().unwrap()),
                i32::from_be_bytes(e[8..].try_into().unwrap()),
            )
        })
        .collect()
}

fn write_time_index(path: &Path, entries: &[(i64, i32)]) {
    let bytes: Vec<u8> = entries
        .iter()
        .flat_map(|(t, r)| t.to_be_bytes().into_iter().chain(r.to_be_bytes()))
        .collect();
    std::fs::write(path, bytes).unwrap();
}

/// Runs `mutate` on a fresh clean log for the middle and the last segment (`k`), then
/// the attack.
fn on_middle_and_last(
    c: &LogConfig,
    batches: usize,
    what: &str,
    mutate: impl Fn(&Path, &Layout, usize) -> (Vec<Vec<i64>>, bool),
) {
    on_middle_and_last_with(c, batches, false, what, mutate);
}

/// [`on_middle_and_last`], a batch failing its checksum allowed to be served as stored.
fn on_middle_and_last_with(
    c: &LogConfig,
    batches: usize,
    corrupt: bool,
    what: &str,
    mutate: impl Fn(&Path, &Layout, usize) -> (Vec<Vec<i64>>, bool),
) {
    for which in ["middle", "last"] {
        let dir = tmpdir();
        let lay = build(dir.path(), c, batches);
        assert!(lay.len() >= 3, "{what}: {} segments", lay.len());
        let k = if which == "middle" { 1 } else { lay.len() - 1 };
        let (options, error_ok) = mutate(dir.path(), &lay, k);
        let what = format!("{what} ({which})");
        attack_with(dir.path(), c, &options, error_ok, corrupt, &what);
    }
}

#[test]
fn offset_index_last_entry_lies() {
    let c = small();
    // Past the end of the `.log`.
    on_middle_and_last(&c, 12, "last .index entry past the end", |dir, lay, k| {
        let p = seg_file(dir, lay[k].0, "index");
        let mut e = index_entries(&p);
        let size = std::fs::metadata(seg_file(dir, lay[k].0, "log"))
            .unwrap()
            .len();
        let l = e.last_mut().unwrap();
        l.1 = size as i32 + 10;
        write_index(&p, &e);
        (vec![all(lay)], false)
    });
    // Inside a batch, not at its start.
    for delta in [1, 8, 20, 60] {
        on_middle_and_last(
            &c,
            12,
            &format!("last .index entry +{delta}"),
            |dir, lay, k| {
                let p = seg_file(dir, lay[k].0, "index");
                let mut e = index_entries(&p);
                e.last_mut().unwrap().1 += delta;
                write_index(&p, &e);
                (vec![all(lay)], false)
            },
        );
    }
    // At an earlier batch's start than its offset's: a read starts too early (harmless)
    // but the segment's end is checked from there.
    on_middle_and_last(&c, 12, "last .index entry at batch 0", |dir, lay, k| {
        let p = seg_file(dir, lay[k].0, "index");
        let mut e = index_entries(&p);
        e.last_mut().unwrap().1 = 0;
        write_index(&p, &e);
        (vec![all(lay)], false)
    });
    // A relative offset beyond the segment's last.
    for rel in [9, 100, i32::MAX] {
        on_middle_and_last(&c, 12, &format!("last .index rel {rel}"), |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, "index");
            let mut e = index_entries(&p);
            e.last_mut().unwrap().0 = rel;
            write_index(&p, &e);
            (vec![all(lay)], false)
        });
    }
    // Negative fields.
    on_middle_and_last(&c, 12, "last .index entry negative", |dir, lay, k| {
        let p = seg_file(dir, lay[k].0, "index");
        let mut e = index_entries(&p);
        *e.last_mut().unwrap() = (-1, -1);
        write_index(&p, &e);
        (vec![all(lay)], false)
    });
}

#[test]
fn time_index_last_entry_lies() {
    let c = small();
    // Older than the first entry.
    on_middle_and_last(&c, 12, "last .timeindex entry older", |dir, lay, k| {
        let p = seg_file(dir, lay[k].0, "timeindex");
        let mut e = time_entries(&p);
        assert!(e.len() >= 2, "{e:?}");
        e.last_mut().unwrap().0 = 5;
        write_time_index(&p, &e);
        (vec![all(lay)], false)
    });
    // Later than any record of the segment: a lookup between the segment's real largest
    // timestamp and the lie must not stop at this segment.
    for ts in [TS0 + 100, i64::MAX] {
        on_middle_and_last(
            &c,
            12,
            &format!("last .timeindex ts {ts}"),
            |dir, lay, k| {
                let p = seg_file(dir, lay[k].0, "timeindex");
                let mut e = time_entries(&p);
                e.last_mut().unwrap().0 = ts;
                write_time_index(&p, &e);
                (vec![all(lay)], false)
            },
        );
    }
    // A relative offset inside the segment but not that of the timestamp's record.
    on_middle_and_last(&c, 12, "last .timeindex rel 0", |dir, lay, k| {
        let p = seg_file(dir, lay[k].0, "timeindex");
        let mut e = time_entries(&p);
        e.last_mut().unwrap().1 = 0;
        write_time_index(&p, &e);
        (vec![all(lay)], false)
    });
    // A torn entry.
    on_middle_and_last(&c, 12, "torn .timeindex", |dir, lay, k| {
        let p = seg_file(dir, lay[k].0, "timeindex");
        let mut b = std::fs::read(&p).unwrap();
        b.extend([7u8; 5]);
        std::fs::write(&p, b).unwrap();
        (vec![all(lay)], false)
    });
}

#[test]
fn log_truncated_or_padded() {
    let c = small();
    for keep in [0u64, 1, 11, 12, 30, 60] {
        on_middle_and_last(&c, 12, &format!(".log cut to {keep}"), |dir, lay, k| {
            truncate(&seg_file(dir, lay[k].0, "log"), keep);
            (vec![lose_from(lay, k, 0)], false)
        });
    }
    // Mid-batch: inside the first and inside the last batch.
    on_middle_and_last(&c, 12, ".log cut inside batch 0", |dir, lay, k| {
        let b = lay[k].1[0];
        truncate(&seg_file(dir, lay[k].0, "log"), b.pos + b.size - 1);
        (vec![lose_from(lay, k, 0)], false)
    });
    on_middle_and_last(&c, 12, ".log cut inside the last batch", |dir, lay, k| {
        let j = lay[k].1.len() - 1;
        let b = lay[k].1[j];
        truncate(&seg_file(dir, lay[k].0, "log"), b.pos + 70);
        (vec![lose_from(lay, k, j)], false)
    });
    // A preallocated (zero) tail.
    for n in [1usize, 12, 61, 4096] {
        on_middle_and_last(&c, 12, &format!(".log + {n} zeros"), |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, "log");
            let mut b = std::fs::read(&p).unwrap();
            b.extend(vec![0u8; n]);
            std::fs::write(&p, b).unwrap();
            (vec![all(lay)], false)
        });
    }
}

#[test]
fn first_batch_header_lies() {
    let c = small();
    // A base offset below the file name's (not covered by the v2 CRC): the batch's
    // offsets belong to the segment below; Kafka's recovery would keep it.
    on_middle_and_last(&c, 12, "first batch base below the name", |dir, lay, k| {
        let p = seg_file(dir, lay[k].0, "log");
        write_at(&p, 0, &(lay[k].0 - 1).to_be_bytes());
        (vec![lose_from(lay, k, 0)], true)
    });
    // A corrupt CRC: Kafka serves the batch as stored at a clean open (consumers check
    // it) and drops it at a recovery; either is allowed, a changed record is not.
    on_middle_and_last_with(&c, 12, true, "first batch CRC", |dir, lay, k| {
        let p = seg_file(dir, lay[k].0, "log");
        write_at(&p, 17, &[0xde, 0xad, 0xbe, 0xef]);
        (vec![lose_batch(lay, k, 0), lose_from(lay, k, 0)], false)
    });
    // A corrupt length field that frames no batch.
    for len in [-1i32, i32::MIN, 0, 10, 48, i32::MAX] {
        let what = format!("first batch length {len}");
        on_middle_and_last_with(&c, 12, true, &what, |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, "log");
            write_at(&p, 8, &len.to_be_bytes());
            (vec![lose_from(lay, k, 0), lose_batch(lay, k, 0)], false)
        });
    }
    // A bad magic (1 byte at position 16).
    on_middle_and_last(&c, 12, "first batch magic 7", |dir, lay, k| {
        write_at(&seg_file(dir, lay[k].0, "log"), 16, &[7]);
        // Served as stored (Kafka's clean open does not read it) or dropped.
        (vec![lose_from(lay, k, 0), all(lay)], true)
    });
}

#[test]
fn empty_log_with_indexes() {
    let c = small();
    on_middle_and_last(&c, 12, "empty .log, indexes kept", |dir, lay, k| {
        truncate(&seg_file(dir, lay[k].0, "log"), 0);
        (vec![lose_from(lay, k, 0)], false)
    });
}

#[test]
fn index_sizes_not_whole_entries() {
    let c = small();
    for (ext, n) in [
        ("index", 1usize),
        ("index", 7),
        ("timeindex", 1),
        ("timeindex", 11),
    ] {
        on_middle_and_last(&c, 12, &format!(".{ext} + {n}"), |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, ext);
            let mut b = std::fs::read(&p).unwrap();
            b.extend(vec![0x11u8; n]);
            std::fs::write(&p, b).unwrap();
            (vec![all(lay)], false)
        });
    }
}

#[test]
fn txn_index_for_one_segment_only() {
    let c = small();
    // Empty, torn, and a whole entry of garbage (version 0, last below first).
    let garbage: Vec<u8> = {
        let mut v = 0i16.to_be_bytes().to_vec();
        v.extend(7i64.to_be_bytes()); // producer id
        v.extend(5i64.to_be_bytes()); // first offset
        v.extend(1i64.to_be_bytes()); // last offset
        v.extend(0i64.to_be_bytes()); // last stable offset
        v.extend(0i32.to_be_bytes()); // abort marker
        v.extend([0u8; 2]);
        v.truncate(34);
        v
    };
    for (name, bytes) in [
        ("empty", vec![]),
        ("torn", vec![1u8; 13]),
        ("garbage", garbage),
    ] {
        on_middle_and_last(&c, 12, &format!(".txnindex {name}"), |dir, lay, k| {
            std::fs::write(seg_file(dir, lay[k].0, "txnindex"), &bytes).unwrap();
            (vec![all(lay)], true)
        });
    }
}

#[test]
fn directories_and_symlinks_named_like_segment_files() {
    let c = small();
    for ext in ["index", "timeindex", "txnindex", "log"] {
        on_middle_and_last(&c, 12, &format!("a directory as .{ext}"), |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, ext);
            let _ = std::fs::remove_file(&p);
            std::fs::create_dir(&p).unwrap();
            std::fs::write(p.join("x"), b"x").unwrap();
            let opts = if ext == "log" {
                vec![lose_from(lay, k, 0)]
            } else {
                vec![all(lay)]
            };
            (opts, true)
        });
    }
    // A directory named like a segment of its own, above the last.
    let dir = tmpdir();
    let lay = build(dir.path(), &c, 12);
    std::fs::create_dir(seg_file(dir.path(), 1_000, "log")).unwrap();
    attack(
        dir.path(),
        &c,
        &[all(&lay)],
        true,
        "a directory as a new .log",
    );

    for ext in ["index", "timeindex", "log"] {
        // A symlink to a copy of the file itself, elsewhere.
        on_middle_and_last(&c, 12, &format!("a symlink as .{ext}"), |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, ext);
            let aside = dir.join("aside");
            std::fs::create_dir_all(&aside).unwrap();
            let elsewhere = aside.join(format!("{}.{ext}", lay[k].0));
            std::fs::rename(&p, &elsewhere).unwrap();
            std::os::unix::fs::symlink(&elsewhere, &p).unwrap();
            (vec![all(lay)], true)
        });
        // A dangling symlink.
        on_middle_and_last(
            &c,
            12,
            &format!("a dangling symlink as .{ext}"),
            |dir, lay, k| {
                let p = seg_file(dir, lay[k].0, ext);
                std::fs::remove_file(&p).unwrap();
                std::os::unix::fs::symlink(dir.join("nowhere"), &p).unwrap();
                let opts = if ext == "log" {
                    vec![lose_from(lay, k, 0)]
                } else {
                    vec![all(lay)]
                };
                (opts, true)
            },
        );
    }
}

/// Segments of two batches: each index holds exactly one entry (the loader's one-read
/// path for a 1-entry index).
#[test]
fn one_entry_indexes() {
    let c = cfg(260, 100, 10 << 20);
    let dir = tmpdir();
    let lay = build(dir.path(), &c, 12);
    assert!(lay.len() >= 4, "{lay:?}");
    for (base, _) in &lay[..lay.len() - 1] {
        assert_eq!(
            index_entries(&seg_file(dir.path(), *base, "index")).len(),
            1
        );
        assert_eq!(
            time_entries(&seg_file(dir.path(), *base, "timeindex")).len(),
            1
        );
    }
    attack(
        dir.path(),
        &c,
        &[all(&lay)],
        false,
        "1-entry indexes, intact",
    );

    for (what, entry) in [
        ("past the end", (3, 10_000)),
        ("inside a batch", (3, 5)),
        ("rel beyond", (50, 0)),
        ("at 0 rel 0", (0, 0)),
        ("negative", (-3, -3)),
    ] {
        on_middle_and_last(&c, 12, &format!("1-entry .index {what}"), |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, "index");
            write_index(&p, &[entry]);
            (vec![all(lay)], false)
        });
    }
    on_middle_and_last(&c, 12, "1-entry .timeindex rel beyond", |dir, lay, k| {
        let p = seg_file(dir, lay[k].0, "timeindex");
        write_time_index(&p, &[(TS0 + 1, 50)]);
        (vec![all(lay)], false)
    });
}

/// Indexes of the smallest size allowed (24 bytes), an entry per batch: segments roll
/// when an index can take no more entries (here after one entry each: the roll check
/// keeps room, so the files are not exactly full at the close).
#[test]
fn exactly_full_indexes() {
    let c = cfg(1 << 20, 1, 24);
    let dir = tmpdir();
    let lay = build(dir.path(), &c, 12);
    assert!(lay.len() >= 3, "{lay:?}");
    for (base, _) in &lay[..lay.len() - 1] {
        let e = index_entries(&seg_file(dir.path(), *base, "index"));
        assert!(!e.is_empty(), "segment {base}: {e:?}");
    }
    attack(dir.path(), &c, &[all(&lay)], false, "full indexes, intact");
    on_middle_and_last(
        &c,
        12,
        "full .index, last entry inside a batch",
        |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, "index");
            let mut e = index_entries(&p);
            e.last_mut().unwrap().1 += 3;
            write_index(&p, &e);
            (vec![all(lay)], false)
        },
    );
    on_middle_and_last(
        &c,
        12,
        "full .timeindex, last entry later",
        |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, "timeindex");
            let mut e = time_entries(&p);
            e.last_mut().unwrap().0 += 500;
            write_time_index(&p, &e);
            (vec![all(lay)], false)
        },
    );
}

/// An entry between the first and the last that lies: the load check reads only the
/// ends (as Kafka, which reads none), so the read path meets it. A read of an offset
/// that entry covers starts its scan mid-batch; Kafka's then finds nothing and moves on
/// to the next segment (`searchForOffsetFromPosition`, `LocalLog.read`), and so did ours
/// (`read(83)` served 108, `offset_for_timestamp` likewise). Now the scan is done again
/// from the segment's start, and every offset and timestamp is found
/// (`docs/kafka-behaviour.md#scan-stops-short`).
#[test]
fn middle_offset_index_entry_inside_a_batch() {
    let c = cfg(2_000, 1, 10 << 20);
    on_middle_and_last(
        &c,
        40,
        "middle .index entry inside a batch",
        |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, "index");
            let mut e = index_entries(&p);
            assert!(e.len() >= 3, "{e:?}");
            let m = e.len() / 2;
            e[m].1 += 9;
            write_index(&p, &e);
            (vec![all(lay)], true)
        },
    );
}

/// A first batch's length field that frames a shorter batch (49: the header alone)
/// passes the load checks, which read headers (Kafka's clean open checks none). The
/// stored bytes are then served from that batch's position (failing the consumer's
/// checksum: allowed); a read of an offset of the second batch that starts its scan at
/// position 0 meets the mid-batch bytes after the short batch, which frame a torn tail.
/// Kafka's read then moves on to the next segment (`LocalLog.read` on a segment read
/// that finds nothing), and so did ours: `read(12)` served 18, skipping 12..=14 that
/// `read(14)` served (its index entry is past the damage). A torn last batch has no
/// indexed batch after it: the scan now goes on from the first index entry past the
/// torn position (`docs/kafka-behaviour.md#scan-stops-short`).
#[test]
fn first_batch_length_framing_a_shorter_batch() {
    let c = small();
    for len in [49i32, 50] {
        let what = format!("first batch length {len}");
        on_middle_and_last_with(&c, 12, true, &what, |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, "log");
            write_at(&p, 8, &len.to_be_bytes());
            (vec![lose_from(lay, k, 0), lose_batch(lay, k, 0)], false)
        });
    }
}

/// A middle entry at the start of a later batch (positions still in order, so no form
/// check sees it): a read of the offsets it covers started past their batch and served
/// the later one, as Kafka's does; now the batch at an entry's position must start at
/// or below the entry's offset, else the scan is done again from the segment's start
/// (`docs/kafka-behaviour.md#scan-stops-short`).
#[test]
fn middle_offset_index_entry_at_a_later_batch() {
    let c = cfg(2_000, 1, 10 << 20);
    on_middle_and_last(
        &c,
        40,
        "middle .index entry at a later batch",
        |dir, lay, k| {
            let p = seg_file(dir, lay[k].0, "index");
            let mut e = index_entries(&p);
            assert!(e.len() >= 3, "{e:?}");
            let m = e.len() / 2;
            e[m].1 = e[m + 1].1;
            write_index(&p, &e);
            (vec![all(lay)], true)
        },
    );
}

/// A length field that frames a shorter batch in a batch after the first. In a middle
/// segment reads stay exact. In the last segment, a clean open that kept it as the
/// active segment acknowledged appends after it, and after a crash the unclean open
/// recovered that segment, stopped at the damaged batch and truncated the rest, taking
/// the records appended after the open with it (seen: 117..=124 gone after "an unclean
/// reopen"; Kafka's clean open trusts the same files and loses the same records). A
/// `.log` of at most `DEFER_INDEX_CHECK_MAX_LOG_BYTES` is now scanned whole by the load
/// check, so the clean open recovers it first and nothing acknowledged is lost. A longer
/// active segment is still checked at its first batch and from its last index entry
/// only: there the defect stands (closing it needs a load check that reads every batch
/// of the last segment, or recovery that does not truncate acknowledged appends above
/// damage).
#[test]
fn a_lying_length_inside_a_small_active_segment() {
    let c = cfg(2_000, 1, 10 << 20);
    on_middle_and_last_with(&c, 40, true, "batch 2 length 49", |dir, lay, k| {
        let b = lay[k].1[2];
        write_at(
            &seg_file(dir, lay[k].0, "log"),
            b.pos + 8,
            &49i32.to_be_bytes(),
        );
        (vec![lose_from(lay, k, 2), lose_batch(lay, k, 2)], false)
    });
}

/// A middle time index entry that names a later offset than its timestamp's record (no
/// load check reads it; Kafka's neither). A lookup of a timestamp that entry covers
/// starts at the later record and answers it: `offset_for_timestamp(1081)` gives 84,
/// not 81 (Kafka's `findOffsetByTimestamp` answers the same). Records' timestamps need
/// not increase, so the scan cannot tell a lying entry from an earlier record with a
/// later timestamp without reading the segment from its start.
#[test]
#[ignore = "defect: a lying middle .timeindex entry makes a timestamp lookup answer a later record (as Kafka)"]
fn middle_time_index_entry_names_a_later_offset() {
    let c = cfg(2_000, 1, 10 << 20);
    on_middle_and_last(&c, 40, "middle .timeindex entry later", |dir, lay, k| {
        let p = seg_file(dir, lay[k].0, "timeindex");
        let mut e = time_entries(&p);
        assert!(e.len() >= 3, "{e:?}");
        let m = e.len() / 2;
        e[m].1 = e[m + 1].1;
        write_time_index(&p, &e);
        (vec![all(lay)], true)
    });
}
