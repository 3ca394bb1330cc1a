//! Issue 42, branch `remotestore`: `tier::LocalTieredStorage`, the `RemoteStorage` in
//! Kafka 4.4's `LocalTieredStorage` layout (`docs/kafka-behaviour.md#local-tiered-storage`,
//! `docs/kafka-behaviour.md#remote-storage`): every file of every `SegmentUpload` is
//! stored byte for byte under Kafka's names, ranges are fetched as Kafka's contract says,
//! a missing segment or index is a typed `NotFound`, deletion is idempotent, a failed copy
//! leaves nothing, and a fetch served from the stored files answers as the local read.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

use crate::common::*;
use crate::remote_read::{check, mixed_log};
use segment::fs::{Fault, FaultyFs, FsOp};
use segment::tier::{
    fetch_remote_indexes, fetch_remote_segment, read_remote_kafka, IndexType, LocalTieredStorage,
    RemoteFile, RemoteLogSegmentId, RemoteLogSegmentMetadata, RemoteLogSegmentState, RemoteStorage,
    RemoteStorageError, TopicIdPartition, Uuid,
};
use segment::{FetchIsolation, SegmentUpload};

fn whole(f: &File) -> Vec<u8> {
    let mut f = f;
    f.seek(SeekFrom::Start(0)).unwrap();
    let mut v = Vec::new();
    f.read_to_end(&mut v).unwrap();
    v
}

fn tp() -> TopicIdPartition {
    TopicIdPartition {
        topic_id: Uuid {
            most_significant_bits: 0x0123_4567_89ab_cdef,
            least_significant_bits: 0x7edc_ba98_7654_3210,
        },
        topic: "tiered-topic".into(),
        partition: 3,
    }
}

fn metadata(u: &SegmentUpload, n: i64) -> RemoteLogSegmentMetadata {
    let id = RemoteLogSegmentId {
        topic_id_partition: tp(),
        id: Uuid {
            most_significant_bits: 0x1111_2222_3333_4444,
            least_significant_bits: n,
        },
    };
    // `mixed_log` writes no leader epoch; the metadata needs one (Kafka's constructor).
    let epochs = if u.segment_leader_epochs.is_empty() {
        [(0, u.base_offset)].into()
    } else {
        u.segment_leader_epochs.iter().copied().collect()
    };
    RemoteLogSegmentMetadata::new(
        id,
        u.base_offset,
        u.end_offset,
        u.max_timestamp,
        1,
        1_000,
        i32::try_from(u.size).unwrap(),
        None,
        RemoteLogSegmentState::CopySegmentStarted,
        epochs,
        u.txn_index.is_none(),
    )
    .unwrap()
}

/// What each stored file must hold: the upload's bytes, `None` for a file Kafka's
/// `LocalTieredStorage` does not write (no `.txnindex`, no snapshot, no epoch bytes).
fn expected(u: &SegmentUpload, file: RemoteFile) -> Option<Vec<u8>> {
    match file {
        RemoteFile::Segment => Some(u.log.to_vec().unwrap()),
        RemoteFile::OffsetIndex => Some(whole(&u.offset_index)),
        RemoteFile::TimeIndex => Some(whole(&u.time_index)),
        RemoteFile::TransactionIndex => u.txn_index.as_ref().map(whole),
        RemoteFile::LeaderEpochCheckpoint => {
            Some(u.leader_epoch_checkpoint.clone()).filter(|b| !b.is_empty())
        }
        RemoteFile::ProducerSnapshot => u.producer_snapshot.as_ref().map(whole),
    }
}

#[test]
fn every_file_is_stored_byte_for_byte_under_kafkas_names() {
    let dir = tmpdir();
    let log = mixed_log(dir.path(), 1, 7);
    let uploads = log.tierable_segments().unwrap();
    assert!(uploads.iter().any(|u| u.txn_index.is_some()));
    assert!(uploads.iter().any(|u| u.txn_index.is_none()));
    let remote = tmpdir();
    let rs = LocalTieredStorage::open(remote.path()).unwrap();
    let part_dir = remote
        .path()
        .join("kafka-tiered-storage")
        .join(format!("tiered-topic-3-{}", tp().topic_id));
    assert_eq!(rs.partition_directory(&tp()), part_dir);
    let mut names = Vec::new();
    for (i, u) in uploads.iter().enumerate() {
        let md = metadata(u, i as i64);
        assert_eq!(rs.copy_log_segment_data(&md, u).unwrap(), None);
        for file in RemoteFile::ALL {
            let name = format!(
                "{:020}-{}{}",
                u.base_offset,
                md.remote_log_segment_id().id,
                file.suffix()
            );
            let path = part_dir.join(&name);
            match expected(u, file) {
                Some(bytes) => {
                    assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name}");
                    names.push(name);
                }
                None => assert!(!path.exists(), "{name}"),
            }
        }
    }
    // Nothing else: no temporary file survives a copy.
    let mut found: Vec<String> = std::fs::read_dir(&part_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    found.sort();
    names.sort();
    assert_eq!(found, names);
    // Kafka's id text: 22 characters of URL-safe base64.
    let id = metadata(&uploads[0], 0)
        .remote_log_segment_id()
        .id
        .to_string();
    assert_eq!(id.len(), 22);
}

#[test]
fn fetches_return_the_stored_ranges_and_indexes() {
    let dir = tmpdir();
    let log = mixed_log(dir.path(), 1, 8);
    let uploads = log.tierable_segments().unwrap();
    let remote = tmpdir();
    let rs = LocalTieredStorage::open(remote.path()).unwrap();
    for (i, u) in uploads.iter().enumerate() {
        let md = metadata(u, i as i64);
        rs.copy_log_segment_data(&md, u).unwrap();
        let log_bytes = u.log.to_vec().unwrap();
        let len = log_bytes.len() as u64;
        assert_eq!(rs.fetch_log_segment(&md, 0, None).unwrap(), log_bytes);
        for (start, end) in [(0, Some(0)), (5, Some(60)), (len - 1, None), (7, Some(len))] {
            let stop = end.map_or(len, |e: u64| (e + 1).min(len));
            assert_eq!(
                rs.fetch_log_segment(&md, start, end).unwrap(),
                log_bytes[start as usize..stop as usize],
                "{start}..={end:?}"
            );
        }
        assert_eq!(
            rs.fetch_log_segment(&md, len, None).unwrap(),
            Vec::<u8>::new()
        );
        // Kafka's `checkArgument`s: the end below the start, or past the size.
        for (start, end) in [(10, 9), (0, len + 1)] {
            assert!(matches!(
                rs.fetch_log_segment(&md, start, Some(end)),
                Err(RemoteStorageError::InvalidArgument { .. })
            ));
        }
        for t in IndexType::ALL {
            match (expected(u, t.file()), rs.fetch_index(&md, t)) {
                (Some(b), Ok(got)) => assert_eq!(got, b, "{t:?}"),
                (None, Err(e)) => assert!(e.is_not_found(), "{t:?}: {e}"),
                (want, got) => panic!("{t:?}: want {want:?}, got {got:?}"),
            }
        }
        let idx = fetch_remote_indexes(&rs, &md).unwrap();
        assert_eq!(idx.txn_index.is_some(), u.txn_index.is_some());
    }
}

#[test]
fn a_missing_segment_is_not_found_and_deletion_is_idempotent() {
    let dir = tmpdir();
    let log = mixed_log(dir.path(), 1, 9);
    let uploads = log.tierable_segments().unwrap();
    let remote = tmpdir();
    let rs = LocalTieredStorage::open(remote.path()).unwrap();
    let (a, b) = (metadata(&uploads[0], 0), metadata(&uploads[1], 1));
    // Nothing stored yet: not even the partition directory.
    assert!(rs
        .fetch_log_segment(&a, 0, None)
        .unwrap_err()
        .is_not_found());
    assert!(rs
        .fetch_index(&a, IndexType::Offset)
        .unwrap_err()
        .is_not_found());
    rs.delete_log_segment_data(&a).unwrap();
    rs.copy_log_segment_data(&a, &uploads[0]).unwrap();
    rs.copy_log_segment_data(&b, &uploads[1]).unwrap();
    rs.delete_log_segment_data(&a).unwrap();
    for file in RemoteFile::ALL {
        assert!(!rs.file_path(&a, file).exists(), "{file:?}");
    }
    let e = rs.fetch_log_segment(&a, 0, None).unwrap_err();
    assert!(matches!(e, RemoteStorageError::NotFound { .. }), "{e}");
    for t in IndexType::ALL {
        assert!(rs.fetch_index(&a, t).unwrap_err().is_not_found(), "{t:?}");
    }
    // A second delete is no error; the other segment is untouched.
    rs.delete_log_segment_data(&a).unwrap();
    assert_eq!(
        rs.fetch_log_segment(&b, 0, None).unwrap(),
        uploads[1].log.to_vec().unwrap()
    );
    // As a `SegmentError`, the storage's error keeps its kind.
    let se: segment::SegmentError = e.into();
    let src = std::error::Error::source(&se).unwrap();
    assert!(src
        .downcast_ref::<RemoteStorageError>()
        .is_some_and(RemoteStorageError::is_not_found));
    rs.delete_partition(&tp()).unwrap();
    assert!(!rs.partition_directory(&tp()).exists());
    rs.delete_partition(&tp()).unwrap();
}

#[test]
fn a_failed_copy_leaves_no_file_of_the_segment() {
    let dir = tmpdir();
    let log = mixed_log(dir.path(), 1, 10);
    let uploads = log.tierable_segments().unwrap();
    let remote = tmpdir();
    // The rename of each kind of file fails in turn, and so do the writes' fsyncs.
    for (op, on) in [
        (FsOp::Rename, ".log.tmp"),
        (FsOp::Rename, ".index.tmp"),
        (FsOp::Rename, ".snapshot.tmp"),
        (FsOp::SyncDir, ""),
    ] {
        let fs = Arc::new(FaultyFs::new());
        fs.inject(Fault::new(op, libc_eio()).on_path(on));
        let rs = LocalTieredStorage::open_with(remote.path(), fs.clone()).unwrap();
        let md = metadata(&uploads[0], 0);
        let e = rs.copy_log_segment_data(&md, &uploads[0]).unwrap_err();
        assert!(
            matches!(e, RemoteStorageError::Io { .. }),
            "{op:?} {on}: {e}"
        );
        assert!(fs.injected() > 0, "{op:?} {on}");
        fs.clear();
        let left: Vec<_> = std::fs::read_dir(rs.partition_directory(&tp()))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{op:?} {on}: {left:?}");
        // The same storage copies it once the fault is gone.
        rs.copy_log_segment_data(&md, &uploads[0]).unwrap();
        rs.delete_log_segment_data(&md).unwrap();
    }
}

fn libc_eio() -> i32 {
    5
}

#[test]
fn fetches_served_from_the_stored_files_answer_as_local_reads() {
    let dir = tmpdir();
    let log = mixed_log(dir.path(), 200, 11);
    let uploads = log.tierable_segments().unwrap();
    let remote = tmpdir();
    let rs = LocalTieredStorage::open(remote.path()).unwrap();
    let mut segs = Vec::new();
    for (i, u) in uploads.iter().enumerate() {
        let md = metadata(u, i as i64);
        rs.copy_log_segment_data(&md, u).unwrap();
        let idx = Arc::new(fetch_remote_indexes(&rs, &md).unwrap());
        segs.push(fetch_remote_segment(&rs, &md, idx).unwrap());
    }
    let mut checked = 0;
    for (i, seg) in segs.iter().enumerate() {
        for offset in seg.base_offset()..=seg.end_offset() {
            for max in [1u64, 150, 1 << 20] {
                for (iso, committed) in [
                    (FetchIsolation::HighWatermark, false),
                    (FetchIsolation::TxnCommitted, true),
                ] {
                    let local = log.read_with(offset, max, iso, true).unwrap();
                    let r = read_remote_kafka(&segs[i..], offset, max, true, committed).unwrap();
                    check(&log, &r, &local, committed, &format!("{offset} {max}"));
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100, "{checked}");
}
