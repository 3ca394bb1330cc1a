//! `cargo xtask lint`'s check that ARCHITECTURE.md's code map (the text from `## Code map`
//! to the next `## ` heading, fenced blocks left out) names every crate, every module and
//! every test binary, so that its lists cannot go stale.
//!
//! The rule, which a maintainer adding a file follows:
//!
//! * **Crates**: every `members` and `exclude` entry of the root `Cargo.toml` (the nested
//!   crates under `xtask/` included) is named anywhere in the code map, in backticks, by
//!   its directory (`xtask/lin-check`, a trailing `/` allowed) or its package name.
//! * **Modules**: every `.rs` file under a crate's `src/` except the crate roots
//!   `src/lib.rs` and `src/main.rs` is a module, and so is every directory with a
//!   `mod.rs` (the `mod.rs` itself is not one). Each is named, in backticks, in the
//!   `### ` section of the code map whose heading names the crate's top directory
//!   (`xtask/lin-check` in the `xtask` section), by its module name (`k6`), its file name
//!   (`leader.rs`), or a path ending in it (`log/leader.rs`, `segment/src/log/`). Nested
//!   files count one by one: every file of `segment/src/log/`, of `segment/src/dump/`,
//!   of `xtask/oracle/src/` is named.
//! * **Test binaries**: Cargo's: every `tests/*.rs` file and every `tests/<dir>/main.rs`
//!   of a crate. Each is named in its crate's section by a path from `tests/` on
//!   (`tests/doctor.rs`, `tests/log/`, `segment/tests/log/main.rs`); a bare name is not
//!   enough here, since the binaries share names with modules.
//!
//! A name two modules of one crate share (`error`, `validate`) is satisfied by a mention of
//! either: the check catches a new file with a new name, not a second file of an old name.
//! Benches, examples and fuzz targets are not checked.

use std::collections::BTreeSet;
use std::path::Path;

/// The document whose code map is checked.
pub const DOC: &str = "ARCHITECTURE.md";

/// What a code-map entry stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Crate,
    Module,
    TestBinary,
}

/// One crate, module or test binary that the code map must name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub kind: Kind,
    /// The crate's directory, relative to the root (`segment`, `xtask/lin-check`).
    pub crate_dir: String,
    /// The item's path relative to the root (`segment/src/log/leader.rs`,
    /// `segment/src/log` for a `mod.rs` directory, `segment/tests/log` for a test binary
    /// of a directory); for a crate its directory.
    pub path: String,
    /// Module name (`leader`), or a crate's package name.
    pub name: String,
}

/// Checks `root`'s ARCHITECTURE.md against `root`'s crates; returns one line per item the
/// code map does not name.
pub fn check(root: &Path) -> Result<Vec<String>, String> {
    let doc = std::fs::read_to_string(root.join(DOC)).map_err(|e| format!("{DOC}: {e}"))?;
    Ok(missing(&doc, &inventory(root)?))
}

/// Every crate, module and test binary under `root`, by the rule of the module docs.
pub fn inventory(root: &Path) -> Result<Vec<Item>, String> {
    let manifest =
        std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| format!("Cargo.toml: {e}"))?;
    let mut dirs = string_array(&manifest, "members");
    dirs.extend(string_array(&manifest, "exclude"));
    let mut items = Vec::new();
    for dir in dirs {
        let croot = root.join(&dir);
        let pkg = std::fs::read_to_string(croot.join("Cargo.toml"))
            .map_err(|e| format!("{dir}/Cargo.toml: {e}"))?;
        items.push(Item {
            kind: Kind::Crate,
            crate_dir: dir.clone(),
            path: dir.clone(),
            name: package_name(&pkg).unwrap_or_else(|| dir.clone()),
        });
        let mut files = Vec::new();
        rs_files(&croot.join("src"), &mut files)?;
        files.sort();
        for f in files {
            let rel = rel_path(root, &f);
            let in_crate = rel_path(&croot, &f);
            if in_crate == "src/lib.rs" || in_crate == "src/main.rs" {
                continue;
            }
            let (path, name) = if f.file_name().is_some_and(|n| n == "mod.rs") {
                let dir = f.parent().unwrap_or(&croot);
                (rel_path(root, dir), file_stem(dir))
            } else {
                (rel, file_stem(&f))
            };
            items.push(Item {
                kind: Kind::Module,
                crate_dir: dir.clone(),
                path,
                name,
            });
        }
        let tests = croot.join("tests");
        let Ok(rd) = std::fs::read_dir(&tests) else {
            continue;
        };
        let mut bins = Vec::new();
        for e in rd.flatten() {
            let p = e.path();
            let dir_bin = p.is_dir() && p.join("main.rs").is_file();
            if dir_bin || (p.is_file() && p.extension().is_some_and(|x| x == "rs")) {
                bins.push(p);
            }
        }
        bins.sort();
        for p in bins {
            items.push(Item {
                kind: Kind::TestBinary,
                crate_dir: dir.clone(),
                path: rel_path(root, &p),
                name: file_stem(&p),
            });
        }
    }
    Ok(items)
}

/// The items of `items` that the code map of `doc` does not name, one line each.
pub fn missing(doc: &str, items: &[Item]) -> Vec<String> {
    let Some(map) = code_map(doc) else {
        return vec![format!("{DOC} has no `## Code map` section")];
    };
    let all = tokens(&map);
    let sections = sections(&map);
    let mut out = Vec::new();
    let mut no_section = BTreeSet::new();
    for it in items {
        let top = it.crate_dir.split('/').next().unwrap_or_default();
        let named = match it.kind {
            Kind::Crate => all.contains(&it.path) || all.contains(&it.name),
            Kind::Module | Kind::TestBinary => {
                let Some(toks) = sections
                    .iter()
                    .find(|(heads, _)| heads.contains(top))
                    .map(|(_, t)| t)
                else {
                    if no_section.insert(top.to_string()) {
                        out.push(format!(
                            "crate `{}` has no `### `{top}`` section in the code map",
                            it.crate_dir
                        ));
                    }
                    continue;
                };
                candidates(it).iter().any(|c| toks.contains(c))
            }
        };
        if !named {
            out.push(match it.kind {
                Kind::Crate => format!("crate `{}` is not named in the code map", it.path),
                Kind::Module => format!(
                    "module `{}` is not named in the `{top}` section (as `{}`, its file name or its path)",
                    it.path, it.name
                ),
                Kind::TestBinary => format!(
                    "test binary `{}` is not named in the `{top}` section (as a path from `tests/` on)",
                    it.path
                ),
            });
        }
    }
    out
}

/// The backticked forms that name `it`.
fn candidates(it: &Item) -> Vec<String> {
    let parts: Vec<&str> = it.path.split('/').collect();
    let mut c: Vec<String> = (0..parts.len()).map(|i| parts[i..].join("/")).collect();
    match it.kind {
        Kind::Crate => {}
        Kind::Module => c.push(it.name.clone()),
        Kind::TestBinary => {
            // Only the suffixes that start at `tests/` (or before it).
            let t = parts.iter().rposition(|p| *p == "tests").unwrap_or(0);
            c = (0..=t).map(|i| parts[i..].join("/")).collect();
            if !it.path.ends_with(".rs") {
                let with_main: Vec<String> = c.iter().map(|s| format!("{s}/main.rs")).collect();
                c.extend(with_main);
            }
        }
    }
    c
}

/// The code map: from the `## Code map` line to the next `## ` heading, without fenced
/// blocks.
fn code_map(doc: &str) -> Option<String> {
    let mut out = String::new();
    let mut inside = false;
    let mut fenced = false;
    for line in doc.lines() {
        if line.starts_with("## ") {
            if inside {
                break;
            }
            inside = line.trim_end() == "## Code map";
            continue;
        }
        if !inside {
            continue;
        }
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    inside.then_some(out)
}

/// The `### ` sections of the code map: the tokens of each heading and of its body.
fn sections(map: &str) -> Vec<(BTreeSet<String>, BTreeSet<String>)> {
    let mut out: Vec<(BTreeSet<String>, String)> = Vec::new();
    for line in map.lines() {
        if let Some(h) = line.strip_prefix("### ") {
            out.push((tokens(h), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out.into_iter().map(|(h, b)| (h, tokens(&b))).collect()
}

/// Every backticked span of `text`, trimmed, without a trailing `/`.
fn tokens(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(|t| t.trim().trim_end_matches('/').to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The quoted strings of the array `key = [ ... ]` in `manifest`.
fn string_array(manifest: &str, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.split('#').next().unwrap_or_default();
        if !inside {
            let Some(rest) = line.trim_start().strip_prefix(key) else {
                continue;
            };
            let Some(rest) = rest.trim_start().strip_prefix('=') else {
                continue;
            };
            inside = true;
            out.extend(quoted(rest));
            if rest.contains(']') {
                break;
            }
        } else {
            out.extend(quoted(line));
            if line.contains(']') {
                break;
            }
        }
    }
    out
}

fn quoted(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split('"').skip(1).step_by(2).map(str::to_string)
}

fn package_name(manifest: &str) -> Option<String> {
    let pkg = manifest.split("[package]").nth(1)?;
    let line = pkg
        .lines()
        .take_while(|l| !l.starts_with('['))
        .find(|l| l.trim_start().starts_with("name"))?;
    quoted(line).next()
}

fn rs_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<(), String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(()); // no src/ (the fuzz crate)
    };
    for e in rd {
        let p = e.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if p.is_dir() {
            rs_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

fn rel_path(base: &Path, p: &Path) -> String {
    let r = p.strip_prefix(base).unwrap_or(p);
    r.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn file_stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anchors::tests::tree;

    fn repo_root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .unwrap()
    }

    const MAP: &str = "# A\n## Code map\n```\na ── `b\n```\n### `a`\n`known`, `log/` (`leader.rs`), `tests/it/`, `tests/solo.rs`\n### `b`\nnothing\n## Invariants\n`extra`\n";

    #[test]
    fn the_real_code_map_names_everything() {
        let missing = check(repo_root()).unwrap();
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }

    #[test]
    fn the_inventory_sees_every_kind() {
        let items = inventory(repo_root()).unwrap();
        let has = |k: Kind, p: &str| items.iter().any(|i| i.kind == k && i.path == p);
        assert!(has(Kind::Crate, "xtask/lin-check"));
        assert!(has(Kind::Crate, "xtask/fuzz"));
        assert!(has(Kind::Module, "segment/src/log"));
        assert!(has(Kind::Module, "segment/src/log/leader.rs"));
        assert!(has(Kind::Module, "xtask/oracle/src/k6.rs"));
        assert!(has(Kind::TestBinary, "segment/tests/doctor.rs"));
        assert!(has(Kind::TestBinary, "segment/tests/log"));
        assert!(!has(Kind::Module, "segment/src/lib.rs"));
        assert!(!has(Kind::Module, "segment/src/log/mod.rs"));
        assert!(!items.iter().any(|i| i.path.ends_with("tests/common")));
    }

    #[test]
    fn a_new_unlisted_module_of_the_real_tree_fails() {
        let doc = std::fs::read_to_string(repo_root().join(DOC)).unwrap();
        let mut items = inventory(repo_root()).unwrap();
        items.push(Item {
            kind: Kind::Module,
            crate_dir: "segment".into(),
            path: "segment/src/log/compactor.rs".into(),
            name: "compactor".into(),
        });
        items.push(Item {
            kind: Kind::TestBinary,
            crate_dir: "segment".into(),
            path: "segment/tests/compactor.rs".into(),
            name: "compactor".into(),
        });
        let missing = missing(&doc, &items);
        assert_eq!(missing.len(), 2, "{missing:?}");
        assert!(missing[0].contains("segment/src/log/compactor.rs"));
        assert!(missing[1].contains("segment/tests/compactor.rs"));
    }

    #[test]
    fn a_temp_tree_passes_then_fails_on_each_unlisted_item() {
        let files = [
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\n    \"a\", # the one\n]\nexclude = [\"b\"]\n",
            ),
            ("a/Cargo.toml", "[package]\nname = \"a\"\n"),
            ("a/src/lib.rs", ""),
            ("a/src/known.rs", ""),
            ("a/src/log/mod.rs", ""),
            ("a/src/log/leader.rs", ""),
            ("a/tests/it/main.rs", ""),
            ("a/tests/solo.rs", ""),
            ("a/tests/common/mod.rs", ""),
            ("b/Cargo.toml", "[package]\nname = \"b-pkg\"\n"),
            (DOC, MAP),
        ];
        let d = tree(&files);
        assert_eq!(check(d.path()).unwrap(), Vec::<String>::new());

        // A new module, a new nested file, a new test binary, a module only named outside
        // the code map, and a module of a crate whose section is missing.
        let d = tree(&files);
        for (p, t) in [
            ("a/src/extra.rs", ""),
            ("a/src/log/cleaner.rs", ""),
            ("a/tests/known.rs", ""),
            ("b/src/x.rs", ""),
        ] {
            std::fs::create_dir_all(d.path().join(p).parent().unwrap()).unwrap();
            std::fs::write(d.path().join(p), t).unwrap();
        }
        let doc = MAP.replace("### `b`", "### `b-pkg`, by its package name");
        std::fs::write(d.path().join(DOC), doc).unwrap();
        let found = check(d.path()).unwrap();
        assert_eq!(found.len(), 4, "{found:#?}");
        assert!(found[0].contains("`a/src/extra.rs`"));
        assert!(found[1].contains("`a/src/log/cleaner.rs`"));
        assert!(found[2].contains("`a/tests/known.rs`"));
        assert!(found[3].contains("crate `b` has no"));
    }

    #[test]
    fn an_unnamed_crate_fails() {
        let d = tree(&[
            ("Cargo.toml", "[workspace]\nmembers = [\"a\", \"c\"]\n"),
            ("a/Cargo.toml", "[package]\nname = \"a\"\n"),
            ("c/Cargo.toml", "[package]\nname = \"c\"\n"),
            (DOC, MAP),
        ]);
        assert_eq!(
            check(d.path()).unwrap(),
            vec!["crate `c` is not named in the code map".to_string()]
        );
    }
}
