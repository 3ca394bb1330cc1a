//! Issue 11 (mutation check of `Log::open`): a log directory with many legacy segments
//! that need a relative-offset-overflow split opens with every segment split, every
//! offset readable, and each segment recovered a bounded number of times.
//!
//! Before, recovery restarted from the recovery point after each split, so an open of
//! N overflowed segments recovered O(N^2) segments, and a count limit of 1,024 splits
//! per open made a directory with more overflowed segments unopenable. The split loop's
//! guard is now about progress (a segment that would be split twice), and recovery
//! resumes at the split segment.

use crate::common::*;
use segment::record::LegacyMessage;

/// Far enough apart that no two segments' offsets meet (offsets).
const STRIDE: i64 = 10_000_000_000;
/// Past `i32::MAX` relative to a segment's base: forces a split (offsets).
const HIGH: i64 = 3_000_000_000;
const SEGMENTS: i64 = 100;

#[test]
fn overflowed_segments_are_each_split_and_recovered_a_bounded_number_of_times() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    for i in 0..SEGMENTS {
        let base = i * STRIDE;
        let mut bytes = Vec::new();
        for o in [base, base + 1, base + HIGH, base + HIGH + 1] {
            bytes.extend(LegacyMessage::v1(o, 1_000, b"v").to_vec().unwrap());
        }
        std::fs::write(segment::names::log_file(dir.path(), base, ""), bytes).unwrap();
    }
    let log = open_log(dir.path(), config(1, 4096), clock);
    let expected: Vec<i64> = (0..SEGMENTS)
        .flat_map(|i| [i * STRIDE, i * STRIDE + HIGH])
        .collect();
    assert_eq!(log.segments().base_offsets(), expected);
    assert_eq!(log.log_end_offset(), (SEGMENTS - 1) * STRIDE + HIGH + 2);
    // Each original segment is recovered once (it overflows), and each of its two pieces
    // once; the old restart from the recovery point recovered ~N^2/2 segments.
    let scanned = log.stats().scanned_segments();
    assert!(
        scanned <= 3 * SEGMENTS as u64 + 1,
        "{scanned} segment recoveries for {SEGMENTS} overflowed segments"
    );
    assert!(
        scanned >= 2 * SEGMENTS as u64,
        "{scanned} segment recoveries"
    );
    // every offset is served, from its own piece
    for i in [0, 1, SEGMENTS / 2, SEGMENTS - 1] {
        for o in [
            i * STRIDE,
            i * STRIDE + 1,
            i * STRIDE + HIGH,
            i * STRIDE + HIGH + 1,
        ] {
            let r = log.read(o, 1).unwrap();
            assert!(offsets_in(&r.records).contains(&o), "offset {o}");
            let piece = if o - i * STRIDE >= HIGH {
                i * STRIDE + HIGH
            } else {
                i * STRIDE
            };
            assert_eq!(r.fetch_offset_metadata.segment_base_offset, piece);
        }
    }
    log.close().unwrap();
    // the split is durable: a clean reopen recovers nothing and sees the same pieces
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(1, 4096), clock);
    assert_eq!(log.stats().scanned_segments(), 0);
    assert_eq!(log.segments().base_offsets(), expected);
}
