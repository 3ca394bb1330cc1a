//! `cargo xtask lint`'s check of cross-references into the repository's documents: every
//! `docs/<name>.md#<anchor>` (or `<name>.md#<anchor>` in a Markdown link) cited anywhere
//! in the sources must name an anchor that document defines, either an explicit
//! `<a id="…">` or a heading's slug, and no source may cite a section by its number
//! ("kafka-behaviour §7.5"), which silently points elsewhere once the sections move.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Extensions of the files whose text is checked.
const CHECKED: &[&str] = &["rs", "md", "toml", "sh", "java", "xml", "yml", "yaml"];

/// This file, which is not checked.
const SELF: &str = "xtask/lint/src/anchors.rs";

/// One citation that does not resolve.
#[derive(Debug, PartialEq, Eq)]
pub struct Broken {
    /// The citing file, relative to the root.
    pub file: PathBuf,
    /// 1-based line of the citation.
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

/// Checks every source file under `root` (skipping `target` directories and dot
/// directories); returns the citations that do not resolve.
pub fn check(root: &Path) -> Result<Vec<Broken>, String> {
    let mut files = Vec::new();
    walk(root, &mut files)?;
    let mut anchors: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut broken = Vec::new();
    for f in &files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(_) => continue, // not UTF-8: no citations to check
        };
        let rel = f.strip_prefix(root).unwrap_or(f).to_path_buf();
        if rel == Path::new(SELF) {
            continue; // its docs and tests cite broken anchors on purpose
        }
        for (i, line) in text.lines().enumerate() {
            for (doc, anchor) in citations(line) {
                let target = resolve(root, f, &doc);
                let known = match anchors.get(&target) {
                    Some(k) => k,
                    None => {
                        let Ok(t) = std::fs::read_to_string(&target) else {
                            broken.push(Broken {
                                file: rel.clone(),
                                line: i + 1,
                                what: format!("cites {doc}#{anchor}, but {doc} does not exist"),
                            });
                            continue;
                        };
                        anchors.entry(target.clone()).or_insert(defined(&t))
                    }
                };
                if !known.contains(&anchor) {
                    broken.push(Broken {
                        file: rel.clone(),
                        line: i + 1,
                        what: format!("cites {doc}#{anchor}, which {doc} does not define"),
                    });
                }
            }
            if let Some(n) = numbered_citation(line) {
                broken.push(Broken {
                    file: rel.clone(),
                    line: i + 1,
                    what: format!("cites a section by number ({n}); cite its named anchor instead"),
                });
            }
        }
    }
    Ok(broken)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for e in entries {
        let e = e.map_err(|e| e.to_string())?;
        let path = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        let ft = e.file_type().map_err(|e| e.to_string())?;
        if ft.is_dir() {
            if name == "target" || name.starts_with('.') || name == "node_modules" {
                continue;
            }
            walk(&path, out)?;
        } else if ft.is_file()
            && path
                .extension()
                .is_some_and(|x| CHECKED.iter().any(|c| x == *c))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// `(document, anchor)` for each `<name>.md#<anchor>` in `line`.
fn citations(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(at) = line.get(from..).and_then(|r| r.find(".md#")) {
        let at = from + at;
        let is_path = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'/' | b'.');
        let mut start = at;
        while start > 0 && bytes.get(start - 1).copied().is_some_and(is_path) {
            start -= 1;
        }
        let anchor_start = at + 4;
        let mut end = anchor_start;
        while bytes
            .get(end)
            .copied()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        {
            end += 1;
        }
        let doc = line.get(start..at + 3).unwrap_or_default();
        let anchor = line.get(anchor_start..end).unwrap_or_default();
        if !doc.is_empty() && !anchor.is_empty() && !doc.contains("://") {
            out.push((doc.to_string(), anchor.to_string()));
        }
        from = end.max(at + 4);
    }
    out
}

/// The document a citation in `citing` names: `docs/…` from the root; any other path
/// relative to the citing file's directory first, then the root's `docs/`.
fn resolve(root: &Path, citing: &Path, doc: &str) -> PathBuf {
    let doc = doc.trim_start_matches("./");
    if doc.starts_with("docs/") {
        return root.join(doc);
    }
    let beside = citing.parent().unwrap_or(root).join(doc);
    if beside.exists() {
        return beside;
    }
    let at_root = root.join(doc);
    if at_root.exists() {
        return at_root;
    }
    root.join("docs").join(doc)
}

/// The anchors a Markdown document defines: `<a id="…">` and GitHub's heading slugs.
fn defined(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(i) = rest.find("<a id=\"") {
            let after = rest.get(i + 7..).unwrap_or_default();
            if let Some(j) = after.find('"') {
                out.insert(after.get(..j).unwrap_or_default().to_string());
            }
            rest = after;
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            let title = trimmed.trim_start_matches('#').trim();
            out.insert(slug(title));
        }
    }
    out
}

/// GitHub's heading slug: lower case, spaces to `-`, punctuation other than `-` and `_`
/// dropped.
fn slug(title: &str) -> String {
    title
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c.to_lowercase().next().unwrap_or(c))
            } else if c == ' ' {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// A section cited by number: "§" followed by a digit, unless it is the visible text of
/// a Markdown link to an anchor (`[§7.5](#batch-iteration)`).
fn numbered_citation(line: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = line.get(from..).and_then(|r| r.find('§')) {
        let i = from + i;
        let after = line.get(i + '§'.len_utf8()..).unwrap_or_default();
        let num: String = after
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let linked = line.get(..i).is_some_and(|b| b.ends_with('['))
            && after.get(num.len()..).is_some_and(|r| r.starts_with("](#"));
        if !num.is_empty() && !linked {
            return Some(format!("§{num}"));
        }
        from = i + '§'.len_utf8();
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A temporary tree of `(path, text)` files (shared with the code-map check's tests).
    pub(crate) fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, t) in files {
            let p = dir.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        }
        dir
    }

    const DOC: &str = "# Title\n<a id=\"batch-iteration\"></a>\n### 7.5 Iterating batches\n";

    #[test]
    fn resolved_citations_pass() {
        let d = tree(&[
            ("docs/kafka-behaviour.md", DOC),
            (
                "a/src/lib.rs",
                "//! see docs/kafka-behaviour.md#batch-iteration.\n",
            ),
            (
                "docs/other.md",
                "[x](kafka-behaviour.md#title) and [§7.5](#batch-iteration)\n",
            ),
        ]);
        assert_eq!(check(d.path()).unwrap(), vec![]);
    }

    #[test]
    fn a_missing_anchor_a_missing_document_and_a_section_number_fail() {
        let d = tree(&[
            ("docs/kafka-behaviour.md", DOC),
            (
                "a/src/lib.rs",
                "//! docs/kafka-behaviour.md#batch-iterations\n//! docs/nope.md#x\n//! kafka-behaviour §7.5\n",
            ),
        ]);
        let found = check(d.path()).unwrap();
        let lines: Vec<usize> = found.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![1, 2, 3], "{found:?}");
        assert!(found[0].what.contains("does not define"));
        assert!(found[1].what.contains("does not exist"));
        assert!(found[2].what.contains("§7.5"));
    }

    #[test]
    fn the_real_tree_resolves() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .unwrap();
        let broken = check(root).unwrap();
        assert!(broken.is_empty(), "{broken:#?}");
    }

    #[test]
    fn target_directories_are_skipped() {
        let d = tree(&[("target/x.rs", "//! docs/nope.md#x\n")]);
        assert_eq!(check(d.path()).unwrap(), vec![]);
    }
}
