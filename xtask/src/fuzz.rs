//! `cargo xtask fuzz`: the cargo-fuzz targets of `xtask/fuzz/`, seeded from the fixtures.
//!
//! cargo-fuzz needs nightly compiler flags (`-Zsanitizer`, sanitizer coverage); the
//! workspace builds with stable Rust, so the runs set `RUSTC_BOOTSTRAP=1`. The fuzz crate
//! is its own workspace (excluded from the root one), so `cargo test --workspace` never
//! builds it. cargo-fuzz is installed with `cargo install cargo-fuzz` when missing.
//!
//! Seeds are generated on every run into `xtask/fuzz/corpus/<target>/seed-*` (never
//! committed): from the real broker files of `../shared/kafka-data` when that directory
//! exists, and always from batches built in-process (every codec, control batches, legacy
//! messages, indexes of each kind).

use std::path::{Path, PathBuf};
use std::process::Command;

use segment::record::{
    compress, control_batch, BatchBuilder, CompressionType, ControlRecordType, LegacyMessage,
};

use super::{cargo, root, run, Res};

/// The targets, in run order.
pub const TARGETS: [&str; 5] = [
    "index_open",
    "batch_iter",
    "segment_recover",
    "log_open",
    "dump_parsers",
];

const USAGE: &str = "\
usage: cargo xtask fuzz [--smoke] [--target NAME] [--runs N | --time SECONDS] [-- LIBFUZZER_ARGS...]

  (no option)   run every target for 10,000,000 executions, two targets at a time
                (one on a single-core machine)
  --smoke       run every target for ~30 s, two at a time (what CI runs)
  --target T    only target T (index_open, batch_iter, segment_recover, log_open, dump_parsers)
  --runs N      executions per target
  --time S      seconds per target (-max_total_time; with --runs, whichever ends first)
  --build       only build the targets
  --seed        only write the seed corpora
Every run uses -rss_limit_mb=2048 -timeout=10 and fails on any crash, timeout or OOM.
";

fn fuzz_dir() -> PathBuf {
    root().join("xtask/fuzz")
}

/// `cargo fuzz` with the nightly-flag switch and the fuzz crate's directory.
fn cargo_fuzz(sub: &str) -> Command {
    let mut c = cargo();
    c.arg("fuzz").arg(sub);
    c.env("RUSTC_BOOTSTRAP", "1");
    c.arg("--fuzz-dir").arg(fuzz_dir());
    // No AddressSanitizer: the workspace's only `unsafe` is the mapping code, and ASan's
    // quarantine alone grows the RSS of a long run past -rss_limit_mb (a false OOM).
    c.args(["--sanitizer", "none"]);
    c
}

/// Installs cargo-fuzz with `cargo install cargo-fuzz` unless `cargo fuzz` already runs.
fn ensure_cargo_fuzz() -> Res {
    let ok = cargo()
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Ok(());
    }
    eprintln!("cargo-fuzz is missing: installing it from crates.io");
    let mut c = cargo();
    c.args(["install", "--locked", "cargo-fuzz"]);
    run(c)
}

pub fn fuzz(rest: &[String]) -> Res {
    let mut smoke = false;
    let mut only: Option<String> = None;
    let mut runs: Option<u64> = None;
    let mut time: Option<u64> = None;
    let (mut build_only, mut seed_only) = (false, false);
    let mut extra: Vec<String> = Vec::new();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--smoke" => smoke = true,
            "--build" => build_only = true,
            "--seed" => seed_only = true,
            "--target" => only = Some(it.next().ok_or("--target needs a name")?.clone()),
            "--runs" => {
                runs = Some(
                    it.next()
                        .and_then(|n| n.parse().ok())
                        .ok_or("--runs needs a number")?,
                )
            }
            "--time" => {
                time = Some(
                    it.next()
                        .and_then(|n| n.parse().ok())
                        .ok_or("--time needs a number of seconds")?,
                )
            }
            "--" => extra.extend(it.by_ref().cloned()),
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("fuzz: unknown option `{other}`\n{USAGE}")),
        }
    }
    let targets: Vec<&str> = match &only {
        Some(t) if TARGETS.contains(&t.as_str()) => vec![t.as_str()],
        Some(t) => return Err(format!("fuzz: no target `{t}` (targets: {TARGETS:?})")),
        None => TARGETS.to_vec(),
    };
    for t in &targets {
        write_seeds(t)?;
    }
    if seed_only {
        return Ok(());
    }
    ensure_cargo_fuzz()?;
    let mut c = cargo_fuzz("build");
    c.arg("-O");
    run(c)?;
    if build_only {
        return Ok(());
    }
    // Two targets at once on a machine with two cores or more: each libFuzzer process keeps
    // one core busy, so CI's smoke takes three rounds of 30 s instead of five.
    let at_once = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    for round in targets.chunks(at_once) {
        let mut children = Vec::new();
        for t in round {
            let corpus = fuzz_dir().join("corpus").join(t);
            let mut c = cargo_fuzz("run");
            c.arg("-O").arg(t).arg(&corpus).arg("--");
            c.args(["-rss_limit_mb=2048", "-timeout=10", "-print_final_stats=1"]);
            if smoke {
                c.arg("-max_total_time=30");
            } else {
                if let Some(s) = time {
                    c.arg(format!("-max_total_time={s}"));
                }
                if runs.is_some() || time.is_none() {
                    c.arg(format!("-runs={}", runs.unwrap_or(10_000_000)));
                }
            }
            c.args(&extra);
            eprintln!("\n==> {c:?}");
            match c.spawn() {
                Ok(child) => children.push((t, child)),
                Err(e) => return Err(format!("cannot start {c:?}: {e}")),
            }
        }
        // Every child of the round is waited for, also after one failed.
        let mut failed = Vec::new();
        for (t, mut child) in children {
            match child.wait() {
                Ok(s) if s.success() => {}
                Ok(s) => failed.push(format!(
                    "fuzz target {t}: failed with {s} (crash input under xtask/fuzz/artifacts/{t}/)"
                )),
                Err(e) => failed.push(format!("fuzz target {t}: {e}")),
            }
        }
        if !failed.is_empty() {
            return Err(failed.join("; "));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- seeds

fn shared_files(suffixes: &[&str], max: usize) -> Vec<(PathBuf, Vec<u8>)> {
    let data = root().join("../shared/kafka-data");
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(&data) else {
        return out;
    };
    let mut dirs: Vec<PathBuf> = dirs.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    dirs.sort();
    for d in dirs.iter().filter(|d| d.is_dir()) {
        let Ok(files) = std::fs::read_dir(d) else {
            continue;
        };
        let mut files: Vec<PathBuf> = files.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        files.sort();
        for f in files {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !suffixes.iter().any(|s| name.ends_with(s)) || !f.is_file() {
                continue;
            }
            if let Ok(mut bytes) = std::fs::read(&f) {
                bytes.truncate(max);
                out.push((f, bytes));
            }
        }
    }
    out
}

/// A v2 batch whose record stream is compressed with `codec` (the builder writes
/// uncompressed batches): records recompressed, attributes, length and CRC-32C fixed.
pub fn compressed_batch(plain: &[u8], codec: CompressionType) -> Vec<u8> {
    let records = compress(codec, &plain[61..]).expect("in-memory compression");
    let mut out = plain[..61].to_vec();
    out.extend_from_slice(&records);
    let len = (out.len() - 12) as i32;
    out[8..12].copy_from_slice(&len.to_be_bytes());
    let attrs = i16::from_be_bytes([out[21], out[22]]) & !0x07 | i16::from(codec.id());
    out[21..23].copy_from_slice(&attrs.to_be_bytes());
    let crc = crc32c::crc32c(&out[21..]);
    out[17..21].copy_from_slice(&crc.to_be_bytes());
    out
}

/// A small in-process `.log` image: plain and compressed batches, a transaction and
/// its markers, a legacy message.
pub fn generated_log() -> Vec<u8> {
    let codecs = CompressionType::ALL;
    let mut log = Vec::new();
    let mut offset = 0i64;
    for (i, codec) in codecs.iter().enumerate() {
        let mut b = BatchBuilder::new(offset).partition_leader_epoch(i as i32);
        for r in 0..4 {
            b = b.record(
                1_700_000_000_000 + offset + r,
                Some(b"key"),
                Some(b"value value"),
            );
        }
        log.extend(compressed_batch(&b.build().expect("batch"), *codec));
        offset += 4;
    }
    let txn = BatchBuilder::new(offset)
        .producer(7, 0, 0)
        .transactional(true)
        .record(1_700_000_000_100, None, Some(b"in txn"))
        .build()
        .expect("txn batch");
    log.extend(txn);
    log.extend(
        control_batch(
            offset + 1,
            7,
            0,
            ControlRecordType::Abort,
            3,
            1_700_000_000_200,
        )
        .expect("marker"),
    );
    log
}

fn legacy_log() -> Vec<u8> {
    let mut out = Vec::new();
    for o in 0..3 {
        LegacyMessage::v1(o, 1000 + o, b"legacy")
            .write_to(&mut out)
            .expect("v1 message");
    }
    out
}

fn put(dir: &Path, n: &mut usize, bytes: &[u8]) -> Res {
    let p = dir.join(format!("seed-{n:04}"));
    *n += 1;
    std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))
}

fn write_seeds(target: &str) -> Res {
    let dir = fuzz_dir().join("corpus").join(target);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut n = 0usize;
    let logs: Vec<Vec<u8>> = shared_files(&[".log"], 64 << 10)
        .into_iter()
        .map(|(_, b)| b)
        .chain([generated_log(), legacy_log()])
        .collect();
    match target {
        "index_open" => {
            let mut gen_index = Vec::new();
            let mut gen_time = Vec::new();
            for i in 0..32u32 {
                gen_index.extend(i.to_be_bytes());
                gen_index.extend((i * 100).to_be_bytes());
                gen_time.extend((1_700_000_000_000i64 + i64::from(i)).to_be_bytes());
                gen_time.extend(i.to_be_bytes());
            }
            let mut gen_txn = Vec::new();
            for i in 0..4i64 {
                gen_txn.extend(0i16.to_be_bytes());
                gen_txn.extend(i.to_be_bytes()); // producer id
                gen_txn.extend((i * 10).to_be_bytes()); // first offset
                gen_txn.extend((i * 10 + 5).to_be_bytes()); // last offset
                gen_txn.extend((i * 10 + 6).to_be_bytes()); // last stable offset
            }
            let mut seeds: Vec<(u8, Vec<u8>)> = vec![(0, gen_index), (1, gen_time), (2, gen_txn)];
            for (p, b) in shared_files(&[".index", ".timeindex", ".txnindex"], 64 << 10) {
                let name = p.to_string_lossy();
                let kind = if name.ends_with(".index") {
                    0
                } else if name.ends_with(".timeindex") {
                    1
                } else {
                    2
                };
                seeds.push((kind, b));
            }
            for (kind, body) in seeds {
                let mut s = vec![kind];
                s.extend(50i64.to_be_bytes());
                s.extend(body);
                put(&dir, &mut n, &s)?;
            }
        }
        "batch_iter" => {
            for l in &logs {
                let mut s = vec![0u8];
                s.extend(l);
                put(&dir, &mut n, &s)?;
            }
            let sample = generated_log();
            for id in 0..5u8 {
                let codec = CompressionType::from_id(id).expect("codec id");
                let mut s = vec![0x80 | id];
                s.extend(compress(codec, &sample).map_err(|e| e.to_string())?);
                put(&dir, &mut n, &s)?;
            }
        }
        "segment_recover" => {
            for l in &logs {
                let mut s = 10i64.to_be_bytes().to_vec();
                s.extend(l);
                put(&dir, &mut n, &s)?;
            }
        }
        "log_open" => {
            // Structured input (the `arbitrary` grammar of the target): a few byte
            // patterns to start from; the grammar gives any bytes a meaning.
            for s in [
                &[0u8; 64][..],
                &[1u8; 256][..],
                &[0x55u8; 512][..],
                &[0xFFu8; 128][..],
            ] {
                put(&dir, &mut n, s)?;
            }
        }
        "dump_parsers" => {
            let shared = shared_files(&[".index", ".timeindex", ".txnindex", ".snapshot"], 8 << 10);
            for (i, l) in logs.iter().enumerate() {
                let mut l = l.clone();
                l.truncate(255 * 16);
                let (kind, companion) = match shared.get(i) {
                    Some((p, b)) => {
                        let name = p.to_string_lossy();
                        let kind = [".index", ".timeindex", ".txnindex", ".snapshot"]
                            .iter()
                            .position(|s| name.ends_with(s))
                            .unwrap_or(5) as u8;
                        (kind, b.clone())
                    }
                    None => (5, Vec::new()),
                };
                for flags in [0u8, 0x03, 0x04, 0x08, 0x90] {
                    let mut s = vec![flags, kind, 0x10, 0x00];
                    s.extend(b"00000000000000000000.log");
                    s.push(0);
                    s.push(255);
                    s.extend(&l);
                    s.extend(&companion);
                    put(&dir, &mut n, &s)?;
                }
            }
        }
        _ => return Err(format!("no seeds for {target}")),
    }
    eprintln!("fuzz: {n} seeds for {target} in {}", dir.display());
    Ok(())
}
