//! [`FileRegion`]: a zero-copy view of bytes of a segment's `.log` (Kafka's
//! `FileRecords.slice`), what a [`RegionFetch`](crate::RegionFetch), the answer of
//! [`Log::read_region`](crate::Log::read_region), carries
//! (`docs/kafka-behaviour.md#zero-copy-reads`).
//!
//! A region owns a handle of the file (an `Arc` of the open descriptor), a byte position
//! and a length; it reads nothing until asked. The descriptor stays open while the region
//! lives, so a region keeps working after retention renamed the segment `.deleted` and
//! after its file was unlinked (the disk space is freed when the last region drops).
//!
//! # Truncation under a region
//!
//! A truncation of the segment ([`Log::truncate_to`](crate::Log::truncate_to)) may cut
//! the bytes of a region taken before it, and a later append may write other bytes at
//! the same positions. Every truncation of a `.log` is recorded (before the file
//! changes) in the file's cut log; a region checks it after each transfer, so the bytes
//! it hands out are those of the moment it was taken, or the call fails with
//! [`io::ErrorKind::UnexpectedEof`]:
//!
//! * [`read_at`](FileRegion::read_at) and [`to_vec`](FileRegion::to_vec) return the error
//!   and no bytes (the buffer's content is then unspecified);
//! * [`write_to`](FileRegion::write_to) and [`sendfile_to`](FileRegion::sendfile_to) have
//!   already handed some bytes to the destination when they notice: they stop and return
//!   the error, and what the destination received (a prefix of the region, possibly
//!   followed by bytes that are not the region's) must be discarded — for a socket, close
//!   the connection. A truncation that leaves the region's bytes alone (a cut at or
//!   beyond `position + len`) does not fail it.

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::pio::FileExt;

/// Most cuts a [`CutLog`] keeps; older ones are merged (conservatively: a region may
/// then fail for a cut that did not touch it, never read bytes that changed).
const MAX_CUTS: usize = 64;

/// The truncations of one `.log` file: a sequence number per cut and, for each cut, the
/// size the file was cut to. Kept as a stack whose targets increase with the sequence
/// number (a cut to a smaller size makes every earlier, larger one redundant), so the
/// smallest cut since a given sequence number is the first entry after it.
#[derive(Debug, Default)]
pub(crate) struct CutLog {
    seq: AtomicU64,
    cuts: Mutex<Vec<(u64, u64)>>,
}

impl CutLog {
    /// The current sequence number (a region records it when taken).
    pub(crate) fn seq(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// Records a cut of the file to `target` bytes; called before the file changes.
    pub(crate) fn record(&self, target: u64) {
        let mut cuts = self.cuts.lock();
        let seq = self.seq.load(Ordering::Relaxed) + 1;
        while cuts.last().is_some_and(|&(_, t)| t >= target) {
            cuts.pop();
        }
        cuts.push((seq, target));
        if cuts.len() > MAX_CUTS {
            // Merge the two oldest: the newer's sequence with the older's (smaller) target.
            let (_, t0) = cuts.remove(0);
            if let Some(first) = cuts.first_mut() {
                first.1 = t0;
            }
        }
        self.seq.store(seq, Ordering::Release);
    }

    /// The smallest size the file was cut to after sequence number `since`, if any.
    fn smallest_cut_since(&self, since: u64) -> Option<u64> {
        if self.seq() == since {
            return None;
        }
        let cuts = self.cuts.lock();
        cuts.iter().find(|&&(s, _)| s > since).map(|&(_, t)| t)
    }
}

/// A region of a segment's `.log` file: an owned handle of the open file, a byte
/// position and a length (Kafka's `FileRecords` slice). Cheap to clone; reads nothing
/// until asked. See the [module docs](self) for its life across retention and what it
/// answers after a truncation cut its bytes.
#[derive(Clone, Debug)]
pub struct FileRegion {
    file: Arc<File>,
    cuts: Arc<CutLog>,
    seq: u64,
    position: u64,
    len: u64,
}

impl FileRegion {
    pub(crate) fn new(
        file: Arc<File>,
        cuts: Arc<CutLog>,
        seq: u64,
        position: u64,
        len: u64,
    ) -> Self {
        FileRegion {
            file,
            cuts,
            seq,
            position,
            len,
        }
    }

    /// Byte position of the region in the segment's `.log`.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Length of the region, bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the region holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `Err(UnexpectedEof)` if a truncation since the region was taken cut any of its
    /// first `upto` bytes.
    fn check_uncut(&self, upto: u64) -> io::Result<()> {
        match self.cuts.smallest_cut_since(self.seq) {
            Some(t) if t < self.position + upto => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the segment was truncated to {t} bytes under the file region {}..{}",
                    self.position,
                    self.position + self.len
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Reads into `buf` from byte `offset_in_region` of the region (positioned read, no
    /// shared file position): as many bytes as fit, up to the region's end. Returns the
    /// bytes read (0 at or past the region's end).
    ///
    /// # Errors
    /// [`io::ErrorKind::UnexpectedEof`] if the file ends before the region does, or a
    /// truncation cut the bytes asked for (see the [module docs](self)); other I/O errors.
    pub fn read_at(&self, buf: &mut [u8], offset_in_region: u64) -> io::Result<usize> {
        if offset_in_region >= self.len {
            return Ok(0);
        }
        let n = (self.len - offset_in_region).min(buf.len() as u64) as usize;
        let dst = buf.get_mut(..n).unwrap_or_default();
        self.file
            .read_exact_at(dst, self.position + offset_in_region)?;
        self.check_uncut(offset_in_region + n as u64)?;
        Ok(n)
    }

    /// The region's bytes, copied into a new buffer.
    ///
    /// # Errors
    /// As [`read_at`](Self::read_at).
    pub fn to_vec(&self) -> io::Result<Vec<u8>> {
        if self.len == 0 {
            return Ok(Vec::new());
        }
        let len = usize::try_from(self.len).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "file region larger than memory",
            )
        })?;
        // As `read_at` over the whole region, into spare capacity: no zero-fill first.
        let mut buf = Vec::new();
        index_core::sys::read_exact_at_into(&self.file, &mut buf, len, self.position)?;
        self.check_uncut(self.len)?;
        Ok(buf)
    }

    /// Writes the region's bytes to `w` in chunks (positioned reads); returns the bytes
    /// written (the region's length).
    ///
    /// # Errors
    /// [`io::ErrorKind::UnexpectedEof`] if the file ends before the region does or a
    /// truncation cut it (`w` may then hold part of the region, and bytes that are not
    /// the region's: discard them, see the [module docs](self)); errors of `w`.
    pub fn write_to(&self, w: &mut impl io::Write) -> io::Result<u64> {
        const CHUNK: usize = 64 * 1024;
        let mut buf = vec![0u8; CHUNK.min(self.len as usize)];
        let mut done = 0u64;
        while done < self.len {
            let n = self.read_at(&mut buf, done)?;
            w.write_all(buf.get(..n).unwrap_or_default())?;
            done += n as u64;
        }
        Ok(done)
    }

    /// Copies the region to `out` (a socket or a pipe) with `sendfile(2)`, inside the
    /// kernel (`index_core::sys::sendfile_all`: partial writes looped, `EINTR` retried);
    /// returns the bytes copied (the region's length). Give it a blocking descriptor:
    /// a non-blocking one that is full fails with `WouldBlock` and the count of bytes
    /// already copied is lost.
    ///
    /// # Errors
    /// [`io::ErrorKind::UnexpectedEof`] if the file ends before the region does or a
    /// truncation cut it (`out` may then have received bytes that are not the region's:
    /// discard them, see the [module docs](self)); `WouldBlock` and the other errors of
    /// `sendfile(2)`.
    #[cfg(target_os = "linux")]
    pub fn sendfile_to(&self, out: &impl std::os::fd::AsFd) -> io::Result<u64> {
        let n = index_core::sys::sendfile_all(out.as_fd(), &self.file, self.position, self.len)?;
        self.check_uncut(self.len)?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::CutLog;

    #[test]
    fn the_smallest_cut_since_a_sequence_number() {
        let c = CutLog::default();
        assert_eq!(c.smallest_cut_since(0), None);
        c.record(500);
        c.record(300);
        c.record(400);
        assert_eq!(c.smallest_cut_since(0), Some(300));
        assert_eq!(c.smallest_cut_since(1), Some(300));
        assert_eq!(c.smallest_cut_since(2), Some(400));
        assert_eq!(c.smallest_cut_since(3), None);
    }

    #[test]
    fn merged_cuts_only_err_on_the_safe_side() {
        let c = CutLog::default();
        // Increasing targets: nothing is redundant, so the log must merge.
        for i in 0..200u64 {
            c.record(1000 + i);
        }
        assert!(c.cuts.lock().len() <= super::MAX_CUTS);
        for since in 0..200u64 {
            let exact = 1000 + since; // the cut with sequence number since + 1
            let got = c.smallest_cut_since(since).unwrap();
            assert!(got <= exact, "since {since}: {got} > {exact}");
        }
        assert_eq!(c.smallest_cut_since(199), Some(1199));
        assert_eq!(c.smallest_cut_since(200), None);
    }
}
