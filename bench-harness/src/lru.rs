//! A simulated page cache with least-recently-used eviction.
//!
//! The simulation answers one question: "if the operating system kept only the
//! `capacity` (in pages) most recently touched pages of this index file in memory, how
//! many page touches would have faulted?" It is deliberately simple: every touch is a
//! use, the least recently used page is evicted when a new page arrives at a full cache,
//! and nothing is prefetched.

use std::collections::{BTreeMap, HashMap};

/// An LRU set of page numbers (byte offset / page size) with a fixed capacity in pages.
///
/// Each [`LruPageCache::touch`] costs `O(log capacity)`.
#[derive(Clone, Debug)]
pub struct LruPageCache {
    capacity: usize,
    clock: u64,
    last_use: HashMap<usize, u64>,
    by_age: BTreeMap<u64, usize>,
    faults: u64,
    hits: u64,
}

impl LruPageCache {
    /// An empty cache holding at most `capacity` pages. A capacity of 0 makes every touch
    /// a fault.
    pub fn new(capacity: usize) -> Self {
        LruPageCache {
            capacity,
            clock: 0,
            last_use: HashMap::with_capacity(capacity.min(1 << 16) + 1),
            by_age: BTreeMap::new(),
            faults: 0,
            hits: 0,
        }
    }

    /// Capacity in pages.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of pages currently resident.
    pub fn len(&self) -> usize {
        self.last_use.len()
    }

    /// Whether no page is resident.
    pub fn is_empty(&self) -> bool {
        self.last_use.is_empty()
    }

    /// Whether `page` is resident (does not count as a use).
    pub fn contains(&self, page: usize) -> bool {
        self.last_use.contains_key(&page)
    }

    /// Uses `page`: returns `true` if it was not resident (a fault, after which it is
    /// resident, evicting the least recently used page if the cache was full) and `false`
    /// on a hit (it becomes the most recently used page).
    pub fn touch(&mut self, page: usize) -> bool {
        self.clock += 1;
        let now = self.clock;
        if let Some(prev) = self.last_use.insert(page, now) {
            self.by_age.remove(&prev);
            self.by_age.insert(now, page);
            self.hits += 1;
            return false;
        }
        self.faults += 1;
        if self.capacity == 0 {
            self.last_use.remove(&page);
            return true;
        }
        self.by_age.insert(now, page);
        if self.last_use.len() > self.capacity {
            if let Some((_, victim)) = self.by_age.pop_first() {
                self.last_use.remove(&victim);
            }
        }
        true
    }

    /// Faults (touches of non-resident pages) so far.
    pub fn faults(&self) -> u64 {
        self.faults
    }

    /// Hits (touches of resident pages) so far.
    pub fn hits(&self) -> u64 {
        self.hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used() {
        let mut c = LruPageCache::new(2);
        assert!(c.touch(1));
        assert!(c.touch(2));
        assert!(!c.touch(1)); // 1 is now most recent
        assert!(c.touch(3)); // evicts 2
        assert!(c.contains(1) && c.contains(3) && !c.contains(2));
        assert!(c.touch(2)); // evicts 1
        assert!(!c.contains(1));
        assert_eq!((c.faults(), c.hits(), c.len()), (4, 1, 2));
    }

    #[test]
    fn zero_capacity_always_faults() {
        let mut c = LruPageCache::new(0);
        assert!(c.touch(5));
        assert!(c.touch(5));
        assert_eq!((c.faults(), c.hits()), (2, 0));
        assert!(c.is_empty());
    }
}
