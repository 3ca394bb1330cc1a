//! Helpers shared by the index-core integration tests.
#![allow(dead_code)]

use std::path::Path;

/// A temporary directory, on tmpfs (`/dev/shm`) when available: closing and trimming
/// indexes `msync`s them, which makes tests on a real disk I/O-bound. Mapping semantics
/// are the same on both.
pub fn tmp() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::Builder::new().prefix("idx-test").tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().expect("temp dir")
}
