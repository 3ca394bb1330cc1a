//! The in-repository partition `segment/tests/data/generated/orders-0`, written by this
//! crate's own writer: plain, idempotent and transactional batches (one transaction
//! aborted, one committed, so the `.txnindex` has an entry), two leader epochs, several
//! rolled segments, closed cleanly. The real-data suites of every crate run on it (next to
//! the broker-written partitions under `segment/tests/data/kafka-*`), so a plain clone
//! tests them without the optional field data.
//!
//! This test regenerates the partition in a temporary directory and requires it to be
//! byte-identical to the committed files, so the fixture always says what the writer
//! writes. `REGENERATE_FIXTURES=1 cargo test -p segment --test log generated_fixture::`
//! rewrites the committed copy.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use segment::record::{BatchBuilder, ControlRecordType};
use segment::{Clock, Log, LogConfig, MockTime};

const T0: i64 = 1_700_000_000_000;

fn committed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/generated/orders-0")
}

/// Writes the partition into `dir` (which must not exist).
fn generate(dir: &Path) {
    let config = LogConfig {
        // Kafka's default index.interval.bytes (4096), so recovery with the default
        // configuration rebuilds these indexes exactly.
        segment_bytes: 32 * 1024,
        max_index_size: 64 * 1024,
        retention_ms: -1,
        ..LogConfig::default()
    };
    let clock: Clock = Arc::new(MockTime::new(T0));
    let log = Log::options()
        .clock(clock.clone())
        .open(dir, config.clone())
        .expect("open");
    let mut next = 0i64;
    let mut ts = T0;
    let append = |b: BatchBuilder, n: i64, next: &mut i64| {
        log.append(&b.build().expect("build")).expect("append");
        *next += n;
    };
    for i in 0..1000i64 {
        let epoch = if i < 500 { 0 } else { 1 };
        let n = i % 4 + 1;
        let mut b = BatchBuilder::new(next).partition_leader_epoch(epoch);
        if i % 5 == 1 {
            // An idempotent producer: sequences continue from batch to batch.
            b = b.producer(1000, 0, (next % 100_000) as i32);
        }
        for r in 0..n {
            ts += 7;
            let value = format!(
                "order {} of batch {i}: {} widgets",
                next + r,
                (next + r) % 9
            );
            let key = format!("customer-{}", (next + r) % 13);
            b = b.record(ts, Some(key.as_bytes()), Some(value.as_bytes()));
        }
        append(b, n, &mut next);
        if i == 300 || i == 700 {
            // A transaction of producer 2000 (epoch 3): two data batches, then a marker.
            // The one at batch 300 aborts, the one at batch 700 commits.
            for (k, seq) in [(0, 0), (1, 2)] {
                let mut t = BatchBuilder::new(next)
                    .partition_leader_epoch(epoch)
                    .producer(2000, 3, seq + i as i32)
                    .transactional(true);
                for r in 0..2 {
                    ts += 3;
                    let v = format!("txn write {k}.{r}");
                    t = t.record(ts, None, Some(v.as_bytes()));
                }
                append(t, 2, &mut next);
            }
            let kind = if i == 300 {
                ControlRecordType::Abort
            } else {
                ControlRecordType::Commit
            };
            ts += 1;
            let marker = BatchBuilder::new(next)
                .partition_leader_epoch(epoch)
                .producer(2000, 3, -1)
                .build_end_txn_marker(kind, 5, ts)
                .expect("marker");
            log.append(&marker).expect("append marker");
            next += 1;
        }
    }
    log.close().expect("close");
    // `Log::append` does not write the `.txnindex` entry of an aborted transaction (Kafka's
    // leader does, in `UnifiedLog.append`); recovery does. Recover every segment once (no
    // clean-shutdown marker, no recovery point) so the fixture has the `.txnindex` that
    // Kafka would have written.
    std::fs::remove_file(dir.join(".kafka_cleanshutdown")).expect("marker");
    std::fs::remove_file(dir.join("recovery-point")).expect("recovery point");
    let log = Log::options()
        .clock(clock)
        .open(dir, config)
        .expect("recover");
    log.close().expect("close after recovery");
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        // `.lock` is the running log's directory lock (Log::open), not data.
        .filter(|p| p.file_name().is_some_and(|n| n != ".lock"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn committed_fixture_is_what_the_writer_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path().join("orders-0");
    generate(&fresh);
    let target = committed();
    if std::env::var_os("REGENERATE_FIXTURES").is_some() {
        let _ = std::fs::remove_dir_all(&target);
        std::fs::create_dir_all(&target).unwrap();
        for (name, bytes) in files(&fresh) {
            std::fs::write(target.join(name), bytes).unwrap();
        }
    }
    let (fresh, committed) = (files(&fresh), files(&target));
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&fresh), names(&committed), "file names");
    for ((name, a), (_, b)) in fresh.iter().zip(&committed) {
        assert!(
            a == b,
            "{name} differs from the committed fixture (regenerate it)"
        );
    }
    assert!(committed.iter().filter(|f| f.0.ends_with(".log")).count() >= 3);
    assert!(committed
        .iter()
        .any(|f| f.0.ends_with(".txnindex") && f.1.len() == 34));
}
