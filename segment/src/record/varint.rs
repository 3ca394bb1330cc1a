//! Zig-zag varints (protobuf style) and a bounds-checked byte cursor.
//!
//! Kafka encodes the record fields of magic v2 as zig-zag varints: an `i32` `n` becomes
//! `(n << 1) ^ (n >> 31)` and an `i64` `(n << 1) ^ (n >> 63)`, written as 7-bit groups,
//! least significant first, with the continuation bit `0x80`. A varint may use at most
//! 5 bytes and a varlong at most 10; a longer encoding is an error. Like Kafka's
//! `ByteUtils.readVarint`, the value bits of the last allowed byte that do not fit the
//! integer are dropped rather than rejected.

/// Why a read from a [`Cursor`] failed. Converted to a [`RecordError`](super::RecordError)
/// with context by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// Fewer bytes left than needed.
    Eof { needed: usize, remaining: usize },
    /// The 5th byte of a varint has its continuation bit set.
    VarintTooLong,
    /// The 10th byte of a varlong has its continuation bit set.
    VarlongTooLong,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Eof { needed, remaining } => write!(
                f,
                "unexpected end of data: needed {needed} bytes, {remaining} remaining"
            ),
            DecodeError::VarintTooLong => {
                f.write_str("varint is too long, the most significant bit in the 5th byte is set")
            }
            DecodeError::VarlongTooLong => {
                f.write_str("varlong is too long, the most significant bit in the 10th byte is set")
            }
        }
    }
}

/// A read position over a byte slice; every read is bounds-checked.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not yet consumed.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[inline]
    pub(crate) fn read_bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let remaining = self.remaining();
        let out = self
            .buf
            .get(self.pos..)
            .and_then(|rest| rest.get(..n))
            .ok_or(DecodeError::Eof {
                needed: n,
                remaining,
            })?;
        self.pos += n;
        Ok(out)
    }

    #[inline]
    pub(crate) fn read_u8(&mut self) -> Result<u8, DecodeError> {
        let Some(&b) = self.buf.get(self.pos) else {
            return Err(DecodeError::Eof {
                needed: 1,
                remaining: self.remaining(),
            });
        };
        self.pos += 1;
        Ok(b)
    }

    /// Reads a zig-zag varint (at most 5 bytes).
    ///
    /// Encodings of one and two bytes (values in -8192..8192: the record fields of
    /// typical batches) are read in line; longer ones, and every error, by the
    /// byte-by-byte loop, which starts over at the same position and so answers as if
    /// it had read them all.
    #[inline(always)]
    pub(crate) fn read_varint(&mut self) -> Result<i32, DecodeError> {
        let raw = match self.buf.get(self.pos..).unwrap_or_default() {
            [b0, ..] if b0 & 0x80 == 0 => {
                self.pos += 1;
                u32::from(*b0)
            }
            [b0, b1, ..] if b1 & 0x80 == 0 => {
                self.pos += 2;
                u32::from(b0 & 0x7f) | (u32::from(*b1) << 7)
            }
            _ => return self.read_varint_loop(),
        };
        Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
    }

    /// [`read_varint`](Self::read_varint) byte by byte (kept out of line, so the in-line
    /// part stays small).
    #[inline(never)]
    fn read_varint_loop(&mut self) -> Result<i32, DecodeError> {
        let mut raw: u32 = 0;
        let mut shift = 0u32;
        loop {
            let b = self.read_u8()?;
            if b & 0x80 == 0 {
                raw |= u32::from(b) << shift;
                break;
            }
            raw |= u32::from(b & 0x7f) << shift;
            shift += 7;
            if shift > 28 {
                return Err(DecodeError::VarintTooLong);
            }
        }
        Ok(((raw >> 1) as i32) ^ -((raw & 1) as i32))
    }

    /// Reads a zig-zag varlong (at most 10 bytes); one and two bytes in line, as
    /// [`read_varint`](Self::read_varint).
    #[inline(always)]
    pub(crate) fn read_varlong(&mut self) -> Result<i64, DecodeError> {
        let raw = match self.buf.get(self.pos..).unwrap_or_default() {
            [b0, ..] if b0 & 0x80 == 0 => {
                self.pos += 1;
                u64::from(*b0)
            }
            [b0, b1, ..] if b1 & 0x80 == 0 => {
                self.pos += 2;
                u64::from(b0 & 0x7f) | (u64::from(*b1) << 7)
            }
            _ => return self.read_varlong_loop(),
        };
        Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
    }

    /// [`read_varlong`](Self::read_varlong) byte by byte (out of line).
    #[inline(never)]
    fn read_varlong_loop(&mut self) -> Result<i64, DecodeError> {
        let mut raw: u64 = 0;
        let mut shift = 0u32;
        loop {
            let b = self.read_u8()?;
            if b & 0x80 == 0 {
                raw |= u64::from(b) << shift;
                break;
            }
            raw |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if shift > 63 {
                return Err(DecodeError::VarlongTooLong);
            }
        }
        Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
    }
}

/// Appends the zig-zag varint encoding of `v` (1–5 bytes).
pub(crate) fn put_varint(out: &mut Vec<u8>, v: i32) {
    let mut raw = ((v << 1) ^ (v >> 31)) as u32;
    while raw >= 0x80 {
        out.push((raw as u8) | 0x80);
        raw >>= 7;
    }
    out.push(raw as u8);
}

/// Appends the zig-zag varlong encoding of `v` (1–10 bytes).
pub(crate) fn put_varlong(out: &mut Vec<u8>, v: i64) {
    let mut raw = ((v << 1) ^ (v >> 63)) as u64;
    while raw >= 0x80 {
        out.push((raw as u8) | 0x80);
        raw >>= 7;
    }
    out.push(raw as u8);
}

/// Number of bytes [`put_varint`] writes for `v`.
pub(crate) fn varint_len(v: i32) -> usize {
    let raw = ((v << 1) ^ (v >> 31)) as u32;
    let bits = 32 - raw.leading_zeros() as usize;
    bits.max(1).div_ceil(7)
}

/// Number of bytes [`put_varlong`] writes for `v`.
pub(crate) fn varlong_len(v: i64) -> usize {
    let raw = ((v << 1) ^ (v >> 63)) as u64;
    let bits = 64 - raw.leading_zeros() as usize;
    bits.max(1).div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip_int(v: i32) {
        let mut out = Vec::new();
        put_varint(&mut out, v);
        assert_eq!(out.len(), varint_len(v), "{v}");
        let mut c = Cursor::new(&out);
        assert_eq!(c.read_varint(), Ok(v));
        assert_eq!(c.remaining(), 0);
    }

    fn round_trip_long(v: i64) {
        let mut out = Vec::new();
        put_varlong(&mut out, v);
        let mut c = Cursor::new(&out);
        assert_eq!(c.read_varlong(), Ok(v));
        assert_eq!(c.remaining(), 0);
    }

    #[test]
    fn zig_zag_known_values() {
        let mut out = Vec::new();
        put_varint(&mut out, -1);
        put_varint(&mut out, 1);
        put_varint(&mut out, 5);
        put_varint(&mut out, 64);
        assert_eq!(out, [0x01, 0x02, 0x0a, 0x80, 0x01]);
        for v in [0, 1, -1, 63, -64, 64, i32::MAX, i32::MIN] {
            round_trip_int(v);
        }
        for v in [0, 1, -1, i64::from(i32::MAX) + 1, i64::MAX, i64::MIN] {
            round_trip_long(v);
        }
    }

    /// The in-line reads of one and two bytes answer as the byte-by-byte loop does
    /// (value, error and bytes consumed) on every pair of leading bytes, whole or cut
    /// short, and with each kind of tail after them.
    #[test]
    fn the_fast_reads_answer_as_the_loop() {
        let tails: [&[u8]; 4] = [&[], &[0x00], &[0x81, 0x01], &[0xff; 9]];
        for b0 in 0..=255u8 {
            for b1 in 0..=255u8 {
                for (cut, tail) in [(1usize, &[][..]), (2, &[][..])]
                    .into_iter()
                    .chain(tails.iter().map(|t| (2, *t)))
                {
                    let mut buf = vec![b0, b1];
                    buf.truncate(cut);
                    buf.extend_from_slice(tail);
                    let (mut fast, mut slow) = (Cursor::new(&buf), Cursor::new(&buf));
                    assert_eq!(fast.read_varint(), slow.read_varint_loop(), "{buf:x?}");
                    assert_eq!(fast.position(), slow.position(), "{buf:x?}");
                    let (mut fast, mut slow) = (Cursor::new(&buf), Cursor::new(&buf));
                    assert_eq!(fast.read_varlong(), slow.read_varlong_loop(), "{buf:x?}");
                    assert_eq!(fast.position(), slow.position(), "{buf:x?}");
                }
            }
        }
    }

    #[test]
    fn too_long_and_truncated() {
        let mut c = Cursor::new(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
        assert_eq!(c.read_varint(), Err(DecodeError::VarintTooLong));
        let mut c = Cursor::new(&[0xff; 10]);
        assert_eq!(c.read_varlong(), Err(DecodeError::VarlongTooLong));
        let mut c = Cursor::new(&[0x80]);
        assert!(matches!(c.read_varint(), Err(DecodeError::Eof { .. })));
        // A 5-byte varint whose last byte carries bits beyond 32 is accepted (bits dropped).
        let mut c = Cursor::new(&[0xff, 0xff, 0xff, 0xff, 0x7f]);
        assert_eq!(c.read_varint(), Ok(i32::MIN));
    }
}
