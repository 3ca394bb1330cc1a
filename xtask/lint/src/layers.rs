//! `cargo xtask lint`'s check of the import graph inside `segment/src`: no import cycle
//! between its top-level modules or between its files, and no import from a module up to
//! one of a higher layer of [`LAYERS`] (ARCHITECTURE.md, "Layers inside `segment`").
//!
//! An import is a `use crate::…`/`use super::…`/`use self::…` path or an inline
//! `crate::…`/`super::…` path outside comments, resolved to the longest module prefix that
//! is a file; paths relative to the importing module without `self::` (a `mod.rs`'s
//! re-exports of its own files) and `bin/` are left out. Test modules count too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers of `segment/src`'s top-level modules, bottom first: a module may import
/// its own layer and the ones below it. A new top-level module must be placed here.
pub const LAYERS: &[&[&str]] = &[
    &["record"],
    &["format"],
    &["error", "config"],
    &["names", "diag", "time", "fs"],
    &["lock", "checkpoint", "lazy", "region", "log_file"],
    &["scan"],
    &["producer"],
    &["segment", "segment_map", "deleter"],
    &["validate", "loader_plan"],
    &["leader"],
    &["clean"],
    &["tier"],
    &["log"],
    &["dump"],
];

/// The crate the check reads, relative to the root.
pub const SRC: &str = "segment/src";

/// The import graph of one crate's `src/`: file module paths and their imports.
#[derive(Debug, Default)]
pub struct Graph {
    /// file module path (`log/read`, `segment`, …) -> the file modules it imports.
    pub edges: BTreeMap<String, BTreeSet<String>>,
}

/// Every problem of the crate at `root/SRC`, one line each (empty when none).
pub fn check(root: &Path) -> Result<Vec<String>, String> {
    let graph = read(&root.join(SRC))?;
    Ok(problems(&graph))
}

/// The graph of the crate whose `src/` is `src`.
pub fn read(src: &Path) -> Result<Graph, String> {
    let mut files = Vec::new();
    walk(src, &mut files)?;
    let mut mods = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(src).map_err(|e| e.to_string())?;
        let mut parts: Vec<String> = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.first().is_some_and(|p| p == "bin") {
            continue;
        }
        if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
            parts.pop();
        }
        mods.insert(parts, f.clone());
    }
    let mut graph = Graph::default();
    for (module, file) in &mods {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let from = module.join("/");
        for path in import_paths(&strip_comments(&text)) {
            if let Some(to) = resolve(&mods, module, &path) {
                if to != *module {
                    graph
                        .edges
                        .entry(from.clone())
                        .or_default()
                        .insert(to.join("/"));
                }
            }
        }
        graph.edges.entry(from).or_default();
    }
    Ok(graph)
}

/// The cycles (modules and files) and back-up imports of `graph`, and the top-level
/// modules [`LAYERS`] does not place.
pub fn problems(graph: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    let top = |m: &str| m.split('/').next().unwrap_or("").to_string();
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, bs) in &graph.edges {
        if a.is_empty() {
            continue;
        }
        let entry = modules.entry(top(a)).or_default();
        for b in bs {
            if !b.is_empty() && top(b) != top(a) {
                entry.insert(top(b));
            }
        }
    }
    for scc in cycles(&modules) {
        out.push(format!("import cycle between modules: {}", scc.join(" ")));
    }
    let files: BTreeMap<String, BTreeSet<String>> = graph
        .edges
        .iter()
        .filter(|(a, _)| !a.is_empty())
        .map(|(a, bs)| {
            (
                a.clone(),
                bs.iter().filter(|b| !b.is_empty()).cloned().collect(),
            )
        })
        .collect();
    for scc in cycles(&files) {
        out.push(format!("import cycle between files: {}", scc.join(" ")));
    }
    let rank: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(move |m| (*m, i)))
        .collect();
    for m in modules.keys() {
        if !rank.contains_key(m.as_str()) {
            out.push(format!("module `{m}` has no layer: place it in xtask/lint/src/layers.rs's LAYERS and ARCHITECTURE.md"));
        }
    }
    for (a, bs) in &files {
        for b in bs {
            if let (Some(ra), Some(rb)) = (rank.get(top(a).as_str()), rank.get(top(b).as_str())) {
                if rb > ra {
                    out.push(format!("import up a layer: {a} -> {b}"));
                }
            }
        }
    }
    out
}

/// The strongly connected components of more than one node (Tarjan's algorithm).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn strong<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        let g = t.g;
        for w in g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                strong(t, w);
                let lw = t.low[w];
                let lv = t.low[v].min(lw);
                t.low.insert(v, lv);
            } else if t.on.contains(w) {
                let lv = t.low[v].min(t.index[w]);
                t.low.insert(v, lv);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            strong(&mut t, v);
        }
    }
    t.out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// `text` without block comments and `//` comments (doc comments included).
fn strip_comments(text: &str) -> String {
    let mut no_blocks = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        no_blocks.push_str(&rest[..i]);
        rest = match rest[i..].find("*/") {
            Some(j) => &rest[i + j + 2..],
            None => "",
        };
    }
    no_blocks.push_str(rest);
    no_blocks
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if l[..i].matches('"').count() % 2 == 0 => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths of `use` items (brace groups expanded) and the inline `crate::`/`super::`
/// paths of `text`.
fn import_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let word_at = |i: usize, w: &str| {
        text[i..].starts_with(w)
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
    };
    let mut i = 0;
    while i < text.len() {
        if word_at(i, "use ") {
            if let Some(end) = text[i..].find(';') {
                expand(text[i + 4..i + end].trim(), &mut out);
                i += end + 1;
                continue;
            }
        }
        if word_at(i, "crate::") || word_at(i, "super::") {
            let end = text[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(text.len(), |e| i + e);
            out.push(text[i..end].trim_end_matches(':').to_string());
            i = end;
            continue;
        }
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// Expands a use tree (`a::{b, c::{d, e}}`) into its paths.
fn expand(tree: &str, out: &mut Vec<String>) {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    match (tree.find("::{"), tree.ends_with('}')) {
        (Some(i), true) => {
            let prefix = &tree[..i];
            let inner = &tree[i + 3..tree.len() - 1];
            let mut depth = 0;
            let mut start = 0;
            let mut parts = Vec::new();
            for (j, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        parts.push(&inner[start..j]);
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            parts.push(&inner[start..]);
            for p in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
                if p == "self" {
                    out.push(prefix.to_string());
                } else {
                    expand(&format!("{prefix}::{p}"), out);
                }
            }
        }
        _ => out.push(tree),
    }
}

/// The file module that `path`, imported by `module`, names.
fn resolve(
    mods: &BTreeMap<Vec<String>, PathBuf>,
    module: &[String],
    path: &str,
) -> Option<Vec<String>> {
    let segs: Vec<&str> = path
        .split("::")
        .map(|s| s.split(" as ").next().unwrap_or(s).trim())
        .collect();
    let mut full: Vec<String> = match segs.first()? {
        &"crate" => Vec::new(),
        &"super" | &"self" => module.to_vec(),
        _ => return None,
    };
    let mut rest = if segs[0] == "crate" {
        &segs[1..]
    } else {
        &segs[..]
    };
    while let Some((&first, tail)) = rest.split_first() {
        match first {
            "super" => {
                full.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = tail;
    }
    full.extend(rest.iter().map(|s| s.to_string()));
    (0..=full.len())
        .rev()
        .map(|k| full[..k].to_vec())
        .find(|p| mods.contains_key(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> Graph {
        let mut g = Graph::default();
        for (a, b) in edges {
            g.edges
                .entry(a.to_string())
                .or_default()
                .insert(b.to_string());
        }
        g
    }

    #[test]
    fn a_cycle_and_an_import_up_are_found() {
        let g = graph(&[("record/iter", "format"), ("format", "record")]);
        let p = problems(&g);
        assert!(
            p.contains(&"import cycle between modules: format record".to_string()),
            "{p:?}"
        );
        assert!(
            p.contains(&"import up a layer: record/iter -> format".to_string()),
            "{p:?}"
        );
    }

    #[test]
    fn an_unplaced_module_is_named() {
        let p = problems(&graph(&[("remote", "log")]));
        assert!(
            p.iter()
                .any(|l| l.starts_with("module `remote` has no layer")),
            "{p:?}"
        );
    }

    #[test]
    fn use_trees_and_inline_paths_are_read() {
        let text = "use crate::a::{b, c::{d, self}};\n// use crate::x;\nfn f() { super::y::z(); }";
        let paths = import_paths(&strip_comments(text));
        assert_eq!(
            paths,
            [
                "crate::a::b",
                "crate::a::c::d",
                "crate::a::c",
                "super::y::z"
            ]
        );
    }

    #[test]
    fn the_real_tree_has_no_problem() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .unwrap();
        let p = check(root).unwrap();
        assert!(p.is_empty(), "{p:#?}");
    }
}
