//! A storage engine that embeds `segment` with its own batch format and
//! `default-features = false`: no Kafka codecs, no operator CLI. `cargo xtask ci` builds
//! it, runs it, and checks that its dependency tree stays small (at most 30 crates) and
//! free of C code (no `cc`, no `*-sys` crate).
//!
//! The format is the workspace's one example format, `Tiny`
//! (`segment/examples/tiny/format.rs`, shared with the `segment::format` docs and the
//! `tiny_queue` example): length-prefixed batches with a CRC-32C and per-record
//! timestamps.

use std::sync::Arc;

use segment::format::scan;
use segment::{Clock, LogConfig, LogOptions, MockTime};

#[path = "../../../segment/examples/tiny/format.rs"]
mod tiny;
use tiny::Tiny;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A scratch directory by hand: this crate depends on nothing but `segment` (and the
    // format's `crc32c`, which `segment` depends on already).
    let dir = std::env::temp_dir().join(format!("lean-embedder-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = LogConfig {
        segment_bytes: 1024,
        ..LogConfig::default()
    };
    let clock: Clock = Arc::new(MockTime::new(1_700_000_000_000));
    let log = LogOptions::<Tiny>::new()
        .clock(clock.clone())
        .open(&dir, config.clone())?;
    for i in 0..100i64 {
        let ts = 1_700_000_000_000 + i;
        log.append(&Tiny::encode(i * 2, &[(ts, b"a"), (ts, b"bc")]))?;
    }
    assert_eq!(log.log_end_offset(), 200);
    assert!(log.segments().number_of_segments() > 1);
    let fetch = log.read(77, 1)?;
    let first = scan::<Tiny>(&fetch.records, 0)
        .next()
        .ok_or("empty read")??;
    assert_eq!((first.info.base_offset, first.info.last_offset), (76, 77));
    log.close()?;
    let log = LogOptions::<Tiny>::new().clock(clock).open(&dir, config)?;
    assert_eq!(log.log_end_offset(), 200);
    log.close()?;
    std::fs::remove_dir_all(&dir)?;
    println!("lean-embedder: 100 batches appended, read back and reopened");
    Ok(())
}
