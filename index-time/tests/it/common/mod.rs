//! Helpers shared by the time-index integration tests.

use std::path::{Path, PathBuf};

use index_time::{SearchStrategy, TimeIndex, TimestampOffset};

/// Strategies every lookup test runs with: textbook binary search, Kafka's warm/cold
/// (8192-byte warm section = 682 entries), warm/cold with tiny warm sections (1 and 2
/// entries) so small indexes exercise both paths, and the page directory with 4 KiB pages
/// and with tiny 32-byte pages (12-byte entries straddle most page boundaries).
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

pub fn timeindex_name(base: i64) -> String {
    format!("{base:020}.timeindex")
}

/// `TI(base, max)` of `docs/kafka-behaviour.md`.
pub fn new_index(dir: &Path, base: i64, max: usize) -> TimeIndex {
    TimeIndex::open(dir.join(timeindex_name(base)), base, max).expect("create time index")
}

pub fn to(timestamp: i64, offset: i64) -> TimestampOffset {
    TimestampOffset { timestamp, offset }
}

/// Independent decoder of `.timeindex` bytes: (timestamp, absolute offset).
pub fn decode_timeindex_bytes(bytes: &[u8], base: i64) -> Vec<(i64, i64)> {
    bytes
        .chunks_exact(12)
        .map(|c| {
            let ts = i64::from_be_bytes(c[..8].try_into().unwrap());
            let rel = i32::from_be_bytes(c[8..].try_into().unwrap());
            (ts, base + rel as i64)
        })
        .collect()
}

/// Kafka's layout: 8-byte timestamp, 4-byte relative offset, big-endian.
pub fn encode_timeindex(entries: &[(i64, i32)]) -> Vec<u8> {
    let mut v = Vec::with_capacity(entries.len() * 12);
    for &(ts, rel) in entries {
        v.extend_from_slice(&ts.to_be_bytes());
        v.extend_from_slice(&rel.to_be_bytes());
    }
    v
}

/// Kafka's lookup on a sorted Vec: last entry with timestamp <= target, else (-1, base).
pub fn model_lookup(entries: &[(i64, i64)], base: i64, target: i64) -> TimestampOffset {
    match entries.partition_point(|e| e.0 <= target) {
        0 => to(-1, base),
        n => to(entries[n - 1].0, entries[n - 1].1),
    }
}

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
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % ((hi - lo + 1) as u64)) as i64
    }
}

/// Every `ext` file of the cleanly shut down in-repository partitions
/// (`segment/tests/data`), sorted: the real-data checks always run on these.
pub fn in_repo_files(ext: &str) -> Vec<PathBuf> {
    field_data::in_repo_index_files(ext, 12)
}

/// The untrimmed `ext` files of the kill -9 copies (see `field_data::is_untrimmed`).
pub fn in_repo_untrimmed_files(ext: &str) -> Vec<PathBuf> {
    field_data::in_repo_untrimmed_index_files(ext, 12)
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
