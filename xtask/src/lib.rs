//! Not a library: this target exists so that `cargo test --workspace` compiles and runs
//! the Rust examples of the top-level README as doctests, keeping them true. (xtask is
//! never published, so it may include a file outside its directory.)

/// The top-level README, whose Rust code blocks run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;
