//! The integration tests of `index-txn`, one binary: one module per scenario file.

mod append;
mod collect_aborted;
mod common;
mod concurrency;
mod hostile;
mod partial_tail;
mod rename_flush_delete;
mod reopen;
mod sanity;
mod serialization;
mod truncate_reset_close;
mod version_quirk;
mod view;
