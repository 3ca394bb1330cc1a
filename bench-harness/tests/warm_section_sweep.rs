//! The warm section sweep ("why 8192"): warm sections of 4-64 KiB against consumer lag in
//! bytes of log, at Kafka's index.interval.bytes of 4096.
//!
//! The bounds tested follow from Kafka's indexing rule as the producer model implements it:
//! an entry is written before the first batch that starts more than 4096 bytes after the
//! previous entry's batch, so consecutive entries are more than 4096 and at most
//! 4096 + 1561 bytes of log apart (1561 = the largest batch, 61 + 10 x 150 bytes). A
//! lookup lands in the warm section when at most `warm_section_bytes / entry size` entries
//! have a key at or above its target.

mod common;

use std::sync::OnceLock;

use bench_harness::bench_report;
use bench_harness::replay::IndexKind;
use bench_harness::warm_sweep::{
    self, LagDistribution, PageIns, WarmSweepConfig, WarmSweepOutcome, MIB,
};
use bench_harness::{run, Cli};

/// A 128 MiB segment: the lookups run from 64 MiB to 128 MiB of log, beyond every lag.
const SEGMENT: u64 = 128 * MIB;

/// Kafka's warm section of the offset index holds 1024 entries besides its first slot.
const KAFKA_OFFSET_WARM_ENTRIES: u64 = 8192 / 8;

/// Lags up to here span fewer than 1024 entries: `lag + 1561 < 1024 x 4097`.
const BELOW_KAFKA_REACH: u64 = KAFKA_OFFSET_WARM_ENTRIES * 4096 - 4096;

/// Lags from here span more than 8192 entries (64 KiB of offset index, more than the
/// time index's 5461): `50 MiB / (4096 + 1561) > 9000`.
const BEYOND_64_KIB_REACH: u64 = 50 * MIB;

fn page_size() -> usize {
    4096
}

/// The standard distributions plus two that test the bounds, both index kinds, no
/// page-ins.
fn simulated() -> &'static WarmSweepOutcome {
    static OUT: OnceLock<WarmSweepOutcome> = OnceLock::new();
    OUT.get_or_init(|| {
        let mut distributions = LagDistribution::standard();
        distributions.push(LagDistribution::uniform(
            "below-kafka-reach",
            0,
            BELOW_KAFKA_REACH,
        ));
        distributions.push(LagDistribution::uniform(
            "beyond-64-kib-reach",
            BEYOND_64_KIB_REACH,
            60 * MIB,
        ));
        let cfg = WarmSweepConfig {
            distributions,
            lookups: 8_000,
            segment_bytes: SEGMENT,
            page_ins: PageIns::Skip {
                reason: "simulated only".to_string(),
            },
            ..WarmSweepConfig::default()
        };
        let dir = tempfile::tempdir().unwrap();
        warm_sweep::run(&cfg, dir.path(), &mut |_, _| {}).unwrap()
    })
}

#[test]
fn every_point_is_answered_like_the_oracle_on_both_indexes() {
    let o = simulated();
    // 2 kinds x 6 distributions x (5 warm sections + the page directory).
    assert_eq!(o.points.len(), 2 * 6 * 6);
    for p in &o.points {
        assert_eq!(p.lookups, 8_000, "{p:?}");
        assert_eq!(p.answer_mismatches, 0, "{p:?}");
        assert_eq!(p.directory_fallbacks, 0, "{p:?}");
        assert!(p.page_ins.is_none() && p.probed_pages.is_none(), "{p:?}");
    }
    assert_eq!(o.page_ins.absent.as_deref(), Some("simulated only"));
    // Index entries follow Kafka's 4096-byte interval: more than 4096, at most 4096 + 1561
    // bytes of log per entry; the lookups ran while the segment grew from half to full.
    for i in &o.indexes {
        assert_eq!(o.index_interval_bytes, 4096);
        assert!(
            i.log_bytes_per_entry > 4096.0 && i.log_bytes_per_entry <= 5657.0,
            "{i:?}"
        );
        assert!(i.log_bytes_before >= SEGMENT / 2 && i.log_bytes_after >= SEGMENT);
        assert!(i.entries_after > 2 * i.entries_before - 100, "{i:?}");
        assert!(!i.index_full);
    }
    for (kind, entry) in [(IndexKind::Offset, 8), (IndexKind::Time, 12)] {
        for &w in &o.warm_sizes {
            let p = o.warm(kind, "in-sync", w).unwrap();
            assert_eq!(p.warm_section_entries, Some(w / entry));
            assert_eq!(p.warm_section_page_bound, Some(w.div_ceil(page_size()) + 1));
        }
    }
}

/// The same lookups (the same targets on the same snapshots) for every warm section: a
/// larger warm section starts at an earlier slot, so it serves every lookup a smaller one
/// serves.
#[test]
fn the_warm_share_never_decreases_with_the_warm_section() {
    let o = simulated();
    let mut sizes = o.warm_sizes.clone();
    sizes.sort_unstable();
    let mut grew = 0;
    for kind in [IndexKind::Offset, IndexKind::Time] {
        for d in &o.distributions {
            let served: Vec<u64> = sizes
                .iter()
                .map(|&w| o.warm(kind, &d.name, w).unwrap().warm_section_lookups)
                .collect();
            for pair in served.windows(2) {
                assert!(pair[0] <= pair[1], "{kind:?} {}: {served:?}", d.name);
                grew += usize::from(pair[0] < pair[1]);
            }
        }
    }
    // Not vacuous: 2-8 MiB behind, 4 KiB serves few lookups and 64 KiB all of them.
    assert!(grew >= 8, "{grew}");
    for kind in [IndexKind::Offset, IndexKind::Time] {
        let share = |w| o.warm(kind, "few-mib", w).unwrap().warm_share.unwrap();
        assert!(share(4096) < 0.1 && share(65536) == 1.0, "{kind:?}");
    }
}

/// Lags below 1024 x 4096 bytes of log span at most 1024 offset-index entries: every such
/// lookup lands in Kafka's 8 KiB warm section; so does every in-sync lookup (0-1 MiB) on
/// both indexes.
#[test]
fn lookups_within_kafkas_reach_land_in_its_8_kib_warm_section() {
    let o = simulated();
    let p = o
        .warm(IndexKind::Offset, "below-kafka-reach", 8192)
        .unwrap();
    assert_eq!(p.warm_section_lookups, p.lookups, "{p:?}");
    assert_eq!(p.warm_share, Some(1.0));
    for kind in [IndexKind::Offset, IndexKind::Time] {
        for &w in &o.warm_sizes {
            let p = o.warm(kind, "in-sync", w).unwrap();
            assert_eq!(p.warm_share, Some(1.0), "{kind:?} {w}");
        }
    }
    // The same lags reach past the 4 KiB warm section (512 entries, about 2.2 MiB of log)
    // for most lookups.
    let p = o
        .warm(IndexKind::Offset, "below-kafka-reach", 4096)
        .unwrap();
    assert!(p.warm_share.unwrap() < 0.6, "{p:?}");
}

/// Lags of 50-60 MiB span more than 8192 entries: no swept warm section serves them.
#[test]
fn lags_beyond_64_kib_of_index_never_land_in_a_warm_section() {
    let o = simulated();
    for kind in [IndexKind::Offset, IndexKind::Time] {
        for &w in &o.warm_sizes {
            let p = o.warm(kind, "beyond-64-kib-reach", w).unwrap();
            assert_eq!(p.warm_section_lookups, 0, "{kind:?} {w}");
            assert_eq!(p.warm_share, Some(0.0));
            assert_eq!(p.warm_section_max_pages, 0);
        }
    }
}

/// A warm lookup searches only the warm section: `ceil(warm_section_bytes / page) + 1`
/// pages at most (3 for Kafka's 8 KiB); the cold ones read more.
#[test]
fn warm_lookups_read_at_most_the_warm_sections_pages() {
    let o = simulated();
    let mut checked = 0;
    for p in o.points.iter().filter(|p| p.warm_section_bytes.is_some()) {
        let w = p.warm_section_bytes.unwrap();
        let bound = w.div_ceil(page_size()) + 1;
        assert_eq!(p.warm_section_page_bound, Some(bound));
        if p.warm_section_lookups > 0 {
            assert!(p.warm_section_mean_pages <= bound as f64, "{p:?}");
            assert!(p.warm_section_max_pages <= bound, "{p:?}");
            assert!(p.warm_section_mean_pages >= 1.0, "{p:?}");
            checked += 1;
        }
        if w == 8192 {
            assert!(p.warm_section_max_pages <= 3, "{p:?}");
        }
        assert!(p.mean_pages >= 1.0 && p.max_pages >= p.warm_section_max_pages);
    }
    assert!(checked >= 40, "{checked}");
    // In-sync lookups on the offset index: 4 KiB reads 2 pages at most, 8 KiB 3.
    assert_eq!(
        o.warm(IndexKind::Offset, "in-sync", 4096)
            .unwrap()
            .warm_section_max_pages,
        2
    );
    assert_eq!(
        o.warm(IndexKind::Offset, "in-sync", 8192)
            .unwrap()
            .warm_section_max_pages,
        3
    );
    // 10-60 MiB behind, 8 KiB serves nothing: every lookup is a cold bisection.
    let p = o.warm(IndexKind::Offset, "tens-of-mib", 8192).unwrap();
    assert_eq!(p.warm_section_lookups, 0);
    assert!(p.cold_mean_pages > 5.0, "{p:?}");
}

/// The page directory reads exactly one page per lookup on the 8-byte offset index, at
/// every lag; on the 12-byte time index at most two (a straddling answer entry).
#[test]
fn the_page_directory_reads_one_page_per_lookup_on_the_offset_index() {
    let o = simulated();
    for d in &o.distributions {
        let p = o.page_directory(IndexKind::Offset, &d.name).unwrap();
        assert_eq!(p.strategy, "page-directory");
        assert_eq!(p.warm_share, None);
        assert_eq!(p.mean_pages, 1.0, "{p:?}");
        assert_eq!(p.max_pages, 1, "{p:?}");
        let t = o.page_directory(IndexKind::Time, &d.name).unwrap();
        assert!(t.max_pages <= 2 && t.mean_pages < 1.01, "{t:?}");
    }
}

/// The measured answer and the summary sentence state the figures of the table.
#[test]
fn the_answer_states_the_measured_figures() {
    let o = simulated();
    let answer = warm_sweep::answer(o).join("\n");
    let kafka = o.warm(IndexKind::Offset, "few-mib", 8192).unwrap();
    let share = format!("{:.1}%", 100.0 * kafka.warm_share.unwrap());
    assert!(
        answer.contains(&format!("{share} of few-mib (2-8 MiB)")),
        "{answer}"
    );
    assert!(answer.contains("offset index: Kafka's 8 KiB warm section (1024 entries"));
    assert!(answer.contains("time index: Kafka's 8 KiB warm section (682 entries"));
    assert!(
        answer.contains("a warm lookup read at most 3 pages"),
        "{answer}"
    );
    let summary = warm_sweep::summary_sentence(o).unwrap();
    assert!(
        summary.contains(&format!(
            "it serves 100.0% of in-sync (0-1 MiB behind) and {share} of 2-8 MiB-behind lookups in <= 3 pages"
        )),
        "{summary}"
    );
    // The smallest warm section serving at least 99% of the 2-8 MiB lags, with its pages.
    let w = o
        .warm_sizes
        .iter()
        .copied()
        .find(|&w| {
            o.warm(IndexKind::Offset, "few-mib", w)
                .unwrap()
                .warm_share
                .unwrap()
                >= 0.99
        })
        .unwrap();
    assert!(w > 8192, "{w}");
    assert!(
        summary.contains(&format!("({}: ", warm_sweep::warm_size_text(w))),
        "{summary}"
    );
}

/// Real page-ins on the evicted, growing index (readahead off), or, where no directory
/// evicts, no figures and the reason.
#[test]
fn page_ins_are_measured_on_an_evicted_index_or_absent_with_the_reason() {
    let cfg = WarmSweepConfig {
        warm_sizes: vec![8192, 65536],
        distributions: vec![
            LagDistribution::in_sync(),
            LagDistribution::tens_of_mib_behind(),
        ],
        kinds: vec![IndexKind::Offset],
        lookups: 4_000,
        segment_bytes: SEGMENT,
        ..WarmSweepConfig::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let o = warm_sweep::run(&cfg, dir.path(), &mut |_, _| {}).unwrap();
    assert_eq!(o.points.len(), 2 * 3);
    let Some(location) = &o.page_ins.location else {
        let why = o.page_ins.absent.as_deref().unwrap();
        assert!(why.contains("no directory"), "{why}");
        assert!(!o.page_ins.rejected.is_empty());
        assert!(o.points.iter().all(|p| p.page_ins.is_none()));
        eprintln!("page-ins not measured here: {why}");
        return;
    };
    assert!(o.page_ins.absent.is_none(), "{location:?}");
    assert!(
        o.page_ins.unmeasured.is_empty(),
        "{:?}",
        o.page_ins.unmeasured
    );
    let baseline = o.page_ins.baselines[0].1;
    for p in &o.points {
        let (ins, probed) = (p.page_ins.unwrap(), p.probed_pages.unwrap());
        // Without readahead a run brings in what its lookups touch, less what the
        // appender brought in anyway (the baseline).
        assert!(ins <= probed && probed <= ins + baseline, "{p:?}");
        assert_eq!(p.directory_fallbacks, 0);
    }
    let ins = |lag: &str, w: Option<usize>| {
        o.points
            .iter()
            .find(|p| p.lag == lag && p.warm_section_bytes == w)
            .and_then(|p| p.page_ins)
            .unwrap()
    };
    // In sync: the warm section's pages written before the run (3 at most for 8 KiB, 17
    // for 64 KiB), the page directory the page or two holding the answers.
    assert!(ins("in-sync", Some(8192)) <= 3);
    assert!(ins("in-sync", Some(65536)) <= 17);
    assert!(ins("in-sync", None) <= 2);
    // 10-60 MiB behind, 8 KiB serves nothing: the cold bisection's moving path reads
    // more pages back than the page directory, which reads the answers' pages only.
    assert!(
        ins("tens-of-mib", Some(8192)) > ins("tens-of-mib", None),
        "{} vs {}",
        ins("tens-of-mib", Some(8192)),
        ins("tens-of-mib", None)
    );
}

/// The main job runs the sweep: a summary sentence, the details table, `warm-sweep`
/// result rows, and the report's section and plot.
#[test]
fn the_main_job_reports_the_sweep() {
    let cli = common::small_cli(
        &[
            &common::SMALL_WARM_SWEEP[..],
            &["--skip-real-faults", "--latency-lookups", "0"],
        ]
        .concat(),
    );
    let out = run(&cli, &mut |_, _, _| {}).unwrap();
    let o = out.warm_sweep.as_ref().unwrap();
    assert_eq!(o.lookups, 2000);
    assert_eq!(
        o.page_ins.absent.as_deref(),
        Some("skipped (--skip-real-faults)")
    );
    let summary = out.render_summary(&cli);
    assert!(
        summary.contains("Warm section: Kafka's 8 KiB = "),
        "{summary}"
    );
    let details = out.render(&Cli {
        details: true,
        ..cli.clone()
    });
    for text in [
        "6. Warm section sweep (why 8192): warm/cold with warm sections of 4-64 KiB",
        "8 KiB (Kafka)",
        "page-ins: not measured: skipped (--skip-real-faults).",
        "Answers differing from a partition_point oracle: 0",
    ] {
        assert!(details.contains(text), "no {text:?} in:\n{details}");
    }
    let rows: Vec<_> = out
        .rows()
        .into_iter()
        .filter(|r| r.section == "warm-sweep")
        .collect();
    assert_eq!(rows.len(), 2 * 4 * 6);
    for r in &rows {
        assert_eq!(
            r.warm_section_bytes.is_some(),
            r.strategy == "warm-cold",
            "{r:?}"
        );
        assert!(r.page_ins.is_none() && r.lookups == 2000);
    }
    let md = bench_report::warm_section_markdown(o);
    assert!(md.contains("## Why 8192: the warm section size"));
    assert!(md.contains(&format!("]({})", bench_report::WARM_SECTION_SVG)));
    assert!(md.contains("**The measured answer.**"));
    assert!(
        md.contains("| offset | in-sync | warm share | 100.0% |"),
        "{md}"
    );
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join(bench_report::WARM_SECTION_SVG);
    bench_report::write_warm_section_plot(o, &svg).unwrap();
    let svg = std::fs::read_to_string(svg).unwrap();
    for label in ["4 KiB", "8 KiB", "64 KiB", "Kafka: 8 KiB"] {
        assert!(svg.contains(&format!(">\n{label}\n<")), "no label {label}");
    }
    assert!(svg.contains("lookups served by the warm section"));
    assert!(svg.contains("real page-ins not measured"));
}
