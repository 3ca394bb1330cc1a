//! Lookup latency: nanoseconds per lookup of each strategy on a full memory-mapped index,
//! against the in-memory limit, `slice::partition_point` over the same keys held in a
//! `Vec<i64>`.
//!
//! Measured with [`std::time::Instant`] around a loop of lookups over pre-drawn targets
//! (the search only: the answer slot goes to [`std::hint::black_box`]); the loops of all
//! strategies and the limit run once per round, `repeats` rounds, in an order rotated
//! each round; a row gives the median time and the median of its per-round ratios to
//! the limit, so what a round shares on a busy machine cancels. The index pages are
//! resident (the index was just written): this
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
    /// Interleaved rounds: each runs every strategy's loop and the limit's once; medians count.
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
    /// Median over the interleaved rounds of the time per lookup (ns).
    pub ns_per_lookup: f64,
    /// Median over the rounds of this loop's time divided by the in-memory limit's in the
    /// same round, on the same targets (ratio; 1 for the limit itself).
    pub ratio_to_in_memory: f64,
    /// Lookups whose answer differed from `partition_point`'s (must be 0).
    pub mismatches: u64,
}

/// One loop's timing over all rounds of [`time_loops`].
#[derive(Clone, Copy, Debug)]
struct Timed {
    /// Median over the rounds of the loop's time per lookup (ns).
    ns: f64,
    /// Median over the rounds of the loop's time divided by the last loop's time in the
    /// same round (ratio); the last loop is the in-memory limit.
    ratio: f64,
    /// The loop's last result, compared with the limit's answers.
    check: u64,
}

/// Median of `values` (NaN-free); 0 for an empty slice.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Runs every loop of `loops` once per round, for `repeats` rounds, in an order that
/// rotates by one each round (so no loop always runs first, after the same neighbour,
/// or with a cold cache), and returns each loop's median time per lookup (ns), its
/// median per-round ratio to the **last** loop (the limit), and its last result.
///
/// Per-round ratios cancel what a round shares (frequency steps, another process on the
/// core), which a ratio of two medians does not; medians, unlike minima, do not reward
/// the one lucky run.
fn time_loops(
    repeats: usize,
    lookups: usize,
    loops: &mut [Box<dyn FnMut() -> u64 + '_>],
) -> Vec<Timed> {
    let n = loops.len();
    let rounds = repeats.max(1);
    let mut ns = vec![Vec::with_capacity(rounds); n];
    let mut checks = vec![0u64; n];
    for round in 0..rounds {
        for step in 0..n {
            let i = (round + step) % n;
            let f = &mut loops[i];
            let t = Instant::now();
            checks[i] = black_box(f());
            ns[i].push(t.elapsed().as_nanos() as f64 / lookups.max(1) as f64);
        }
    }
    let limit = ns.last().cloned().unwrap_or_default();
    ns.into_iter()
        .zip(checks)
        .map(|(mut times, check)| {
            let mut ratios: Vec<f64> = times
                .iter()
                .zip(&limit)
                .map(|(t, l)| t / l.max(f64::MIN_POSITIVE))
                .collect();
            Timed {
                ns: median(&mut times),
                ratio: median(&mut ratios),
                check,
            }
        })
        .collect()
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
        let limit = timed[strategies.len()];
        let row = |strategy: String, t: Timed, mismatches: u64| LatencyRow {
            kind: I::KIND,
            index_bytes: cfg.index_bytes,
            entries: keys.len(),
            workload: workload.to_string(),
            strategy,
            lookups: targets.len(),
            ns_per_lookup: t.ns,
            ratio_to_in_memory: t.ratio,
            mismatches,
        };
        for (&s, &t) in strategies.iter().zip(&timed) {
            rows.push(row(s.name().to_string(), t, u64::from(t.check != expected)));
        }
        rows.push(row(IN_MEMORY.to_string(), limit, 0));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }

    #[test]
    fn every_loop_runs_once_per_round_and_the_limit_is_its_own_unit() {
        let counts = std::cell::RefCell::new([0u32; 3]);
        let order = std::cell::RefCell::new(Vec::new());
        let mut loops: Vec<Box<dyn FnMut() -> u64 + '_>> = (0..3)
            .map(|i| {
                let (counts, order) = (&counts, &order);
                Box::new(move || {
                    counts.borrow_mut()[i] += 1;
                    order.borrow_mut().push(i);
                    (0..20_000u64).fold(0u64, |a, x| black_box(a.wrapping_add(x)))
                }) as Box<dyn FnMut() -> u64 + '_>
            })
            .collect();
        let timed = time_loops(5, 1, &mut loops);
        drop(loops);
        assert_eq!(*counts.borrow(), [5, 5, 5]);
        // The order rotates: each loop runs first in some round.
        let firsts: Vec<usize> = order.borrow().chunks(3).map(|c| c[0]).collect();
        assert_eq!(firsts, vec![0, 1, 2, 0, 1]);
        assert_eq!(timed[2].ratio, 1.0);
        assert!(timed.iter().all(|t| t.ns.is_finite() && t.ratio > 0.0));
    }
}
