//! Checks the [`Log`](crate::Log) makes before it trusts an argument or a file.
//!
//! * File types ([`check_regular_file`]): a file named like a segment file must be a
//!   regular file or a symlink to one; anything else is [`SegmentError::NotARegularFile`],
//!   checked before the file is opened.
//! * Arguments that would leave the log stuck or reuse offsets ([`check_roll_base`],
//!   [`check_start_at`]) are typed errors.
//! * The loader's clean-open validation (see [`segment_check`]): before trusting the
//!   clean-shutdown marker (or the recovery point) for a segment, a few positioned reads
//!   check that its files agree with each other; a segment that fails is recovered from
//!   its `.log`, so a file that lies costs a recovery, never data.

use std::path::Path;

use crate::error::{Result, SegmentError};
use crate::names;

/// `Log::roll(Some(base))`: the base must be at or above the log end offset and below
/// `i64::MAX`.
///
/// # Errors
/// [`SegmentError::InvalidArgument`].
pub(crate) fn check_roll_base(base: i64, log_end_offset: i64) -> Result<()> {
    if base < log_end_offset {
        return Err(SegmentError::arg(format!(
            "cannot roll a segment at base offset {base}, below the log end offset {log_end_offset}"
        )));
    }
    if base == i64::MAX {
        return Err(SegmentError::arg(format!(
            "cannot roll a segment at base offset {base}: no batch could be appended to it"
        )));
    }
    Ok(())
}

/// `Log::truncate_fully_and_start_at(offset)`: the new start must be in
/// `[log_start_offset, i64::MAX)`.
///
/// # Errors
/// [`SegmentError::InvalidArgument`].
pub(crate) fn check_start_at(offset: i64, log_start_offset: i64) -> Result<()> {
    if offset < 0 {
        return Err(SegmentError::arg(format!(
            "cannot start the log at negative offset {offset}"
        )));
    }
    if offset < log_start_offset {
        return Err(SegmentError::arg(format!(
            "cannot start the log at offset {offset}, below the log start offset {log_start_offset}: offsets would be reused"
        )));
    }
    if offset == i64::MAX {
        return Err(SegmentError::arg(format!(
            "cannot start the log at offset {offset}: no batch could be appended"
        )));
    }
    Ok(())
}

/// Whether `name` is named like a file of a segment: `<offset>` then a kind suffix
/// (`.log`, `.index`, `.timeindex`, `.txnindex`) or `.snapshot`, then optionally a state
/// suffix (`.deleted`, `.cleaned`, `.swap`).
pub(crate) fn is_segment_file_name(name: &str) -> bool {
    if names::offset_from_file_name(name).is_err() {
        return false;
    }
    let Some((_, rest)) = name.split_once('.') else {
        return false;
    };
    let rest = &name[name.len() - rest.len() - 1..];
    let rest = [
        names::DELETED_FILE_SUFFIX,
        names::CLEANED_FILE_SUFFIX,
        names::SWAP_FILE_SUFFIX,
    ]
    .into_iter()
    .find_map(|s| rest.strip_suffix(s))
    .unwrap_or(rest);
    names::FileKind::ALL.iter().any(|k| k.suffix() == rest)
        || rest == names::PRODUCER_SNAPSHOT_FILE_SUFFIX
}

/// Checks, without opening it, that `path` is a regular file or a symlink to one.
/// `Ok(false)` if nothing is there.
///
/// # Errors
/// [`SegmentError::NotARegularFile`] naming the path and what it is;
/// [`SegmentError::Io`] if it cannot be stat'ed.
pub(crate) fn check_regular_file(path: &Path) -> Result<bool> {
    use std::os::unix::fs::FileTypeExt;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match std::fs::symlink_metadata(path) {
                Ok(_) => Err(SegmentError::NotARegularFile {
                    path: path.to_path_buf(),
                    file_type: "dangling symlink",
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
                Err(e) => Err(SegmentError::io("stat", path, e)),
            };
        }
        Err(e) => return Err(SegmentError::io("stat", path, e)),
    };
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(true);
    }
    let file_type = if ft.is_dir() {
        "directory"
    } else if ft.is_fifo() {
        "FIFO"
    } else if ft.is_socket() {
        "socket"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_char_device() {
        "character device"
    } else {
        "special file"
    };
    Err(SegmentError::NotARegularFile {
        path: path.to_path_buf(),
        file_type,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_file_names() {
        for n in [
            "00000000000000000000.log",
            "00000000000000000009.index",
            "00000000000000000009.timeindex.swap",
            "00000000000000000009.txnindex.deleted",
            "00000000000000000009.log.cleaned",
            "00000000000000000009.snapshot",
        ] {
            assert!(is_segment_file_name(n), "{n}");
        }
        for n in [
            "recovery-point",
            "leader-epoch-checkpoint",
            "partition.metadata",
            "00000000000000000009.log.bak",
            "00000000000000000009",
            ".kafka_cleanshutdown",
        ] {
            assert!(!is_segment_file_name(n), "{n}");
        }
    }
}
