//! `LogSegment::quick_index_check`: the loader's cheap look at the index files, without
//! mapping them. Missing files pass; a file that exists but cannot be opened, a length
//! that is not whole entries, a negative relative offset (also in a one-entry index) and
//! first/last entries out of order are each reported with the file's path.

use crate::common::*;
use segment::LogSegment;

/// A closed segment with two batches in `dir`, opened again without touching its indexes.
fn reopened(dir: &std::path::Path) -> LogSegment {
    let (_t, clock) = mock();
    let cfg = config(10, 4096);
    let seg = new_segment(dir, 0, &cfg, clock.clone());
    seg.append(0, 1_000, 0, &v2(0, 1_000)).unwrap();
    seg.append(1, 1_001, 1, &v2(1, 1_001)).unwrap();
    seg.close().unwrap();
    reopen_segment(dir, 0, &cfg, clock)
}

fn offset_entry(rel: i32, pos: u32) -> Vec<u8> {
    [rel.to_be_bytes(), pos.to_be_bytes()].concat()
}

fn time_entry(ts: i64, rel: i32) -> Vec<u8> {
    [&ts.to_be_bytes()[..], &rel.to_be_bytes()[..]].concat()
}

#[test]
fn consistent_and_missing_indexes_pass() {
    let dir = tmpdir();
    let seg = reopened(dir.path());
    assert_eq!(seg.quick_index_check(), Ok(()));
    std::fs::remove_file(seg.offset_index_file()).unwrap();
    std::fs::remove_file(seg.time_index_file()).unwrap();
    assert_eq!(seg.quick_index_check(), Ok(()));
}

#[test]
fn an_index_that_cannot_be_opened_is_reported() {
    for time in [false, true] {
        let dir = tmpdir();
        let seg = reopened(dir.path());
        let path = if time {
            seg.time_index_file()
        } else {
            seg.offset_index_file()
        };
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&path, &path).unwrap();
        let err = seg.quick_index_check().unwrap_err();
        assert!(err.contains(&path.display().to_string()), "{err}");
    }
}

#[test]
fn a_negative_relative_offset_is_reported_even_in_a_one_entry_index() {
    let dir = tmpdir();
    let seg = reopened(dir.path());
    std::fs::write(seg.offset_index_file(), offset_entry(-1, 0)).unwrap();
    let err = seg.quick_index_check().unwrap_err();
    assert!(err.contains("negative relative offset"), "{err}");
    assert!(err.contains(".index"), "{err}");

    let dir = tmpdir();
    let seg = reopened(dir.path());
    std::fs::write(seg.time_index_file(), time_entry(1_000, -1)).unwrap();
    let err = seg.quick_index_check().unwrap_err();
    assert!(err.contains("negative relative offset"), "{err}");
    assert!(err.contains(".timeindex"), "{err}");
}

#[test]
fn partial_entries_and_unordered_ends_are_reported() {
    let dir = tmpdir();
    let seg = reopened(dir.path());
    std::fs::write(seg.offset_index_file(), [0u8; 12]).unwrap();
    let err = seg.quick_index_check().unwrap_err();
    assert!(err.contains("not a multiple of 8"), "{err}");
    std::fs::write(
        seg.offset_index_file(),
        [offset_entry(5, 0), offset_entry(5, 73)].concat(),
    )
    .unwrap();
    let err = seg.quick_index_check().unwrap_err();
    assert!(err.contains("is not above the first"), "{err}");
    std::fs::write(seg.offset_index_file(), offset_entry(1, 73)).unwrap();
    std::fs::write(
        seg.time_index_file(),
        [time_entry(1_001, 1), time_entry(1_001, 1)].concat(),
    )
    .unwrap();
    let err = seg.quick_index_check().unwrap_err();
    assert!(err.contains("does not follow the first"), "{err}");
}

#[test]
fn a_negative_relative_offset_at_either_end_is_reported() {
    for entries in [
        [offset_entry(-1, 0), offset_entry(5, 73)],
        [offset_entry(0, 0), offset_entry(-1, 73)],
    ] {
        let dir = tmpdir();
        let seg = reopened(dir.path());
        std::fs::write(seg.offset_index_file(), entries.concat()).unwrap();
        let err = seg.quick_index_check().unwrap_err();
        assert!(err.contains("negative relative offset"), "{err}");
    }
    for entries in [
        [time_entry(1_000, -1), time_entry(1_001, 5)],
        [time_entry(1_000, 0), time_entry(1_001, -1)],
    ] {
        let dir = tmpdir();
        let seg = reopened(dir.path());
        std::fs::write(seg.time_index_file(), entries.concat()).unwrap();
        let err = seg.quick_index_check().unwrap_err();
        assert!(err.contains("negative relative offset"), "{err}");
    }
}

#[test]
fn relative_offset_zero_is_valid() {
    for offsets in [
        vec![offset_entry(0, 0)],
        vec![offset_entry(0, 0), offset_entry(5, 73)],
    ] {
        let dir = tmpdir();
        let seg = reopened(dir.path());
        std::fs::write(seg.offset_index_file(), offsets.concat()).unwrap();
        std::fs::write(seg.time_index_file(), time_entry(1_000, 0)).unwrap();
        assert_eq!(seg.quick_index_check(), Ok(()));
        std::fs::write(
            seg.time_index_file(),
            [time_entry(1_000, 0), time_entry(1_001, 1)].concat(),
        )
        .unwrap();
        assert_eq!(seg.quick_index_check(), Ok(()));
    }
}

#[test]
fn time_index_offsets_may_repeat_but_not_go_back() {
    let dir = tmpdir();
    let seg = reopened(dir.path());
    // Equal offsets with a larger timestamp (a roll's final entry): valid.
    std::fs::write(
        seg.time_index_file(),
        [time_entry(1_000, 1), time_entry(1_001, 1)].concat(),
    )
    .unwrap();
    assert_eq!(seg.quick_index_check(), Ok(()));
    // The last offset below the first: reported.
    std::fs::write(
        seg.time_index_file(),
        [time_entry(1_000, 5), time_entry(1_001, 3)].concat(),
    )
    .unwrap();
    let err = seg.quick_index_check().unwrap_err();
    assert!(err.contains("does not follow the first"), "{err}");
}
