//! `IndexFile` lifecycle with a custom 16-byte entry: create/reopen, append, entry,
//! truncate, resize, reset, trim, flush, close (idempotent), force_unmap, rename,
//! update_parent_dir, delete, read-only mode.

use std::fs;

use index_core::codec::{I64Be, IndexEntry};
use index_core::{IndexError, IndexFile, OpenMode};

#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Kv {
    k: I64Be,
    v: I64Be,
}
impl IndexEntry for Kv {
    const SIZE: usize = 16;
    const KIND: &'static str = "kv index";
    fn key(&self, base: i64) -> i64 {
        base + self.k.get()
    }
    fn value(&self, _base: i64) -> i64 {
        self.v.get()
    }
}
fn kv(k: i64, v: i64) -> Kv {
    Kv {
        k: I64Be::new(k),
        v: I64Be::new(v),
    }
}

#[test]
fn create_append_reopen() {
    let dir = crate::common::tmp();
    let path = dir.path().join("0.kv");
    let index = IndexFile::<Kv>::open(&path, 100, Some(100), OpenMode::ReadWrite).unwrap();
    assert_eq!(
        (index.length(), index.max_entries(), index.entries()),
        (96, 6, 0)
    );
    assert_eq!(index.max_index_size(), Some(100));
    assert_eq!(index.base_offset(), 100);
    assert!(index.is_writable());
    assert_eq!(index.last_entry().unwrap(), None);
    for i in 0..6 {
        index.append(&kv(i, i * 10)).unwrap();
    }
    assert!(index.is_full());
    match index.append(&kv(6, 60)) {
        Err(IndexError::IndexFull { kind, entries, .. }) => {
            assert_eq!((kind, entries), ("kv index", 6))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(index.entry(5).unwrap(), kv(5, 50));
    assert_eq!(index.size_in_bytes(), 96);
    let snap = index.snapshot().unwrap();
    assert_eq!(snap.len(), 6);
    assert_eq!(snap.base_offset(), 100);
    assert_eq!(snap.last(), Some(kv(5, 50)));
    drop(snap);
    index.flush().unwrap();
    let bytes = fs::read(&path).unwrap();
    assert_eq!(
        &bytes[16..32],
        &[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 10]
    );
    index.close().unwrap();
    index.close().unwrap(); // idempotent after a clean close
    assert!(matches!(index.entry(0), Err(IndexError::Closed { .. })));

    // Reopen read-only: every slot counts; writes are InvalidArgument.
    let ro = IndexFile::<Kv>::open(&path, 100, None, OpenMode::ReadOnly).unwrap();
    assert_eq!((ro.entries(), ro.max_entries()), (6, 6));
    assert!(!ro.is_writable());
    assert!(matches!(
        ro.resize(4096),
        Err(IndexError::InvalidArgument { .. })
    ));
    assert!(matches!(
        ro.truncate_to_entries(7),
        Err(IndexError::InvalidArgument { .. })
    ));
    let (whole, len) = ro.length_is_whole_slots().unwrap();
    assert_eq!((whole, len), (true, 96));
}

#[test]
fn truncate_resize_reset() {
    let dir = crate::common::tmp();
    let path = dir.path().join("0.kv");
    let index = IndexFile::<Kv>::open(&path, 0, Some(160), OpenMode::ReadWrite).unwrap();
    for i in 0..5 {
        index.append(&kv(i, i)).unwrap();
    }
    assert!(matches!(
        index.truncate_to_entries(6),
        Err(IndexError::InvalidArgument { .. })
    ));
    index.truncate_to_entries(2).unwrap();
    assert_eq!(index.entries(), 2);
    assert_eq!(index.last_entry().unwrap(), Some(kv(1, 1)));
    // Bytes of the truncated slots are left in place (Kafka's truncateToEntries).
    index.flush().unwrap();
    assert_eq!(
        &fs::read(&path).unwrap()[64..80],
        bytemuck::bytes_of(&kv(4, 4))
    );
    assert!(index.trim_to_valid_size().unwrap());
    assert_eq!(fs::metadata(&path).unwrap().len(), 32);
    assert!(matches!(
        index.resize(31),
        Err(IndexError::InvalidArgument { .. })
    ));
    assert!(index.resize(1000).unwrap());
    assert_eq!((index.length(), index.max_entries()), (992, 62));
    index.reset().unwrap();
    assert_eq!((index.entries(), index.length()), (0, 160));
    assert_eq!(fs::metadata(&path).unwrap().len(), 160);
}

#[test]
fn close_after_force_unmap_is_closed_and_leaves_file_untrimmed() {
    let dir = crate::common::tmp();
    let path = dir.path().join("0.kv");
    let index = IndexFile::<Kv>::open(&path, 0, Some(160), OpenMode::ReadWrite).unwrap();
    index.append(&kv(1, 1)).unwrap();
    index.force_unmap();
    assert_eq!(index.length(), 0);
    assert!(matches!(index.snapshot(), Err(IndexError::Closed { .. })));
    assert!(matches!(
        index.append(&kv(2, 2)),
        Err(IndexError::Closed { .. })
    ));
    assert!(matches!(index.resize(320), Err(IndexError::Closed { .. })));
    assert!(matches!(index.close(), Err(IndexError::Closed { .. })));
    assert_eq!(fs::metadata(&path).unwrap().len(), 160, "untrimmed");
}

#[test]
fn rename_update_parent_dir_delete() {
    let dir = crate::common::tmp();
    let a = dir.path().join("0.kv");
    let b = dir.path().join("0.kv.deleted");
    let index = IndexFile::<Kv>::open(&a, 0, Some(64), OpenMode::ReadWrite).unwrap();
    index.append(&kv(3, 3)).unwrap();
    index.rename_to(&b).unwrap();
    assert_eq!(index.path(), b);
    assert!(!a.exists() && b.exists());
    assert_eq!(
        index.entry(0).unwrap(),
        kv(3, 3),
        "the mapping survives a rename"
    );
    // update_parent_dir changes only the stored path.
    let other = crate::common::tmp();
    index.update_parent_dir(other.path());
    assert_eq!(index.path(), other.path().join("0.kv.deleted"));
    assert!(b.exists());
    // Renaming a file that does not exist (stored path points nowhere) only updates the
    // stored path (Kafka's lazy index behaviour).
    let c = other.path().join("0.kv");
    index.rename_to(&c).unwrap();
    assert_eq!(index.path(), c);
    assert!(!c.exists());
    assert!(
        !index.delete_if_exists().unwrap(),
        "nothing at the stored path"
    );
    assert!(matches!(index.entry(0), Err(IndexError::Closed { .. })));

    let index = IndexFile::<Kv>::open(&a, 0, Some(64), OpenMode::ReadWrite).unwrap();
    assert!(index.delete_if_exists().unwrap());
    assert!(!a.exists());
}

#[test]
fn open_errors() {
    let dir = crate::common::tmp();
    let missing = dir.path().join("missing.kv");
    assert!(matches!(
        IndexFile::<Kv>::open(&missing, 0, Some(64), OpenMode::ReadOnly),
        Err(IndexError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound
    ));
    assert!(!missing.exists());
    assert!(matches!(
        IndexFile::<Kv>::open(&missing, 0, Some(15), OpenMode::ReadWrite),
        Err(IndexError::InvalidArgument { reason, .. }) if reason.contains("15")
    ));
    assert_eq!(fs::metadata(&missing).unwrap().len(), 0);
    // A directory is not an index file.
    assert!(matches!(
        IndexFile::<Kv>::open(dir.path(), 0, Some(64), OpenMode::ReadOnly),
        Err(index_core::IndexError::Io { .. })
    ));
}

/// Open file descriptors of this process (Linux) that refer to a file under `dir` (other
/// tests of this binary open files concurrently, so all descriptors would be flaky).
#[cfg(target_os = "linux")]
fn open_fds_in(dir: &std::path::Path) -> usize {
    fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.starts_with(dir))
        .count()
}

/// Issue 19, F4: an index holds no file descriptor once it is mapped (Kafka closes its
/// `RandomAccessFile` right after mapping, too). Every operation that needs the file —
/// growing and shrinking resizes, trim, reset, installing the page directory — opens it
/// by its current path for the call (so also after a rename or a parent-directory move),
/// and `flush` (`msync`) needs none. Before the fix each index kept its descriptor until
/// it was closed, and 64 indexes held 64 descriptors.
#[cfg(target_os = "linux")]
#[test]
fn mapped_indexes_hold_no_file_descriptor() {
    let dir = crate::common::tmp();
    let before = open_fds_in(dir.path());
    assert_eq!(before, 0);
    let indexes: Vec<_> = (0..64)
        .map(|i| {
            let path = dir.path().join(format!("{i}.kv"));
            let ix = IndexFile::<Kv>::open(&path, 0, Some(160), OpenMode::ReadWrite).unwrap();
            ix.append(&kv(1, 10)).unwrap();
            ix
        })
        .collect();
    assert_eq!(
        open_fds_in(dir.path()),
        before,
        "64 mapped indexes hold descriptors"
    );
    for (i, ix) in indexes.iter().enumerate() {
        // A rename, then every file operation by the new path.
        let renamed = dir.path().join(format!("{i}.renamed"));
        ix.rename_to(&renamed).unwrap();
        assert!(ix.resize(320).unwrap());
        assert_eq!(fs::metadata(&renamed).unwrap().len(), 320);
        ix.append(&kv(2, 20)).unwrap();
        ix.flush().unwrap();
        assert!(ix.trim_to_valid_size().unwrap());
        assert_eq!(fs::metadata(&renamed).unwrap().len(), 32);
        ix.reset().unwrap();
        assert_eq!(fs::metadata(&renamed).unwrap().len(), 160);
        ix.append(&kv(3, 30)).unwrap();
    }
    let indexes: Vec<_> = indexes
        .into_iter()
        .map(|ix| {
            ix.with_search_strategy(index_core::SearchStrategy::PageDirectory { page_size: 4096 })
        })
        .collect();
    assert_eq!(
        open_fds_in(dir.path()),
        before,
        "resizes or the page directory kept descriptors"
    );
    for (i, ix) in indexes.iter().enumerate() {
        assert_eq!(ix.entry(0).unwrap(), kv(3, 30));
        ix.close().unwrap();
        assert_eq!(
            fs::read(dir.path().join(format!("{i}.renamed"))).unwrap(),
            bytemuck::bytes_of(&kv(3, 30))
        );
    }
    // Reopened read-only: no descriptor either.
    let ro: Vec<_> = (0..64)
        .map(|i| {
            let p = dir.path().join(format!("{i}.renamed"));
            IndexFile::<Kv>::open(&p, 0, None, OpenMode::ReadOnly).unwrap()
        })
        .collect();
    assert_eq!(open_fds_in(dir.path()), before);
    assert!(ro.iter().all(|ix| ix.entries() == 1));
}

/// A resize that cannot open the file (here: it was removed under the index) is an
/// `IndexError::Io` naming the path, and leaves the index unchanged and usable.
#[test]
fn resize_that_cannot_open_the_file_changes_nothing() {
    let dir = crate::common::tmp();
    let path = dir.path().join("0.kv");
    let ix = IndexFile::<Kv>::open(&path, 0, Some(160), OpenMode::ReadWrite).unwrap();
    ix.append(&kv(1, 10)).unwrap();
    fs::remove_file(&path).unwrap();
    match ix.resize(320) {
        Err(IndexError::Io { path: p, source }) => {
            assert_eq!(p, path);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
    assert_eq!(ix.max_entries(), 10);
    assert_eq!(ix.entry(0).unwrap(), kv(1, 10));
    ix.append(&kv(2, 20)).unwrap();
    assert_eq!(ix.entries(), 2);
}
