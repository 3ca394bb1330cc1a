//! The integration tests of `index-time`, one binary: one module per scenario file.

#[macro_use]
mod common;
mod append_rules;
mod appender;
mod bad_input;
mod concurrency;
mod creation_and_rounding;
mod lookups;
mod proptest_model;
mod real_kafka_files;
mod reopen_and_resize;
mod sanity_check;
mod truncate;
mod use_after_unmap;
mod view;
mod zero_filled_tail;
