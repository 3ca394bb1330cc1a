//! The page directory: fence pointers that let a lookup read exactly one index page, and
//! block keys that let it read one cache line of it.
//!
//! For every page of the mapped index file the directory keeps, in memory, the key of the
//! **first slot that overlaps the page** (its fence), and the keys of the first slot of
//! every **block** of the page (a block key per cache line of index). A key lookup first
//! finds, in memory, the one page that can hold the answer, then the one block of that
//! page, and bisects only the slots of that block
//! ([`SearchStrategy::PageDirectory`](crate::SearchStrategy::PageDirectory); the default
//! [`SearchStrategy::Hybrid`](crate::SearchStrategy::Hybrid) searches the cold part of
//! Kafka's warm/cold split this way, over the slots up to the first warm slot only).
//!
//! Every index opened with the default strategy builds its directory with its mapping:
//! the fences are initialised to "unknown" (8 bytes per page), the block keys, known-block
//! counts and fence entries are allocated zeroed (`bytemuck::zeroed_slice_box`, a
//! `calloc`), so a large row costs address space at open, and memory only for the pages
//! that appends and lookups write.
//!
//! # Geometry
//!
//! With a page size of `P` bytes (a power of two) and entries of `E` bytes, page `p`
//! covers bytes `[p * P, (p + 1) * P)` of the file. Its **fence slot** is
//! `c(p) = floor(p * P / E)`, the slot containing the page's first byte, and the fence is
//! that slot's key. An index with `n` used slots has `pages(n) = ceil(n * E / P)` fenced
//! pages (exactly the pages with `c(p) < n`).
//!
//! For a target `t`, let `p` be the last page whose fence is `<= t` (largest lower bound)
//! or `< t` (smallest upper bound): one of the last [`Directory::tail_pages`] pages (the
//! pages the last 1024 slots span: 3 of 8-byte entries, 4 of 12-byte entries) when their
//! fences are known and the first of them qualifies (tail lookups read those fences and
//! count the qualifying ones branch-free), or, until those fences are known, one of the
//! last two pages when the second-to-last fence qualifies; else found by a branch-free
//! bisection of the fences before them (prefetching both fences the next step may read). The answer then lies in slots `[c(p), c(p + 1) - 1]`
//! (or `[c(p), n - 1]` on the last page), and Kafka's bisection over that range starts
//! with `lo = c(p)`, whose key is known from the fence and is **never read** (Kafka's
//! bisection never compares its `begin` slot). Every other slot of the range starts at
//! or after byte `p * P` and ends at or before byte `(p + 1) * P`, so:
//!
//! * **8-byte entries** (offset index; any `E` dividing `P`): no entry straddles a page.
//!   The search reads only page `p`, and the answer slot lies in page `p`: a lookup
//!   (search plus reading the answer entry) touches **exactly one page**.
//! * **12-byte entries** (time index, `P = 4096`): `4096 = 341 * 12 + 4`, so at two of
//!   every three page boundaries one entry straddles the boundary (it starts 4 or 8 bytes
//!   before it). The straddling entry is the fence slot `c(p)` of the *later* page, so the
//!   search itself still reads only slots wholly inside page `p` (at most one page). The
//!   answer is the straddling slot exactly when every other slot of the range is `> t`
//!   (about one lookup in 340 for uniformly spread targets); reading it from the mapping
//!   would touch pages `p - 1` and `p`. The directory therefore also keeps **each fence
//!   slot's whole entry** in memory ([`Directory::fence_entry`]), and a lookup whose answer
//!   is a fence slot takes the entry from there: a lookup touches **exactly one page**
//!   with 12-byte entries too.
//! * Targets below the first key are answered from the directory alone (no page read).
//!
//! # Blocks
//!
//! A page's slot range `[c(p), c(p + 1) - 1]` is cut into **blocks** of `S` slots, `S`
//! the largest power of two with `S * E <= 64` (one cache line; 1 for larger entries)
//! and at most half a page: 8 slots of the offset index, 4 of the time index. Pages of
//! more than 256 blocks (above 16 KiB of 8-byte entries) keep none. Block `j` starts at slot
//! `c(p) + j * S`; its **block key** is that slot's key minus the page's fence, kept as a
//! `u32` ([`Directory::blocks_per_page`] per page: 64 with 8-byte entries, 86 with 12-byte
//! entries). Once the page is found, the last block whose key qualifies is found by a
//! branch-free halving over the page's block keys (their cache lines prefetched together
//! first, with the slot that interpolating between the page's fence and the next one's
//! predicts, which walks a cold page's page tables meanwhile and, for evenly growing
//! keys, fetches the answer's line), and Kafka's bisection runs over that block alone: its first slot qualifies and
//! is never read (as above), the rest lie in one cache line of 8-byte entries (the
//! mapping is page-aligned and `c(p)` starts a page), or two of 12-byte entries. So a
//! uniform lookup reads one cache line of the index, not the 7 to 9 lines of a bisection
//! over a page. The tail pages (a hot tail's, which stay in the CPU caches) are
//! bisected whole instead: as many dependent steps as block keys plus block, fewer
//! instructions (`cargo bench -p bench-harness --bench limit`). The qualifying blocks are a prefix of the page's for non-decreasing keys,
//! so the answer is the same slot as without blocks (and as Kafka's for strictly
//! increasing keys); for keys that decrease inside a page (a corrupt index, which the
//! segment layer rebuilds on load) it can be another in-bounds slot.
//!
//! A page whose block keys do not fit a `u32` (a key below its fence, or more than
//! `u32::MAX` above it: a corrupt index, or a time index with a gap of over 49 days
//! inside one page) is marked unusable and searched without blocks (the bisection over
//! its page, one page as before) until the writer appends its fence slot again. So is a
//! page whose fence key is `i64::MIN`, which cannot be kept as a known fence.
//!
//! # Lazy fences
//!
//! Opening an existing index reads **no** page to build the directory: every page's fence
//! starts unknown, and the writer knows the fences of the pages it fills from then on.
//! A search that needs an unknown fence reads the fence slot from the mapping (a page that
//! Kafka's own bisection would read too), and stores it for the next lookups. So a cold
//! open costs no page-in beyond the ones the lookups themselves need, and once the fences
//! a workload uses are known, each lookup reads exactly one page as above. A hot-tail
//! workload reads only the pages its answers lie in to learn their fences (the last two
//! first): a cold start costs it 2 page-ins when its tail spans two pages (warm/cold: up
//! to 3).
//!
//! Block keys are filled the same way: the writer stores the key of every block it
//! starts (and, when it appends into a page that was in the file before the directory,
//! reads the page's missing earlier block keys from its own slots). A search that needs
//! the block keys of a page that was in the file before the directory reads them from
//! that page (the page it is about to search anyway: no further page-in), once per page.
//!
//! # Concurrency
//!
//! The fences and fence entries are preallocated atomics, one set per page of the mapping,
//! living next to the mapping in the same `Arc`. An unknown fence holds the sentinel
//! [`UNKNOWN_FENCE`] (`i64::MIN`; a slot whose key really is `i64::MIN` is then never
//! cached, only read from the mapping each time: slower, never wrong; the writer marks
//! a page whose fence it appends with that key, so that no reader stores a fence for it
//! that it read before a truncation). A fence entry is
//! stored (`Relaxed`) before its fence (`Release`), and read (`Relaxed`) after it
//! (`Acquire`), so whoever sees a fence sees its entry (the loom models check the
//! protocol, and fail with these orderings weakened, see `tests/loom.rs`).
//!
//! * The single writer stores a page's fence when it writes the page's fence slot,
//!   **before** it publishes the new entry count with `Release`; readers load the count
//!   with `Acquire` and use only the fences of the `pages(n)` pages below it.
//! * A reader that read an unknown fence from the mapping stores it only if it gets the
//!   directory's fill lock **without waiting** (`try_lock`) and the fence is still
//!   unknown;
//!   the writer takes the same lock for its (once per page) fence stores. So a fill
//!   never overwrites the writer's fence, and a fill that lost a race (it read a slot
//!   from before a truncation) is overwritten by the writer's store when the writer
//!   appends that slot again, before the page is fenced again. Lookups never wait and,
//!   once the fences they use are known, do no atomic read-modify-write at all: the lock
//!   is taken at most once per page by readers.
//! * Block keys follow the same order as fences: the writer stores a block key
//!   (`Relaxed`) and raises the page's known-block count (`Release`) before it publishes
//!   the count; a reader uses only the block keys below both the known-block count it
//!   loaded (`Acquire`) and its entry count. A reader stores the block keys of a page
//!   only under the fill lock (`try_lock`) and only for a page below the **writer's page**
//!   (the page the writer appends into, which it moves up with `Release` when it starts
//!   a page): the writer changes slots below its page only after a truncation, and a
//!   truncation stores the lowered count, moves the writer's page down and bumps a
//!   truncation count (`Release`) **under the fill lock**. A reader reads the page's block
//!   starts **without** the lock (a cold page may fault in, and the writer, which takes
//!   the lock at every page it starts, must not wait for that), having loaded the
//!   truncation count first (`Acquire`), and stores them only if, under the lock, the
//!   truncation count, the writer's page and the fence show that nothing changed: so the
//!   slots it read stayed put while it read them. When the writer appends a page's fence
//!   slot (again) it resets the page's known-block count, and it rewrites every block key
//!   as it appends the block's first slot, before it publishes it: stale keys beyond a
//!   truncated count are never used.
//! * A truncation only lowers the count; fences of dropped pages are rewritten when
//!   their slots are appended again. A reader that loaded a count from before a
//!   truncation may see a newer fence for a re-filled page and return a stale, in-bounds
//!   answer, the same exposure as the slots themselves (see [`crate::sys`], invariant 3);
//!   a fence entry is two words, so such a reader may also see one word of each (the same
//!   exposure as a slot of the mapping rewritten under it).
//!
//! # Memory
//!
//! Per page of the mapping ([`Directory::bytes_per_page`]): an 8-byte fence, a 16-byte
//! fence entry (only for entries that can straddle a page), a 4-byte known-block count
//! and 4 bytes per block key. With 4 KiB pages: 8-byte entries 8 + 4 + 64 * 4 = **268
//! bytes per page, 67 KiB per MiB of index (6.5 %)**; 12-byte entries 8 + 16 + 4 + 86 *
//! 4 = **372 bytes per page, 93 KiB per MiB (9.1 %)**. The fences alone (the part every
//! lookup reads) are 2 KiB per MiB.

use crate::codec::IndexEntry;
use crate::search::Probe;
use crate::sync::{AtomicI64, AtomicU32, AtomicUsize, Lock, Ordering, OBSERVE, PUBLISH};

/// Whether a known-block count is a count (not one of the two marks).
#[inline(always)]
fn usable(known: u32) -> bool {
    known < BLOCKS_MIN_FENCE
}

/// The largest entry size (bytes) whose fence entries the directory keeps in memory (the
/// offset index's 8 and the time index's 12 fit; larger entries keep fences only).
pub const MAX_FENCE_ENTRY_BYTES: usize = 16;

/// The value of a fence that is not known yet (see the [module docs](self)).
pub const UNKNOWN_FENCE: i64 = i64::MIN;

/// The most bytes of index one block key covers: a cache line. A block is the largest
/// power-of-two number of slots that fits (8 offset-index entries, 4 time-index
/// entries), and at most half a page.
pub const BLOCK_BYTES: usize = 64;

/// The known-block count of a page whose block keys cannot be kept (a key below the
/// page's fence or more than `u32::MAX` above it, which only a corrupt index or a time
/// index with a gap of over 49 days inside one page has): the page is searched without
/// them.
const BLOCKS_UNUSABLE: u32 = u32::MAX;

/// The known-block count of a page whose fence key is `i64::MIN` ([`UNKNOWN_FENCE`]):
/// that fence cannot be kept, so no block keys either, and readers must not store a fence
/// they read for it (they could have read it before a truncation that the writer's
/// `i64::MIN` store then could not mark as known). Set by the writer under the fill lock
/// when it appends the page's fence slot; reset when it appends it again.
const BLOCKS_MIN_FENCE: u32 = u32::MAX - 1;

/// The most block keys a page keeps (pages of up to 16 KiB with 8-byte entries): larger
/// pages keep none, as a row of keys that long is no longer a few cache lines.
const MAX_BLOCKS_PER_PAGE: usize = 256;

/// The most tail pages [`Directory::tail_pages`] gives (1024 slots of 12-byte entries span
/// up to 4 pages of 4 KiB).
const MAX_TAIL_PAGES: usize = 4;

/// The slots of a hot tail ([`Directory::tail_pages`]).
const HOT_TAIL_SLOTS: usize = 1024;

/// Block keys per cache line (16 keys of 4 bytes).
const KEY_GROUP: usize = 16;

/// Fence pointers of one mapping of an index file: the key of the first slot overlapping
/// each page of `page_size()` bytes, filled in lazily (see the [module docs](self)).
#[derive(Debug)]
pub struct Directory {
    /// `log2(page size in bytes)`.
    page_shift: u32,
    /// One fence per page of the mapping ([`UNKNOWN_FENCE`] until known); meaningful only
    /// for the first `pages(n)` pages.
    fences: Box<[AtomicI64]>,
    /// The raw bytes of each page's fence slot (zero-padded to 16 bytes, as two
    /// native-endian words), for entries of at most [`MAX_FENCE_ENTRY_BYTES`] that can
    /// straddle a page (an entry size that divides the page size never does, and keeps
    /// none: empty).
    fence_entries: Box<[[AtomicI64; 2]]>,
    /// `log2(slots per block)`.
    block_shift: u32,
    /// Block keys kept per page (0: blocks off, for pages shorter than two entries).
    blocks_per_page: usize,
    /// `blocks_per_page` keys per page: key `j` of page `p` is the key of slot
    /// `fence_slot(p) + j * block_slots` minus the page's fence (key 0 is always 0).
    block_keys: Box<[AtomicU32]>,
    /// Per page, how many leading block keys are stored ([`BLOCKS_UNUSABLE`]: none can
    /// be).
    known_blocks: Box<[AtomicU32]>,
    /// The page the writer appends into (the page of slot `entries`): pages below it
    /// change only after a truncation, which moves it down under `fill`.
    writer_page: AtomicUsize,
    /// Truncations so far (bumped under `fill`, after the count and `writer_page`): a
    /// reader that read block keys from the mapping stores them only if no truncation ran
    /// since it started.
    truncations: AtomicUsize,
    /// Serialises fence stores between the writer and filling readers (readers only
    /// `try_lock` it), and block fills by readers with truncations.
    fill: Lock<()>,
    /// The writer's note of slots whose append records nothing (`[from, to)`: neither a
    /// fence slot nor the first slot of a block), set by [`record`](Self::record) after
    /// each slot that did record something. A function of the directory's geometry
    /// alone, so no truncation or fill invalidates it. Read and written only by the
    /// writer, under the index's writer lock (which orders it between writers): plain
    /// `std` atomics, outside the loom model.
    quiet: [std::sync::atomic::AtomicUsize; 2],
}

/// Normalises a requested page size (bytes) to a power of two >= 1 (rounding up; a size
/// above the largest power of two of `usize` gives that power, rather than overflowing).
pub fn normalize_page_size(page_size: usize) -> usize {
    page_size
        .max(1)
        .checked_next_power_of_two()
        .unwrap_or(1 << (usize::BITS - 1))
}

impl Directory {
    /// A directory for a mapping of `mapped_bytes` bytes of `E` entries with pages of
    /// `page_size` bytes (rounded up to a power of two), every fence and block key
    /// unknown, for an index of `entries` used slots. Reads nothing: the fences and block
    /// keys of pages already in the file are filled in by the searches that need them.
    pub(crate) fn new<E: IndexEntry>(
        page_size: usize,
        mapped_bytes: usize,
        entries: usize,
    ) -> Self {
        let page_size = normalize_page_size(page_size);
        let pages = mapped_bytes.div_ceil(page_size);
        // The largest power-of-two slot count within a cache line and half a page.
        let block_bytes = BLOCK_BYTES.min(page_size / 2);
        let block_slots = (block_bytes / E::SIZE).max(1);
        let block_shift = usize::BITS - 1 - block_slots.leading_zeros();
        // A page's slot range holds at most ceil(page_size / E::SIZE) slots, and no more
        // than the mapping's (a page larger than the mapping must not size the rows).
        let span = page_size.min(mapped_bytes.max(1));
        let blocks = span.div_ceil(E::SIZE).div_ceil(1 << block_shift);
        let blocks_per_page = if page_size >= 2 * E::SIZE && blocks <= MAX_BLOCKS_PER_PAGE {
            blocks
        } else {
            0
        };
        let fence_entry_pages =
            if !page_size.is_multiple_of(E::SIZE) && E::SIZE <= MAX_FENCE_ENTRY_BYTES {
                pages
            } else {
                0
            };
        let d = Directory {
            page_shift: page_size.trailing_zeros(),
            fences: (0..pages).map(|_| AtomicI64::new(UNKNOWN_FENCE)).collect(),
            fence_entries: zeroed_pairs(fence_entry_pages),
            block_shift,
            blocks_per_page,
            block_keys: zeroed_u32s(pages * blocks_per_page),
            known_blocks: zeroed_u32s(pages),
            writer_page: AtomicUsize::new(0),
            truncations: AtomicUsize::new(0),
            fill: Lock::new(()),
            quiet: Default::default(),
        };
        d.writer_page
            .store(d.page_of::<E>(entries), Ordering::Relaxed);
        d
    }

    /// The page whose slot range holds slot `slot`: the last page whose fence slot is
    /// `<= slot`, `floor(((slot + 1) * E::SIZE - 1) / page_size)`.
    #[inline(always)]
    fn page_of<E: IndexEntry>(&self, slot: usize) -> usize {
        ((slot + 1) * E::SIZE - 1) >> self.page_shift
    }

    /// Pages at the tail that [`page_range`](Self::page_range) tests first, and that are
    /// halved whole rather than through block keys: the pages the last 1024 slots span
    /// at most, `ceil(1024 * E::SIZE / page_size) + 1`, at least 2 and at most 4 (3 for
    /// the offset index and 4 for the time index, with 4 KiB pages).
    #[inline(always)]
    pub fn tail_pages<E: IndexEntry>(&self) -> usize {
        ((HOT_TAIL_SLOTS * E::SIZE).div_ceil(self.page_size()) + 1).clamp(2, MAX_TAIL_PAGES)
    }

    /// Slots per block (a power of two).
    #[inline]
    pub fn block_slots(&self) -> usize {
        1 << self.block_shift
    }

    /// Block keys kept per page (0 when the pages are too small for blocks).
    #[inline]
    pub fn blocks_per_page(&self) -> usize {
        self.blocks_per_page
    }

    /// Number of leading block keys known for `page` (`None` when the page's keys cannot
    /// be kept, see [`BLOCK_BYTES`]); for tests and reports.
    pub fn known_blocks(&self, page: usize) -> Option<usize> {
        let k = self.known_blocks.get(page)?.load(OBSERVE);
        usable(k).then_some(k as usize)
    }

    /// Bytes of memory the directory keeps per page of the mapping: the fence, the fence
    /// entry (only for entries that can straddle a page), the known-block count and the
    /// block keys.
    pub fn bytes_per_page(&self) -> usize {
        let fence_entry = if self.fence_entries.is_empty() { 0 } else { 16 };
        8 + fence_entry + 4 + 4 * self.blocks_per_page
    }

    /// Stores `entry` as the fence entry of `page` (nothing when the directory keeps no
    /// fence entries: entries larger than [`MAX_FENCE_ENTRY_BYTES`], or that never
    /// straddle a page).
    #[inline]
    fn store_entry<E: IndexEntry>(&self, page: usize, entry: &E) {
        let Some([lo, hi]) = self.fence_entries.get(page) else {
            return;
        };
        let mut buf = [0u8; MAX_FENCE_ENTRY_BYTES];
        buf[..E::SIZE].copy_from_slice(bytemuck::bytes_of(entry));
        lo.store(word(&buf[..8]), Ordering::Relaxed);
        hi.store(word(&buf[8..]), Ordering::Relaxed);
    }

    /// Stores the fence entry, then the fence, of `page`. The caller holds `self.fill`.
    #[inline]
    fn store_fence<E: IndexEntry>(&self, page: usize, key: i64, entry: &E) {
        self.store_entry(page, entry);
        self.fences[page].store(key, PUBLISH);
    }

    /// The entry in slot `slot` of an index with `entries` used slots, from memory, when
    /// that slot is the fence slot of a fenced page whose fence is known (else `None`:
    /// read it from the mapping). A lookup whose answer is a fence slot (with 12-byte
    /// entries, the only answers that straddle a page boundary) thus reads no page for its
    /// answer. Always `None` when the directory keeps no fence entries (entries larger
    /// than [`MAX_FENCE_ENTRY_BYTES`], or whose size divides the page size, which never
    /// straddle a page: their answer's line is the one the search just read). Meaningful
    /// only for a count `entries` loaded with `Acquire`.
    #[inline]
    pub fn fence_entry<E: IndexEntry>(&self, slot: usize, entries: usize) -> Option<E> {
        if self.fence_entries.is_empty() || slot >= entries {
            return None;
        }
        // The first page starting at or after the slot's first byte; the slot is its
        // fence slot when that page starts inside the slot.
        let start = slot * E::SIZE;
        let page = (start + self.page_size() - 1) >> self.page_shift;
        if page >= self.pages::<E>(entries)
            || (page << self.page_shift) >= start + E::SIZE
            || self.fences[page].load(OBSERVE) == UNKNOWN_FENCE
        {
            return None;
        }
        let [lo, hi] = self.fence_entries.get(page)?;
        let mut buf = [0u8; MAX_FENCE_ENTRY_BYTES];
        buf[..8].copy_from_slice(&lo.load(Ordering::Relaxed).to_ne_bytes());
        buf[8..].copy_from_slice(&hi.load(Ordering::Relaxed).to_ne_bytes());
        Some(bytemuck::pod_read_unaligned(&buf[..E::SIZE]))
    }

    /// Page size in bytes (a power of two).
    #[inline]
    pub fn page_size(&self) -> usize {
        1 << self.page_shift
    }

    /// Number of pages the directory can fence (the mapping's length in pages).
    #[inline]
    pub fn capacity(&self) -> usize {
        self.fences.len()
    }

    /// Number of fenced pages of an index with `entries` used slots of `E::SIZE` bytes:
    /// `ceil(entries * E::SIZE / page_size)`, capped at [`Directory::capacity`].
    #[inline]
    pub fn pages<E: IndexEntry>(&self, entries: usize) -> usize {
        let bytes = entries * E::SIZE;
        let pages = (bytes >> self.page_shift) + usize::from(bytes & (self.page_size() - 1) != 0);
        pages.min(self.fences.len())
    }

    /// The fence slot of page `p`: the slot containing the page's first byte,
    /// `floor(p * page_size / E::SIZE)`.
    #[inline]
    pub fn fence_slot<E: IndexEntry>(&self, page: usize) -> usize {
        (page << self.page_shift) / E::SIZE
    }

    /// The fence (key of the fence slot) of page `p`, if `p` is within the capacity and
    /// its fence is known (stored by the writer or by a search that read it). Meaningful
    /// only for `p < pages(entries)` of a count loaded with `Acquire`.
    #[inline]
    pub fn fence(&self, page: usize) -> Option<i64> {
        let f = self.fences.get(page)?.load(OBSERVE);
        (f != UNKNOWN_FENCE).then_some(f)
    }

    /// Number of the first `pages` pages whose fence is known (for tests and reports).
    pub fn known_fences(&self, pages: usize) -> usize {
        self.fences
            .iter()
            .take(pages)
            .filter(|f| f.load(OBSERVE) != UNKNOWN_FENCE)
            .count()
    }

    /// The fence of page `page < pages(slots.len())`: from memory when known, else read
    /// from the fence slot in `slots` (reported to `probe`) and stored for later lookups.
    #[inline(always)]
    pub(crate) fn fence_key<E: IndexEntry, P: Probe>(
        &self,
        page: usize,
        slots: &[E],
        base_offset: i64,
        probe: &mut P,
    ) -> i64 {
        let f = self.fences[page].load(OBSERVE);
        if f != UNKNOWN_FENCE {
            return f;
        }
        self.fill_fence(page, slots, base_offset, probe)
    }

    /// The cold path of [`fence_key`](Self::fence_key): reads the fence slot from the
    /// mapping and stores it if the fill lock is free and nobody stored it meanwhile.
    #[cold]
    #[inline(never)]
    fn fill_fence<E: IndexEntry, P: Probe>(
        &self,
        page: usize,
        slots: &[E],
        base_offset: i64,
        probe: &mut P,
    ) -> i64 {
        let slot = self.fence_slot::<E>(page);
        probe.touch(slot * E::SIZE, E::SIZE);
        let entry = slots[slot];
        let key = entry.key(base_offset);
        // A key of i64::MIN cannot be stored as known; a page the writer marked as having
        // that fence must not get a fence from a reader (it may have read a slot from
        // before a truncation). Neither takes the lock.
        if key == UNKNOWN_FENCE || self.known_blocks[page].load(OBSERVE) == BLOCKS_MIN_FENCE {
            return key;
        }
        if let Some(_g) = self.fill.try_lock() {
            if self.fences[page].load(Ordering::Relaxed) == UNKNOWN_FENCE
                && self.known_blocks[page].load(Ordering::Relaxed) != BLOCKS_MIN_FENCE
            {
                self.store_fence(page, key, &entry);
            }
        }
        key
    }

    /// Records that slot `slot` now holds `entry` (whose key is `key`): stores the fence
    /// and fence entry of every page whose first byte lies in that slot (zero or one page
    /// when the page size is at least `E::SIZE`), under the fill lock. Called by the
    /// writer *before* publishing `slot + 1`.
    ///
    /// When the slot begins a block it also stores the block's key (`slots` are the used
    /// slots before it, read only when earlier block keys of the page are missing: a page
    /// that was in the file before the directory existed).
    #[inline]
    pub(crate) fn record<E: IndexEntry>(
        &self,
        slot: usize,
        key: i64,
        entry: &E,
        slots: &[E],
        base_offset: i64,
    ) {
        // The writer calls this only for a slot its note does not cover
        // ([`is_quiet`](Self::is_quiet)); for one it covers, the work below finds nothing
        // to record. The note first (it depends on the geometry alone), then the work.
        let (from, to) = self.quiet_after::<E>(slot);
        self.quiet[0].store(from, Ordering::Relaxed);
        self.quiet[1].store(to, Ordering::Relaxed);
        let first = self.pages::<E>(slot);
        let end = self.pages::<E>(slot + 1);
        for p in first..end {
            let _g = self.fill.lock();
            // The page starts again: its block keys follow from this fence on (and none
            // with a fence of i64::MIN, which stays unknown).
            let known = if key == UNKNOWN_FENCE {
                BLOCKS_MIN_FENCE
            } else {
                0
            };
            self.known_blocks[p].store(known, Ordering::Relaxed);
            self.store_fence(p, key, entry);
        }
        if self.blocks_per_page == 0 {
            return;
        }
        let page = self.page_of::<E>(slot);
        let offset = slot - self.fence_slot::<E>(page);
        if offset & (self.block_slots() - 1) == 0 {
            self.record_block(page, offset >> self.block_shift, key, slots, base_offset);
        }
    }

    /// Whether appending slot `slot` records nothing, by the writer's note of the last
    /// slot that did (`false` when unsure). Most appends begin neither a page nor a block
    /// (7 in 8 offset-index slots, 3 in 4 time-index slots, with 64-byte blocks): two
    /// loads instead of the page arithmetic of [`record`](Self::record), which the writer
    /// can then skip with the slice of used slots it would build for it. Writer only.
    #[inline(always)]
    pub(crate) fn is_quiet(&self, slot: usize) -> bool {
        let [from, to] = &self.quiet;
        (from.load(Ordering::Relaxed)..to.load(Ordering::Relaxed)).contains(&slot)
    }

    /// The slots after `slot` whose append records nothing, `[slot + 1, to)`: `to` is the
    /// next fence slot or the next block's first slot, whichever comes first (an empty
    /// range when the next page is past the directory's capacity).
    #[inline]
    fn quiet_after<E: IndexEntry>(&self, slot: usize) -> (usize, usize) {
        let next_page = self.pages::<E>(slot + 1);
        if next_page >= self.fences.len() {
            return (slot + 1, slot + 1);
        }
        // `fence_slot(pages(slot + 1)) > slot`: that page's first byte lies past `slot`.
        let mut to = self.fence_slot::<E>(next_page);
        if self.blocks_per_page > 0 {
            // Slot `slot` lies in page `page_of(slot)`, whose fence slot is `<= slot`.
            let fence = self.fence_slot::<E>(self.page_of::<E>(slot));
            let next_block =
                fence + (((slot - fence) >> self.block_shift) + 1) * self.block_slots();
            to = to.min(next_block);
        }
        (slot + 1, to)
    }

    /// Stores block key `j` of `page` (the writer appended its first slot, whose key is
    /// `key`) and makes at least `j + 1` keys of the page known, filling missing earlier
    /// ones from `slots`.
    #[inline]
    fn record_block<E: IndexEntry>(
        &self,
        page: usize,
        j: usize,
        key: i64,
        slots: &[E],
        base_offset: i64,
    ) {
        if j == 0 {
            // The fence slot: the writer now appends into this page.
            self.writer_page.store(page, PUBLISH);
        }
        if j >= self.blocks_per_page {
            return;
        }
        let known = self.known_blocks[page].load(Ordering::Relaxed);
        if !usable(known) {
            return;
        }
        let fence = self.fences[page].load(Ordering::Relaxed);
        match delta(key, fence) {
            Some(d) if (known as usize) >= j && fence != UNKNOWN_FENCE => {
                self.block_keys[page * self.blocks_per_page + j].store(d, Ordering::Relaxed);
                if known as usize == j {
                    self.known_blocks[page].store(j as u32 + 1, PUBLISH);
                }
            }
            _ => self.fill_writer_blocks(page, j, key, slots, base_offset),
        }
    }

    /// The cold path of [`record_block`](Self::record_block): the page's fence or its
    /// earlier block keys are unknown (it was in the file before the directory), or the
    /// key does not fit. Reads what is missing from `slots` (the writer's own, stable
    /// slots) and stores keys `0..=j`, or marks the page's blocks unusable.
    #[cold]
    #[inline(never)]
    fn fill_writer_blocks<E: IndexEntry>(
        &self,
        page: usize,
        j: usize,
        key: i64,
        slots: &[E],
        base_offset: i64,
    ) {
        let _g = self.fill.lock();
        let first = self.fence_slot::<E>(page);
        let mut fence = self.fences[page].load(Ordering::Relaxed);
        if fence == UNKNOWN_FENCE {
            let Some(entry) = slots.get(first) else {
                return;
            };
            fence = entry.key(base_offset);
            if fence == UNKNOWN_FENCE {
                // A key of i64::MIN cannot be a known fence: no block keys for this page.
                self.known_blocks[page].store(BLOCKS_MIN_FENCE, PUBLISH);
                return;
            }
            self.store_fence(page, fence, entry);
        }
        let known = self.known_blocks[page].load(Ordering::Relaxed);
        if !usable(known) {
            return;
        }
        let row = page * self.blocks_per_page;
        for i in (known as usize).min(j)..=j {
            let k = if i == j {
                key
            } else {
                match slots.get(first + (i << self.block_shift)) {
                    Some(e) => e.key(base_offset),
                    None => return,
                }
            };
            let Some(d) = delta(k, fence) else {
                self.known_blocks[page].store(BLOCKS_UNUSABLE, PUBLISH);
                return;
            };
            self.block_keys[row + i].store(d, Ordering::Relaxed);
        }
        if (known as usize) <= j {
            self.known_blocks[page].store(j as u32 + 1, PUBLISH);
        }
    }

    /// Records a truncation to `entries` used slots: runs `publish` (which stores the
    /// new count) under the fill lock and moves the writer's page down, so that no
    /// reader fills block keys from slots the writer may rewrite.
    pub(crate) fn truncate<E: IndexEntry>(&self, entries: usize, publish: impl FnOnce()) {
        let _g = self.fill.lock();
        publish();
        self.writer_page.store(self.page_of::<E>(entries), PUBLISH);
        let n = self.truncations.load(Ordering::Relaxed);
        self.truncations.store(n.wrapping_add(1), PUBLISH);
    }

    /// Narrows the slot range `[first, last]` of `range` (its page's fence qualifies) to
    /// the one block that holds the answer: the last block whose key is
    /// `<= target` (`strict = false`) or `< target` (`strict = true`), found by a
    /// branch-free halving over the page's block keys in memory. The block's first slot
    /// qualifies (it is the range's `lo`, never read); the rest of the block lies in one
    /// or two cache lines. Returns the range unchanged when the page's block keys are not
    /// known and cannot be filled now.
    #[inline(always)]
    pub(crate) fn block_range<E: IndexEntry, P: Probe>(
        &self,
        range: PageRange,
        slots: &[E],
        base_offset: i64,
        target: i64,
        strict: bool,
        probe: &mut P,
    ) -> (usize, usize) {
        let PageRange {
            page,
            fence,
            first,
            last,
        } = range;
        // The tail pages (hot, in L1) are halved whole: as many dependent steps as
        // block keys plus block, with fewer instructions.
        if self.blocks_per_page == 0
            || last - first < self.block_slots()
            || page + self.tail_pages::<E>() >= self.pages::<E>(slots.len())
        {
            return (first, last);
        }
        // `fence` qualifies, so `target >= fence` and the difference fits in a u64.
        let t = target.wrapping_sub(fence) as u64;
        // While the block keys are fetched, prefetch the slot that interpolating between
        // this page's fence and the next one's predicts (offsets and timestamps grow about
        // evenly inside a page), else the page's first slot: either walks the page tables
        // of a cold page, and a right guess fetches the answer's line too. A prefetch
        // only: the answer comes from the search below, guess right or wrong.
        // Straight-line code: the `Option` chain this was (`map`, `filter`, `and_then`)
        // was compiled as an out-of-line closure call in the hybrid's lookup.
        let mut guess = first;
        if let Some(next) = self.fence(page + 1) {
            let span = next.wrapping_sub(fence) as u64;
            if t < span {
                if let Some(x) = t.checked_mul((last + 1 - first) as u64) {
                    guess = first + (x / span) as usize;
                }
            }
        }
        crate::sys::prefetch(&slots[guess.min(last)]);
        // A block of 12-byte entries may cross into the next line.
        crate::sys::prefetch(&slots[(guess + self.block_slots() - 1).min(last)]);
        let m = ((last - first) >> self.block_shift) + 1;
        if m > self.blocks_per_page {
            // Not for a range of this directory's mapping (cannot happen): no blocks.
            return (first, last);
        }
        let known = self.known_blocks[page].load(OBSERVE);
        if !usable(known) {
            return (first, last);
        }
        // Cold: once per page that was in the file before the directory.
        if (known as usize) < m && !self.fill_blocks(page, m, slots, base_offset, probe) {
            return (first, last);
        }
        let row = &self.block_keys[page * self.blocks_per_page..][..m];
        // The row's cache lines are fetched in parallel, then halved in L1: one miss,
        // not one per halving step. The row need not start a line: prefetch its first
        // key's line, then every key that starts one.
        // A plain index loop: the iterator form (`skip` then `step_by`) was left as an
        // out-of-line call in the lookup, about a tenth of a lagging time lookup's profile.
        crate::sys::prefetch(&row[0]);
        let misalign = (row.as_ptr() as usize & (4 * KEY_GROUP - 1)) / 4;
        let mut line = (KEY_GROUP - misalign) % KEY_GROUP;
        while let Some(key) = row.get(line) {
            crate::sys::prefetch(key);
            line += KEY_GROUP;
        }
        let (mut j, mut size) = (0, m);
        while size > 1 {
            let half = size / 2;
            let mid = j + half;
            let d = u64::from(row[mid].load(Ordering::Relaxed));
            let q = if strict { d < t } else { d <= t };
            j = std::hint::select_unpredictable(q, mid, j);
            size -= half;
        }
        let lo = first + (j << self.block_shift);
        (lo, (lo + self.block_slots() - 1).min(last))
    }

    /// The cold path of [`block_range`](Self::block_range): a reader stores the first
    /// `m <= blocks_per_page` block keys of `page` from `slots` (its used slots; `m`
    /// blocks of the page lie below them), if it gets the fill lock without waiting and the writer no longer
    /// appends into the page. Returns whether the `m` keys are known now.
    #[cold]
    #[inline(never)]
    fn fill_blocks<E: IndexEntry, P: Probe>(
        &self,
        page: usize,
        m: usize,
        slots: &[E],
        base_offset: i64,
        probe: &mut P,
    ) -> bool {
        // The truncation count first: a truncation it does not show is caught under the
        // lock below; one it shows (`Acquire`) shows its count and writer's page too.
        let truncations = self.truncations.load(OBSERVE);
        // Pages below the writer's change only after a truncation.
        if page >= self.writer_page.load(OBSERVE) {
            return false;
        }
        let fence = self.fences[page].load(OBSERVE);
        if fence == UNKNOWN_FENCE {
            return false;
        }
        // Read the page's block starts without the lock (a cold page may fault in: the
        // writer must not wait for that), then store them if nothing changed meanwhile.
        let first = self.fence_slot::<E>(page);
        let mut keys = [0u32; MAX_BLOCKS_PER_PAGE];
        let mut fits = true;
        for (j, key) in keys.iter_mut().enumerate().take(m).skip(1) {
            let slot = first + (j << self.block_shift);
            let Some(e) = slots.get(slot) else {
                return false;
            };
            probe.touch(slot * E::SIZE, E::SIZE);
            match delta(e.key(base_offset), fence) {
                Some(d) => *key = d,
                None => {
                    fits = false;
                    break;
                }
            }
        }
        let Some(_g) = self.fill.try_lock() else {
            return false;
        };
        if self.truncations.load(Ordering::Relaxed) != truncations
            || page >= self.writer_page.load(Ordering::Relaxed)
            || self.fences[page].load(Ordering::Relaxed) != fence
        {
            return false;
        }
        let known = self.known_blocks[page].load(Ordering::Relaxed);
        if !usable(known) {
            return false;
        }
        if known as usize >= m {
            return true;
        }
        if !fits {
            self.known_blocks[page].store(BLOCKS_UNUSABLE, PUBLISH);
            return false;
        }
        let row = page * self.blocks_per_page;
        for (j, &d) in keys.iter().enumerate().take(m).skip(known as usize) {
            self.block_keys[row + j].store(d, Ordering::Relaxed);
        }
        self.known_blocks[page].store(m as u32, PUBLISH);
        true
    }

    /// Copies the known fences, fence entries, block keys and known-block counts of the
    /// first `pages` pages from `other` (used when
    /// remapping; the writer holds its lock, so only filling readers race with it, and a
    /// fill it misses just stays unknown here).
    pub(crate) fn copy_from(&self, other: &Directory, pages: usize) {
        debug_assert_eq!(self.page_shift, other.page_shift);
        let _g = self.fill.lock();
        for p in 0..pages.min(self.capacity()).min(other.capacity()) {
            let known = other.known_blocks[p].load(OBSERVE);
            if known == BLOCKS_MIN_FENCE {
                self.known_blocks[p].store(known, PUBLISH);
            }
            let f = other.fences[p].load(OBSERVE);
            if f == UNKNOWN_FENCE {
                continue;
            }
            if let (Some(d), Some(s)) = (self.fence_entries.get(p), other.fence_entries.get(p)) {
                for (d, s) in d.iter().zip(s) {
                    d.store(s.load(Ordering::Relaxed), Ordering::Relaxed);
                }
            }
            self.fences[p].store(f, PUBLISH);
            if self.blocks_per_page != other.blocks_per_page || self.blocks_per_page == 0 {
                continue;
            }
            // Load the known count again: it is stored after the keys it counts.
            let known = other.known_blocks[p].load(OBSERVE);
            if usable(known) {
                let row = p * self.blocks_per_page;
                for j in 0..(known as usize).min(self.blocks_per_page) {
                    self.block_keys[row + j].store(
                        other.block_keys[row + j].load(Ordering::Relaxed),
                        Ordering::Relaxed,
                    );
                }
            }
            self.known_blocks[p].store(known, PUBLISH);
        }
    }

    /// The inclusive slot range `[lo, hi]` of the page that holds the answer for `target`
    /// among `slots` (the used slots): the last fenced page whose fence is `<= target`
    /// (`strict = false`) or `< target` (`strict = true`). `None` when no fence qualifies
    /// (for `strict = false`: every key is `> target`). The key of slot `lo` is that
    /// page's fence, and it qualifies also on fences that do not increase (a corrupt
    /// index, an untrimmed reopen's zero slots), where the page is then some qualifying
    /// one. Reads known fences from memory, and reads (reporting them to `probe`) and
    /// stores the unknown ones it needs.
    ///
    /// `#[inline(always)]`: called out of line, the fence step cost the page directory's
    /// hot-tail lookup about a fifth (`cargo bench -p bench-harness --bench limit`: 2.79x
    /// of `partition_point` out of line, 2.29x inlined, throughput mode).
    #[inline(always)]
    pub fn page_range<E: IndexEntry, P: Probe>(
        &self,
        slots: &[E],
        base_offset: i64,
        target: i64,
        strict: bool,
        probe: &mut P,
    ) -> Option<PageRange> {
        let entries = slots.len();
        let pages = self.pages::<E>(entries);
        let mut qualifies = |page: usize| {
            let f = self.fence_key(page, slots, base_offset, probe);
            if strict {
                f < target
            } else {
                f <= target
            }
        };
        if pages == 0 {
            return None;
        }
        // The last qualifying fence (fences increase with the keys), searched from the
        // tail like Kafka's warm section. Once the fences of the last `tail_pages` pages
        // are known (a predictable branch): if the first of them qualifies, the page is
        // that one plus the number of the later ones that qualify (counted branch-free,
        // independent loads). Before that (a cold open), only the second-to-last fence is
        // read first, so that a cold hot tail reads just the pages its answers lie in:
        // if it qualifies the page is one of the last two. Else a branch-free halving
        // (a fixed number of steps for the range, conditional moves) over the pages
        // before: `log2(pages)` fence reads.
        let tail = self.tail_pages::<E>().min(pages);
        let (in_tail, before) = if (pages - tail..pages).all(|p| self.fence(p).is_some()) {
            (qualifies(pages - tail), pages - tail)
        } else {
            let tail = 2.min(pages);
            (qualifies(pages - tail), pages - tail)
        };
        let counted = in_tail.then(|| {
            (before + 1..pages)
                .map(|p| usize::from(qualifies(p)))
                .sum::<usize>()
                + before
        });
        let page = match counted {
            // On increasing fences the qualifying ones are a prefix: always taken.
            Some(page) if qualifies(page) => page,
            counted => {
                // Fences that do not increase (an untrimmed reopen's zero slots, a corrupt
                // index) can make the count land on a page whose fence does not qualify:
                // then the halving over every page, which only moves to qualifying ones.
                let before = if counted.is_some() { pages } else { before };
                if before == 0 || !qualifies(0) {
                    return None;
                }
                let (mut page, mut size) = (0, before);
                while size > 1 {
                    let half = size / 2;
                    let mid = page + half;
                    // Prefetch both fences the next step may read (while they are more than a
                    // cache line apart), as the comparison is a conditional move.
                    let next = (size - half) / 2;
                    if next >= 8 {
                        crate::sys::prefetch(&self.fences[page + next]);
                        crate::sys::prefetch(&self.fences[mid + next]);
                    }
                    page = std::hint::select_unpredictable(qualifies(mid), mid, page);
                    size -= half;
                }
                page
            }
        };
        let fence = self.fence_key(page, slots, base_offset, probe);
        Some(self.range_of::<E>(page, pages, entries, fence))
    }

    /// The [`PageRange`] of `page` (of `pages` fenced pages, `entries` used slots), whose
    /// fence is `fence`.
    #[inline(always)]
    fn range_of<E: IndexEntry>(
        &self,
        page: usize,
        pages: usize,
        entries: usize,
        fence: i64,
    ) -> PageRange {
        let first = self.fence_slot::<E>(page);
        let last = if page + 1 < pages {
            self.fence_slot::<E>(page + 1).saturating_sub(1)
        } else {
            entries - 1
        };
        PageRange {
            page,
            fence,
            first,
            last: last.max(first),
        }
    }

    /// [`page_range`](Self::page_range) for a lookup that is not a hot-tail one (the cold
    /// part of [`SearchStrategy::Hybrid`](crate::SearchStrategy::Hybrid)): the same page,
    /// found first by interpolation. When the last fence qualifies the page is the last
    /// one; else, if the first one qualifies, the search starts at the page that
    /// interpolating the target between the two predicts (offsets and timestamps grow
    /// about evenly): it is taken if its fence qualifies and the next one's does not,
    /// which is the definition of the page for increasing fences (two independent fence
    /// loads instead of the `log2(pages)` dependent steps of the halving). A guess a few
    /// pages off (keys that drift from a straight line: about one lagging time-index lookup
    /// in five lands one page off) gallops from it (1, 2, 4, … pages) to a qualifying
    /// fence and a later one that does not qualify, and halves between the two:
    /// `2 log2(miss)` fence reads rather than a restart. Any other case (a short index,
    /// fences that do not increase) runs [`page_range`](Self::page_range). The page's
    /// fence always qualifies, also on fences that do not increase, as with `page_range`.
    #[inline(always)]
    pub fn cold_page_range<E: IndexEntry, P: Probe>(
        &self,
        slots: &[E],
        base_offset: i64,
        target: i64,
        strict: bool,
        probe: &mut P,
    ) -> Option<PageRange> {
        let entries = slots.len();
        let pages = self.pages::<E>(entries);
        if pages > 2 {
            let qualifies = |f: i64| if strict { f < target } else { f <= target };
            let last = pages - 1;
            let first_fence = self.fence_key(0, slots, base_offset, probe);
            let last_fence = self.fence_key(last, slots, base_offset, probe);
            if qualifies(last_fence) {
                return Some(self.range_of::<E>(last, pages, entries, last_fence));
            }
            if qualifies(first_fence) && last_fence > first_fence {
                // Both differences are non-negative (first <= target <= last): as u64
                // they do not overflow; the guess is in [0, last - 1] (the cast
                // saturates).
                let span = last_fence.wrapping_sub(first_fence) as u64 as f64;
                let at = target.wrapping_sub(first_fence) as u64 as f64;
                let guess = ((at / span * last as f64) as usize).min(last - 1);
                let fence = self.fence_key(guess, slots, base_offset, probe);
                let next = self.fence_key(guess + 1, slots, base_offset, probe);
                let mut fence_at = |page: usize| self.fence_key(page, slots, base_offset, probe);
                // `lo` qualifies, `hi > lo` does not (`last` does not).
                let bracket = match (qualifies(fence), qualifies(next)) {
                    (true, false) => {
                        return Some(self.range_of::<E>(guess, pages, entries, fence));
                    }
                    (true, true) => gallop(guess + 1, last, |p| qualifies(fence_at(p))),
                    (false, _) => gallop_down(guess, |p| qualifies(fence_at(p))),
                };
                if let Some((mut lo, mut hi)) = bracket {
                    while hi - lo > 1 {
                        let mid = lo + (hi - lo) / 2;
                        if qualifies(fence_at(mid)) {
                            lo = mid;
                        } else {
                            hi = mid;
                        }
                    }
                    let fence = fence_at(lo);
                    // Read again: a fence stored meanwhile (after a truncation) must
                    // still qualify.
                    if qualifies(fence) {
                        return Some(self.range_of::<E>(lo, pages, entries, fence));
                    }
                }
            }
        }
        self.page_range(slots, base_offset, target, strict, probe)
    }
}

/// Gallops up from page `lo`, whose fence qualifies, towards `last`, whose fence does not:
/// pages `lo + 1`, `lo + 2`, `lo + 4`, … (capped at `last`) until one does not qualify.
/// Returns `(qualifying, not qualifying)` pages, the first below the second; `None` if
/// `last` qualifies after all (fences stored meanwhile).
#[inline(always)]
fn gallop(
    mut lo: usize,
    last: usize,
    mut qualifies: impl FnMut(usize) -> bool,
) -> Option<(usize, usize)> {
    let mut step = 1;
    while lo < last {
        let p = lo.saturating_add(step).min(last);
        if !qualifies(p) {
            return Some((lo, p));
        }
        lo = p;
        step = step.saturating_mul(2);
    }
    None
}

/// Gallops down from page `hi`, whose fence does not qualify, towards page 0, whose
/// fence does: pages `hi - 1`, `hi - 2`, `hi - 4`, … (down to 0) until one qualifies.
/// Returns `(qualifying, not qualifying)` pages, the first below the second; `None` if
/// page 0 does not qualify after all.
#[inline(always)]
fn gallop_down(mut hi: usize, mut qualifies: impl FnMut(usize) -> bool) -> Option<(usize, usize)> {
    let mut step = 1;
    while hi > 0 {
        let p = hi.saturating_sub(step);
        if qualifies(p) {
            return Some((p, hi));
        }
        hi = p;
        step = step.saturating_mul(2);
    }
    None
}

/// The page that holds a search's answer ([`Directory::page_range`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRange {
    /// The page's number.
    pub page: usize,
    /// The page's fence (the key of slot `first`, which qualifies).
    pub fence: i64,
    /// The page's first slot (its fence slot).
    pub first: usize,
    /// The page's last used slot (inclusive).
    pub last: usize,
}

/// `len` atomics holding 0, allocated zeroed (`calloc`: a large row comes from fresh
/// zero pages of the OS, committed only when a page of it is written, so an index's
/// block keys cost memory only for the pages it uses, and nothing at open).
#[cfg(not(loom))]
fn zeroed_u32s(len: usize) -> Box<[AtomicU32]> {
    bytemuck::zeroed_slice_box(len)
}

#[cfg(loom)]
fn zeroed_u32s(len: usize) -> Box<[AtomicU32]> {
    (0..len).map(|_| AtomicU32::new(0)).collect()
}

/// `len` pairs of atomics holding 0 (fence entries), allocated zeroed as
/// [`zeroed_u32s`].
#[cfg(not(loom))]
fn zeroed_pairs(len: usize) -> Box<[[AtomicI64; 2]]> {
    bytemuck::zeroed_slice_box(len)
}

#[cfg(loom)]
fn zeroed_pairs(len: usize) -> Box<[[AtomicI64; 2]]> {
    (0..len)
        .map(|_| [AtomicI64::new(0), AtomicI64::new(0)])
        .collect()
}

/// `key - fence` as a block key, if it fits in a `u32`.
#[inline(always)]
fn delta(key: i64, fence: i64) -> Option<u32> {
    key.checked_sub(fence).and_then(|d| u32::try_from(d).ok())
}

/// The native-endian word of 8 bytes.
#[inline(always)]
fn word(bytes: &[u8]) -> i64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(bytes);
    i64::from_ne_bytes(w)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::codec::{I32Be, I64Be};
    use crate::search::{Bound, PageProbe, Probe, SearchField, SearchStrategy};
    use crate::{IndexFile, OpenMode};
    use bytemuck::{Pod, Zeroable};

    /// An 8-byte entry (like the offset index): relative key and a value.
    #[derive(Clone, Copy, Debug, Pod, Zeroable)]
    #[repr(C)]
    struct E8 {
        k: I32Be,
        v: I32Be,
    }
    impl IndexEntry for E8 {
        const SIZE: usize = 8;
        const KIND: &'static str = "test 8";
        fn key(&self, b: i64) -> i64 {
            b + self.k.get() as i64
        }
        fn value(&self, _b: i64) -> i64 {
            self.v.get() as i64
        }
    }

    /// A 12-byte entry (like the time index).
    #[derive(Clone, Copy, Debug, Pod, Zeroable)]
    #[repr(C)]
    struct E12 {
        k: I64Be,
        v: I32Be,
    }
    impl IndexEntry for E12 {
        const SIZE: usize = 12;
        const KIND: &'static str = "test 12";
        fn key(&self, _b: i64) -> i64 {
            self.k.get()
        }
        fn value(&self, _b: i64) -> i64 {
            self.v.get() as i64
        }
    }

    const PD: SearchStrategy = SearchStrategy::PageDirectory { page_size: 4096 };

    /// [`Directory::tail_pages`] of 8-byte entries with 4 KiB pages.
    const TAIL_PAGES: usize = 3;

    /// Whether appending slot `slot` records something: the slot holds a page's first
    /// byte, or it is the first slot of a block of its page (the conditions of
    /// `Directory::record`, restated).
    fn records<E: IndexEntry>(d: &Directory, slot: usize) -> bool {
        let fence_slot = d.pages::<E>(slot) < d.pages::<E>(slot + 1);
        let page = d.page_of::<E>(slot);
        let block_start = d.blocks_per_page > 0
            && (slot - d.fence_slot::<E>(page)).is_multiple_of(d.block_slots());
        fence_slot || block_start || page >= d.fences.len()
    }

    /// Every slot the writer's note skips records nothing, and a note that is not empty
    /// ends at a slot that records something (or at the capacity), for both entry sizes
    /// over page sizes from below an entry to larger than the mapping.
    fn quiet_ranges_skip_only_slots_that_record_nothing<E: IndexEntry>() {
        for page_size in [4, 8, 16, 64, 512, 4096, 1 << 16] {
            let mapped = 40 * 1024;
            let d = Directory::new::<E>(page_size, mapped, 0);
            let capacity = mapped / E::SIZE;
            let (mut skipped, mut slot) = (0usize, 0usize);
            while slot < capacity {
                let (from, to) = d.quiet_after::<E>(slot);
                assert_eq!(from, slot + 1, "page {page_size}");
                for t in from..to.min(capacity) {
                    assert!(
                        !records::<E>(&d, t),
                        "page {page_size}: slot {t} records, in the note after {slot}"
                    );
                    skipped += 1;
                }
                // An empty note (the next page past the capacity) claims nothing.
                if from < to && to < capacity {
                    assert!(
                        records::<E>(&d, to),
                        "page {page_size}: the note after {slot} stops short at {to}"
                    );
                }
                slot = to.max(slot + 1);
            }
            if page_size >= 512 && page_size <= mapped {
                assert!(
                    skipped > capacity / 2,
                    "page {page_size}: {skipped} skipped"
                );
            }
        }
    }

    #[test]
    fn quiet_ranges_of_8_byte_entries() {
        quiet_ranges_skip_only_slots_that_record_nothing::<E8>();
    }

    #[test]
    fn quiet_ranges_of_12_byte_entries() {
        quiet_ranges_skip_only_slots_that_record_nothing::<E12>();
    }

    #[test]
    fn geometry_12_byte_entries() {
        let d = Directory::new::<E12>(4096, 12 * 1000, 0);
        assert_eq!(d.page_size(), 4096);
        assert_eq!(d.capacity(), 3);
        assert_eq!(d.pages::<E12>(0), 0);
        assert_eq!(d.pages::<E12>(1), 1);
        assert_eq!(d.pages::<E12>(341), 1); // 4092 bytes
        assert_eq!(d.pages::<E12>(342), 2); // slot 341 straddles into page 1
        assert_eq!(d.fence_slot::<E12>(1), 341);
        assert_eq!(d.fence_slot::<E12>(2), 682);
        assert_eq!(d.pages::<E12>(1000), 3);
        // Blocks: 4 slots of 12 bytes (48 of a 64-byte line), 86 per page; the memory
        // figures of the module docs.
        assert_eq!(d.block_slots(), 4);
        assert_eq!(d.blocks_per_page(), 86);
        assert_eq!(d.bytes_per_page(), 372);
        let d8 = Directory::new::<E8>(4096, 8 * 1000, 0);
        assert_eq!((d8.block_slots(), d8.blocks_per_page()), (8, 64));
        assert_eq!(d8.bytes_per_page(), 268);
        assert_eq!(
            (d8.tail_pages::<E8>(), d.tail_pages::<E12>()),
            (TAIL_PAGES, 4)
        );
        assert_eq!(normalize_page_size(3000), 4096);
        assert_eq!(normalize_page_size(0), 1);
    }

    #[test]
    fn lookup_touches_exactly_one_page_with_8_byte_entries() {
        let dir = tempfile::tempdir().unwrap();
        let pages = 40;
        let index = IndexFile::<E8>::open(
            dir.path().join("0.index"),
            1000,
            Some(pages * 4096),
            OpenMode::ReadWrite,
        )
        .unwrap()
        .with_search_strategy(PD);
        // Every page full except the last, which holds 100 entries.
        let n = (pages - 1) * 512 + 100;
        for i in 0..n {
            index
                .append(&E8 {
                    k: I32Be::new(3 * i as i32 + 1),
                    v: I32Be::new(i as i32),
                })
                .unwrap();
        }
        let snap = index.snapshot().unwrap();
        let first = 1001;
        let last = 1000 + 3 * (n as i64 - 1) + 1;
        for target in (first - 5)..=(last + 5) {
            for bound in [Bound::LargestLowerBound, Bound::SmallestUpperBound] {
                let mut probe = PageProbe::new(4096);
                let slot = snap.search(target, SearchField::Key, bound, &mut probe);
                let expected = snap.search_with(
                    SearchStrategy::Binary,
                    target,
                    SearchField::Key,
                    bound,
                    &mut crate::NoProbe,
                );
                assert_eq!(slot, expected, "target {target} {bound:?}");
                if bound == Bound::SmallestUpperBound {
                    assert!(probe.distinct_pages() <= 1, "target {target}");
                    continue;
                }
                // The caller then reads the answer entry (e.g. to decode the position).
                if let Some(slot) = slot {
                    probe.touch(slot * 8, 8);
                }
                let expected_pages = usize::from(target >= first);
                assert_eq!(
                    probe.distinct_pages(),
                    expected_pages,
                    "target {target}: pages {:?}",
                    probe.pages()
                );
            }
        }
    }

    #[test]
    fn lookup_with_12_byte_entries_reads_exactly_one_page_straddling_answers_included() {
        let dir = tempfile::tempdir().unwrap();
        let index = pd_file::<E12>(dir.path().join("0.timeindex"), 12 * 4096);
        let n: usize = 3000;
        for i in 0..n {
            index
                .append(&E12 {
                    k: I64Be::new(10 * i as i64),
                    v: I32Be::new(i as i32),
                })
                .unwrap();
        }
        let snap = index.snapshot().unwrap();
        let mut straddles = 0;
        for target in 0..(10 * n as i64 + 10) {
            let mut probe = PageProbe::new(4096);
            let slot = snap
                .search(
                    target,
                    SearchField::Key,
                    Bound::LargestLowerBound,
                    &mut probe,
                )
                .unwrap();
            assert_eq!(slot, (target / 10).min(n as i64 - 1) as usize);
            assert!(probe.distinct_pages() <= 1, "search of {target}");
            let entry = snap.answer(slot, &mut probe).unwrap();
            assert_eq!(
                (entry.k.get(), entry.v.get()),
                (10 * slot as i64, slot as i32)
            );
            assert_eq!(probe.distinct_pages(), 1, "lookup of {target}");
            // The lookup through the file returns the same entry.
            let (s, e) = index
                .search(
                    target,
                    SearchField::Key,
                    Bound::LargestLowerBound,
                    &mut crate::NoProbe,
                )
                .unwrap()
                .unwrap();
            assert_eq!(
                (s, e.k.get(), e.v.get()),
                (slot, entry.k.get(), entry.v.get())
            );
            straddles += usize::from((slot * 12) / 4096 != (slot * 12 + 11) / 4096);
        }
        // Slots 341, 1023, 1365, ... straddle a page boundary; their answers come from
        // the directory's fence entries.
        assert!(straddles > 0);
        assert_eq!(snap.answer(n, &mut crate::NoProbe).map(|e| e.v.get()), None);
    }

    /// Every fence entry equals the slot it copies, through appends, truncation and
    /// re-appends over the truncated pages, resize, trim and a reopen (where the fences
    /// start unknown and searches fill them in).
    #[test]
    fn fence_entries_equal_their_slots() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.timeindex");
        let pd64 = SearchStrategy::PageDirectory { page_size: 64 };
        let index = IndexFile::<E12>::open(&path, 0, Some(12 * 1200), OpenMode::ReadWrite)
            .unwrap()
            .with_search_strategy(pd64);
        let check = |index: &IndexFile<E12>, all_known: bool| {
            let snap = index.snapshot().unwrap();
            let d = snap.directory().unwrap();
            let mut in_memory = 0;
            for (slot, e) in snap.slots().iter().enumerate() {
                if let Some(f) = d.fence_entry::<E12>(slot, snap.len()) {
                    assert_eq!(bytemuck::bytes_of(&f), bytemuck::bytes_of(e), "slot {slot}");
                    in_memory += 1;
                }
            }
            let pages = d.pages::<E12>(snap.len());
            assert_eq!(in_memory, d.known_fences(pages));
            if all_known {
                assert_eq!(in_memory, pages);
            }
            assert!(d.fence_entry::<E12>(snap.len(), snap.len()).is_none());
        };
        for i in 0..1000 {
            index.append(&e12(5 * i, i)).unwrap();
        }
        check(&index, true);
        index.truncate_to_entries(333).unwrap();
        check(&index, true);
        for i in 333..1100 {
            index.append(&e12(7 * i, 2 * i)).unwrap();
        }
        check(&index, true);
        index.resize(12 * 3000).unwrap();
        for i in 1100..2500 {
            index.append(&e12(7 * i, 2 * i)).unwrap();
        }
        check(&index, true);
        index.trim_to_valid_size().unwrap();
        check(&index, true);
        drop(index);
        let reopened = IndexFile::<E12>::open(&path, 0, None, OpenMode::ReadOnly)
            .unwrap()
            .with_search_strategy(pd64);
        let snap = reopened.snapshot().unwrap();
        assert_eq!(snap.directory().unwrap().known_fences(usize::MAX), 0);
        check(&reopened, false);
        // Searching every key fills in every fence.
        for e in snap.slots() {
            let t = e.key(0);
            snap.search(
                t,
                SearchField::Key,
                Bound::LargestLowerBound,
                &mut crate::NoProbe,
            );
        }
        check(&reopened, true);
    }

    /// The largest lower bound of `target` in `snap`, by its strategy.
    fn llb<E: IndexEntry>(snap: &crate::Snapshot<E>, target: i64) -> Option<usize> {
        snap.search(
            target,
            SearchField::Key,
            Bound::LargestLowerBound,
            &mut crate::NoProbe,
        )
    }

    /// A read-write index of `bytes` bytes at `path`, searched with the page directory.
    fn pd_file<E: IndexEntry>(path: std::path::PathBuf, bytes: usize) -> IndexFile<E> {
        IndexFile::<E>::open(path, 0, Some(bytes), OpenMode::ReadWrite)
            .unwrap()
            .with_search_strategy(PD)
    }

    /// Counts the distinct 64-byte cache lines of the index file a search reads.
    #[derive(Default)]
    struct LineProbe(std::collections::BTreeSet<usize>);

    impl crate::search::Probe for LineProbe {
        fn touch(&mut self, offset: usize, len: usize) {
            self.0.extend(offset / 64..(offset + len).div_ceil(64));
        }
    }

    /// The distinct cache lines each lookup of every target in `targets` reads (search
    /// and answer entry), largest first.
    fn lines_per_lookup<E: IndexEntry>(snap: &crate::Snapshot<E>, targets: &[i64]) -> Vec<usize> {
        let mut lines: Vec<usize> = targets
            .iter()
            .map(|&t| {
                let mut probe = LineProbe::default();
                if let Some(slot) =
                    snap.search(t, SearchField::Key, Bound::LargestLowerBound, &mut probe)
                {
                    snap.answer(slot, &mut probe).unwrap();
                }
                probe.0.len()
            })
            .collect();
        lines.sort_unstable_by(|a, b| b.cmp(a));
        lines
    }

    /// With its block keys known, a lookup reads one cache line of 8-byte entries, at
    /// most two of 12-byte entries (a block of 4 entries, 48 bytes, may cross a line), and
    /// the block keys of a page that was in the file before the directory are filled in
    /// by the first lookup into that page (which reads that page only).
    #[test]
    fn a_lookup_reads_one_block_of_its_page() {
        let dir = tempfile::tempdir().unwrap();
        let n = 16 * 512;
        // Appended with the directory: the writer stores every block key.
        let written = pd_file::<E8>(dir.path().join("0.index"), n * 8);
        for i in 0..n {
            written.append(&e8(2 * i as i64, i as i64)).unwrap();
        }
        // Targets in the pages before the last `TAIL_PAGES` (those are halved whole: they
        // are hot, and the search still reads only their page).
        let targets: Vec<i64> = (0..2 * (n - TAIL_PAGES * 512) as i64).collect();
        let tail: Vec<i64> = (2 * (n - TAIL_PAGES * 512) as i64..2 * n as i64 + 2).collect();
        let snap = written.snapshot().unwrap();
        let d = snap.directory().unwrap();
        assert!((0..16).all(|p| d.known_blocks(p) == Some(64)));
        assert_eq!(lines_per_lookup(&snap, &targets)[0], 1);
        for &t in &tail {
            let mut probe = PageProbe::new(4096);
            snap.search(t, SearchField::Key, Bound::LargestLowerBound, &mut probe);
            assert_eq!(probe.distinct_pages(), 1, "tail target {t}");
        }
        drop(snap);
        written.close().unwrap();

        // Reopened: no block key is known; the first lookup into a page fills them.
        let reopened =
            IndexFile::<E8>::open(dir.path().join("0.index"), 0, None, OpenMode::ReadOnly)
                .unwrap()
                .with_search_strategy(PD);
        let snap = reopened.snapshot().unwrap();
        let d = snap.directory().unwrap();
        assert!((0..16).all(|p| d.known_blocks(p) == Some(0)));
        for p in 0..16 {
            let known: Vec<bool> = (0..16).map(|q| d.fence(q).is_some()).collect();
            let mut probe = LineProbe::default();
            let t = 2 * (p * 512 + 100) as i64;
            let slot = snap.search(t, SearchField::Key, Bound::LargestLowerBound, &mut probe);
            assert_eq!(slot, Some(p * 512 + 100));
            // Beyond the fence slots it learned (each in its own page), the lookup read
            // only page p.
            for page in probe.0.iter().map(|line| line / 64) {
                assert!(
                    page == p || (!known[page] && d.fence(page).is_some()),
                    "the lookup into page {p} read page {page}"
                );
            }
        }
        // The tail pages, halved whole, need no block keys and get none.
        assert!((0..16 - TAIL_PAGES).all(|p| d.known_blocks(p) == Some(64)));
        assert!((16 - TAIL_PAGES..16).all(|p| d.known_blocks(p) == Some(0)));
        assert_eq!(lines_per_lookup(&snap, &targets)[0], 1);

        // 12-byte entries: at most two lines (before the tail pages, 341 slots each).
        let time = pd_file::<E12>(dir.path().join("0.timeindex"), n * 12);
        for i in 0..n {
            time.append(&e12(2 * i as i64, i as i64)).unwrap();
        }
        let snap = time.snapshot().unwrap();
        let pages = (n * 12).div_ceil(4096);
        let before_tail = 2 * (((pages - MAX_TAIL_PAGES) * 4096).div_ceil(12) - 1) as i64;
        let targets: Vec<i64> = (0..before_tail).collect();
        assert_eq!(lines_per_lookup(&snap, &targets)[0], 2);
    }

    /// A page whose keys are more than `u32::MAX` apart keeps no block keys and is
    /// searched over the whole page (same answers).
    #[test]
    fn a_page_with_a_wide_gap_is_searched_without_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let index = pd_file::<E12>(dir.path().join("0.timeindex"), 4096 * 3);
        let key = |i: i64| if i < 400 { i } else { i + (1 << 40) };
        for i in 0..1000 {
            index.append(&e12(key(i), i)).unwrap();
        }
        let snap = index.snapshot().unwrap();
        let d = snap.directory().unwrap();
        // Page 1 (slots 341 to 682) holds the gap; pages 0 and 2 do not.
        assert_eq!(d.known_blocks(1), None);
        assert_eq!(d.known_blocks(0), Some(86));
        for i in 0..1000 {
            let found = llb(&snap, key(i));
            assert_eq!(found, Some(i as usize));
        }
    }

    /// A page whose fence key is `i64::MIN` (the unknown-fence sentinel) keeps neither a
    /// fence nor block keys, and every lookup still finds the right slot, also after the
    /// writer appends that page's fence slot again with another key.
    #[test]
    fn a_fence_of_i64_min_is_never_kept_and_never_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let index = pd_file::<E12>(dir.path().join("0.timeindex"), 12 * 2000);
        // Page 1 starts at slot 341: give it the key i64::MIN (slots before it, lower
        // still, would be impossible, so they are i64::MIN too: a corrupt but searchable
        // index with equal keys).
        let key = |i: usize| if i <= 341 { i64::MIN } else { i as i64 };
        for i in 0..1500 {
            index.append(&e12(key(i), i as i64)).unwrap();
        }
        let check = |key: &dyn Fn(usize) -> i64| {
            let snap = index.snapshot().unwrap();
            let d = snap.directory().unwrap();
            assert_eq!(d.fence(1), None);
            for i in 342..1500 {
                let found = llb(&snap, key(i));
                assert_eq!(found, Some(i), "key {}", key(i));
            }
            d.known_blocks(1)
        };
        assert_eq!(check(&key), None);
        // Truncate below page 1's fence slot and append other keys: page 1 gets a fence
        // and block keys again.
        index.truncate_to_entries(300).unwrap();
        let key2 = |i: usize| if i < 300 { i64::MIN } else { i as i64 };
        for i in 300..1500 {
            index.append(&e12(key2(i), i as i64)).unwrap();
        }
        let snap = index.snapshot().unwrap();
        let d = snap.directory().unwrap();
        assert_eq!(d.fence(1), Some(341));
        assert_eq!(d.known_blocks(1), Some(86));
        for i in 300..1500 {
            let found = llb(&snap, key2(i));
            assert_eq!(found, Some(i));
        }
    }

    /// Opening an existing index with the page directory reads no page; the first hot-tail
    /// lookup reads the last two pages' fences, and every later one exactly one page; a cold uniform lookup reads no more pages than a binary search.
    #[test]
    fn a_cold_open_reads_no_page_and_lookups_fill_the_fences_they_need() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.index");
        let pages = 64;
        let n = pages * 512;
        {
            let index = IndexFile::<E8>::open(&path, 0, Some(n * 8), OpenMode::ReadWrite).unwrap();
            for i in 0..n {
                index.append(&e8(2 * i as i64, i as i64)).unwrap();
            }
        }
        let index = IndexFile::<E8>::open(&path, 0, None, OpenMode::ReadOnly)
            .unwrap()
            .with_search_strategy(PD);
        let snap = index.snapshot().unwrap();
        let d = snap.directory().unwrap();
        assert_eq!(d.known_fences(pages), 0, "opening read fences");
        let lookup = |t: i64| {
            let mut probe = PageProbe::new(4096);
            let slot = snap
                .search(t, SearchField::Key, Bound::LargestLowerBound, &mut probe)
                .unwrap();
            snap.answer(slot, &mut probe).unwrap();
            assert_eq!(slot, (t / 2) as usize);
            probe.distinct_pages()
        };
        let last = 2 * (n as i64 - 1);
        // The first tail lookup reads the fences of the last two pages (one of which is
        // the answer's page) and keeps them.
        assert_eq!(lookup(last), 2, "the first tail lookup");
        assert_eq!(d.known_fences(pages), 2);
        assert_eq!(lookup(last), 1, "the second one");
        // The hot tail (the last 1024 slots, 2 pages): every lookup reads one page now.
        for t in (last - 2046..=last).rev() {
            assert_eq!(lookup(t), 1, "target {t}");
        }
        assert_eq!(d.known_fences(pages), 2);
        // Two pages further back: a first lookup bisects the other pages' fences (at most
        // log2(pages) + 1 pages), later ones read one page.
        let lagging = last - 4000..=last - 2048;
        for t in lagging.clone() {
            assert!(lookup(t) <= 8, "target {t}");
        }
        for t in lagging {
            assert_eq!(lookup(t), 1, "target {t}");
        }
        // A cold lookup elsewhere reads at most log2(pages) + 2 pages, then one.
        let binary_pages = (pages as f64).log2() as usize + 2;
        assert!(lookup(1001) <= binary_pages);
        assert_eq!(lookup(1001), 1);
        assert_eq!(lookup(1003), 1);
    }

    #[test]
    fn a_cold_lookup_off_its_interpolated_page_gallops_from_the_guess() {
        // 64 pages of 512 slots whose keys grow faster towards the tail: interpolating
        // between the first and the last fence guesses pages up to several too low.
        let pages = 64;
        let n = pages * 512;
        let keys: Vec<i64> = (0..n as i64).map(|i| i * i / 1024 + 2 * i).collect();
        let slots: Vec<E8> = keys.iter().map(|&k| e8(k, 0)).collect();
        let last = pages - 1;
        let (first_fence, last_fence) = (keys[0], keys[last * 512]);
        let mut misses = [0usize; 3];
        for t in (keys[0]..keys[last * 512]).step_by(331) {
            for strict in [false, true] {
                let qualifies = |k: i64| if strict { k < t } else { k <= t };
                let Some(truth) = (0..pages).rev().find(|&p| qualifies(keys[p * 512])) else {
                    continue;
                };
                // The code's guess, to bound the fence reads by how far off it is.
                let span = (last_fence - first_fence) as f64;
                let guess =
                    (((t - first_fence) as f64 / span * last as f64) as usize).min(last - 1);
                let miss = guess.abs_diff(truth);
                misses[miss.min(2)] += 1;
                // A fresh directory: every fence unknown, so each fence the lookup needs
                // is read from the slots and counted.
                let d = Directory::new::<E8>(4096, n * 8, n);
                let mut probe = PageProbe::new(4096);
                let r = d.cold_page_range(&slots, 0, t, strict, &mut probe).unwrap();
                assert_eq!(r.page, truth, "target {t} strict {strict}");
                assert_eq!((r.first, r.fence), (truth * 512, keys[truth * 512]));
                // First, last, guess and next fences, then about 2 log2(miss) more.
                let bound = 4 + 2 * (usize::BITS - miss.leading_zeros()) as usize;
                assert!(
                    probe.reads() <= bound,
                    "target {t} strict {strict}: {} fence reads, guess {guess}, page {truth}",
                    probe.reads()
                );
            }
        }
        // The keys do bend the guess off by one page and by more.
        assert!(misses.iter().all(|&m| m > 0), "{misses:?}");
    }

    #[test]
    fn directory_follows_truncate_resize_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.index");
        let index = IndexFile::<E8>::open(&path, 0, Some(4 * 4096), OpenMode::ReadWrite)
            .unwrap()
            .with_search_strategy(PD);
        let append = |i: usize, k: i32| {
            index
                .append(&E8 {
                    k: I32Be::new(k),
                    v: I32Be::new(i as i32),
                })
                .unwrap()
        };
        for i in 0..2000 {
            append(i, 2 * i as i32);
        }
        let check = |index: &IndexFile<E8>| {
            let snap = index.snapshot().unwrap();
            let keys: Vec<i64> = snap.slots().iter().map(|e| e.key(0)).collect();
            for t in -2..(keys.last().copied().unwrap_or(0) + 3) {
                let want = keys.partition_point(|&k| k <= t).checked_sub(1);
                let got = snap.search(
                    t,
                    SearchField::Key,
                    Bound::LargestLowerBound,
                    &mut crate::NoProbe,
                );
                assert_eq!(got, want, "target {t}");
            }
        };
        check(&index);
        index.truncate_to_entries(700).unwrap();
        check(&index);
        // Re-append with different keys over the truncated pages.
        for i in 700..1500 {
            append(i, 3 * i as i32);
        }
        check(&index);
        index.resize(8 * 4096).unwrap();
        for i in 1500..4000 {
            append(i, 3 * i as i32);
        }
        check(&index);
        index.trim_to_valid_size().unwrap();
        check(&index);
        drop(index);
        let reopened = IndexFile::<E8>::open(&path, 0, None, OpenMode::ReadOnly)
            .unwrap()
            .with_search_strategy(PD);
        assert_eq!(reopened.entries(), 4000);
        check(&reopened);
    }

    /// Builds an index of `E8` or `E12` entries with the page directory and checks that
    /// every strategy agrees with the others on every kind of search.
    /// How a test index is built: `split` entries are appended before the page directory
    /// is installed (so their fences and block keys are filled lazily by searches, and by
    /// the writer for the page it goes on appending into), the rest after; then, with
    /// `cut`, the index is truncated to `cut` entries and the dropped ones re-appended
    /// with keys and values raised by `raise` (rewriting the fences and block keys).
    #[derive(Clone, Copy, Debug)]
    struct Build {
        split: usize,
        cut: Option<usize>,
        raise: i64,
    }

    const WRITER_ONLY: Build = Build {
        split: 0,
        cut: None,
        raise: 0,
    };

    fn compare_strategies<E: IndexEntry>(
        make: impl Fn(i64, i64) -> E,
        keys: &[i64],
        values: &[i64],
        page_size: usize,
        strict: bool,
        extra_targets: &[i64],
        build: Build,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let n = keys.len();
        let pd = SearchStrategy::PageDirectory { page_size };
        let index = IndexFile::<E>::open(
            dir.path().join("0.idx"),
            0,
            Some((n + 3) * E::SIZE),
            OpenMode::ReadWrite,
        )
        .unwrap();
        let split = build.split.min(n);
        for (&k, &v) in keys.iter().zip(values).take(split) {
            index.append(&make(k, v)).unwrap();
        }
        let index = index.with_search_strategy(pd);
        {
            // Lookups before the rest is appended fill fences and block keys lazily.
            let snap = index.snapshot().unwrap();
            for &k in keys.iter().take(split).step_by(3) {
                snap.search_with(
                    pd,
                    k,
                    SearchField::Key,
                    Bound::LargestLowerBound,
                    &mut crate::NoProbe,
                );
            }
        }
        for (&k, &v) in keys.iter().zip(values).skip(split) {
            index.append(&make(k, v)).unwrap();
        }
        let (mut keys, mut values) = (keys.to_vec(), values.to_vec());
        if let Some(cut) = build.cut {
            let cut = cut.min(n);
            {
                let snap = index.snapshot().unwrap();
                for &k in keys.iter().step_by(2) {
                    snap.search_with(
                        pd,
                        k,
                        SearchField::Key,
                        Bound::LargestLowerBound,
                        &mut crate::NoProbe,
                    );
                }
            }
            index.truncate_to_entries(cut).unwrap();
            for i in cut..n {
                keys[i] += build.raise;
                values[i] += build.raise;
                index.append(&make(keys[i], values[i])).unwrap();
            }
        }
        let (keys, values) = (&keys[..], &values[..]);
        let snap = index.snapshot().unwrap();
        assert!(snap.directory().is_some());
        let strategies = [
            SearchStrategy::Binary,
            SearchStrategy::default(),
            SearchStrategy::WarmCold {
                warm_section_bytes: 3 * E::SIZE,
            },
            SearchStrategy::PageDirectory { page_size },
        ];
        for (which, fields) in [(SearchField::Key, keys), (SearchField::Value, values)] {
            let mut targets: Vec<i64> = extra_targets.to_vec();
            for &f in fields {
                targets.extend([f - 1, f, f + 1]);
            }
            for &t in &targets {
                for bound in [Bound::LargestLowerBound, Bound::SmallestUpperBound] {
                    let results: Vec<Option<usize>> = strategies
                        .iter()
                        .map(|&s| snap.search_with(s, t, which, bound, &mut crate::NoProbe))
                        .collect();
                    if strict {
                        assert!(
                            results.iter().all(|r| *r == results[0]),
                            "{which:?} {bound:?} target {t}: {results:?}"
                        );
                    } else if !(bound == Bound::SmallestUpperBound && fields.first() == Some(&t)) {
                        // With duplicates the slot may differ; the field found may not.
                        let found: Vec<Option<i64>> =
                            results.iter().map(|r| r.map(|s| fields[s])).collect();
                        assert!(
                            found.iter().all(|f| *f == found[0]),
                            "{which:?} {bound:?} target {t}: {results:?} {found:?}"
                        );
                    }
                }
            }
        }
    }

    fn e8(k: i64, v: i64) -> E8 {
        E8 {
            k: I32Be::new(k as i32),
            v: I32Be::new(v as i32),
        }
    }

    fn e12(k: i64, v: i64) -> E12 {
        E12 {
            k: I64Be::new(k),
            v: I32Be::new(v as i32),
        }
    }

    /// Cumulative sums of `deltas` starting at `start` (monotonic; strictly if every
    /// delta is positive).
    fn running(start: i64, deltas: &[i64]) -> Vec<i64> {
        deltas
            .iter()
            .scan(start, |acc, d| {
                *acc += d;
                Some(*acc)
            })
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        #[test]
        fn all_strategies_agree_on_strictly_increasing_data(
            start in -1000i64..1000,
            kd in proptest::collection::vec(1i64..40, 0..300),
            vd in proptest::collection::vec(1i64..9, 300),
            page_size in proptest::sample::select(vec![8usize, 16, 32, 64, 128, 512, 4096]),
            extra in proptest::collection::vec(-2000i64..20000, 8),
            split in 0usize..300,
            cut in proptest::option::of(0usize..300),
        ) {
            let keys = running(start, &kd);
            let values = running(0, &vd[..keys.len()]);
            // Raising the re-appended entries by the largest step keeps them increasing.
            let build = Build { split, cut, raise: 40 };
            for b in [WRITER_ONLY, build] {
                compare_strategies(e8, &keys, &values, page_size, true, &extra, b);
                compare_strategies(e12, &keys, &values, page_size, true, &extra, b);
            }
        }

        #[test]
        fn all_strategies_agree_with_gaps_block_keys_cannot_hold(
            start in -1000i64..1000,
            kd in proptest::collection::vec(
                proptest::prop_oneof![1i64..40, (1i64 << 31)..(1i64 << 33)],
                0..200,
            ),
            page_size in proptest::sample::select(vec![64usize, 512, 4096]),
            split in 0usize..200,
            cut in proptest::option::of(0usize..200),
        ) {
            let keys = running(start, &kd);
            let values: Vec<i64> = (0..keys.len() as i64).collect();
            let build = Build { split, cut, raise: 1 << 33 };
            for b in [WRITER_ONLY, build] {
                compare_strategies(e12, &keys, &values, page_size, true, &[], b);
            }
        }

        #[test]
        fn all_strategies_find_the_same_fields_on_monotonic_data(
            start in -1000i64..1000,
            kd in proptest::collection::vec(0i64..3, 0..300),
            vd in proptest::collection::vec(0i64..3, 300),
            page_size in proptest::sample::select(vec![8usize, 16, 64, 512, 4096]),
            extra in proptest::collection::vec(-2000i64..2000, 8),
            split in 0usize..300,
        ) {
            let keys = running(start, &kd);
            let values = running(0, &vd[..keys.len()]);
            let build = Build { split, cut: None, raise: 0 };
            for b in [WRITER_ONLY, build] {
                compare_strategies(e8, &keys, &values, page_size, false, &extra, b);
                compare_strategies(e12, &keys, &values, page_size, false, &extra, b);
            }
        }
    }
}
