//! Property: append random batches (random sizes and non-monotonic timestamps) across
//! several segments, flush at a random point, then "crash": drop the log without closing
//! (the active indexes stay zero-padded, untrimmed), and cut one unflushed segment's `.log`
//! at a random byte — inside a batch, or at a batch boundary of the active segment. Reopen
//! without the clean-shutdown marker and compare with the model of what was appended:
//!
//! * every batch wholly before the cut is readable, with its exact bytes, at its recorded
//!   segment and position;
//! * nothing at or after the torn batch is served: the log end offset is the next offset
//!   of the last whole batch, the segment files hold exactly the whole batches;
//! * offset lookups (every offset) and timestamp lookups agree with a full scan of the
//!   model (first record, in offset order, with timestamp ≥ the target).
use crate::common::*;
use proptest::prelude::*;
use segment::LogConfig;

#[derive(Clone, Debug)]
struct Appended {
    segment: i64,
    position: u64,
    first: i64,
    last: i64,
    timestamp: i64,
    bytes: Vec<u8>,
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn crash_at_random_byte(
        batches in prop::collection::vec((1usize..6, 0i64..50), 2..30),
        flush_at in 0usize..30,
        cut_pick in 0.0f64..1.0,
        cut_frac in 0.0f64..1.0,
        interval in prop::sample::select(vec![1u64, 100, 4096]),
    ) {
        let dir = tmpdir();
        let (_t, clock) = mock();
        let cfg = LogConfig { segment_bytes: 1500, ..config(interval, 4096) };
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        let mut model: Vec<Appended> = Vec::new();
        let mut flushed = 0usize; // batches covered by the flush
        let mut o = 0i64;
        for (i, (n, ts)) in batches.iter().enumerate() {
            let bytes = batch(o, *n, 1_000 + ts);
            let info = log.append(&bytes).unwrap();
            let position = match model.last() {
                Some(p) if p.segment == info.segment_base_offset => p.position + p.bytes.len() as u64,
                _ => 0,
            };
            model.push(Appended {
                segment: info.segment_base_offset,
                position,
                first: o,
                last: o + *n as i64 - 1,
                timestamp: 1_000 + ts,
                bytes,
            });
            o += *n as i64;
            if i == flush_at {
                log.flush().unwrap();
                flushed = model.len();
            }
        }
        log.close_handlers();

        // The cut: in an unflushed batch (flushed bytes never vanish in a crash); inside
        // the batch, or at its start if it is in the last segment. No unflushed batch: no
        // cut.
        let last_segment = model.last().unwrap().segment;
        let unflushed = model.len() - flushed;
        let torn = if unflushed == 0 {
            model.len()
        } else {
            flushed + ((cut_pick * unflushed as f64) as usize).min(unflushed - 1)
        };
        if torn < model.len() {
            let b = &model[torn];
            let len = b.bytes.len() as u64;
            let k = if b.segment == last_segment {
                (cut_frac * len as f64) as u64
            } else {
                1 + (cut_frac * (len - 1) as f64) as u64
            };
            let path = dir.path().join(format!("{:020}.log", b.segment));
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(b.position + k).unwrap();
        }
        let whole = &model[..torn];

        let log = open_log(dir.path(), cfg, clock);
        let expected_leo = model.get(torn).map_or(o, |b| b.first);
        prop_assert_eq!(log.log_end_offset(), expected_leo);

        // the segment files hold exactly the whole batches, in order
        let mut on_disk = Vec::new();
        for s in log.segments().values() {
            on_disk.extend(s.log().read(0, s.size()).unwrap());
        }
        prop_assert_eq!(on_disk, whole.iter().flat_map(|b| b.bytes.clone()).collect::<Vec<u8>>());

        // every whole batch: exact bytes at its recorded segment and position, from any of
        // its offsets
        for b in whole {
            for off in b.first..=b.last {
                let r = log.read(off, b.bytes.len() as u64).unwrap();
                prop_assert_eq!(r.fetch_offset_metadata.segment_base_offset, b.segment);
                prop_assert_eq!(r.fetch_offset_metadata.relative_position_in_segment, b.position);
                prop_assert_eq!(&r.records, &b.bytes);
            }
        }
        // nothing at or beyond the end
        prop_assert!(log.read(expected_leo, 1 << 20).unwrap().records.is_empty());
        let beyond = log.read(expected_leo + 1, 100);
        prop_assert!(
            matches!(beyond, Err(segment::SegmentError::OffsetOutOfRange { .. })),
            "{:?}",
            beyond.map(|_| ())
        );

        // timestamp lookups agree with a full scan of the whole batches
        let mut targets: Vec<i64> = whole.iter().flat_map(|b| [b.timestamp, b.timestamp + 1]).collect();
        targets.extend([0, 999, 1_050, 2_000]);
        for t in targets {
            let want = whole.iter().find(|b| b.timestamp >= t).map(|b| (b.first, b.timestamp));
            let got = log.offset_for_timestamp(t).unwrap().map(|f| (f.offset, f.timestamp));
            prop_assert_eq!(got, want, "timestamp {}", t);
        }
    }
}
