//! Helpers shared by the offset-index integration tests.

use std::path::{Path, PathBuf};

use index_offset::{OffsetIndex, OffsetPosition, SearchStrategy};

/// The strategies every lookup test runs with: textbook binary search, Kafka's default
/// warm/cold search (8192-byte warm section), warm/cold with tiny warm sections (2 and 3
/// entries) so that small indexes exercise both the warm and the cold path, and the page
/// directory with 4 KiB pages and with tiny 32-byte pages (4 entries per page, so small
/// indexes have many fences).
pub const STRATEGIES: [SearchStrategy; 6] = [
    SearchStrategy::Binary,
    SearchStrategy::WarmCold {
        warm_section_bytes: 8192,
    },
    SearchStrategy::WarmCold {
        warm_section_bytes: 16,
    },
    SearchStrategy::WarmCold {
        warm_section_bytes: 24,
    },
    SearchStrategy::PageDirectory { page_size: 4096 },
    SearchStrategy::PageDirectory { page_size: 32 },
];

/// Kafka's file name for a segment base offset: 20 zero-padded digits.
pub fn index_name(base: i64) -> String {
    format!("{base:020}.index")
}

/// A new offset index (`OI(base, max)` of `docs/kafka-behaviour.md`) in `dir`.
pub fn new_index(dir: &Path, base: i64, max: usize) -> OffsetIndex {
    OffsetIndex::open(dir.join(index_name(base)), base, max).expect("create offset index")
}

/// Shorthand for an `OffsetPosition`.
pub fn op(offset: i64, position: u32) -> OffsetPosition {
    OffsetPosition { offset, position }
}

/// Decodes the raw bytes of an `.index` file independently of the crate under test.
pub fn decode_index_bytes(bytes: &[u8], base: i64) -> Vec<(i64, u32)> {
    bytes
        .chunks_exact(8)
        .map(|c| {
            let rel = i32::from_be_bytes([c[0], c[1], c[2], c[3]]);
            let pos = u32::from_be_bytes([c[4], c[5], c[6], c[7]]);
            (base + rel as i64, pos)
        })
        .collect()
}

/// Encodes entries the way Kafka lays them out (for building raw files in tests).
pub fn encode_index(entries: &[(i32, u32)]) -> Vec<u8> {
    let mut v = Vec::with_capacity(entries.len() * 8);
    for &(rel, pos) in entries {
        v.extend_from_slice(&rel.to_be_bytes());
        v.extend_from_slice(&pos.to_be_bytes());
    }
    v
}

/// Model of Kafka's `lookup` on a sorted `Vec`: the last entry with offset <= target,
/// else (base, 0) (std's `partition_point`, independent of the crate's search).
pub fn model_lookup(entries: &[(i64, u32)], base: i64, target: i64) -> OffsetPosition {
    match entries.partition_point(|(o, _)| *o <= target) {
        0 => op(base, 0),
        n => op(entries[n - 1].0, entries[n - 1].1),
    }
}

/// A small deterministic xorshift generator (no extra dev-dependency).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo + 1) as u64)) as i64
    }
}

/// Every `ext` file of the cleanly shut down in-repository partitions
/// (`segment/tests/data`), sorted: the real-data checks always run on these.
pub fn in_repo_files(ext: &str) -> Vec<PathBuf> {
    field_data::in_repo_index_files(ext, 8)
}

/// The untrimmed `ext` files of the kill -9 copies (see `field_data::is_untrimmed`).
pub fn in_repo_untrimmed_files(ext: &str) -> Vec<PathBuf> {
    field_data::in_repo_untrimmed_index_files(ext, 8)
}

/// Every `ext` file of the optional field data (all subdirectories), sorted; `None` when
/// it is missing (skipped outside CI, a failure under `CI=true`: see the `field-data`
/// helper).
pub fn field_files(ext: &str) -> Option<Vec<PathBuf>> {
    let dir = field_data::field_data_dir(concat!(env!("CARGO_PKG_NAME"), " field data"))?;
    Some(field_data::files_with_suffix(&dir, ext))
}

/// The in-repository files plus the field-data files when present.
pub fn kafka_files(ext: &str) -> Vec<PathBuf> {
    let mut out = in_repo_files(ext);
    out.extend(field_files(ext).unwrap_or_default());
    out
}

/// A field-data file by relative path; returns from the calling test (skipped) when the
/// field data is missing outside CI.
#[macro_export]
macro_rules! field_file {
    ($rel:expr $(,)?) => {
        match field_data::field_data_file(concat!(env!("CARGO_PKG_NAME"), " field data"), $rel) {
            Some(p) => p,
            None => return,
        }
    };
}

/// The base offset encoded in a segment file name (digits before the first '.').
pub fn base_offset_of(path: &Path) -> i64 {
    let name = path.file_name().unwrap().to_str().unwrap();
    name.split('.')
        .next()
        .unwrap()
        .parse()
        .expect("numeric base offset")
}

/// A temporary directory, on tmpfs (`/dev/shm`) when available: the tests create
/// thousands of small mapped files, and `close`/`trim` `msync` them, which on a real disk
/// makes the suite I/O-bound (3 s instead of 0.1 s for the arbitrary-bytes proptest).
/// Mapping semantics are the same on both.
pub fn tmp() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::Builder::new().prefix("idx-test").tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().expect("temp dir")
}
