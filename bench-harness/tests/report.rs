//! `--report-dir`: the size sweep, report.md and the SVG plots (with their axis labels as
//! SVG text, drawn without any font library).

mod common;

use bench_harness::run;

/// Fails naming the first of `needles` that `text` (the contents of `file`) lacks.
fn assert_contains_all(file: &str, text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "{file} lacks {needle:?}");
    }
}

#[test]
fn report_dir_gets_markdown_svg_plots_and_sweep_json() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("bench-report");
    let cli = common::small_cli(
        &[
            &common::SMALL_WARM_SWEEP[..],
            &[
                "--real-fault-lookups",
                "2000",
                "--latency-lookups",
                "2000",
                "--report-sizes",
                "16384,65536",
                "--report-dir",
                report.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    let out = run(&cli, &mut |_, _, _| {}).unwrap();
    let names: Vec<String> = out
        .report_files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "pages-per-lookup.svg",
            "page-faults.svg",
            "latency.svg",
            "warm-section.svg",
            "sweep.json",
            "report.md"
        ]
    );
    let svg = std::fs::read_to_string(report.join("pages-per-lookup.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    assert_contains_all(
        "pages-per-lookup.svg",
        &svg,
        &[
            "index size (bytes, log scale)",
            "pages per lookup (4 KiB pages)",
            "16 KiB",
            "64 KiB",
            "page-directory, hot-tail",
            "binary, uniform",
        ],
    );
    assert!(svg.matches("<text").count() >= 10);
    let faults = std::fs::read_to_string(report.join("page-faults.svg")).unwrap();
    assert!(
        faults.contains("faults per 1000 lookups") && faults.contains("page-ins per 1000 lookups")
    );
    let latency = std::fs::read_to_string(report.join("latency.svg")).unwrap();
    assert!(latency.contains("ns per lookup") && latency.contains("in-memory partition_point"));

    let sweep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("sweep.json")).unwrap()).unwrap();
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points.len(), 2 * 4);
    for p in points {
        if p["strategy"] == "page-directory" {
            // At most one page per lookup on the 8-byte offset index; none for the first
            // hot-tail lookups of the fill (targets below the first entry) and for answers
            // that are a page's first slot (the fence entry, kept in memory).
            let hot = p["hot_tail_mean_pages"].as_f64().unwrap();
            assert!(hot <= 1.0 && hot > 0.98, "{p}");
            let uniform = p["uniform_mean_pages"].as_f64().unwrap();
            assert!(uniform <= 1.0 && uniform > 0.99, "{p}");
        } else {
            assert!(p["hot_tail_mean_pages"].as_f64().unwrap() > 1.5, "{p}");
        }
        assert!(p["hot_tail_ns"].as_f64().unwrap() > 0.0);
    }
    // The main run's warm section sweep: 2 kinds x 4 lag distributions x (5 warm sections
    // + the page directory), with Kafka's index.interval.bytes.
    let warm = &sweep["warm_section"];
    assert_eq!(warm["index_interval_bytes"], 4096);
    assert_eq!(warm["points"].as_array().unwrap().len(), 2 * 4 * 6);
    let svg = std::fs::read_to_string(report.join("warm-section.svg")).unwrap();
    assert_contains_all(
        "warm-section.svg",
        &svg,
        &[
            "warm section (bytes of index, log scale)",
            "% of lookups",
            "Kafka: 8 KiB",
            "in-sync 0-1 MiB",
            "dashed: the page directory at the same lag",
        ],
    );
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert_contains_all(
        "report.md",
        &md,
        &[
            "![pages per lookup](pages-per-lookup.svg)",
            "![latency](latency.svg)",
            "| 16 KiB | 2048 | page-directory |",
            "| 64 KiB | 8192 | binary |",
            "## Main run",
            "4. Real page faults",
            "## Why 8192: the warm section size",
            "![warm section size vs consumer lag](warm-section.svg)",
            "**The measured answer.**",
            "6. Warm section sweep (why 8192)",
            // The tests' small main job skips the memory-pressure workload (it has its
            // own test, tests/pollution.rs): one line, no plot.
            "## Under memory pressure",
            "7. Under memory pressure: skipped (--skip-pollution).",
        ],
    );
    assert!(!md.contains("pollution.svg"));
}
