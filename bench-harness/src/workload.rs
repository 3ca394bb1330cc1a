//! Lookup workloads: who looks up which targets while the producer appends.
//!
//! Consumers are modelled by their position in the log, in offsets. For the offset index
//! the target is that offset; for the time index it is the timestamp (ms) of the batch
//! holding that offset (a consumer seeking by time to where it is reading).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// A lookup workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// Several in-sync consumers, each looking up the position it fetched up to last
    /// time: within the last few hundred offsets of the log end.
    HotTail,
    /// One lagging consumer, some thousands of offsets behind the log end.
    Lagging,
    /// Uniformly random targets over the keys the index holds (from its first key to its
    /// last key).
    Uniform,
    /// Each lookup is drawn from the three above: 80 % hot-tail, 10 % lagging, 10 %
    /// uniform.
    Mixed,
}

impl Workload {
    /// Every workload, in report order.
    pub const ALL: [Workload; 4] = [
        Workload::HotTail,
        Workload::Lagging,
        Workload::Uniform,
        Workload::Mixed,
    ];

    /// Stable short name used in tables and JSON: `hot-tail`, `lagging`, `uniform`,
    /// `mixed`.
    pub fn name(self) -> &'static str {
        match self {
            Workload::HotTail => "hot-tail",
            Workload::Lagging => "lagging",
            Workload::Uniform => "uniform",
            Workload::Mixed => "mixed",
        }
    }

    /// A per-workload seed derived from the run's seed, so that workloads draw
    /// independent, reproducible streams.
    pub fn seed(self, run_seed: u64) -> u64 {
        let salt: u64 = match self {
            Workload::HotTail => 0x68_6f74,
            Workload::Lagging => 0x6c_6167,
            Workload::Uniform => 0x75_6e69,
            Workload::Mixed => 0x6d_6978,
        };
        run_seed
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(salt)
    }
}

/// Parameters of the consumer population.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkloadConfig {
    /// Number of in-sync consumers of the hot-tail workload.
    pub consumers: usize,
    /// After each fetch an in-sync consumer is `0..=hot_lag_offsets` offsets behind the
    /// log end (it then looks up that position on its next turn).
    pub hot_lag_offsets: u64,
    /// The lagging consumer is `lag_min_offsets..=lag_max_offsets` offsets behind the log
    /// end.
    pub lag_min_offsets: u64,
    /// Upper bound of the lagging consumer's lag, in offsets.
    pub lag_max_offsets: u64,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            consumers: 4,
            hot_lag_offsets: 300,
            lag_min_offsets: 2_000,
            lag_max_offsets: 20_000,
        }
    }
}

/// What a workload knows about the log and the index when it draws a target.
#[derive(Clone, Copy)]
pub struct LogView<'a> {
    /// Offset of the first record of the segment.
    pub first_offset: i64,
    /// The log end offset (next offset to be written).
    pub log_end_offset: i64,
    /// Smallest and largest key currently in the index (offsets or ms), if non-empty.
    pub key_range: Option<(i64, i64)>,
    /// Translates a consumer's offset into the target key of this index (identity for the
    /// offset index, the batch timestamp for the time index).
    pub key_of_offset: &'a dyn Fn(i64) -> i64,
}

impl std::fmt::Debug for LogView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogView")
            .field("first_offset", &self.first_offset)
            .field("log_end_offset", &self.log_end_offset)
            .field("key_range", &self.key_range)
            .finish_non_exhaustive()
    }
}

/// Which consumer a lookup came from (for mixed workloads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookupSource {
    /// An in-sync consumer near the tail.
    InSync,
    /// The lagging consumer.
    Lagging,
    /// A uniformly random reader.
    Random,
}

/// Draws lookup targets for one workload from a seeded `StdRng`.
#[derive(Debug)]
pub struct TargetGenerator {
    workload: Workload,
    cfg: WorkloadConfig,
    rng: StdRng,
    positions: Vec<Option<i64>>,
    next_consumer: usize,
}

impl TargetGenerator {
    /// A generator for `workload` whose random stream is seeded with `seed`.
    pub fn new(workload: Workload, cfg: WorkloadConfig, seed: u64) -> Self {
        TargetGenerator {
            workload,
            positions: vec![None; cfg.consumers.max(1)],
            cfg,
            rng: StdRng::seed_from_u64(seed),
            next_consumer: 0,
        }
    }

    /// The workload.
    pub fn workload(&self) -> Workload {
        self.workload
    }

    /// The next lookup target (an offset or a timestamp in ms, per `view.key_of_offset`)
    /// and the consumer kind it came from; `None` when the index is empty.
    pub fn next_target(&mut self, view: &LogView<'_>) -> Option<(LookupSource, i64)> {
        let (lo, hi) = view.key_range?;
        let source = match self.workload {
            Workload::HotTail => LookupSource::InSync,
            Workload::Lagging => LookupSource::Lagging,
            Workload::Uniform => LookupSource::Random,
            Workload::Mixed => match self.rng.gen_range(0..10u32) {
                0 => LookupSource::Lagging,
                1 => LookupSource::Random,
                _ => LookupSource::InSync,
            },
        };
        let last = view.log_end_offset - 1;
        let clamp = |o: i64| o.clamp(view.first_offset, last.max(view.first_offset));
        let target = match source {
            LookupSource::InSync => {
                let c = self.next_consumer;
                self.next_consumer = (c + 1) % self.positions.len();
                let fresh = clamp(last - self.rng.gen_range(0..=self.cfg.hot_lag_offsets) as i64);
                // Look up where this consumer stopped last time, then fetch up to near
                // the log end.
                let at = self.positions[c].unwrap_or(fresh);
                self.positions[c] = Some(fresh);
                (view.key_of_offset)(at)
            }
            LookupSource::Lagging => {
                let lag = self.rng.gen_range(
                    self.cfg.lag_min_offsets
                        ..=self.cfg.lag_max_offsets.max(self.cfg.lag_min_offsets),
                );
                (view.key_of_offset)(clamp(last - lag as i64))
            }
            LookupSource::Random => self.rng.gen_range(lo..=hi),
        };
        Some((source, target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_tail_targets_stay_near_the_end() {
        let ident = |o: i64| o;
        let mut g = TargetGenerator::new(Workload::HotTail, WorkloadConfig::default(), 1);
        for leo in (10_000..20_000).step_by(10) {
            let view = LogView {
                first_offset: 0,
                log_end_offset: leo,
                key_range: Some((0, leo - 1)),
                key_of_offset: &ident,
            };
            let (src, t) = g.next_target(&view).unwrap();
            assert_eq!(src, LookupSource::InSync);
            // Lag of at most 300 plus what was produced since the consumer's last turn.
            assert!(t < leo && t >= leo - 1 - 300 - 4 * 10, "{t} vs {leo}");
        }
    }

    #[test]
    fn empty_index_has_no_target() {
        let ident = |o: i64| o;
        let mut g = TargetGenerator::new(Workload::Uniform, WorkloadConfig::default(), 1);
        let view = LogView {
            first_offset: 0,
            log_end_offset: 0,
            key_range: None,
            key_of_offset: &ident,
        };
        assert!(g.next_target(&view).is_none());
    }
}
