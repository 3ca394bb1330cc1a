//! The `cleaner-offset-checkpoint` file of a log directory: the first dirty offset of
//! every compacted partition in the directory (Kafka's `OffsetCheckpointFile` over
//! `CheckpointFile`; `docs/kafka-behaviour.md#cleaner-offset-checkpoint`).
//!
//! The format is text: the version `0`, the number of entries, then one
//! `topic partition offset` line per entry, each line ended by `\n`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::fs::FileSystem;

use super::CleanError;

/// The file's name in a log directory (Kafka's `LogCleanerManager.OFFSET_CHECKPOINT_FILE`).
pub const CLEANER_CHECKPOINT_FILE: &str = "cleaner-offset-checkpoint";

/// A topic partition: the key of a checkpoint entry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicPartition {
    /// The topic name (Kafka's names have no whitespace).
    pub topic: String,
    /// The partition number.
    pub partition: i32,
}

impl TopicPartition {
    /// `topic`-`partition`.
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        TopicPartition {
            topic: topic.into(),
            partition,
        }
    }
}

/// The entries of a checkpoint, by topic partition.
pub type CleanerCheckpoints = BTreeMap<TopicPartition, i64>;

/// Java's `BufferedReader.readLine` over a whole text: lines ended by `\n`, `\r` or
/// `\r\n`; a final line without an end counts, an end at the very end adds no line.
fn java_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let bytes = text.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes.get(i) {
            Some(b'\n') => {
                lines.push(text.get(start..i).unwrap_or(""));
                i += 1;
                start = i;
            }
            Some(b'\r') => {
                lines.push(text.get(start..i).unwrap_or(""));
                i += 1;
                if bytes.get(i) == Some(&b'\n') {
                    i += 1;
                }
                start = i;
            }
            _ => i += 1,
        }
    }
    if start < bytes.len() {
        lines.push(text.get(start..).unwrap_or(""));
    }
    lines
}

/// Java's `"\\s+"` split as `String.split` does it: leading whitespace gives a first
/// empty field, trailing empty fields are dropped.
fn java_ws_split(line: &str) -> Vec<&str> {
    let is_ws = |c: char| matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r');
    let mut parts: Vec<&str> = line.split(is_ws).collect();
    // Runs of whitespace: drop the empty fields between separators, but keep a leading
    // empty field (Java keeps it when the line starts with whitespace).
    let leading = parts.first().is_some_and(|p| p.is_empty()) && !line.is_empty();
    parts.retain(|p| !p.is_empty());
    if leading {
        parts.insert(0, "");
    }
    if parts.is_empty() {
        // "".split(...) is [""] in Java.
        parts.push("");
    }
    parts
}

/// Parses the text of a `cleaner-offset-checkpoint` as Kafka's `CheckpointFile.read`
/// with `OffsetCheckpointFile`'s entry format (`path` only names the file in errors):
///
/// * an empty file, or one with only the version line, has no entry;
/// * the version line must be the integer `0`, the count line an integer;
/// * every further line must split on whitespace into exactly three fields, a topic, a
///   32-bit partition and a 64-bit offset (so a blank line is malformed);
/// * the lines must number as many as the count says;
/// * a partition named twice keeps its last offset.
///
/// # Errors
/// [`CleanError::MalformedCheckpoint`] naming the offending line.
pub fn parse_cleaner_checkpoint(
    path: &Path,
    bytes: &[u8],
) -> Result<CleanerCheckpoints, CleanError> {
    let bad = |reason: String| CleanError::MalformedCheckpoint {
        path: path.to_path_buf(),
        reason,
    };
    let malformed = |line: &str| bad(format!("malformed line: {line:?}"));
    let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8".to_string()))?;
    let lines = java_lines(text);
    let mut lines = lines.into_iter();
    let Some(version) = lines.next() else {
        return Ok(CleanerCheckpoints::new());
    };
    let version: i32 = version.parse().map_err(|_| malformed(version))?;
    if version != 0 {
        return Err(bad(format!("unrecognised version {version}, expected 0")));
    }
    let Some(count) = lines.next() else {
        return Ok(CleanerCheckpoints::new());
    };
    let expected: i32 = count.parse().map_err(|_| malformed(count))?;
    let mut entries = CleanerCheckpoints::new();
    let mut found: i64 = 0;
    for line in lines {
        let parts = java_ws_split(line);
        let [topic, partition, offset] = parts.as_slice() else {
            return Err(malformed(line));
        };
        let partition: i32 = partition.parse().map_err(|_| malformed(line))?;
        let offset: i64 = offset.parse().map_err(|_| malformed(line))?;
        entries.insert(TopicPartition::new(*topic, partition), offset);
        found += 1;
    }
    if found != i64::from(expected) {
        return Err(bad(format!(
            "expected {expected} entries, but found only {found}"
        )));
    }
    Ok(entries)
}

/// The path of the checkpoint in log directory `dir`.
pub fn cleaner_checkpoint_path(dir: &Path) -> PathBuf {
    dir.join(CLEANER_CHECKPOINT_FILE)
}

/// Reads the `cleaner-offset-checkpoint` of log directory `dir` through the seam `fs`: no
/// file reads as no entry ([`parse_cleaner_checkpoint`] for the rest).
///
/// Kafka creates the file when it opens the directory and treats a read failure (a
/// malformed file included) as a failure of the log directory: it is taken offline, and
/// this round of cleaning sees no checkpoint for it. Here the error is returned, for the
/// caller to decide.
///
/// # Errors
/// [`CleanError::MalformedCheckpoint`]; [`CleanError::Segment`] for an I/O error.
pub fn read_cleaner_checkpoint(
    fs: &dyn FileSystem,
    dir: &Path,
) -> Result<CleanerCheckpoints, CleanError> {
    let path = cleaner_checkpoint_path(dir);
    match crate::fs::read_file_with(fs, &path) {
        Ok(bytes) => parse_cleaner_checkpoint(&path, &bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(CleanerCheckpoints::new()),
        Err(e) => Err(crate::SegmentError::io("read", &path, e).into()),
    }
}

/// The text of a checkpoint holding `entries` (in topic, partition order; Kafka writes
/// its map's order, which readers ignore).
pub fn format_cleaner_checkpoint(entries: &CleanerCheckpoints) -> String {
    let mut text = format!("0\n{}\n", entries.len());
    for (tp, offset) in entries {
        text.push_str(&format!("{} {} {}\n", tp.topic, tp.partition, offset));
    }
    text
}

/// Writes `entries` as the `cleaner-offset-checkpoint` of log directory `dir`, atomically
/// through the seam `fs` (as Kafka's `CheckpointFile.write`: `cleaner-offset-checkpoint.tmp`
/// written and fsynced, renamed over the file, the directory fsynced). A crash leaves the
/// old or the new file.
///
/// # Errors
/// [`CleanError::Segment`] for an I/O error (the old file is kept; the `.tmp` may be
/// left behind).
pub fn write_cleaner_checkpoint(
    fs: &dyn FileSystem,
    dir: &Path,
    entries: &CleanerCheckpoints,
) -> Result<(), CleanError> {
    let path = cleaner_checkpoint_path(dir);
    crate::fs::write_atomically_with(fs, &path, format_cleaner_checkpoint(entries).as_bytes())?;
    Ok(())
}
