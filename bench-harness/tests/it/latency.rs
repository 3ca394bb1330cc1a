//! The latency measurement: every strategy and the in-memory limit are timed on the same
//! targets and return the same answers.

use bench_harness::latency::{measure, LatencyConfig, IN_MEMORY};
use bench_harness::replay::{IndexKind, ReplayConfig};

#[test]
fn latency_rows_for_every_strategy_and_the_limit() {
    let r = ReplayConfig::default();
    let cfg = LatencyConfig {
        index_bytes: 64 * 1024,
        page_size: 4096,
        warm_section_bytes: 8192,
        lookups: 2_000,
        repeats: 2,
        seed: 42,
        producer: r.producer,
        workload: r.workload,
        kinds: vec![IndexKind::Offset, IndexKind::Time],
    };
    let dir = tempfile::tempdir().unwrap();
    let rows = measure(&cfg, dir.path()).unwrap();
    // 2 kinds x 2 workloads x (4 strategies + the limit).
    assert_eq!(rows.len(), 20);
    for row in &rows {
        assert_eq!(row.mismatches, 0, "{row:?}");
        assert_eq!(row.lookups, 2_000);
        assert!(
            row.ns_per_lookup > 0.0 && row.ns_per_lookup.is_finite(),
            "{row:?}"
        );
        assert!(row.ratio_to_in_memory > 0.0);
        if row.strategy == IN_MEMORY {
            assert_eq!(row.ratio_to_in_memory, 1.0);
        }
        let expected_entries = match row.kind {
            IndexKind::Offset => 8192,
            IndexKind::Time => 64 * 1024 / 12 - 1,
        };
        assert_eq!(row.entries, expected_entries);
    }
    for name in ["binary", "warm-cold", "page-directory", IN_MEMORY] {
        assert_eq!(rows.iter().filter(|r| r.strategy == name).count(), 4);
    }
}
