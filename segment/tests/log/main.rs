//! The `Log` integration tests (open, recovery, retention, truncation, transactions,
//! checkpoints, concurrency, injected faults), one binary: one module per scenario file.

#[path = "../common/mod.rs"]
mod common;

mod accepted_survives_reopen;
mod append_input_checks;
mod append_path_txn_index;
#[cfg(feature = "cleaner")]
mod cleaner_copy;
#[cfg(feature = "cleaner")]
mod cleaner_kafka_tickets;
#[cfg(feature = "cleaner")]
mod cleaner_manager;
#[cfg(feature = "cleaner")]
mod cleaner_plan;
mod close_handlers;
mod config_validation;
mod crash_recovery_proptest;
mod deferred_index_check;
mod deleted_suffix_delay;
mod empty_batch_segment;
mod fetch_isolation;
mod file_regions;
mod garbage_checkpoints;
mod generated_fixture;
mod hostile_open;
mod io_fault_injection;
mod isolation_one_moment;
mod isolation_under_change;
mod kafka_440_producer_state;
#[cfg(feature = "cli")]
mod last_offset_i64_max;
mod leader;
mod leader_epoch_checkpoint;
mod legacy_offset_overflow_split;
mod linearizability;
mod list_offsets;
mod load_check_errors;
#[cfg(unix)]
mod lock_file_types;
mod log_concurrency;
mod log_open_recover;
mod log_open_swap_garbage;
mod log_retention;
mod log_segments_map;
mod log_start_beyond_end;
mod log_truncate;
mod lying_clean_marker;
mod many_overflowed_segments;
mod missing_index_files;
mod non_canonical_segment_name;
mod offset_overflow;
mod producer_snapshot;
mod read_path_errors;
mod real_kafka_data;
mod recovery_stats;
mod remote_index_cache;
mod remote_read;
mod remote_storage;
mod retention_boundaries;
mod retention_checkpoints;
mod retention_under_readers;
mod tier_events;
mod tier_retention;
mod tier_seam;
mod tier_stress;
mod timestamp_free_segments;
mod truncate_below_log_start;
mod txn_before_recovery_point;
mod txn_collect;
