//! Lookup latency: nanoseconds per lookup of each strategy on a full memory-mapped index,
//! against the in-memory limit, `slice::partition_point` over the same keys held in a
//! `Vec<i64>`.
//!
//! Measured with [`std::time::Instant`] around a loop of lookups over pre-drawn targets
//! (the search only: the answer slot goes to [`std::hint::black_box`]); the loops of all
//! strategies and the limit take turns `repeats` times and each one's fastest run
//! counts, which filters out other processes on a shared machine. The index pages are resident (the index was just written): this
//! measures CPU, cache and TLB cost, not page faults.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use index_core::search::{Bound, SearchField, SearchStrategy};
use index_core::{IndexEntry, NoProbe, Snapshot};
use index_offset::OffsetIndex;
use index_time::TimeIndex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::producer::{ProducerConfig, SegmentModel};
use crate::replay::{compared_strategies, strategy_is_native, IndexKind, ReplayIndex};
use crate::workload::{LogView, TargetGenerator, Workload, WorkloadConfig};
use crate::BenchError;

/// Name of the in-memory limit in tables and JSON.
pub const IN_MEMORY: &str = "in-memory partition_point";

/// Parameters of the latency measurement.
#[derive(Clone, Debug)]
pub struct LatencyConfig {
    /// Index file size in bytes.
    pub index_bytes: usize,
    /// Page size of the page-directory strategy, in bytes.
    pub page_size: usize,
    /// Warm-section size of the warm/cold strategy, in bytes.
    pub warm_section_bytes: usize,
    /// Lookups per timed loop (lookups).
    pub lookups: usize,
    /// Timed loops per strategy and workload; the fastest counts.
    pub repeats: usize,
    /// Seed of the producer model and the targets.
    pub seed: u64,
    /// The producer model.
    pub producer: ProducerConfig,
    /// The consumers (hot-tail settings).
    pub workload: WorkloadConfig,
    /// Index kinds to measure.
    pub kinds: Vec<IndexKind>,
}

/// One measured latency.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyRow {
    /// Offset or time index.
    pub kind: IndexKind,
    /// Index file size in bytes.
    pub index_bytes: usize,
    /// Entries in the index.
    pub entries: usize,
    /// `hot-tail` or `uniform`.
    pub workload: String,
    /// Strategy name, or [`IN_MEMORY`].
    pub strategy: String,
    /// Lookups per timed loop.
    pub lookups: usize,
    /// Fastest loop's time per lookup (ns).
    pub ns_per_lookup: f64,
    /// `ns_per_lookup` divided by the in-memory limit's on the same targets (ratio).
    pub ratio_to_in_memory: f64,
    /// Lookups whose answer differed from `partition_point`'s (must be 0).
    pub mismatches: u64,
}

/// Runs every loop of `loops` `repeats` times, taking turns, and returns each loop's
/// fastest time per lookup (ns) and its last result.
fn time_loops(
    repeats: usize,
    lookups: usize,
    loops: &mut [Box<dyn FnMut() -> u64 + '_>],
) -> Vec<(f64, u64)> {
    let mut best = vec![(f64::INFINITY, 0u64); loops.len()];
    for _ in 0..repeats.max(1) {
        for (f, b) in loops.iter_mut().zip(best.iter_mut()) {
            let t = Instant::now();
            let check = black_box(f());
            let ns = t.elapsed().as_nanos() as f64 / lookups.max(1) as f64;
            *b = (b.0.min(ns), check);
        }
    }
    best
}

fn measure_index<I: ReplayIndex>(
    index: &I,
    model: &SegmentModel,
    cfg: &LatencyConfig,
) -> Result<Vec<LatencyRow>, BenchError> {
    let snap: Snapshot<I::Entry> = index.snapshot()?;
    let base = snap.base_offset();
    let keys: Vec<i64> = snap.slots().iter().map(|e| e.key(base)).collect();
    let (Some(&lo), Some(&hi)) = (keys.first(), keys.last()) else {
        return Ok(Vec::new());
    };
    let start = model.config().start_timestamp_ms;
    let key_of_offset = |o: i64| match I::KIND {
        IndexKind::Offset => o,
        IndexKind::Time => model.timestamp_of(o).unwrap_or(start),
    };
    let view = LogView {
        first_offset: cfg.producer.base_offset,
        log_end_offset: model.log_end_offset(),
        key_range: Some((lo, hi)),
        key_of_offset: &key_of_offset,
    };
    let mut hot = TargetGenerator::new(
        Workload::HotTail,
        cfg.workload.clone(),
        Workload::HotTail.seed(cfg.seed),
    );
    let mut rng = StdRng::seed_from_u64(Workload::Uniform.seed(cfg.seed));
    let n = cfg.lookups.max(1);
    let hot_targets: Vec<i64> = (0..n)
        .filter_map(|_| hot.next_target(&view).map(|(_, t)| t))
        .collect();
    let uniform_targets: Vec<i64> = (0..n).map(|_| rng.gen_range(lo..=hi)).collect();
    let strategies = compared_strategies(cfg.warm_section_bytes, cfg.page_size);
    let mut rows = Vec::new();
    for &s in &strategies {
        if !strategy_is_native(&snap, s) {
            return Err(BenchError::Config(format!(
                "the latency index has no page directory for {s:?}"
            )));
        }
    }
    for (workload, targets) in [("hot-tail", &hot_targets), ("uniform", &uniform_targets)] {
        let in_memory = |ks: &[i64]| -> u64 {
            let mut acc = 0u64;
            for &t in targets {
                let slot = ks.partition_point(|&k| k <= t).checked_sub(1);
                acc = acc.wrapping_add(black_box(slot).map_or(u64::MAX, |s| s as u64));
            }
            acc
        };
        let expected = in_memory(&keys);
        let mut loops: Vec<Box<dyn FnMut() -> u64 + '_>> = Vec::new();
        for &s in &strategies {
            let snap = &snap;
            loops.push(Box::new(move || -> u64 {
                let mut acc = 0u64;
                for &t in targets {
                    let slot = snap.search_with(
                        s,
                        t,
                        SearchField::Key,
                        Bound::LargestLowerBound,
                        &mut NoProbe,
                    );
                    acc = acc.wrapping_add(black_box(slot).map_or(u64::MAX, |s| s as u64));
                }
                acc
            }));
        }
        let keys = &keys;
        loops.push(Box::new(move || in_memory(keys)));
        let timed = time_loops(cfg.repeats, targets.len(), &mut loops);
        drop(loops);
        let limit_ns = timed[strategies.len()].0;
        let row = |strategy: String, ns: f64, mismatches: u64| LatencyRow {
            kind: I::KIND,
            index_bytes: cfg.index_bytes,
            entries: keys.len(),
            workload: workload.to_string(),
            strategy,
            lookups: targets.len(),
            ns_per_lookup: ns,
            ratio_to_in_memory: ns / limit_ns.max(f64::MIN_POSITIVE),
            mismatches,
        };
        for (&s, &(ns, check)) in strategies.iter().zip(&timed) {
            rows.push(row(s.name().to_string(), ns, u64::from(check != expected)));
        }
        rows.push(row(IN_MEMORY.to_string(), limit_ns, 0));
    }
    Ok(rows)
}

fn measure_kind<I: ReplayIndex>(
    dir: &Path,
    cfg: &LatencyConfig,
) -> Result<Vec<LatencyRow>, BenchError> {
    let path = dir.join(format!(
        "{:020}.{}.latency",
        cfg.producer.base_offset,
        I::KIND.extension()
    ));
    let _ = std::fs::remove_file(&path);
    let index = I::create(
        &path,
        cfg.producer.base_offset,
        cfg.index_bytes,
        SearchStrategy::PageDirectory {
            page_size: cfg.page_size,
        },
    )?;
    let mut model = SegmentModel::new(cfg.producer.clone(), cfg.seed);
    let capacity = index.capacity(false);
    while index.entries() < capacity {
        let Some(point) = model.next_index_point() else {
            break;
        };
        let (k, v) = I::key_value(&point);
        index.append_entry(k, v, false)?;
    }
    let rows = measure_index(&index, &model, cfg);
    index.delete()?;
    rows
}

/// Measures every kind in `cfg.kinds` on a full index created in `dir`.
///
/// # Errors
/// Index or I/O errors.
pub fn measure(cfg: &LatencyConfig, dir: &Path) -> Result<Vec<LatencyRow>, BenchError> {
    let mut rows = Vec::new();
    for &kind in &cfg.kinds {
        rows.extend(match kind {
            IndexKind::Offset => measure_kind::<OffsetIndex>(dir, cfg)?,
            IndexKind::Time => measure_kind::<TimeIndex>(dir, cfg)?,
        });
    }
    Ok(rows)
}
