//! Real page faults on evicted index files (Linux page cache). The machine this runs on
//! (developers' and CI's, as root) has ext4 under the temporary directory, where eviction
//! works; a machine where no candidate directory evicts fails here with the reasons.

use std::sync::OnceLock;

use bench_harness::real_faults::{
    measure, Phase, Readahead, RealFaultConfig, RealFaultOutcome, STATIC_LOOKUPS,
};
use bench_harness::replay::{IndexKind, ReplayConfig};

/// 1 MiB indexes (256 pages of 4 KiB); 5000 lookups per growing run.
fn outcome() -> &'static RealFaultOutcome {
    static OUT: OnceLock<RealFaultOutcome> = OnceLock::new();
    OUT.get_or_init(|| {
        let r = ReplayConfig::default();
        let cfg = RealFaultConfig {
            index_bytes: 1024 * 1024,
            page_size: 4096,
            warm_section_bytes: 8192,
            growing_lookups: 5_000,
            lookups_per_round: 4,
            seed: 42,
            producer: r.producer,
            workload: r.workload,
            dir: None,
            kinds: vec![IndexKind::Offset, IndexKind::Time],
            readaheads: vec![Readahead::Off, Readahead::Kernel],
        };
        match measure(&cfg, &mut |_, _| {}).unwrap() {
            Ok(o) => o,
            Err(rejected) => panic!("no directory where eviction works: {rejected:?}"),
        }
    })
}

#[test]
fn every_run_is_measured_after_a_verified_eviction() {
    let o = outcome();
    assert!(o.unmeasured.is_empty(), "{:?}", o.unmeasured);
    assert_eq!(o.os_page_size, 4096);
    // 2 kinds x 2 readahead settings x (4 static + 5 growing runs).
    assert_eq!(o.runs.len(), 36);
    for r in &o.runs {
        assert_eq!(r.resident_after_evict, 0, "{r:?}");
        assert_eq!(r.directory_fallbacks, 0, "{r:?}");
        if r.phase == Phase::Static {
            assert_eq!(r.lookups, STATIC_LOOKUPS as u64);
            assert_eq!(r.counted_pages, 256);
        } else if r.strategy != "appends-only" {
            assert_eq!(r.lookups, 5_000);
        }
    }
    // Opening the full file with the page directory reads no page: its fences start
    // unknown and the lookups fill in the ones they need (before lazy fences, building
    // them read one slot per page: all 256 pages of the file).
    for (kind, n) in &o.directory_build_page_ins {
        assert_eq!(
            *n, 0,
            "{kind:?}: opening with the page directory brought in {n} pages"
        );
    }
}

/// Without readahead the kernel brings in exactly the pages the lookups touch: the real
/// page-ins equal the page probe's count (the offset index), or fall short by the pages
/// of straddling time-index entries whose second page the search never reads (the probe
/// counts the whole 12-byte entry, the search compares only its 8-byte key).
#[test]
fn without_readahead_page_ins_equal_the_probed_pages() {
    let o = outcome();
    for name in ["binary", "warm-cold", "page-directory"] {
        let off = o
            .get(IndexKind::Offset, Phase::Static, Readahead::Off, name)
            .unwrap();
        assert_eq!(off.page_ins as usize, off.probed_pages, "{off:?}");
        let time = o
            .get(IndexKind::Time, Phase::Static, Readahead::Off, name)
            .unwrap();
        assert!(
            time.page_ins as usize <= time.probed_pages
                && time.page_ins as usize + 2 >= time.probed_pages,
            "{time:?}"
        );
    }
}

/// The static cold start, no readahead, 256-page index: binary search walks slot 0 and
/// the bisection path (log2(256) + 1 = 9 pages), warm/cold the last 3 pages at most, the
/// page directory (lazy fences: opening read nothing) the pages whose fences the hot-tail
/// lookups need (2 of the offset index, 3 of the time index: 1024 slots span 3 pages of
/// 12-byte entries), never more than warm/cold.
#[test]
fn static_cold_start_page_ins_per_strategy() {
    let o = outcome();
    for kind in [IndexKind::Offset, IndexKind::Time] {
        let get = |n| o.get(kind, Phase::Static, Readahead::Off, n).unwrap();
        let (b, w, p) = (get("binary"), get("warm-cold"), get("page-directory"));
        assert!(b.page_ins >= 9, "{kind:?} binary {}", b.page_ins);
        assert!(
            w.page_ins <= 3 && w.page_ins >= 1,
            "{kind:?} wc {}",
            w.page_ins
        );
        assert!(
            (1..=3).contains(&p.page_ins) && p.page_ins <= w.page_ins,
            "{kind:?} page directory {} vs warm/cold {}",
            p.page_ins,
            w.page_ins
        );
        assert!(b.major_faults >= b.page_ins);
    }
}

/// The growing index (KAFKA-6432 for real): while the index fills from half to full,
/// binary search's path moves through pages written before the replay and brings them
/// back in; warm/cold and the page directory stay at the tail, where the appender keeps
/// pages resident. Warm/cold takes at least 5x fewer page-ins than binary search.
#[test]
fn growing_index_binary_pages_in_the_middle_warm_cold_and_directory_do_not() {
    let o = outcome();
    for kind in [IndexKind::Offset, IndexKind::Time] {
        let get = |n| o.get(kind, Phase::Growing, Readahead::Off, n).unwrap();
        let (b, w, p) = (get("binary"), get("warm-cold"), get("page-directory"));
        // The midpoint alone sweeps pages 64..128 of the 128 pre-existing pages.
        assert!(b.page_ins >= 60, "{kind:?} binary {}", b.page_ins);
        assert!(
            w.page_ins * 5 <= b.page_ins,
            "{kind:?} wc {} vs {}",
            w.page_ins,
            b.page_ins
        );
        assert!(w.page_ins <= 3, "{kind:?} wc {}", w.page_ins);
        assert_eq!(p.page_ins, 0, "{kind:?}");
        assert!(b.page_ins_per_1000() >= 12.0, "{}", b.page_ins_per_1000());
        // Major faults tell the same story.
        assert!(b.major_faults >= 60 && w.major_faults <= 3 && p.major_faults <= 1);
        // The appends-only baseline exists and made no lookups.
        let base = o
            .get(kind, Phase::Growing, Readahead::Off, "appends-only")
            .unwrap();
        assert_eq!(base.lookups, 0);
    }
    // With the kernel's readahead, the appender's first fault already reads around it
    // (up to the device readahead: 8 MiB on the CI machine, more than this 1 MiB file), so
    // the baseline brings in most pre-existing pages and the lookups add few or none;
    // binary search never adds fewer than warm/cold.
    for kind in [IndexKind::Offset, IndexKind::Time] {
        let get = |n| o.get(kind, Phase::Growing, Readahead::Kernel, n).unwrap();
        assert!(get("binary").page_ins >= get("warm-cold").page_ins);
        assert!(get("warm-cold").page_ins <= 3);
    }
}
