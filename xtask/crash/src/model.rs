//! Persistence models: which on-disk states a power cut may leave, given the operations
//! of a trace up to the cut (`docs/kafka-behaviour.md#crash-persistence-model`).
//!
//! The shadow file system ([`Shadow`]) replays a trace and keeps, for every file
//! (inode), its **current** content (what the page cache holds) and its **synced**
//! content (what the last fsync made durable), and for the directory its current
//! entries, its durable entries (as of the last directory fsync) and the creations,
//! renames and unlinks since then. A [`Model`] turns that into crash states.

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::Rng;

use super::trace::Op;

/// File-system page size: the granularity at which unsynced writes survive.
pub const PAGE: usize = 4096;

/// A persistence model (`--model`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// The weakest behaviour POSIX allows and the model (ext4 `data=writeback`,
    /// or any file system without ordering guarantees between data and metadata): data
    /// and lengths synced before the cut are durable; each 4 KiB page written after the
    /// file's last sync holds its synced or its current bytes, independently; the length
    /// is the synced or the current one, so an extended length may show zeros; every
    /// creation, rename and unlink since the last directory fsync is durable or not,
    /// independently of the others.
    Weak,
    /// ext4 `data=ordered` (its default) and XFS-like journaling: as [`Model::Weak`], but
    /// a length extension is committed only after the data below it (an extended length
    /// never shows zeros that were not written), and directory operations are journaled
    /// in order (a prefix of those since the last directory fsync is durable).
    Ordered,
}

impl Model {
    /// Parses a `--model` value.
    pub fn parse(s: &str) -> Option<Model> {
        match s {
            "weak" => Some(Model::Weak),
            "ordered" => Some(Model::Ordered),
            _ => None,
        }
    }

    /// The `--model` name.
    pub fn name(self) -> &'static str {
        match self {
            Model::Weak => "weak",
            Model::Ordered => "ordered",
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Node {
    cur: Vec<u8>,
    synced: Vec<u8>,
}

#[derive(Clone, Debug)]
enum DirOp {
    Link(String, usize),
    Rename(String, String),
    Unlink(String),
}

/// The shadow file system of one directory.
#[derive(Clone, Debug, Default)]
pub struct Shadow {
    nodes: Vec<Node>,
    cur: BTreeMap<String, usize>,
    durable: BTreeMap<String, usize>,
    pending: Vec<DirOp>,
}

/// A crash state: file name → content.
pub type State = BTreeMap<String, Vec<u8>>;

impl Shadow {
    /// A directory holding `files`, all durable.
    pub fn with_files(files: &State) -> Shadow {
        let mut s = Shadow::default();
        for (name, bytes) in files {
            let id = s.nodes.len();
            s.nodes.push(Node {
                cur: bytes.clone(),
                synced: bytes.clone(),
            });
            s.cur.insert(name.clone(), id);
            s.durable.insert(name.clone(), id);
        }
        s
    }

    fn node(&mut self, name: &str) -> Option<&mut Node> {
        let id = *self.cur.get(name)?;
        Some(&mut self.nodes[id])
    }

    /// Applies one traced operation.
    pub fn apply(&mut self, op: &Op) {
        match op {
            Op::Create(n) => {
                let id = self.nodes.len();
                self.nodes.push(Node::default());
                self.cur.insert(n.clone(), id);
                self.pending.push(DirOp::Link(n.clone(), id));
            }
            Op::Write(n, pos, data) => {
                if let Some(node) = self.node(n) {
                    let end = *pos as usize + data.len();
                    if node.cur.len() < end {
                        node.cur.resize(end, 0);
                    }
                    node.cur[*pos as usize..end].copy_from_slice(data);
                }
            }
            Op::SetLen(n, len) => {
                if let Some(node) = self.node(n) {
                    node.cur.resize(*len as usize, 0);
                }
            }
            Op::Capture(n, data) => {
                if let Some(node) = self.node(n) {
                    node.cur.clone_from(data);
                }
            }
            Op::Sync(n) => {
                if let Some(node) = self.node(n) {
                    node.synced = node.cur.clone();
                }
            }
            Op::Rename(f, t) => {
                if let Some(id) = self.cur.remove(f) {
                    self.cur.insert(t.clone(), id);
                    self.pending.push(DirOp::Rename(f.clone(), t.clone()));
                }
            }
            Op::Remove(n) => {
                if self.cur.remove(n).is_some() {
                    self.pending.push(DirOp::Unlink(n.clone()));
                }
            }
            Op::SyncDir => self.sync_dir(false),
            Op::SyncParentDir => self.sync_dir(true),
        }
    }

    /// A directory fsync: of the log directory, or of its parent (`parent`, the names
    /// with the [`PARENT`](super::trace::PARENT) prefix). Its creations, renames and
    /// unlinks become durable; the other directory's stay pending.
    fn sync_dir(&mut self, parent: bool) {
        let ours = |n: &str| n.starts_with(super::trace::PARENT) == parent;
        self.durable.retain(|n, _| !ours(n));
        for (n, &id) in &self.cur {
            if ours(n) {
                self.durable.insert(n.clone(), id);
            }
        }
        self.pending.retain(|op| {
            let n = match op {
                DirOp::Link(n, _) | DirOp::Rename(n, _) | DirOp::Unlink(n) => n,
            };
            !ours(n)
        });
    }

    /// Whether anything is not yet durable.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
            || self
                .cur
                .values()
                .any(|&id| self.nodes[id].cur != self.nodes[id].synced)
    }

    /// One crash state the model allows. `keep` in `[0, 1]` is the probability that an
    /// unsynced page or directory operation survives (0: nothing unsynced survives, 1:
    /// everything does).
    pub fn crash(&self, model: Model, keep: f64, rng: &mut StdRng) -> State {
        let mut names = self.durable.clone();
        let prefix = match model {
            Model::Ordered => (0..=self.pending.len())
                .find(|_| !rng.gen_bool(keep))
                .unwrap_or(self.pending.len()),
            Model::Weak => self.pending.len(),
        };
        for (i, op) in self.pending.iter().enumerate() {
            let applied = match model {
                Model::Ordered => i < prefix,
                Model::Weak => rng.gen_bool(keep),
            };
            if !applied {
                continue;
            }
            match op {
                DirOp::Link(n, id) => {
                    names.insert(n.clone(), *id);
                }
                DirOp::Rename(f, t) => {
                    if let Some(id) = names.remove(f) {
                        names.insert(t.clone(), id);
                    }
                }
                DirOp::Unlink(n) => {
                    names.remove(n);
                }
            }
        }
        names
            .into_iter()
            .map(|(n, id)| (n, self.file_content(&self.nodes[id], model, keep, rng)))
            .collect()
    }

    fn file_content(&self, node: &Node, model: Model, keep: f64, rng: &mut StdRng) -> Vec<u8> {
        if node.cur == node.synced {
            return node.cur.clone();
        }
        let (s, c) = (&node.synced, &node.cur);
        let len = if rng.gen_bool(keep) { c.len() } else { s.len() };
        let mut out = vec![0u8; len];
        let pages = len.div_ceil(PAGE);
        for p in 0..pages {
            let (lo, hi) = (p * PAGE, ((p + 1) * PAGE).min(len));
            let same = s.get(lo..hi.min(s.len())) == c.get(lo..hi.min(c.len()));
            let from_cur = if same {
                true
            } else if model == Model::Ordered && lo >= s.len() {
                // data=ordered: an extension's data is written before its length.
                true
            } else {
                rng.gen_bool(keep)
            };
            let src = if from_cur { c } else { s };
            if lo < src.len() {
                let h = hi.min(src.len());
                out[lo..h].copy_from_slice(&src[lo..h]);
            }
        }
        out
    }
}
