//! Kafka's segment file naming (`LogFileUtils`, docs/kafka-behaviour.md#file-names).
//!
//! Every file of a segment is named after the segment's base offset printed in decimal and
//! zero-padded to 20 digits, followed by a kind suffix (`.log`, `.index`, `.timeindex`,
//! `.txnindex`) and optionally a state suffix (`.deleted`, `.cleaned`, `.swap`):
//! `00000000000000000045.index.swap`.

use std::path::{Path, PathBuf};

use crate::error::{Result, SegmentError};

/// Suffix of a segment's record file.
pub const LOG_FILE_SUFFIX: &str = ".log";
/// Suffix of a segment's offset index.
pub const INDEX_FILE_SUFFIX: &str = ".index";
/// Suffix of a segment's time index.
pub const TIME_INDEX_FILE_SUFFIX: &str = ".timeindex";
/// Suffix of a segment's transaction index.
pub const TXN_INDEX_FILE_SUFFIX: &str = ".txnindex";
/// Suffix of a producer-state snapshot (not part of a segment object).
pub const PRODUCER_SNAPSHOT_FILE_SUFFIX: &str = ".snapshot";
/// State suffix of a file waiting for (asynchronous) deletion.
pub const DELETED_FILE_SUFFIX: &str = ".deleted";
/// State suffix of cleaner/split output not yet swapped in.
pub const CLEANED_FILE_SUFFIX: &str = ".cleaned";
/// State suffix of a file about to replace existing segments.
pub const SWAP_FILE_SUFFIX: &str = ".swap";

/// The four kinds of segment file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// `.log`: record batches.
    Log,
    /// `.index`: offset index.
    OffsetIndex,
    /// `.timeindex`: time index.
    TimeIndex,
    /// `.txnindex`: transaction index.
    TxnIndex,
}

impl FileKind {
    /// The kind suffix, with its leading dot.
    pub fn suffix(self) -> &'static str {
        match self {
            FileKind::Log => LOG_FILE_SUFFIX,
            FileKind::OffsetIndex => INDEX_FILE_SUFFIX,
            FileKind::TimeIndex => TIME_INDEX_FILE_SUFFIX,
            FileKind::TxnIndex => TXN_INDEX_FILE_SUFFIX,
        }
    }

    /// All four kinds, in the order Kafka deletes them.
    pub const ALL: [FileKind; 4] = [
        FileKind::Log,
        FileKind::OffsetIndex,
        FileKind::TimeIndex,
        FileKind::TxnIndex,
    ];
}

/// The base offset printed as Kafka does: decimal, zero-padded to 20 digits
/// (`45` → `"00000000000000000045"`). A negative value (never used by Kafka) prints as `-`
/// followed by 20 digits, like Kafka's number formatter.
pub fn filename_prefix_from_offset(offset: i64) -> String {
    if offset < 0 {
        format!("-{:020}", offset.unsigned_abs())
    } else {
        format!("{offset:020}")
    }
}

/// `<dir>/<20-digit offset><kind suffix><state suffix>`.
pub fn segment_file(dir: &Path, base_offset: i64, kind: FileKind, state_suffix: &str) -> PathBuf {
    dir.join(format!(
        "{}{}{}",
        filename_prefix_from_offset(base_offset),
        kind.suffix(),
        state_suffix
    ))
}

/// `<dir>/<offset>.log` plus `suffix`.
pub fn log_file(dir: &Path, base_offset: i64, suffix: &str) -> PathBuf {
    segment_file(dir, base_offset, FileKind::Log, suffix)
}

/// `<dir>/<offset>.index` plus `suffix`.
pub fn offset_index_file(dir: &Path, base_offset: i64, suffix: &str) -> PathBuf {
    segment_file(dir, base_offset, FileKind::OffsetIndex, suffix)
}

/// `<dir>/<offset>.timeindex` plus `suffix`.
pub fn time_index_file(dir: &Path, base_offset: i64, suffix: &str) -> PathBuf {
    segment_file(dir, base_offset, FileKind::TimeIndex, suffix)
}

/// `<dir>/<offset>.txnindex` plus `suffix`.
pub fn transaction_index_file(dir: &Path, base_offset: i64, suffix: &str) -> PathBuf {
    segment_file(dir, base_offset, FileKind::TxnIndex, suffix)
}

/// Parses the base offset of a file name (Kafka's `offsetFromFileName`): the characters
/// before the **first** `.`, as a decimal `i64`.
///
/// # Errors
/// [`SegmentError::FileName`] if there is no `.` or the prefix is not a decimal number.
pub fn offset_from_file_name(name: &str) -> Result<i64> {
    let Some((prefix, _)) = name.split_once('.') else {
        return Err(SegmentError::FileName {
            name: name.to_string(),
            reason: "no '.' in the file name".into(),
        });
    };
    if prefix.is_empty()
        || !prefix
            .strip_prefix('-')
            .unwrap_or(prefix)
            .bytes()
            .all(|b| b.is_ascii_digit())
    {
        return Err(SegmentError::FileName {
            name: name.to_string(),
            reason: format!("prefix {prefix:?} is not a decimal offset"),
        });
    }
    prefix.parse::<i64>().map_err(|e| SegmentError::FileName {
        name: name.to_string(),
        reason: format!("prefix {prefix:?} is not an i64: {e}"),
    })
}

/// [`offset_from_file_name`] on the file-name component of a path.
///
/// # Errors
/// As [`offset_from_file_name`]; also when the path has no UTF-8 file name.
pub fn offset_from_file(path: &Path) -> Result<i64> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| SegmentError::FileName {
            name: path.display().to_string(),
            reason: "no UTF-8 file name".into(),
        })?;
    offset_from_file_name(name)
}

/// [`offset_from_file`] for a file the loader is about to open as a segment: the prefix
/// must also be the canonical 20-digit form of the offset
/// ([`filename_prefix_from_offset`]). Kafka opens a segment by its canonical name, so a
/// file named `0000221.log` would be hidden behind a new, empty `00000000000000000221.log`;
/// it is an error instead, naming the file, so that nothing on disk is silently ignored.
///
/// # Errors
/// As [`offset_from_file`]; [`SegmentError::FileName`] for a non-canonical prefix.
pub fn canonical_offset_from_file(path: &Path) -> Result<i64> {
    let base = offset_from_file(path)?;
    let name = name_of(path);
    let canonical = filename_prefix_from_offset(base);
    if name.split_once('.').map(|(prefix, _)| prefix) != Some(canonical.as_str()) {
        return Err(SegmentError::FileName {
            name: path.display().to_string(),
            reason: format!(
                "not the canonical name of base offset {base} (expected {canonical}.*); rename it"
            ),
        });
    }
    Ok(base)
}

fn name_of(path: &Path) -> &str {
    path.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

/// `true` if the path ends with `.log` (so `x.log.deleted` is not a log file).
pub fn is_log_file(path: &Path) -> bool {
    name_of(path).ends_with(LOG_FILE_SUFFIX)
}

/// `true` if the file name ends with `.index`, `.timeindex` or `.txnindex`.
pub fn is_index_file(path: &Path) -> bool {
    let n = name_of(path);
    n.ends_with(INDEX_FILE_SUFFIX)
        || n.ends_with(TIME_INDEX_FILE_SUFFIX)
        || n.ends_with(TXN_INDEX_FILE_SUFFIX)
}

/// The kind of a segment file whose name ends with a kind suffix (no state suffix).
pub fn kind_of(path: &Path) -> Option<FileKind> {
    let n = name_of(path);
    FileKind::ALL.into_iter().find(|k| n.ends_with(k.suffix()))
}

/// Replaces a trailing `old` suffix of the path's file name by `new` (Kafka's
/// `CoreUtils.replaceSuffix`).
///
/// # Errors
/// [`SegmentError::FileName`] if the name does not end with `old`.
pub fn replace_suffix(path: &Path, old: &str, new: &str) -> Result<PathBuf> {
    let name = name_of(path);
    let Some(stem) = name.strip_suffix(old) else {
        return Err(SegmentError::FileName {
            name: name.to_string(),
            reason: format!("expected the name to end with {old:?}"),
        });
    };
    Ok(path.with_file_name(format!("{stem}{new}")))
}

/// The file name of a path as a `&str` ("" when it has none or it is not UTF-8).
pub fn file_name(path: &Path) -> &str {
    name_of(path)
}
