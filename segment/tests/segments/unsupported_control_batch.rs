//! A control batch that recovery cannot read for a reason other than corruption (here an
//! undefined compression id, 5, with a valid CRC) fails `LogSegment::recover` with a typed
//! error and truncates nothing, as Kafka's recovery fails on `CompressionType.forId`
//! instead of truncating. Truncating there would drop the marker and every batch after
//! it: acknowledged data.

use crate::common::*;
use segment::record::{control_batch, ControlRecordType};
use segment::ProducerStateManager;

#[test]
fn an_unreadable_control_batch_is_an_error_not_a_truncation() {
    let dir = tmpdir();
    let mut marker = control_batch(1, 7, 0, ControlRecordType::Abort, 0, 2_000).unwrap();
    set_codec(&mut marker, 5);
    let mut log = batch(0, 1, 1_000);
    log.extend_from_slice(&marker);
    log.extend_from_slice(&batch(2, 3, 3_000));
    let path = segment::names::log_file(dir.path(), 0, "");
    std::fs::write(&path, &log).unwrap();
    let (_t, clock) = mock();
    let seg = reopen_segment(dir.path(), 0, &config(4096, 4096), clock);
    let err = seg
        .recover(&mut ProducerStateManager::new(), None)
        .unwrap_err();
    assert!(!err.is_corruption(), "{err:?}");
    assert!(
        err.to_string().contains("compression"),
        "the error names the cause: {err}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), log, "nothing is truncated");
}
