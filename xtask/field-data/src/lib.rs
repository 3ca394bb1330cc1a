//! Where the tests' real-data fixtures are, and the one rule for the optional field-data
//! suite.
//!
//! * **In-repository fixtures** ([`in_repo_partitions`]) are always there: partition
//!   directories under `segment/tests/data/`: written by Apache Kafka 4.4.0 under
//!   `segment/tests/data/kafka-4.4.0/` and by this repository's own writer under
//!   `segment/tests/data/generated/`. Every real-data suite runs on them.
//! * **The field data** ([`field_data_dir`]) is an extra suite of partitions copied from
//!   production brokers, kept outside the repository (`$KAFKA_DATA_DIR`, else
//!   `../shared/kafka-data` beside the repository root). When it is present its tests run.
//!   When it is missing they pass as skipped, with one line on stderr, except under
//!   `CI=true`, where a missing field-data directory fails the test: CI must never go green
//!   on a run that silently skipped it.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The environment variable that points at the field-data directory.
pub const FIELD_DATA_ENV: &str = "KAFKA_DATA_DIR";

/// The workspace root (this crate lives in `xtask/field-data`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

/// Where the field data is looked for: `$KAFKA_DATA_DIR`, else `../shared/kafka-data` next
/// to the workspace root.
pub fn field_data_location() -> PathBuf {
    std::env::var_os(FIELD_DATA_ENV).map_or_else(
        || workspace_root().join("../shared/kafka-data"),
        PathBuf::from,
    )
}

/// Whether this run is CI (`CI=true`, as CI services set it; `.ci/run` does too).
pub fn is_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The field-data directory if it is present.
///
/// When it is missing: under `CI=true` this panics (the test fails); otherwise it prints
/// `skipped: <suite>: ...` on stderr (bypassing the test harness's capture, so the line is
/// seen) and returns `None`, and the caller returns early.
///
/// ```no_run
/// let Some(dir) = field_data::field_data_dir("offset index, field data") else { return };
/// ```
pub fn field_data_dir(suite: &str) -> Option<PathBuf> {
    let dir = field_data_location();
    if dir.is_dir() {
        return Some(dir);
    }
    let msg = format!(
        "{suite}: the optional field-data directory {} is missing (set {FIELD_DATA_ENV} to \
         use another one)",
        dir.display()
    );
    if is_ci() {
        panic!("CI=true: {msg}; CI requires the field-data suite");
    }
    let test = std::thread::current().name().unwrap_or("").to_owned();
    let _ = writeln!(std::io::stderr(), "skipped: {test} ({msg})");
    None
}

/// A file of the field data by relative path, `None` (skipped) as for [`field_data_dir`].
/// Panics if the directory is present but the file is not.
pub fn field_data_file(suite: &str, rel: &str) -> Option<PathBuf> {
    let p = field_data_dir(suite)?.join(rel);
    assert!(p.is_file(), "field-data file {} is missing", p.display());
    Some(p)
}

/// The in-repository fixture root, `segment/tests/data`.
pub fn in_repo_root() -> PathBuf {
    workspace_root().join("segment/tests/data")
}

/// Every in-repository partition directory as a broker or our writer left it after a clean
/// shutdown (a directory under `segment/tests/data` that holds a `.log` file, e.g.
/// `kafka-4.4.0/clean/codecs-0` or `generated/orders-0`), sorted. The copies taken after a
/// kill -9 (under a `crash` directory: torn tails, untrimmed preallocated indexes) are left
/// out; [`in_repo_crash_partitions`] lists them for the tests of recovery.
/// Panics if there are none: the repository always ships some.
pub fn in_repo_partitions() -> Vec<PathBuf> {
    all_in_repo_partitions()
        .into_iter()
        .filter(|p| !is_crash_copy(p))
        .collect()
}

/// The in-repository partition directories copied after the broker was killed with
/// SIGKILL (every directory below a `crash` directory that holds a `.log`), sorted.
pub fn in_repo_crash_partitions() -> Vec<PathBuf> {
    all_in_repo_partitions()
        .into_iter()
        .filter(|p| is_crash_copy(p))
        .collect()
}

fn is_crash_copy(p: &Path) -> bool {
    p.strip_prefix(in_repo_root())
        .unwrap_or(p)
        .components()
        .any(|c| c.as_os_str() == "crash")
}

fn all_in_repo_partitions() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries = read_dir_sorted(dir);
        if entries
            .iter()
            .any(|p| p.is_file() && p.extension().is_some_and(|e| e == "log"))
        {
            out.push(dir.to_path_buf());
        }
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            }
        }
    }
    let root = in_repo_root();
    let mut out = Vec::new();
    walk(&root, &mut out);
    assert!(
        !out.is_empty(),
        "no partition directories under {}",
        root.display()
    );
    out
}

/// Every file whose name ends with `suffix` under `dir` (recursively), sorted.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
        for p in read_dir_sorted(dir) {
            if p.is_dir() {
                walk(&p, suffix, out);
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(suffix))
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, suffix, &mut out);
    out.sort();
    out
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    v.sort();
    v
}

/// The `index.interval.bytes` an in-repository partition was written with (recovery with
/// the same value rebuilds its indexes byte for byte), from the fixture READMEs. Panics
/// for a partition it does not know: add new fixtures here.
pub fn in_repo_index_interval_bytes(partition: &Path) -> u64 {
    let name = partition
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    match name {
        "orders-0" => 4096,
        "codecs-0" | "appendtime-0" => 1024,
        "txn-0" => 512,
        other => panic!(
            "no index.interval.bytes known for the fixture {other} ({}): add it to \
             field_data::in_repo_index_interval_bytes",
            partition.display()
        ),
    }
}

/// Every `ext` index file (entries of `entry_size` bytes) of the cleanly shut down
/// in-repository partitions, sorted. Panics if there are none, or if one of them is
/// untrimmed (see [`is_untrimmed`]): only the kill -9 copies may hold untrimmed indexes.
pub fn in_repo_index_files(ext: &str, entry_size: usize) -> Vec<PathBuf> {
    let out = index_files(&in_repo_partitions(), ext);
    assert!(!out.is_empty(), "no in-repository {ext} fixtures");
    for p in &out {
        assert!(
            !is_untrimmed(p, entry_size),
            "{}: an untrimmed index outside the kill -9 fixtures",
            p.display()
        );
    }
    out
}

/// The `ext` index files of the kill -9 copies that were never trimmed (see
/// [`is_untrimmed`]): the active segments' preallocated files.
pub fn in_repo_untrimmed_index_files(ext: &str, entry_size: usize) -> Vec<PathBuf> {
    let mut out = index_files(&in_repo_crash_partitions(), ext);
    out.retain(|p| is_untrimmed(p, entry_size));
    out
}

/// The `ext` files of `partitions`, in order.
fn index_files(partitions: &[PathBuf], ext: &str) -> Vec<PathBuf> {
    partitions
        .iter()
        .flat_map(|dir| files_with_suffix(dir, ext))
        .collect()
}

/// Whether an index file of `entry_size`-byte entries ends in an all-zero slot after its
/// first slot: the preallocated file of an active segment whose broker was killed before
/// it could trim it. Kafka's `sanityCheck` may or may not reject such a file; recovery
/// rebuilds it (the `segment` tests cover that), so checks of trimmed Kafka indexes leave
/// it out.
pub fn is_untrimmed(path: &Path, entry_size: usize) -> bool {
    let bytes = std::fs::read(path).unwrap();
    bytes.len() >= 2 * entry_size && bytes[bytes.len() - entry_size..].iter().all(|&b| b == 0)
}
