//! The `LogSegment` integration tests (append, read, roll, recover, truncate, indexes,
//! file types), one binary: one module per scenario file.

#[path = "../common/mod.rs"]
mod common;

mod append_from_file;
mod flush_unloaded_index;
#[cfg(target_os = "linux")]
mod flush_writes_back_indexes;
mod lazy_index;
mod mmap_lifecycle;
mod preallocate;
mod quick_index_check;
mod recover_equal_max_timestamps;
mod recover_index_interval_boundary;
mod roll_boundaries;
mod segment_append_indexing;
mod segment_deleted;
mod segment_fetch_upper_bound;
mod segment_file_types;
mod segment_has_overflow;
mod segment_move_dir;
mod segment_read;
mod segment_recover;
mod segment_truncate;
mod torn_last_batch;
mod txn_index_rebuild;
mod unsupported_control_batch;
mod zero_filled_tail;
