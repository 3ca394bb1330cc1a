//! `IndexFile` lifecycle with a custom 16-byte entry: create/reopen, append, entry,
//! truncate, resize, reset, trim, flush, close (idempotent), force_unmap, rename,
//! update_parent_dir, delete, read-only mode.

mod common;

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
    let dir = common::tmp();
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
    let dir = common::tmp();
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
    let dir = common::tmp();
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
    let dir = common::tmp();
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
    let other = common::tmp();
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
    let dir = common::tmp();
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
