//! The opens rows of `cargo xtask vs-kafka --only opens` (issue 41, goal 4), our side: a
//! whole partition directory of many small segments opened by `Log::open`, against Kafka
//! 4.4's `UnifiedLog.create` (its `LogLoader`; `oracle.OpensBench`).
//!
//! The input ([`generate`]) is written once by our `Log` and closed cleanly: `segments`
//! segments of [`BATCHES_PER_SEGMENT`] batches (rolled by `Log::roll`), each of
//! [`RECORDS_PER_BATCH`] records of a 8-byte key and a 120-byte value. A run opens a copy of
//! it ([`OpenState::open`]); the log stays open (its descriptors and mappings are counted) until
//! [`OpenState::close`].

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use segment::record::BatchBuilder;
use segment::{Log, LogConfig};

use super::{clear_dir, e, Rng, T0};

/// Batches of each generated segment.
pub const BATCHES_PER_SEGMENT: usize = 4;

/// Records of each generated batch.
pub const RECORDS_PER_BATCH: i32 = 16;

/// Writes a partition directory of `segments` segments into `dir` (emptied first; see the
/// module docs) and closes the log cleanly. Returns the log end offset and the bytes of
/// the `.log` files.
///
/// # Errors
/// An open, append, roll or close failure.
pub fn generate(seed: u64, dir: &Path, segments: usize) -> Result<(i64, u64), String> {
    clear_dir(dir)?;
    let mut rng = Rng::new(seed ^ 0x09e2);
    let log = Log::open(dir, LogConfig::default()).map_err(e("open"))?;
    let mut offset = 0i64;
    for s in 0..segments {
        if s > 0 {
            log.roll(None).map_err(e("roll"))?;
        }
        for _ in 0..BATCHES_PER_SEGMENT {
            let mut b = BatchBuilder::new(offset);
            for _ in 0..RECORDS_PER_BATCH {
                let key = format!("k{:07}", rng.range(0, 9_999_999));
                let value = format!("{:016x}", rng.next_u64()).repeat(120 / 16 + 1);
                b = b.record(
                    T0 + offset,
                    Some(key.as_bytes()),
                    Some(&value.as_bytes()[..120]),
                );
                offset += 1;
            }
            log.append(&b.build().map_err(e("build"))?)
                .map_err(e("append"))?;
        }
    }
    let bytes = log.size();
    let leo = log.log_end_offset();
    log.close().map_err(e("close"))?;
    Ok((leo, bytes))
}

/// What one open answered and held.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Opened {
    pub nanos: u128,
    pub log_start: i64,
    pub log_end: i64,
    pub segments: usize,
    /// Entries of `/proc/self/fd` before and after the open.
    pub fds: (usize, usize),
    /// Lines of `/proc/self/maps` before and after the open.
    pub maps: (usize, usize),
}

/// Entries of `/proc/self/fd` (0 where there is no `/proc`).
pub fn fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// Lines of `/proc/self/maps`: the mappings of this process (0 where there is no `/proc`).
pub fn map_count() -> usize {
    std::fs::read_to_string("/proc/self/maps").map_or(0, |s| s.lines().count())
}

/// The logs held open between `log-open` and `log-close`.
#[derive(Default)]
pub struct OpenState {
    logs: HashMap<String, Log>,
}

impl OpenState {
    /// Opens the partition directory `dir` with `Log::open` (Kafka's default config),
    /// timed, and holds it as `id`. `clean` false removes the clean-shutdown marker first
    /// (untimed): the open then recovers from the checkpointed recovery point as after a
    /// crash. `sabotage` deletes the first segment's `.log` before the open, so the log
    /// starts one segment later.
    ///
    /// # Errors
    /// `id` already held; an open failure.
    pub fn open(
        &mut self,
        id: &str,
        dir: &Path,
        clean: bool,
        sabotage: bool,
    ) -> Result<Opened, String> {
        if self.logs.contains_key(id) {
            return Err(format!("log {id} is open already"));
        }
        if !clean {
            let marker = dir.join(segment::log::CLEAN_SHUTDOWN_FILE);
            if marker.exists() {
                std::fs::remove_file(&marker).map_err(e("remove marker"))?;
            }
        }
        if sabotage {
            std::fs::remove_file(dir.join(format!("{:020}.log", 0))).map_err(e("sabotage"))?;
        }
        let (fds0, maps0) = (fd_count(), map_count());
        let start = Instant::now();
        let log = Log::open(dir, LogConfig::default()).map_err(e("open"))?;
        let nanos = start.elapsed().as_nanos();
        let out = Opened {
            nanos,
            log_start: log.log_start_offset(),
            log_end: log.log_end_offset(),
            segments: log.segments().number_of_segments(),
            fds: (fds0, fd_count()),
            maps: (maps0, map_count()),
        };
        self.logs.insert(id.to_string(), log);
        Ok(out)
    }

    /// Closes the log held as `id` (untimed).
    ///
    /// # Errors
    /// No such log; a close failure.
    pub fn close(&mut self, id: &str) -> Result<(), String> {
        let log = self
            .logs
            .remove(id)
            .ok_or_else(|| format!("no open log {id}"))?;
        log.close().map_err(e("close"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_log_opens_with_its_segments_and_the_sabotage_drops_one() {
        let d = tempfile::tempdir().unwrap();
        let (leo, bytes) = generate(1, d.path(), 5).unwrap();
        assert_eq!(
            leo,
            5 * BATCHES_PER_SEGMENT as i64 * i64::from(RECORDS_PER_BATCH)
        );
        assert!(bytes > 0);
        let mut st = OpenState::default();
        let o = st.open("a", d.path(), true, false).unwrap();
        assert_eq!((o.log_start, o.log_end, o.segments), (0, leo, 5));
        assert!(st.open("a", d.path(), true, false).is_err());
        st.close("a").unwrap();
        let o = st.open("a", d.path(), false, true).unwrap();
        assert_eq!(o.segments, 4);
        assert!(o.log_start > 0);
        st.close("a").unwrap();
    }
}
