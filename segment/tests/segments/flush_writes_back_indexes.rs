//! `LogSegment::flush` writes the mapped `.index` and `.timeindex` back to disk (Kafka's
//! `flush` forces both mappings), so the entries survive a power loss. Checked through
//! the kernel's own bookkeeping: after the flush, no page of either mapping is dirty in
//! `/proc/self/smaps` (`msync` cleans them). Runs on a disk-backed directory: on tmpfs
//! pages are never written back.

use crate::common::*;

/// Dirty kB (shared and private) of this process's mappings of files whose name ends
/// with `suffix` under `dir`.
fn dirty_kb(dir: &std::path::Path, suffix: &str) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let dir = dir.to_string_lossy();
    let mut total = 0;
    let mut inside = false;
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // A mapping's header line: "start-end perms offset dev inode [path]".
        let header = fields.len() >= 5
            && fields[0].contains('-')
            && fields[1].len() == 4
            && !fields[0].ends_with(':');
        if header {
            inside = fields.len() >= 6
                && fields[5].starts_with(dir.as_ref())
                && fields[5].ends_with(suffix);
        } else if inside
            && (line.starts_with("Shared_Dirty:") || line.starts_with("Private_Dirty:"))
        {
            total += fields[1].parse::<u64>().unwrap();
        }
    }
    total
}

/// The file-system type of the mount holding `path` (`/proc/self/mountinfo`: the longest
/// mount point that is a prefix of the path).
fn fs_type(path: &std::path::Path) -> String {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let path = path.canonicalize().unwrap();
    info.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let mount = std::path::PathBuf::from(left.split_whitespace().nth(4)?);
            let kind = right.split_whitespace().next()?.to_string();
            path.starts_with(&mount)
                .then_some((mount.as_os_str().len(), kind))
        })
        .max()
        .map(|(_, kind)| kind)
        .unwrap_or_default()
}

#[test]
fn flush_leaves_no_dirty_index_page() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let kind = fs_type(dir.path());
    if kind == "tmpfs" || kind == "ramfs" {
        eprintln!("skipped: the target directory is on {kind}, whose pages are never written back");
        return;
    }
    let (_t, clock) = mock();
    let seg = new_segment(dir.path(), 0, &config(10, 1 << 16), clock);
    for i in 0..200 {
        seg.append(i, 1_000 + i, i, &v2(i, 1_000 + i)).unwrap();
    }
    let (oi, ti) = (
        dirty_kb(dir.path(), ".index"),
        dirty_kb(dir.path(), ".timeindex"),
    );
    assert!(
        oi > 0 && ti > 0,
        "appends dirty both mappings: {oi} kB, {ti} kB"
    );
    seg.flush().unwrap();
    assert_eq!(
        dirty_kb(dir.path(), ".index"),
        0,
        "offset index written back"
    );
    assert_eq!(
        dirty_kb(dir.path(), ".timeindex"),
        0,
        "time index written back"
    );
}
