//! The main job's summary is the README's sample output, and stays within its size.
//!
//! The test replays the offset index exactly as `cargo run --release -p bench-harness`
//! does (default options, seed 42), renders the summary and compares it with the block
//! between `<!-- main-job-summary:start -->` and `<!-- main-job-summary:end -->` in the
//! workspace README. Only what the run measures on the machine is masked: page-ins (real
//! page cache), ns per lookup and its ratio to the in-memory limit. Everything else (the
//! pages per lookup of every strategy, the verdicts, the text) must match. To keep the test
//! quick it replays only the two workloads the summary reports (hot-tail and uniform: each
//! workload draws its own targets, so the figures are those of the full run), sweeps the
//! warm section only on the offset index for the two lag distributions the summary
//! reports (each distribution draws its own lags, so again the figures are the full
//! run's), and skips the real page faults and the latency loops, which the mask hides
//! anyway.

use bench_harness::cli::{SUMMARY_MAX_COLUMNS, SUMMARY_MAX_LINES};
use bench_harness::warm_sweep::{self, PageIns};
use bench_harness::workload::Workload;
use bench_harness::{replay_synthetic, Cli, IndexKind, RunOutcome};

const START: &str = "<!-- main-job-summary:start -->";
const END: &str = "<!-- main-job-summary:end -->";
const STRATEGY_ROWS: [&str; 5] = [
    "binary",
    "warm-cold",
    "page-directory",
    "hybrid",
    "in-memory",
];

/// The README block, without its code fence.
fn readme_block() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let start = readme
        .find(START)
        .expect("README has the summary start marker")
        + START.len();
    let end = readme.find(END).expect("README has the summary end marker");
    let block = readme[start..end].trim();
    let block = block
        .strip_prefix("```text")
        .and_then(|b| b.strip_suffix("```"))
        .expect("the summary block is a ```text fence");
    block.trim_matches('\n').to_string()
}

/// Each line's words, with the machine-measured columns of the strategy table masked.
fn masked(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            let mut words: Vec<&str> = line.split_whitespace().collect();
            if words.first().is_some_and(|w| STRATEGY_ROWS.contains(w)) && words.len() >= 5 {
                for w in &mut words[2..5] {
                    *w = "#";
                }
            }
            words.join(" ")
        })
        .collect()
}

fn check_size(what: &str, text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() <= SUMMARY_MAX_LINES,
        "{what}: {} lines > {SUMMARY_MAX_LINES}",
        lines.len()
    );
    for l in lines {
        assert!(
            l.chars().count() <= SUMMARY_MAX_COLUMNS,
            "{what}: line wider than {SUMMARY_MAX_COLUMNS} columns: {l:?}"
        );
    }
}

#[test]
fn readme_sample_output_is_the_summary_the_main_job_prints() {
    let cli = Cli::default();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = cli.replay_config();
    cfg.workloads = vec![Workload::HotTail, Workload::Uniform];
    let offset = replay_synthetic(IndexKind::Offset, &cfg, dir.path(), &mut |_, _| {}).unwrap();
    let scenario =
        bench_harness::scenario::run_kafka_6432(dir.path(), cli.page_size, cli.warm_section_bytes)
            .unwrap();
    let mut sweep_cfg = cli.warm_sweep_config();
    sweep_cfg.kinds = vec![IndexKind::Offset];
    sweep_cfg.distributions.truncate(2);
    sweep_cfg.page_ins = PageIns::Skip {
        reason: "not needed by the summary".to_string(),
    };
    let sweep = warm_sweep::run(&sweep_cfg, dir.path(), &mut |_, _| {}).unwrap();
    let outcome = RunOutcome {
        scenario,
        synthetic: vec![offset],
        real: None,
        real_skipped: None,
        real_faults: None,
        real_faults_skipped: None,
        latency: Vec::new(),
        warm_sweep: Some(sweep),
        warm_sweep_skipped: None,
        pollution: None,
        report_files: Vec::new(),
    };
    let summary = outcome.render_summary(&cli);
    check_size("the summary", &summary);
    // Without --details the main job prints the summary only.
    assert_eq!(outcome.render(&cli), summary);
    let readme = readme_block();
    check_size("the README block", &readme);
    assert_eq!(
        masked(&summary),
        masked(&readme),
        "README.md's main-job summary differs from what the main job prints:\n{summary}"
    );
    // The README block shows measured figures, not placeholders.
    for line in readme.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if STRATEGY_ROWS.contains(&first) {
            assert!(!line.contains("n/a"), "{line}");
        }
    }
}

#[test]
fn masking_hides_only_the_measured_columns() {
    let a = "binary                 11.76       640       84.5         1.21x  the baseline";
    let b = "binary                 11.76       n/a        n/a           n/a  the baseline";
    assert_eq!(masked(a), masked(b));
    let c = "binary                 11.77       640       84.5         1.21x  the baseline";
    assert_ne!(masked(a), masked(c));
}
