//! field case B18: truncation back into a trimmed segment, mid-batch log start, and truncation.
use crate::common::*;

fn setup() -> (tempfile::TempDir, segment::Log) {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    for o in 0..3 {
        log.append(&batch(o, 1, 1000 + o)).unwrap();
    }
    log.roll(None).unwrap();
    for o in 3..10 {
        log.append(&batch(o, 1, 1000 + o)).unwrap();
    }
    assert_eq!(
        std::fs::metadata(log.dir().join("00000000000000000000.index"))
            .unwrap()
            .len(),
        0
    );
    (dir, log)
}

#[test]
fn b18a_truncate_to_zero_reactivates_trimmed_segment() {
    let (_d, log) = setup();
    assert!(log.truncate_to(0).unwrap());
    assert_eq!(log.segments().base_offsets(), vec![0]);
    let s0 = log.segments().active_segment().unwrap();
    assert_eq!(s0.size(), 0);
    assert_eq!(s0.offset_index().unwrap().max_entries(), (1 << 20) / 8);
    assert_eq!(s0.time_index().unwrap().max_entries(), (1 << 20) / 12);
    for o in 0..5 {
        log.append(&batch(o, 1, 2000 + o)).unwrap();
    }
    assert_eq!(log.segments().base_offsets(), vec![0]);
    assert_eq!(read_all(&log, 0), (0..5).collect::<Vec<_>>());
}

#[test]
fn b18b_truncate_to_two_recomputes_max_timestamp() {
    let (_d, log) = setup();
    log.truncate_to(2).unwrap();
    assert_eq!(log.segments().base_offsets(), vec![0]);
    let s0 = log.segments().active_segment().unwrap();
    assert_eq!(s0.max_timestamp_so_far().unwrap(), 1001);
    assert_eq!(s0.shallow_offset_of_max_timestamp_so_far().unwrap(), 1);
    assert_eq!(log.log_end_offset(), 2);
}

#[test]
fn b18c_empty_follower_restarts_at_batch_base() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    log.truncate_fully_and_start_at(15).unwrap();
    log.append(&batch(10, 10, 1000)).unwrap();
    // Offsets never go back (issue 11): the restart at the batch's base keeps the log
    // start at 15, where Kafka's follower ends after the leader's log start is applied.
    assert_eq!(log.log_start_offset(), 15);
    log.increment_log_start_offset(15).unwrap();
    let r = log.read(15, 10_000).unwrap();
    assert_eq!(offsets_in(&r.records), (10..20).collect::<Vec<_>>());
    assert_eq!(log.log_end_offset(), 20);
}

#[test]
fn truncating_below_the_log_start_restarts_the_log_at_the_target() {
    // Kafka's truncateTo below the log start offset is truncateFullyAndStartAt(target):
    // every segment goes, and the log restarts empty at the target, which becomes the
    // log start offset too (a follower matching a leader whose log ends lower).
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock.clone());
    fill(&log, 0, 2, 5, 1_000); // 0..10
    log.roll(None).unwrap();
    fill(&log, 10, 3, 5, 1_000); // 10..25
    log.increment_log_start_offset(12).unwrap();
    assert!(log.truncate_to(5).unwrap());
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (5, 5));
    assert_eq!(log.segments().base_offsets(), vec![5]);
    assert_eq!(log.size(), 0);
    log.append(&batch(5, 3, 2_000)).unwrap();
    assert_eq!(read_all(&log, 5), vec![5, 6, 7]);
    drop(log); // a crash: the checkpoints written by the truncation hold
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (5, 8));
    assert_eq!(read_all(&log, 5), vec![5, 6, 7]);
}

#[test]
fn truncating_to_exactly_the_log_start_keeps_the_segment_that_holds_it() {
    // At the log start itself (a batch boundary) truncate_to is an ordinary truncation:
    // the segment keeps its bytes below the log start, the log end is the log start, and
    // the log does not restart.
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    fill(&log, 0, 2, 5, 1_000); // 0..10
    log.roll(None).unwrap();
    fill(&log, 10, 3, 5, 1_000); // 10..25, batches at 10, 15, 20
    log.increment_log_start_offset(15).unwrap();
    let kept = log.segments().active_segment().unwrap();
    assert!(log.truncate_to(15).unwrap());
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (15, 15));
    let active = log.segments().active_segment().unwrap();
    assert!(
        std::sync::Arc::ptr_eq(&kept, &active),
        "the same segment, not a restart"
    );
    assert_eq!(active.base_offset(), 10);
    assert_eq!(active.read_next_offset().unwrap(), 15);
    log.append(&batch(15, 2, 2_000)).unwrap();
    assert_eq!(read_all(&log, 15), vec![15, 16]);
}

#[test]
fn truncation_below_the_recovery_point_lowers_it_and_its_checkpoint() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let log = open_log(dir.path(), config(4096, 1 << 20), clock);
    fill(&log, 0, 5, 5, 1_000); // 0..25
    log.flush().unwrap();
    assert_eq!(log.recovery_point(), 25);
    assert!(log.truncate_to(15).unwrap());
    assert_eq!(log.recovery_point(), 15);
    let checkpoint = std::fs::read_to_string(dir.path().join("recovery-point")).unwrap();
    assert_eq!(checkpoint.lines().last(), Some("15"), "{checkpoint:?}");
}
