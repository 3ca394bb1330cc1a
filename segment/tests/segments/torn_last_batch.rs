//! A torn last batch (crash mid-write) is ignored by reads and truncated by recovery.
use crate::common::*;
use segment::ProducerStateManager;

#[test]
fn torn_last_batch_is_truncated_by_recover() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 0, &config(1, 4096), clock);
    let mut o = 0;
    for _ in 0..5 {
        seg.append(o + 9, o, o + 9, &batch(o, 10, o)).unwrap();
        o += 10;
    }
    let full = seg.size();
    let last = batch(50, 10, 50);
    let cut = last.len() - 7;
    seg.log().append(&last[..cut]).unwrap(); // torn write
    assert_eq!(seg.read_next_offset().unwrap(), 50);
    assert!(seg.read(50, 10_000).unwrap().is_none());
    assert_eq!(
        seg.recover(&mut ProducerStateManager::new(), None).unwrap(),
        cut as u64
    );
    assert_eq!(seg.size(), full);
    assert_eq!(seg.read_next_offset().unwrap(), 50);
}

#[test]
fn corrupt_crc_in_middle_truncates_from_there() {
    let dir = tempfile::tempdir().unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 0, &config(1, 4096), clock);
    for i in 0..5 {
        seg.append(i, 1000 + i, i, &v2(i, 1000 + i)).unwrap();
    }
    seg.flush().unwrap();
    let path = seg.log_path();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[73 * 3 + 70] ^= 0xff; // damage the 4th batch's record bytes (CRC mismatch)
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(
        seg.recover(&mut ProducerStateManager::new(), None).unwrap(),
        146
    );
    assert_eq!(seg.read_next_offset().unwrap(), 3);
}
