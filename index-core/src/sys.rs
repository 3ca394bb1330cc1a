//! The only module of the workspace that contains `unsafe` code.
//!
//! It wraps a memory mapping of an index file ([`Mapping`]; read-only, also of a segment's
//! `.log` for recovery's scan, [`Mapping::map_sequential`]) behind a safe API, the
//! pointer through which lookups find the current mapping (`Published`, see
//! [`crate::readers`]), and the
//! few operating-system calls the bench harness needs to measure real page residency
//! (`mincore`, `madvise`, `posix_fadvise` on a whole file or a range, `getrusage` of the
//! process or of the calling thread), the read-ahead hint the segment crate's loader
//! gives for the pages it is about to check (`posix_fadvise(POSIX_FADV_WILLNEED)` on a
//! range, [`advise_range_will_need`]), Linux's `membarrier`, which
//! lets lookups announce themselves without a fence instruction, and Linux's `sendfile`
//! ([`sendfile`], [`sendfile_all`]), the zero-copy transfer of the segment crate's
//! file regions; and the index writer's lock (`StoreLock`, a value behind an
//! `UnsafeCell`).
//!
//! # Platforms
//!
//! The mapping is `memmap2`'s and works wherever it does (Linux, macOS and the BSDs,
//! Windows). The measuring calls are only for the bench harness: they are implemented on
//! Linux (`cfg(target_os = "linux")`) and return an [`io::ErrorKind::Unsupported`] error
//! elsewhere, where the harness reports them as not measured. [`page_size`] is
//! `sysconf(_SC_PAGESIZE)` on Unix and 4096 elsewhere.
//!
//! # Invariants
//!
//! 1. **Lifetime.** A [`Mapping`] owns its `MmapRaw`; the pointer it hands out is valid for
//!    `len` bytes for as long as the `Mapping` lives. A lookup reads the mapping it loads
//!    from `Published` while announced in its reader slot, and a remap (resize, trim,
//!    unmap) by the writer waits for every announced lookup (`readers::synchronize`)
//!    before it drops its reference; snapshots hold an `Arc`. So no memory a reader is
//!    using is ever unmapped: the old mapping is unmapped when its last `Arc` drops,
//!    after that wait.
//! 2. **File length.** The mapped range never extends past the end of the file while any
//!    `Arc` to the mapping is alive or a lookup may read it. [`crate::IndexFile`] upholds
//!    this: when it shrinks a file it first installs a smaller mapping, waits for the
//!    lookups in flight and until every snapshot has dropped the old one, and only then
//!    calls `set_len` (touching a page past end-of-file would raise
//!    `SIGBUS`). The segment crate's `LogFile::map_for_scan` maps a `.log` only up to
//!    its logical size and holds the file's writer lock, which every truncation of the
//!    file takes, for as long as the mapping lives. Another process truncating the file underneath us is outside what any
//!    mmap-based reader can defend against; Kafka has the same exposure.
//! 3. **Disjoint writes.** [`Mapping::write`] is called only by the single writer (under
//!    the index's writer lock), only on slots at or beyond the published entry count, and
//!    the count is published with `Release` after the bytes are written; readers load it
//!    with `Acquire` and read only below it. The one overlap the protocol allows is a
//!    reader that loaded a count *before* a truncation and is still reading a slot that
//!    the writer re-fills after it: the reader may see a mix of old and new bytes of a
//!    plain-old-data entry. Every bit pattern is a valid entry, so the outcome is a stale
//!    (in-bounds) answer, exactly as in Kafka, never undefined memory access.
//! 4. **Read-only mappings** are never written: [`Mapping::write`] checks `writable`.
//! 5. **Reads into spare capacity** ([`read_exact_at_into`], the segment crate's
//!    `LogFile::read`): `pread` writes only into the reserved, not yet initialised tail
//!    of a `Vec`, and the length is set only over bytes it wrote.
//! 6. **The writer lock** (`StoreLock`, the index writer's lock outside loom): its value
//!    is reached only through a `StoreGuard`, and a guard exists only between a
//!    successful `Acquire` exchange of `locked` from `false` to `true` and the guard's
//!    `Release` store of `false`; so at most one guard exists at a time, and each guard's
//!    accesses happen after the previous guard's.

use std::fs::File;
use std::io;

use memmap2::{MmapOptions, MmapRaw};

/// Linux's `membarrier(2)`: the writer's side of the asymmetric fences of
/// [`crate::readers`]. `MEMBARRIER_CMD_PRIVATE_EXPEDITED` makes every running thread of
/// this process execute a full memory barrier before the call returns, so a reader may
/// replace its `SeqCst` fence with a compiler fence.
#[cfg(all(not(loom), any(target_os = "linux", target_os = "android")))]
pub(crate) mod membarrier {
    const CMD_QUERY: libc::c_int = 0;
    const CMD_GLOBAL: libc::c_int = 1;
    const CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

    fn call(cmd: libc::c_int) -> libc::c_long {
        // SAFETY: `membarrier(cmd, flags = 0, cpu_id = 0)` takes no pointer and touches no
        // memory of this process; an unsupported command only returns -1 (EINVAL, ENOSYS
        // or EPERM).
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_uint,
                0 as libc::c_int,
            )
        }
    }

    /// Registers this process for private expedited barriers; whether they are
    /// available (kernel 4.14 and later, and not filtered by a sandbox).
    pub(crate) fn register() -> bool {
        let supported = call(CMD_QUERY);
        supported >= 0
            && supported & libc::c_long::from(CMD_PRIVATE_EXPEDITED) != 0
            && call(CMD_REGISTER_PRIVATE_EXPEDITED) == 0
    }

    /// A full memory barrier on every running thread of this process. Re-registers once
    /// if the registration was lost (a forked child), then falls back to the global
    /// (slow) barrier; whether one of them succeeded.
    pub(crate) fn heavy() -> bool {
        call(CMD_PRIVATE_EXPEDITED) == 0
            || (call(CMD_REGISTER_PRIVATE_EXPEDITED) == 0 && call(CMD_PRIVATE_EXPEDITED) == 0)
            || call(CMD_GLOBAL) == 0
    }
}

/// Without Linux's `membarrier` (another OS, or the loom models): never available, so
/// [`crate::readers`] keeps its symmetric `SeqCst` fences.
#[cfg(not(all(not(loom), any(target_os = "linux", target_os = "android"))))]
pub(crate) mod membarrier {
    /// Always `false`.
    pub(crate) fn register() -> bool {
        false
    }

    /// Never called (registration never succeeds); `false`.
    pub(crate) fn heavy() -> bool {
        false
    }
}

/// A shared memory mapping of the first `len` bytes of an index file (or, read-only, of a
/// `.log`), or of nothing.
#[derive(Debug)]
pub struct Mapping {
    raw: Option<MmapRaw>,
    len: usize,
    writable: bool,
}

impl Mapping {
    /// A mapping of no bytes (used for empty files and after unmapping).
    pub fn empty(writable: bool) -> Self {
        Mapping {
            raw: None,
            len: 0,
            writable,
        }
    }

    /// Maps the first `len` bytes of `file` (`MAP_SHARED`), read-write if `writable`.
    ///
    /// The caller guarantees the file is at least `len` bytes long (invariant 2).
    /// # Errors
    /// The `mmap` system call's error (for example `ENOMEM` when `vm.max_map_count` is
    /// exhausted).
    pub fn map(file: &File, len: usize, writable: bool) -> io::Result<Self> {
        if len == 0 {
            return Ok(Self::empty(writable));
        }
        let mut opts = MmapOptions::new();
        opts.len(len);
        let raw = if writable {
            opts.map_raw(file)?
        } else {
            opts.map_raw_read_only(file)?
        };
        Ok(Mapping {
            raw: Some(raw),
            len,
            writable,
        })
    }

    /// Maps the first `len` bytes of `file` read-only (`MAP_SHARED`) for one sequential
    /// pass: the kernel is told so (`MADV_SEQUENTIAL` on Unix: aggressive readahead, and
    /// larger fault-around; a recovery scan of 512 MiB in tmpfs took 12-15% less CPU with
    /// it than without; `MAP_POPULATE` took 5% more). `len` 0 gives an empty mapping.
    ///
    /// The caller guarantees the file is at least `len` bytes long for as long as the
    /// mapping lives (invariant 2).
    /// # Errors
    /// The `mmap` system call's error.
    pub fn map_sequential(file: &File, len: usize) -> io::Result<Self> {
        if len == 0 {
            return Ok(Self::empty(false));
        }
        let mut opts = MmapOptions::new();
        opts.len(len);
        let raw = opts.map_raw_read_only(file)?;
        #[cfg(unix)]
        {
            // Only a readahead hint: failing to give it changes nothing else.
            let _ = raw.advise(memmap2::Advice::Sequential);
        }
        Ok(Mapping {
            raw: Some(raw),
            len,
            writable: false,
        })
    }

    /// Length of the mapped range in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping covers no bytes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the mapping may be written.
    #[inline]
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// The first `min(len, self.len())` mapped bytes.
    #[inline]
    pub fn bytes(&self, len: usize) -> &[u8] {
        match &self.raw {
            None => &[],
            Some(raw) => {
                let len = len.min(self.len);
                // SAFETY: `raw` maps `self.len` bytes and lives as long as `self`
                // (invariant 1); `len <= self.len`; the range lies within the file
                // (invariant 2). Concurrent writes by the single writer target bytes
                // at or past the published entry count, which readers do not slice
                // (invariant 3), and every byte pattern is a valid `u8`.
                unsafe { std::slice::from_raw_parts(raw.as_ptr(), len) }
            }
        }
    }

    /// Copies `data` into the mapping at byte `offset`. Returns `false` (writing
    /// nothing) if the range is out of bounds or the mapping is read-only.
    pub fn write(&self, offset: usize, data: &[u8]) -> bool {
        let Some(raw) = &self.raw else {
            return data.is_empty() && offset == 0;
        };
        let Some(end) = offset.checked_add(data.len()) else {
            return false;
        };
        if !self.writable || end > self.len {
            return false;
        }
        // SAFETY: the mapping is writable and `[offset, end)` is within the `self.len`
        // mapped bytes (checked above), which live as long as `self` (invariant 1). Only
        // the writer calls this, on slots no reader has been told about yet (invariant 3),
        // and `data` cannot overlap the mapping because it is a distinct borrow of
        // ordinary memory handed in by the writer.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), raw.as_mut_ptr().add(offset), data.len());
        }
        true
    }

    /// Writes dirty pages of the mapping back to the file (`msync(MS_SYNC)`).
    pub fn flush(&self) -> io::Result<()> {
        match &self.raw {
            Some(raw) if self.writable => raw.flush(),
            _ => Ok(()),
        }
    }

    /// Which pages of the mapping are resident in memory (`mincore`), one `bool` per page
    /// of `page_size()` bytes.
    ///
    /// # Errors
    /// The system call's error; `Unsupported` off Linux.
    #[cfg(target_os = "linux")]
    pub fn resident_pages(&self) -> io::Result<Vec<bool>> {
        let Some(raw) = &self.raw else {
            return Ok(Vec::new());
        };
        let page = page_size();
        let pages = self.len.div_ceil(page);
        let mut vec = vec![0u8; pages];
        // SAFETY: `raw` is a live, page-aligned mapping of `self.len` bytes; `vec` has
        // one byte per page of that range, as `mincore` requires.
        let rc = unsafe { libc::mincore(raw.as_mut_ptr().cast(), self.len, vec.as_mut_ptr()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(vec.into_iter().map(|b| b & 1 == 1).collect())
    }

    /// Drops this process's page-table entries for the mapping (`madvise(MADV_DONTNEED)`),
    /// so the next access to each page faults again. For a shared file mapping this does
    /// not discard data: dirty pages must have been flushed first (see [`Mapping::flush`]),
    /// and pages stay in the page cache until [`evict_from_page_cache`] drops them.
    ///
    /// # Errors
    /// The system call's error; `Unsupported` off Linux.
    #[cfg(target_os = "linux")]
    pub fn advise_dont_need(&self) -> io::Result<()> {
        let Some(raw) = &self.raw else {
            return Ok(());
        };
        // SAFETY: the range is exactly our live mapping. MADV_DONTNEED on a MAP_SHARED
        // file mapping only drops page-table entries; the file contents are unchanged.
        // No Rust reference into the mapping is invalidated: the bytes read afterwards
        // are re-faulted from the same file pages.
        let rc = unsafe { libc::madvise(raw.as_mut_ptr().cast(), self.len, libc::MADV_DONTNEED) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Switches the kernel's readahead for page faults on this mapping off
    /// (`madvise(MADV_RANDOM)`, `random = true`: a fault reads only the faulting page) or
    /// back to the default (`MADV_NORMAL`: a fault reads the pages around it too). Used by
    /// the bench harness to count page-ins without readahead; the data is unaffected.
    ///
    /// # Errors
    /// The system call's error; `Unsupported` off Linux.
    #[cfg(target_os = "linux")]
    pub fn advise_random(&self, random: bool) -> io::Result<()> {
        let Some(raw) = &self.raw else {
            return Ok(());
        };
        let advice = if random {
            libc::MADV_RANDOM
        } else {
            libc::MADV_NORMAL
        };
        // SAFETY: the range is exactly our live, page-aligned mapping (invariant 1).
        // MADV_RANDOM and MADV_NORMAL only set a readahead hint on the VMA: they change
        // neither the mapping's contents nor its extent, so every reference into it stays
        // valid.
        let rc = unsafe { libc::madvise(raw.as_mut_ptr().cast(), self.len, advice) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Off Linux: page residency is not measured ([`unsupported`]).
    ///
    /// # Errors
    /// Always `Unsupported`.
    #[cfg(not(target_os = "linux"))]
    pub fn resident_pages(&self) -> io::Result<Vec<bool>> {
        Err(unsupported("mincore"))
    }

    /// Off Linux: not available ([`unsupported`]).
    ///
    /// # Errors
    /// Always `Unsupported`.
    #[cfg(not(target_os = "linux"))]
    pub fn advise_dont_need(&self) -> io::Result<()> {
        Err(unsupported("madvise(MADV_DONTNEED)"))
    }

    /// Off Linux: not available ([`unsupported`]).
    ///
    /// # Errors
    /// Always `Unsupported`.
    #[cfg(not(target_os = "linux"))]
    pub fn advise_random(&self, _random: bool) -> io::Result<()> {
        Err(unsupported("madvise(MADV_RANDOM)"))
    }
}

/// The error of a measuring call on a platform where it is not implemented.
#[cfg_attr(target_os = "linux", allow(dead_code))]
fn unsupported(call: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{call} is only used to measure page residency on Linux"),
    )
}

/// The system page size in bytes (`sysconf(_SC_PAGESIZE)` on Unix, 4096 if unknown and
/// on other platforms).
pub fn page_size() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no memory-safety preconditions.
        let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if v > 0 {
            return v as usize;
        }
    }
    4096
}

/// Asks the kernel to drop `file`'s pages from the page cache
/// (`fdatasync` then `posix_fadvise(POSIX_FADV_DONTNEED)` over the whole file).
/// The kernel may ignore the advice for pages still mapped by some process; callers that
/// want a cold cache also call [`Mapping::advise_dont_need`] on their mappings first.
///
/// # Errors
/// The system calls' errors; `Unsupported` off Linux.
#[cfg(target_os = "linux")]
pub fn evict_from_page_cache(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    file.sync_data()?;
    // SAFETY: posix_fadvise only reads its integer arguments; the descriptor is valid
    // for the duration of the call because `file` is borrowed.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Off Linux: the page cache is not evicted ([`unsupported`]).
///
/// # Errors
/// Always `Unsupported`.
#[cfg(not(target_os = "linux"))]
pub fn evict_from_page_cache(_file: &File) -> io::Result<()> {
    Err(unsupported("posix_fadvise(POSIX_FADV_DONTNEED)"))
}

/// Linux's `sendfile(2)`, once: copies up to `count` bytes of `file` from byte
/// `offset` to the descriptor `out` (a socket or a pipe) inside the kernel, without
/// moving `file`'s own position. Returns the bytes copied: fewer than `count` is a
/// partial write, 0 means `offset` is at or past the end of `file`. `EINTR` is retried;
/// every other error (including `EAGAIN`/[`io::ErrorKind::WouldBlock`] of a non-blocking
/// `out`) is returned, nothing having been copied by the failed call.
///
/// # Errors
/// The system call's error; [`io::ErrorKind::InvalidInput`] if `offset` does not fit the
/// kernel's `off_t`.
#[cfg(target_os = "linux")]
pub fn sendfile(
    out: std::os::fd::BorrowedFd<'_>,
    file: &File,
    offset: u64,
    count: usize,
) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let Ok(mut off) = libc::off_t::try_from(offset) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "sendfile offset out of range",
        ));
    };
    // The kernel copies at most 0x7ffff000 bytes per call anyway.
    let count = count.min(0x7fff_f000);
    loop {
        // SAFETY: both descriptors are valid for the duration of the call (`out` and
        // `file` are borrowed); `off` is a live, writable `off_t` the kernel updates; no
        // user-space buffer is involved.
        let rc = unsafe { libc::sendfile(out.as_raw_fd(), file.as_raw_fd(), &mut off, count) };
        if rc >= 0 {
            return Ok(rc as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// [`sendfile`] until `len` bytes of `file` from `offset` were copied to `out`: loops on
/// partial writes and retries `EINTR`. Returns `len`.
///
/// # Errors
/// [`io::ErrorKind::UnexpectedEof`] if `file` ends before `offset + len` (the bytes
/// before its end were copied); any other error of [`sendfile`], returned as is,
/// including [`io::ErrorKind::WouldBlock`] for a non-blocking `out` that is full: the
/// number of bytes copied before it is then lost, so give this a blocking `out`, or
/// loop over [`sendfile`] yourself to keep count.
#[cfg(target_os = "linux")]
pub fn sendfile_all(
    out: std::os::fd::BorrowedFd<'_>,
    file: &File,
    offset: u64,
    len: u64,
) -> io::Result<u64> {
    let mut done = 0u64;
    while done < len {
        let want = usize::try_from(len - done).unwrap_or(usize::MAX);
        let n = sendfile(out, file, offset + done, want)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "sendfile: the file ends before byte {} ({done} of {len} bytes copied)",
                    offset + len
                ),
            ));
        }
        done += n as u64;
    }
    Ok(done)
}

/// Appends `len` bytes of `file` from byte `offset` to `buf`, read with positioned reads
/// (`pread`) straight into its spare capacity: the bytes are not zero-filled first, as
/// `vec![0; len]` followed by `read_exact_at` would (9% of the time of the segment
/// crate's 1 MiB fetches went to that `memset`, in its `segment-read` bench). Retries
/// `EINTR`; on error `buf` holds what it held before (its capacity may have grown).
///
/// # Errors
/// [`io::ErrorKind::UnexpectedEof`] if the file ends before `offset + len`;
/// [`io::ErrorKind::InvalidInput`] if an offset does not fit the kernel's `off_t`; the
/// system call's error.
#[cfg(unix)]
pub fn read_exact_at_into(
    file: &File,
    buf: &mut Vec<u8>,
    len: usize,
    offset: u64,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    buf.reserve(len);
    let start = buf.len();
    let mut done = 0usize;
    while done < len {
        let Some(dst) = buf.spare_capacity_mut().get_mut(done..len) else {
            return Err(io::Error::other(
                "read_exact_at_into: reserve gave too little",
            ));
        };
        let Ok(at) = libc::off_t::try_from(offset + done as u64) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "pread offset out of range",
            ));
        };
        // SAFETY: `dst` is a live, exclusively borrowed region of `dst.len()` bytes of
        // `buf`'s allocation; `pread` writes at most that many bytes into it and reads
        // none; `file`'s descriptor is valid for the call (borrowed).
        let rc = unsafe { libc::pread(file.as_raw_fd(), dst.as_mut_ptr().cast(), dst.len(), at) };
        match rc {
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "failed to fill whole buffer",
                ))
            }
            n if n > 0 => done += n as usize,
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    // SAFETY: `buf` holds at least `start + len` bytes of capacity (`reserve`), and the
    // `len` bytes after `start` were all written by the `pread`s above (`done == len`:
    // each call wrote `n` bytes at `done`, and `done` only grows by what was written).
    unsafe { buf.set_len(start + len) };
    Ok(())
}

/// Off Unix: [`read_exact_at_into`] zero-fills the bytes, then reads them.
///
/// # Errors
/// As on Unix.
#[cfg(not(unix))]
pub fn read_exact_at_into(
    file: &File,
    buf: &mut Vec<u8>,
    len: usize,
    offset: u64,
) -> io::Result<()> {
    use crate::pio::FileExt;
    let start = buf.len();
    buf.resize(start + len, 0);
    let r = file.read_exact_at(buf.get_mut(start..).unwrap_or_default(), offset);
    if r.is_err() {
        buf.truncate(start);
    }
    r
}

/// Off Linux: page faults are not counted ([`unsupported`]).
///
/// # Errors
/// Always `Unsupported`.
#[cfg(not(target_os = "linux"))]
pub fn page_faults() -> io::Result<(u64, u64)> {
    Err(unsupported("getrusage"))
}

/// Major and minor page faults of this process so far (`getrusage(RUSAGE_SELF)`):
/// `(major, minor)`.
///
/// # Errors
/// The system call's error; `Unsupported` off Linux.
#[cfg(target_os = "linux")]
pub fn page_faults() -> io::Result<(u64, u64)> {
    rusage_faults(libc::RUSAGE_SELF)
}

/// Major and minor page faults of the **calling thread** so far
/// (`getrusage(RUSAGE_THREAD)`): `(major, minor)`. The bench harness reads it at the start
/// and the end of a consumer thread, so that the faults of the other threads of the
/// process (a producer, a lagging consumer) are not counted.
///
/// # Errors
/// The system call's error; `Unsupported` off Linux.
#[cfg(target_os = "linux")]
pub fn thread_page_faults() -> io::Result<(u64, u64)> {
    rusage_faults(libc::RUSAGE_THREAD)
}

/// `(major, minor)` page faults of `getrusage(who)`.
#[cfg(target_os = "linux")]
fn rusage_faults(who: libc::c_int) -> io::Result<(u64, u64)> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` points to writable memory of the right size; getrusage fills it.
    let rc = unsafe { libc::getrusage(who, usage.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: getrusage returned 0, so the struct is initialised (it was zeroed anyway).
    let usage = unsafe { usage.assume_init() };
    Ok((usage.ru_majflt as u64, usage.ru_minflt as u64))
}

/// Off Linux: per-thread page faults are not counted ([`unsupported`]).
///
/// # Errors
/// Always `Unsupported`.
#[cfg(not(target_os = "linux"))]
pub fn thread_page_faults() -> io::Result<(u64, u64)> {
    Err(unsupported("getrusage(RUSAGE_THREAD)"))
}

/// Tells the kernel that the `len` bytes of `file` from byte `offset` will not be read
/// again soon (`posix_fadvise(POSIX_FADV_DONTNEED)` on that range, without the `fdatasync`
/// of [`evict_from_page_cache`]): clean pages of the range are dropped from the page
/// cache, dirty ones stay. `len == 0` means "to the end of the file". The bench harness's
/// lagging consumer calls it behind itself, so that its scan does not push other pages
/// out of a small page cache.
///
/// # Errors
/// The system call's error; [`io::ErrorKind::InvalidInput`] if `offset` or `len` does not
/// fit the kernel's `off_t`; `Unsupported` off Linux.
#[cfg(target_os = "linux")]
pub fn advise_range_dont_need(file: &File, offset: u64, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(off), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "posix_fadvise range out of range",
        ));
    };
    // SAFETY: posix_fadvise only reads its integer arguments; the descriptor is valid
    // for the duration of the call because `file` is borrowed.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), off, len, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Off Linux: no advice is given ([`unsupported`]).
///
/// # Errors
/// Always `Unsupported`.
#[cfg(not(target_os = "linux"))]
pub fn advise_range_dont_need(_file: &File, _offset: u64, _len: u64) -> io::Result<()> {
    Err(unsupported("posix_fadvise(POSIX_FADV_DONTNEED)"))
}

/// Asks the kernel to start reading `len` bytes of `file` from `offset` into the page
/// cache (`posix_fadvise(POSIX_FADV_WILLNEED)`: the reads are queued and the call
/// returns without waiting for them). `len == 0` means "to the end of the file". The
/// segment crate's loader gives it for the pages its load-time check of the next
/// segments will read, so that a cold disk serves many of them at once instead of one
/// at a time (docs/performance.md#vs-kafka-opens). Pages already cached are left alone.
///
/// # Errors
/// The system call's error; [`io::ErrorKind::InvalidInput`] if `offset` or `len` does not
/// fit the kernel's `off_t`; `Unsupported` off Linux (callers treat every error as "no
/// advice given": it is only a hint).
#[cfg(target_os = "linux")]
pub fn advise_range_will_need(file: &File, offset: u64, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(off), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "posix_fadvise range out of range",
        ));
    };
    // SAFETY: posix_fadvise only reads its integer arguments; the descriptor is valid
    // for the duration of the call because `file` is borrowed.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), off, len, libc::POSIX_FADV_WILLNEED) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Off Linux: no advice is given ([`unsupported`]).
///
/// # Errors
/// Always `Unsupported`.
#[cfg(not(target_os = "linux"))]
pub fn advise_range_will_need(_file: &File, _offset: u64, _len: u64) -> io::Result<()> {
    Err(unsupported("posix_fadvise(POSIX_FADV_WILLNEED)"))
}

/// A load fence (`lfence` on x86_64): no later instruction starts before every earlier
/// one has completed locally. Benchmarks put it between two lookups to measure each one
/// in isolation (no overlap of one lookup's memory accesses with the next one's). A
/// compiler fence only on other architectures.
#[inline(always)]
pub fn lfence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_lfence` needs SSE2, which every x86_64 processor has (it is part of
    // the x86_64 baseline the target is compiled for); it touches no memory. (Rust marks
    // it unsafe to call outside a `#[target_feature(enable = "sse2")]` function.)
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_mm_lfence()
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

/// Hints the processor to bring the cache line holding `value` into the cache
/// (`prefetcht0` on x86_64; nothing elsewhere). Never faults and changes no state a
/// program can observe except timing.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` needs SSE, part of the x86_64 baseline. A prefetch never
    // dereferences its address architecturally (it cannot fault), and `value` is a live
    // reference anyway.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast::<i8>(),
        )
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// The mapping published to lookups: a pointer into an `Arc` that the index keeps alive
/// (see [`crate::readers`]). Written only by the index's writer, read by lookups with
/// plain loads.
///
/// Invariant (upheld by [`crate::IndexFile`]): a value stored here stays alive (its `Arc`
/// is held by the index) until a later [`Published::store`] replaced it **and**
/// `readers::synchronize` returned after that store; so a reader announced in its slot
/// (holding `Announced`) can dereference what it loaded for as long as the announcement
/// lasts.
#[derive(Debug)]
pub(crate) struct Published<T> {
    ptr: crate::sync::AtomicPtr<T>,
}

impl<T> Published<T> {
    /// Publishes `value` (`None`: nothing, e.g. after unmapping).
    pub(crate) fn new(value: Option<&crate::sync::Arc<T>>) -> Self {
        Published {
            ptr: crate::sync::AtomicPtr::new(Self::raw(value)),
        }
    }

    fn raw(value: Option<&crate::sync::Arc<T>>) -> *mut T {
        value.map_or(std::ptr::null_mut(), |a| {
            let r: &T = a;
            (r as *const T).cast_mut()
        })
    }

    /// Replaces the published value (`Release`). The caller keeps the old value's `Arc`
    /// alive until `readers::synchronize` has returned after this call.
    pub(crate) fn store(&self, value: Option<&crate::sync::Arc<T>>) {
        self.ptr
            .store(Self::raw(value), crate::sync::Ordering::Release);
    }

    /// The published value, for as long as the caller is announced.
    #[inline]
    pub(crate) fn load<'g>(&self, _announced: &'g crate::readers::Announced) -> Option<&'g T> {
        let p = self.ptr.load(crate::sync::Ordering::Acquire);
        // SAFETY: `p` is null or was stored from a live `Arc<T>` (`Arc::as_ptr`: aligned,
        // initialised, shared access only). The caller is announced in its reader slot
        // (it holds `Announced` for `'g`, and the announcement's `SeqCst` fence precedes
        // this load); by the type's invariant the `Arc` is kept alive until the writer's
        // `synchronize`, which waits for this announcement to end, has returned after the
        // pointer was replaced. So the value outlives `'g`. Only `&T` is handed out.
        unsafe { p.as_ref() }
    }
}

/// A mutual-exclusion lock whose release is one plain `Release` store: the writer lock of
/// an index, taken by every per-call `append` (see `docs/performance.md#vs-kafka`).
///
/// `parking_lot`'s mutex releases with a compare-and-swap (it must see parked waiters);
/// a locked instruction costs as much as the rest of an index append, so the writer lock
/// is this one instead. Taking it is one compare-and-swap when it is free. A contended
/// taker never parks: it spins 64 times, yields 64 times, then sleeps 1 µs doubling up
/// to about 1 ms between tries, so a writer waiting behind a long remap or `msync` costs
/// little CPU and sees the lock within about 1 ms of its release. Contention is rare: a
/// log's appends to its indexes are already serialised by the log.
#[cfg(not(loom))]
pub(crate) struct StoreLock<T> {
    locked: std::sync::atomic::AtomicBool,
    value: std::cell::UnsafeCell<T>,
}

// SAFETY: the value is reachable only through a `StoreGuard` (invariant 6: at most one at
// a time, ordered by `Acquire`/`Release` on `locked`), so sharing the lock across threads
// hands `T` from one thread to another but never to two at once: `T: Send` suffices.
#[cfg(not(loom))]
unsafe impl<T: Send> Sync for StoreLock<T> {}

#[cfg(not(loom))]
impl<T> StoreLock<T> {
    /// A free lock holding `value`.
    pub(crate) const fn new(value: T) -> Self {
        StoreLock {
            locked: std::sync::atomic::AtomicBool::new(false),
            value: std::cell::UnsafeCell::new(value),
        }
    }

    /// The lock if it is free now, else `None` (never waits).
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<StoreGuard<'_, T>> {
        use std::sync::atomic::Ordering;
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| StoreGuard { lock: self })
    }

    /// Takes the lock, waiting as the type's docs say while another guard holds it.
    #[inline]
    pub(crate) fn lock(&self) -> StoreGuard<'_, T> {
        match self.try_lock() {
            Some(g) => g,
            None => self.lock_contended(),
        }
    }

    #[cold]
    fn lock_contended(&self) -> StoreGuard<'_, T> {
        let mut round = 0u32;
        loop {
            // Wait on a plain load, not on locked instructions.
            if !self.locked.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(g) = self.try_lock() {
                    return g;
                }
            }
            match round {
                0..64 => std::hint::spin_loop(),
                64..128 => std::thread::yield_now(),
                _ => {
                    std::thread::sleep(std::time::Duration::from_micros(1 << (round - 128).min(10)))
                }
            }
            round = round.saturating_add(1);
        }
    }
}

#[cfg(not(loom))]
impl<T: std::fmt::Debug> std::fmt::Debug for StoreLock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.try_lock() {
            Some(g) => f.debug_struct("StoreLock").field("value", &*g).finish(),
            None => f
                .debug_struct("StoreLock")
                .field("value", &"<locked>")
                .finish(),
        }
    }
}

/// Exclusive access to a [`StoreLock`]'s value; dropping it releases the lock.
#[cfg(not(loom))]
pub(crate) struct StoreGuard<'a, T> {
    lock: &'a StoreLock<T>,
}

#[cfg(not(loom))]
impl<T> std::ops::Deref for StoreGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (invariant 6), so no `&mut T` exists.
        unsafe { &*self.lock.value.get() }
    }
}

#[cfg(not(loom))]
impl<T> std::ops::DerefMut for StoreGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard is the only one (invariant 6), and `&mut self` makes this the
        // only reference derived from it.
        unsafe { &mut *self.lock.value.get() }
    }
}

#[cfg(not(loom))]
impl<T> Drop for StoreGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.lock
            .locked
            .store(false, std::sync::atomic::Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod store_lock_tests {
    use super::StoreLock;
    use std::sync::Arc;

    #[test]
    fn one_guard_at_a_time_and_every_increment_counted() {
        let lock = Arc::new(StoreLock::new((0u64, 0u64)));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        let mut g = lock.lock();
                        // A torn pair would show two guards at once.
                        assert_eq!(g.0, g.1);
                        g.0 += 1;
                        std::hint::black_box(&mut *g);
                        g.1 += 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*lock.lock(), (80_000, 80_000));
    }

    #[test]
    fn try_lock_fails_while_held_and_a_waiter_gets_it_after_release() {
        let lock = Arc::new(StoreLock::new(1));
        let g = lock.lock();
        assert!(lock.try_lock().is_none());
        assert!(format!("{lock:?}").contains("<locked>"));
        let l2 = lock.clone();
        let waiter = std::thread::spawn(move || *l2.lock() + 1);
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(g);
        assert_eq!(waiter.join().unwrap(), 2);
        assert!(lock.try_lock().is_some());
    }
}

#[cfg(all(test, target_os = "linux", not(loom)))]
mod sendfile_tests {
    use std::io::{Read, Write};
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixStream;

    fn file_with(bytes: &[u8]) -> std::fs::File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        f
    }

    #[test]
    fn sendfile_all_copies_the_range_to_a_socket() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let f = file_with(&data);
        let (a, mut b) = UnixStream::pair().unwrap();
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            b.read_to_end(&mut got).unwrap();
            got
        });
        let n = super::sendfile_all(a.as_fd(), &f, 1000, 150_000).unwrap();
        drop(a);
        assert_eq!(n, 150_000);
        assert_eq!(reader.join().unwrap(), &data[1000..151_000]);
    }

    #[test]
    fn sendfile_all_past_the_end_is_unexpected_eof() {
        let f = file_with(b"0123456789");
        let (a, mut b) = UnixStream::pair().unwrap();
        let e = super::sendfile_all(a.as_fd(), &f, 4, 10).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
        drop(a);
        let mut got = Vec::new();
        b.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"456789");
    }

    #[test]
    fn sendfile_to_a_full_nonblocking_socket_is_would_block() {
        let data = vec![7u8; 8 << 20];
        let f = file_with(&data);
        let (a, _b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let e = super::sendfile_all(a.as_fd(), &f, 0, data.len() as u64).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    }
}

#[cfg(all(test, target_os = "linux", not(loom)))]
mod measuring_tests {
    use std::io::Write;

    /// A thread's major faults are its own: a fresh thread starts near zero and never
    /// exceeds the process's count.
    #[test]
    fn thread_page_faults_count_the_calling_thread() {
        let (process, _) = super::page_faults().unwrap();
        let (thread, minor) = std::thread::spawn(|| super::thread_page_faults().unwrap())
            .join()
            .unwrap();
        assert!(thread <= process, "thread {thread} > process {process}");
        // A new thread's stack is fresh memory: it took minor faults, far fewer than the
        // process (which loaded the test binary).
        let (_, process_minor) = super::page_faults().unwrap();
        assert!(minor <= process_minor);
    }

    /// DONTNEED on a clean range drops its pages and only those.
    #[test]
    fn advise_range_dont_need_drops_the_range() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![1u8; 64 * 4096]).unwrap();
        f.sync_all().unwrap();
        let map = super::Mapping::map(&f, 64 * 4096, false).unwrap();
        let _ = map
            .bytes(64 * 4096)
            .iter()
            .map(|&b| u64::from(b))
            .sum::<u64>();
        map.advise_dont_need().unwrap();
        super::advise_range_dont_need(&f, 0, 32 * 4096).unwrap();
        let resident = map.resident_pages().unwrap();
        // tmpfs (where tempfile may live) ignores the advice; only check where it works.
        if !resident[..32].iter().any(|&r| r) {
            assert!(resident[32..].iter().all(|&r| r), "{resident:?}");
        }
        let e = super::advise_range_dont_need(&f, u64::MAX, 1).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    }
}

#[cfg(all(test, not(loom)))]
mod read_into_tests {
    use std::io::Write;

    #[test]
    fn read_exact_at_into_appends_the_range() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        let mut buf = b"head".to_vec();
        super::read_exact_at_into(&f, &mut buf, 200_000, 777).unwrap();
        assert_eq!(&buf[..4], b"head");
        assert_eq!(&buf[4..], &data[777..200_777]);
        super::read_exact_at_into(&f, &mut buf, 0, 5).unwrap();
        assert_eq!(buf.len(), 200_004);
    }

    #[test]
    fn read_exact_at_into_past_the_end_is_unexpected_eof_and_keeps_the_buffer() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"0123456789").unwrap();
        let mut buf = b"xy".to_vec();
        let e = super::read_exact_at_into(&f, &mut buf, 10, 4).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
        assert_eq!(buf, b"xy");
    }
}
