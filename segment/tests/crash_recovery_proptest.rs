//! Property: append random batches, flush at a random point, crash at a random byte
//! position (the `.log` cut there, indexes left untrimmed/zero-padded), reopen. Every
//! batch flushed before the crash and wholly before the cut is readable; nothing after the
//! torn tail is served.
mod common;
use common::*;
use proptest::prelude::*;
use segment::LogConfig;

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn crash_at_random_byte(
        sizes in prop::collection::vec(1usize..6, 2..25),
        flush_at in 0usize..25,
        cut_frac in 0.0f64..1.0,
        interval in prop::sample::select(vec![1u64, 100, 4096]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (_t, clock) = mock();
        let cfg = LogConfig { segment_bytes: 1500, ..config(interval, 4096) };
        let log = open_log(dir.path(), cfg.clone(), clock.clone());
        let mut o = 0i64;
        let mut flushed_end = 0i64;
        let mut ends = Vec::new();
        for (i, n) in sizes.iter().enumerate() {
            log.append(&batch(o, *n, 1000 + o)).unwrap();
            o += *n as i64;
            ends.push(o);
            if i == flush_at {
                log.flush().unwrap();
                flushed_end = o;
            }
        }
        let active = log.segments().active_segment().unwrap();
        let path = active.log_path();
        let len = active.size();
        let active_base = active.base_offset();
        drop(active);
        log.close_handlers();
        let cut = (len as f64 * cut_frac) as u64;
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(cut).unwrap();
        let log = open_log(dir.path(), cfg, clock);
        let leo = log.log_end_offset();
        // flushed data survives (the cut only hits the active segment)
        let must_have = if flushed_end > active_base { active_base } else { flushed_end };
        prop_assert!(leo >= must_have, "leo {} < flushed {}", leo, must_have);
        // the log ends on a batch boundary and everything below it is readable, in order
        prop_assert!(leo == 0 || ends.contains(&leo) || leo == active_base);
        let got = read_all(&log, 0);
        prop_assert_eq!(got, (0..leo).collect::<Vec<_>>());
        // nothing beyond the end is served
        prop_assert!(log.read(leo + 1, 100).is_err());
        prop_assert!(log.read(leo, 100).unwrap().records.is_empty());
    }
}
