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
//! every clean; this table starts small and doubles as keys arrive, never beyond
//! `slots` entries of 24 bytes, so it never holds more than Kafka's buffer and a clean
//! of a few keys costs a few kilobytes ([`OffsetMap::memory_bytes`]).

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
/// Memory is where it differs: Kafka allocates and zeroes `memory` bytes up front; this
/// table starts empty and doubles as keys arrive (past 3/4 full), never beyond `slots`
/// entries of 24 bytes, so it never holds more than Kafka's buffer and a clean of a few
/// keys costs a few kilobytes ([`memory_bytes`](Self::memory_bytes)).
pub struct OffsetMap {
    capacity: OffsetMapCapacity,
    table: Vec<Slot>,
    entries: u32,
    latest_offset: i64,
    /// The most bytes the table held at once (both tables while it grows).
    peak_bytes: usize,
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

    /// The bytes this map's table holds now: at most Kafka's
    /// [`memory_bytes`](OffsetMapCapacity::memory_bytes), usually far less.
    pub fn memory_bytes(&self) -> usize {
        self.table.capacity() * std::mem::size_of::<Slot>()
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
        let slots = self.capacity.slots as usize;
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
                    self.map.put(key, offset)?;
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
