//! Reader slots: how a lookup finds the current mapping without any atomic
//! read-modify-write, and how the writer knows when a replaced mapping is no longer read.
//!
//! # The scheme
//!
//! A process-wide table holds [`SLOTS`] *reader slots*, each a sequence number on its own
//! cache lines. A thread claims one slot the first time it looks something up (one
//! compare-and-swap per thread lifetime) and gives it back when it exits. From then on
//! its slot is written only by that thread, with plain stores:
//!
//! * **Enter** (outermost lookup of the thread): `seq = seq + 1` (odd: inside a lookup),
//!   then a `SeqCst` fence, then the lookup loads the published mapping pointer
//!   (`Acquire`).
//! * **Exit**: `seq = seq + 1` (even: idle) with `Release`, after the last read of the
//!   mapping.
//!
//! The writer, after installing a new mapping (a `Release` store of the pointer), calls
//! `synchronize`: a `SeqCst` fence, then for every slot whose sequence number is odd,
//! a wait until it changes. When `synchronize` returns, no thread can still read a
//! mapping that was replaced before the call, so it may be unmapped, and the file cut.
//!
//! Why: the two fences are ordered one way or the other. If the reader's comes first,
//! the writer's scan sees the odd number (or a later one) and waits for it to change; if
//! the writer's comes first, the reader's load sees the new pointer. A change seen by
//! the writer is the reader's exit (its `Release` store makes the reader's reads of the
//! old mapping happen before the writer's unmap), or a later entry, which comes after the
//! writer's fence (the writer's first scan saw the older odd number, so the reader's
//! fence for that later entry is after the writer's) and therefore loads the new pointer.
//!
//! A lookup thus costs one fence and two plain stores to a cache line no other thread
//! writes: no lock, no `Arc` clone, no shared counter. Appends never call
//! `synchronize`; only remaps do (grow, shrink, unmap, installing a page directory),
//! and they wait at most for the lookups in flight at that moment.
//!
//! # Asymmetric fences (Linux)
//!
//! On Linux the reader's fence is only a compiler fence: the first [`crate::IndexFile`]
//! of the process registers it for `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, and
//! `synchronize` calls it after its own fence (`sys::membarrier`). That call
//! returns only after every running thread of the process executed a full barrier, which
//! is what the reader's `SeqCst` fence provided (the technique of userspace RCU's
//! `membarrier` flavour): either the barrier falls after the reader's announcement (the
//! scan sees it) or before it (then the reader's load of the pointer comes after the
//! writer's store). A lookup then issues no fence instruction, so back-to-back lookups
//! overlap in the processor. Where `membarrier` is missing (another OS, an old kernel, a
//! sandbox that filters it) both sides use `SeqCst` fences as above; the loom models check
//! that symmetric protocol.
//!
//! Nested lookups on one thread (a [`crate::Probe`] that looks something up) enter only
//! once (a thread-local depth). A batch ([`crate::IndexFile::with_reader`]) is one such
//! outermost entry held around many lookups: each of them loads the published mapping
//! and the entry count again, but none pays the announcement, the thread-local access or
//! the exit store; remaps wait for the whole batch. A thread that finds no free slot (more than [`SLOTS`]
//! threads looking up at once) uses the fallback path: the mapping's read lock and an
//! `Arc` clone, as before this scheme. A thread must not remap an index from inside one
//! of its own lookups (a probe calling `resize` or `close`): `synchronize` would wait for
//! the thread itself.
//!
//! Checked by the loom models in `index-core/tests/loom.rs` (with four slots): under
//! loom every mapping carries a shadow cell that lookups read and that is written when the
//! mapping is dropped, so an unmap that does not wait for a reader is a causality
//! violation; `--cfg loom_weak_ordering` weakens the fences to `AcqRel`.

use std::cell::Cell;

use crate::sync::{fence, yield_now, AtomicBool, AtomicUsize, CachePadded, Ordering, ANNOUNCE};

/// Whether the asymmetric fences are in use (decided once, by [`init`]; always `false`
/// without `membarrier`, see [`crate::sys::membarrier`]).
static ASYMMETRIC: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Decides, once per process, whether lookups use the asymmetric fences (registering
/// for `membarrier` if so). Called by every [`crate::IndexFile`] open, so it has run
/// before any lookup or remap of any index.
pub(crate) fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| ASYMMETRIC.store(crate::sys::membarrier::register(), Ordering::Release));
}

/// The reader's fence between its announcement and its load of the mapping pointer.
#[inline(always)]
fn reader_fence() {
    if ASYMMETRIC.load(Ordering::Relaxed) {
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
    } else {
        fence(ANNOUNCE);
    }
}

/// The writer's fence between installing a mapping and scanning the reader slots.
fn writer_fence() {
    fence(ANNOUNCE);
    if ASYMMETRIC.load(Ordering::Acquire) && !crate::sys::membarrier::heavy() {
        // Readers rely on this barrier: without it an old mapping could be unmapped under
        // a lookup. The kernel accepted the registration, so this cannot happen short of a
        // kernel fault; stop rather than risk reading unmapped memory.
        eprintln!("index-core: membarrier failed after registration; aborting");
        std::process::abort();
    }
}

/// Whether lookups of this process announce themselves without a fence instruction
/// (Linux `membarrier`, see the module docs).
pub fn asymmetric_fences() -> bool {
    ASYMMETRIC.load(Ordering::Relaxed)
}

/// Number of reader slots of the process (threads that can look up at once on the
/// fence-only path; more fall back to the lock and `Arc` path).
#[cfg(not(loom))]
pub const SLOTS: usize = 256;
/// Number of reader slots under loom (models use at most three threads).
#[cfg(loom)]
pub const SLOTS: usize = 4;

/// One reader slot: its sequence number (odd while its thread is inside a lookup) and
/// whether a thread owns it.
#[derive(Debug)]
struct Slot {
    seq: AtomicUsize,
    owned: AtomicBool,
}

#[derive(Debug)]
struct Registry {
    slots: [CachePadded<Slot>; SLOTS],
}

#[cfg(not(loom))]
static REGISTRY: Registry = Registry {
    slots: [const {
        CachePadded(Slot {
            seq: AtomicUsize::new(0),
            owned: AtomicBool::new(false),
        })
    }; SLOTS],
};

#[cfg(loom)]
loom::lazy_static! {
    static ref REGISTRY: Registry = Registry {
        slots: std::array::from_fn(|_| {
            CachePadded(Slot {
                seq: AtomicUsize::new(0),
                owned: AtomicBool::new(false),
            })
        }),
    };
}

fn registry() -> &'static Registry {
    &REGISTRY
}

/// A thread's claim on a slot (`None`: the table was full) and its lookup depth.
struct Handle {
    slot: Option<&'static Slot>,
    depth: Cell<u32>,
}

impl Handle {
    fn claim() -> Self {
        let slot = registry().slots.iter().map(|s| &s.0).find(|s| {
            s.owned
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        });
        Handle {
            slot,
            depth: Cell::new(0),
        }
    }
}

// Under loom each execution starts with a fresh table (a loom lazy static) that may be
// gone when the last thread-local destructors run, and no model uses more threads than
// slots: slots are not given back.
#[cfg(not(loom))]
impl Drop for Handle {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            // The sequence number is even (the thread is in no lookup): the next owner
            // continues from it.
            slot.owned.store(false, Ordering::Release);
        }
    }
}

#[cfg(not(loom))]
std::thread_local! {
    static HANDLE: Handle = Handle::claim();
}
#[cfg(loom)]
loom::thread_local! {
    static HANDLE: Handle = Handle::claim();
}

/// Proof that the current thread is announced in its slot: the published mapping it
/// loads stays mapped while this lives (see [`crate::sys::Published::load`]).
pub(crate) struct Announced {
    _not_send: std::marker::PhantomData<*const ()>,
}

/// Leaves the lookup (even when the lookup panics).
struct Exit<'a> {
    slot: &'static Slot,
    depth: &'a Cell<u32>,
    outermost: bool,
}

impl Drop for Exit<'_> {
    #[inline]
    fn drop(&mut self) {
        if self.outermost {
            let v = self.slot.seq.load(Ordering::Relaxed);
            self.slot.seq.store(v.wrapping_add(1), Ordering::Release);
        }
        self.depth.set(self.depth.get() - 1);
    }
}

/// Runs `fast(announced, ctx)` announced in the thread's slot, or `slow(ctx)` when the
/// thread has no slot (the table is full, or the thread is being torn down).
#[inline]
pub(crate) fn read<C, R>(
    ctx: C,
    fast: impl FnOnce(&Announced, C) -> R,
    slow: impl FnOnce(C) -> R,
) -> R {
    let mut args = Some((ctx, fast));
    let done = HANDLE.try_with(|h| {
        let slot = h.slot?;
        let depth = h.depth.get();
        let outermost = depth == 0;
        if outermost {
            let v = slot.seq.load(Ordering::Relaxed);
            slot.seq.store(v.wrapping_add(1), Ordering::Relaxed);
            reader_fence();
        }
        h.depth.set(depth + 1);
        let _exit = Exit {
            slot,
            depth: &h.depth,
            outermost,
        };
        let (ctx, fast) = args.take()?;
        Some(fast(
            &Announced {
                _not_send: std::marker::PhantomData,
            },
            ctx,
        ))
    });
    match (done, args) {
        (Ok(Some(r)), _) => r,
        (_, Some((ctx, _))) => slow(ctx),
        // `fast` was taken only to be run, and its result is `Ok(Some(_))` above.
        (_, None) => unreachable!("the fast path ran"),
    }
}

/// Waits until no thread is still inside a lookup that began before this call (see the
/// module docs). Called by the writer after installing a new mapping and before
/// unmapping the old one or cutting the file.
pub(crate) fn synchronize() {
    writer_fence();
    for slot in registry().slots.iter() {
        let v = slot.0.seq.load(Ordering::Acquire);
        if v & 1 == 1 {
            while slot.0.seq.load(Ordering::Acquire) == v {
                yield_now();
            }
        }
    }
}
