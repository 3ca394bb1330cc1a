//! The `ratios` section run after the criterion benchmarks of `index-offset`, `index-time`
//! and `segment` (the same file is in each crate's `benches/support/`).
//!
//! Criterion measures each benchmark on its own, one after the other; on a shared 2-core
//! machine the load changes between them and a ratio of two criterion results mixes two
//! different machines. Here the competitors of a ratio are instead **interleaved**: each
//! round times `ops` operations of every competitor in turn, and each competitor keeps
//! its **fastest** round (the least disturbed one) as its time per operation. The ratios
//! are printed and written as JSON to `<criterion dir>/ratios/<kind>.json`, where the
//! criterion directory is `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else
//! `criterion/` next to the bench executable's `release/` directory.
//!
//! `RATIO_ROUNDS` (default 25) sets the number of rounds.

use std::path::PathBuf;
use std::time::Instant;

/// Where criterion keeps its results (and this module its JSON).
fn criterion_dir() -> PathBuf {
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

/// Number of interleaved rounds.
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
    let mut best = vec![f64::INFINITY; competitors.len()];
    for f in competitors.iter_mut() {
        f(ops); // warm up
    }
    for _ in 0..rounds() {
        for (f, best) in competitors.iter_mut().zip(&mut best) {
            let start = Instant::now();
            f(ops);
            let ns = start.elapsed().as_nanos() as f64 / ops as f64;
            *best = best.min(ns);
        }
    }
    best
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
        let dir = criterion_dir().join("ratios");
        let path = dir.join(format!("{kind}.json"));
        match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, json)) {
            Ok(()) => println!("ratios written to {}", path.display()),
            Err(e) => println!("could not write {}: {e}", path.display()),
        }
    }
}
