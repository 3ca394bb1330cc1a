//! A compact Wing–Gong linearizability checker with Lowe's memoisation, as Porcupine runs
//! it: the calls and returns of a history in time order form a doubly linked list; the
//! search linearizes the first call it can (the model accepts its response in the current
//! state), lifts it and its return out of the list, and backtracks when it meets a return
//! whose call is not linearized yet. A (linearized set, model state) pair already seen is
//! not explored twice, which is what keeps histories of a few hundred operations with
//! many concurrent reads tractable (the measured reason is in the crate docs).

use std::collections::HashSet;
use std::hash::Hash;

/// A sequential specification. `step` answers whether `ret` is a response the object may
/// give to `op` in state `s`, and the state after it; a response the model allows in
/// several ways (a read cut short by `max_bytes`) is checked for consistency, not equality.
pub trait Model {
    /// The model's state (hashed for the memo).
    type State: Clone + Eq + Hash;
    /// An operation's invocation.
    type Op;
    /// An operation's response.
    type Ret;
    /// The state before the first operation.
    fn init(&self) -> Self::State;
    /// The state after `op` answered `ret` in `s`, or `None` if `s` cannot answer so.
    fn step(&self, s: &Self::State, op: &Self::Op, ret: &Self::Ret) -> Option<Self::State>;
}

/// One completed operation of a history: its invocation and response times on the
/// history's logical clock (every time distinct), what was asked and what came back.
#[derive(Clone, Debug)]
pub struct Entry<O, R> {
    /// The logical time of the invocation.
    pub call: u64,
    /// The logical time of the response (after `call`).
    pub ret: u64,
    /// The thread that ran it.
    pub thread: usize,
    /// The invocation.
    pub op: O,
    /// The response.
    pub out: R,
}

/// The verdict on one history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A linearization exists.
    Linearizable,
    /// None exists: `deepest` operations were the longest prefix linearized, and
    /// `stuck` the index of the operation whose return no linearization could pass.
    Violation {
        /// The most operations any branch linearized.
        deepest: usize,
        /// The entry (index into the history) whose return blocked the deepest branch.
        stuck: usize,
    },
    /// The search gave up after its step budget.
    Undecided,
}

/// The result of [`check`]: the verdict and the search's size.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Linearizable, a violation, or undecided.
    pub verdict: Verdict,
    /// Model steps tried (calls offered to the model).
    pub steps: u64,
}

const HEAD: usize = usize::MAX - 1;

/// Checks `history` against `model` (Wing–Gong with Lowe's memo when `memo` is set; without
/// it the plain backtracking search, kept to measure what the memo buys). Gives up after
/// `budget` model steps.
pub fn check<M: Model>(
    model: &M,
    history: &[Entry<M::Op, M::Ret>],
    memo: bool,
    budget: u64,
) -> Outcome {
    let n = history.len();
    if n == 0 {
        return Outcome {
            verdict: Verdict::Linearizable,
            steps: 0,
        };
    }
    // Nodes 0..2n: node 2i is the call of entry i, 2i+1 its return; sorted by time.
    let mut events: Vec<(u64, usize)> = Vec::with_capacity(2 * n);
    for (i, e) in history.iter().enumerate() {
        events.push((e.call, 2 * i));
        events.push((e.ret, 2 * i + 1));
    }
    events.sort_unstable();
    let end = 2 * n;
    let mut next = vec![end; 2 * n + 1];
    let mut prev = vec![HEAD; 2 * n + 1];
    let mut head_next = events[0].1;
    let mut last = HEAD;
    for &(_, node) in &events {
        if last == HEAD {
            head_next = node;
        } else {
            next[last] = node;
        }
        prev[node] = last;
        last = node;
    }
    next[last] = end;

    // Linked-list helpers over (head_next, next, prev); HEAD stands for the list head.
    fn remove(x: usize, head_next: &mut usize, next: &mut [usize], prev: &mut [usize]) {
        let (p, nx) = (prev[x], next[x]);
        if p == HEAD {
            *head_next = nx;
        } else {
            next[p] = nx;
        }
        if nx < next.len() - 1 {
            prev[nx] = p;
        }
    }
    fn restore(x: usize, head_next: &mut usize, next: &mut [usize], prev: &mut [usize]) {
        let (p, nx) = (prev[x], next[x]);
        if p == HEAD {
            *head_next = x;
        } else {
            next[p] = x;
        }
        if nx < next.len() - 1 {
            prev[nx] = x;
        }
    }

    let words = n.div_ceil(64);
    let mut linearized = vec![0u64; words];
    let mut state = model.init();
    let mut cache: HashSet<(Vec<u64>, M::State)> = HashSet::new();
    let mut calls: Vec<(usize, M::State)> = Vec::new();
    let mut steps = 0u64;
    let mut deepest = 0usize;
    let mut stuck = 0usize;
    let mut entry = head_next;
    while head_next != end {
        if entry.is_multiple_of(2) {
            let i = entry / 2;
            let e = &history[i];
            steps += 1;
            if steps > budget {
                return Outcome {
                    verdict: Verdict::Undecided,
                    steps,
                };
            }
            let accepted = model.step(&state, &e.op, &e.out).and_then(|s2| {
                if !memo {
                    return Some(s2);
                }
                let mut l2 = linearized.clone();
                l2[i / 64] |= 1 << (i % 64);
                cache.insert((l2, s2.clone())).then_some(s2)
            });
            if let Some(s2) = accepted {
                calls.push((entry, std::mem::replace(&mut state, s2)));
                linearized[i / 64] |= 1 << (i % 64);
                remove(entry, &mut head_next, &mut next, &mut prev);
                remove(entry + 1, &mut head_next, &mut next, &mut prev);
                if calls.len() > deepest {
                    deepest = calls.len();
                }
                entry = head_next;
            } else {
                entry = next[entry];
            }
        } else {
            if calls.len() == deepest {
                stuck = entry / 2;
            }
            let Some((c, s)) = calls.pop() else {
                return Outcome {
                    verdict: Verdict::Violation { deepest, stuck },
                    steps,
                };
            };
            state = s;
            let i = c / 2;
            linearized[i / 64] &= !(1 << (i % 64));
            restore(c + 1, &mut head_next, &mut next, &mut prev);
            restore(c, &mut head_next, &mut next, &mut prev);
            entry = next[c];
        }
    }
    Outcome {
        verdict: Verdict::Linearizable,
        steps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A register: `Some(v)` writes v (response ignored), `None` reads (response the value).
    struct Register;
    impl Model for Register {
        type State = i64;
        type Op = Option<i64>;
        type Ret = i64;
        fn init(&self) -> i64 {
            0
        }
        fn step(&self, s: &i64, op: &Option<i64>, ret: &i64) -> Option<i64> {
            match op {
                Some(v) => Some(*v),
                None => (ret == s).then_some(*s),
            }
        }
    }

    fn e(call: u64, ret: u64, op: Option<i64>, out: i64) -> Entry<Option<i64>, i64> {
        Entry {
            call,
            ret,
            thread: 0,
            op,
            out,
        }
    }

    #[test]
    fn register_histories() {
        // Porcupine's README example: put 100 overlapping two gets, one seeing 100, one 0.
        let ok = [e(0, 10, Some(100), 0), e(2, 7, None, 100), e(3, 4, None, 0)];
        for memo in [true, false] {
            assert_eq!(
                check(&Register, &ok, memo, 1 << 20).verdict,
                Verdict::Linearizable
            );
        }
        // The get of 0 starts after the get of 100 returned: no order fits.
        let bad = [e(0, 10, Some(100), 0), e(1, 3, None, 100), e(4, 6, None, 0)];
        for memo in [true, false] {
            assert!(matches!(
                check(&Register, &bad, memo, 1 << 20).verdict,
                Verdict::Violation { .. }
            ));
        }
        // Sequential: a read must see the last write.
        let seq = [e(0, 1, Some(5), 0), e(2, 3, None, 5), e(4, 5, None, 5)];
        assert_eq!(
            check(&Register, &seq, true, 1 << 20).verdict,
            Verdict::Linearizable
        );
        let stale = [e(0, 1, Some(5), 0), e(2, 3, Some(6), 0), e(4, 5, None, 5)];
        assert!(matches!(
            check(&Register, &stale, true, 1 << 20).verdict,
            Verdict::Violation { stuck: 2, .. }
        ));
    }
}
