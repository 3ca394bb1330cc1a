//! The record-format integration tests (batches, legacy message sets, codecs, real
//! data), one binary: one module per scenario file.

#[path = "../common/mod.rs"]
#[expect(dead_code, reason = "the record tests use only the codec helpers")]
mod common;

#[cfg(feature = "lz4")]
mod lz4_truncated_frame;
mod record_format;
mod record_vectors;

/// The scenarios that need every codec (`gzip`, `snappy`, `lz4`, `zstd`), declared under
/// one `cfg`.
macro_rules! with_every_codec {
    ($($scenario:ident),* $(,)?) => {
        $(
            #[cfg(all(
                feature = "gzip",
                feature = "snappy",
                feature = "lz4",
                feature = "zstd"
            ))]
            mod $scenario;
        )*
    };
}

with_every_codec!(
    record_builder_compression,
    record_builder_roundtrip,
    record_interop,
    record_iteration,
    record_legacy,
    record_no_panic,
    record_real_data,
);
