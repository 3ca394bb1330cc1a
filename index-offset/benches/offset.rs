//! Criterion benchmarks of the offset index (`cargo bench -p index-offset`).
//!
//! * `offset-lookup-{hot-tail,uniform}/<strategy>/<size>`: [`OffsetIndex::lookup`] (the
//!   whole API call: snapshot, search, decode) per search strategy, on a full index of
//!   4 KiB, 64 KiB, 1 MiB and 10 MiB, side by side with `partition_point`: the same keys
//!   in an in-memory `Vec<i64>` (native-endian, no mapping, no snapshot), the physical
//!   limit of a binary search. *Hot-tail* targets are uniform over the keys of the last
//!   8192 bytes of entries (consumers and followers near the end of the log); *uniform*
//!   targets over all keys.
//! * `offset-search-hot-tail/<strategy>/<size>`: the search alone
//!   ([`Snapshot::search_with`](index_offset::Snapshot::search_with) on a snapshot taken
//!   once), to separate the algorithm from the per-lookup snapshot cost.
//! * `offset-append/<what>`: entries appended per second. `offset-index` is
//!   [`OffsetIndex::append`] (Kafka's checks, then the write, one writer lock per
//!   call); `appender` makes the same calls through one `appender()` per run (the lock
//!   taken once); `raw-index-file` is
//!   `IndexFile::<RawOffsetEntry>::append` of pre-encoded entries (writer lock and
//!   publication, no Kafka checks); `plain-mmap-copy` copies the same 8 bytes into the
//!   same kind of mapping (`index_core::sys::Mapping::write`: a bounds check and a
//!   `memcpy`, no lock, no publication) and is the baseline of the append goal;
//!   `vec-copy` (`copy_from_slice` into a `Vec<u8>`) is a lower bound;
//!   `offset-index-warm-cold` is `offset-index` on an index with Kafka's warm/cold
//!   strategy, which keeps no page directory (the default's directory costs each
//!   append its fence and block-key stores).
//! * `offset-readers/<strategy>/{idle,appending}`: hot-tail lookups per second on a 1 MiB
//!   index, alone and with a concurrent appender thread.
//!
//! After the benchmarks a **ratios** section measures the goals' ratios again with the
//! competitors interleaved (robust to load changes on a shared machine, see the
//! `bench-support` crate), prints them and writes `<criterion dir>/ratios/offset.json`.
//!
//! The benchmarks themselves are `bench_support::index`, shared with the time index's;
//! this file says what an offset index is to them.

use bench_support::index::{self, BenchIndex};
use index_offset::{OffsetIndex, RawOffsetEntry};

/// Value (position) of entry `i`.
fn position(i: usize) -> u32 {
    (i as u32).wrapping_mul(4000)
}

/// The offset index as the shared benchmarks see it (a local type: the trait and the
/// index are both of other crates).
struct Offsets(OffsetIndex);

impl BenchIndex for Offsets {
    type Entry = RawOffsetEntry;
    const KIND: &'static str = "offset";
    const SUFFIX: &'static str = "index";
    const KEY_GAP: i64 = 3;
    const WARM_COLD_ARM: bool = true;

    /// Key (absolute offset) of entry `i`.
    fn key(i: usize) -> i64 {
        3 * i as i64
    }
    fn value(i: usize) -> i64 {
        position(i) as i64
    }
    fn encode(i: usize) -> RawOffsetEntry {
        RawOffsetEntry::new(Self::key(i) as i32, position(i))
    }
    bench_support::delegate_index!(OffsetIndex, RawOffsetEntry);
    fn append(&self, i: usize) {
        self.0.append(Self::key(i), position(i)).unwrap()
    }
    fn append_batched(&mut self, range: std::ops::Range<usize>) {
        let mut w = self.0.appender().unwrap();
        for i in range {
            w.append(Self::key(i), position(i)).unwrap();
        }
    }
    fn append_reader(&self, i: usize) {
        self.0.append(Self::key(i), position(i)).unwrap()
    }
    #[inline]
    fn lookup(&self, target: i64) -> (i64, i64) {
        let got = self.0.lookup(target).unwrap();
        (got.offset, got.position as i64)
    }
    fn truncate_to_entries(&self, n: usize) {
        self.0.truncate_to(Self::key(n)).unwrap()
    }
}

fn main() {
    index::main::<Offsets>();
}
