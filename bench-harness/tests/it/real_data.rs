//! (e) The replay over real index files: the repository's partition directories (the
//! main job's default, `segment/tests/data`) and the optional field data (partitions from
//! production brokers; skipped when missing, a failure under `CI=true`).

use std::path::Path;

use bench_harness::real_data::{default_data_dir, replay_dir, RealDataOutcome, RealReplayConfig};
use bench_harness::replay::IndexKind;
use index_core::search::SearchStrategy;

#[test]
fn in_repo_index_files_replay_and_strategies_agree() {
    let dir = default_data_dir().expect("segment/tests/data is in the repository");
    assert_eq!(
        dir.canonicalize().unwrap(),
        field_data::in_repo_root().canonicalize().unwrap()
    );
    let o = replay(&dir);
    assert!(
        o.offset_files() >= 3 && o.time_files() >= 3,
        "{:?}",
        o.files
    );
}

#[test]
fn real_index_files_replay_and_strategies_agree() {
    let Some(dir) = field_data::field_data_dir("bench-harness field data") else {
        return;
    };
    let o = replay(&dir);
    assert!(
        o.offset_files() >= 8,
        "found only {} .index files",
        o.offset_files()
    );
    assert!(
        o.time_files() >= 8,
        "found only {} .timeindex files",
        o.time_files()
    );
    let offset_nonempty = o
        .replays
        .iter()
        .filter(|r| r.file.kind == IndexKind::Offset)
        .count();
    assert!(
        offset_nonempty >= 8,
        "only {offset_nonempty} non-empty .index files replayed"
    );
    // The largest fixture (cluster metadata, 299 offset entries) is there.
    let meta = o
        .replays
        .iter()
        .find(|r| r.file.name.contains("__cluster_metadata") && r.file.kind == IndexKind::Offset)
        .expect("rjmfernandes-__cluster_metadata-0 offset index");
    assert_eq!(meta.entries, 299);
}

/// Replays every index file under `dir` and checks what holds for any real file.
fn replay(dir: &Path) -> RealDataOutcome {
    let cfg = RealReplayConfig {
        page_size: 4096,
        cache_pages: 32,
        lookups_per_append: 4,
        seed: 42,
        warm_section_bytes: 8192,
    };
    let o = replay_dir(dir, &cfg, &mut |_, _| {}).unwrap();
    assert!(o.failures.is_empty(), "{:?}", o.failures);
    // Every non-empty file was replayed.
    assert_eq!(
        o.replays.len(),
        o.files.iter().filter(|f| f.bytes > 0).count()
    );
    // Real indexes are small: cleanly closed ones are trimmed to one or two pages; the
    // kill -9 copies keep the broker's 64 KiB preallocation (16 pages).
    assert!(o.max_file_pages(4096) <= 16);
    let mut lookups = 0;
    for r in &o.replays {
        let size = r.file.kind.entry_size() as u64;
        assert_eq!(
            (r.entries + r.zero_tail_slots) as u64,
            r.file.bytes / size,
            "{}",
            r.file.name
        );
        // Only the copies taken after a kill -9 have an untrimmed, zero-filled tail.
        assert!(
            r.zero_tail_slots == 0 || r.file.name.contains("crash"),
            "{}: {} zero slots",
            r.file.name,
            r.zero_tail_slots
        );
        assert_eq!(r.skipped_appends, 0, "{}", r.file.name);
        assert!(r.pages <= 2 || r.zero_tail_slots > 0, "{}", r.file.name);
        assert_eq!(r.stats.answer_mismatches, 0, "{}", r.file.name);
        assert_eq!(r.stats.oracle_mismatches, 0, "{}", r.file.name);
        assert_eq!(r.stats.api_mismatches, 0, "{}", r.file.name);
        for s in &r.stats.strategies {
            assert_eq!(s.lookups as usize, 4 * r.entries, "{}", r.file.name);
            assert!(
                s.max_pages <= r.pages,
                "{}: {} > {}",
                r.file.name,
                s.max_pages,
                r.pages
            );
            // Every strategy but the page directory reads a slot for each answer; the page
            // directory answers a lookup whose answer is a fence slot from memory, so on a
            // file whose answers all are (a one-entry index) it reads no page at all.
            if !matches!(s.strategy, SearchStrategy::PageDirectory { .. }) {
                assert!(s.max_pages >= 1, "{}: {:?}", r.file.name, s.strategy);
            }
            lookups += s.lookups;
        }
    }
    assert!(lookups > 100, "{lookups} lookups");
    o
}
