//! `cargo xtask lint`'s check that `segment`'s `crash-mutants` feature (the deliberately
//! weakened durability steps and read rules of `segment::fs::mutant`) reaches no build of
//! the root workspace. Its one user, `xtask/crash` (the crash enumerator and the lin
//! runner), is its own workspace for that reason: as a member, feature unification would
//! put the feature into every `cargo test --workspace` build of `segment`. That crate's
//! `Cargo.lock` must lock no registry package at a version the root lockfile does not.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The crate allowed to enable the feature, relative to the root.
pub const MUTANTS_MANIFEST: &str = "xtask/crash/Cargo.toml";

/// Its lockfile, relative to the root.
pub const MUTANTS_LOCK: &str = "xtask/crash/Cargo.lock";

/// Fails if `cargo tree --workspace -e features` of `root` (every member, every dependency
/// kind) shows `crash-mutants`, or if [`MUTANTS_LOCK`] locks a registry package at a
/// version `root`'s `Cargo.lock` does not.
pub fn check(root: &Path) -> Result<(), String> {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root).args([
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
    if let Some(line) = mutant_feature(&String::from_utf8_lossy(&out.stdout)) {
        return Err(format!(
            "a root workspace build of segment has the crash-mutants feature ({line}): only \
             {MUTANTS_MANIFEST}, outside the workspace, may enable it"
        ));
    }
    let read = |p: &str| std::fs::read_to_string(root.join(p)).map_err(|e| format!("{p}: {e}"));
    let stray = stray_versions(&read(MUTANTS_LOCK)?, &read("Cargo.lock")?);
    if !stray.is_empty() {
        return Err(format!(
            "{MUTANTS_LOCK} locks versions the root Cargo.lock does not: {}; copy the root \
             lockfile there and run `cargo tree --manifest-path {MUTANTS_MANIFEST}`",
            stray.join(", ")
        ));
    }
    Ok(())
}

/// The first line of `cargo tree -e features --prefix none` output that enables
/// `crash-mutants`.
fn mutant_feature(tree: &str) -> Option<&str> {
    tree.lines()
        .map(str::trim)
        .find(|l| l.contains("feature \"crash-mutants\""))
}

/// The `name version` of every registry package `ours` locks at a version `root` does not.
fn stray_versions(ours: &str, root: &str) -> Vec<String> {
    let root = registry_packages(root);
    registry_packages(ours)
        .difference(&root)
        .map(|(n, v)| format!("{n} {v}"))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    const REG: &str = "registry+https://github.com/rust-lang/crates.io-index";

    fn lock(pkgs: &[(&str, &str, bool)]) -> String {
        let mut s = String::from("version = 4\n");
        for (n, v, reg) in pkgs {
            s.push_str(&format!(
                "\n[[package]]\nname = \"{n}\"\nversion = \"{v}\"\n"
            ));
            if *reg {
                s.push_str(&format!("source = \"{REG}\"\n"));
            }
        }
        s
    }

    #[test]
    fn a_mutant_feature_line_is_found() {
        let tree = "segment v0.1.0 (/r/segment)\nsegment feature \"default\"\n\
                    segment feature \"crash-mutants\"\nxtask v0.1.0 (/r/xtask)\n";
        assert_eq!(
            mutant_feature(tree),
            Some("segment feature \"crash-mutants\"")
        );
        assert_eq!(mutant_feature("segment feature \"default\"\n"), None);
    }

    #[test]
    fn only_registry_versions_the_root_lacks_are_stray() {
        let root = lock(&[("rand", "0.8.5", true), ("segment", "0.1.0", false)]);
        let same = lock(&[("rand", "0.8.5", true), ("xtask-crash", "0.0.0", false)]);
        assert!(stray_versions(&same, &root).is_empty());
        let newer = lock(&[("rand", "0.8.6", true), ("tempfile", "3.1.0", true)]);
        assert_eq!(
            stray_versions(&newer, &root),
            vec!["rand 0.8.6".to_string(), "tempfile 3.1.0".to_string()]
        );
    }
}
