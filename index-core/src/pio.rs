//! Positioned file I/O and file-type checks that work on every platform `memmap2`
//! supports: on Unix the standard `FileExt`/`FileTypeExt` traits, elsewhere (Windows)
//! equivalents built on `seek_read`/`seek_write` (and file-type checks that are all
//! `false`). The index crates and `segment` import `FileExt` and `FileTypeExt` from here,
//! so the platform split is written once.

#[cfg(unix)]
pub use std::os::unix::fs::{FileExt, FileTypeExt};

#[cfg(not(unix))]
pub use portable::{FileExt, FileTypeExt};

#[cfg(not(unix))]
mod portable {
    use std::fs::File;
    use std::io;

    /// `read_exact_at` / `write_all_at` as on Unix.
    pub trait FileExt {
        /// Reads exactly `buf.len()` bytes at byte `offset` (`UnexpectedEof` if the file
        /// is shorter), retrying on `Interrupted`.
        fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
        /// Writes all of `buf` at byte `offset`, retrying on `Interrupted`.
        fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    }

    #[cfg(windows)]
    impl FileExt for File {
        fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
            use std::os::windows::fs::FileExt as _;
            while !buf.is_empty() {
                match self.seek_read(buf, offset) {
                    Ok(0) => {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "failed to fill whole buffer",
                        ))
                    }
                    Ok(n) => {
                        buf = &mut buf[n..];
                        offset += n as u64;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        }

        fn write_all_at(&self, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
            use std::os::windows::fs::FileExt as _;
            while !buf.is_empty() {
                match self.seek_write(buf, offset) {
                    Ok(0) => {
                        return Err(io::Error::new(
                            io::ErrorKind::WriteZero,
                            "failed to write whole buffer",
                        ))
                    }
                    Ok(n) => {
                        buf = &buf[n..];
                        offset += n as u64;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        }
    }

    /// Unix's special file types do not exist here: every check is `false`.
    pub trait FileTypeExt {
        /// Whether this is a FIFO: never, on this platform.
        fn is_fifo(&self) -> bool {
            false
        }
        /// Whether this is a socket: never, on this platform.
        fn is_socket(&self) -> bool {
            false
        }
        /// Whether this is a block device: never, on this platform.
        fn is_block_device(&self) -> bool {
            false
        }
        /// Whether this is a character device: never, on this platform.
        fn is_char_device(&self) -> bool {
            false
        }
    }

    impl FileTypeExt for std::fs::FileType {}
}
