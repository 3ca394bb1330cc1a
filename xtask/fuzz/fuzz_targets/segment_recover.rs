//! `LogSegment::recover` on arbitrary `.log` bytes, then the reads a broker makes on the
//! recovered segment (translate, read, timestamp search, next offset, truncation).
//!
//! Input: bytes 0..8 are a target offset/timestamp, the rest is the `.log`.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use segment::{
    LeaderEpochCache, LogConfig, LogSegment, MockTime, ProducerStateManager, SegmentOptions,
};

fn scratch() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        if shm.is_dir() {
            tempfile::tempdir_in(shm).expect("scratch dir")
        } else {
            tempfile::tempdir().expect("scratch dir")
        }
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let target = i64::from_be_bytes(data[..8].try_into().unwrap());
    let log_bytes = &data[8..];
    let dir = scratch().path().join("p");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("00000000000000000000.log"), log_bytes).unwrap();
    let config = LogConfig {
        max_index_size: 1 << 16,
        index_interval_bytes: 64,
        ..LogConfig::default()
    };
    let clock = Arc::new(MockTime::new(1_700_000_000_000));
    let Ok(seg) =
        LogSegment::<segment::KafkaBatchFormat>::open(&dir, 0, &config, SegmentOptions::existing().clock(clock))
    else {
        return;
    };
    let mut producers = ProducerStateManager::new();
    let mut epochs = LeaderEpochCache::new();
    if seg.recover(&mut producers, Some(&mut epochs)).is_err() {
        return;
    }
    let size = seg.size();
    assert!(size <= log_bytes.len() as u64, "recovery grew the log");
    let _ = seg.read_next_offset();
    let _ = seg.translate_offset(target, 0);
    let _ = seg.read_min_one_message(target, 1 << 16, size);
    let _ = seg.read_min_one_message(0, 1, size);
    let _ = seg.find_offset_by_timestamp(target, 0);
    let _ = seg.max_timestamp_so_far();
    let _ = seg.collect_aborted_txns(0, i64::MAX);
    let _ = seg.has_overflow();
    let _ = seg.truncate_to(target);
    let _ = seg.flush();
});
