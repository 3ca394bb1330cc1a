//! Synchronisation primitives, swapped for `loom`'s under `--cfg loom`.
//!
//! The memory orderings of the publication protocol are named here so that the loom
//! models can be run with a deliberately weakened ordering (`--cfg loom_weak_ordering`)
//! and shown to fail.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub(crate) use loom::sync::Arc;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicUsize, Ordering,
};
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;

/// Ordering with which the writer publishes a new entry count (after writing the bytes).
#[cfg(not(loom_weak_ordering))]
pub(crate) const PUBLISH: Ordering = Ordering::Release;
/// Ordering with which readers load the entry count (before reading the bytes).
#[cfg(not(loom_weak_ordering))]
pub(crate) const OBSERVE: Ordering = Ordering::Acquire;
#[cfg(loom_weak_ordering)]
pub(crate) const PUBLISH: Ordering = Ordering::Relaxed;
#[cfg(loom_weak_ordering)]
pub(crate) const OBSERVE: Ordering = Ordering::Relaxed;

/// Ordering of the fence between a reader's announcement (its slot's store) and its load
/// of the published mapping, and of the writer's fence between installing a mapping and
/// scanning the slots (see [`crate::readers`]). Weakened under `loom_weak_ordering` too.
#[cfg(not(loom_weak_ordering))]
pub(crate) const ANNOUNCE: Ordering = Ordering::SeqCst;
#[cfg(loom_weak_ordering)]
pub(crate) const ANNOUNCE: Ordering = Ordering::AcqRel;

/// A mutual-exclusion lock (parking_lot's, or loom's under loom).
#[derive(Debug, Default)]
pub(crate) struct Lock<T>(
    #[cfg(not(loom))] parking_lot::Mutex<T>,
    #[cfg(loom)] loom::sync::Mutex<T>,
);

impl<T> Lock<T> {
    pub(crate) fn new(v: T) -> Self {
        #[cfg(not(loom))]
        return Lock(parking_lot::Mutex::new(v));
        #[cfg(loom)]
        return Lock(loom::sync::Mutex::new(v));
    }
    #[cfg(not(loom))]
    pub(crate) fn lock(&self) -> parking_lot::MutexGuard<'_, T> {
        self.0.lock()
    }
    #[cfg(loom)]
    pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
        self.0.lock().unwrap()
    }
    /// The lock if it is free now, else `None` (never waits).
    #[cfg(not(loom))]
    pub(crate) fn try_lock(&self) -> Option<parking_lot::MutexGuard<'_, T>> {
        self.0.try_lock()
    }
    #[cfg(loom)]
    pub(crate) fn try_lock(&self) -> Option<loom::sync::MutexGuard<'_, T>> {
        self.0.try_lock().ok()
    }
}

/// The index writer's lock: [`crate::sys::StoreLock`] (released with a plain store), or
/// loom's mutex under loom (the loom models check the protocol around the lock, the
/// lock's own tests its exclusion).
#[cfg(not(loom))]
pub(crate) type WriterLock<T> = crate::sys::StoreLock<T>;
#[cfg(loom)]
pub(crate) type WriterLock<T> = Lock<T>;

/// A reader-writer lock (parking_lot's, or loom's under loom). Readers hold it only long
/// enough to clone an `Arc`.
#[derive(Debug, Default)]
pub(crate) struct Shared<T>(
    #[cfg(not(loom))] parking_lot::RwLock<T>,
    #[cfg(loom)] loom::sync::RwLock<T>,
);

impl<T> Shared<T> {
    pub(crate) fn new(v: T) -> Self {
        #[cfg(not(loom))]
        return Shared(parking_lot::RwLock::new(v));
        #[cfg(loom)]
        return Shared(loom::sync::RwLock::new(v));
    }
    #[cfg(not(loom))]
    pub(crate) fn read(&self) -> parking_lot::RwLockReadGuard<'_, T> {
        self.0.read()
    }
    #[cfg(loom)]
    pub(crate) fn read(&self) -> loom::sync::RwLockReadGuard<'_, T> {
        self.0.read().unwrap()
    }
    #[cfg(not(loom))]
    pub(crate) fn write(&self) -> parking_lot::RwLockWriteGuard<'_, T> {
        self.0.write()
    }
    #[cfg(loom)]
    pub(crate) fn write(&self) -> loom::sync::RwLockWriteGuard<'_, T> {
        self.0.write().unwrap()
    }
}

/// Yields while waiting for readers to drop an old mapping.
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// Aligns a value to its own 128-byte block (two cache lines: the adjacent-line
/// prefetcher of x86 pairs lines), so that the writer's lock and the published entry
/// count do not share a cache line with what readers touch on every lookup.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct CachePadded<T>(pub(crate) T);

impl<T> std::ops::Deref for CachePadded<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}
