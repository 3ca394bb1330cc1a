//! Checks the [`Log`](crate::Log) makes before it trusts an argument or a file.
//!
//! * Arguments that would leave the log stuck or reuse offsets ([`check_roll_base`],
//!   [`check_start_at`]) are typed errors.
//! * The loader's clean-open validation (see [`segment_check`]): before trusting the
//!   clean-shutdown marker (or the recovery point) for a segment, a few positioned reads
//!   check that its files agree with each other; a segment that fails is recovered from
//!   its `.log`, so a file that lies costs a recovery, never data.

use crate::error::{Result, SegmentError};

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
