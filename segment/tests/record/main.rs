//! The record-format integration tests (batches, legacy message sets, codecs, real
//! data), one binary: one module per scenario file.

#[path = "../common/mod.rs"]
#[expect(dead_code, reason = "the record tests use only the codec helpers")]
mod common;

mod lz4_truncated_frame;
mod record_builder_compression;
#[cfg(all(
    feature = "gzip",
    feature = "snappy",
    feature = "lz4",
    feature = "zstd"
))]
mod record_builder_roundtrip;
mod record_format;
#[cfg(all(
    feature = "gzip",
    feature = "snappy",
    feature = "lz4",
    feature = "zstd"
))]
mod record_interop;
#[cfg(all(
    feature = "gzip",
    feature = "snappy",
    feature = "lz4",
    feature = "zstd"
))]
mod record_iteration;
#[cfg(all(
    feature = "gzip",
    feature = "snappy",
    feature = "lz4",
    feature = "zstd"
))]
mod record_legacy;
#[cfg(all(
    feature = "gzip",
    feature = "snappy",
    feature = "lz4",
    feature = "zstd"
))]
mod record_no_panic;
#[cfg(all(
    feature = "gzip",
    feature = "snappy",
    feature = "lz4",
    feature = "zstd"
))]
mod record_real_data;
mod record_vectors;
