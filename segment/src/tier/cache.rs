//! [`RemoteIndexCache`]: a bounded cache of remote segments' indexes, Kafka's
//! `RemoteIndexCache` (`docs/kafka-behaviour.md#remote-index-cache`).

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use index_offset::OffsetPosition;
use parking_lot::{Mutex, RwLock};

use crate::error::Result;
use crate::tier::RemoteIndexes;

/// One cached entry: the shared indexes, their weight, and when they were last used.
#[derive(Debug)]
struct Slot {
    indexes: Arc<RemoteIndexes>,
    weight: usize,
    /// The cache's clock at the last hit (larger = more recent).
    last_used: AtomicU64,
}

/// A load in flight for one key: loaders of the key take turns on `lock`; a removal of
/// the key counts in `removals`, so a load that a removal overlapped is not cached.
#[derive(Debug, Default)]
struct Flight {
    lock: Mutex<()>,
    removals: AtomicU64,
}

#[derive(Debug)]
struct Inner<K, S> {
    map: HashMap<K, Slot, S>,
    flights: HashMap<K, Arc<Flight>, S>,
    weight: usize,
}

/// The default hasher of a [`RemoteIndexCache`]'s map: a multiplicative hash of the key's
/// words (Fx-style), a few cycles for a segment id. Remote segment ids come from the
/// broker's remote log metadata, not from clients, so the map needs no protection
/// against chosen collisions; pass another `BuildHasher` (`RandomState`) if it does.
#[derive(Clone, Copy, Debug, Default)]
pub struct SegmentIdHasher(u64);

impl SegmentIdHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for SegmentIdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let mut w = [0u8; 8];
        w[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.add(u64::from_le_bytes(w));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Counters of a [`RemoteIndexCache`], for tests and metrics. Hits are not counted, so
/// that a hit writes no shared counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Calls of [`RemoteIndexCache::get_or_load`] that missed and ran (or waited for) a
    /// load.
    pub misses: u64,
    /// Loads run (at most one at a time per key).
    pub loads: u64,
    /// Entries evicted to stay within the capacity.
    pub evictions: u64,
}

/// A bounded cache of remote segments' indexes ([`RemoteIndexes`]), keyed by the remote
/// segment's id `K` (Kafka's `RemoteLogSegmentId`'s uuid), weighted by the bytes the
/// indexes hold, evicting the least recently used entry first: Kafka's
/// `RemoteIndexCache` (`remote.log.index.file.cache.total.size.bytes`), in memory
/// (`docs/kafka-behaviour.md#remote-index-cache`).
///
/// Entries are handed out as `Arc<RemoteIndexes>`: an entry evicted or removed while a
/// reader holds it stays valid for that reader until it drops it, and the cache never
/// hands out an entry after its eviction or removal (the races Kafka fixed in
/// KAFKA-15481, 15511, 15169, 17184 and 19971 are each a test of
/// `segment/tests/log/remote_index_cache.rs`). Only one load runs at a time per key;
/// a failed load caches nothing.
///
/// A hit takes the shared lock and stamps the entry with the cache's clock, which moves
/// at each insertion: recency is kept at the granularity of insertions (the order that
/// eviction needs), and a hit of an entry already stamped writes nothing shared beyond
/// the lock word. Insertions, evictions and removals take the exclusive lock; eviction
/// scans for the oldest stamp (ties: any of them).
#[derive(Debug)]
pub struct RemoteIndexCache<K: Eq + Hash + Clone, S = BuildHasherDefault<SegmentIdHasher>> {
    inner: RwLock<Inner<K, S>>,
    capacity_bytes: usize,
    clock: AtomicU64,
    misses: AtomicU64,
    loads: AtomicU64,
    evictions: AtomicU64,
}

impl<K: Eq + Hash + Clone> RemoteIndexCache<K> {
    /// An empty cache holding at most `capacity_bytes` of index bytes (Kafka's default
    /// is 1 GiB), with the [`SegmentIdHasher`]. An entry larger than the capacity is
    /// loaded and returned, not cached.
    pub fn new(capacity_bytes: usize) -> Self {
        Self::with_hasher(capacity_bytes)
    }
}

impl<K: Eq + Hash + Clone, S: BuildHasher + Default> RemoteIndexCache<K, S> {
    /// [`RemoteIndexCache::new`] with the map's hasher `S`.
    pub fn with_hasher(capacity_bytes: usize) -> Self {
        RemoteIndexCache {
            inner: RwLock::new(Inner {
                map: HashMap::default(),
                flights: HashMap::default(),
                weight: 0,
            }),
            capacity_bytes,
            clock: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            loads: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }

    /// The capacity, in bytes.
    pub fn capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }

    /// The cached entry of `key`, marked as just used; `None` on a miss.
    #[inline]
    pub fn get(&self, key: &K) -> Option<Arc<RemoteIndexes>> {
        self.with(key, Arc::clone)
    }

    /// `f` of the cached entry of `key`, marked as just used, without cloning the `Arc`
    /// (under the shared lock: `f` should be short, a lookup); `None` on a miss.
    #[inline]
    pub fn with<R>(&self, key: &K, f: impl FnOnce(&Arc<RemoteIndexes>) -> R) -> Option<R> {
        let inner = self.inner.read();
        let slot = inner.map.get(key)?;
        let now = self.clock.load(Ordering::Relaxed);
        if slot.last_used.load(Ordering::Relaxed) < now {
            slot.last_used.fetch_max(now, Ordering::Relaxed);
        }
        Some(f(&slot.indexes))
    }

    /// Kafka's `RemoteIndexCache.lookupOffset` on a hit: the cached offset index's
    /// [`lookup`](index_offset::OffsetIndexView::lookup) of `offset`; `None` on a miss.
    #[inline]
    pub fn lookup_offset(&self, key: &K, offset: i64) -> Option<OffsetPosition> {
        self.with(key, |e| e.offset_index.lookup(offset))
    }

    /// The entry of `key`: cached, or loaded with `load` (Kafka's `getIndexEntry`, which
    /// fetches the indexes from the remote storage manager on a miss). Concurrent
    /// callers for one key wait for a single load; a load whose key is
    /// [`remove`](Self::remove)d meanwhile is returned to its callers but not cached.
    ///
    /// # Errors
    /// The error of `load` (e.g. `CorruptIndex` for bytes the views refuse); nothing is
    /// cached then, and the next call loads again.
    pub fn get_or_load(
        &self,
        key: &K,
        load: impl FnOnce() -> Result<RemoteIndexes>,
    ) -> Result<Arc<RemoteIndexes>> {
        if let Some(hit) = self.get(key) {
            return Ok(hit);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let flight = {
            let mut inner = self.inner.write();
            if let Some(slot) = inner.map.get(key) {
                // Loaded between the two locks.
                return Ok(Arc::clone(&slot.indexes));
            }
            Arc::clone(inner.flights.entry(key.clone()).or_default())
        };
        let _guard = flight.lock.lock();
        // A loader before us may have finished while we waited.
        {
            let mut inner = self.inner.write();
            if let Some(slot) = inner.map.get(key) {
                let hit = Arc::clone(&slot.indexes);
                retire(&mut inner, key, &flight);
                return Ok(hit);
            }
        }
        self.loads.fetch_add(1, Ordering::Relaxed);
        let removals = flight.removals.load(Ordering::Acquire);
        let loaded = load();
        let mut inner = self.inner.write();
        retire(&mut inner, key, &flight);
        let indexes = Arc::new(loaded?);
        if flight.removals.load(Ordering::Acquire) != removals {
            return Ok(indexes);
        }
        let weight = indexes.size_in_bytes();
        if weight > self.capacity_bytes {
            return Ok(indexes);
        }
        while inner.weight + weight > self.capacity_bytes {
            let Some(victim) = inner
                .map
                .iter()
                .min_by_key(|(_, s)| s.last_used.load(Ordering::Relaxed))
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(old) = inner.map.remove(&victim) {
                inner.weight -= old.weight;
                self.evictions.fetch_add(1, Ordering::Relaxed);
            }
        }
        let now = self.clock.fetch_add(1, Ordering::Relaxed) + 1;
        inner.weight += weight;
        if let Some(old) = inner.map.insert(
            key.clone(),
            Slot {
                indexes: Arc::clone(&indexes),
                weight,
                last_used: AtomicU64::new(now),
            },
        ) {
            inner.weight -= old.weight;
        }
        Ok(indexes)
    }

    /// Removes `key`'s entry (Kafka's `remove`, when the remote segment is deleted); a
    /// load of `key` in flight is not cached when it ends. Readers holding the entry keep
    /// it. Returns whether an entry was cached.
    pub fn remove(&self, key: &K) -> bool {
        let mut inner = self.inner.write();
        if let Some(f) = inner.flights.get(key) {
            f.removals.fetch_add(1, Ordering::AcqRel);
        }
        match inner.map.remove(key) {
            Some(old) => {
                inner.weight -= old.weight;
                true
            }
            None => false,
        }
    }

    /// [`remove`](Self::remove) of each key (Kafka's `removeAll`).
    pub fn remove_all<'a>(&self, keys: impl IntoIterator<Item = &'a K>) -> usize
    where
        K: 'a,
    {
        keys.into_iter().filter(|k| self.remove(k)).count()
    }

    /// Number of cached entries.
    pub fn len(&self) -> usize {
        self.inner.read().map.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the cached entries (never above the capacity).
    pub fn weight(&self) -> usize {
        self.inner.read().weight
    }

    /// Whether `key` is cached, without marking it used.
    pub fn contains(&self, key: &K) -> bool {
        self.inner.read().map.contains_key(key)
    }

    /// The counters so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            misses: self.misses.load(Ordering::Relaxed),
            loads: self.loads.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
        }
    }
}

/// Drops `key`'s flight from the map when it is `flight` and only the map and the caller
/// hold it (no other loader waits on it); called under the exclusive lock.
fn retire<K: Eq + Hash, S: BuildHasher>(inner: &mut Inner<K, S>, key: &K, flight: &Arc<Flight>) {
    if inner
        .flights
        .get(key)
        .is_some_and(|f| Arc::ptr_eq(f, flight))
        && Arc::strong_count(flight) == 2
    {
        inner.flights.remove(key);
    }
}
