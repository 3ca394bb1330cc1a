//! The integration tests of `index-offset`, one binary: one module per scenario file.

#[macro_use]
mod common;
mod append_rules;
mod appender;
mod bad_input;
mod concurrency;
mod creation_and_rounding;
mod fetch_upper_bound;
mod lookups;
mod page_directory_huge_page_size;
mod proptest_model;
mod real_kafka_files;
mod reopen_and_resize;
mod sanity_check;
mod truncate;
mod use_after_unmap;
mod view;
mod zero_filled_tail;
