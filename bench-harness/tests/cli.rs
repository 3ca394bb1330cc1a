//! The command-line surface: options, help, the full run and the JSON rows.

mod common;

use bench_harness::{run, Cli};
use clap::{CommandFactory, Parser};

#[test]
fn help_documents_every_option() {
    let mut cmd = Cli::command();
    let help = cmd.render_long_help().to_string();
    for opt in [
        "--data-dir",
        "--json",
        "--cache-pages",
        "--page-size",
        "--lookups",
        "--seed",
        "--index-bytes",
        "--quiet",
        "--skip-real",
        "--lookups-per-round",
        "--warm-section-bytes",
        "--skip-real-faults",
        "--real-faults-dir",
        "--real-fault-lookups",
        "--latency-lookups",
        "--report-dir",
        "--report-sizes",
        "--warm-sweep-lookups",
        "--warm-sweep-sizes",
        "--warm-sweep-segment-bytes",
    ] {
        assert!(help.contains(opt), "--help lacks {opt}");
    }
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if id == "help" || id == "version" {
            continue;
        }
        assert!(arg.get_help().is_some(), "option {id} has no doc comment");
    }
}

#[test]
fn defaults_match_kafka() {
    let cli = Cli::parse_from(["bench-harness"]);
    assert_eq!(cli.index_bytes, 10_485_760);
    assert_eq!(cli.page_size, 4096);
    assert_eq!(cli.cache_pages, 32);
    assert_eq!(cli.warm_section_bytes, 8192);
    assert!(Cli::parse_from(["bench-harness", "--page-size", "4100"])
        .validate()
        .is_err());
    // Multiples of 8 that are not powers of two: the page directory would round them up.
    assert!(Cli::parse_from(["bench-harness", "--page-size", "4104"])
        .validate()
        .is_err());
    assert_eq!(
        cli.report_sizes,
        [16384, 65536, 262144, 1048576, 4194304, 10485760]
    );
    assert_eq!(cli.real_fault_lookups, 100_000);
    assert!(!cli.skip_real_faults);
    // The warm section sweep: 4-64 KiB against Kafka's segment.bytes, at Kafka's
    // index.interval.bytes whatever --index-interval-bytes says.
    assert_eq!(cli.warm_sweep_sizes, [4096, 8192, 16384, 32768, 65536]);
    assert_eq!(cli.warm_sweep_segment_bytes, 1 << 30);
    assert_eq!(cli.warm_sweep_lookups, 20_000);
    assert_eq!(cli.index_interval_bytes, 512);
    assert_eq!(cli.warm_sweep_config().producer.index_interval_bytes, 4096);
    // Lookups start when the segment is half full: it must hold twice the largest lag.
    assert!(
        Cli::parse_from(["bench-harness", "--warm-sweep-segment-bytes", "100000000"])
            .validate()
            .is_err()
    );
    assert!(
        Cli::parse_from(["bench-harness", "--warm-sweep-sizes", "8192,0"])
            .validate()
            .is_err()
    );
}

#[test]
fn small_full_run_produces_rows_with_the_documented_fields() {
    let cli = common::small_cli(&[
        "--skip-real-faults",
        "--latency-lookups",
        "0",
        "--warm-sweep-lookups",
        "0",
    ]);
    let mut phases = Vec::new();
    let out = run(&cli, &mut |p, _, _| phases.push(p.to_string())).unwrap();
    assert!(phases.iter().any(|p| p.contains("offset")));
    let rows = out.rows();
    // 4 scenario rows + 2 indexes x 4 workloads x 4 strategies.
    assert_eq!(rows.len(), 4 + 32);
    let json: serde_json::Value = serde_json::to_value(&rows).unwrap();
    for row in json.as_array().unwrap() {
        for key in [
            "workload",
            "strategy",
            "lookups",
            "mean_pages",
            "max_pages",
            "warm_section_lookups",
            "warm_section_max_pages",
            "lru_faults",
            "index",
            "index_bytes",
        ] {
            assert!(row.get(key).is_some(), "row lacks {key}: {row}");
        }
    }
    let hot_wc = rows
        .iter()
        .find(|r| {
            r.section == "synthetic"
                && r.index == "offset"
                && r.workload == "hot-tail"
                && r.strategy == "warm-cold"
        })
        .unwrap();
    assert_eq!(hot_wc.lookups, 2000);
    assert!(hot_wc.warm_section_max_pages <= 3);
    // The summary alone by default; the tables with --details.
    let text = out.render(&cli);
    assert!(text.contains("KAFKA-6432") && text.contains("page-directory"));
    assert!(text.contains("n/a") && !text.contains("--skip-real-faults"));
    assert!(!text.contains("goal"), "no internal goal lines: {text}");
    let details = Cli {
        details: true,
        ..cli.clone()
    };
    let text = out.render(&details);
    assert!(text.contains("hot-tail") && text.contains("skipped"));
    assert!(text.contains("page-directory") && text.contains("--skip-real-faults"));
    assert!(text.contains("6. Warm section sweep: skipped (--warm-sweep-lookups 0)"));
    assert!(out.warm_sweep.is_none());
    assert!(!text.contains("goal"), "no internal goal lines: {text}");
    assert!(out.latency.is_empty() && out.real_faults.is_none());
}
