//! Criterion benchmarks of the time index (`cargo bench -p index-time`).
//!
//! * `time-lookup-{hot-tail,uniform}/<strategy>/<size>`: [`TimeIndex::lookup`] (the
//!   whole API call: snapshot, search, decode) per search strategy, on a full index of
//!   4 KiB, 64 KiB, 1 MiB and 10 MiB, side by side with `partition_point`: the same keys
//!   in an in-memory `Vec<i64>` (native-endian, no mapping, no snapshot), the physical
//!   limit of a binary search. *Hot-tail* targets are uniform over the keys of the last
//!   8192 bytes of entries (consumers and followers near the end of the log); *uniform*
//!   targets over all keys.
//! * `time-search-hot-tail/<strategy>/<size>`: the search alone
//!   ([`Snapshot::search_with`](index_time::Snapshot::search_with) on a snapshot taken
//!   once), to separate the algorithm from the per-lookup snapshot cost.
//! * `time-append/<what>`: entries appended per second. `time-index` is
//!   [`TimeIndex::maybe_append`] (Kafka's checks, then the write, one writer lock per
//!   call); `appender` makes the same calls through one `appender()` per run (the lock
//!   taken once); `raw-index-file` is
//!   `IndexFile::<RawTimeEntry>::append` of pre-encoded entries (writer lock and
//!   publication, no Kafka checks); `plain-mmap-copy` copies the same 12 bytes into the
//!   same kind of mapping (`index_core::sys::Mapping::write`: a bounds check and a
//!   `memcpy`, no lock, no publication) and is the baseline of the append goal;
//!   `vec-copy` (`copy_from_slice` into a `Vec<u8>`) is a lower bound.
//! * `time-readers/<strategy>/{idle,appending}`: hot-tail lookups per second on a 1 MiB
//!   index, alone and with a concurrent appender thread.
//!
//! After the benchmarks a **ratios** section measures the goals' ratios again with the
//! competitors interleaved (robust to load changes on a shared machine, see the
//! `bench-support` crate), prints them and writes `<criterion dir>/ratios/time.json`.
//!
//! The benchmarks themselves are `bench_support::index`, shared with the offset index's;
//! this file says what a time index is to them.

use bench_support::index::{self, BenchIndex};
use index_time::{RawTimeEntry, TimeIndex};

/// Value (offset) of entry `i`.
fn offset(i: usize) -> i64 {
    3 * i as i64
}

/// The time index as the shared benchmarks see it (a local type: the trait and the
/// index are both of other crates).
struct Times(TimeIndex);

impl BenchIndex for Times {
    type Entry = RawTimeEntry;
    const KIND: &'static str = "time";
    const SUFFIX: &'static str = "timeindex";
    const KEY_GAP: i64 = 7;
    const WARM_COLD_ARM: bool = false;

    /// Key (timestamp, ms) of entry `i`.
    fn key(i: usize) -> i64 {
        1_700_000_000_000 + 7 * i as i64
    }
    fn value(i: usize) -> i64 {
        offset(i)
    }
    fn encode(i: usize) -> RawTimeEntry {
        RawTimeEntry::new(Self::key(i), offset(i) as i32)
    }
    bench_support::delegate_index!(TimeIndex, RawTimeEntry);
    fn append(&self, i: usize) {
        assert!(self.0.maybe_append_final(Self::key(i), offset(i)).unwrap())
    }
    fn append_batched(&mut self, range: std::ops::Range<usize>) {
        let mut w = self.0.appender().unwrap();
        for i in range {
            assert!(w.maybe_append_final(Self::key(i), offset(i)).unwrap());
        }
    }
    fn append_reader(&self, i: usize) {
        self.0.maybe_append(Self::key(i), offset(i)).unwrap();
    }
    #[inline]
    fn lookup(&self, target: i64) -> (i64, i64) {
        let got = self.0.lookup(target).unwrap();
        (got.timestamp, got.offset)
    }
    fn truncate_to_entries(&self, n: usize) {
        self.0.truncate_to(offset(n)).unwrap()
    }
}

fn main() {
    index::main::<Times>();
}
