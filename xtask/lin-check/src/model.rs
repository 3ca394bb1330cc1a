//! The sequential model of a [`segment::Log`]: which batches exist (one record each), the
//! log start and end offsets, the high watermark, and what follows from them — the
//! transactions (ongoing, committed, aborted) read off the batches, the last stable
//! offset, and what each isolation level may serve
//! (`docs/kafka-behaviour.md#fetch-isolation`,
//! `docs/kafka-behaviour.md#fetch-aborted-transactions`).
//!
//! Responses that are not a function of the state are checked for consistency:
//!
//! * a read answers a non-empty prefix of the model's batches from the one holding the
//!   offset (a `max_bytes` cut or a segment end may stop it anywhere after the first),
//!   each batch the model's (same offset, producer, kind and unique timestamp), all
//!   below the isolation's bound; empty exactly when the offset is at or above the bound;
//! * the aborted list of a `read_committed` fetch holds an entry for the transaction of
//!   every returned batch of an aborted transaction, and names no transaction the log
//!   does not hold (Kafka's exact upper bound comes from index entries, which the model
//!   does not follow);
//! * the last stable offset: Kafka's `unreplicatedTxns` (transactions decided but not
//!   yet passed by the high watermark) depend on the high watermark's history and on
//!   producer-state rebuilds, so with a manual high watermark any decided transaction may
//!   still hold the LSO down; an empty `read_committed` answer or an LSO value is then
//!   accepted down to such a transaction's first offset. Nothing at or above the LSO of
//!   the ongoing transactions is ever accepted;
//! * follower appends (`append`, in histories without `truncate_to`, so that the offset
//!   a follower read is never above the log end): appended exactly at the log end,
//!   refused exactly below it;
//! * appends: the offsets must be the log end's (nothing is reused or skipped); a
//!   rejection by the producer rules, or a duplicate, changes nothing (the model does not
//!   replay Kafka's sequence rules: `cargo xtask kafka`'s k4-leader compares them with
//!   Kafka).

use segment::FetchIsolation;

use crate::wgl;

/// What a batch of the workload is (every batch holds one record).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// No producer id.
    Plain,
    /// An idempotent producer's batch.
    Idempotent,
    /// A transactional producer's data batch.
    Txn,
    /// A COMMIT marker (coordinator).
    Commit,
    /// An ABORT marker (coordinator).
    Abort,
}

/// An operation on the log.
#[derive(Clone, Debug)]
pub enum Op {
    /// `append_as_leader` of one single-record batch with the unique timestamp id `id`.
    Append {
        /// The producer id (−1 for plain batches).
        pid: i64,
        /// The batch's kind.
        kind: Kind,
        /// The batch's identity (its timestamp).
        id: i64,
    },
    /// `append` (the follower path) of one plain single-record batch at `offset` (the log
    /// end the follower read before the call).
    Follow {
        /// The batch's base offset.
        offset: i64,
        /// The batch's identity (its timestamp).
        id: i64,
    },
    /// `read_with` (or `read_region` when `region`) at `offset`.
    Read {
        /// The fetch offset.
        offset: i64,
        /// The fetch size.
        max_bytes: u64,
        /// The isolation level.
        iso: FetchIsolation,
        /// Through `read_region` and the region's bytes.
        region: bool,
    },
    /// `update_high_watermark`.
    UpdateHw(i64),
    /// `high_watermark()`.
    HighWatermark,
    /// `last_stable_offset()`.
    LastStable,
    /// `producer_state()` (a clone under the producer-state lock: it widens windows).
    ProducerState,
    /// `truncate_to`.
    TruncateTo(i64),
    /// `delete_records`.
    DeleteRecords(i64),
    /// `delete_old_segments` (retention; only the log-start rule deletes here).
    Retention,
    /// `roll(None)`.
    Roll,
    /// `flush()`.
    Flush,
    /// `close()` then `open` with a manual high watermark of `hw` (a barrier).
    Reopen {
        /// The high watermark handed to the new open (manual histories).
        hw: i64,
    },
}

/// A batch as a read returned it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// Its base offset.
    pub offset: i64,
    /// Its last offset (the same: one record).
    pub last: i64,
    /// Its timestamp id.
    pub id: i64,
    /// Its producer id.
    pub pid: i64,
    /// A control batch.
    pub control: bool,
    /// A transactional batch.
    pub txn: bool,
}

/// A response.
#[derive(Clone, Debug)]
pub enum Ret {
    /// Appended at `first` (`dup`: a retry answered with the original offsets).
    Appended {
        /// The first offset.
        first: i64,
        /// A duplicate.
        dup: bool,
    },
    /// Refused by Kafka's rules (the error's name).
    Rejected(String),
    /// A read's batches and its aborted list (producer id, first offset).
    Read {
        /// The complete batches returned.
        batches: Vec<Seen>,
        /// `Some` for `TxnCommitted`.
        aborted: Option<Vec<(i64, i64)>>,
    },
    /// A region whose bytes a later truncation cut (documented `UnexpectedEof`).
    RegionGone,
    /// An offset answer.
    Value(i64),
    /// A boolean answer (`truncate_to`).
    Bool(bool),
    /// Done (nothing to check).
    Unit,
    /// The reopened log's start and end offsets.
    Reopened {
        /// Log start offset.
        start: i64,
        /// Log end offset.
        end: i64,
    },
    /// `OffsetOutOfRange`.
    OutOfRange,
    /// Any other error (never allowed).
    Error(String),
}

/// One batch of the model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Batch {
    offset: i64,
    id: i64,
    pid: i64,
    kind: Kind,
}

/// The model's state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// Every batch below the end, also those below the log start (the producer state
    /// was built from them), in offset order, contiguous.
    batches: Vec<Batch>,
    start: i64,
    end: i64,
    /// The manual high watermark (ignored when the high watermark follows the end).
    hw: i64,
}

/// A transaction as the batches describe it.
struct Txn {
    pid: i64,
    first: i64,
    /// The marker's offset and whether it aborts; `None` while ongoing.
    end: Option<(i64, bool)>,
}

/// The log model: `manual` when the high watermark is the caller's.
pub struct LogModel {
    /// The history's log was opened with `manual_high_watermark`.
    pub manual: bool,
}

impl State {
    fn txns(&self) -> Vec<Txn> {
        let mut out: Vec<Txn> = Vec::new();
        let mut ongoing: Vec<(i64, usize)> = Vec::new();
        for b in &self.batches {
            match b.kind {
                Kind::Txn => {
                    if !ongoing.iter().any(|(p, _)| *p == b.pid) {
                        ongoing.push((b.pid, out.len()));
                        out.push(Txn {
                            pid: b.pid,
                            first: b.offset,
                            end: None,
                        });
                    }
                }
                Kind::Commit | Kind::Abort => {
                    let abort = b.kind == Kind::Abort;
                    if let Some(k) = ongoing.iter().position(|(p, _)| *p == b.pid) {
                        let (_, i) = ongoing.swap_remove(k);
                        out[i].end = Some((b.offset, abort));
                    } else {
                        out.push(Txn {
                            pid: b.pid,
                            first: b.offset,
                            end: Some((b.offset, abort)),
                        });
                    }
                }
                Kind::Plain | Kind::Idempotent => {}
            }
        }
        out
    }
}

impl LogModel {
    fn hw(&self, s: &State) -> i64 {
        if self.manual {
            s.hw
        } else {
            s.end
        }
    }

    /// The last stable offset of the ongoing transactions (the highest Kafka may answer),
    /// and the lowest it may answer (see the module docs).
    ///
    /// An ongoing transaction that began below the log start is known to the producer
    /// state only as far as its rebuild replays it: from a segment at or below the log
    /// start (the log start, once clamped) or, once retention removed that segment, from
    /// its first batch at or after the log start (or not at all when it has none). Its
    /// LSO lies between the two.
    fn lso_bounds(&self, s: &State, txns: &[Txn]) -> (i64, i64) {
        let hw = self.hw(s);
        let clamp = |f: i64| f.max(s.start).min(hw);
        let mut upper = hw;
        let mut lower = hw;
        for t in txns.iter().filter(|t| t.end.is_none()) {
            if t.first >= s.start {
                upper = upper.min(clamp(t.first));
                lower = lower.min(clamp(t.first));
                continue;
            }
            lower = lower.min(clamp(s.start));
            let replayed = s
                .batches
                .iter()
                .find(|b| b.offset >= s.start && b.pid == t.pid && b.kind == Kind::Txn);
            if let Some(b) = replayed {
                upper = upper.min(clamp(b.offset));
            }
        }
        if self.manual {
            lower = txns
                .iter()
                .filter(|t| t.end.is_some())
                .map(|t| clamp(t.first))
                .fold(lower, i64::min);
        }
        (lower, upper)
    }

    fn clamp_hw(s: &State, hw: i64) -> i64 {
        if hw < s.start {
            s.start
        } else if hw >= s.end {
            s.end
        } else {
            hw
        }
    }

    fn read_ok(
        &self,
        s: &State,
        offset: i64,
        iso: FetchIsolation,
        batches: &[Seen],
        aborted: &Option<Vec<(i64, i64)>>,
    ) -> bool {
        let txns = s.txns();
        let (lso_lower, lso_upper) = self.lso_bounds(s, &txns);
        let (bound, lower) = match iso {
            FetchIsolation::LogEnd => (s.end, s.end),
            FetchIsolation::HighWatermark => {
                let h = self.hw(s).min(s.end);
                (h, h)
            }
            FetchIsolation::TxnCommitted => (lso_upper, lso_lower),
        };
        let txn = iso == FetchIsolation::TxnCommitted;
        if txn != aborted.is_some() {
            return false;
        }
        if batches.is_empty() {
            return offset >= lower;
        }
        if offset >= bound {
            return false;
        }
        let Some(base) = s.batches.first().map(|b| b.offset) else {
            return false;
        };
        for (k, seen) in batches.iter().enumerate() {
            let want = offset + k as i64;
            if want >= bound || want < base {
                return false;
            }
            let Some(b) = s.batches.get((want - base) as usize) else {
                return false;
            };
            let control = matches!(b.kind, Kind::Commit | Kind::Abort);
            let txn = control || b.kind == Kind::Txn;
            if seen.offset != b.offset
                || seen.last != b.offset
                || seen.id != b.id
                || seen.pid != b.pid
                || seen.control != control
                || seen.txn != txn
            {
                return false;
            }
        }
        let Some(list) = aborted else { return true };
        // Every entry names a transaction of the log (ongoing ones too: an entry may be
        // written before the marker's offset is published). Its first offset may be
        // later than the transaction's first batch: a producer state rebuilt from the
        // segments after retention starts the transaction at the first one it replays.
        let within = |t: &Txn, f: i64| t.first <= f && t.end.is_none_or(|(m, _)| f <= m);
        if !list
            .iter()
            .all(|(pid, f)| txns.iter().any(|t| t.pid == *pid && within(t, *f)))
        {
            return false;
        }
        // Every returned batch of an aborted transaction is covered by an entry of its
        // producer that starts at or before it.
        batches.iter().filter(|b| b.txn && !b.control).all(|b| {
            match txns.iter().find(|t| {
                t.pid == b.pid && t.first <= b.offset && t.end.is_some_and(|(m, _)| m > b.offset)
            }) {
                Some(t) if t.end.is_some_and(|(_, abort)| abort) => list
                    .iter()
                    .any(|(pid, f)| *pid == t.pid && within(t, *f) && *f <= b.offset),
                _ => true,
            }
        })
    }
}

impl wgl::Model for LogModel {
    type State = State;
    type Op = Op;
    type Ret = Ret;

    fn init(&self) -> State {
        State {
            batches: Vec::new(),
            start: 0,
            end: 0,
            hw: 0,
        }
    }

    fn step(&self, s: &State, op: &Op, ret: &Ret) -> Option<State> {
        let same = |ok: bool| ok.then(|| s.clone());
        match (op, ret) {
            (Op::Append { pid, kind, id }, Ret::Appended { first, dup: false }) => {
                if *first != s.end {
                    return None;
                }
                let mut n = s.clone();
                n.batches.push(Batch {
                    offset: *first,
                    id: *id,
                    pid: *pid,
                    kind: *kind,
                });
                n.end += 1;
                Some(n)
            }
            (Op::Append { .. }, Ret::Appended { dup: true, .. } | Ret::Rejected(_)) => {
                Some(s.clone())
            }
            (Op::Follow { offset, id }, Ret::Appended { first, dup: false }) => {
                if *first != *offset || *offset != s.end {
                    return None;
                }
                let mut n = s.clone();
                n.batches.push(Batch {
                    offset: *offset,
                    id: *id,
                    pid: -1,
                    kind: Kind::Plain,
                });
                n.end += 1;
                Some(n)
            }
            // Below the log end: refused (`NonMonotonicOffset`), nothing appended.
            (Op::Follow { offset, .. }, Ret::Rejected(_)) => same(*offset < s.end),
            (
                Op::Read {
                    offset,
                    iso,
                    region,
                    ..
                },
                r,
            ) => match r {
                Ret::OutOfRange => same(*offset < s.start || *offset > s.end),
                Ret::Read { batches, aborted } => same(
                    *offset >= s.start
                        && *offset <= s.end
                        && self.read_ok(s, *offset, *iso, batches, aborted),
                ),
                Ret::RegionGone => same(*region),
                _ => None,
            },
            (Op::UpdateHw(h), Ret::Value(v)) => {
                let c = Self::clamp_hw(s, *h);
                if !self.manual || *v != c {
                    return None;
                }
                let mut n = s.clone();
                n.hw = c;
                Some(n)
            }
            (Op::HighWatermark, Ret::Value(v)) => same(*v == self.hw(s)),
            (Op::LastStable, Ret::Value(v)) => {
                let (lo, hi) = self.lso_bounds(s, &s.txns());
                same(lo <= *v && *v <= hi)
            }
            (Op::ProducerState | Op::Retention | Op::Roll | Op::Flush, Ret::Unit) => {
                Some(s.clone())
            }
            (Op::TruncateTo(o), Ret::Bool(b)) => {
                if *o >= s.end {
                    return same(!*b);
                }
                if !*b {
                    return None;
                }
                let mut n = s.clone();
                if *o < s.start {
                    n.batches.clear();
                    n.start = *o;
                    n.end = *o;
                    n.hw = *o;
                } else {
                    n.batches.retain(|b| b.offset < *o);
                    n.end = *o;
                    n.hw = n.hw.min(*o);
                }
                Some(n)
            }
            (Op::DeleteRecords(o), r) => {
                let hw = self.hw(s);
                if *o > s.end || *o > hw {
                    return same(matches!(r, Ret::OutOfRange));
                }
                let Ret::Value(v) = r else { return None };
                let mut n = s.clone();
                n.start = n.start.max(*o);
                n.hw = n.hw.max(n.start);
                (*v == n.start).then_some(n)
            }
            (Op::Reopen { hw }, Ret::Reopened { start, end }) => {
                if *start != s.start || *end != s.end {
                    return None;
                }
                let mut n = s.clone();
                n.hw = Self::clamp_hw(s, *hw);
                Some(n)
            }
            _ => None,
        }
    }
}
