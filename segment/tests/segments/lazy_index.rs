//! Acceptance cases 31 and 63: deferred index creation and suffix changes.
use crate::common::*;
use index_offset::OffsetIndex;
use segment::LazyIndex;

#[test]
fn case31_deferred_creation() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("00000000000000000007.index");
    let lazy: LazyIndex<OffsetIndex> = LazyIndex::new(&p, 7, 80);
    assert!(!p.exists());
    let renamed = dir.path().join("00000000000000000007.index.deleted");
    lazy.rename_to(&renamed).unwrap();
    assert!(!p.exists() && !renamed.exists());
    assert_eq!(lazy.file(), renamed);
    lazy.close().unwrap();
    assert!(!renamed.exists());
    let idx = lazy.get().unwrap();
    assert_eq!(std::fs::metadata(&renamed).unwrap().len(), 80);
    assert_eq!(idx.max_entries(), 10);
    assert!(lazy.delete_if_exists().unwrap());
    assert!(!lazy.delete_if_exists().unwrap());
}

#[test]
fn case63_change_file_suffixes() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 40, &config(10, 1000), clock);
    let oi = seg.offset_index_file();
    let ti = seg.time_index_file();
    assert!(!oi.exists() && !ti.exists());
    seg.change_file_suffixes("", ".deleted").unwrap();
    assert!(seg.has_suffix(".deleted"));
    assert!(!seg.offset_index_file().exists() && !seg.time_index_file().exists());
    assert!(dir.path().join("00000000000000000040.log.deleted").exists());
    seg.offset_index().unwrap();
    seg.time_index().unwrap();
    assert!(dir
        .path()
        .join("00000000000000000040.index.deleted")
        .exists());
    assert!(dir
        .path()
        .join("00000000000000000040.timeindex.deleted")
        .exists());
}

#[test]
fn opening_many_segments_maps_no_index() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let cfg = config(10, 1000);
    for b in 0..50 {
        let s = new_segment(dir.path(), b * 10, &cfg, clock.clone());
        s.append(b * 10, 1, b * 10, &v2(b * 10, 1)).unwrap();
        s.close().unwrap();
    }
    let segs: Vec<_> = (0..50)
        .map(|b| {
            segment::LogSegment::<segment::KafkaBatchFormat>::open(
                dir.path(),
                b * 10,
                &cfg,
                segment::SegmentOptions::existing().clock(clock.clone()),
            )
            .unwrap()
        })
        .collect();
    assert!(segs
        .iter()
        .all(|s| !s.lazy_offset_index().unwrap().is_loaded()
            && !s.lazy_time_index().unwrap().is_loaded()));
    assert_eq!(
        segs[7]
            .read(70, 100)
            .unwrap()
            .map(|r| offsets_in(&r.records)),
        Some(vec![70])
    );
    assert_eq!(
        segs.iter()
            .filter(|s| s.lazy_offset_index().unwrap().is_loaded())
            .count(),
        1
    );
}

/// A segment's largest timestamp read while another thread's first use of the time
/// index creates and preallocates its file is the empty index's, `(−1, base offset)`:
/// never the zero-filled last slot of the file being preallocated, which reads as the
/// entry `(0, base offset)`. (The linearizability smoke found it: a close whose final
/// time-index entry took that offset, below the index's last one.)
#[test]
fn the_largest_timestamp_is_never_read_from_a_file_being_preallocated() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let cfg = config(10, 1200);
    let mut zeros = 0;
    for i in 0..3_000i64 {
        let base = i * 10;
        let seg = new_segment(dir.path(), base, &cfg, clock.clone());
        // Both threads spin to a common start; this one then waits a delay that sweeps
        // the other's whole first use (create, preallocate, map) across the segments.
        let go = std::sync::atomic::AtomicBool::new(false);
        let max = std::thread::scope(|s| {
            s.spawn(|| {
                while !go.load(std::sync::atomic::Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                seg.time_index().unwrap()
            });
            std::thread::sleep(std::time::Duration::from_micros(50));
            go.store(true, std::sync::atomic::Ordering::Release);
            for _ in 0..(i % 300) * 20 {
                std::hint::spin_loop();
            }
            (
                seg.max_timestamp_so_far().unwrap(),
                seg.shallow_offset_of_max_timestamp_so_far().unwrap(),
            )
        });
        if max != (-1, base) {
            zeros += 1;
            assert_eq!(max, (0, base), "segment {base}: an answer from nowhere");
        }
    }
    assert_eq!(
        zeros, 0,
        "largest timestamps read from a file being preallocated"
    );
}
