//! The leader rows of `cargo xtask vs-kafka --only leader` (issue 41, goal 8), our side:
//! a producer's batches appended to a new log by its leader, `Log::append_as_leader`
//! against Kafka 4.4's `UnifiedLog.appendAsLeader` (`oracle.VsBench`), batch by batch.
//!
//! The input file (written by [`generate`]) is a sequence of entries, each an origin byte
//! (0: a client's batch, 1: the transaction coordinator's marker), a big-endian `u32`
//! length and that many bytes of a v2 batch as a producer sends it (base offset 0). Its
//! batches come from `P` producers in turn (`plain`: no producer id; `idempotent`: ids
//! 1000.. with sequences; `transactional`: the same in transactions of 10 batches, each
//! ended by the coordinator's COMMIT marker), 16 records of a 8-byte key and a 100-byte
//! value each.

use std::path::Path;
use std::time::Instant;

use segment::record::{BatchBuilder, ControlRecordType};
use segment::{AppendOrigin, Log, LogConfig, TopicCompression};

use super::{clear_dir, e, fold, Rng, FOLD_START, T0};

/// Records per generated batch.
pub const RECORDS_PER_BATCH: i32 = 16;

/// Batches of a transaction, per producer, before its COMMIT marker.
pub const BATCHES_PER_TXN: usize = 10;

/// Writes `batches` producer batches of `kind` (`plain`, `idempotent`,
/// `transactional`) from `producers` producers to `path` (see the module docs). Returns
/// the entries written (batches and markers) and the file's size.
///
/// # Errors
/// An unknown kind, a build or write failure.
pub fn generate(
    seed: u64,
    path: &Path,
    kind: &str,
    producers: usize,
    batches: usize,
) -> Result<(usize, u64), String> {
    if !matches!(kind, "plain" | "idempotent" | "transactional") {
        return Err(format!("no kind {kind}"));
    }
    let producers = producers.max(1);
    let mut rng = Rng::new(seed);
    let mut seq = vec![0i32; producers];
    let mut in_txn = vec![0usize; producers];
    let mut out = Vec::new();
    let mut entries = 0;
    let mut push = |out: &mut Vec<u8>, origin: u8, b: &[u8]| {
        out.push(origin);
        out.extend_from_slice(&(b.len() as u32).to_be_bytes());
        out.extend_from_slice(b);
        entries += 1;
    };
    for i in 0..batches {
        let p = i % producers;
        let pid = 1000 + p as i64;
        let ts = T0 + i as i64;
        let mut b = BatchBuilder::new(0);
        match kind {
            "plain" => {}
            _ => {
                b = b
                    .producer(pid, 0, seq[p])
                    .transactional(kind == "transactional")
            }
        }
        for r in 0..RECORDS_PER_BATCH {
            let key = format!("k{:07}", rng.range(0, 9_999_999));
            let word = format!("{:016x}", rng.next_u64());
            let value = word.repeat(100 / 16 + 1);
            b = b.record(
                ts + i64::from(r),
                Some(key.as_bytes()),
                Some(&value.as_bytes()[..100]),
            );
        }
        push(&mut out, 0, &b.build().map_err(e("build"))?);
        seq[p] = seq[p].wrapping_add(RECORDS_PER_BATCH);
        if kind == "transactional" {
            in_txn[p] += 1;
            if in_txn[p] == BATCHES_PER_TXN || i + producers >= batches {
                let marker = BatchBuilder::new(0)
                    .producer(pid, 0, -1)
                    .build_end_txn_marker(ControlRecordType::Commit, 0, ts)
                    .map_err(e("marker"))?;
                push(&mut out, 1, &marker);
                in_txn[p] = 0;
            }
        }
    }
    std::fs::write(path, &out).map_err(e("write"))?;
    Ok((entries, out.len() as u64))
}

/// The entries of an input file: (origin byte, batch bytes).
pub fn read_entries(path: &Path) -> Result<Vec<(u8, Vec<u8>)>, String> {
    let bytes = std::fs::read(path).map_err(e("read"))?;
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let head = bytes.get(pos..pos + 5).ok_or("a cut entry header")?;
        let len = u32::from_be_bytes(head[1..5].try_into().expect("4 bytes")) as usize;
        let body = bytes
            .get(pos + 5..pos + 5 + len)
            .ok_or("a cut entry body")?;
        out.push((head[0], body.to_vec()));
        pos += 5 + len;
    }
    Ok(out)
}

/// The topic's `compression.type` of a row: `none` (the producer's, uncompressed) or
/// `lz4` (every batch recompressed by the leader).
pub fn topic_compression(codec: &str) -> Result<TopicCompression, String> {
    match codec {
        "none" => Ok(TopicCompression::Producer),
        "lz4" => Ok(TopicCompression::Lz4),
        c => Err(format!("no codec {c}")),
    }
}

/// Every entry of `input` appended with `Log::append_as_leader` (leader epoch 0) to a new
/// log in `dir` (emptied first) whose topic compression is `codec`, timed; then the log is
/// closed (untimed). Returns the nanoseconds, the log end offset and the hash of every
/// append's first and last offsets.
///
/// # Errors
/// An open, append or close failure.
pub fn append_all(
    entries: &[(u8, Vec<u8>)],
    dir: &Path,
    codec: &str,
) -> Result<(u128, i64, u64), String> {
    clear_dir(dir)?;
    let config = LogConfig {
        compression_type: topic_compression(codec)?,
        ..LogConfig::default()
    };
    let log = Log::open(dir, config).map_err(e("open"))?;
    let mut h = FOLD_START;
    let start = Instant::now();
    for (origin, batch) in entries {
        let origin = if *origin == 1 {
            AppendOrigin::Coordinator
        } else {
            AppendOrigin::Client
        };
        let info = log
            .append_as_leader(batch, 0, origin)
            .map_err(e("append_as_leader"))?;
        h = fold(h, info.first_offset, info.last_offset);
    }
    let ns = start.elapsed().as_nanos();
    let leo = log.log_end_offset();
    log.close().map_err(e("close"))?;
    Ok((ns, leo, h))
}
