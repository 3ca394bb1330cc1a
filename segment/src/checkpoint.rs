//! The small offset checkpoints of a [`Log`](crate::Log) directory: `recovery-point` and
//! `log-start-offset`.
//!
//! Each is two text lines: the format version `0` and one offset (a decimal `i64`), as in
//! Kafka's `CheckpointFile` with a single unnamed entry. They are written atomically
//! ([`write_checkpoint`]: temp file, fsync, rename, fsync dir).
//!
//! Reading ([`read_checkpoint`]) follows Kafka's `LogManager.loadLogs`: a checkpoint that
//! cannot be parsed is **warned about and treated as missing** (Kafka resets the recovery
//! point to 0 and the log start offset to the first segment's base offset), so the loader
//! recovers everything instead of failing to open. Unreadable means: not a regular file
//! (a directory, FIFO, socket or device is never opened, so it cannot hang the open),
//! larger than [`MAX_CHECKPOINT_BYTES`], not UTF-8, empty, a version other than `0`, a
//! missing, overflowing or negative offset, or any further non-empty line. Only an I/O
//! error while reading a regular file is an error.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::io::Read;
use std::path::Path;

use crate::diag as tracing;
use crate::error::{Result, SegmentError};
use crate::fs::FileSystem;

/// Largest checkpoint file read, in bytes; a longer file is malformed (the valid form is
/// at most 24 bytes).
pub const MAX_CHECKPOINT_BYTES: u64 = 4096;

/// Why a checkpoint file was ignored (see [`read_checkpoint`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// The path exists but is not a regular file (nor a symlink to one).
    NotARegularFile,
    /// The file is larger than [`MAX_CHECKPOINT_BYTES`].
    TooLarge(u64),
    /// The bytes are not UTF-8.
    NotUtf8,
    /// The first line is not the version `0` (the line found, possibly empty).
    Version(String),
    /// The second line is not an offset in `0..=i64::MAX` (the line found).
    Offset(String),
    /// A non-empty line after the offset.
    TrailingLine(String),
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Malformed::NotARegularFile => write!(f, "not a regular file"),
            Malformed::TooLarge(n) => {
                write!(f, "{n} bytes, more than {MAX_CHECKPOINT_BYTES}")
            }
            Malformed::NotUtf8 => write!(f, "not UTF-8"),
            Malformed::Version(l) => write!(f, "expected version 0, found {l:?}"),
            Malformed::Offset(l) => write!(f, "expected an offset >= 0, found {l:?}"),
            Malformed::TrailingLine(l) => write!(f, "unexpected line {l:?} after the offset"),
        }
    }
}

/// Parses the text of a checkpoint: `Ok(offset)` or why it is malformed.
///
/// # Errors
/// [`Malformed`] (never panics, for any input).
pub fn parse_checkpoint(bytes: &[u8]) -> std::result::Result<i64, Malformed> {
    let text = std::str::from_utf8(bytes).map_err(|_| Malformed::NotUtf8)?;
    let mut lines = text.lines();
    let version = lines.next().unwrap_or("");
    if version.trim() != "0" {
        return Err(Malformed::Version(version.to_string()));
    }
    let line = lines.next().unwrap_or("");
    let offset = line
        .trim()
        .parse::<i64>()
        .ok()
        .filter(|&o| o >= 0)
        .ok_or_else(|| Malformed::Offset(line.to_string()))?;
    if let Some(extra) = lines.find(|l| !l.trim().is_empty()) {
        return Err(Malformed::TrailingLine(extra.to_string()));
    }
    Ok(offset)
}

/// What [`read_checkpoint_file`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckpointRead {
    /// No file at the path (or a dangling symlink).
    Missing,
    /// A well-formed checkpoint holding this offset.
    Valid(i64),
    /// A file that cannot be used (already warned about).
    Malformed(Malformed),
}

impl CheckpointRead {
    /// The offset, if the checkpoint was valid.
    pub fn offset(&self) -> Option<i64> {
        match self {
            CheckpointRead::Valid(v) => Some(*v),
            _ => None,
        }
    }
}

/// Reads the checkpoint at `path`, distinguishing a missing file from an unreadable one.
/// An unreadable one is reported with a `tracing::warn!` naming the file and the reason.
/// The file type is checked (following symlinks) before the file is opened, so a FIFO is
/// never opened.
///
/// # Errors
/// [`SegmentError::Io`] only for an operating-system failure to stat or read an existing
/// regular file (never for its contents).
pub fn read_checkpoint_file(path: &Path) -> Result<CheckpointRead> {
    read_checkpoint_file_with(&crate::fs::RealFs, path)
}

/// [`read_checkpoint_file`], opening the file through the seam `fs`
/// ([`FileSystem::open_file`]).
///
/// # Errors
/// As [`read_checkpoint_file`].
pub fn read_checkpoint_file_with(fs: &dyn FileSystem, path: &Path) -> Result<CheckpointRead> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(CheckpointRead::Missing),
        Err(e) => return Err(SegmentError::io("stat", path, e)),
    };
    let parsed = if !meta.is_file() {
        Err(Malformed::NotARegularFile)
    } else if meta.len() > MAX_CHECKPOINT_BYTES {
        Err(Malformed::TooLarge(meta.len()))
    } else {
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        fs.open_file(path, crate::fs::OpenMode::Read)
            .and_then(|f| f.take(MAX_CHECKPOINT_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| SegmentError::io("read", path, e))?;
        if bytes.len() as u64 > MAX_CHECKPOINT_BYTES {
            Err(Malformed::TooLarge(bytes.len() as u64))
        } else {
            parse_checkpoint(&bytes)
        }
    };
    match parsed {
        Ok(v) => Ok(CheckpointRead::Valid(v)),
        Err(why) => {
            tracing::warn!(file = %path.display(), reason = %why, "ignoring an unreadable checkpoint file; treating it as missing");
            Ok(CheckpointRead::Malformed(why))
        }
    }
}

/// Reads the checkpoint at `path`: `Ok(None)` if it does not exist **or is unreadable**
/// (then a `tracing::warn!` names the file and the reason, and the caller proceeds as if
/// it were missing, as Kafka does), `Ok(Some(offset))` otherwise.
///
/// # Errors
/// As [`read_checkpoint_file`].
pub fn read_checkpoint(path: &Path) -> Result<Option<i64>> {
    Ok(read_checkpoint_file(path)?.offset())
}

/// The loader's reading of both checkpoints of a log directory (see [`load_checkpoints`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LoadedCheckpoints {
    /// Whether the clean-shutdown marker is trusted.
    pub clean: bool,
    /// The recovery point to recover from (0 when missing or withdrawn).
    pub recovery_point: i64,
    /// The log start offset (0 when missing or unreadable).
    pub log_start_offset: i64,
    /// What the recovery-point file holds, if it parses: the loader rewrites the file
    /// only when the recovery point it ends with differs, so that a clean open writes
    /// nothing (and opens on a full disk).
    pub recovery_point_on_disk: Option<i64>,
}

/// The loader's reading of both checkpoints of `dir`. A missing or unreadable checkpoint
/// reads as 0 (Kafka's reset). An unreadable one (either) also withdraws the trust in the
/// clean-shutdown marker and in the other checkpoint's recovery point (`clean` becomes
/// `false`, the recovery point 0), so that every segment is recovered: a directory
/// holding a file that lies is not known to be consistent, and a recovery costs time,
/// never data. Each file is read once, through the seam `fs`.
///
/// # Errors
/// As [`read_checkpoint_file`].
pub(crate) fn load_checkpoints(
    fs: &dyn FileSystem,
    dir: &Path,
    recovery_point_file: &str,
    log_start_offset_file: &str,
    clean: bool,
) -> Result<LoadedCheckpoints> {
    let rp = read_checkpoint_file_with(fs, &dir.join(recovery_point_file))?;
    let ls = read_checkpoint_file_with(fs, &dir.join(log_start_offset_file))?;
    let malformed = |c: &CheckpointRead| matches!(c, CheckpointRead::Malformed(_));
    let recovery_point_on_disk = rp.offset();
    if malformed(&rp) || malformed(&ls) {
        tracing::warn!(dir = %dir.display(), "an unreadable checkpoint: recovering every segment");
        return Ok(LoadedCheckpoints {
            clean: false,
            recovery_point: 0,
            log_start_offset: ls.offset().unwrap_or(0),
            recovery_point_on_disk,
        });
    }
    Ok(LoadedCheckpoints {
        clean,
        recovery_point: recovery_point_on_disk.unwrap_or(0),
        log_start_offset: ls.offset().unwrap_or(0),
        recovery_point_on_disk,
    })
}

/// Writes `value` to the checkpoint at `path` atomically through the seam `fs`.
///
/// # Errors
/// [`SegmentError::Io`] (the old content is kept).
pub fn write_checkpoint(fs: &dyn FileSystem, path: &Path, value: i64) -> Result<()> {
    crate::fs::write_atomically_with(fs, path, format!("0\n{value}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_valid_forms() {
        assert_eq!(parse_checkpoint(b"0\n42\n"), Ok(42));
        assert_eq!(parse_checkpoint(b"0\n42"), Ok(42));
        assert_eq!(parse_checkpoint(b"0\r\n42\r\n\n"), Ok(42));
    }

    #[test]
    fn rejects_garbage() {
        assert_eq!(
            parse_checkpoint(b""),
            Err(Malformed::Version(String::new()))
        );
        assert_eq!(parse_checkpoint(b"\xff\xfe"), Err(Malformed::NotUtf8));
        assert!(matches!(
            parse_checkpoint(b"1\n4\n"),
            Err(Malformed::Version(_))
        ));
        assert!(matches!(
            parse_checkpoint(b"0\n99999999999999999999\n"),
            Err(Malformed::Offset(_))
        ));
        assert!(matches!(
            parse_checkpoint(b"0\n-5\n"),
            Err(Malformed::Offset(_))
        ));
        assert!(matches!(
            parse_checkpoint(b"0\n"),
            Err(Malformed::Offset(_))
        ));
        assert!(matches!(
            parse_checkpoint(b"0\n5\nxyz\n"),
            Err(Malformed::TrailingLine(_))
        ));
    }
}
