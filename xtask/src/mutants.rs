//! `cargo xtask crash` and `cargo xtask lin`: the `crash` and `lin` binaries of
//! `xtask/crash`, the one build of `segment` with its `crash-mutants` feature (the
//! deliberately weakened durability steps and read rules of `segment::fs::mutant`).
//!
//! That crate is its own workspace (the root `Cargo.toml` excludes it): as a member, its
//! `features = ["crash-mutants"]` would be unified into every `cargo test --workspace`
//! build of `segment`. It runs with `cargo run --release --manifest-path
//! xtask/crash/Cargo.toml` in the root target directory, and its `Cargo.lock` holds the
//! root lockfile's versions.
//! `cargo xtask lint` checks both (`xtask_lint::isolation`) and formats and lints the
//! crate ([`lint`]), which `--workspace` does not reach.

use std::process::{exit, Command};

use super::{cargo, root, target_dir, Res};

use xtask_lint::isolation::MUTANTS_MANIFEST as MANIFEST;

/// `cargo SUB --manifest-path xtask/crash/Cargo.toml`.
fn cargo_crate(sub: &str) -> Command {
    let mut c = cargo();
    c.arg(sub).arg("--manifest-path").arg(root().join(MANIFEST));
    c
}

/// `cargo run --release` of the crate's binary `bin` (`crash` or `lin`) with `args`.
///
/// Release: the crash enumerator explores two and a half to four times as many states a
/// second as unoptimised (`docs/testing.md#crash-speed`), which more than pays for the
/// optimised build in `cargo xtask ci`; the crate's profile keeps overflow checks and
/// debug assertions in the crates under test (`xtask/crash/Cargo.toml`). One build serves
/// both binaries.
fn command(bin: &str, args: &[String]) -> Command {
    let mut c = cargo_crate("run");
    c.arg("--target-dir").arg(target_dir());
    c.args(["--release", "--quiet", "--bin", bin, "--"])
        .args(args);
    c
}

/// Runs `bin` with `args` as a step of `cargo xtask ci` (the command echoed first).
pub fn run(bin: &str, args: &[String]) -> Res {
    super::run(command(bin, args))
}

/// `cargo xtask crash|lin ARGS`: the binary's own output and exit status, nothing added.
pub fn exec(bin: &str, args: &[String]) -> Res {
    let mut c = command(bin, args);
    let status = c.status().map_err(|e| format!("cannot start {c:?}: {e}"))?;
    if !status.success() {
        exit(status.code().unwrap_or(1));
    }
    Ok(())
}

/// `cargo fmt --check` and `cargo clippy --all-targets -D warnings` of the crate.
pub fn lint() -> Res {
    let mut c = cargo_crate("fmt");
    c.arg("--check");
    super::run(c)?;
    let mut c = cargo_crate("clippy");
    c.arg("--target-dir").arg(target_dir());
    c.args(["--all-targets", "--", "-D", "warnings"]);
    super::run(c)
}
