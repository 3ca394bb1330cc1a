//! The `BatchFormat` seam: `KafkaBatchFormat` on the acceptance cases' vectors and stop rules, the
//! generic `scan`, and a toy third-party format using the default (batch-granular)
//! timestamp search.

use index_core::codec::{I32Be, I64Be};
use segment::format::{scan, BatchFormat, BatchInfo, FormatError, KafkaBatchFormat};
use segment::record::{
    control_batch, fixtures, BatchBuilder, ControlRecordType, RecordError, StopReason,
    TimestampAndOffset,
};

fn scan_all<F: BatchFormat>(data: &[u8]) -> (Vec<BatchInfo>, Option<FormatError>, StopReason) {
    let mut s = scan::<F>(data, 0);
    let mut infos = Vec::new();
    let mut err = None;
    for b in s.by_ref() {
        match b {
            Ok(b) => {
                assert_eq!(b.bytes.len(), b.info.size_in_bytes);
                infos.push(b.info);
            }
            Err(e) => err = Some(e),
        }
    }
    (infos, err, s.stop_reason().cloned().unwrap())
}

#[test]
fn kafka_format_constants() {
    assert_eq!(KafkaBatchFormat::NAME, "kafka");
    assert_eq!(KafkaBatchFormat::HEADER_PEEK_BYTES, 18);
    assert_eq!(KafkaBatchFormat::MAX_HEADER_BYTES, 61);
}

#[test]
fn kafka_format_parses_case_42_and_45() {
    let v2 = fixtures::v2(0, 1000);
    assert_eq!(KafkaBatchFormat::peek_size(&v2[..18], 0).unwrap(), Some(73));
    assert_eq!(KafkaBatchFormat::peek_size(&v2[..17], 0).unwrap(), None);
    let info = KafkaBatchFormat::parse_header(&v2, 100).unwrap();
    assert_eq!(
        info,
        BatchInfo {
            position: 100,
            base_offset: 0,
            last_offset: 0,
            max_timestamp: 1000,
            offset_of_max_timestamp: 0,
            size_in_bytes: 73,
            is_control: false,
            is_transactional: false,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            last_sequence: -1,
            partition_leader_epoch: 0,
            magic: 2,
        }
    );
    KafkaBatchFormat::validate(&v2, 0).unwrap();
    let mut bad = v2.clone();
    bad[72] ^= 1;
    assert!(matches!(
        KafkaBatchFormat::validate(&bad, 7),
        Err(FormatError::Corrupt { position: 7, .. })
    ));

    let v1 = fixtures::v1(50, &["hello"]);
    let info = KafkaBatchFormat::parse_header(&v1, 0).unwrap();
    assert_eq!(
        (
            info.base_offset,
            info.last_offset,
            info.max_timestamp,
            info.size_in_bytes,
            info.magic
        ),
        (50, 50, 500, 39, 1)
    );
    assert_eq!(info.partition_leader_epoch, -1);
    KafkaBatchFormat::validate(&v1, 0).unwrap();
    // Header-only parsing: 26 bytes suffice for magic 1, 61 for v2.
    assert_eq!(KafkaBatchFormat::parse_header(&v1[..26], 0).unwrap(), info);
    assert!(matches!(
        KafkaBatchFormat::parse_header(&v1[..25], 0),
        Err(FormatError::Corrupt { .. })
    ));
    assert!(matches!(
        KafkaBatchFormat::parse_header(&v2[..60], 0),
        Err(FormatError::Corrupt { .. })
    ));
}

#[test]
fn kafka_format_scan_follows_case_46() {
    let v2 = fixtures::v2(0, 1000);
    let with = |tail: &[u8]| {
        let mut f = v2.clone();
        f.extend_from_slice(tail);
        scan_all::<KafkaBatchFormat>(&f)
    };
    let (infos, err, stop) = with(&[0; 17]);
    assert_eq!((infos.len(), err), (1, None));
    assert_eq!(
        stop,
        StopReason::TornTail {
            position: 73,
            remaining_bytes: 17
        }
    );
    let (infos, err, stop) = with(&fixtures::v2(1, 1)[..40]);
    assert_eq!((infos.len(), err), (1, None));
    assert_eq!(
        stop,
        StopReason::TornTail {
            position: 73,
            remaining_bytes: 40
        }
    );
    let mut size13 = vec![0u8; 18];
    size13[8..12].copy_from_slice(&13i32.to_be_bytes());
    let (infos, err, stop) = with(&size13);
    assert_eq!(infos.len(), 1);
    assert!(matches!(
        err,
        Some(FormatError::Corrupt { position: 73, .. })
    ));
    assert!(matches!(stop, StopReason::Corrupt { position: 73, .. }));
    let (_, err, _) = with(&[0; 18]);
    assert!(err.unwrap().is_corruption());
    let (infos, err, stop) = with(&[]);
    assert_eq!((infos.len(), err, stop), (1, None, StopReason::End));
}

#[test]
fn kafka_format_timestamp_search_and_markers() {
    let batch = BatchBuilder::new(10)
        .partition_leader_epoch(3)
        .record(100, None, Some(b"a"))
        .record(300, None, Some(b"b"))
        .record(200, None, Some(b"c"))
        .build()
        .unwrap();
    let find = |ts, from| KafkaBatchFormat::search_timestamp(&batch, 0, ts, from).unwrap();
    assert_eq!(
        find(150, 0),
        Some(TimestampAndOffset {
            timestamp: 300,
            offset: 11,
            leader_epoch: Some(3)
        })
    );
    assert_eq!(
        find(150, 12),
        Some(TimestampAndOffset {
            timestamp: 200,
            offset: 12,
            leader_epoch: Some(3)
        })
    );
    assert_eq!(find(301, 0), None);
    assert_eq!(find(0, 13), None);

    assert_eq!(KafkaBatchFormat::end_txn_marker(&batch, 0).unwrap(), None);
    let commit = control_batch(5, 1, 0, ControlRecordType::Commit, 9, 0).unwrap();
    let m = KafkaBatchFormat::end_txn_marker(&commit, 0)
        .unwrap()
        .unwrap();
    assert_eq!(
        (m.control_type, m.coordinator_epoch),
        (ControlRecordType::Commit, 9)
    );
    let info = KafkaBatchFormat::parse_header(&commit, 0).unwrap();
    assert!(info.is_control && info.is_transactional);
    assert_eq!((info.producer_id, info.producer_epoch), (1, 0));
    // A LEADER_CHANGE-style control batch is not a marker.
    let leader_change = BatchBuilder::new(0)
        .control(true)
        .record(
            0,
            Some(&ControlRecordType::LeaderChange.key_bytes()),
            Some(b"\0\0"),
        )
        .build()
        .unwrap();
    assert_eq!(
        KafkaBatchFormat::end_txn_marker(&leader_change, 0).unwrap(),
        None
    );
}

#[test]
fn format_error_classification() {
    let c: FormatError = RecordError::CorruptRecord {
        position: 4,
        reason: "x".into(),
    }
    .into();
    assert!(c.is_corruption());
    assert_eq!(c.position(), 4);
    let i: FormatError = RecordError::InvalidRecord {
        position: 5,
        reason: "y".into(),
    }
    .into();
    assert!(matches!(i, FormatError::InvalidRecord { position: 5, .. }));
    let u: FormatError = RecordError::UnsupportedCompression {
        position: 6,
        codec_id: 7,
        magic: 2,
    }
    .into();
    assert!(matches!(u, FormatError::Unsupported { position: 6, .. }));
    assert!(!u.is_corruption());
}

/// A toy format: `[i32 total size][i64 base offset][i32 count][i64 max timestamp][payload]`.
struct ToyFormat;

impl ToyFormat {
    fn batch(base: i64, count: i32, max_ts: i64, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&I32Be::new((24 + payload.len()) as i32).to_bytes());
        out.extend_from_slice(&I64Be::new(base).to_bytes());
        out.extend_from_slice(&I32Be::new(count).to_bytes());
        out.extend_from_slice(&I64Be::new(max_ts).to_bytes());
        out.extend_from_slice(payload);
        out
    }
}

impl BatchFormat for ToyFormat {
    const NAME: &'static str = "toy";
    const HEADER_PEEK_BYTES: usize = 4;
    const MAX_HEADER_BYTES: usize = 24;

    fn peek_size(header: &[u8], position: u64) -> Result<Option<usize>, FormatError> {
        let Some(b) = header.get(..4) else {
            return Ok(None);
        };
        let size = bytemuck::pod_read_unaligned::<I32Be>(b).get();
        if size < 24 {
            return Err(FormatError::Corrupt {
                position,
                reason: format!("size {size}"),
            });
        }
        Ok(Some(size as usize))
    }

    fn parse_header(bytes: &[u8], position: u64) -> Result<BatchInfo, FormatError> {
        let size = Self::peek_size(bytes, position)?.unwrap_or(0);
        let h = bytes.get(..24).ok_or(FormatError::Corrupt {
            position,
            reason: "short".into(),
        })?;
        let base = bytemuck::pod_read_unaligned::<I64Be>(&h[4..12]).get();
        let count = bytemuck::pod_read_unaligned::<I32Be>(&h[12..16]).get();
        let max_ts = bytemuck::pod_read_unaligned::<I64Be>(&h[16..24]).get();
        Ok(BatchInfo {
            position,
            base_offset: base,
            last_offset: base + i64::from(count) - 1,
            max_timestamp: max_ts,
            offset_of_max_timestamp: base + i64::from(count) - 1,
            size_in_bytes: size,
            is_control: false,
            is_transactional: false,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            last_sequence: -1,
            partition_leader_epoch: -1,
            magic: 0,
        })
    }

    fn validate(batch: &[u8], position: u64) -> Result<(), FormatError> {
        Self::parse_header(batch, position).map(|_| ())
    }
}

#[test]
fn a_third_party_format_plugs_into_scan_with_default_timestamp_search() {
    let mut file = ToyFormat::batch(0, 3, 100, b"abc");
    file.extend(ToyFormat::batch(3, 2, 300, b""));
    file.extend(&ToyFormat::batch(5, 1, 400, b"x")[..10]); // torn tail
    let (infos, err, stop) = scan_all::<ToyFormat>(&file);
    assert!(err.is_none());
    assert_eq!(
        infos
            .iter()
            .map(|i| (i.position, i.last_offset))
            .collect::<Vec<_>>(),
        vec![(0, 2), (27, 4)]
    );
    assert_eq!(
        stop,
        StopReason::TornTail {
            position: 51,
            remaining_bytes: 10
        }
    );
    // Batch-granular default: (max timestamp, max(base offset, starting offset)).
    let second = &file[27..51];
    assert_eq!(
        ToyFormat::search_timestamp(second, 27, 250, 0).unwrap(),
        Some(TimestampAndOffset {
            timestamp: 300,
            offset: 3,
            leader_epoch: None
        })
    );
    assert_eq!(
        ToyFormat::search_timestamp(second, 27, 250, 4)
            .unwrap()
            .unwrap()
            .offset,
        4
    );
    assert_eq!(
        ToyFormat::search_timestamp(second, 27, 301, 0).unwrap(),
        None
    );
    assert_eq!(ToyFormat::search_timestamp(second, 27, 0, 5).unwrap(), None);
    assert_eq!(ToyFormat::end_txn_marker(second, 27).unwrap(), None);
    // Corrupt size.
    let (_, err, _) = scan_all::<ToyFormat>(&[0, 0, 0, 5, 1, 2, 3]);
    assert!(matches!(
        err,
        Some(FormatError::Corrupt { position: 0, .. })
    ));
    // A zero-size announcement cannot loop forever.
    struct Zero;
    impl BatchFormat for Zero {
        const NAME: &'static str = "zero";
        const HEADER_PEEK_BYTES: usize = 1;
        const MAX_HEADER_BYTES: usize = 1;
        fn peek_size(h: &[u8], _: u64) -> Result<Option<usize>, FormatError> {
            Ok((!h.is_empty()).then_some(0))
        }
        fn parse_header(_: &[u8], _: u64) -> Result<BatchInfo, FormatError> {
            unreachable!()
        }
        fn validate(_: &[u8], _: u64) -> Result<(), FormatError> {
            Ok(())
        }
    }
    let (infos, err, _) = scan_all::<Zero>(&[1, 2, 3]);
    assert!(infos.is_empty());
    assert!(err.is_some());
}
