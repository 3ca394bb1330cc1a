//! placeholder
pub mod format;
pub mod record;
