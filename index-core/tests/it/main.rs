//! The integration tests of `index-core`, one binary: one module per scenario file.
// Not under loom: IndexFile's loom atomics panic outside `loom::model` (see tests/loom.rs).
#![cfg(not(loom))]

mod common;
mod fast_kernels_match_kafka;
mod hybrid;
mod index_file_lifecycle;
mod page_directory_sequences;
mod remap_safety;
mod search_strategies;
