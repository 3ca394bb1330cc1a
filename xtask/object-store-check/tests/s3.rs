//! `segment::tier::ObjectStoreStorage` (segment's `object-store` feature) over
//! object_store's S3 client, against an S3 server (s3s-fs over a temporary directory)
//! that the test starts in its own process (`docs/kafka-behaviour.md#object-store-storage`):
//! every object holds the bytes `LocalTieredStorage` writes at the same relative name,
//! ranges and indexes come back as stored, a missing segment or `.txnindex` is
//! `NotFound`, deletion is idempotent, and fetches served from the objects answer as the
//! local reads of the same offsets.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use object_store::aws::AmazonS3Builder;
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use segment::record::{control_batch, BatchBuilder, ControlRecordType};
use segment::tier::{
    fetch_remote_indexes, fetch_remote_segment, read_remote_kafka, IndexType, LocalTieredStorage,
    ObjectStoreStorage, RemoteFile, RemoteLogSegmentId, RemoteLogSegmentMetadata, RemoteStorage,
    RemoteStorageError, TopicIdPartition, Uuid,
};
use segment::{FetchIsolation, Log, LogConfig};

const BUCKET: &str = "tiered";
const PREFIX: &str = "kafka-tiered-storage";

/// Starts s3s-fs over `root` (the bucket is a directory in it) on a runtime of its own;
/// the runtime must outlive the test's requests.
fn start_s3(root: &Path) -> (tokio::runtime::Runtime, SocketAddr) {
    std::fs::create_dir_all(root.join(BUCKET)).unwrap();
    let fs = s3s_fs::FileSystem::new(root).unwrap();
    let mut b = S3ServiceBuilder::new(fs);
    b.set_auth(SimpleAuth::from_single(
        "test-access-key",
        "test-secret-key",
    ));
    let service = b.build();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        let http = ConnBuilder::new(TokioExecutor::new());
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                continue;
            };
            let conn = http
                .serve_connection(TokioIo::new(socket), service.clone())
                .into_owned();
            tokio::spawn(async move {
                let _ = conn.await;
            });
        }
    });
    (rt, addr)
}

fn storage(addr: SocketAddr) -> ObjectStoreStorage {
    // reqwest's rustls needs a process-wide crypto provider even for plain HTTP (ring's
    // is deprecated for its lack of post-quantum key exchange, unused here).
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
    let s3 = AmazonS3Builder::new()
        .with_endpoint(format!("http://{addr}"))
        .with_allow_http(true)
        .with_bucket_name(BUCKET)
        .with_region("us-east-1")
        .with_access_key_id("test-access-key")
        .with_secret_access_key("test-secret-key")
        .build()
        .unwrap();
    ObjectStoreStorage::new(Arc::new(s3), PREFIX).unwrap()
}

/// Plain and transactional batches (one producer, aborts and commits) over ~600-byte
/// segments, all decided and the last one rolled: every segment but the empty active one
/// is tierable, some with a `.txnindex`.
fn log_with_transactions(dir: &Path) -> Log {
    let cfg = LogConfig {
        remote_storage_enable: true,
        segment_bytes: 600,
        ..LogConfig::default()
    };
    let log = Log::open(dir, cfg).unwrap();
    for round in 0..12i64 {
        let o = log.log_end_offset();
        let plain = BatchBuilder::new(o)
            .partition_leader_epoch(0)
            .record(1_000 + o, None, Some(b"plain-value"))
            .record(1_001 + o, None, Some(b"plain-value"))
            .build()
            .unwrap();
        log.append(&plain).unwrap();
        let o = log.log_end_offset();
        let txn = BatchBuilder::new(o)
            .partition_leader_epoch(0)
            .producer(7, 0, round as i32)
            .transactional(true)
            .record(1_000 + o, None, Some(b"txn-value"))
            .build()
            .unwrap();
        log.append(&txn).unwrap();
        let o = log.log_end_offset();
        let kind = if round % 3 == 0 {
            ControlRecordType::Abort
        } else {
            ControlRecordType::Commit
        };
        log.append(&control_batch(o, 7, 0, kind, 0, 1_000 + o).unwrap())
            .unwrap();
    }
    log.roll(None).unwrap();
    log
}

fn metadata(u: &segment::SegmentUpload, n: i64) -> RemoteLogSegmentMetadata {
    let id = RemoteLogSegmentId {
        topic_id_partition: TopicIdPartition {
            topic_id: Uuid {
                most_significant_bits: 0x0123_4567_89ab_cdef,
                least_significant_bits: 0x7edc_ba98_7654_3210,
            },
            topic: "tiered-topic".into(),
            partition: 3,
        },
        id: Uuid {
            most_significant_bits: 0x1111_2222_3333_4444,
            least_significant_bits: n,
        },
    };
    RemoteLogSegmentMetadata::from_upload(id, u, 1, 1_000).unwrap()
}

#[test]
fn object_store_storage_against_an_in_process_s3_server() {
    let s3_root = tempfile::tempdir().unwrap();
    let (_rt, addr) = start_s3(s3_root.path());
    let rs = storage(addr);
    let dir = tempfile::tempdir().unwrap();
    let log = log_with_transactions(&dir.path().join("tiered-topic-3"));
    let uploads = log.tierable_segments().unwrap();
    assert!(uploads.len() >= 3, "{} segments", uploads.len());
    assert!(uploads.iter().any(|u| u.txn_index.is_some()));
    assert!(uploads.iter().any(|u| u.txn_index.is_none()));
    // The same uploads through LocalTieredStorage: the reference names and bytes.
    let local_root = tempfile::tempdir().unwrap();
    let local = LocalTieredStorage::open(local_root.path()).unwrap();

    let mut segs = Vec::new();
    for (i, u) in uploads.iter().enumerate() {
        let md = metadata(u, i as i64);
        assert_eq!(rs.copy_log_segment_data(&md, u).unwrap(), None);
        local.copy_log_segment_data(&md, u).unwrap();
        // Each object is the file LocalTieredStorage wrote at the same relative name
        // (s3s-fs keeps an object as a file under the bucket's directory).
        for file in RemoteFile::ALL {
            let rel = local
                .file_path(&md, file)
                .strip_prefix(local_root.path())
                .unwrap()
                .to_path_buf();
            assert_eq!(rs.object_path(&md, file).to_string(), rel.to_str().unwrap());
            let object = s3_root.path().join(BUCKET).join(&rel);
            let want = local_root.path().join(&rel);
            match std::fs::read(&want) {
                Ok(bytes) => assert_eq!(std::fs::read(&object).unwrap(), bytes, "{rel:?}"),
                Err(_) => assert!(!object.exists(), "{rel:?}"),
            }
        }
        // Ranges and indexes come back through the S3 API as stored.
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
        assert!(matches!(
            rs.fetch_log_segment(&md, 10, Some(9)),
            Err(RemoteStorageError::InvalidArgument { .. })
        ));
        for t in IndexType::ALL {
            match (local.fetch_index(&md, t), rs.fetch_index(&md, t)) {
                (Ok(want), Ok(got)) => assert_eq!(got, want, "{t:?}"),
                (Err(w), Err(g)) => assert!(w.is_not_found() && g.is_not_found(), "{t:?}: {g}"),
                (want, got) => panic!("{t:?}: want {want:?}, got {got:?}"),
            }
        }
        let idx = Arc::new(fetch_remote_indexes(&rs, &md).unwrap());
        assert_eq!(idx.txn_index.is_some(), u.txn_index.is_some());
        let seg = fetch_remote_segment(&rs, &md, idx).unwrap();
        segs.push((md, seg));
    }

    // Fetches served from the objects answer as the local reads.
    let remote: Vec<_> = segs.iter().map(|(_, s)| s.clone()).collect();
    let mut checked = 0;
    for (i, seg) in remote.iter().enumerate() {
        for offset in seg.base_offset()..=seg.end_offset() {
            for (iso, committed) in [
                (FetchIsolation::HighWatermark, false),
                (FetchIsolation::TxnCommitted, true),
            ] {
                let want = log.read_with(offset, 1 << 20, iso, true).unwrap();
                let got =
                    read_remote_kafka(&remote[i..], offset, 1 << 20, true, committed).unwrap();
                assert_eq!(got.records, want.records, "offset {offset}");
                if committed {
                    let mut g: Vec<_> = got
                        .aborted_transactions
                        .unwrap()
                        .iter()
                        .map(|t| (t.producer_id, t.first_offset))
                        .collect();
                    if let Some((s, u)) = got.local_aborted_search {
                        g.extend(
                            log.collect_aborted_txns(s, u)
                                .unwrap()
                                .iter()
                                .map(|t| (t.producer_id, t.first_offset)),
                        );
                    }
                    let mut w: Vec<_> = want
                        .aborted_transactions
                        .unwrap()
                        .iter()
                        .map(|t: &index_txn::AbortedTxn| (t.producer_id, t.first_offset))
                        .collect();
                    g.sort_unstable();
                    g.dedup();
                    w.sort_unstable();
                    w.dedup();
                    assert_eq!(g, w, "offset {offset}: aborted");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "{checked}");

    // Deletion: every object of the segment goes, twice is no error, the others stay.
    let (first, _) = &segs[0];
    rs.delete_log_segment_data(first).unwrap();
    let e = rs.fetch_log_segment(first, 0, None).unwrap_err();
    assert!(matches!(e, RemoteStorageError::NotFound { .. }), "{e}");
    for t in IndexType::ALL {
        assert!(
            rs.fetch_index(first, t).unwrap_err().is_not_found(),
            "{t:?}"
        );
    }
    rs.delete_log_segment_data(first).unwrap();
    let (second, _) = &segs[1];
    assert_eq!(
        rs.fetch_log_segment(second, 0, None).unwrap(),
        uploads[1].log.to_vec().unwrap()
    );
    // A segment never stored: NotFound.
    let never = metadata(&uploads[0], 99);
    assert!(rs
        .fetch_log_segment(&never, 0, None)
        .unwrap_err()
        .is_not_found());
}
