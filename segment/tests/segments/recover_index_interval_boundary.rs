//! Recovery indexes a batch only when *more* than `index.interval.bytes` lie between it
//! and the last indexed position (Kafka's `recover`: `validBytes - lastIndexEntry >
//! indexIntervalBytes`), the same rule as appends: with an interval equal to the batch
//! size, every second batch is indexed, and the rebuilt `.index` and `.timeindex` equal
//! the ones the appends wrote, byte for byte.

use crate::common::*;
use segment::ProducerStateManager;

#[test]
fn an_interval_of_exactly_one_batch_indexes_every_second_batch() {
    let dir = tmpdir();
    let (_t, clock) = mock();
    let cfg = config(73, 4096);
    let seg = new_segment(dir.path(), 0, &cfg, clock.clone());
    for i in 0..10i64 {
        let b = v2(i, 1_000 + i);
        assert_eq!(b.len(), 73);
        seg.append(i, 1_000 + i, i, &b).unwrap();
    }
    let appended: Vec<_> = {
        let oi = seg.offset_index().unwrap();
        let snap = oi.snapshot().unwrap();
        snap.slots().iter().map(|e| e.decode(0)).collect()
    };
    // Bytes since the last entry before batch i: 73 (i - last): an entry at i = 2, 4, ...
    let positions: Vec<u32> = appended.iter().map(|p| p.position).collect();
    assert_eq!(positions, vec![146, 292, 438, 584]);
    seg.close().unwrap();
    let (index, timeindex) = (
        std::fs::read(dir.path().join("00000000000000000000.index")).unwrap(),
        std::fs::read(dir.path().join("00000000000000000000.timeindex")).unwrap(),
    );

    let seg = reopen_segment(dir.path(), 0, &cfg, clock);
    assert_eq!(
        seg.recover(&mut ProducerStateManager::new(), None).unwrap(),
        0
    );
    seg.close().unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("00000000000000000000.index")).unwrap(),
        index
    );
    assert_eq!(
        std::fs::read(dir.path().join("00000000000000000000.timeindex")).unwrap(),
        timeindex
    );
}
