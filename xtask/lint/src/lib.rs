//! The repository checks that `cargo xtask lint` runs before fmt and clippy, each over the
//! workspace root it is given: [`anchors`] (every cited `docs/<name>.md#<anchor>`
//! resolves), [`codemap`] (ARCHITECTURE.md's code map names every crate, module and test
//! binary), [`layers`] (no import cycle inside `segment/src`, no import up a layer) and
//! [`isolation`] (no workspace build of `segment` has its `crash-mutants` feature).

pub mod anchors;
pub mod codemap;
pub mod isolation;
pub mod layers;
