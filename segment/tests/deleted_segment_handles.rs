//! Issue 11 (found by the `log_open` fuzz target after 814,471 executions: "Too many open
//! files"): a deleted segment's file handles are released when its files are removed. An
//! open handle of an unlinked `.log.deleted` keeps the inode, and so its disk space, alive:
//! a process that keeps opening, deleting from and closing logs must neither run out of
//! file descriptors nor hold the disk space of segments it deleted.
#![cfg(target_os = "linux")]
#[expect(
    dead_code,
    reason = "a single-scenario binary: it uses a few of the shared helpers"
)]
mod common;

use common::*;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Deleted segment files (`.log`, and the mapped `.index` and `.timeindex`) still held
/// open or mapped by this process.
fn held_deleted_files() -> Vec<String> {
    let fds = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|p| p.display().to_string());
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mapped = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5).map(|p| format!("{p} (mapped)")));
    fds.chain(mapped)
        .filter(|p| p.contains(".deleted"))
        .collect()
}

#[test]
fn retention_delete_records_and_truncation_release_the_handles_of_deleted_segments() {
    let before = open_fds();
    for round in 0..300 {
        let dir = tmpdir();
        let (_t, clock) = mock();
        let log = open_log(dir.path(), config(4096, 1 << 20), clock);
        let end = fill(&log, 0, 3, 2, 1000);
        log.roll(None).unwrap();
        let end = fill(&log, end, 3, 2, 2000);
        log.roll(None).unwrap();
        fill(&log, end, 3, 2, 3000);
        // The first two segments leave the log: `.deleted`, removed after the delay
        // (on close at the latest).
        match round % 3 {
            0 => {
                log.delete_records(12).unwrap();
            }
            1 => {
                log.truncate_to(3).unwrap();
            }
            _ => {
                log.truncate_fully_and_start_at(100).unwrap();
            }
        }
        log.close().unwrap();
    }
    let held = held_deleted_files();
    assert!(
        held.is_empty(),
        "handles of deleted files still open: {held:?}"
    );
    let after = open_fds();
    assert!(
        after <= before + 8,
        "file descriptors grew from {before} to {after} over 300 logs"
    );
}
