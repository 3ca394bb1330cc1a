//! Big-endian field types and the [`IndexEntry`] trait: the fixed-size entry codec.
//!
//! Every multi-byte integer in a Kafka index file is big-endian. The types here are
//! `#[repr(transparent)]` byte arrays (alignment 1) implementing [`bytemuck::Pod`], so a
//! mapped index file can be viewed in place as `&[RawEntry]` with
//! [`bytemuck::cast_slice`] — zero copies, no alignment requirement on the file offset.
//! Host-endian conversion happens only inside the `get`/`new` methods of these types;
//! format code never calls `from_be_bytes`/`to_be_bytes` itself.

use bytemuck::{Pod, Zeroable};

macro_rules! be_int {
    ($(#[$doc:meta])* $name:ident, $int:ty, $n:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Pod, Zeroable)]
        #[repr(transparent)]
        pub struct $name([u8; $n]);

        impl $name {
            /// Encodes `v` in big-endian byte order.
            #[inline(always)]
            pub const fn new(v: $int) -> Self {
                Self(v.to_be_bytes())
            }
            /// Decodes the big-endian bytes into a host integer.
            #[inline(always)]
            pub const fn get(self) -> $int {
                <$int>::from_be_bytes(self.0)
            }
            /// The field stored as these big-endian bytes (as read from a file).
            #[inline(always)]
            pub const fn from_bytes(bytes: [u8; $n]) -> Self {
                Self(bytes)
            }
            /// The raw big-endian bytes.
            #[inline(always)]
            pub const fn to_bytes(self) -> [u8; $n] {
                self.0
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Debug::fmt(&self.get(), f)
            }
        }

        impl From<$int> for $name {
            #[inline(always)]
            fn from(v: $int) -> Self {
                Self::new(v)
            }
        }

        const _: () = assert!(core::mem::size_of::<$name>() == $n);
        const _: () = assert!(core::mem::align_of::<$name>() == 1);
    };
}

be_int!(
    /// A big-endian `i16` stored as 2 bytes (alignment 1).
    I16Be, i16, 2
);
be_int!(
    /// A big-endian `i32` stored as 4 bytes (alignment 1).
    I32Be, i32, 4
);
be_int!(
    /// A big-endian `u32` stored as 4 bytes (alignment 1).
    U32Be, u32, 4
);
be_int!(
    /// A big-endian `i64` stored as 8 bytes (alignment 1).
    I64Be, i64, 8
);

/// A fixed-size index entry exactly as laid out on disk.
///
/// Implementors are `#[repr(C)]` structs of the big-endian field types of this module
/// (alignment 1), so that `size_of::<Self>() == Self::SIZE` and any byte offset is a valid
/// place to view one. Each implementation carries a compile-time size assertion.
///
/// An entry has a **key** (the field a lookup searches by) and a **value**; both are
/// exposed as `i64` in absolute terms, i.e. relative offsets are already added to the
/// segment's base offset:
///
/// | index | key | value |
/// |---|---|---|
/// | offset index (8 bytes) | absolute offset | physical position (bytes into `.log`) |
/// | time index (12 bytes) | timestamp (ms since epoch) | absolute offset |
pub trait IndexEntry: Pod + Send + Sync + core::fmt::Debug + 'static {
    /// Size of one entry on disk, in bytes (8 for `.index`, 12 for `.timeindex`).
    const SIZE: usize;
    /// Human-readable name of the index kind, used in error messages ("offset index").
    const KIND: &'static str;
    /// The searchable key of this entry, as an absolute value (`base_offset` applied
    /// where the key is a relative offset).
    fn key(&self, base_offset: i64) -> i64;
    /// The value of this entry, as an absolute value (`base_offset` applied where the
    /// value is a relative offset).
    fn value(&self, base_offset: i64) -> i64;
}

/// Converts an absolute offset into a relative offset for a segment with `base_offset`.
///
/// Returns `None` unless `0 <= offset - base_offset <= i32::MAX` (Kafka's
/// `canAppendOffset`); the subtraction itself never overflows.
#[inline]
pub fn relative_offset(base_offset: i64, offset: i64) -> Option<i32> {
    let delta = offset.checked_sub(base_offset)?;
    if (0..=i32::MAX as i64).contains(&delta) {
        Some(delta as i32)
    } else {
        None
    }
}

/// Kafka's `roundDown(n, f) = f * (n / f)` for non-negative sizes, in bytes.
#[inline]
pub const fn round_down(n: usize, entry_size: usize) -> usize {
    entry_size * (n / entry_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_endian_round_trip() {
        assert_eq!(I32Be::new(-7).to_bytes(), [0xff, 0xff, 0xff, 0xf9]);
        assert_eq!(I32Be::new(-7).get(), -7);
        assert_eq!(I64Be::new(11).to_bytes(), [0, 0, 0, 0, 0, 0, 0, 11]);
        assert_eq!(I16Be::new(1).to_bytes(), [0, 1]);
        assert_eq!(U32Be::new(0x5d03_5a13).to_bytes(), [0x5d, 0x03, 0x5a, 0x13]);
    }

    #[test]
    fn relative_offset_range() {
        assert_eq!(relative_offset(100, 100), Some(0));
        assert_eq!(relative_offset(100, 99), None);
        assert_eq!(relative_offset(100, 100 + i32::MAX as i64), Some(i32::MAX));
        assert_eq!(relative_offset(100, 101 + i32::MAX as i64), None);
        assert_eq!(relative_offset(i64::MIN, i64::MAX), None);
        assert_eq!(relative_offset(i64::MAX, i64::MIN), None);
    }

    #[test]
    fn round_down_matches_kafka() {
        assert_eq!(round_down(100, 8), 96);
        assert_eq!(round_down(100, 12), 96);
        assert_eq!(round_down(10_485_760, 12), 10_485_756);
        assert_eq!(round_down(7, 8), 0);
    }
}
