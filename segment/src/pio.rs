//! Positioned file I/O and file-type checks that work on every platform `memmap2`
//! supports: on Unix the standard `FileExt`/`FileTypeExt` traits, elsewhere (Windows)
//! equivalents built on `seek_read`/`seek_write`. Modules import `FileExt` from here.

#[cfg(unix)]
pub(crate) use std::os::unix::fs::{FileExt, FileTypeExt};

#[cfg(not(unix))]
pub(crate) use portable::{FileExt, FileTypeExt};

#[cfg(not(unix))]
mod portable {
    use std::fs::File;
    use std::io;

    /// `read_exact_at` / `write_all_at` as on Unix.
    pub(crate) trait FileExt {
        fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
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
    pub(crate) trait FileTypeExt {
        fn is_fifo(&self) -> bool {
            false
        }
        fn is_socket(&self) -> bool {
            false
        }
        fn is_block_device(&self) -> bool {
            false
        }
        fn is_char_device(&self) -> bool {
            false
        }
    }

    impl FileTypeExt for std::fs::FileType {}
}
