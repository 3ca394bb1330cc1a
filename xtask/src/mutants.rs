//! `cargo xtask crash` and `cargo xtask lin`: the `crash` and `lin` binaries of
//! `xtask/crash`, the one build of `segment` with its `crash-mutants` feature (the
//! deliberately weakened durability steps and read rules of `segment::fs::mutant`).
//!
//! That crate is its own workspace (the root `Cargo.toml` excludes it): as a member, its
//! `features = ["crash-mutants"]` would be unified into every `cargo test --workspace`
//! build of `segment`. It runs with `cargo run --manifest-path xtask/crash/Cargo.toml` in
//! the root target directory, and its `Cargo.lock` holds the root lockfile's versions.
//! `cargo xtask lint` checks both ([`check_isolated`]) and formats and lints the crate
//! ([`lint`]), which `--workspace` does not reach.

use std::collections::BTreeSet;
use std::process::{exit, Command};

use super::{cargo, root, target_dir, Res};

/// The manifest of the crate, relative to the root.
pub const MANIFEST: &str = "xtask/crash/Cargo.toml";

/// The lockfile of the crate, relative to the root.
const LOCK: &str = "xtask/crash/Cargo.lock";

/// `cargo SUB --manifest-path xtask/crash/Cargo.toml --target-dir <root target>`.
fn cargo_crate(sub: &str) -> Command {
    let mut c = cargo();
    c.arg(sub).arg("--manifest-path").arg(root().join(MANIFEST));
    c
}

/// `cargo run` of the crate's binary `bin` (`crash` or `lin`) with `args`.
fn command(bin: &str, args: &[String]) -> Command {
    let mut c = cargo_crate("run");
    c.arg("--target-dir").arg(target_dir());
    c.args(["--quiet", "--bin", bin, "--"]).args(args);
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

/// Fails if any build of the root workspace (`cargo tree --workspace -e features`: every
/// member, every dependency kind) enables `segment`'s `crash-mutants` feature, or if the
/// crate's lockfile locks a registry package at a version the root lockfile does not.
pub fn check_isolated() -> Res {
    let mut c = cargo();
    c.args([
        "tree",
        "--workspace",
        "-e",
        "features",
        "--prefix",
        "none",
        "--offline",
    ]);
    let out = c.output().map_err(|e| format!("cannot start {c:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{c:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let tree = String::from_utf8_lossy(&out.stdout);
    if let Some(line) = tree.lines().find(|l| l.contains("\"crash-mutants\"")) {
        return Err(format!(
            "a root workspace build of segment has the crash-mutants feature ({}): only \
             {MANIFEST}, outside the workspace, may enable it",
            line.trim()
        ));
    }
    let read = |p: &str| std::fs::read_to_string(root().join(p)).map_err(|e| format!("{p}: {e}"));
    let ours = registry_packages(&read(LOCK)?);
    let roots = registry_packages(&read("Cargo.lock")?);
    let stray: Vec<String> = ours
        .difference(&roots)
        .map(|(n, v)| format!("{n} {v}"))
        .collect();
    if !stray.is_empty() {
        return Err(format!(
            "{LOCK} locks versions the root Cargo.lock does not: {}; copy the root \
             lockfile there and run `cargo metadata --manifest-path {MANIFEST}`",
            stray.join(", ")
        ));
    }
    eprintln!("==> crash-mutants: in no workspace build of segment; {LOCK} agrees with Cargo.lock");
    Ok(())
}

/// The `(name, version)` of every `[[package]]` of a `Cargo.lock` that has a `source`
/// (a registry or git package, not a path one).
fn registry_packages(lock: &str) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            block.lines().find_map(|l| {
                let v = l.strip_prefix(key)?.trim_start().strip_prefix('=')?;
                Some(v.trim().trim_matches('"').to_string())
            })
        };
        if let (Some(name), Some(version), Some(_)) =
            (field("name"), field("version"), field("source"))
        {
            found.insert((name, version));
        }
    }
    found
}
