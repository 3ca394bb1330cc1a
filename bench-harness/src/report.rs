//! Result rows (for `--json`) and the aligned text tables printed on stdout.

use std::fmt::Write as _;

use serde::Serialize;

use crate::real_data::RealDataOutcome;
use crate::replay::{ReplayOutcome, StrategyStats, WorkloadStats};
use crate::scenario::ScenarioResult;

/// One result row: one strategy on one workload over one index.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResultRow {
    /// `kafka-6432`, `synthetic` or `real`.
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
    /// Strategy name (`binary`, `warm-cold`).
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
        section: section.to_string(),
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
        pages_before: None,
        pages_after: None,
        cold_pages: None,
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
            section: "kafka-6432".to_string(),
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
         last pages, which every tail lookup (and the appender) keeps resident. \"cold pages during\n   \
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
    let _ = writeln!(
        out,
        "   pg = distinct pages touched per lookup. warm = lookups landing in the warm section of\n   \
         {warm_section_bytes} bytes (same lookups for both strategies). LRU: {cache_pages}-page cache per \
         strategy and workload;\n   the appender's page is touched on every append. mismatches = answers \
         differing between strategies,\n   from a partition_point oracle, or from the index crate's lookup()."
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
        ("warm lookups", Align::Right),
        ("lru faults b/wc", Align::Right),
        ("mismatches", Align::Right),
    ]);
    for r in &o.replays {
        let b = &r.stats.strategies[0];
        let w = &r.stats.strategies[r.stats.strategies.len() - 1];
        t.row(vec![
            r.file.name.clone(),
            r.file.bytes.to_string(),
            r.pages.to_string(),
            r.entries.to_string(),
            b.lookups.to_string(),
            format!("{} / {}", f2(b.mean_pages()), b.max_pages),
            format!("{} / {}", f2(w.mean_pages()), w.max_pages),
            w.warm_section_lookups.to_string(),
            format!("{} / {}", b.lru_faults, w.lru_faults),
            (r.stats.answer_mismatches + r.stats.oracle_mismatches + r.stats.api_mismatches)
                .to_string(),
        ]);
    }
    let mut out = t.render();
    let _ = writeln!(
        out,
        "   {} index files under {} ({} .index, {} .timeindex; {} empty, not replayable; {} failed).\n   \
         The real files are small: the largest is {} page(s) of {} bytes, so neither strategy can touch\n   \
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
