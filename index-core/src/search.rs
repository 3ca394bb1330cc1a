//! Search strategies: pure functions of a slice of entries and a target.
//!
//! Kafka answers every index lookup with one of two searches over the used slots:
//! the **largest lower bound** (LLB: the last slot whose field is `<= target`) and the
//! **smallest upper bound** (SUB: the first slot whose field is `>= target`, with Kafka's
//! slot-0 quirk, see below). The field is either the entry's key or its value
//! ([`SearchField`]). *Which* slots are read to find the answer is the strategy's business
//! ([`SearchStrategy`]); the answer never depends on the strategy.
//!
//! Every slot a search reads goes through a [`Probe`], so callers can record the bytes (and
//! hence the pages) a lookup touched. [`NoProbe`] is a zero-sized type whose methods are
//! empty and `#[inline(always)]`: with it the instrumentation compiles away.

use crate::codec::IndexEntry;
use crate::directory::Directory;

/// Default warm-section size of Kafka's warm/cold search, in bytes (8192: at most three
/// 4 KiB pages at the tail of the index).
pub const DEFAULT_WARM_SECTION_BYTES: usize = 8192;

/// Default page size assumed by [`PageProbe`] and the page directory, in bytes.
pub const DEFAULT_PAGE_SIZE: usize = 4096;

/// How an index finds a slot. Chosen per index; results are identical for all strategies,
/// only the slots (and pages) read differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SearchStrategy {
    /// Textbook binary search over all used slots, as Kafka did before 2.1 (KAFKA-6432):
    /// compare slot 0, then bisect `[0, n-1]`. Every lookup walks a path from the middle
    /// of the file, so a lookup at the tail touches about `log2(pages)` pages, and which
    /// pages those are changes whenever the index grows by a page.
    Binary,
    /// Kafka's warm/cold search (2.1+): the last `warm_section_bytes / entry size`
    /// entries form the *warm section*; a target at or above its first entry is searched
    /// only there (touching at most `ceil(warm_section_bytes / page) + 1` pages, which stay
    /// resident because every tail lookup touches them); anything else is searched in the
    /// cold section `[0, first warm slot]`.
    WarmCold {
        /// Size of the warm section in bytes; Kafka uses 8192.
        warm_section_bytes: usize,
    },
    /// Fence pointers: the index keeps in memory the key of the first slot overlapping
    /// each page of `page_size` bytes, that slot's entry (for entries that can straddle a
    /// page), and a block key per cache line of the page (268 bytes per 4 KiB page of 8-byte entries, 372 of 12-byte entries,
    /// see [`crate::directory`]). A **key** search finds the page and then the block in
    /// memory, and bisects only the slots of that block (one cache line of 8-byte
    /// entries, at most two of 12-byte entries), so every lookup, hot or cold, reads
    /// exactly one index page, answer entry included (see [`crate::directory`]). Targets
    /// below the first key are answered without reading any page.
    ///
    /// * **Value** searches (Kafka's `fetchUpperBoundOffset` by position, the time index's
    ///   `truncateTo` by offset) cannot use a directory of keys: they run Kafka's
    ///   warm/cold search with the default 8192-byte warm section.
    /// * The directory is maintained by an index configured with this strategy
    ///   ([`crate::IndexFile::with_search_strategy`]) or with [`SearchStrategy::Hybrid`]
    ///   (the default), with this page size. Searching an
    ///   index that has no directory, or one built for another page size, with this
    ///   strategy (e.g. through [`crate::Snapshot::search_with`]) falls back to warm/cold
    ///   with the default warm section; the results are the same.
    PageDirectory {
        /// Page size in bytes (a power of two; other values are rounded up to one).
        /// Default [`DEFAULT_PAGE_SIZE`] (4096).
        page_size: usize,
    },
    /// **The default.** Kafka's warm/cold split, with the cold part searched through the
    /// page directory: a warm lookup (target above the first warm slot's key) runs
    /// exactly as [`SearchStrategy::WarmCold`] does (the branch-free bisection of the
    /// warm section, at most `ceil(warm_section_bytes / page_size) + 1` pages: 3 with the
    /// defaults, the pages every tail lookup keeps resident); a cold lookup finds its page
    /// and block among the directory's fences and block keys of the cold part
    /// `[0, first warm slot]` only, as [`SearchStrategy::PageDirectory`] does, and reads
    /// the first warm slot (Kafka's warm/cold decision; its page is one every warm lookup
    /// keeps resident) and **one page** of the cold part, answer included (one cache line
    /// of it away from the cold part's last three pages, which are bisected whole),
    /// instead of the `log2` chain of dependent cache misses of Kafka's bisection. A
    /// target below slot 0's key reads no cold page (fence 0 is in memory).
    ///
    /// * **Kafka's answers, Kafka's ranges.** The warm/cold decision is Kafka's (the first
    ///   warm slot compared with the target), slot 0 is checked before the cold search
    ///   (from the directory's memory: its fence), and the cold search never looks past
    ///   the first warm slot, so the answer is that of
    ///   [`kafka_equivalent`](SearchStrategy::kafka_equivalent) (the same warm/cold) on
    ///   every valid index. On keys that do not increase strictly (the zero slots of an
    ///   index reopened untrimmed, a corrupt index) a largest lower bound is still a slot
    ///   whose key is `<= target`, or none when slot 0's key is above it, as Kafka's.
    /// * **Value** searches run Kafka's warm/cold with this strategy's warm section.
    /// * The directory is maintained by every index opened with the default strategy
    ///   (see [`crate::directory`] for its memory: 6.5 % of the index's used pages with
    ///   8-byte entries, 9.1 % with 12-byte entries, allocated zeroed and committed as
    ///   pages are used). Without a directory of this page size the lookup runs
    ///   [`kafka_equivalent`](SearchStrategy::kafka_equivalent)'s fast kernel (same
    ///   results).
    Hybrid {
        /// Size of the warm section in bytes; Kafka uses 8192.
        warm_section_bytes: usize,
        /// Page size of the directory in bytes (a power of two; other values are rounded
        /// up to one). Default [`DEFAULT_PAGE_SIZE`] (4096).
        page_size: usize,
    },
}

impl Default for SearchStrategy {
    /// [`SearchStrategy::HYBRID`]: Kafka's warm section of 8192 bytes, the cold part
    /// through a page directory of 4096-byte pages.
    fn default() -> Self {
        SearchStrategy::HYBRID
    }
}

impl SearchStrategy {
    /// The page-directory strategy with the default 4096-byte page.
    pub const PAGE_DIRECTORY: SearchStrategy = SearchStrategy::PageDirectory {
        page_size: DEFAULT_PAGE_SIZE,
    };

    /// Kafka's warm/cold search (2.1+) with its 8192-byte warm section: what Kafka 4.4
    /// runs, and the strategy whose answers [`SearchStrategy::HYBRID`] equals.
    pub const WARM_COLD: SearchStrategy = SearchStrategy::WarmCold {
        warm_section_bytes: DEFAULT_WARM_SECTION_BYTES,
    };

    /// The hybrid strategy with Kafka's 8192-byte warm section and 4096-byte directory
    /// pages: the default.
    pub const HYBRID: SearchStrategy = SearchStrategy::Hybrid {
        warm_section_bytes: DEFAULT_WARM_SECTION_BYTES,
        page_size: DEFAULT_PAGE_SIZE,
    };

    /// Short stable name for reports: `binary`, `warm-cold`, `page-directory` or
    /// `hybrid`.
    pub fn name(&self) -> &'static str {
        match self {
            SearchStrategy::Binary => "binary",
            SearchStrategy::WarmCold { .. } => "warm-cold",
            SearchStrategy::PageDirectory { .. } => "page-directory",
            SearchStrategy::Hybrid { .. } => "hybrid",
        }
    }

    /// The page size of the directory this strategy searches through (`None` for
    /// strategies without one): an index configured with it keeps a directory of that
    /// page size.
    #[inline]
    pub fn directory_page_size(&self) -> Option<usize> {
        match *self {
            SearchStrategy::PageDirectory { page_size }
            | SearchStrategy::Hybrid { page_size, .. } => Some(page_size),
            SearchStrategy::Binary | SearchStrategy::WarmCold { .. } => None,
        }
    }

    /// The Kafka search whose answers this strategy gives, slot for slot, on every valid
    /// index (and whose kernel it falls back to without a directory): itself for
    /// [`SearchStrategy::Binary`] and [`SearchStrategy::WarmCold`]; warm/cold with the
    /// same warm section for [`SearchStrategy::Hybrid`]; [`SearchStrategy::WARM_COLD`]
    /// for [`SearchStrategy::PageDirectory`].
    #[inline]
    pub fn kafka_equivalent(&self) -> SearchStrategy {
        match *self {
            SearchStrategy::Binary | SearchStrategy::WarmCold { .. } => *self,
            SearchStrategy::PageDirectory { .. } => SearchStrategy::WARM_COLD,
            SearchStrategy::Hybrid {
                warm_section_bytes, ..
            } => SearchStrategy::WarmCold { warm_section_bytes },
        }
    }

    /// For [`SearchStrategy::WarmCold`] and [`SearchStrategy::Hybrid`], the first slot of
    /// the warm section of an index with `entries` used slots of `entry_size` bytes
    /// (Kafka's `max(0, n - 1 - warmEntries)`); `None` for strategies without one.
    #[inline]
    pub fn first_warm_slot(&self, entries: usize, entry_size: usize) -> Option<usize> {
        match *self {
            SearchStrategy::Binary | SearchStrategy::PageDirectory { .. } => None,
            SearchStrategy::WarmCold { warm_section_bytes }
            | SearchStrategy::Hybrid {
                warm_section_bytes, ..
            } => {
                let warm_entries = warm_section_bytes / entry_size;
                Some(entries.saturating_sub(1).saturating_sub(warm_entries))
            }
        }
    }
}

/// Which field of an entry a search compares with the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SearchField {
    /// The entry key: offset (offset index) or timestamp (time index).
    Key,
    /// The entry value: position (offset index) or offset (time index).
    Value,
}

/// Which bound a search returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// The last slot whose field is `<= target` (Kafka's `largestLowerBoundSlotFor`).
    LargestLowerBound,
    /// The first slot whose field is `>= target` (Kafka's `smallestUpperBoundSlotFor`,
    /// including its quirk: slot 0 is never compared inside the bisection, so a target
    /// exactly equal to slot 0's field yields slot 1, or none when there is one slot).
    SmallestUpperBound,
}

/// Receives every byte range a search reads, so page touches can be counted.
///
/// Implementations must be cheap: [`Probe::touch`] is called once per slot compared.
pub trait Probe {
    /// The search read `len` bytes starting at byte `offset` of the index file.
    fn touch(&mut self, offset: usize, len: usize);
}

/// The probe that records nothing; compiled away entirely.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoProbe;

impl Probe for NoProbe {
    #[inline(always)]
    fn touch(&mut self, _offset: usize, _len: usize) {}
}

impl<P: Probe + ?Sized> Probe for &mut P {
    #[inline(always)]
    fn touch(&mut self, offset: usize, len: usize) {
        (**self).touch(offset, len)
    }
}

/// Records the distinct pages a search touched (page size in bytes, default 4096), in
/// the order first touched, plus the number of slot reads.
#[derive(Clone, Debug)]
pub struct PageProbe {
    page_size: usize,
    pages: Vec<usize>,
    reads: usize,
}

impl Default for PageProbe {
    fn default() -> Self {
        Self::new(DEFAULT_PAGE_SIZE)
    }
}

impl PageProbe {
    /// A probe for pages of `page_size` bytes (must be non-zero; 0 is treated as 1).
    pub fn new(page_size: usize) -> Self {
        Self {
            page_size: page_size.max(1),
            pages: Vec::new(),
            reads: 0,
        }
    }
    /// Page size in bytes.
    pub fn page_size(&self) -> usize {
        self.page_size
    }
    /// Distinct page numbers (byte offset / page size) touched, in first-touch order.
    pub fn pages(&self) -> &[usize] {
        &self.pages
    }
    /// Number of distinct pages touched.
    pub fn distinct_pages(&self) -> usize {
        self.pages.len()
    }
    /// Number of slot reads (comparisons) made.
    pub fn reads(&self) -> usize {
        self.reads
    }
    /// Forgets everything recorded, keeping the page size.
    pub fn clear(&mut self) {
        self.pages.clear();
        self.reads = 0;
    }
}

impl Probe for PageProbe {
    fn touch(&mut self, offset: usize, len: usize) {
        self.reads += 1;
        let first = offset / self.page_size;
        let last = (offset + len.max(1) - 1) / self.page_size;
        for page in first..=last {
            // A lookup touches a handful of pages: a linear scan beats hashing here.
            if !self.pages.contains(&page) {
                self.pages.push(page);
            }
        }
    }
}

#[inline(always)]
fn field<E: IndexEntry, P: Probe>(
    slots: &[E],
    slot: usize,
    base_offset: i64,
    which: SearchField,
    probe: &mut P,
) -> i64 {
    probe.touch(slot * E::SIZE, E::SIZE);
    let e = &slots[slot];
    match which {
        SearchField::Key => e.key(base_offset),
        SearchField::Value => e.value(base_offset),
    }
}

/// Kafka's bisection over the inclusive slot range `[begin, end]` (upper middle; exact
/// match returns at once). Returns the slot for the requested bound (`None` = Kafka's -1).
/// The arguments mirror [`search`]'s, with the range as `(begin, end)`.
#[inline(always)]
fn kafka_bisect<E: IndexEntry, P: Probe>(
    slots: &[E],
    base_offset: i64,
    target: i64,
    which: SearchField,
    bound: Bound,
    (begin, end): (usize, usize),
    probe: &mut P,
) -> Option<usize> {
    let (mut lo, mut hi) = (begin, end);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let found = field(slots, mid, base_offset, which, probe);
        if found == target {
            return Some(mid);
        }
        if found > target {
            hi = mid - 1;
        } else {
            lo = mid;
        }
    }
    match bound {
        Bound::LargestLowerBound => Some(lo),
        Bound::SmallestUpperBound => {
            if lo == slots.len() - 1 {
                None
            } else {
                Some(lo + 1)
            }
        }
    }
}

/// Finds the slot for `target` among `slots` (the used entries of an index whose segment
/// starts at `base_offset`), comparing `which` field with signed 64-bit comparison.
///
/// Returns `None` where Kafka returns -1: the index is empty; for
/// [`Bound::LargestLowerBound`] every field is `> target`; for
/// [`Bound::SmallestUpperBound`] every field is `< target` (see the slot-0 quirk there).
///
/// Every **key** search runs a **branch-free** bisection (a fixed number of halving steps for a
/// given range, each a compare and a conditional move, no early exit on an exact match)
/// over the same slot range as Kafka's search, so that consecutive lookups overlap in the
/// processor instead of waiting on mispredicted branches. For strictly increasing keys
/// (every valid index) the result is exactly Kafka's ([`kafka_search`], the oracle),
/// including the slot-0 quirk of the smallest upper bound; the slots read are Kafka's
/// range, so the pages touched stay within the same bounds (warm/cold: the warm section
/// and the slot before it). On keys that are not strictly increasing (a corrupt index,
/// which the segment layer rebuilds on load, or an index reopened at its preallocated size
/// after a crash, whose zero slots read as entries `(base offset, 0)` that Kafka's
/// `sanityCheck` of an offset index accepts) the answer can be another slot than Kafka's,
/// which stops at the first exact match its bisection meets; it is still a slot of the
/// index whose key is `<= target` (largest lower bound). With equal keys, Kafka returns whichever equal slot its bisection meets
/// first, this search the **last** one `<= target` (largest lower bound) or the slot
/// after the last one `< target` (smallest upper bound); the key found is the same.
///
/// **Value** searches (the offset index's position, the time index's offset) run
/// Kafka's kernel step by step ([`kafka_search`]): the values of a valid time index are
/// only non-decreasing, and Kafka's `truncateTo` keeps as many entries as the equal value
/// its bisection meets first says (a quirk the spec verifies in Kafka).
///
/// This is a pure function of the slice and the target: it performs no I/O beyond
/// reading `slots`, and reports each slot it reads to `probe`.
///
/// [`SearchStrategy::PageDirectory`] and [`SearchStrategy::Hybrid`] need the index's
/// directory, which this function does not have: here they run the fast kernel of their
/// [`SearchStrategy::kafka_equivalent`] (same results). [`crate::Snapshot::search`]
/// passes the directory.
#[inline]
pub fn search<E: IndexEntry, P: Probe>(
    slots: &[E],
    base_offset: i64,
    target: i64,
    which: SearchField,
    bound: Bound,
    strategy: SearchStrategy,
    probe: &mut P,
) -> Option<usize> {
    search_in(
        (slots, None),
        base_offset,
        target,
        which,
        bound,
        (strategy, false),
        probe,
    )
}

/// [`search`] with the index's page directory, if it has one (used by snapshots): the
/// index is passed as `(slots, directory)`, the strategy as `(strategy, own)`. With `own`
/// the directory is the one the index built for `strategy` (its lookups and its
/// snapshots' own searches), and is used without comparing page sizes (which costs a hot-tail lookup a few instructions); else
/// (another strategy's search on the same view) only when the page sizes agree. Either
/// way the answers are the same: a directory only changes which slots are read.
///
/// `#[inline(always)]`: at a lookup's call site the field and the bound are constants,
/// so inlining folds the dispatch away; left to the compiler, the lookup path of
/// `IndexFile::search` (nested in the reader-slot closure) called it out of line, which
/// cost about a third of a hot-tail lookup (`cargo bench -p bench-harness --bench limit`).
#[inline(always)]
pub(crate) fn search_in<E: IndexEntry, P: Probe>(
    (slots, directory): (&[E], Option<&Directory>),
    base_offset: i64,
    target: i64,
    which: SearchField,
    bound: Bound,
    (strategy, own): (SearchStrategy, bool),
    probe: &mut P,
) -> Option<usize> {
    if which == SearchField::Value {
        // Values are only non-decreasing in valid indexes (a time index may hold one
        // offset in several entries), and Kafka's answer then depends on where its
        // bisection meets an equal value (the `truncateTo` quirk of the spec): value
        // searches, which are rare (truncation, fetch upper bounds), run Kafka's kernel.
        return kafka_search(slots, base_offset, target, which, bound, strategy, probe);
    }
    let dir = match (strategy.directory_page_size(), directory) {
        (Some(_), Some(dir)) if own => Some(dir),
        (Some(page_size), Some(dir))
            if dir.page_size() == crate::directory::normalize_page_size(page_size) =>
        {
            Some(dir)
        }
        _ => None,
    };
    match (strategy, dir) {
        (SearchStrategy::PageDirectory { .. }, Some(dir)) => {
            search_paged(slots, dir, base_offset, target, bound, probe)
        }
        (SearchStrategy::Hybrid { .. }, Some(dir)) => {
            search_hybrid(slots, dir, base_offset, target, bound, strategy, probe)
        }
        _ => search_fast(
            slots,
            base_offset,
            target,
            which,
            bound,
            strategy.kafka_equivalent(),
            probe,
        ),
    }
}

/// Key search of [`SearchStrategy::Hybrid`]: Kafka's warm section as
/// [`SearchStrategy::WarmCold`] searches it, the cold part `[0, first warm slot]` through
/// the page directory.
///
/// Why this equals Kafka's warm/cold answer on strictly increasing keys: the warm branch
/// is [`search_fast`]'s. In the cold branch the first warm slot's key is `>= target` and
/// slot 0's `<= target` (checked first, from fence 0, as Kafka checks slot 0): Kafka's
/// bisection over `[0, first_warm]` answers the last slot of that range `<= target`
/// (largest lower bound) or the slot after the last one `< target`, slot 0 counted as
/// qualifying (smallest upper bound), which is what the page directory finds over the
/// range's slots. On keys that do not increase strictly, the fences of the range need not
/// increase either: the directory still answers a page whose fence qualifies (see
/// [`Directory::page_range`]), so that a largest lower bound is always a slot whose key is
/// `<= target`.
#[inline(always)]
fn search_hybrid<E: IndexEntry, P: Probe>(
    slots: &[E],
    dir: &Directory,
    base_offset: i64,
    target: i64,
    bound: Bound,
    strategy: SearchStrategy,
    probe: &mut P,
) -> Option<usize> {
    let n = slots.len();
    if n == 0 {
        return None;
    }
    let first_warm = strategy.first_warm_slot(n, E::SIZE)?;
    let key = SearchField::Key;
    if field(slots, first_warm, base_offset, key, probe) < target {
        // Warm: Kafka's range `[first_warm, n - 1]`, the branch-free bisection.
        return match bound {
            Bound::LargestLowerBound => Some(last_qualifying(
                slots,
                base_offset,
                target,
                key,
                false,
                (first_warm, n - 1),
                probe,
            )),
            Bound::SmallestUpperBound => {
                let lo = last_qualifying(
                    slots,
                    base_offset,
                    target,
                    key,
                    true,
                    (first_warm, n - 1),
                    probe,
                );
                (lo + 1 < n).then_some(lo + 1)
            }
        };
    }
    // Cold: Kafka's slot-0 check, from fence 0 (memory once known).
    if dir.fence_key(0, slots, base_offset, probe) > target {
        return match bound {
            Bound::LargestLowerBound => None,
            Bound::SmallestUpperBound => Some(0),
        };
    }
    // `..first_warm + 1`, not `..=first_warm`: the inclusive range's index was left as an
    // out-of-line call in the lookup (`first_warm < n`, so the sum cannot overflow).
    let cold = &slots[..first_warm + 1];
    let strict = bound == Bound::SmallestUpperBound;
    // The page's fence qualifies, also on fences that do not increase.
    let range = dir.cold_page_range(cold, base_offset, target, strict, probe);
    let Some(range) = range else {
        // No fence qualifies: for the largest lower bound impossible (fence 0 does); for
        // the smallest upper bound slot 0's key equals the target (Kafka's quirk: slot 1),
        // or the fences do not increase (then Kafka's range with the warm/cold kernel).
        if strict && dir.fence_key(0, slots, base_offset, probe) == target {
            return (n > 1).then_some(1);
        }
        return search_fast(
            slots,
            base_offset,
            target,
            key,
            bound,
            strategy.kafka_equivalent(),
            probe,
        );
    };
    let (lo, hi) = dir.block_range(range, cold, base_offset, target, strict, probe);
    let last = last_qualifying(cold, base_offset, target, key, strict, (lo, hi), probe);
    match bound {
        Bound::LargestLowerBound => Some(last),
        Bound::SmallestUpperBound => (last + 1 < n).then_some(last + 1),
    }
}

/// Key search through the page directory: find the page in memory, then search only
/// the slots of that page.
///
/// For strictly increasing keys the result is Kafka's (including the slot-0 quirk of
/// the smallest upper bound). Within the page the search is the branch-free "last slot
/// that qualifies" of [`search`], with the same answers on duplicate keys.
#[inline]
fn search_paged<E: IndexEntry, P: Probe>(
    slots: &[E],
    dir: &Directory,
    base_offset: i64,
    target: i64,
    bound: Bound,
    probe: &mut P,
) -> Option<usize> {
    let n = slots.len();
    if n == 0 {
        return None;
    }
    match bound {
        Bound::LargestLowerBound => {
            // No fence <= target: slot 0's key (fence 0) is > target.
            let r = dir.page_range(slots, base_offset, target, false, probe)?;
            let (lo, hi) = dir.block_range(r, slots, base_offset, target, false, probe);
            Some(last_qualifying(
                slots,
                base_offset,
                target,
                SearchField::Key,
                false,
                (lo, hi),
                probe,
            ))
        }
        Bound::SmallestUpperBound => {
            match dir.page_range(slots, base_offset, target, true, probe) {
                // Slot lo's key is < target: the answer is the slot after the last one < target.
                Some(r) => {
                    let (lo, hi) = dir.block_range(r, slots, base_offset, target, true, probe);
                    let last_below = last_qualifying(
                        slots,
                        base_offset,
                        target,
                        SearchField::Key,
                        true,
                        (lo, hi),
                        probe,
                    );
                    (last_below + 1 < n).then_some(last_below + 1)
                }
                // target <= slot 0's key: slot 0, or Kafka's quirk on equality (slot 1).
                None => {
                    if dir.fence_key(0, slots, base_offset, probe) > target {
                        Some(0)
                    } else {
                        (n > 1).then_some(1)
                    }
                }
            }
        }
    }
}

/// The last slot of `[lo, hi]` whose field is `<= target` (`strict = false`) or
/// `< target` (`strict = true`), for fields increasing over the range; slot `lo` is known
/// to qualify (or is Kafka's `begin`, which Kafka's bisection never compares either) and
/// is never read. Branch-free halving: `ceil(log2(hi - lo + 1))` slot reads, all in
/// `(lo, hi]`, the count fixed by the range alone (the loop branch is predictable; the
/// comparison becomes a conditional move). The range is passed as `(lo, hi)`.
#[inline(always)]
fn last_qualifying<E: IndexEntry, P: Probe>(
    slots: &[E],
    base_offset: i64,
    target: i64,
    which: SearchField,
    strict: bool,
    (lo, hi): (usize, usize),
    probe: &mut P,
) -> usize {
    // One monomorphic loop per field and bound, so that nothing but the halving step is
    // left inside it.
    match (which, strict) {
        (SearchField::Key, false) => halve(slots, lo, hi, probe, |e| e.key(base_offset) <= target),
        (SearchField::Key, true) => halve(slots, lo, hi, probe, |e| e.key(base_offset) < target),
        (SearchField::Value, false) => {
            halve(slots, lo, hi, probe, |e| e.value(base_offset) <= target)
        }
        (SearchField::Value, true) => {
            halve(slots, lo, hi, probe, |e| e.value(base_offset) < target)
        }
    }
}

/// Distance (bytes) between the two slots the next halving step may read above which
/// [`halve`] prefetches both.
const PREFETCH_MIN_BYTES: usize = 4096;

/// The halving loop of [`last_qualifying`]: the last slot of `[lo, hi]` for which
/// `qualifies` holds, slot `lo` assumed to (and never read).
#[inline(always)]
fn halve<E: IndexEntry, P: Probe>(
    slots: &[E],
    lo: usize,
    hi: usize,
    probe: &mut P,
    qualifies: impl Fn(&E) -> bool,
) -> usize {
    // `..hi + 1` rather than `..=hi`: the inclusive range's index was compiled as an
    // out-of-line call before every hybrid bisection (`hi < slots.len()`: no overflow).
    let slots = &slots[..hi + 1];
    let mut base = lo;
    let mut size = hi - lo + 1;
    // The wide steps first: with the comparison a conditional move nothing is fetched
    // speculatively, so while the two slots the next step may read are more than
    // `PREFETCH_MIN_BYTES` apart, prefetch both (a wide range is where the cache misses
    // are). `size` only shrinks, so once a step is narrow every later one is too.
    while (size - size / 2) / 2 * E::SIZE >= PREFETCH_MIN_BYTES {
        let half = size / 2;
        let mid = base + half;
        let next = (size - half) / 2;
        if let (Some(a), Some(b)) = (slots.get(base + next), slots.get(mid + next)) {
            crate::sys::prefetch(a);
            crate::sys::prefetch(b);
        }
        base = step(slots, mid, base, probe, &qualifies);
        size -= half;
    }
    // The narrow steps (a hot tail's whole search, already cached): nothing but the
    // halving, so that back-to-back lookups overlap as far as the core allows.
    while size > 1 {
        let half = size / 2;
        base = step(slots, base + half, base, probe, &qualifies);
        size -= half;
    }
    base
}

/// One halving step of [`halve`]: `mid` if its slot qualifies, else `base`.
#[inline(always)]
fn step<E: IndexEntry, P: Probe>(
    slots: &[E],
    mid: usize,
    base: usize,
    probe: &mut P,
    qualifies: &impl Fn(&E) -> bool,
) -> usize {
    probe.touch(mid * E::SIZE, E::SIZE);
    // `mid <= hi` always; the bounds check is against `hi + 1` and predictable. The
    // comparison is not: `select_unpredictable` makes it a conditional move (a branch
    // here mispredicts about every other step on spread targets).
    std::hint::select_unpredictable(qualifies(&slots[mid]), mid, base)
}

/// The fast kernels of [`search`] for binary and warm/cold: Kafka's choice of range
/// (slot-0 check, warm-section check), then [`last_qualifying`] over it.
///
/// Why this equals Kafka's answer on strictly increasing fields: Kafka's bisection over
/// `[begin, end]` keeps `field(lo) <= target` (or `lo = begin`, never compared) and
/// `field(hi + 1) > target`, and returns at once on equality. Without equality its `lo`
/// ends at the last slot `<= target`; with equality at slot `s > begin` it returns `s`,
/// which is then also the last slot `<= target`, and, for the smallest upper bound, the
/// slot after the last one `< target`. The one slot never compared is `begin`: when its
/// field equals the target (the slot-0 quirk; in the warm section `field(begin) <
/// target` holds), Kafka's smallest upper bound is `begin + 1`, which is what "the slot
/// after the last one `< target`, counting `begin` as qualifying" gives too.
#[inline(always)]
fn search_fast<E: IndexEntry, P: Probe>(
    slots: &[E],
    base_offset: i64,
    target: i64,
    which: SearchField,
    bound: Bound,
    strategy: SearchStrategy,
    probe: &mut P,
) -> Option<usize> {
    let n = slots.len();
    if n == 0 {
        return None;
    }
    let below_first = |probe: &mut P| field(slots, 0, base_offset, which, probe) > target;
    let (begin, end) = match strategy.first_warm_slot(n, E::SIZE) {
        Some(first_warm) if field(slots, first_warm, base_offset, which, probe) < target => {
            (first_warm, n - 1)
        }
        warm => {
            if below_first(probe) {
                return match bound {
                    Bound::LargestLowerBound => None,
                    Bound::SmallestUpperBound => Some(0),
                };
            }
            (0, warm.unwrap_or(n - 1))
        }
    };
    match bound {
        Bound::LargestLowerBound => Some(last_qualifying(
            slots,
            base_offset,
            target,
            which,
            false,
            (begin, end),
            probe,
        )),
        Bound::SmallestUpperBound => {
            let lo = last_qualifying(slots, base_offset, target, which, true, (begin, end), probe);
            (lo + 1 < n).then_some(lo + 1)
        }
    }
}

/// Kafka's searches exactly as Kafka runs them, step by step: binary (pre-2.1,
/// `AbstractIndex.indexSlotRangeFor` before KAFKA-6432) and warm/cold (2.1+), with the
/// early exit on an exact match. The oracle that [`search`]'s fast kernels are checked
/// against (it runs [`SearchStrategy::kafka_equivalent`]: for
/// [`SearchStrategy::PageDirectory`] warm/cold with the default warm section, for
/// [`SearchStrategy::Hybrid`] warm/cold with the hybrid's warm section). Same contract as [`search`]; on any input (also non-increasing fields)
/// it returns Kafka's slot.
#[inline]
pub fn kafka_search<E: IndexEntry, P: Probe>(
    slots: &[E],
    base_offset: i64,
    target: i64,
    which: SearchField,
    bound: Bound,
    strategy: SearchStrategy,
    probe: &mut P,
) -> Option<usize> {
    let n = slots.len();
    if n == 0 {
        return None;
    }
    let strategy = strategy.kafka_equivalent();
    let below_first = |probe: &mut P| {
        if field(slots, 0, base_offset, which, probe) > target {
            Some(match bound {
                Bound::LargestLowerBound => None,
                Bound::SmallestUpperBound => Some(0),
            })
        } else {
            None
        }
    };
    match strategy.first_warm_slot(n, E::SIZE) {
        None => {
            if let Some(r) = below_first(probe) {
                return r;
            }
            kafka_bisect(slots, base_offset, target, which, bound, (0, n - 1), probe)
        }
        Some(first_warm) => {
            if field(slots, first_warm, base_offset, which, probe) < target {
                return kafka_bisect(
                    slots,
                    base_offset,
                    target,
                    which,
                    bound,
                    (first_warm, n - 1),
                    probe,
                );
            }
            if let Some(r) = below_first(probe) {
                return r;
            }
            kafka_bisect(
                slots,
                base_offset,
                target,
                which,
                bound,
                (0, first_warm),
                probe,
            )
        }
    }
}

/// Whether a lookup of `target` lands in the warm section under `strategy`: the field of
/// the first warm slot is `< target` (the condition under which Kafka searches only the
/// warm section). Always `false` for strategies without a warm section and for an empty
/// index. Reads one slot, reported to `probe`.
pub fn lands_in_warm_section<E: IndexEntry, P: Probe>(
    slots: &[E],
    base_offset: i64,
    target: i64,
    which: SearchField,
    strategy: SearchStrategy,
    probe: &mut P,
) -> bool {
    if slots.is_empty() {
        return false;
    }
    match strategy.first_warm_slot(slots.len(), E::SIZE) {
        Some(first_warm) => field(slots, first_warm, base_offset, which, probe) < target,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::I64Be;
    use bytemuck::{Pod, Zeroable};

    /// A 16-byte test entry: key and value as absolute i64.
    #[derive(Clone, Copy, Debug, Pod, Zeroable)]
    #[repr(C)]
    struct Kv {
        k: I64Be,
        v: I64Be,
    }
    impl IndexEntry for Kv {
        const SIZE: usize = 16;
        const KIND: &'static str = "test index";
        fn key(&self, _b: i64) -> i64 {
            self.k.get()
        }
        fn value(&self, _b: i64) -> i64 {
            self.v.get()
        }
    }

    fn kvs(keys: &[i64]) -> Vec<Kv> {
        keys.iter()
            .map(|&k| Kv {
                k: I64Be::new(k),
                v: I64Be::new(k * 10),
            })
            .collect()
    }

    const STRATEGIES: [SearchStrategy; 3] = [
        SearchStrategy::Binary,
        SearchStrategy::WarmCold {
            warm_section_bytes: 8192,
        },
        SearchStrategy::WarmCold {
            warm_section_bytes: 32,
        },
    ];

    #[test]
    fn empty_index() {
        for s in STRATEGIES {
            for b in [Bound::LargestLowerBound, Bound::SmallestUpperBound] {
                assert_eq!(
                    search::<Kv, _>(&[], 0, 5, SearchField::Key, b, s, &mut NoProbe),
                    None
                );
            }
        }
    }

    #[test]
    fn llb_and_sub_with_slot_zero_quirk() {
        let slots = kvs(&[10, 20, 30, 40, 50, 60, 70]);
        for s in STRATEGIES {
            let llb = |t| {
                search(
                    &slots,
                    0,
                    t,
                    SearchField::Key,
                    Bound::LargestLowerBound,
                    s,
                    &mut NoProbe,
                )
            };
            let sub = |t| {
                search(
                    &slots,
                    0,
                    t,
                    SearchField::Key,
                    Bound::SmallestUpperBound,
                    s,
                    &mut NoProbe,
                )
            };
            assert_eq!(llb(5), None);
            assert_eq!(llb(10), Some(0));
            assert_eq!(llb(15), Some(0));
            assert_eq!(llb(70), Some(6));
            assert_eq!(llb(1000), Some(6));
            assert_eq!(sub(5), Some(0));
            // Kafka quirk: equality with slot 0 returns slot 1.
            assert_eq!(sub(10), Some(1), "{s:?}");
            assert_eq!(sub(11), Some(1));
            assert_eq!(sub(30), Some(2));
            assert_eq!(sub(70), Some(6));
            assert_eq!(sub(71), None);
        }
        let one = kvs(&[10]);
        assert_eq!(
            search(
                &one,
                0,
                10,
                SearchField::Key,
                Bound::SmallestUpperBound,
                SearchStrategy::default(),
                &mut NoProbe
            ),
            None
        );
    }

    #[test]
    fn page_probe_counts_pages_and_straddles() {
        let mut p = PageProbe::new(4096);
        p.touch(4090, 12);
        assert_eq!(p.pages(), &[0, 1]);
        p.touch(0, 12);
        assert_eq!(p.distinct_pages(), 2);
        assert_eq!(p.reads(), 2);
    }

    #[test]
    fn warm_section_bounds_tail_lookups_to_three_pages() {
        // 13 pages of 16-byte entries, lookups at the tail.
        let n = 13 * 4096 / 16;
        let keys: Vec<i64> = (0..n as i64).map(|i| i * 2).collect();
        let slots = kvs(&keys);
        let s = SearchStrategy::default();
        for t in (keys[n - 400]..=keys[n - 1] + 5).step_by(7) {
            let mut p = PageProbe::new(4096);
            search(
                &slots,
                0,
                t,
                SearchField::Key,
                Bound::LargestLowerBound,
                s,
                &mut p,
            );
            assert!(p.distinct_pages() <= 3, "target {t}: {:?}", p.pages());
        }
    }
}
