//! An index file's entry count and first and last entries, read with two positioned
//! reads **without mapping** the file ([`peek_last`]: the last entry alone, one read):
//! what a loader's cheap consistency checks and a lazily opened index's "last entry"
//! need, for thousands of segments, without paying a mapping each.
//!
//! The reads go through a caller's positioned-read function, so a caller with its own
//! file-system seam keeps using it; [`peek_file_ends`] is the plain `std::fs::File` form.
//! The entries are decoded through the entry's codec type (`E: IndexEntry`, viewed with
//! `bytemuck`), never by hand.

use std::fs::File;
use std::io;

use crate::codec::IndexEntry;

/// The first and last entries of an index file and how many entries it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ends<E> {
    /// Number of entries (`length / E::SIZE`, at least 1).
    pub entries: u64,
    /// Slot 0.
    pub first: E,
    /// Slot `entries - 1` (the same as `first` when there is one entry).
    pub last: E,
}

/// Why [`peek_ends`] could not read the ends of an index file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PeekError {
    /// The length is not a whole number of entries (a torn or foreign file).
    #[error("length {len} is not a multiple of {entry_size}")]
    NotWholeEntries {
        /// The file length in bytes.
        len: u64,
        /// The entry size in bytes (`E::SIZE`).
        entry_size: usize,
    },
    /// The positioned read (or, in [`peek_file_ends`], the length query) failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The first and last entries of an index file of `len` bytes, read with
/// `read_exact_at(buf, offset)` (which must fill `buf` from byte `offset` or fail):
/// `Ok(None)` for an empty file (no read is made), else two reads of `E::SIZE` bytes (one
/// when the file holds a single entry).
///
/// A caller that wants the complete entries of a file with a torn tail passes
/// `len - len % E::SIZE` (Kafka's `roundDown`).
///
/// # Errors
/// [`PeekError::NotWholeEntries`] when `len` is not a multiple of `E::SIZE` (checked
/// before anything is read), [`PeekError::Io`] when a read fails.
pub fn peek_ends<E: IndexEntry>(
    len: u64,
    mut read_exact_at: impl FnMut(&mut [u8], u64) -> io::Result<()>,
) -> Result<Option<Ends<E>>, PeekError> {
    let Some(entries) = whole_entries::<E>(len)? else {
        return Ok(None);
    };
    let size = E::SIZE as u64;
    let mut first: E = bytemuck::Zeroable::zeroed();
    let mut last: E = bytemuck::Zeroable::zeroed();
    read_exact_at(bytemuck::bytes_of_mut(&mut first), 0)?;
    if entries == 1 {
        last = first;
    } else {
        read_exact_at(bytemuck::bytes_of_mut(&mut last), (entries - 1) * size)?;
    }
    Ok(Some(Ends {
        entries,
        first,
        last,
    }))
}

/// The entry count and last entry of an index file of `len` bytes, with one positioned
/// read (`read_exact_at` as in [`peek_ends`]): `Ok(None)` for an empty file.
///
/// # Errors
/// As [`peek_ends`].
pub fn peek_last<E: IndexEntry>(
    len: u64,
    mut read_exact_at: impl FnMut(&mut [u8], u64) -> io::Result<()>,
) -> Result<Option<(u64, E)>, PeekError> {
    let Some(entries) = whole_entries::<E>(len)? else {
        return Ok(None);
    };
    let mut last: E = bytemuck::Zeroable::zeroed();
    read_exact_at(
        bytemuck::bytes_of_mut(&mut last),
        (entries - 1) * E::SIZE as u64,
    )?;
    Ok(Some((entries, last)))
}

/// `len / E::SIZE`, `None` for 0, or the error for a length of partial entries.
fn whole_entries<E: IndexEntry>(len: u64) -> Result<Option<u64>, PeekError> {
    let size = E::SIZE as u64;
    if !len.is_multiple_of(size) {
        return Err(PeekError::NotWholeEntries {
            len,
            entry_size: E::SIZE,
        });
    }
    Ok(Some(len / size).filter(|&n| n != 0))
}

/// [`peek_ends`] on an open file: its length from `metadata`, then positioned reads.
///
/// # Errors
/// As [`peek_ends`]; a failing `metadata` is [`PeekError::Io`].
pub fn peek_file_ends<E: IndexEntry>(file: &File) -> Result<Option<Ends<E>>, PeekError> {
    use crate::pio::FileExt;
    let len = file.metadata()?.len();
    peek_ends(len, |buf, offset| file.read_exact_at(buf, offset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{I32Be, I64Be};
    use std::io::Write;

    /// A 12-byte entry shaped like the time index's.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(C)]
    struct Entry {
        key: I64Be,
        value: I32Be,
    }
    impl IndexEntry for Entry {
        const SIZE: usize = 12;
        const KIND: &'static str = "test index";
        fn key(&self, _base: i64) -> i64 {
            self.key.get()
        }
        fn value(&self, base: i64) -> i64 {
            base + self.value.get() as i64
        }
    }

    fn entry(k: i64, v: i32) -> Entry {
        Entry {
            key: I64Be::new(k),
            value: I32Be::new(v),
        }
    }

    fn file_with(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.idx");
        std::fs::File::create(&path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
        let f = File::open(&path).unwrap();
        (dir, f)
    }

    fn bytes_of(entries: &[Entry]) -> Vec<u8> {
        bytemuck::cast_slice(entries).to_vec()
    }

    #[test]
    fn whole_entries_give_count_first_and_last() {
        let es = [entry(5, 0), entry(7, 1), entry(-1, i32::MAX)];
        let (_d, f) = file_with(&bytes_of(&es));
        let ends = peek_file_ends::<Entry>(&f).unwrap().unwrap();
        assert_eq!(
            ends,
            Ends {
                entries: 3,
                first: es[0],
                last: es[2]
            }
        );
        assert_eq!(ends.last.key(0), -1);
        assert_eq!(ends.last.value(10), 10 + i32::MAX as i64);
    }

    #[test]
    fn one_entry_is_first_and_last() {
        let (_d, f) = file_with(&bytes_of(&[entry(0x0102_0304_0506_0708, -2)]));
        let ends = peek_file_ends::<Entry>(&f).unwrap().unwrap();
        assert_eq!(ends.entries, 1);
        assert_eq!(ends.first, ends.last);
        assert_eq!(ends.first.key(0), 0x0102_0304_0506_0708);
        assert_eq!(ends.first.value(0), -2);
    }

    #[test]
    fn last_alone_is_one_read_of_the_last_slot() {
        let es = [entry(1, 0), entry(2, 1), entry(3, 2)];
        let b = bytes_of(&es);
        let mut reads = Vec::new();
        let got = peek_last::<Entry>(b.len() as u64, |buf, at| {
            reads.push(at);
            buf.copy_from_slice(&b[at as usize..at as usize + buf.len()]);
            Ok(())
        })
        .unwrap();
        assert_eq!(got, Some((3, es[2])));
        assert_eq!(reads, [24]);
        assert!(peek_last::<Entry>(0, |_, _| panic!("no read"))
            .unwrap()
            .is_none());
        assert!(matches!(
            peek_last::<Entry>(13, |_, _| panic!("no read")),
            Err(PeekError::NotWholeEntries {
                len: 13,
                entry_size: 12
            })
        ));
    }

    #[test]
    fn empty_file_is_none_without_a_read() {
        let (_d, f) = file_with(&[]);
        assert!(peek_file_ends::<Entry>(&f).unwrap().is_none());
        let none = peek_ends::<Entry>(0, |_, _| panic!("no read for an empty file")).unwrap();
        assert!(none.is_none());
    }

    #[test]
    fn a_length_that_is_not_whole_entries_is_a_typed_error() {
        let mut b = bytes_of(&[entry(1, 1), entry(2, 2)]);
        b.push(0);
        let (_d, f) = file_with(&b);
        match peek_file_ends::<Entry>(&f) {
            Err(PeekError::NotWholeEntries { len, entry_size }) => {
                assert_eq!((len, entry_size), (25, 12));
            }
            other => panic!("{other:?}"),
        }
        let e = peek_ends::<Entry>(7, |_, _| panic!("checked before reading")).unwrap_err();
        assert_eq!(e.to_string(), "length 7 is not a multiple of 12");
        // Rounded down by the caller: the complete entries.
        let ends = peek_ends::<Entry>(crate::codec::round_down(25, 12) as u64, |buf, at| {
            buf.copy_from_slice(&b[at as usize..at as usize + buf.len()]);
            Ok(())
        })
        .unwrap()
        .unwrap();
        assert_eq!((ends.entries, ends.last), (2, entry(2, 2)));
    }

    #[test]
    fn a_failing_read_is_io() {
        // A length that claims more than the file holds (the file shrank meanwhile).
        let (_d, f) = file_with(&bytes_of(&[entry(1, 1)]));
        let e = peek_ends::<Entry>(24, |buf, at| {
            use crate::pio::FileExt;
            f.read_exact_at(buf, at)
        })
        .unwrap_err();
        match e {
            PeekError::Io(io) => assert_eq!(io.kind(), io::ErrorKind::UnexpectedEof),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_missing_file_is_the_callers_not_found() {
        // Opening is the caller's (it keeps its own NotFound rule); nothing to peek.
        let dir = tempfile::tempdir().unwrap();
        let err = File::open(dir.path().join("missing.idx")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let e = peek_ends::<Entry>(12, |_, _| Err(io::Error::from(io::ErrorKind::NotFound)))
            .unwrap_err();
        assert!(matches!(e, PeekError::Io(ref io) if io.kind() == io::ErrorKind::NotFound));
    }
}
