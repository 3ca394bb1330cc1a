//! Helpers shared by the index-core integration tests.

use std::path::Path;

/// A temporary directory, on tmpfs (`/dev/shm`) when available: closing and trimming
/// indexes `msync`s them, which makes tests on a real disk I/O-bound. Mapping semantics
/// are the same on both.
pub fn tmp() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::Builder::new().prefix("idx-test").tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().expect("temp dir")
}

use index_core::codec::{I32Be, I64Be, IndexEntry};

/// An 8-byte entry like the offset index's: the key relative to the base offset, the
/// value absolute.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct E8 {
    pub k: I32Be,
    pub v: I32Be,
}

impl IndexEntry for E8 {
    const SIZE: usize = 8;
    const KIND: &'static str = "e8 index";
    fn key(&self, base: i64) -> i64 {
        base + self.k.get() as i64
    }
    fn value(&self, _base: i64) -> i64 {
        self.v.get() as i64
    }
}

/// A 12-byte entry like the time index's: the key absolute, the value relative to the
/// base offset.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct E12 {
    pub k: I64Be,
    pub v: I32Be,
}

impl IndexEntry for E12 {
    const SIZE: usize = 12;
    const KIND: &'static str = "e12 index";
    fn key(&self, _base: i64) -> i64 {
        self.k.get()
    }
    fn value(&self, base: i64) -> i64 {
        base + self.v.get() as i64
    }
}

/// The entry of key `k` and value `v` in an index of base offset `base`.
pub fn e8(base: i64, k: i64, v: i64) -> E8 {
    E8 {
        k: I32Be::new((k - base) as i32),
        v: I32Be::new(v as i32),
    }
}

/// The entry of key `k` and value `v` in an index of base offset `base`.
pub fn e12(base: i64, k: i64, v: i64) -> E12 {
    E12 {
        k: I64Be::new(k),
        v: I32Be::new((v - base) as i32),
    }
}
