//! Opening each index type (offset, time, txn) from arbitrary bytes and looking things
//! up: every call returns a value or a typed error, never a panic or a hang.
//!
//! Input: byte 0 picks the index kind, the base offset, the hybrid's warm section and the
//! page directory's page size, bytes 1..9 are a lookup target, the rest is the file's
//! content.
//!
//! Checked beyond "no panic": the page directory (lazy fences, fence entries) and the
//! hybrid (the default strategy's shape, with that warm section and page size) answer
//! every lookup exactly as Kafka's warm/cold search with the hybrid's warm section does
//! whenever the keys are strictly increasing (a valid index).
#![no_main]

use std::sync::OnceLock;

use index_core::search::SearchStrategy;
use index_offset::OffsetIndex;
use index_time::TimeIndex;
use index_txn::TransactionIndex;
use libfuzzer_sys::fuzz_target;

fn scratch() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        if shm.is_dir() {
            tempfile::tempdir_in(shm).expect("scratch dir")
        } else {
            tempfile::tempdir().expect("scratch dir")
        }
    })
}

/// A lookup through one strategy (`None`: the index could not answer).
type Lookup<'a, T> = &'a dyn Fn(i64) -> Option<T>;

/// Looks up `seeds` and every key in `keys` (and its neighbours) with each of `others`
/// (the page directory, the hybrid) and with Kafka's warm/cold (`kafka`); when the keys
/// are strictly increasing (a valid index) the answers must be equal.
fn differential<T: PartialEq + std::fmt::Debug>(
    keys: &[i64],
    seeds: [i64; 2],
    others: &[(&str, Lookup<'_, T>)],
    kafka: Lookup<'_, T>,
) {
    let valid = keys.windows(2).all(|w| w[0] < w[1]);
    let mut targets = vec![seeds[0], seeds[1], seeds[0].wrapping_add(1)];
    targets.extend(
        keys.iter()
            .take(64)
            .flat_map(|&k| [k.wrapping_sub(1), k, k.wrapping_add(1)]),
    );
    for t in targets {
        for (name, other) in others {
            let got = other(t);
            if valid {
                assert_eq!(got, kafka(t), "{name} vs warm/cold, target {t}");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    let kind = data[0] % 3;
    let base = match (data[0] >> 2) % 4 {
        0 => 0,
        1 => 100,
        2 => i64::MAX - 10,
        _ => -1,
    };
    let target = i64::from_be_bytes(data[1..9].try_into().unwrap());
    let page_size = [16, 64, 4096, 24][usize::from(data[0] >> 6)];
    let pd = SearchStrategy::PageDirectory { page_size };
    let hybrid = SearchStrategy::Hybrid {
        warm_section_bytes: [0, 24, 96, 8192][usize::from((data[0] >> 4) & 3)],
        page_size,
    };
    let kafka = hybrid.kafka_equivalent();
    let body = &data[9..];
    let dir = scratch().path();
    match kind {
        0 => {
            let path = dir.join("00000000000000000000.index");
            std::fs::write(&path, body).unwrap();
            if let Ok(idx) = OffsetIndex::open_read_only(&path, base) {
                let _ = idx.sanity_check();
                let _ = idx.lookup(target);
                let _ = idx.lookup(base);
                let _ = idx.fetch_upper_bound_offset(
                    index_offset::OffsetPosition {
                        offset: base,
                        position: target as u32,
                    },
                    (target >> 32) as i32,
                );
                let n = idx.entries();
                let _ = idx.entry(n.saturating_sub(1));
                let _ = idx.entry(n);
                let _ = idx.last_entry();
                let keys: Vec<i64> = idx
                    .all_entries()
                    .map(|e| e.iter().map(|p| p.offset).collect())
                    .unwrap_or_default();
                let idx = idx.with_search_strategy(pd);
                let open = |s| {
                    OffsetIndex::open_read_only(&path, base)
                        .ok()
                        .map(|i| i.with_search_strategy(s))
                };
                let (hy, wc) = (open(hybrid), open(kafka));
                let lookup = |i: &Option<OffsetIndex>, t| i.as_ref().and_then(|i| i.lookup(t).ok());
                differential(
                    &keys,
                    [target, base],
                    &[
                        ("page directory", &|t| idx.lookup(t).ok()),
                        ("hybrid", &|t| lookup(&hy, t)),
                    ],
                    &|t| lookup(&wc, t),
                );
            }
            // The writable open path (what a segment does) on the same bytes.
            if let Ok(idx) = OffsetIndex::open(&path, base, 1 << 16) {
                let _ = idx.sanity_check();
                let idx = idx.with_search_strategy(pd);
                let _ = idx.lookup(target);
                let _ = idx.append(target, (target as u64 >> 40) as u32);
                let _ = idx.lookup(target);
                let _ = idx.truncate_to(target);
                let _ = idx.close();
            }
        }
        1 => {
            let path = dir.join("00000000000000000000.timeindex");
            std::fs::write(&path, body).unwrap();
            if let Ok(idx) = TimeIndex::open_read_only(&path, base) {
                let _ = idx.sanity_check();
                let _ = idx.lookup(target);
                let n = idx.entries();
                let _ = idx.entry(n.saturating_sub(1));
                let _ = idx.entry(n);
                let _ = idx.last_entry();
                let keys: Vec<i64> = idx
                    .all_entries()
                    .map(|e| e.iter().map(|p| p.timestamp).collect())
                    .unwrap_or_default();
                let idx = idx.with_search_strategy(pd);
                let open = |s| {
                    TimeIndex::open_read_only(&path, base)
                        .ok()
                        .map(|i| i.with_search_strategy(s))
                };
                let (hy, wc) = (open(hybrid), open(kafka));
                let lookup = |i: &Option<TimeIndex>, t| i.as_ref().and_then(|i| i.lookup(t).ok());
                differential(
                    &keys,
                    [target, base],
                    &[
                        ("page directory", &|t| idx.lookup(t).ok()),
                        ("hybrid", &|t| lookup(&hy, t)),
                    ],
                    &|t| lookup(&wc, t),
                );
            }
            if let Ok(idx) = TimeIndex::open(&path, base, 1 << 16) {
                let _ = idx.sanity_check();
                let idx = idx.with_search_strategy(pd);
                let _ = idx.lookup(target);
                let _ = idx.maybe_append(target, base.wrapping_add(5));
                let _ = idx.lookup(target);
                let _ = idx.truncate_to(target);
                let _ = idx.close();
            }
        }
        _ => {
            let path = dir.join("00000000000000000000.txnindex");
            std::fs::write(&path, body).unwrap();
            if let Ok(idx) = TransactionIndex::open(&path, base) {
                let _ = idx.sanity_check();
                let _ = idx.all_aborted_txns();
                let _ = idx.collect_aborted_txns(target, target.wrapping_add(1000));
                let _ = idx.collect_aborted_txns(base, i64::MAX);
                let _ = idx.truncate_to(target);
            }
        }
    }
});
