//! Result rows (for `--json`) and the aligned text tables printed on stdout.

use std::fmt::Write as _;

use serde::Serialize;

use crate::latency::{LatencyRow, IN_MEMORY};
use crate::real_data::RealDataOutcome;
use crate::real_faults::{Phase, Readahead, RealFaultOutcome, Rejected};
use crate::replay::{IndexKind, ReplayOutcome, StrategyStats, WorkloadStats};
use crate::scenario::ScenarioResult;
use crate::warm_sweep::{self, WarmSweepOutcome};

/// One result row: one strategy on one workload over one index.
///
/// `real-faults` rows (real page-ins, see [`crate::real_faults`]) and `latency` rows
/// (ns per lookup, see [`crate::latency`]) fill only the fields that apply: their
/// page-probe and LRU fields (`mean_pages` ... `append_faults`) are 0. `warm-sweep` rows
/// (see [`crate::warm_sweep`]) have the lag distribution as `workload`, the warm section
/// in `warm_section_bytes`, no LRU figures, and the page-in fields when measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResultRow {
    /// `kafka-6432`, `synthetic`, `real`, `real-faults`, `latency`, `warm-sweep` or
    /// `pollution`.
    pub section: String,
    /// `offset`/`time` for synthetic runs, the file path relative to the data directory
    /// for real files.
    pub index: String,
    /// Index file size in bytes.
    pub index_bytes: u64,
    /// Entries in the index at the end of the replay.
    pub entries: u64,
    /// Workload label.
    pub workload: String,
    /// Strategy name (`binary`, `warm-cold`, `page-directory`; `appends-only` for the
    /// real-fault baseline, `in-memory partition_point` for the latency limit).
    pub strategy: String,
    /// Lookups made.
    pub lookups: u64,
    /// Mean distinct pages touched per lookup (pages).
    pub mean_pages: f64,
    /// Most distinct pages touched by one lookup (pages).
    pub max_pages: u64,
    /// Mean slots read per lookup (entries).
    pub mean_reads: f64,
    /// Lookups landing in the warm section (same criterion for every strategy).
    pub warm_section_lookups: u64,
    /// Mean distinct pages over the warm-section lookups (pages).
    pub warm_section_mean_pages: f64,
    /// Most distinct pages touched by one warm-section lookup (pages).
    pub warm_section_max_pages: u64,
    /// Lookup page touches that missed the simulated LRU cache (pages).
    pub lru_faults: u64,
    /// Appender page touches that missed the simulated LRU cache (pages).
    pub append_faults: u64,
    /// Capacity of the simulated LRU cache (pages).
    pub cache_pages: u64,
    /// Page size (bytes).
    pub page_size: u64,
    /// Lookups whose answers differed between strategies, from the oracle, or from the
    /// index crate's `lookup` (must be 0).
    pub answer_mismatches: u64,
    /// KAFKA-6432 only: pages touched by the tail lookup before the growth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages_before: Option<Vec<usize>>,
    /// KAFKA-6432 only: pages touched by the tail lookup after the growth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages_after: Option<Vec<usize>>,
    /// KAFKA-6432 only: cold pages (new, not the appender's) after the growth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold_pages: Option<Vec<usize>>,
    /// Synthetic and real rows: page-directory lookups answered without a directory
    /// (the warm/cold fallback; must be 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directory_fallbacks: Option<u64>,
    /// Real-faults only: `static` or `growing`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Real-faults only: kernel readahead `kernel` (default) or `off` (`MADV_RANDOM`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readahead: Option<String>,
    /// Real-faults only: OS pages brought into the page cache by the lookups (residency
    /// after minus right after evicting; growing phase: minus the appends-only baseline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_ins: Option<u64>,
    /// Real-faults only: major page faults during the run (growing phase: minus the
    /// baseline's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub major_faults: Option<u64>,
    /// Real-faults only: `page_ins` per 1000 lookups.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_ins_per_1000: Option<f64>,
    /// Real-faults only: distinct OS pages the lookups touched per the page probe (what
    /// must be brought in without readahead).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probed_pages: Option<u64>,
    /// Warm-sweep only: the warm section of this warm/cold row (bytes; absent for the
    /// page directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm_section_bytes: Option<u64>,
    /// Latency only: median time per lookup over the interleaved rounds (ns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns_per_lookup: Option<f64>,
    /// Latency only: median per-round ratio to the in-memory `partition_point` (ratio).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_to_in_memory: Option<f64>,
}

impl ResultRow {
    /// A row of `section` with every measurement field empty (0 or `None`).
    pub fn empty(section: &str) -> Self {
        ResultRow {
            section: section.to_string(),
            index: String::new(),
            index_bytes: 0,
            entries: 0,
            workload: String::new(),
            strategy: String::new(),
            lookups: 0,
            mean_pages: 0.0,
            max_pages: 0,
            mean_reads: 0.0,
            warm_section_lookups: 0,
            warm_section_mean_pages: 0.0,
            warm_section_max_pages: 0,
            lru_faults: 0,
            append_faults: 0,
            cache_pages: 0,
            page_size: 0,
            answer_mismatches: 0,
            pages_before: None,
            pages_after: None,
            cold_pages: None,
            directory_fallbacks: None,
            phase: None,
            readahead: None,
            page_ins: None,
            major_faults: None,
            page_ins_per_1000: None,
            probed_pages: None,
            warm_section_bytes: None,
            ns_per_lookup: None,
            ratio_to_in_memory: None,
        }
    }
}

/// Rows of the real-fault measurement: one per run.
pub fn real_fault_rows(o: &RealFaultOutcome) -> Vec<ResultRow> {
    o.runs
        .iter()
        .map(|r| ResultRow {
            index: r.kind.name().to_string(),
            index_bytes: o.index_bytes as u64,
            workload: "hot-tail".to_string(),
            strategy: r.strategy.clone(),
            lookups: r.lookups,
            page_size: o.os_page_size as u64,
            directory_fallbacks: Some(r.directory_fallbacks),
            phase: Some(r.phase.name().to_string()),
            readahead: Some(r.readahead.name().to_string()),
            page_ins: Some(r.page_ins),
            major_faults: Some(r.major_faults),
            page_ins_per_1000: Some(r.page_ins_per_1000()),
            probed_pages: Some(r.probed_pages as u64),
            ..ResultRow::empty("real-faults")
        })
        .collect()
}

/// Rows of the latency measurement: one per index kind, workload and strategy (plus the
/// in-memory limit).
pub fn latency_rows(rows: &[LatencyRow]) -> Vec<ResultRow> {
    rows.iter()
        .map(|r| ResultRow {
            index: r.kind.name().to_string(),
            index_bytes: r.index_bytes as u64,
            entries: r.entries as u64,
            workload: r.workload.clone(),
            strategy: r.strategy.clone(),
            lookups: r.lookups as u64,
            answer_mismatches: r.mismatches,
            ns_per_lookup: Some(r.ns_per_lookup),
            ratio_to_in_memory: Some(r.ratio_to_in_memory),
            ..ResultRow::empty("latency")
        })
        .collect()
}

/// Rows of the warm section sweep: one per index kind, lag distribution and strategy.
pub fn warm_sweep_rows(o: &WarmSweepOutcome) -> Vec<ResultRow> {
    o.points
        .iter()
        .map(|p| {
            let measured = p.page_ins.is_some();
            ResultRow {
                index: p.kind.name().to_string(),
                index_bytes: o.index_bytes as u64,
                entries: o.index(p.kind).map_or(0, |i| i.entries_after as u64),
                workload: p.lag.clone(),
                strategy: p.strategy.clone(),
                lookups: p.lookups,
                mean_pages: p.mean_pages,
                max_pages: p.max_pages as u64,
                warm_section_lookups: p.warm_section_lookups,
                warm_section_mean_pages: p.warm_section_mean_pages,
                warm_section_max_pages: p.warm_section_max_pages as u64,
                page_size: o.page_size as u64,
                answer_mismatches: p.answer_mismatches,
                directory_fallbacks: Some(p.directory_fallbacks),
                phase: measured.then(|| "growing".to_string()),
                readahead: measured.then(|| "off".to_string()),
                page_ins: p.page_ins,
                major_faults: p.major_faults,
                page_ins_per_1000: p.page_ins_per_1000,
                probed_pages: p.probed_pages,
                warm_section_bytes: p.warm_section_bytes.map(|b| b as u64),
                ..ResultRow::empty("warm-sweep")
            }
        })
        .collect()
}

/// `pollution` rows ([`crate::pollution`]), one per measured arm: `index` is `offset`,
/// `index_bytes` the active `.index` size, `workload` `limit-<N>MiB` (with `-fadvise` for
/// the mitigation), `lookups` the counted in-sync lookups, `page_ins`, `major_faults`,
/// `page_ins_per_1000` the in-sync threads' (OOM-killed or failed arms have no row; the
/// latency and scan figures are in `--pollution-only --json`'s outcome).
pub fn pollution_rows(p: &crate::pollution::PollutionOutcome) -> Vec<ResultRow> {
    use crate::pollution::ArmOutcome;
    p.arms
        .iter()
        .filter_map(|a| match &a.outcome {
            ArmOutcome::Measured(r) => Some(ResultRow {
                index: "offset".to_string(),
                index_bytes: p.scale.index_bytes as u64,
                workload: format!(
                    "limit-{}MiB{}",
                    a.limit_mib,
                    if a.mitigation { "-fadvise" } else { "" }
                ),
                strategy: a.strategy.clone(),
                lookups: r.lookups,
                page_size: 4096,
                page_ins: Some(r.page_ins),
                major_faults: Some(r.major_faults),
                page_ins_per_1000: Some(r.page_ins_per_1000()),
                ..ResultRow::empty("pollution")
            }),
            _ => None,
        })
        .collect()
}

fn row_from(
    section: &str,
    index: &str,
    index_bytes: u64,
    entries: u64,
    w: &WorkloadStats,
    s: &StrategyStats,
) -> ResultRow {
    ResultRow {
        index: index.to_string(),
        index_bytes,
        entries,
        workload: w.workload.clone(),
        strategy: s.strategy.name().to_string(),
        lookups: s.lookups,
        mean_pages: s.mean_pages(),
        max_pages: s.max_pages as u64,
        mean_reads: s.mean_reads(),
        warm_section_lookups: s.warm_section_lookups,
        warm_section_mean_pages: s.warm_section_mean_pages(),
        warm_section_max_pages: s.warm_section_max_pages as u64,
        lru_faults: s.lru_faults,
        append_faults: s.append_faults,
        cache_pages: s.cache().capacity() as u64,
        page_size: w.page_size() as u64,
        answer_mismatches: w.answer_mismatches + w.oracle_mismatches + w.api_mismatches,
        directory_fallbacks: Some(w.directory_fallbacks),
        ..ResultRow::empty(section)
    }
}

/// Rows of a synthetic replay: one per workload and strategy.
pub fn synthetic_rows(o: &ReplayOutcome) -> Vec<ResultRow> {
    o.workloads
        .iter()
        .flat_map(|w| {
            w.strategies.iter().map(move |s| {
                row_from(
                    "synthetic",
                    o.kind.name(),
                    o.index_bytes as u64,
                    o.entries as u64,
                    w,
                    s,
                )
            })
        })
        .collect()
}

/// Rows of the real-data replay: one per file and strategy.
pub fn real_rows(o: &RealDataOutcome) -> Vec<ResultRow> {
    o.replays
        .iter()
        .flat_map(|r| {
            r.stats.strategies.iter().map(move |s| {
                row_from(
                    "real",
                    &r.file.name,
                    r.file.bytes,
                    r.entries as u64,
                    &r.stats,
                    s,
                )
            })
        })
        .collect()
}

/// Rows of the KAFKA-6432 scenario: one per strategy. `lookups` is 2 (one tail lookup on
/// the 13-page index, one on the 14-page index); the page figures cover both; there is no
/// LRU cache (`cache_pages` 0) and `lru_faults` counts the pages of the 14-page lookup
/// that the 13-page lookup had not touched (the faults a cache holding exactly the
/// previous lookup's pages would take, the appender's page included).
pub fn scenario_rows(s: &ScenarioResult) -> Vec<ResultRow> {
    s.strategies
        .iter()
        .map(|st| ResultRow {
            index: "offset".to_string(),
            index_bytes: (s.pages_after * s.page_size) as u64,
            entries: s.entries_after as u64,
            workload: "tail-lookup-13-to-14-pages".to_string(),
            strategy: st.strategy.clone(),
            lookups: 2,
            mean_pages: (st.pages_before.len() + st.pages_after.len()) as f64 / 2.0,
            max_pages: st.pages_before.len().max(st.pages_after.len()) as u64,
            mean_reads: 0.0,
            warm_section_lookups: 2,
            warm_section_mean_pages: (st.pages_before.len() + st.pages_after.len()) as f64 / 2.0,
            warm_section_max_pages: st.pages_before.len().max(st.pages_after.len()) as u64,
            lru_faults: st.new_pages.len() as u64,
            append_faults: 0,
            cache_pages: 0,
            page_size: s.page_size as u64,
            answer_mismatches: 0,
            pages_before: Some(st.pages_before.clone()),
            pages_after: Some(st.pages_after.clone()),
            cold_pages: Some(st.cold_pages.clone()),
            ..ResultRow::empty("kafka-6432")
        })
        .collect()
}

/// Column alignment of a [`Table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Pad on the right (text).
    Left,
    /// Pad on the left (numbers).
    Right,
}

/// A plain-text table with aligned columns.
#[derive(Clone, Debug, Default)]
pub struct Table {
    headers: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers and alignments.
    pub fn new(headers: &[(&str, Align)]) -> Self {
        Table {
            headers: headers.iter().map(|(h, a)| (h.to_string(), *a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (missing cells are blank, extra cells are ignored).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Adds an empty separator line.
    pub fn separator(&mut self) {
        self.rows.push(Vec::new());
    }

    /// Renders the table: a header line, a rule, then the rows; columns separated by two
    /// spaces.
    pub fn render(&self) -> String {
        let n = self.headers.len();
        let mut widths: Vec<usize> = self
            .headers
            .iter()
            .map(|(h, _)| h.chars().count())
            .collect();
        for r in &self.rows {
            for (i, c) in r.iter().take(n).enumerate() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        let line = |cells: &mut dyn Iterator<Item = &str>, out: &mut String| {
            let mut s = String::new();
            for (i, (_, align)) in self.headers.iter().enumerate() {
                let c = cells.next().unwrap_or("");
                if i > 0 {
                    s.push_str("  ");
                }
                let pad = widths[i].saturating_sub(c.chars().count());
                match align {
                    Align::Left => {
                        s.push_str(c);
                        s.extend(std::iter::repeat_n(' ', pad));
                    }
                    Align::Right => {
                        s.extend(std::iter::repeat_n(' ', pad));
                        s.push_str(c);
                    }
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(&mut self.headers.iter().map(|(h, _)| h.as_str()), &mut out);
        let total: usize = widths.iter().sum::<usize>() + 2 * n.saturating_sub(1);
        out.push_str(&"-".repeat(total));
        out.push('\n');
        for r in &self.rows {
            if r.is_empty() {
                out.push('\n');
            } else {
                line(&mut r.iter().map(String::as_str), &mut out);
            }
        }
        out
    }
}

fn f2(x: f64) -> String {
    format!("{x:.2}")
}

fn pages_list(p: &[usize]) -> String {
    let items: Vec<String> = p.iter().map(|x| x.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// Renders the KAFKA-6432 scenario: one line per strategy, plus an explanation.
pub fn render_scenario(s: &ScenarioResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "1. KAFKA-6432: tail lookup on an offset index of {} pages ({} entries) vs {} pages ({} entries), {}-byte pages",
        s.pages_before, s.entries_before, s.pages_after, s.entries_after, s.page_size
    );
    let mut t = Table::new(&[
        ("strategy", Align::Left),
        ("13 pages: touches", Align::Left),
        ("14 pages: touches", Align::Left),
        ("new", Align::Left),
        ("cold (new, not appender's)", Align::Left),
        ("cold pages during growth", Align::Right),
    ]);
    for st in &s.strategies {
        t.row(vec![
            st.strategy.clone(),
            pages_list(&st.pages_before),
            pages_list(&st.pages_after),
            pages_list(&st.new_pages),
            pages_list(&st.cold_pages),
            st.cold_pages_during_growth.to_string(),
        ]);
    }
    out.push_str(&t.render());
    for st in &s.strategies {
        let _ = writeln!(
            out,
            "   {}: {} pages -> touches {}; {} pages -> touches {} ({} new, {} of them cold)",
            st.strategy,
            s.pages_before,
            pages_list(&st.pages_before),
            s.pages_after,
            pages_list(&st.pages_after),
            st.new_pages.len(),
            st.cold_pages.len()
        );
    }
    let _ = writeln!(
        out,
        "   Binary search's path runs through the middle of the file, so when the index grows the\n   \
         pages on the path move and the next tail lookups fault on cold pages; warm/cold stays in the\n   \
         last pages, which every tail lookup (and the appender) keeps resident; the page directory\n   \
         reads only the page holding the answer (its fences are in memory). \"cold pages during\n   \
         growth\": distinct pages, outside the 13-page lookup's set and other than the appender's page,\n   \
         touched by one tail lookup after each of the {} appends.",
        s.entries_after - s.entries_before
    );
    out
}

/// Renders the synthetic replays: one table, one row per index, workload and strategy.
pub fn render_synthetic(
    outcomes: &[ReplayOutcome],
    cache_pages: usize,
    warm_section_bytes: usize,
) -> String {
    let mut t = Table::new(&[
        ("index", Align::Left),
        ("entries", Align::Right),
        ("workload", Align::Left),
        ("strategy", Align::Left),
        ("lookups", Align::Right),
        ("mean pg", Align::Right),
        ("max pg", Align::Right),
        ("warm lookups", Align::Right),
        ("warm mean pg", Align::Right),
        ("warm max pg", Align::Right),
        ("lru faults", Align::Right),
        ("faults/1k lookups", Align::Right),
        ("append faults", Align::Right),
        ("mismatches", Align::Right),
    ]);
    for (i, o) in outcomes.iter().enumerate() {
        if i > 0 {
            t.separator();
        }
        for w in &o.workloads {
            for s in &w.strategies {
                t.row(vec![
                    o.kind.name().to_string(),
                    o.entries.to_string(),
                    w.workload.clone(),
                    s.strategy.name().to_string(),
                    s.lookups.to_string(),
                    f2(s.mean_pages()),
                    s.max_pages.to_string(),
                    s.warm_section_lookups.to_string(),
                    f2(s.warm_section_mean_pages()),
                    s.warm_section_max_pages.to_string(),
                    s.lru_faults.to_string(),
                    f2(1000.0 * s.lru_faults as f64 / s.lookups.max(1) as f64),
                    s.append_faults.to_string(),
                    (w.answer_mismatches + w.oracle_mismatches + w.api_mismatches).to_string(),
                ]);
            }
        }
    }
    let mut out = t.render();
    let fallbacks: u64 = outcomes
        .iter()
        .flat_map(|o| o.workloads.iter())
        .map(|w| w.directory_fallbacks)
        .sum();
    let _ = writeln!(
        out,
        "   pg = distinct pages touched per lookup (the search's reads plus the answer entry). warm = lookups\n   \
         landing in the warm section of {warm_section_bytes} bytes (same lookups for every strategy). LRU: \
         {cache_pages}-page cache per\n   strategy and workload; the appender's page is touched on every \
         append. mismatches = answers differing\n   between strategies, from a partition_point oracle, or \
         from the index crate's lookup(). page-directory lookups\n   answered without the directory \
         (warm/cold fallback): {fallbacks}."
    );
    out
}

/// Renders the real-data replay: one row per non-empty file with both strategies side by
/// side, plus a summary of what was found.
pub fn render_real(o: &RealDataOutcome, page_size: usize) -> String {
    let mut t = Table::new(&[
        ("file", Align::Left),
        ("bytes", Align::Right),
        ("pages", Align::Right),
        ("entries", Align::Right),
        ("lookups", Align::Right),
        ("binary mean/max pg", Align::Right),
        ("warm-cold mean/max pg", Align::Right),
        ("page-dir mean/max pg", Align::Right),
        ("warm lookups", Align::Right),
        ("lru faults b/wc/pd", Align::Right),
        ("mismatches", Align::Right),
    ]);
    for r in &o.replays {
        let st = &r.stats.strategies;
        let mean_max = |i: usize| {
            st.get(i).map_or("-".to_string(), |s| {
                format!("{} / {}", f2(s.mean_pages()), s.max_pages)
            })
        };
        let faults: Vec<String> = st.iter().map(|s| s.lru_faults.to_string()).collect();
        t.row(vec![
            r.file.name.clone(),
            r.file.bytes.to_string(),
            r.pages.to_string(),
            r.entries.to_string(),
            st.first().map_or(0, |s| s.lookups).to_string(),
            mean_max(0),
            mean_max(1),
            mean_max(2),
            st.first().map_or(0, |s| s.warm_section_lookups).to_string(),
            faults.join(" / "),
            (r.stats.answer_mismatches
                + r.stats.oracle_mismatches
                + r.stats.api_mismatches
                + r.stats.directory_fallbacks)
                .to_string(),
        ]);
    }
    let mut out = t.render();
    let _ = writeln!(
        out,
        "   {} index files under {} ({} .index, {} .timeindex; {} empty, not replayable; {} failed).\n   \
         The real files are small: the largest is {} page(s) of {} bytes, so no strategy can touch\n   \
         more than that; this replay checks that the strategies agree on real data, not page savings.",
        o.files.len(),
        o.dir.display(),
        o.offset_files(),
        o.time_files(),
        o.empty_files(),
        o.failures.len(),
        o.max_file_pages(page_size),
        page_size
    );
    for (f, e) in &o.failures {
        let _ = writeln!(out, "   failed: {}: {e}", f.name);
    }
    out
}

fn ratio_text(binary: u64, other: u64) -> String {
    match (binary, other) {
        (_, 0) if binary > 0 => "inf".to_string(),
        (0, 0) => "-".to_string(),
        (b, o) => format!("{:.1}x", b as f64 / o as f64),
    }
}

/// Renders the real page-fault measurement: one row per run, then the headline per index
/// kind and phase.
pub fn render_real_faults(o: &RealFaultOutcome) -> String {
    let mut out = String::new();
    let mut t = Table::new(&[
        ("index", Align::Left),
        ("phase", Align::Left),
        ("readahead", Align::Left),
        ("strategy", Align::Left),
        ("lookups", Align::Right),
        ("counted pg", Align::Right),
        ("resident after evict", Align::Right),
        ("raw page-ins", Align::Right),
        ("raw major faults", Align::Right),
        ("page-ins", Align::Right),
        ("major faults", Align::Right),
        ("page-ins/1k lookups", Align::Right),
        ("probed pg", Align::Right),
        ("binary / this", Align::Right),
    ]);
    let mut last: Option<(IndexKind, Phase, Readahead)> = None;
    for r in &o.runs {
        let group = (r.kind, r.phase, r.readahead);
        if last.is_some_and(|l| l != group) {
            t.separator();
        }
        last = Some(group);
        let binary = o.get(r.kind, r.phase, r.readahead, "binary");
        let vs = match (binary, r.lookups) {
            (Some(b), l) if l > 0 => ratio_text(b.page_ins, r.page_ins),
            _ => "-".to_string(),
        };
        t.row(vec![
            r.kind.name().to_string(),
            r.phase.name().to_string(),
            r.readahead.name().to_string(),
            r.strategy.clone(),
            r.lookups.to_string(),
            r.counted_pages.to_string(),
            r.resident_after_evict.to_string(),
            r.raw_page_ins.to_string(),
            r.raw_major_faults.to_string(),
            r.page_ins.to_string(),
            r.major_faults.to_string(),
            f2(r.page_ins_per_1000()),
            r.probed_pages.to_string(),
            vs,
        ]);
    }
    out.push_str(&t.render());
    let _ = writeln!(
        out,
        "   page-ins = OS pages ({} bytes) newly resident after the run (mincore), counted over the whole file\n   \
         (static) or over the pages written before the replay (growing), minus the appends-only baseline\n   \
         (growing). major faults = getrusage delta (same baseline). probed pg = distinct counted pages the\n   \
         lookups touched per the page probe: without readahead, page-ins should equal it.",
        o.os_page_size
    );
    for (kind, n) in &o.directory_build_page_ins {
        let _ = writeln!(
            out,
            "   {} index: opening the full file with the page directory (its fences start unknown; lookups\n   \
             fill in the ones they need) brought in {n} pages after eviction; the runs above evict again after opening.",
            kind.name()
        );
    }
    for kind in [IndexKind::Offset, IndexKind::Time] {
        for phase in [Phase::Static, Phase::Growing] {
            for ra in [Readahead::Kernel, Readahead::Off] {
                let get = |n: &str| o.get(kind, phase, ra, n);
                let (Some(b), Some(w), Some(p)) =
                    (get("binary"), get("warm-cold"), get("page-directory"))
                else {
                    continue;
                };
                let _ = writeln!(
                    out,
                    "   {} {} readahead {}: page-ins per 1000 hot-tail lookups: binary {}, warm-cold {}, page-directory {};\n   \
                     binary/warm-cold {}, binary/page-directory {}",
                    kind.name(),
                    phase.name(),
                    ra.name(),
                    f2(b.page_ins_per_1000()),
                    f2(w.page_ins_per_1000()),
                    f2(p.page_ins_per_1000()),
                    ratio_text(b.page_ins, w.page_ins),
                    ratio_text(b.page_ins, p.page_ins),
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "   Files on {} ({} mounted at {}, device readahead {}); eviction verified before every run (at most 1%\n   \
         of the counted pages may stay resident, else the run is not measured). With the kernel's readahead a\n   \
         fault reads up to the device readahead around it, so the first fault of any strategy brings in a large\n   \
         block: the no-readahead rows (MADV_RANDOM) count the pages the lookups themselves need.",
        o.location.dir.display(),
        o.location.fs_type,
        o.location.mount_point,
        o.location
            .readahead_kib
            .map_or("unknown".to_string(), |k| format!("{k} KiB"))
    );
    push_not_used(&mut out, &o.rejected, &o.unmeasured);
    out
}

/// Appends a `not used:` line per rejected directory and a `not measured:` line per run
/// that could not be measured.
fn push_not_used(out: &mut String, rejected: &[Rejected], unmeasured: &[String]) {
    for r in rejected {
        let _ = writeln!(out, "   not used: {r}");
    }
    for u in unmeasured {
        let _ = writeln!(out, "   not measured: {u}");
    }
}

/// Explains why no real page fault could be measured.
pub fn render_real_faults_rejected(rejected: &[Rejected]) -> String {
    let mut out = String::from(
        "   No directory where the kernel evicts a file's pages on request was found, so real page faults\n   \
         were not measured (the LRU simulation above still holds). Tried:\n",
    );
    for r in rejected {
        let _ = writeln!(out, "   {r}");
    }
    out.push_str(
        "   Give a directory on a disk filesystem (ext4, xfs, btrfs) with --real-faults-dir.\n",
    );
    out
}

/// Renders the latency measurement: ns per lookup per strategy and the in-memory limit.
pub fn render_latency(rows: &[LatencyRow], repeats: usize) -> String {
    let mut t = Table::new(&[
        ("index", Align::Left),
        ("entries", Align::Right),
        ("workload", Align::Left),
        ("strategy", Align::Left),
        ("lookups", Align::Right),
        ("ns/lookup", Align::Right),
        ("vs in-memory", Align::Right),
        ("mismatches", Align::Right),
    ]);
    let mut last: Option<(IndexKind, String)> = None;
    for r in rows {
        let group = (r.kind, r.workload.clone());
        if last.as_ref().is_some_and(|l| *l != group) {
            t.separator();
        }
        last = Some(group);
        t.row(vec![
            r.kind.name().to_string(),
            r.entries.to_string(),
            r.workload.clone(),
            r.strategy.clone(),
            r.lookups.to_string(),
            format!("{:.1}", r.ns_per_lookup),
            format!("{:.2}x", r.ratio_to_in_memory),
            r.mismatches.to_string(),
        ]);
    }
    let mut out = t.render();
    let _ = writeln!(
        out,
        "   Search only (answer slot); medians of {repeats} interleaved rounds, the ratio per round; pages resident (just\n   \
         written), so this is CPU/cache/TLB cost. \"{IN_MEMORY}\" = slice::partition_point over the same keys\n   \
         in a Vec<i64>: the limit for a search that does no decoding and no paging."
    );
    out
}

/// Renders the warm section sweep (section 6 of `--details`): per index kind and lag
/// distribution, the share served by the warm section, pages per lookup and real page-ins
/// of every warm section size and of the page directory, then the measured answer.
pub fn render_warm_sweep(o: &WarmSweepOutcome) -> String {
    let mut out = String::new();
    let sizes = warm_sweep::bytes_range_text(
        o.warm_sizes.iter().copied().min().unwrap_or(0) as u64,
        o.warm_sizes.iter().copied().max().unwrap_or(0) as u64,
    );
    let _ = writeln!(
        out,
        "6. Warm section sweep (why 8192): warm/cold with warm sections of {sizes} of index against"
    );
    push_wrapped(
        &mut out,
        &format!(
            "consumer lag in bytes of log behind the log end, at index.interval.bytes {} (Kafka's default; \
             the replays above use {}); lookups while a {} segment grows from half full to full, {} lookups \
             per point, seed {}.",
            o.index_interval_bytes,
            crate::producer::ProducerConfig::default().index_interval_bytes,
            warm_sweep::bytes_text(o.segment_bytes),
            o.lookups,
            o.seed
        ),
    );
    for i in &o.indexes {
        let warm: Vec<String> = o
            .points
            .iter()
            .filter(|p| {
                p.kind == i.kind
                    && Some(p.lag.as_str()) == o.distributions.first().map(|d| d.name.as_str())
            })
            .filter_map(|p| {
                Some(format!(
                    "{} = {} entries = {}",
                    warm_sweep::warm_size_text(p.warm_section_bytes?),
                    p.warm_section_entries?,
                    crate::bench_report::human_bytes(p.warm_section_log_bytes?)
                ))
            })
            .collect();
        let text =
            format!(
            "{} index: {} -> {} entries, {:.0} bytes of log per entry{}; warm sections: {} of log.",
            i.kind.name(),
            i.entries_before,
            i.entries_after,
            i.log_bytes_per_entry,
            if i.index_full { " (the index filled up first)" } else { "" },
            warm.join(", ")
        );
        push_wrapped(&mut out, &text);
    }
    let lags: Vec<String> = o
        .distributions
        .iter()
        .map(|d| format!("{} {}", d.name, d.describe()))
        .collect();
    push_wrapped(
        &mut out,
        &format!("Lags (uniform within each range): {}.", lags.join("; ")),
    );
    let mut headers: Vec<(String, Align)> = vec![
        ("index".to_string(), Align::Left),
        ("lag".to_string(), Align::Left),
        ("figure".to_string(), Align::Left),
    ];
    for &w in &o.warm_sizes {
        let mut h = warm_sweep::warm_size_text(w);
        if w == warm_sweep::KAFKA_WARM_SECTION_BYTES {
            h.push_str(" (Kafka)");
        }
        headers.push((h, Align::Right));
    }
    headers.push(("page-directory".to_string(), Align::Right));
    let hdr: Vec<(&str, Align)> = headers.iter().map(|(h, a)| (h.as_str(), *a)).collect();
    let mut t = Table::new(&hdr);
    let mut first = true;
    for i in &o.indexes {
        for d in &o.distributions {
            if !first {
                t.separator();
            }
            first = false;
            for (k, (label, cells)) in o.table_lines(i.kind, &d.name).into_iter().enumerate() {
                let mut row = if k == 0 {
                    vec![i.kind.name().to_string(), d.name.clone()]
                } else {
                    vec![String::new(), String::new()]
                };
                row.push(label.to_string());
                row.extend(cells);
                t.row(row);
            }
        }
    }
    out.push_str(&t.render());
    let _ = writeln!(
        out,
        "   warm share = lookups served by the warm section (index_core::search::lands_in_warm_section with that\n   \
         size). pages = distinct {}-byte pages per lookup (the search's reads plus the answer entry).",
        o.page_size
    );
    for i in &o.indexes {
        let maxes: Vec<String> = o
            .warm_sizes
            .iter()
            .map(|&w| {
                let pts = o
                    .points
                    .iter()
                    .filter(|p| p.kind == i.kind && p.warm_section_bytes == Some(w));
                let (max, bound) = pts.fold((0, 0), |(m, b), p| {
                    (
                        m.max(p.warm_section_max_pages),
                        b.max(p.warm_section_page_bound.unwrap_or(0)),
                    )
                });
                format!("{} {max} (bound {bound})", warm_sweep::warm_size_text(w))
            })
            .collect();
        let text = format!(
            "{} index: most pages one warm lookup read: {}.",
            i.kind.name(),
            maxes.join(", ")
        );
        push_wrapped(&mut out, &text);
    }
    let pi = &o.page_ins;
    match (&pi.absent, &pi.location) {
        (Some(why), _) => {
            let _ = writeln!(out, "   page-ins: not measured: {why}.");
        }
        (None, Some(loc)) => {
            let _ = writeln!(
                out,
                "   page-ins = OS pages ({} bytes) written before the run and read back from disk by its {} lookups\n   \
                 while the evicted index grows from half to full (readahead off, mincore), minus the appends-only\n   \
                 baseline ({}); files on {} ({}).",
                pi.os_page_size,
                o.lookups,
                pi.baselines_text(),
                loc.dir.display(),
                loc.fs_type
            );
        }
        (None, None) => {}
    }
    push_not_used(&mut out, &pi.rejected, &pi.unmeasured);
    let mismatches: u64 = o.points.iter().map(|p| p.answer_mismatches).sum();
    let fallbacks: u64 = o.points.iter().map(|p| p.directory_fallbacks).sum();
    let _ = writeln!(
        out,
        "   Answers differing from a partition_point oracle: {mismatches}; page-directory lookups answered without\n   \
         the directory: {fallbacks}."
    );
    for line in warm_sweep::answer(o) {
        push_wrapped(&mut out, &line);
    }
    out
}

/// Width of the wrapped note lines under the tables (columns, indentation included).
const NOTE_COLUMNS: usize = 110;

/// Appends `text` wrapped at [`NOTE_COLUMNS`] columns, every line indented by three
/// spaces.
fn push_wrapped(out: &mut String, text: &str) {
    for line in crate::cli::wrap(text, NOTE_COLUMNS - 3) {
        let _ = writeln!(out, "   {line}");
    }
}

/// Formats nanoseconds as `850 ns`, `12.3 µs` or `4.56 ms`.
fn human_ns(ns: u64) -> String {
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.2} ms", ns as f64 / 1e6)
    }
}

/// Section 7 of `--details`: the memory-pressure workload ([`crate::pollution`]), one row
/// per memory limit, strategy and mitigation: in-sync lookups counted, their major faults
/// and index page-ins per 1000 lookups, lookup latency p50/p99/p99.9, and the lagging
/// consumer's throughput in MB/s. A skipped workload is one line; an OOM-killed or failed
/// arm is a row that says so.
pub fn render_pollution(p: &crate::pollution::PollutionOutcome) -> String {
    use crate::pollution::ArmOutcome;
    let mut out = String::new();
    if let Some(why) = &p.skipped {
        let _ = writeln!(out, "7. Under memory pressure: skipped ({why}).");
        return out;
    }
    let s = &p.scale;
    let _ = writeln!(
        out,
        "7. Under memory pressure ({}): a lagging consumer reads {} older {} segments and a {} active one from the start\n   \
         while {} in-sync consumers look up the tail (0-{} offsets behind, one lookup per {} µs each) and a producer\n   \
         appends {}/s; index.interval.bytes {}, active .index {}. Each arm is a child process in a memory cgroup;\n   \
         {} ms per arm, the first {} ms not counted. majflt, page-ins: of the in-sync threads (getrusage(RUSAGE_THREAD);\n   \
         index pages brought in, mincore), per 1000 lookups. mitigation: POSIX_FADV_DONTNEED behind the lagging consumer.",
        p.cgroup,
        s.old_segments,
        warm_sweep::bytes_text(s.old_segment_bytes),
        warm_sweep::bytes_text(s.active_log_bytes),
        s.consumers,
        s.hot_lag_offsets,
        s.lookup_interval_us,
        warm_sweep::bytes_text(s.produce_bytes_per_sec),
        crate::pollution::INDEX_INTERVAL_BYTES,
        warm_sweep::bytes_text(s.index_bytes as u64),
        s.arm_ms,
        s.warmup_ms,
    );
    let _ = writeln!(
        out,
        "   {:>9}  {:<15} {:<10} {:>8} {:>10} {:>12} {:>10} {:>10} {:>10} {:>12}",
        "limit",
        "strategy",
        "mitigation",
        "lookups",
        "majflt/1k",
        "page-ins/1k",
        "p50",
        "p99",
        "p99.9",
        "lagging MB/s"
    );
    for a in &p.arms {
        let head = format!(
            "   {:>9}  {:<15} {:<10}",
            format!("{} MiB", a.limit_mib),
            a.strategy,
            if a.mitigation { "fadvise" } else { "none" }
        );
        match &a.outcome {
            ArmOutcome::Measured(r) => {
                let _ = writeln!(
                    out,
                    "{head} {:>8} {:>10.1} {:>12.1} {:>10} {:>10} {:>10} {:>12.1}",
                    r.lookups,
                    r.major_faults_per_1000(),
                    r.page_ins_per_1000(),
                    human_ns(r.latency_ns[0]),
                    human_ns(r.latency_ns[1]),
                    human_ns(r.latency_ns[2]),
                    r.lagging_mb_per_sec()
                );
            }
            ArmOutcome::OomKilled => {
                let _ = writeln!(
                    out,
                    "{head} OOM-killed (the limit is below what the arm needs)"
                );
            }
            ArmOutcome::Failed(why) => {
                let _ = writeln!(out, "{head} failed: {why}");
            }
        }
    }
    let _ = writeln!(out, "   Partition written in {:.1} s.", p.setup_secs);
    out
}
