//! A segment whose partition directory was renamed (Kafka's `renameDir`, for a deleted
//! topic's `-delete` directory or a future replica) keeps working once
//! `LogSegment::update_parent_dir` points it at the new directory: indexes load from
//! there, renames happen there, and `has_suffix` sees the names it was given.

use crate::common::*;

#[test]
fn update_parent_dir_moves_every_path_to_the_new_directory() {
    let root = tmpdir();
    let (old, new) = (
        root.path().join("topic-0"),
        root.path().join("topic-0.delete"),
    );
    std::fs::create_dir(&old).unwrap();
    let (_t, clock) = mock();
    let seg = new_segment(&old, 0, &config(10, 4096), clock);
    for i in 0..4 {
        seg.append(i, 1_000 + i, i, &v2(i, 1_000 + i)).unwrap();
    }
    seg.flush().unwrap();
    seg.unload_indexes().unwrap();
    assert!(!seg.has_suffix(".deleted"));
    std::fs::rename(&old, &new).unwrap();
    seg.update_parent_dir(&new);
    for path in [
        seg.log_path(),
        seg.offset_index_file(),
        seg.time_index_file(),
        seg.txn_index().path(),
    ] {
        assert_eq!(path.parent().unwrap(), new, "{path:?}");
    }
    // The indexes load from the new directory: lookups and reads work.
    let r = seg.read_up_to(2, 1 << 20, seg.size()).unwrap().unwrap();
    assert_eq!(offsets_in(&r.records), vec![2, 3]);
    assert_eq!(
        seg.find_offset_by_timestamp(1_003, 0)
            .unwrap()
            .unwrap()
            .offset,
        3
    );
    // Renames happen in the new directory.
    seg.change_file_suffixes("", ".deleted").unwrap();
    assert!(seg.has_suffix(".deleted"));
    assert!(new.join(format!("{:020}.log.deleted", 0)).is_file());
    assert!(!old.exists());
}
