//! Interleaved ratio measurements shared by the workspace's benchmarks (the `ratios`
//! sections of the `index-offset`, `index-time` and `segment` criterion benches, and the
//! `limit` bench of `bench-harness`). Never published: a dev-dependency only.
//!
//! Criterion measures each benchmark on its own, one after the other; on a shared 2-core
//! machine the load changes between them and a ratio of two criterion results mixes two
//! different machines. Here the competitors of a ratio are instead **interleaved**: each
//! round times `ops` operations of every competitor in turn.
//!
//! * [`race`] keeps each competitor's **fastest** round (the least disturbed one) as its
//!   time per operation; [`race_timed`] does the same for competitors that time
//!   themselves, leaving their per-run setup out.
//! * [`race_rounds`] keeps every round, so that a ratio can be taken *within* each round
//!   (both sides measured a few milliseconds apart) and summarised by its median over the
//!   rounds ([`median_ratio`]), with the spread between rounds as a noise figure
//!   ([`RatioStats`]).
//!
//! The ratios are printed and written as JSON to `<criterion dir>/ratios/<kind>.json`,
//! where the criterion directory is `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`,
//! else `criterion/` next to the bench executable's `release/` directory.
//!
//! `RATIO_ROUNDS` (default 25) sets the number of rounds of [`race`].

use std::path::PathBuf;
use std::time::Instant;

#[cfg(feature = "index")]
pub mod index;

/// Where criterion keeps its results (and this module its JSON).
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    // <target>/release/deps/<bench>-<hash>
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join("criterion")))
        .unwrap_or_else(|| PathBuf::from("target/criterion"))
}

/// Number of interleaved rounds of [`race`] (`RATIO_ROUNDS`, default 25).
pub fn rounds() -> usize {
    std::env::var("RATIO_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(25)
}

/// A competitor: runs the given number of operations.
pub type Competitor<'a> = Box<dyn FnMut(usize) + 'a>;

/// Times `ops` operations of each competitor in turn, `rounds()` times; returns each
/// competitor's fastest round in nanoseconds per operation.
pub fn race(competitors: &mut [Competitor<'_>], ops: usize) -> Vec<f64> {
    let per_round = race_rounds(competitors, ops, rounds());
    (0..competitors.len())
        .map(|c| per_round.iter().map(|r| r[c]).fold(f64::INFINITY, f64::min))
        .collect()
}

/// Like [`race`] for competitors that time themselves (so that per-run setup, such as
/// creating a fresh directory, is excluded): each of `rounds` rounds runs every competitor
/// once, after one warm-up run each; each keeps its fastest round, in nanoseconds.
pub fn race_timed(
    competitors: &mut [&mut dyn FnMut() -> std::time::Duration],
    rounds: usize,
) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; competitors.len()];
    for f in competitors.iter_mut() {
        f(); // warm up
    }
    for _ in 0..rounds {
        for (f, best) in competitors.iter_mut().zip(&mut best) {
            *best = best.min(f().as_nanos() as f64);
        }
    }
    best
}

/// Times `ops` operations of each competitor in turn, `rounds` times (after one untimed
/// warm-up round); returns the nanoseconds per operation of every competitor in every
/// round: `result[round][competitor]`. The order of the competitors rotates from round
/// to round, so that none of them always runs right after the same other one.
pub fn race_rounds(competitors: &mut [Competitor<'_>], ops: usize, rounds: usize) -> Vec<Vec<f64>> {
    let n = competitors.len();
    for f in competitors.iter_mut() {
        f(ops); // warm up
    }
    let ops_f = ops.max(1) as f64;
    (0..rounds.max(1))
        .map(|round| {
            let mut ns = vec![0.0; n];
            for k in 0..n {
                let c = (k + round) % n;
                let start = Instant::now();
                competitors[c](ops);
                ns[c] = start.elapsed().as_nanos() as f64 / ops_f;
            }
            ns
        })
        .collect()
}

/// Like [`race_rounds`], but each round is cut into slices of `chunk` operations and the
/// competitors take turns slice by slice; a competitor's time in a round is its **median
/// slice** (ns per operation). On a shared machine another process's time slice (a few
/// milliseconds) lands in one competitor's slice now and then: summed, it would dominate a
/// round of a fast competitor; the median ignores it. Competitors must continue where
/// their previous call stopped (for example cycle through their targets), so that every
/// competitor meets the same operations in the same slice.
pub fn race_rounds_sliced(
    competitors: &mut [Competitor<'_>],
    ops: usize,
    chunk: usize,
    rounds: usize,
) -> Vec<Vec<f64>> {
    let n = competitors.len();
    let chunk = chunk.clamp(1, ops.max(1));
    let slices = ops.max(1).div_ceil(chunk);
    for f in competitors.iter_mut() {
        f(ops); // warm up
    }
    (0..rounds.max(1))
        .map(|round| {
            let mut ns: Vec<Vec<f64>> = vec![Vec::with_capacity(slices); n];
            for slice in 0..slices {
                for k in 0..n {
                    let c = (k + round + slice) % n;
                    let start = Instant::now();
                    competitors[c](chunk);
                    ns[c].push(start.elapsed().as_nanos() as f64 / chunk as f64);
                }
            }
            ns.into_iter().map(|v| quantile(&sorted(v), 0.5)).collect()
        })
        .collect()
}

/// The median and spread over rounds of one ratio `numerator / denominator`, each round's
/// ratio taken from the two competitors' times in that round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioStats {
    /// Median over the rounds of the per-round ratio.
    pub median: f64,
    /// First quartile of the per-round ratios.
    pub q1: f64,
    /// Third quartile of the per-round ratios.
    pub q3: f64,
    /// Median time per operation of the numerator (ns).
    pub numerator_ns: f64,
    /// Median time per operation of the denominator (ns).
    pub denominator_ns: f64,
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// The per-round ratio of competitor `numerator` to competitor `denominator` in the
/// rounds of [`race_rounds`], summarised by median and quartiles.
pub fn median_ratio(per_round: &[Vec<f64>], numerator: usize, denominator: usize) -> RatioStats {
    let ratios = sorted(
        per_round
            .iter()
            .map(|r| r[numerator] / r[denominator])
            .collect(),
    );
    let num = sorted(per_round.iter().map(|r| r[numerator]).collect());
    let den = sorted(per_round.iter().map(|r| r[denominator]).collect());
    RatioStats {
        median: quantile(&ratios, 0.5),
        q1: quantile(&ratios, 0.25),
        q3: quantile(&ratios, 0.75),
        numerator_ns: quantile(&num, 0.5),
        denominator_ns: quantile(&den, 0.5),
    }
}

struct Row {
    name: String,
    numerator_ns: f64,
    denominator_ns: f64,
    goal: Option<f64>,
}

/// The ratios of one bench binary.
#[derive(Default)]
pub struct Report {
    rows: Vec<Row>,
}

impl Report {
    /// Adds `numerator_ns / denominator_ns` (optionally with a goal: ratio `<= goal`).
    pub fn add(&mut self, name: String, numerator_ns: f64, denominator_ns: f64, goal: Option<f64>) {
        self.rows.push(Row {
            name,
            numerator_ns,
            denominator_ns,
            goal,
        });
    }

    /// Prints the section and writes `<criterion dir>/ratios/<kind>.json`.
    pub fn finish(&self, kind: &str) {
        println!(
            "\nratios ({kind}): interleaved, fastest of {} rounds, time per operation",
            rounds()
        );
        let mut json = String::from("[\n");
        for (i, r) in self.rows.iter().enumerate() {
            let ratio = r.numerator_ns / r.denominator_ns;
            let (goal, verdict) = match r.goal {
                Some(g) => (
                    format!(" goal <= {g:.1}x"),
                    if ratio <= g { " MET" } else { " MISSED" },
                ),
                None => (String::new(), ""),
            };
            println!(
                "  {:<60} {ratio:6.2}x  ({:.1} ns / {:.1} ns){goal}{verdict}",
                r.name, r.numerator_ns, r.denominator_ns
            );
            json.push_str(&format!(
                "  {{\"name\": \"{}\", \"numerator_ns\": {:.3}, \"denominator_ns\": {:.3}, \"ratio\": {ratio:.4}, \"goal\": {}, \"met\": {}}}{}\n",
                r.name,
                r.numerator_ns,
                r.denominator_ns,
                r.goal.map_or("null".to_string(), |g| g.to_string()),
                r.goal.map_or("null".to_string(), |g| (ratio <= g).to_string()),
                if i + 1 < self.rows.len() { "," } else { "" }
            ));
        }
        json.push_str("]\n");
        write_json(kind, &json);
    }
}

/// Writes `json` to `<criterion dir>/ratios/<kind>.json` and says where (or why not).
pub fn write_json(kind: &str, json: &str) {
    let dir = criterion_dir().join("ratios");
    let path = dir.join(format!("{kind}.json"));
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, json)) {
        Ok(()) => println!("ratios written to {}", path.display()),
        Err(e) => println!("could not write {}: {e}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_ratio_takes_the_ratio_within_each_round() {
        // Round 2 is twice as slow for both: its ratio is still 2.
        let rounds = vec![vec![2.0, 1.0], vec![4.0, 2.0], vec![3.0, 1.0]];
        let r = median_ratio(&rounds, 0, 1);
        assert_eq!(r.median, 2.0);
        assert_eq!(r.q1, 2.0);
        assert_eq!(r.q3, 2.5);
        assert_eq!(r.denominator_ns, 1.0);
    }

    #[test]
    fn race_rounds_runs_every_competitor_every_round() {
        let counts = std::cell::RefCell::new([0usize; 3]);
        let mut cs: Vec<Competitor> = (0..3)
            .map(|i| {
                let counts = &counts;
                Box::new(move |ops: usize| counts.borrow_mut()[i] += ops) as Competitor
            })
            .collect();
        let r = race_rounds(&mut cs, 5, 4);
        drop(cs);
        assert_eq!(r.len(), 4);
        assert_eq!(*counts.borrow(), [25, 25, 25]);
    }
}
