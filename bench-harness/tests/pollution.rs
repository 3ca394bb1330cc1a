//! The memory-pressure workload (`bench_harness::pollution`): its page-in counting sees
//! the faults a memory limit causes. A deliberately tiny cgroup limit must show in-sync
//! page-ins and major faults; a limit the size of the whole working set must show almost
//! none. Needs root and a cgroup memory controller; without them each test prints one
//! `skipped:` line and passes.

use std::path::PathBuf;
use std::process::Command;

use bench_harness::pollution::{
    self, ArmOutcome, PollutionConfig, PollutionOutcome, PollutionScale, CGROUP_ENV,
};
use index_core::SearchStrategy;

const EXE: &str = env!("CARGO_BIN_EXE_bench-harness");

/// A limit far below the working set: the lagging consumer's scan evicts the in-sync
/// consumers' index pages (MiB). At 16 MiB the debug build's arms were OOM-killed about
/// half the time; at 20 MiB none was in a dozen arms, with 2-10 page-ins per 1000.
const TINY_MIB: u64 = 20;
/// A limit above the whole partition (128 MiB of `.log` at the small scale): nothing is
/// evicted (MiB).
const WHOLE_MIB: u64 = 1024;

fn skip() -> bool {
    match pollution::unavailable_reason() {
        Some(why) => {
            eprintln!("skipped: the memory-pressure workload cannot run here ({why})");
            true
        }
        None => false,
    }
}

fn leftover_cgroups() -> Vec<PathBuf> {
    let prefix = format!("bench-harness-pollution-{}-", std::process::id());
    ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

#[test]
fn a_tiny_limit_shows_page_ins_and_a_whole_working_set_limit_almost_none() {
    if skip() {
        return;
    }
    let cfg = |limits_mib: Vec<u64>| PollutionConfig {
        // A slower producer than the main job's: less work for the tiny cgroup.
        scale: PollutionScale {
            produce_bytes_per_sec: 256 << 10,
            ..PollutionScale::small()
        },
        limits_mib,
        strategies: vec![
            SearchStrategy::Binary,
            SearchStrategy::WarmCold {
                warm_section_bytes: 8192,
            },
        ],
        mitigation: false,
        seed: 42,
        exe: PathBuf::from(EXE),
        dir: None,
        skip: None,
    };

    // The whole working set fits: every arm is measured and (after the warm-up) hardly
    // any in-sync lookup finds its pages evicted.
    let first = pollution::run(&cfg(vec![TINY_MIB, WHOLE_MIB]), &mut |_, _, _| {}).unwrap();
    assert_eq!(first.skipped, None);
    assert_eq!(first.arms.len(), 4);
    println!("{}", bench_harness::report::render_pollution(&first));
    for a in first.arms.iter().filter(|a| a.limit_mib == WHOLE_MIB) {
        let ArmOutcome::Measured(r) = &a.outcome else {
            panic!("{} at {WHOLE_MIB} MiB: {:?}", a.strategy, a.outcome);
        };
        assert!(r.lookups > 1000, "{a:?}");
        assert!(
            r.page_ins_per_1000() < 0.5,
            "{} at {WHOLE_MIB} MiB: {:.2} page-ins per 1000 lookups",
            a.strategy,
            r.page_ins_per_1000()
        );
        assert!(r.lagging_bytes > 0, "{a:?}");
    }

    // The tiny limit: an arm may be OOM-killed (a reported outcome), but the measured
    // ones must see the evictions, in page-ins and in the threads' major faults. When
    // the OOM killer takes every arm, or the evictions of a run stay under one page-in
    // per 1000 lookups (the kernel's reclaim varies from run to run: 20 page-ins in
    // 23,225 lookups was seen once on an idle machine), the tiny limit runs again (at
    // most twice more).
    let mut tiny = Vec::new();
    let mut outcome = first;
    for attempt in 0..3 {
        if attempt > 0 {
            outcome = pollution::run(&cfg(vec![TINY_MIB]), &mut |_, _, _| {}).unwrap();
            println!("{}", bench_harness::report::render_pollution(&outcome));
        }
        tiny.clear();
        for a in outcome.arms.iter().filter(|a| a.limit_mib == TINY_MIB) {
            match &a.outcome {
                ArmOutcome::Measured(r) => tiny.push(r.clone()),
                ArmOutcome::OomKilled => {}
                ArmOutcome::Failed(why) => {
                    panic!("{} at {TINY_MIB} MiB failed: {why}", a.strategy)
                }
            }
        }
        let page_ins: u64 = tiny.iter().map(|r| r.page_ins).sum();
        let lookups: u64 = tiny.iter().map(|r| r.lookups).sum();
        if !tiny.is_empty() && page_ins * 1000 >= lookups {
            break;
        }
    }
    assert!(
        !tiny.is_empty(),
        "every arm at {TINY_MIB} MiB was OOM-killed, three times"
    );
    let page_ins: u64 = tiny.iter().map(|r| r.page_ins).sum();
    let majflt: u64 = tiny.iter().map(|r| r.major_faults).sum();
    let lookups: u64 = tiny.iter().map(|r| r.lookups).sum();
    assert!(
        page_ins * 1000 >= lookups,
        "at {TINY_MIB} MiB only {page_ins} page-ins in {lookups} in-sync lookups"
    );
    assert!(
        majflt > 0,
        "no major fault of an in-sync thread at {TINY_MIB} MiB"
    );
    assert!(
        leftover_cgroups().is_empty(),
        "cgroups left behind: {:?}",
        leftover_cgroups()
    );
}

#[test]
fn a_cgroup_left_by_a_dead_run_is_removed() {
    if skip() {
        return;
    }
    let kind = pollution::CgroupKind::detect().unwrap();
    // pid_max is at most 2^22 on Linux: no process has this pid.
    let root = match kind {
        pollution::CgroupKind::V1 => "/sys/fs/cgroup/memory",
        pollution::CgroupKind::V2 => "/sys/fs/cgroup",
    };
    let stale = PathBuf::from(root).join("bench-harness-pollution-4294967294-0");
    std::fs::create_dir(&stale).unwrap();
    // Every pollution run removes stale groups when it starts, so one running beside this
    // test (the other tests of this binary, another checkout's run) may remove it first:
    // the group being gone is the property, not who removed it.
    let removed = pollution::Cgroup::remove_stale(kind);
    assert!(
        !stale.exists(),
        "the stale group {} is still there ({removed} removed)",
        stale.display()
    );
}

#[test]
fn the_workload_can_be_turned_off_with_one_line() {
    let out = Command::new(EXE)
        .args(["--pollution-only", "--quiet"])
        .env(CGROUP_ENV, "off")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        format!("7. Under memory pressure: skipped ({CGROUP_ENV}=off).\n")
    );
}

#[test]
fn a_skipped_outcome_renders_as_one_line() {
    let o = PollutionOutcome {
        skipped: Some("no cgroup memory controller (v1 or v2) mounted".to_string()),
        cgroup: String::new(),
        scale: PollutionScale::small(),
        arms: Vec::new(),
        setup_secs: 0.0,
    };
    assert_eq!(
        bench_harness::report::render_pollution(&o).lines().count(),
        1
    );
}

#[test]
fn the_plot_has_a_line_per_strategy_and_mitigation_and_skips_oom_kills() {
    use bench_harness::pollution::{ArmResult, ArmRow};
    let mut arms = Vec::new();
    for (limit_mib, ins) in [(896u64, 0u64), (64, 10), (12, 500)] {
        for strategy in ["binary", "warm-cold", "page-directory"] {
            for mitigation in [false, true] {
                let outcome = if limit_mib == 12 && strategy == "warm-cold" {
                    ArmOutcome::OomKilled
                } else {
                    ArmOutcome::Measured(ArmResult {
                        lookups: 1000,
                        page_ins: ins,
                        major_faults: ins / 2,
                        ..ArmResult::default()
                    })
                };
                arms.push(ArmRow {
                    limit_mib,
                    strategy: strategy.to_string(),
                    mitigation,
                    outcome,
                });
            }
        }
    }
    let o = PollutionOutcome {
        skipped: None,
        cgroup: "cgroup v1".to_string(),
        scale: PollutionScale::small(),
        arms,
        setup_secs: 1.0,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(bench_harness::bench_report::POLLUTION_SVG);
    bench_harness::bench_report::write_pollution_plot(&o, &path).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    for label in [
        "binary",
        "binary + fadvise",
        "warm-cold + fadvise",
        "page-directory",
        "12 MiB",
        "896 MiB",
        "page-ins per 1000 in-sync lookups",
    ] {
        assert!(svg.contains(label), "no {label:?} in the plot");
    }
    let text = bench_harness::report::render_pollution(&o);
    assert_eq!(text.matches("OOM-killed").count(), 2, "{text}");
    // --json: a row per measured arm.
    let rows = bench_harness::report::pollution_rows(&o);
    assert_eq!(rows.len(), 16);
    let r = rows
        .iter()
        .find(|r| r.workload == "limit-12MiB-fadvise" && r.strategy == "binary")
        .unwrap();
    assert_eq!(r.section, "pollution");
    assert_eq!((r.page_ins, r.page_ins_per_1000), (Some(500), Some(500.0)));
}
