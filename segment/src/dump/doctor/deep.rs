//! `--deep`: every entry of a segment's indexes verified against its `.log` by the dump's
//! own verification (`--verify-index-only`, [`crate::dump::dump_file`]), reported as one
//! finding per index that disagrees.

use std::path::PathBuf;

use super::{Finding, FindingKind, Severity};
use crate::dump::{self, text, Collect, DumpOptions, Event};

/// Verifies each existing index file of `paths`; one finding per file with failures.
pub(super) fn verify_indexes(paths: &[PathBuf]) -> Vec<Finding> {
    let opts = DumpOptions {
        verify_index_only: true,
        ..DumpOptions::default()
    };
    let mut out = Vec::new();
    for path in paths.iter().filter(|p| p.is_file()) {
        let mut sink = Collect(Vec::new());
        dump::dump_file(path, &opts, &mut sink);
        let failures: Vec<_> = sink
            .problems()
            .into_iter()
            .filter(|p| p.is_failure())
            .cloned()
            .collect();
        let Some(first) = failures.first() else {
            continue;
        };
        let event = Event::Problem(first.clone());
        let line = match text::event_line(&event, false) {
            Some(text::Line::Out(s) | text::Line::Err(s)) => s,
            // Most problems are lines of the end-of-run report ("Mismatches in :<path>"
            // and its entries): one line of it, never the problem's `Debug` form.
            None => {
                let mut report = text::Report::new();
                report.add(&event);
                report
                    .render()
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect::<Vec<_>>()
                    .join("; ")
            }
        };
        out.push(Finding {
            severity: Severity::Warning,
            kind: FindingKind::IndexDisagrees,
            file: Some(crate::names::file_name(path).to_string()),
            detail: format!(
                "{} problem(s) verifying its entries against the .log (first: {}): an index whose ends are consistent is trusted by Kafka 4.4 and by this library's loader, and lookups through these entries go wrong; dump-log --rebuild-indexes-to writes correct ones",
                failures.len(),
                line.trim()
            ),
        });
    }
    out
}
