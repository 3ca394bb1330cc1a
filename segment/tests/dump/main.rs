//! The `dump-log` integration tests, one binary: one module per scenario file.

mod dump_log_case69;
mod dump_log_decoders;
mod dump_log_direct_lines;
mod dump_log_file_types;
mod dump_log_parity;
mod dump_log_real_data;
mod dump_log_rebuild_refusals;
mod dump_log_txn_and_time;
