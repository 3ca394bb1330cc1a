//! The scenario Kafka's authors describe in KAFKA-6432 (the motivation for the warm/cold
//! search): an offset index occupying 13 pages is looked up at its tail, then grows into
//! a 14th page. Binary search walks a path from the middle of the file, so the pages it
//! reads for a tail lookup move when the index grows, and the next lookups fault on cold
//! pages in the middle of the file. The warm/cold search reads only the last pages, the
//! page directory only the last one. The index is opened with the page-directory strategy
//! so its fence pointers exist; the other strategies ignore them.

use std::collections::BTreeSet;
use std::path::Path;

use index_core::search::{Bound, SearchField, SearchStrategy};
use index_core::PageProbe;
use index_offset::OffsetIndex;
use serde::Serialize;

use crate::replay::compared_strategies;
use crate::BenchError;

/// Offsets between consecutive index entries in the scenario (offsets).
pub const OFFSETS_PER_ENTRY: i64 = 10;
/// Bytes of log between consecutive index entries in the scenario (bytes).
pub const BYTES_PER_ENTRY: u32 = 4_200;

/// What one strategy touches for a tail lookup before and after the growth.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioStrategy {
    /// Strategy name (`binary`, `warm-cold`, `page-directory`).
    pub strategy: String,
    /// Pages (page numbers, ascending) touched by the tail lookup on the 13-page index.
    pub pages_before: Vec<usize>,
    /// Pages touched by the tail lookup on the 14-page index.
    pub pages_after: Vec<usize>,
    /// Pages of `pages_after` that are not in `pages_before`.
    pub new_pages: Vec<usize>,
    /// Pages of `new_pages` that are cold: not touched before the growth and not the
    /// page the appender has just written (the last page).
    pub cold_pages: Vec<usize>,
    /// Distinct pages touched by tail lookups made after every single append during the
    /// growth (one lookup per append), that the 13-page lookup had not touched and that
    /// were not the appender's page at the time (pages).
    pub cold_pages_during_growth: usize,
}

/// The KAFKA-6432 scenario's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioResult {
    /// Page size in bytes.
    pub page_size: usize,
    /// Entries of the 13-page index.
    pub entries_before: usize,
    /// Entries of the 14-page index.
    pub entries_after: usize,
    /// Pages occupied before the growth (13).
    pub pages_before: usize,
    /// Pages occupied after the growth (14).
    pub pages_after: usize,
    /// One result per compared strategy (binary, warm-cold, page-directory).
    pub strategies: Vec<ScenarioStrategy>,
}

impl ScenarioResult {
    /// The result of the strategy named `name`.
    pub fn get(&self, name: &str) -> Option<&ScenarioStrategy> {
        self.strategies.iter().find(|s| s.strategy == name)
    }
}

fn tail_pages(
    index: &OffsetIndex,
    strategy: SearchStrategy,
    page_size: usize,
) -> Result<Vec<usize>, BenchError> {
    let snap = index.snapshot()?;
    // A consumer at the log end: a few offsets past the last indexed offset.
    let target = index.last_offset()? + OFFSETS_PER_ENTRY / 2;
    let mut probe = PageProbe::new(page_size);
    let slot = snap.search_with(
        strategy,
        target,
        SearchField::Key,
        Bound::LargestLowerBound,
        &mut probe,
    );
    if let Some(i) = slot {
        // The caller reads the answer entry next.
        snap.answer_with(strategy, i, &mut probe);
    }
    let mut pages = probe.pages().to_vec();
    pages.sort_unstable();
    Ok(pages)
}

/// Runs the scenario with pages of `page_size` bytes (a multiple of 8) on an offset index
/// created in `dir`, comparing binary search, warm/cold search of `warm_section_bytes`
/// bytes and the page directory with pages of `page_size` bytes.
///
/// # Errors
/// Any error of the index crate; [`BenchError::Config`] when `page_size` is not a
/// positive multiple of 8.
pub fn run_kafka_6432(
    dir: &Path,
    page_size: usize,
    warm_section_bytes: usize,
) -> Result<ScenarioResult, BenchError> {
    if page_size < index_offset::ENTRY_SIZE || !page_size.is_power_of_two() {
        return Err(BenchError::Config(format!(
            "the KAFKA-6432 scenario needs a page size that is a power of two of at least 8 bytes, got {page_size}"
        )));
    }
    const BEFORE: usize = 13;
    const AFTER: usize = 14;
    let per_page = page_size / index_offset::ENTRY_SIZE;
    let path = dir.join("00000000000000000000.index");
    let strategies = compared_strategies(warm_section_bytes, page_size);
    let index = OffsetIndex::open(&path, 0, AFTER * page_size)?
        .with_search_strategy(SearchStrategy::PageDirectory { page_size });
    let append = |i: usize| {
        index.append(
            i as i64 * OFFSETS_PER_ENTRY,
            (i as u32).wrapping_mul(BYTES_PER_ENTRY),
        )
    };
    for i in 0..BEFORE * per_page {
        append(i)?;
    }
    let before: Vec<Vec<usize>> = strategies
        .iter()
        .map(|&s| tail_pages(&index, s, page_size))
        .collect::<Result<_, _>>()?;
    let mut growth: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); strategies.len()];
    for i in BEFORE * per_page..AFTER * per_page {
        append(i)?;
        let appender_page = i / per_page;
        for (k, &s) in strategies.iter().enumerate() {
            for p in tail_pages(&index, s, page_size)? {
                if p != appender_page && !before[k].contains(&p) {
                    growth[k].insert(p);
                }
            }
        }
    }
    let last_page = AFTER - 1;
    let mut out = Vec::new();
    for (k, &s) in strategies.iter().enumerate() {
        let after = tail_pages(&index, s, page_size)?;
        let new_pages: Vec<usize> = after
            .iter()
            .copied()
            .filter(|p| !before[k].contains(p))
            .collect();
        let cold_pages = new_pages
            .iter()
            .copied()
            .filter(|&p| p != last_page)
            .collect();
        out.push(ScenarioStrategy {
            strategy: s.name().to_string(),
            pages_before: before[k].clone(),
            pages_after: after,
            new_pages,
            cold_pages,
            cold_pages_during_growth: growth[k].len(),
        });
    }
    let result = ScenarioResult {
        page_size,
        entries_before: BEFORE * per_page,
        entries_after: index.entries(),
        pages_before: BEFORE,
        pages_after: AFTER,
        strategies: out,
    };
    index.delete_if_exists()?;
    Ok(result)
}
