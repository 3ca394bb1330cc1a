//! Regression test for a SIGBUS found by the offset-index concurrency test: a reader that
//! still holds a mapping from *before a grow* must keep the file long enough for it when
//! the writer later shrinks the file. Before the fix, a shrink waited only for readers of
//! the mapping it replaced, cut the file, and the older reader's next slot read past
//! end-of-file killed the process with SIGBUS.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use index_core::codec::{I64Be, IndexEntry};
use index_core::{IndexFile, OpenMode};

#[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Kv {
    k: I64Be,
    v: I64Be,
}
impl IndexEntry for Kv {
    const SIZE: usize = 16;
    const KIND: &'static str = "kv index";
    fn key(&self, _base: i64) -> i64 {
        self.k.get()
    }
    fn value(&self, _base: i64) -> i64 {
        self.v.get()
    }
}

fn kv(i: i64) -> Kv {
    Kv {
        k: I64Be::new(i),
        v: I64Be::new(i * 100),
    }
}

#[test]
fn shrink_waits_for_readers_of_mappings_older_than_the_last_grow() {
    let dir = crate::common::tmp();
    let index = std::sync::Arc::new(
        IndexFile::<Kv>::open(
            dir.path().join("0.kv"),
            0,
            Some(64 * 1024),
            OpenMode::ReadWrite,
        )
        .unwrap(),
    );
    for i in 0..4096 {
        index.append(&kv(i)).unwrap(); // fills the 64 KiB mapping A
    }

    // A reader takes a snapshot of mapping A (4096 slots) and holds it.
    let (held_tx, held_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let reader = {
        let index = index.clone();
        thread::spawn(move || {
            let snap = index.snapshot().unwrap();
            assert_eq!(snap.len(), 4096);
            held_tx.send(()).unwrap();
            go_rx.recv().unwrap();
            // Reads every slot of A, up to byte 64 KiB: past the end of file if the
            // writer had cut it to 16 bytes.
            let sum: i64 = snap.slots().iter().map(|e| e.key(0)).sum();
            assert_eq!(sum, (0..4096).sum::<i64>());
        })
    };
    held_rx.recv().unwrap();

    // Grow (A is replaced by B), truncate, then shrink to 1 slot in another thread.
    assert!(index.resize(128 * 1024).unwrap());
    index.truncate_to_entries(1).unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    let writer = {
        let index = index.clone();
        thread::spawn(move || {
            let r = index.trim_to_valid_size();
            done_tx.send(()).unwrap();
            r
        })
    };
    // The shrink must not complete while the reader still holds A.
    assert!(
        done_rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "trim_to_valid_size cut the file under a reader of an older mapping"
    );
    go_tx.send(()).unwrap();
    reader.join().unwrap();
    assert!(writer.join().unwrap().unwrap());
    done_rx.recv().unwrap();
    assert_eq!(index.length(), 16);
    assert_eq!(
        std::fs::metadata(dir.path().join("0.kv")).unwrap().len(),
        16
    );
    assert_eq!(index.entry(0).unwrap(), kv(0));
}

/// A snapshot taken before `with_search_strategy` (which remaps to install or drop the
/// page directory) is also protected against a later shrink.
#[test]
fn snapshot_from_before_strategy_change_survives_shrink() {
    let dir = crate::common::tmp();
    let index = IndexFile::<Kv>::open(
        dir.path().join("0.kv"),
        0,
        Some(16 * 1024),
        OpenMode::ReadWrite,
    )
    .unwrap();
    for i in 0..1024 {
        index.append(&kv(i)).unwrap();
    }
    let snap = index.snapshot().unwrap();
    let index = std::sync::Arc::new(
        index.with_search_strategy(index_core::SearchStrategy::PageDirectory { page_size: 4096 }),
    );
    index.truncate_to_entries(2).unwrap();
    let writer = {
        let index = index.clone();
        thread::spawn(move || index.trim_to_valid_size().unwrap())
    };
    thread::sleep(Duration::from_millis(100));
    assert_eq!(snap.slots()[1023], kv(1023), "old mapping still readable");
    drop(snap);
    assert!(writer.join().unwrap());
    assert_eq!(index.length(), 32);
}
