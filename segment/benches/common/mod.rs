//! What the `segment` and `leader` benches share (a module, not a bench target: Cargo
//! builds `benches/*.rs`): their criterion settings, and scratch directories on
//! `/dev/shm` when it exists, so that the page cache, not a disk, is what they measure.

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::Criterion;

/// Ten samples of 3 s after a 0.5 s warm-up, then the command line's options.
pub fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args()
}

/// `/dev/shm` if it exists, else the system's temporary directory.
pub fn scratch_root() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// A new temporary directory under [`scratch_root`], named `<prefix>…`.
pub fn scratch(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(scratch_root())
        .expect("temp dir")
}
