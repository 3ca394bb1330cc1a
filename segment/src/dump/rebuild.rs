//! `--rebuild-indexes-to DIR`: writes the `.index`, `.timeindex` and `.txnindex` that
//! Kafka's recovery (`LogSegment.recover`, docs/kafka-behaviour.md#segment-recover) builds for a `.log`, without touching
//! the broker's files, and compares them with the index files next to the `.log`.
//!
//! Method: the `.log` is copied into a temporary directory created inside `DIR`, a
//! [`LogSegment`] is opened there and [`LogSegment::recover`]ed (so the result is exactly
//! what this crate's recovery produces), the segment is closed (indexes trimmed) and the
//! index files are moved to `DIR` under Kafka's names. Logs of the same partition
//! directory are recovered in offset order with one shared [`ProducerStateManager`], as
//! Kafka's loader does when it recovers a partition from scratch; the transaction index of
//! a segment therefore knows about transactions started in earlier segments *that were
//! given*. The source directory is only read.
//!
//! # Refusals
//! Unless [`RebuildOptions::force`] is set, [`rebuild`] writes nothing and returns an
//! error when:
//! * `DIR` is the directory of an input `.log`, by its given path or by its real path
//!   (a `.log` given through a symlink or from a hard-linked copy of a partition);
//! * an output file already exists and is the same file (same device and inode, so
//!   also through symlinks and hard links) as the input `.log` or as one of the index
//!   files next to it, by either path;
//! * `DIR` already holds a partition's files (`.log`, `.index`, `.timeindex`,
//!   `.txnindex`, `.snapshot`): it is probably another partition's directory.
//!
//! Outputs are always written to a temporary file in `DIR` and renamed over the target,
//! so even with `force` an existing hard link or symlink at a target path is replaced,
//! never written through.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::FileType;
use crate::config::LogConfig;
use crate::names::{self, FileKind};
use crate::producer::ProducerStateManager;
use crate::segment::LogSegment;

/// Options of [`rebuild`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuildOptions {
    /// Directory the rebuilt indexes are written to (created if missing). Must not be the
    /// directory of any input `.log`.
    pub out_dir: PathBuf,
    /// `index.interval.bytes` (Kafka default 4096).
    pub index_interval_bytes: u64,
    /// `--force`: write even where the [refusals](self#refusals) apply.
    pub force: bool,
}

/// How a rebuilt index compares with the broker's file next to the `.log`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Comparison {
    /// Byte-identical (both absent counts as identical for the optional `.txnindex`).
    Identical,
    /// Different content.
    Differs {
        /// Entries in the existing file (length / entry size).
        existing_entries: usize,
        /// Entries in the rebuilt file.
        rebuilt_entries: usize,
        /// First entry number that differs.
        first_difference: usize,
    },
    /// The broker has no such file next to the `.log`.
    NoExistingFile,
    /// The broker has a file but recovery writes none (e.g. no aborted transaction).
    NotRebuilt {
        /// Entries in the existing file.
        existing_entries: usize,
    },
}

/// One index file of a rebuild.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RebuiltFile {
    /// Index type.
    pub file_type: FileType,
    /// Where it was written (`None`: recovery wrote no such file, e.g. a `.txnindex`
    /// without aborted transactions).
    #[serde(serialize_with = "super::lossy_path_opt")]
    pub written: Option<PathBuf>,
    /// Entries written.
    pub entries: usize,
    /// Bytes written.
    pub bytes: u64,
    /// The broker's file next to the `.log` that it was compared with.
    #[serde(serialize_with = "super::lossy_path")]
    pub existing: PathBuf,
    /// The comparison.
    pub comparison: Comparison,
}

/// Result of rebuilding one `.log`'s indexes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RebuildReport {
    /// The `.log`.
    #[serde(serialize_with = "super::lossy_path")]
    pub log: PathBuf,
    /// Base offset.
    pub base_offset: i64,
    /// `index.interval.bytes` used.
    pub index_interval_bytes: u64,
    /// Bytes recovery kept.
    pub valid_bytes: u64,
    /// Bytes recovery would truncate (corrupt or torn tail); non-zero is a problem.
    pub truncated_bytes: u64,
    /// The three index files.
    pub files: Vec<RebuiltFile>,
    /// Set when the rebuild failed (nothing or only part was written).
    pub error: Option<String>,
}

impl RebuildReport {
    /// Whether this rebuild found a problem (failure or truncation).
    pub fn is_failure(&self) -> bool {
        self.error.is_some() || self.truncated_bytes > 0
    }

    /// Human-readable report.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Rebuilt indexes of {} (recovery rule, index.interval.bytes={}): {} valid bytes, {} bytes would be truncated",
            super::text::escape_path(&self.log),
            self.index_interval_bytes,
            self.valid_bytes,
            self.truncated_bytes
        );
        for f in &self.files {
            let suffix = match f.file_type {
                FileType::OffsetIndex => ".index",
                FileType::TimeIndex => ".timeindex",
                _ => ".txnindex",
            };
            match &f.written {
                Some(p) => {
                    let _ = write!(
                        s,
                        "  wrote {} ({} entries, {} bytes): ",
                        super::text::escape_path(p),
                        f.entries,
                        f.bytes
                    );
                }
                None => {
                    let _ = write!(s, "  no {suffix} written (recovery creates none): ");
                }
            }
            let existing = super::text::escape_path(&f.existing);
            let _ = match &f.comparison {
                Comparison::Identical if f.written.is_none() => {
                    writeln!(s, "none next to the log either")
                }
                Comparison::Identical => writeln!(s, "identical to {existing}"),
                Comparison::Differs {
                    existing_entries,
                    rebuilt_entries,
                    first_difference,
                } => writeln!(
                    s,
                    "differs from {existing}: {existing_entries} vs {rebuilt_entries} entries (existing vs rebuilt), first difference at entry {first_difference}"
                ),
                Comparison::NoExistingFile => writeln!(s, "no {existing} to compare with"),
                Comparison::NotRebuilt { existing_entries } => writeln!(
                    s,
                    "but {existing} exists with {existing_entries} entries"
                ),
            };
        }
        if let Some(e) = &self.error {
            let _ = writeln!(s, "  FAILED: {}", super::text::escape(e));
        }
        s
    }
}

fn entry_size(kind: FileKind) -> usize {
    match kind {
        FileKind::OffsetIndex => 8,
        FileKind::TimeIndex => 12,
        _ => index_txn::AbortedTxn::SIZE,
    }
}

fn compare(existing: Option<&[u8]>, rebuilt: Option<&[u8]>, size: usize) -> Comparison {
    match (existing, rebuilt) {
        (None, None) => Comparison::Identical,
        (None, Some(_)) => Comparison::NoExistingFile,
        (Some([]), None) => Comparison::Identical,
        (Some(e), None) => Comparison::NotRebuilt {
            existing_entries: e.len() / size,
        },
        (Some(e), Some(r)) if e == r => Comparison::Identical,
        (Some(e), Some(r)) => {
            let first = e
                .chunks(size)
                .zip(r.chunks(size))
                .position(|(a, b)| a != b)
                .unwrap_or(e.len().min(r.len()) / size);
            Comparison::Differs {
                existing_entries: e.len() / size,
                rebuilt_entries: r.len() / size,
                first_difference: first,
            }
        }
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Same file: same device and inode (symlinks followed; hard links share the inode). Off
/// Unix: the same canonical path.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

/// The directory of `path` (`.` for a bare name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

const REFUSAL_HINT: &str = "the broker's files must not be touched; choose another --rebuild-indexes-to directory (or give --force)";

/// The [refusals](self#refusals) for one `.log`.
fn check_target(log: &Path, out_dir: &Path) -> Result<(), String> {
    let given_dir = parent_dir(log);
    let real_dir = log.canonicalize().ok().map(|p| parent_dir(&p));
    for dir in std::iter::once(&given_dir).chain(real_dir.as_ref()) {
        if same_dir(dir, out_dir) {
            return Err(format!(
                "refusing to write into {}, the directory of {}: {REFUSAL_HINT}",
                dir.display(),
                log.display()
            ));
        }
    }
    let base = names::offset_from_file(log).map_err(|e| e.to_string())?;
    for kind in [
        FileKind::OffsetIndex,
        FileKind::TimeIndex,
        FileKind::TxnIndex,
    ] {
        let target = names::segment_file(out_dir, base, kind, "");
        if !target.exists() {
            continue;
        }
        let mut sources = vec![
            log.to_path_buf(),
            names::segment_file(&given_dir, base, kind, ""),
        ];
        if let Some(real) = &real_dir {
            sources.push(names::segment_file(real, base, kind, ""));
        }
        if let Some(src) = sources.iter().find(|s| same_file(&target, s)) {
            return Err(format!(
                "refusing to write {}: it is the same file as {} (a symlink or hard link): {REFUSAL_HINT}",
                target.display(),
                src.display()
            ));
        }
    }
    Ok(())
}

/// Rebuilds the indexes of every `.log` in `logs` into `opts.out_dir` (see the
/// [module docs](self)). Reports come back in input order.
///
/// # Errors
/// Only for problems with the output directory (cannot be created, is the directory of
/// an input, or two inputs would write the same file name); per-log failures are in
/// [`RebuildReport::error`].
pub fn rebuild(logs: &[PathBuf], opts: &RebuildOptions) -> Result<Vec<RebuildReport>, String> {
    if !opts.force {
        for log in logs {
            check_target(log, &opts.out_dir)?;
        }
        if opts.out_dir.is_dir() {
            let held = super::partition_files(&opts.out_dir)
                .map_err(|e| format!("cannot list {}: {e}", opts.out_dir.display()))?;
            if let Some(first) = held.first() {
                return Err(format!(
                    "refusing to write into {}: it already holds a partition's files ({} and {} more); choose an empty or new --rebuild-indexes-to directory (or give --force)",
                    opts.out_dir.display(),
                    first.display(),
                    held.len() - 1
                ));
            }
        }
    }
    std::fs::create_dir_all(&opts.out_dir)
        .map_err(|e| format!("cannot create {}: {e}", opts.out_dir.display()))?;
    let mut names_seen = std::collections::HashSet::new();
    let mut items = Vec::new();
    for (i, log) in logs.iter().enumerate() {
        let dir = parent_dir(log);
        let base = names::offset_from_file(log).map_err(|e| e.to_string())?;
        if !names_seen.insert(base) {
            return Err(format!(
                "two inputs have base offset {base}: their rebuilt indexes would overwrite each other in {}; rebuild them into separate directories",
                opts.out_dir.display()
            ));
        }
        items.push((dir, base, i, log.clone()));
    }
    // One producer state per source directory, segments in offset order.
    items.sort_by(|a, b| (a.0.as_path(), a.1).cmp(&(b.0.as_path(), b.1)));
    let mut reports: Vec<(usize, RebuildReport)> = Vec::new();
    let mut state = ProducerStateManager::new();
    let mut current_dir: Option<PathBuf> = None;
    for (dir, base, i, log) in items {
        if current_dir.as_ref() != Some(&dir) {
            state = ProducerStateManager::new();
            current_dir = Some(dir.clone());
        }
        let report = rebuild_one(&log, &dir, base, opts, &mut state);
        reports.push((i, report));
    }
    reports.sort_by_key(|(i, _)| *i);
    Ok(reports.into_iter().map(|(_, r)| r).collect())
}

fn rebuild_one(
    log: &Path,
    src_dir: &Path,
    base: i64,
    opts: &RebuildOptions,
    state: &mut ProducerStateManager,
) -> RebuildReport {
    let mut report = RebuildReport {
        log: log.to_path_buf(),
        base_offset: base,
        index_interval_bytes: opts.index_interval_bytes,
        valid_bytes: 0,
        truncated_bytes: 0,
        files: Vec::new(),
        error: None,
    };
    if let Err(e) = rebuild_into(log, src_dir, base, opts, state, &mut report) {
        report.error = Some(e);
    }
    report
}

fn rebuild_into(
    log: &Path,
    src_dir: &Path,
    base: i64,
    opts: &RebuildOptions,
    state: &mut ProducerStateManager,
    report: &mut RebuildReport,
) -> Result<(), String> {
    let tmp = ScratchDir::new_in(&opts.out_dir)
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let copy = names::log_file(tmp.path(), base, "");
    super::ensure_regular_file(log).map_err(|e| e.to_string())?;
    std::fs::copy(log, &copy).map_err(|e| format!("cannot copy {}: {e}", log.display()))?;
    make_writable(&copy).map_err(|e| format!("cannot make the copy writable: {e}"))?;
    let config = LogConfig {
        index_interval_bytes: opts.index_interval_bytes,
        ..LogConfig::default()
    };
    let original_len = std::fs::metadata(&copy).map_err(|e| e.to_string())?.len();
    let seg = LogSegment::<crate::format::KafkaBatchFormat>::open(
        tmp.path(),
        base,
        &config,
        crate::segment::SegmentOptions::existing(),
    )
    .map_err(|e| e.to_string())?;
    let truncated = seg.recover(state, None).map_err(|e| e.to_string())?;
    seg.close().map_err(|e| e.to_string())?;
    report.truncated_bytes = truncated;
    report.valid_bytes = original_len - truncated;
    for kind in [
        FileKind::OffsetIndex,
        FileKind::TimeIndex,
        FileKind::TxnIndex,
    ] {
        let built = names::segment_file(tmp.path(), base, kind, "");
        let target = names::segment_file(&opts.out_dir, base, kind, "");
        let existing = names::segment_file(src_dir, base, kind, "");
        let rebuilt = match std::fs::read(&built) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("cannot read {}: {e}", built.display())),
        };
        // The broker's file is read whole for the comparison: refused beyond the size
        // of any index Kafka writes (a sparse 100 GiB file is not an index).
        let bounded = match kind {
            FileKind::TxnIndex => super::Bounded::TxnIndex,
            _ => super::Bounded::Index,
        };
        let existing_bytes = match std::fs::metadata(&existing) {
            Ok(m) if m.is_file() && m.len() > super::MAX_INDEX_FILE_BYTES => {
                return Err(format!(
                    "{}: {}",
                    existing.display(),
                    super::too_large_reason(bounded, m.len())
                ));
            }
            _ => super::read_regular(&existing).ok(),
        };
        let size = entry_size(kind);
        let comparison = compare(existing_bytes.as_deref(), rebuilt.as_deref(), size);
        let written = match &rebuilt {
            Some(bytes) => {
                // Into a new file, renamed over the target: a link at the target path is
                // replaced, never written through.
                let fresh = tmp.path().join("rebuilt.tmp");
                std::fs::write(&fresh, bytes)
                    .and_then(|()| std::fs::rename(&fresh, &target))
                    .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
                Some(target)
            }
            None => None,
        };
        let len = rebuilt.as_ref().map_or(0, |b| b.len());
        report.files.push(RebuiltFile {
            file_type: match kind {
                FileKind::OffsetIndex => FileType::OffsetIndex,
                FileKind::TimeIndex => FileType::TimeIndex,
                _ => FileType::TxnIndex,
            },
            written,
            entries: len / size,
            bytes: len as u64,
            existing,
            comparison,
        });
    }
    Ok(())
}

/// A scratch directory `<parent>/.dump-log-rebuild-<pid>-<n>`, removed with its contents
/// on drop (the crate keeps `tempfile` out of its normal dependencies).
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new_in(parent: &Path) -> std::io::Result<Self> {
        let pid = std::process::id();
        for n in 0u32.. {
            let dir = parent.join(format!(".dump-log-rebuild-{pid}-{n}"));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(ScratchDir(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {}
                Err(e) => return Err(e),
            }
        }
        unreachable!("the loop returns")
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Makes a copied file writable by its owner (the broker's files may be read-only).
fn make_writable(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
    }
    #[cfg(not(unix))]
    {
        let mut perms = std::fs::metadata(path)?.permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(path, perms)
    }
}
