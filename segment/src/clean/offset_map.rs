//! The cleaner's offset map: the latest offset of each key of the dirty section, with
//! the capacity accounting of Kafka's `SkimpyOffsetMap`
//! (`docs/kafka-behaviour.md#cleaner-offset-map`).
//!
//! Kafka sizes the map in bytes and charges every key 24 of them (its 16-byte MD5 and an
//! 8-byte offset): `slots = memory / 24`, and one clean puts at most
//! `⌊slots × load factor⌋` keys. The number of keys a clean maps decides where it stops
//! (the first offset it leaves dirty), so [`OffsetMap`] counts exactly as Kafka does: it
//! keys by the full MD5 of the key (two keys are one entry only if their MD5s are
//! equal, as in Kafka, so the count and therefore the stop offset are Kafka's), and
//! [`MapFill`] applies Kafka's stop rule batch by batch.
//!
//! Memory is where it differs: Kafka allocates and zeroes `memory` bytes up front for
//! every clean; a build here ([`build_offset_map`](super::build_offset_map)) allocates
//! the table once, at the size the keys of its offset range can need (at most one key
//! an offset, at most `max_entries`), never beyond `slots` entries of 24 bytes, so it
//! never holds more than Kafka's buffer (nor the old and a new table at once), and a
//! clean of a few offsets costs a few kilobytes ([`OffsetMap::memory_bytes`]). Out of
//! the same budget it keeps two bits an offset of the range: which offsets the build put,
//! and which of those are still their key's latest, so that the copy decides a record
//! of the dirty section without its key's MD5 or a probe ([`OffsetMap::is_latest`]).

use md5::{Digest, Md5};

use super::CleanError;

/// Bytes Kafka charges a key: a 16-byte MD5 and an 8-byte offset.
pub const BYTES_PER_ENTRY: u32 = 24;

/// First table size, in slots (grown by doubling up to the capacity's slots).
const INITIAL_SLOTS: usize = 1024;

/// The capacity of an offset map: its memory in bytes, its slots and the keys one clean
/// may put (Kafka's `SkimpyOffsetMap.slots` and the `Cleaner`'s `maxDesiredMapSize`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OffsetMapCapacity {
    memory_bytes: u32,
    slots: u32,
    max_entries: u32,
    load_factor: f64,
}

impl OffsetMapCapacity {
    /// The capacity of a map of `memory_bytes` (at most `i32::MAX`, Kafka's `int`) filled
    /// to `load_factor`: `slots = memory_bytes / 24`,
    /// `max_entries = ⌊slots × load_factor⌋` (Java's `(int)` of the `double` product).
    ///
    /// # Errors
    /// [`CleanError::OffsetMapTooSmall`] when `slots × load_factor < 1`: the map would take
    /// no key, and a clean would never make progress (Kafka 4.4's `Cleaner` only
    /// `assert`s `slots × load_factor > 1`, which a broker does not check, and then
    /// cleans nothing, round after round); [`CleanError::InvalidConfig`] for more than
    /// `i32::MAX` bytes or a load factor that is not finite.
    pub fn new(memory_bytes: u32, load_factor: f64) -> Result<Self, CleanError> {
        if memory_bytes > i32::MAX as u32 {
            return Err(CleanError::bad(
                "log.cleaner.dedupe.buffer.size",
                memory_bytes,
                "a thread's share must be at most 2147483647 bytes",
            ));
        }
        if !load_factor.is_finite() {
            return Err(CleanError::bad(
                "log.cleaner.io.buffer.load.factor",
                load_factor,
                "must be finite",
            ));
        }
        let slots = memory_bytes / BYTES_PER_ENTRY;
        let product = f64::from(slots) * load_factor;
        // Kafka 4.4 only `assert`s `slots * factor > 1` (assertions are off in a broker):
        // below 1 its clean puts no key and never makes progress. That is refused here.
        if product < 1.0 {
            return Err(CleanError::OffsetMapTooSmall { slots, load_factor });
        }
        Ok(OffsetMapCapacity {
            memory_bytes,
            slots,
            // Java's d2i: truncation toward zero, saturating at i32::MAX.
            max_entries: product.min(f64::from(i32::MAX)) as u32,
            load_factor,
        })
    }

    /// The bytes Kafka allocates for the map (one thread's dedupe buffer share).
    pub fn memory_bytes(&self) -> u32 {
        self.memory_bytes
    }

    /// Kafka's `slots`: `memory_bytes / 24`, the most keys the map can hold.
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// Kafka's `maxDesiredMapSize`: `⌊slots × load factor⌋`, the keys one clean puts
    /// before it stops.
    pub fn max_entries(&self) -> u32 {
        self.max_entries
    }

    /// The load factor it was built with.
    pub fn load_factor(&self) -> f64 {
        self.load_factor
    }
}

/// The MD5 of a record key, the identity of a key in the offset map (as Kafka's
/// `SkimpyOffsetMap` with its default hash algorithm).
pub fn key_digest(key: &[u8]) -> [u8; 16] {
    Md5::digest(key).into()
}

/// MD5's per-step constants (RFC 1321: `⌊|sin(i + 1)| × 2³²⌋`).
const MD5_K: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

/// MD5's rotations, by round and step within the round's group of four.
const MD5_S: [[u32; 4]; 4] = [
    [7, 12, 17, 22],
    [5, 9, 14, 20],
    [4, 11, 16, 23],
    [6, 10, 15, 21],
];

/// Lanes of [`md5_lanes`].
const LANES: usize = 4;

/// The longest key MD5 pads into one 64-byte block.
const ONE_BLOCK_KEY: usize = 55;

/// The MD5 of `LANES` keys of at most [`ONE_BLOCK_KEY`] bytes at once: the same
/// arithmetic as [`key_digest`], lane by lane, so the processor runs the four
/// independent chains side by side (one MD5 is a chain of 64 dependent steps).
fn md5_lanes(keys: [&[u8]; LANES]) -> [[u8; 16]; LANES] {
    // The padded block of each lane, as words: m[word][lane].
    let mut m = [[0u32; LANES]; 16];
    for (lane, key) in keys.iter().enumerate() {
        let mut block = [0u8; 64];
        let n = key.len().min(ONE_BLOCK_KEY);
        block[..n].copy_from_slice(&key[..n]);
        block[n] = 0x80;
        block[56..].copy_from_slice(&((n as u64) * 8).to_le_bytes());
        for (w, chunk) in block.chunks_exact(4).enumerate() {
            m[w][lane] = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
    }
    let init = [0x6745_2301u32, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
    let (mut a, mut b, mut c, mut d) = (
        [init[0]; LANES],
        [init[1]; LANES],
        [init[2]; LANES],
        [init[3]; LANES],
    );
    // One loop a round, so that each step's function is fixed and the four lanes of a
    // step are one vector operation.
    macro_rules! round {
        ($round:expr, $g:expr, $f:expr) => {
            for i in 16 * $round..16 * $round + 16 {
                let g: usize = $g(i);
                let s = MD5_S[$round][i % 4];
                let k = MD5_K[i];
                let mg = m[g];
                let mut t = [0u32; LANES];
                for l in 0..LANES {
                    t[l] = $f(b[l], c[l], d[l])
                        .wrapping_add(a[l])
                        .wrapping_add(k)
                        .wrapping_add(mg[l]);
                }
                a = d;
                d = c;
                c = b;
                for l in 0..LANES {
                    b[l] = b[l].wrapping_add(t[l].rotate_left(s));
                }
            }
        };
    }
    round!(0, |i| i, |b: u32, c: u32, d: u32| (b & c) | (!b & d));
    round!(1, |i| (5 * i + 1) % 16, |b: u32, c: u32, d: u32| (d & b)
        | (!d & c));
    round!(2, |i| (3 * i + 5) % 16, |b: u32, c: u32, d: u32| b ^ c ^ d);
    round!(3, |i| (7 * i) % 16, |b: u32, c: u32, d: u32| c ^ (b | !d));
    let mut out = [[0u8; 16]; LANES];
    for (l, o) in out.iter_mut().enumerate() {
        for (j, v) in [a[l], b[l], c[l], d[l]].iter().enumerate() {
            let v = v.wrapping_add(init[j]);
            o[4 * j..4 * j + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// The [`key_digest`] of each key, appended to `out` in order: keys of at most 55 bytes
/// four at a time ([`md5_lanes`]), others one by one.
pub(crate) fn key_digests_into(keys: &[&[u8]], out: &mut Vec<[u8; 16]>) {
    let start = out.len();
    out.resize(start + keys.len(), [0; 16]);
    let mut short: [(usize, &[u8]); LANES] = [(0, &[]); LANES];
    let mut n = 0;
    for (i, k) in keys.iter().enumerate() {
        if k.len() > ONE_BLOCK_KEY {
            if let Some(o) = out.get_mut(start + i) {
                *o = key_digest(k);
            }
            continue;
        }
        short[n] = (i, k);
        n += 1;
        if n == LANES {
            let d = md5_lanes(short.map(|(_, k)| k));
            for (l, (j, _)) in short.iter().enumerate() {
                if let Some(o) = out.get_mut(start + j) {
                    *o = d[l];
                }
            }
            n = 0;
        }
    }
    for &(j, k) in &short[..n] {
        if let Some(o) = out.get_mut(start + j) {
            *o = key_digest(k);
        }
    }
}

/// A slot: a key's MD5 and its latest offset; [`EMPTY`] marks a free slot.
#[derive(Clone, Copy)]
struct Slot {
    digest: [u8; 16],
    offset: i64,
}

/// The offset of a free slot (a put offset is never negative in a log).
const EMPTY: i64 = i64::MIN;

/// Key → latest offset, keyed by the key's MD5, with the capacity accounting of Kafka's
/// `SkimpyOffsetMap` (`docs/kafka-behaviour.md#cleaner-offset-map`).
///
/// Kafka charges every key 24 bytes (its 16-byte MD5 and an 8-byte offset): a map of
/// `memory` bytes has `slots = memory / 24`, and one clean puts at most
/// `⌊slots × load factor⌋` keys ([`OffsetMapCapacity`]). How many keys a clean maps
/// decides where it stops, so this map counts as Kafka's does: two keys are one entry
/// only if their MD5s are equal, as in Kafka (a collision merges them on both sides,
/// never here alone), and [`MapFill`] applies Kafka's stop rule.
///
/// Memory is where it differs: Kafka allocates and zeroes `memory` bytes up front; a
/// build of an offset range sizes the table once for the keys the range can hold (see
/// the module docs), and a map filled by [`put`](Self::put) alone starts empty and
/// doubles as keys arrive (past 3/4 full); never beyond `slots` entries of 24 bytes, so
/// it never holds more than Kafka's buffer ([`memory_bytes`](Self::memory_bytes)).
pub struct OffsetMap {
    capacity: OffsetMapCapacity,
    table: Vec<Slot>,
    entries: u32,
    latest_offset: i64,
    /// The most bytes the table held at once (both tables while it grows).
    peak_bytes: usize,
    /// The most slots the table may grow to (`slots`, less what [`Dense`] takes).
    max_len: usize,
    /// The build's record of which offsets it put and which are their key's latest.
    dense: Option<Dense>,
}

/// What a build through [`MapFill`] knows without a lookup: over the offsets
/// `lo..lo + bits` of its range, which ones it put (a keyed record mapped), and, once
/// sealed, which of those are still their key's latest offset in the map. The copy asks
/// [`OffsetMap::is_latest`] for each record of the dirty section; for an offset the build
/// put, the answer is one bit instead of an MD5 and a probe of the table (the same answer:
/// the map holds, for the key's MD5, the latest offset put, so a put offset is the latest
/// exactly when the table's entry for its MD5 is that offset).
#[derive(Debug)]
struct Dense {
    lo: i64,
    bits: u64,
    put: Vec<u64>,
    latest: Vec<u64>,
    sealed: bool,
}

impl Dense {
    fn bytes(&self) -> usize {
        (self.put.capacity() + self.latest.capacity()) * 8
    }

    fn index(&self, offset: i64) -> Option<(usize, u64)> {
        let i = offset.checked_sub(self.lo)?;
        if i < 0 || i as u64 >= self.bits {
            return None;
        }
        Some(((i as u64 / 64) as usize, 1u64 << (i as u64 % 64)))
    }
}

impl std::fmt::Debug for OffsetMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffsetMap")
            .field("capacity", &self.capacity)
            .field("entries", &self.entries)
            .field("latest_offset", &self.latest_offset)
            .field("table_slots", &self.table.len())
            .finish()
    }
}

impl OffsetMap {
    /// An empty map of this capacity (nothing is allocated until the first put).
    pub fn new(capacity: OffsetMapCapacity) -> Self {
        OffsetMap {
            capacity,
            table: Vec::new(),
            entries: 0,
            latest_offset: -1,
            peak_bytes: 0,
            max_len: capacity.slots as usize,
            dense: None,
        }
    }

    /// Its capacity.
    pub fn capacity(&self) -> OffsetMapCapacity {
        self.capacity
    }

    /// Kafka's `slots()`.
    pub fn slots(&self) -> u32 {
        self.capacity.slots
    }

    /// Kafka's `size()`: the distinct keys (MD5s) put since the last [`clear`](Self::clear).
    pub fn size(&self) -> u32 {
        self.entries
    }

    /// Kafka's `latestOffset()`: the offset of the last put or
    /// [`update_latest_offset`](Self::update_latest_offset), −1 after a clear.
    pub fn latest_offset(&self) -> i64 {
        self.latest_offset
    }

    /// Kafka's `updateLatestOffset`: sets the latest offset (unconditionally).
    pub fn update_latest_offset(&mut self, offset: i64) {
        self.latest_offset = offset;
    }

    /// Kafka's `utilization()`: `size / slots`.
    pub fn utilization(&self) -> f64 {
        f64::from(self.entries) / f64::from(self.capacity.slots.max(1))
    }

    /// The bytes this map holds now (its table and a build's bitmaps): at most Kafka's
    /// [`memory_bytes`](OffsetMapCapacity::memory_bytes), usually less.
    pub fn memory_bytes(&self) -> usize {
        self.table.capacity() * std::mem::size_of::<Slot>()
            + self.dense.as_ref().map_or(0, Dense::bytes)
    }

    /// The most bytes the table held at once since the map was made: while it doubles,
    /// the old table and the new one are both allocated, so this can exceed
    /// [`memory_bytes`](Self::memory_bytes) (by the old table's size).
    pub fn peak_memory_bytes(&self) -> usize {
        self.peak_bytes.max(self.memory_bytes())
    }

    /// Kafka's `clear()`: no key, latest offset −1. The table is kept for the next
    /// clean.
    pub fn clear(&mut self) {
        for s in &mut self.table {
            s.offset = EMPTY;
        }
        self.entries = 0;
        self.latest_offset = -1;
        self.dense = None;
        self.max_len = self.capacity.slots as usize;
    }

    /// Prepares a build of the offsets `start..end` (at most `end − start` keys): the
    /// table is allocated once at the size those keys need (3/4 full at most, never more
    /// than `slots`), so it never grows during the build (no rehash, and never the old
    /// and the new table at once), and [`Dense`] bitmaps of the range are kept when they
    /// fit in the memory Kafka would give the map besides the table. Called by
    /// [`MapFill`] after [`clear`](Self::clear).
    fn prepare(&mut self, start: i64, end: i64) {
        let slots = self.capacity.slots as usize;
        let span = u64::try_from(end.saturating_sub(start)).unwrap_or(0);
        let keys = span
            .min(u64::from(self.capacity.max_entries))
            .min(slots as u64) as usize;
        // Two bits an offset; at most 2 bytes a slot of Kafka's buffer (8 bits a slot).
        let words = span.div_ceil(64);
        let dense_bytes = (words as usize).saturating_mul(16);
        let with_dense = span > 0
            && span <= 8 * slots as u64
            && (self.capacity.memory_bytes as usize).saturating_sub(dense_bytes)
                / std::mem::size_of::<Slot>()
                > keys;
        let budget = if with_dense {
            (self.capacity.memory_bytes as usize - dense_bytes) / std::mem::size_of::<Slot>()
        } else {
            slots
        };
        self.max_len = budget.min(slots);
        let want = (keys.saturating_mul(4) / 3 + 1)
            .next_power_of_two()
            .max(INITIAL_SLOTS)
            .min(self.max_len);
        if self.table.len() != want {
            self.table = Vec::new();
            self.table = vec![
                Slot {
                    digest: [0; 16],
                    offset: EMPTY,
                };
                want
            ];
        }
        self.dense = with_dense.then(|| Dense {
            lo: start,
            bits: span,
            put: vec![0; words as usize],
            latest: vec![0; words as usize],
            sealed: false,
        });
        self.peak_bytes = self.peak_bytes.max(self.memory_bytes());
    }

    /// Ends a build: marks, among the offsets it put, those that are their key's latest.
    pub(crate) fn seal(&mut self) {
        let Some(d) = self.dense.as_mut() else {
            return;
        };
        for s in &self.table {
            if s.offset == EMPTY {
                continue;
            }
            if let Some((w, bit)) = d.index(s.offset) {
                if let (Some(p), Some(l)) = (d.put.get(w), d.latest.get_mut(w)) {
                    if p & bit != 0 {
                        *l |= bit;
                    }
                }
            }
        }
        d.sealed = true;
    }

    /// Kafka's cleaner test of a record at `offset` with `key`
    /// (`offset >= map.get(key)`, true for a key the map does not hold): whether the record
    /// is its key's latest in the map. The same answer as
    /// `get(key).is_none_or(|o| offset >= o)`, without the MD5 and the lookup for an
    /// offset the last build put.
    pub fn is_latest(&self, key: &[u8], offset: i64) -> bool {
        if let Some(d) = self.dense.as_ref().filter(|d| d.sealed) {
            if let Some((w, bit)) = d.index(offset) {
                if d.put.get(w).is_some_and(|p| p & bit != 0) {
                    return d.latest.get(w).is_some_and(|l| l & bit != 0);
                }
            }
        }
        self.get(key).is_none_or(|o| offset >= o)
    }

    /// Reads the home slot of each digest, so that the puts that follow find their slots
    /// in the cache: the reads are independent, so the processor overlaps their misses.
    fn touch_homes(&self, digests: &[[u8; 16]]) {
        let len = self.table.len();
        if len == 0 {
            return;
        }
        let mut acc = 0i64;
        for d in digests {
            if let Some(s) = self.table.get(Self::home(d, len)) {
                acc ^= s.offset;
            }
        }
        std::hint::black_box(acc);
    }

    /// A put by the build ([`MapFill`]): also marks the offset as put.
    fn put_mapped(&mut self, digest: &[u8; 16], offset: i64) -> Result<(), CleanError> {
        let dense = self.dense.take();
        let r = self.insert(digest, offset);
        self.dense = dense;
        if r.is_ok() {
            if let Some(d) = self.dense.as_mut() {
                match d.index(offset) {
                    Some((w, bit)) => {
                        if let Some(p) = d.put.get_mut(w) {
                            *p |= bit;
                        }
                    }
                    // Outside the range: no longer a complete record of the build.
                    None => {
                        self.dense = None;
                        self.max_len = self.capacity.slots as usize;
                    }
                }
            }
        }
        r
    }

    fn home(digest: &[u8; 16], len: usize) -> usize {
        let mut h = [0u8; 8];
        h.copy_from_slice(&digest[..8]);
        // Lemire's reduction of a uniform 64-bit value to 0..len.
        ((u128::from(u64::from_le_bytes(h)) * len as u128) >> 64) as usize
    }

    /// The slot holding `digest`, or the free slot where it would go; `None` when neither
    /// exists (the table is full and `digest` is not in it: a `get` of an absent key in a
    /// map holding `slots` keys). A put always finds one: it runs with
    /// `entries < slots` and grows the table first.
    fn find(&self, digest: &[u8; 16]) -> Option<usize> {
        let len = self.table.len();
        if len == 0 {
            return None;
        }
        let mut i = Self::home(digest, len);
        for _ in 0..len {
            let s = self.table.get(i)?;
            if s.offset == EMPTY || s.digest == *digest {
                return Some(i);
            }
            i += 1;
            if i == len {
                i = 0;
            }
        }
        None
    }

    /// Makes room for one more key: doubles the table (up to `slots`) past 3/4 full.
    fn reserve_one(&mut self) {
        let slots = self.max_len;
        let len = self.table.len();
        let needed = self.entries as usize + 1;
        if len >= slots || (len > 0 && needed * 4 <= len * 3) {
            return;
        }
        let new_len = if len == 0 {
            INITIAL_SLOTS.min(slots)
        } else {
            (len * 2).min(slots)
        };
        let old = std::mem::replace(
            &mut self.table,
            vec![
                Slot {
                    digest: [0; 16],
                    offset: EMPTY,
                };
                new_len
            ],
        );
        let slot_bytes = std::mem::size_of::<Slot>();
        self.peak_bytes = self
            .peak_bytes
            .max((old.capacity() + self.table.capacity()) * slot_bytes);
        for s in old.into_iter().filter(|s| s.offset != EMPTY) {
            if let Some(slot) = self.find(&s.digest).and_then(|i| self.table.get_mut(i)) {
                *slot = s;
            }
        }
    }

    /// Kafka's `put(key, offset)`: the key's latest offset becomes `offset` (a new key
    /// adds one entry, a known one keeps the count), and so does the map's latest offset.
    ///
    /// # Errors
    /// [`CleanError::OffsetMapFull`] when the map already holds `slots` keys, even if
    /// `key` is one of them (as Kafka's check, made before the lookup).
    pub fn put(&mut self, key: &[u8], offset: i64) -> Result<(), CleanError> {
        self.put_digest(&key_digest(key), offset)
    }

    /// [`put`](Self::put) with the key's [`key_digest`] already computed.
    ///
    /// # Errors
    /// As [`put`](Self::put).
    pub fn put_digest(&mut self, digest: &[u8; 16], offset: i64) -> Result<(), CleanError> {
        // A put from outside a build: the build's bitmaps no longer say what the map holds.
        self.dense = None;
        self.max_len = self.capacity.slots as usize;
        self.insert(digest, offset)
    }

    fn insert(&mut self, digest: &[u8; 16], offset: i64) -> Result<(), CleanError> {
        if self.entries >= self.capacity.slots {
            return Err(CleanError::OffsetMapFull {
                entries: self.entries,
                slots: self.capacity.slots,
            });
        }
        self.reserve_one();
        let Some(slot) = self.find(digest).and_then(|i| self.table.get_mut(i)) else {
            // Unreachable: entries < slots, and the table holds a free slot after
            // `reserve_one`.
            return Err(CleanError::OffsetMapFull {
                entries: self.entries,
                slots: self.capacity.slots,
            });
        };
        if slot.offset == EMPTY {
            slot.digest = *digest;
            self.entries += 1;
        }
        slot.offset = offset;
        self.latest_offset = offset;
        Ok(())
    }

    /// Kafka's `get(key)`: the key's latest offset, `None` (Kafka: −1) if absent.
    pub fn get(&self, key: &[u8]) -> Option<i64> {
        self.get_digest(&key_digest(key))
    }

    /// [`get`](Self::get) with the key's [`key_digest`] already computed.
    pub fn get_digest(&self, digest: &[u8; 16]) -> Option<i64> {
        let s = self.table.get(self.find(digest)?)?;
        (s.offset != EMPTY).then_some(s.offset)
    }
}

/// Whether a [`MapFill`] step left room for more keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// The map takes more keys.
    Room,
    /// The map holds `max_entries` keys and a further keyed record was met: the build
    /// stops here (no later batch or segment end is applied).
    Full,
}

/// Kafka's `Cleaner.buildOffsetMap` stop rule, fed batch by batch
/// (`docs/kafka-behaviour.md#cleaner-offset-map`). For each dirty segment in order, for
/// each of its batches:
///
/// * a control batch, or a batch of an aborted transaction: [`end_batch`](Self::end_batch);
/// * any other batch: [`record`](Self::record) for each record in order, then
///   [`end_batch`](Self::end_batch); a record that answers [`Fill::Full`] ends the
///   whole build at once;
///
/// then [`end_segment`](Self::end_segment) with the next segment's base offset (the
/// build's end offset after the last). [`end_offset`](Self::end_offset) is then the
/// first offset the clean leaves dirty (Kafka's `offsetMap.latestOffset + 1`).
#[derive(Debug)]
pub struct MapFill<'m> {
    map: &'m mut OffsetMap,
    start: i64,
    full: bool,
}

impl<'m> MapFill<'m> {
    /// Clears `map` and starts a build of the dirty section from `start` (Kafka's first
    /// dirty offset).
    pub fn new(map: &'m mut OffsetMap, start: i64) -> Self {
        map.clear();
        MapFill {
            map,
            start,
            full: false,
        }
    }

    /// [`new`](Self::new) for a build of the offsets `start..end`: the map's table is
    /// allocated once for the keys that range can hold, and the map records what the
    /// build put, for [`OffsetMap::is_latest`] once [`seal`](Self::seal)ed.
    pub(crate) fn with_range(map: &'m mut OffsetMap, start: i64, end: i64) -> Self {
        map.clear();
        map.prepare(start, end);
        MapFill {
            map,
            start,
            full: false,
        }
    }

    /// The end of the build: the map learns which of the offsets it put are their key's
    /// latest.
    pub(crate) fn seal(&mut self) {
        self.map.seal();
    }

    /// Reads the home slots of `digests` ahead of their puts ([`OffsetMap::touch_homes`]).
    pub(crate) fn touch(&self, digests: &[[u8; 16]]) {
        self.map.touch_homes(digests);
    }

    /// [`record`](Self::record) with the key's [`key_digest`] computed (`None`: no key).
    ///
    /// # Errors
    /// As [`record`](Self::record).
    pub(crate) fn record_digest(
        &mut self,
        offset: i64,
        digest: Option<&[u8; 16]>,
    ) -> Result<Fill, CleanError> {
        if self.full {
            return Ok(Fill::Full);
        }
        if let Some(d) = digest {
            if offset >= self.start {
                if self.map.size() < self.map.capacity.max_entries {
                    self.map.put_mapped(d, offset)?;
                } else {
                    self.full = true;
                    return Ok(Fill::Full);
                }
            }
        }
        Ok(Fill::Room)
    }

    /// A record of a data batch that is not aborted. A keyed record at or after the
    /// start is put, unless the map already holds `max_entries` keys: then the build is
    /// [`Fill::Full`] (checked before the lookup: a known key stops it too). A record
    /// without a key, or before the start, is skipped.
    ///
    /// # Errors
    /// [`CleanError::OffsetMapFull`] (only with a load factor above 1, as in Kafka).
    pub fn record(&mut self, offset: i64, key: Option<&[u8]>) -> Result<Fill, CleanError> {
        if self.full {
            return Ok(Fill::Full);
        }
        if let Some(key) = key {
            if offset >= self.start {
                if self.map.size() < self.map.capacity.max_entries {
                    self.map.put_mapped(&key_digest(key), offset)?;
                } else {
                    self.full = true;
                    return Ok(Fill::Full);
                }
            }
        }
        Ok(Fill::Room)
    }

    /// The end of a batch whose last offset is `last_offset`: the map's latest offset
    /// moves to it if it is at or after the start.
    pub fn end_batch(&mut self, last_offset: i64) {
        if !self.full && last_offset >= self.start {
            self.map.update_latest_offset(last_offset);
        }
    }

    /// The end of a segment: the latest offset moves to `next_segment_start − 1` (Kafka's
    /// "fast forward" over an offset gap at a segment's end).
    pub fn end_segment(&mut self, next_segment_start: i64) {
        if !self.full {
            self.map.update_latest_offset(next_segment_start - 1);
        }
    }

    /// Whether a record found the map full.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// The first offset the clean leaves dirty: the map's latest offset + 1.
    pub fn end_offset(&self) -> i64 {
        self.map.latest_offset() + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build through `with_range` answers `is_latest` as the lookup does, for every
    /// offset it put, for offsets outside its range and for keys it never saw; a put from
    /// outside the build drops the bitmaps, and the answers still follow the map.
    #[test]
    fn is_latest_answers_as_the_lookup() {
        let cap = OffsetMapCapacity::new(24 * 1000, 0.9).unwrap();
        let mut map = OffsetMap::new(cap);
        let key = |o: i64| format!("k{}", (o * 7919) % 53).into_bytes();
        let mut fill = MapFill::with_range(&mut map, 10, 400);
        for o in 10..400 {
            let d = key_digest(&key(o));
            assert_eq!(fill.record_digest(o, Some(&d)).unwrap(), Fill::Room);
            fill.end_batch(o);
        }
        fill.seal();
        assert!(map.dense.as_ref().is_some_and(|d| d.sealed));
        assert!(map.memory_bytes() <= 24 * 1000);
        let check = |map: &OffsetMap| {
            for o in 0..450 {
                let k = key(o);
                let want = map.get(&k).is_none_or(|l| o >= l);
                assert_eq!(map.is_latest(&k, o), want, "offset {o}");
            }
            assert!(map.is_latest(b"never", 5));
        };
        check(&map);
        assert_eq!(map.size(), 53);
        map.put(&key(20), 1000).unwrap();
        assert!(map.dense.is_none());
        check(&map);
        assert!(!map.is_latest(&key(20), 399));
    }

    /// The four-lane MD5 is MD5: every key length up to past one block, against the
    /// `md-5` crate, in every lane position.
    #[test]
    fn lane_digests_are_md5() {
        let keys: Vec<Vec<u8>> = (0..130u32)
            .map(|n| (0..n).map(|i| (i * 31 + n) as u8).collect())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        for skip in 0..4 {
            let mut out = vec![[9u8; 16]];
            key_digests_into(&refs[skip..], &mut out);
            assert_eq!(out.len(), 1 + refs.len() - skip);
            assert_eq!(out[0], [9u8; 16]);
            for (k, d) in refs[skip..].iter().zip(&out[1..]) {
                assert_eq!(*d, key_digest(k), "key of {} bytes", k.len());
            }
        }
        assert_eq!(
            key_digest(b""),
            [
                0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04, 0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8,
                0x42, 0x7e
            ]
        );
    }

    /// A range the memory cannot also record keeps the lookups, and a table sized once
    /// never grows during the build.
    #[test]
    fn a_wide_range_keeps_the_lookups_and_the_table_does_not_grow() {
        let cap = OffsetMapCapacity::new(24 * 100, 0.9).unwrap();
        let mut map = OffsetMap::new(cap);
        let mut fill = MapFill::with_range(&mut map, 0, 1 << 40);
        for o in 0..90 {
            let d = key_digest(&o.to_string().into_bytes());
            fill.record_digest(o * 1000, Some(&d)).unwrap();
        }
        fill.seal();
        assert!(map.dense.is_none());
        assert_eq!(map.peak_memory_bytes(), map.memory_bytes());
        assert_eq!(map.size(), 90);
        assert!(map.is_latest(b"5", 5000) && !map.is_latest(b"5", 4999));
    }
}
