//! The offset checkpoints at the root of a Kafka log directory
//! (`recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`,
//! `replication-offset-checkpoint`): Kafka's `CheckpointFile` with one
//! `topic partition offset` line per partition, under a version line `0` and a count.
//!
//! The single-entry files of this library's own layout (`recovery-point`,
//! `log-start-offset` inside a partition directory) are read with
//! [`crate::checkpoint::read_checkpoint_file`]; this module only adds Kafka's multi-entry
//! form, which the library never writes.

use std::collections::BTreeMap;
use std::path::Path;

/// Kafka's recovery-point checkpoint at a log-dir root.
pub const RECOVERY_POINT_OFFSET_CHECKPOINT: &str = "recovery-point-offset-checkpoint";
/// Kafka's log-start-offset checkpoint at a log-dir root.
pub const LOG_START_OFFSET_CHECKPOINT: &str = "log-start-offset-checkpoint";
/// Kafka's high-watermark checkpoint at a log-dir root.
pub const REPLICATION_OFFSET_CHECKPOINT: &str = "replication-offset-checkpoint";
/// The log cleaner's first dirty offsets at a log-dir root (the same format).
pub const CLEANER_OFFSET_CHECKPOINT: &str = "cleaner-offset-checkpoint";

/// Largest root checkpoint read, in bytes (a line per partition: 64 MiB is far more than
/// any broker holds).
pub const MAX_ROOT_CHECKPOINT_BYTES: u64 = 64 << 20;

/// One root checkpoint as read: missing, its entries by `(topic, partition)`, or why it
/// cannot be used (Kafka then logs a warning and treats every entry as missing, so the
/// broker recovers every partition of the directory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootCheckpoint {
    /// No such file.
    Missing,
    /// The entries, by topic and partition.
    Valid(BTreeMap<(String, i32), i64>),
    /// The file exists but is malformed (the reason).
    Malformed(String),
}

impl RootCheckpoint {
    /// Reads the checkpoint `name` in `root` (never opens anything but a regular file).
    pub fn read(root: &Path, name: &str) -> RootCheckpoint {
        let path = root.join(name);
        match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return RootCheckpoint::Missing,
            Err(e) => return RootCheckpoint::Malformed(format!("cannot stat: {e}")),
            Ok(m) if !m.is_file() => return RootCheckpoint::Malformed("not a regular file".into()),
            Ok(m) if m.len() > MAX_ROOT_CHECKPOINT_BYTES => {
                return RootCheckpoint::Malformed(format!("{} bytes, too large", m.len()))
            }
            Ok(_) => {}
        }
        match std::fs::read(&path) {
            Ok(bytes) => match parse_root_checkpoint(&bytes) {
                Ok(m) => RootCheckpoint::Valid(m),
                Err(why) => RootCheckpoint::Malformed(why),
            },
            Err(e) => RootCheckpoint::Malformed(format!("cannot read: {e}")),
        }
    }

    /// The offset of `(topic, partition)`, if the file is valid and holds it.
    pub fn get(&self, topic: &str, partition: i32) -> Option<i64> {
        match self {
            RootCheckpoint::Valid(m) => m.get(&(topic.to_string(), partition)).copied(),
            _ => None,
        }
    }
}

/// Parses Kafka's multi-entry checkpoint text: `0`, a count, then `topic partition offset`
/// lines (the topic may not contain spaces; Kafka's topic names cannot).
///
/// # Errors
/// A description of the first malformed part (version, count, line, or a count that does
/// not match the lines).
pub fn parse_root_checkpoint(bytes: &[u8]) -> Result<BTreeMap<(String, i32), i64>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
    let mut lines = text.lines();
    let version = lines.next().unwrap_or("").trim();
    if version != "0" {
        return Err(format!("expected version 0, found {version:?}"));
    }
    let count_line = lines.next().unwrap_or("");
    let count: usize = count_line
        .trim()
        .parse()
        .map_err(|_| format!("expected an entry count, found {count_line:?}"))?;
    let mut out = BTreeMap::new();
    for _ in 0..count {
        let line = lines.next().ok_or("fewer entries than the count")?;
        let mut parts = line.split_whitespace();
        let (Some(t), Some(p), Some(o), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("malformed line {line:?}"));
        };
        let partition: i32 = p.parse().map_err(|_| format!("malformed line {line:?}"))?;
        let offset: i64 = o.parse().map_err(|_| format!("malformed line {line:?}"))?;
        out.insert((t.to_string(), partition), offset);
    }
    if lines.any(|l| !l.trim().is_empty()) {
        return Err("more entries than the count".into());
    }
    Ok(out)
}

/// Splits a partition directory name `<topic>-<partition>` at its last `-` (Kafka's
/// `UnifiedLog.parseTopicPartitionName`, without the `-delete`/`-future`/`-stray` forms,
/// whose names carry a suffix after the partition and are reported as not matching).
pub fn topic_partition(dir_name: &str) -> Option<(String, i32)> {
    let dash = dir_name.rfind('-')?;
    let (topic, rest) = dir_name.split_at(dash);
    let partition: i32 = rest.get(1..)?.parse().ok()?;
    if topic.is_empty() || partition < 0 {
        return None;
    }
    Some((topic.to_string(), partition))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_kafka_root_checkpoints() {
        let m =
            parse_root_checkpoint(b"0\n2\ntxn 0 3480\n__transaction_state 0 124\n").expect("valid");
        assert_eq!(m.get(&("txn".into(), 0)), Some(&3480));
        assert_eq!(m.get(&("__transaction_state".into(), 0)), Some(&124));
        assert!(parse_root_checkpoint(b"0\n2\ntxn 0 3480\n").is_err());
        assert!(parse_root_checkpoint(b"1\n0\n").is_err());
        assert!(parse_root_checkpoint(b"0\n1\ntxn x 3\n").is_err());
        assert_eq!(parse_root_checkpoint(b"0\n0\n").map(|m| m.len()), Ok(0));
    }

    #[test]
    fn splits_partition_directory_names() {
        assert_eq!(topic_partition("txn-0"), Some(("txn".into(), 0)));
        assert_eq!(
            topic_partition("my-topic-12"),
            Some(("my-topic".into(), 12))
        );
        assert_eq!(topic_partition("txn"), None);
        assert_eq!(topic_partition("-3"), None);
    }
}
