//! Not a library: the test in `tests/s3.rs` checks `segment::tier::ObjectStoreStorage`
//! (segment's `object-store` feature) against an S3 server it starts in-process.
