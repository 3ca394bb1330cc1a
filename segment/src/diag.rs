//! Diagnostic events (where Kafka's log layer writes a WARN or INFO line: recovery
//! truncating a segment, an index rebuilt, a leftover file deleted).
//!
//! With the `tracing` feature (on by default) they are [`tracing`](https://docs.rs/tracing)
//! events; without it they are compiled out. Either way [`LogStats`](crate::LogStats) counts
//! what recovery did, and every error is returned to the caller: no event carries
//! information that is not also available through the API.
//!
//! Modules emit them as `tracing::warn!(..)` after `use crate::diag as tracing;`.

#[cfg(feature = "tracing")]
pub(crate) use ::tracing::{debug, error, info, warn};

/// Swallows an event without evaluating it. Each field and the message are placed in a
/// closure that is never called, so they still type-check and count as used.
#[cfg(not(feature = "tracing"))]
macro_rules! ignore_event {
    (@fields) => {};
    (@fields $msg:literal $(, $arg:expr)* $(,)?) => {
        let _ = || $crate::diag::used(&format!($msg $(, $arg)*));
    };
    (@fields $(%)? $(?)? $name:ident $(, $($rest:tt)*)?) => {
        let _ = || $crate::diag::used(&$name);
        $($crate::diag::ignore_event!(@fields $($rest)*);)?
    };
    (@fields $name:ident = $(%)? $(?)? $value:expr $(, $($rest:tt)*)?) => {
        let _ = || $crate::diag::used(&$value);
        $($crate::diag::ignore_event!(@fields $($rest)*);)?
    };
    ($($event:tt)*) => {{
        $crate::diag::ignore_event!(@fields $($event)*);
    }};
}

#[cfg(not(feature = "tracing"))]
pub(crate) use {
    ignore_event, ignore_event as debug, ignore_event as error, ignore_event as info,
    ignore_event as warn,
};

/// Marks a value as used by an event that is compiled out.
#[cfg(not(feature = "tracing"))]
pub(crate) fn used<T: ?Sized>(_: &T) {}
