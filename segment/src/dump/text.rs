//! Text rendering of dump [`Event`]s in the format of Kafka's `kafka-dump-log.sh`
//! (docs/kafka-behaviour.md#dump-log-segments), and the end-of-run report of problems and notes.
//!
//! # Escaping
//!
//! Every string the dumped files or their names control (file and directory names, the
//! reasons that quote them, record keys, values and header keys) goes through [`escape`]
//! or [`escape_path`] before it is printed, so a hostile name or record cannot move the
//! cursor, retitle or clear the terminal, or forge an output line
//! (`docs/kafka-behaviour.md#dump-log-operator-deviations`). The form is Rust's: `\\` for a
//! backslash, `\n` `\r` `\t`, `\u{1b}` (lowercase hex) for any other control or
//! invisible formatting character, `\xFF` for a byte that is not UTF-8. Names made of
//! printable characters print unchanged, as Kafka prints them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{BatchLine, Content, ControlLine, Event, Note, Problem, RecordLine};

/// Where a rendered line goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// Standard output.
    Out(String),
    /// Standard error.
    Err(String),
}

/// Whether `c` is escaped by [`escape`]: the backslash (so that an escape is never
/// ambiguous), Unicode control characters (C0, DEL, C1), and the invisible formatting
/// characters that reorder, hide or break lines on a terminal (Arabic letter mark, zero
/// width and directional marks, line and paragraph separators, bidi embeddings, overrides
/// and isolates, word joiners, the byte order mark, interlinear annotation marks).
pub(crate) fn needs_escape(c: char) -> bool {
    c == '\\'
        || c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
        )
}

/// Whether `s` holds a character that [`needs_escape`] (with `backslash` false: other than
/// the backslash): the same answer as `s.chars().any(..)`. The escaped ASCII characters
/// are the backslash, C0 and DEL, so ASCII is screened 64 bytes at a time without branches
/// (a loop the compiler vectorizes), and only from the first block holding such a byte or
/// a non-ASCII one is the string looked at character by character.
fn any_escape(s: &str, backslash: bool) -> bool {
    let bytes = s.as_bytes();
    // With `backslash` false, DEL stands in for it: DEL is flagged anyway.
    let bs = if backslash { b'\\' } else { 0x7f };
    let mut clean = 0;
    for block in bytes.chunks(64) {
        if block
            .iter()
            .fold(false, |a, &b| a | !(0x20..0x7f).contains(&b) | (b == bs))
        {
            break;
        }
        clean += block.len();
    }
    // Every byte before `clean` is ASCII, so `clean` is a character boundary.
    s.get(clean..)
        .unwrap_or(s)
        .chars()
        .any(|c| (backslash || c != '\\') && needs_escape(c))
}

fn push_escaped(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// `s` with every control and invisible formatting character escaped (see the
/// [module docs](self#escaping)); borrowed unchanged when there is nothing to escape.
///
/// `escape("a\u{1b}]0;x\u{7}\n")` is `a\u{1b}]0;x\u{7}\n` printed literally, never the
/// escape sequence itself.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !any_escape(s, true) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    push_escaped(&mut out, s);
    Cow::Owned(out)
}

/// A line of JSON made as inert on a terminal as text output: every character that
/// [`escape`] escapes, except the backslash, is written as a JSON `\uXXXX` escape.
/// serde_json escapes only C0 controls; DEL, C1 controls and the invisible formatting
/// characters would reach the terminal raw. They can only occur inside JSON strings, and
/// all lie in the Basic Multilingual Plane, so the result is valid JSON that decodes to
/// exactly the same values.
pub fn json_inert(json: &str) -> Cow<'_, str> {
    let hit = |c: char| c != '\\' && needs_escape(c);
    if !any_escape(json, false) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if hit(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `bytes` decoded as Java decodes UTF-8 (`new String(bytes, UTF_8)`, how Kafka's tool
/// turns keys, values and header keys into text): borrowed when they are valid UTF-8.
///
/// Each ill-formed sequence becomes one U+FFFD, as [`String::from_utf8_lossy`] does
/// (maximal subparts), except for an encoded surrogate (`ED` followed by `A0`–`BF`):
/// Java replaces the lead, that byte and one more continuation byte if there is one with
/// a single U+FFFD, where the Unicode practice Rust follows replaces each byte.
pub fn java_lossy(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    let mut i = 0;
    while let Some(rest) = bytes.get(i..).filter(|r| !r.is_empty()) {
        let Some(chunk) = rest.utf8_chunks().next() else {
            break;
        };
        out.push_str(chunk.valid());
        i += chunk.valid().len();
        if chunk.invalid().is_empty() {
            break;
        }
        out.push('\u{fffd}');
        i += match bytes.get(i..) {
            Some([0xED, 0xA0..=0xBF, 0x80..=0xBF, ..]) => 3,
            Some([0xED, 0xA0..=0xBF, ..]) => 2,
            _ => chunk.invalid().len(),
        };
    }
    Cow::Owned(out)
}

/// `i` in decimal, as `write!(out, "{i}")` writes it, without the formatting machinery
/// (most fields of a decoded record are integers).
pub(crate) fn push_int(out: &mut String, i: i64) {
    if let Ok(small) = u8::try_from(i) {
        // Most integer fields (partitions, brokers, epochs, versions) are small.
        if small < 10 {
            out.push(char::from(b'0' + small));
            return;
        }
        if small < 100 {
            out.push(char::from(b'0' + small / 10));
            out.push(char::from(b'0' + small % 10));
            return;
        }
    }
    // The digits, written from the end (u64::MAX has 20).
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = i.unsigned_abs();
    while let Some(d) = at.checked_sub(1).and_then(|a| digits.get_mut(a)) {
        *d = b'0' + (n % 10) as u8;
        at -= 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.reserve(21);
    if i < 0 {
        out.push('-');
    }
    for &d in digits.get(at..).unwrap_or_default() {
        out.push(char::from(d));
    }
}

/// A path for a text line: its exact bytes, with [`escape`] applied to its UTF-8 parts
/// and every byte that is not UTF-8 written `\xNN` (uppercase hex), so two different
/// names never print the same and none can inject terminal control sequences.
pub fn escape_path(path: &Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        push_escaped(&mut out, chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02X}");
        }
    }
    out
}

/// A producer's `currentTxnFirstOffset` as Kafka prints its `OptionalLong`: a negative
/// value (−1 on disk) is "no ongoing transaction".
fn optional_long(v: i64) -> String {
    if v >= 0 {
        format!("OptionalLong[{v}]")
    } else {
        "OptionalLong.empty".to_string()
    }
}

fn batch_text(b: &BatchLine) -> String {
    let mut s = String::with_capacity(320);
    write_batch_text(&mut s, b);
    s
}

/// Appends a batch line (without its newline) to `s`.
pub(crate) fn write_batch_text(s: &mut String, b: &BatchLine) {
    let bool_text = |v: bool| if v { "true" } else { "false" };
    if b.magic >= 2 {
        s.push_str("baseOffset: ");
        push_int(s, b.base_offset);
        s.push_str(" lastOffset: ");
        push_int(s, b.last_offset);
        s.push_str(" count: ");
        match b.count {
            Some(c) => push_int(s, c.into()),
            None => s.push_str("null"),
        }
        s.push_str(" baseSequence: ");
        push_int(s, b.base_sequence.into());
        s.push_str(" lastSequence: ");
        push_int(s, b.last_sequence.into());
        s.push_str(" producerId: ");
        push_int(s, b.producer_id);
        s.push_str(" producerEpoch: ");
        push_int(s, b.producer_epoch.into());
        s.push_str(" partitionLeaderEpoch: ");
        push_int(s, b.partition_leader_epoch.into());
        s.push_str(" isTransactional: ");
        s.push_str(bool_text(b.is_transactional));
        s.push_str(" isControl: ");
        s.push_str(bool_text(b.is_control));
        s.push_str(" deleteHorizonMs: ");
        match b.delete_horizon_ms {
            Some(h) => {
                s.push_str("OptionalLong[");
                push_int(s, h);
                s.push(']');
            }
            None => s.push_str("OptionalLong.empty"),
        }
    } else {
        s.push_str("offset: ");
        push_int(s, b.last_offset);
    }
    s.push_str(" position: ");
    push_int(s, b.position as i64);
    s.push(' ');
    s.push_str(b.timestamp_type);
    s.push_str(": ");
    push_int(s, b.max_timestamp);
    s.push_str(" size: ");
    push_int(s, b.size as i64);
    s.push_str(" magic: ");
    push_int(s, b.magic.into());
    s.push_str(" compresscodec: ");
    s.push_str(&b.compression);
    s.push_str(" crc: ");
    push_int(s, b.crc.into());
    s.push_str(" isvalid: ");
    s.push_str(bool_text(b.is_valid));
}

/// A key or payload for a text line: text through [`escape`]; a decoded record as
/// Kafka prints it, through [`json_inert`] (its JSON escapes stay as they are, so that the
/// line is Kafka's; the characters `escape` would escape are written `\uXXXX`).
fn content_text(c: &Content) -> Cow<'_, str> {
    match c {
        Content::Text(t) => escape(t),
        Content::Json(j) => {
            let text = j.to_kafka_string();
            match json_inert(&text) {
                // Nothing to escape (the usual case): the text itself, not a copy.
                Cow::Borrowed(_) => Cow::Owned(text),
                Cow::Owned(escaped) => Cow::Owned(escaped),
            }
        }
    }
}

/// The metadata of a record line, as [`write_record_meta`] prints it.
pub(crate) struct RecordMeta<'a> {
    pub offset: i64,
    pub timestamp_type: &'static str,
    pub timestamp: i64,
    pub key_size: i64,
    pub value_size: i64,
    /// v2: the sequence (its header keys are passed beside).
    pub sequence: Option<i32>,
    /// Legacy: the message checksum and whether it is valid.
    pub crc: Option<(u32, bool)>,
    pub control: Option<&'a ControlLine>,
}

/// Appends `| offset: …` up to the control record part: the metadata of a record line
/// (`header_keys` as text, each through [`escape`], printed with the sequence).
pub(crate) fn write_record_meta<'k>(
    s: &mut String,
    m: &RecordMeta<'_>,
    header_keys: Option<impl Iterator<Item = Cow<'k, str>>>,
) {
    s.push_str("| offset: ");
    push_int(s, m.offset);
    s.push(' ');
    s.push_str(m.timestamp_type);
    s.push_str(": ");
    push_int(s, m.timestamp);
    s.push_str(" keySize: ");
    push_int(s, m.key_size);
    s.push_str(" valueSize: ");
    push_int(s, m.value_size);
    if let (Some(seq), Some(keys)) = (m.sequence, header_keys) {
        s.push_str(" sequence: ");
        push_int(s, seq.into());
        s.push_str(" headerKeys: [");
        for (i, k) in keys.enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&escape(&k));
        }
        s.push(']');
    }
    if let Some((crc, valid)) = m.crc {
        let _ = write!(s, " isValid: {valid} crc: {crc}");
    }
    match m.control {
        Some(ControlLine::EndTxnMarker {
            marker,
            coordinator_epoch,
        }) => {
            let _ = write!(
                s,
                " endTxnMarker: {marker} coordinatorEpoch: {coordinator_epoch}"
            );
        }
        Some(ControlLine::Kraft { label, record, .. }) => {
            let _ = write!(s, " {label} ");
            record.write(s, true);
        }
        Some(ControlLine::Other { name, id }) => {
            let _ = write!(s, " controlType: {name}({id})");
        }
        None => {}
    }
}

/// Appends ` key: ` or ` payload: ` (`label`) and `bytes` as text (Java's UTF-8 decoding,
/// then [`escape`]), as a record line prints a key or value with `--print-data-log`.
pub(crate) fn write_data(s: &mut String, label: &str, bytes: &[u8]) {
    s.push_str(label);
    s.push_str(&escape(&java_lossy(bytes)));
}

/// A record line. With `--skip-record-metadata` Kafka prints the `|` only before a key or
/// payload: a record printing neither (a control record, or any record without
/// `--print-data-log`) is an empty line.
fn record_text(r: &RecordLine, skip_metadata: bool) -> String {
    let mut s = String::with_capacity(256);
    if skip_metadata && (r.key.is_some() || r.payload.is_some()) {
        s.push('|');
    }
    if !skip_metadata {
        write_record_meta(
            &mut s,
            &RecordMeta {
                offset: r.offset,
                timestamp_type: r.timestamp_type,
                timestamp: r.timestamp,
                key_size: r.key_size,
                value_size: r.value_size,
                sequence: r.sequence,
                crc: r.crc.zip(r.crc_valid),
                control: r.control.as_ref(),
            },
            r.header_keys
                .as_ref()
                .map(|keys| keys.iter().map(|k| Cow::Borrowed(k.as_str()))),
        );
    }
    if let Some(k) = &r.key {
        let _ = write!(s, " key: {}", content_text(k));
    }
    if let Some(p) = &r.payload {
        let _ = write!(s, " payload: {}", content_text(p));
    }
    s
}

/// The line an event prints immediately, if any (problems and notes are collected by
/// [`Report`] and printed at the end, except trailing bytes which Kafka prints in place).
/// `skip_record_metadata` is `--skip-record-metadata`.
pub fn event_line(event: &Event, skip_record_metadata: bool) -> Option<Line> {
    Some(match event {
        Event::Dumping { path, .. } => Line::Out(format!("Dumping {}", escape_path(path))),
        Event::Ignored { path } => Line::Err(format!("Ignoring unknown file {}", escape_path(path))),
        Event::LogStart { base_offset } => Line::Out(format!("Log starting offset: {base_offset}")),
        Event::BootstrapSnapshot => Line::Out("KRaft bootstrap snapshot".into()),
        Event::SnapshotStart { end_offset, epoch } => Line::Out(format!(
            "Snapshot end offset: {end_offset}, epoch: {epoch}"
        )),
        Event::Batch(b) => Line::Out(batch_text(b)),
        Event::Record(r) => Line::Out(record_text(r, skip_record_metadata)),
        Event::OffsetEntry {
            offset, position, ..
        } => Line::Out(format!("offset: {offset} position: {position}")),
        Event::TimeEntry {
            timestamp, offset, ..
        } => Line::Out(format!("timestamp: {timestamp} offset: {offset}")),
        Event::TxnEntry {
            version,
            producer_id,
            first_offset,
            last_offset,
            last_stable_offset,
            ..
        } => Line::Out(format!(
            "version: {version} producerId: {producer_id} firstOffset: {first_offset} lastOffset: {last_offset} lastStableOffset: {last_stable_offset}"
        )),
        Event::ProducerEntry(p) => {
            let mut s = format!(
                "producerId: {} producerEpoch: {} coordinatorEpoch: {} currentTxnFirstOffset: {} lastTimestamp: {}",
                p.producer_id,
                p.producer_epoch,
                p.coordinator_epoch,
                optional_long(p.current_txn_first_offset),
                p.last_timestamp,
            );
            // Kafka keeps (and prints) the last batch only when its offset is known.
            if p.last_offset >= 0 {
                let _ = write!(
                    s,
                    " firstSequence: {} lastSequence: {} lastOffset: {} offsetDelta: {} timestamp: {}",
                    p.first_sequence, p.last_sequence, p.last_offset, p.offset_delta, p.last_timestamp
                );
            }
            Line::Out(s)
        }
        Event::IndexEmpty { path } => Line::Out(format!("{} is empty.", escape_path(path))),
        Event::SanityPassed { path } => {
            Line::Out(format!("{} passed sanity check.", escape_path(path)))
        }
        Event::Problem(Problem::TrailingBytes { path, bytes, .. }) => Line::Out(format!(
            "Found {bytes} invalid bytes at the end of {}",
            escape_path(Path::new(path.file_name().unwrap_or_default()))
        )),
        Event::Problem(_) | Event::Note(_) => return None,
    })
}

type PerFile<T> = BTreeMap<(usize, PathBuf), Vec<T>>;

/// Collects problems and notes during a run and renders Kafka's end-of-run report
/// (`Mismatches in :<path>`, time index errors, `Non-consecutive offsets in`) followed by
/// the problems Kafka does not report and our notes.
#[derive(Debug, Default)]
pub struct Report {
    /// Files in the order of Java's `HashMap` iteration ([`Report::kafka_order`]) instead
    /// of the order found.
    java_hash_order: bool,
    order: BTreeMap<PathBuf, usize>,
    mismatches: PerFile<(i64, i64)>,
    ts_mismatch: PerFile<(i64, i64)>,
    ts_order: PerFile<(i64, i64)>,
    not_found: PerFile<(i64, i64)>,
    non_consecutive: PerFile<(i64, i64)>,
    other: PerFile<String>,
    notes: PerFile<Note>,
}

impl Report {
    /// A new, empty report.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new, empty report that lists the files of each block in the order Kafka 4.4's
    /// tool prints them (`--kafka-strict`): the iteration order of the `java.util.HashMap`
    /// its report keeps per block, keyed by the path, rather than the order found
    /// (docs/kafka-behaviour.md#dumplogsegments-findings).
    pub fn kafka_order() -> Self {
        Self {
            java_hash_order: true,
            ..Self::default()
        }
    }

    /// The pairs of one file's `Mismatches in` (`descending`) or `Non-consecutive offsets
    /// in` list in the order they are printed: most recent first; with
    /// [`Report::kafka_order`], as Kafka's `TreeMap` keyed by the first of each pair holds
    /// them (descending for mismatches, ascending for offsets; a later pair with the same
    /// key replaces the earlier).
    fn pairs(&self, list: &[(i64, i64)], descending: bool) -> Vec<(i64, i64)> {
        if !self.java_hash_order {
            return list.iter().rev().copied().collect();
        }
        let map: BTreeMap<i64, i64> = list.iter().copied().collect();
        if descending {
            map.into_iter().rev().collect()
        } else {
            map.into_iter().collect()
        }
    }

    /// The entries of one block in the order they are printed.
    fn files<'a, T>(&self, map: &'a PerFile<T>) -> Vec<(&'a PathBuf, &'a Vec<T>)> {
        let mut v: Vec<(&'a PathBuf, &'a Vec<T>)> =
            map.iter().map(|((_, p), list)| (p, list)).collect();
        if self.java_hash_order {
            let keys: Vec<String> = v
                .iter()
                .map(|(p, _)| p.to_string_lossy().into_owned())
                .collect();
            // One call per finding, file after file (files are dumped one at a time).
            let calls: Vec<usize> = v
                .iter()
                .enumerate()
                .flat_map(|(i, (_, list))| std::iter::repeat_n(i, list.len()))
                .collect();
            let order = java_hash_map_order(&keys, &calls);
            v = order
                .into_iter()
                .filter_map(|i| v.get(i).copied())
                .collect();
        }
        v
    }

    fn key(&mut self, path: &std::path::Path) -> (usize, PathBuf) {
        let n = self.order.len();
        let i = *self.order.entry(path.to_path_buf()).or_insert(n);
        (i, path.to_path_buf())
    }

    /// Records an event (only problems and notes matter).
    pub fn add(&mut self, event: &Event) {
        match event {
            Event::Problem(p) => self.add_problem(p),
            Event::Note(n) => {
                let path = match n {
                    Note::ChunkOffsetEntry { path, .. }
                    | Note::RecordLevelTimeEntry { path, .. }
                    | Note::ZeroFilledTail { path, .. }
                    | Note::MissingOffsetIndex { path } => path,
                };
                let k = self.key(path);
                self.notes.entry(k).or_default().push(n.clone());
            }
            _ => {}
        }
    }

    fn add_problem(&mut self, p: &Problem) {
        // Reasons quote names and file contents: the whole line is escaped.
        let other = |s: &mut Self, path: &PathBuf, line: String| {
            let k = s.key(path);
            s.other
                .entry(k)
                .or_default()
                .push(escape(&line).into_owned());
        };
        match p {
            Problem::OffsetMismatch {
                path,
                index_offset,
                log_offset,
                ..
            } => {
                let k = self.key(path);
                self.mismatches
                    .entry(k)
                    .or_default()
                    .push((*index_offset, *log_offset));
            }
            Problem::TimestampMismatch {
                path,
                index_timestamp,
                log_timestamp,
                ..
            } => {
                let k = self.key(path);
                self.ts_mismatch
                    .entry(k)
                    .or_default()
                    .push((*index_timestamp, *log_timestamp));
            }
            Problem::OutOfOrderTimestamp {
                path,
                index_timestamp,
                prev_timestamp,
                ..
            } => {
                let k = self.key(path);
                self.ts_order
                    .entry(k)
                    .or_default()
                    .push((*index_timestamp, *prev_timestamp));
            }
            Problem::ShallowOffsetNotFound {
                path,
                index_offset,
                log_offset,
                ..
            } => {
                let k = self.key(path);
                self.not_found
                    .entry(k)
                    .or_default()
                    .push((*index_offset, *log_offset));
            }
            Problem::NonConsecutiveOffsets {
                path,
                prev_offset,
                offset,
            } => {
                let k = self.key(path);
                self.non_consecutive
                    .entry(k)
                    .or_default()
                    .push((*prev_offset, *offset));
            }
            Problem::OffsetIndexOutOfOrder {
                path,
                slot,
                offset,
                position,
                prev_offset,
                prev_position,
            } => other(
                self,
                path,
                format!("Out of order offset index entry {slot}: offset: {offset} position: {position} follows offset: {prev_offset} position: {prev_position}"),
            ),
            Problem::IndexEntryUnreadable {
                path,
                slot,
                offset,
                position,
                reason,
            } => other(
                self,
                path,
                format!("Index entry {slot} (offset: {offset}): no batch readable at position {position}: {reason}"),
            ),
            Problem::TimeIndexOffsetOutOfOrder {
                path,
                slot,
                offset,
                prev_offset,
            } => other(
                self,
                path,
                format!("Out of order time index entry {slot}: offset: {offset} follows offset: {prev_offset}"),
            ),
            Problem::InvalidChecksum {
                path,
                position,
                base_offset,
                last_offset,
                stored_crc,
                computed_crc,
            } => other(
                self,
                path,
                format!("Invalid checksum in batch at position: {position} baseOffset: {base_offset} lastOffset: {last_offset}: stored crc: {stored_crc} computed crc: {computed_crc}"),
            ),
            Problem::CorruptRecord {
                path,
                position,
                reason,
            } => other(
                self,
                path,
                format!("Corrupt record at position: {position}: {reason} (reading stopped here)"),
            ),
            Problem::InvalidRecord {
                path,
                position,
                reason,
            } => other(
                self,
                path,
                format!("Invalid record in batch at position: {position}: {reason}"),
            ),
            Problem::TrailingBytes {
                path,
                file_name: _,
                bytes,
            } => {
                let k = self.key(path);
                let name = escape_path(Path::new(path.file_name().unwrap_or_default()));
                self.other
                    .entry(k)
                    .or_default()
                    .push(format!("Found {bytes} invalid bytes at the end of {name}"));
            }
            Problem::BatchTooLarge {
                path,
                position,
                size,
                limit,
            } => other(
                self,
                path,
                format!("Batch at position: {position} declares {size} bytes, more than --max-message-size {limit}: not read (reading stopped here); rerun with --max-message-size {size} to read it"),
            ),
            Problem::SanityCheckFailed { path, reason } => {
                other(self, path, format!("Sanity check failed: {reason}"))
            }
            Problem::CorruptFile { path, reason } => other(self, path, format!("Corrupt: {reason}")),
            Problem::Unreadable { path, reason } => {
                other(self, path, format!("Cannot read: {reason}"))
            }
        }
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.mismatches.is_empty()
            && self.ts_mismatch.is_empty()
            && self.ts_order.is_empty()
            && self.not_found.is_empty()
            && self.non_consecutive.is_empty()
            && self.other.is_empty()
            && self.notes.is_empty()
    }

    /// The end-of-run report for standard error (empty if nothing was recorded).
    ///
    /// Kafka's blocks come first, in Kafka's wording: offset index mismatches and
    /// non-consecutive offsets most recent first, time index errors in the order found;
    /// with [`Report::kafka_order`] files and pairs are in the order Kafka 4.4's tool
    /// prints them instead (its `HashMap` of files, its `TreeMap` of pairs). Then the problems Kafka does not detect or report
    /// (`Problems in :<path>`), then notes.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for (path, list) in self.files(&self.mismatches) {
            let _ = writeln!(s, "Mismatches in :{}", escape_path(path));
            for (i, l) in self.pairs(list, true) {
                let _ = writeln!(s, "  Index offset: {i}, log offset: {l}");
            }
        }
        for (path, list) in self.files(&self.ts_mismatch) {
            let _ = writeln!(s, "Found timestamp mismatch in :{}", escape_path(path));
            for (i, l) in list {
                let _ = writeln!(s, "  Index timestamp: {i}, log timestamp: {l}");
            }
        }
        for (path, list) in self.files(&self.ts_order) {
            let _ = writeln!(s, "Found out of order timestamp in :{}", escape_path(path));
            for (i, p) in list {
                let _ = writeln!(
                    s,
                    "  Index timestamp: {i}, Previously indexed timestamp: {p}"
                );
            }
        }
        for (path, list) in self.files(&self.not_found) {
            let _ = writeln!(
                s,
                "The following indexed offsets are not found in :{}",
                escape_path(path)
            );
            for (i, l) in list {
                let _ = writeln!(s, "Indexed offset: {i}, found log offset: {l}");
            }
        }
        for (path, list) in self.files(&self.non_consecutive) {
            let _ = writeln!(s, "Non-consecutive offsets in {}", escape_path(path));
            for (a, b) in self.pairs(list, false) {
                let _ = writeln!(s, "  {a} is followed by {b}");
            }
        }
        for ((_, path), list) in &self.other {
            let _ = writeln!(s, "Problems in :{}", escape_path(path));
            for l in list {
                let _ = writeln!(s, "  {l}");
            }
        }
        for ((_, path), notes) in &self.notes {
            render_notes(&mut s, path, notes);
        }
        s
    }
}

/// The iteration order of a `java.util.HashMap<String, _>` filled by
/// `computeIfAbsent` calls, as Kafka 4.4's `DumpLogSegments` fills each block of its report
/// (one call per finding, keyed by the file's `File.getAbsolutePath()`): `keys` are the
/// distinct keys in the order first seen, `calls` the key (index into `keys`) of each call
/// in order; the answer lists indexes into `keys`.
///
/// Java's map spreads `String.hashCode()` (`h ^ (h >>> 16)`) over a table of a power of
/// two slots (16 on the first call); a call that finds the map holding more than three
/// quarters of its slots first doubles the table, splitting each slot's list in order;
/// `computeIfAbsent` puts a new key at the **head** of its slot's list; iteration goes slot
/// by slot, each list in order. A slot of more than 8 keys (Java then makes a tree of it)
/// is not modelled: Kafka's report holds one key per file, far from that.
pub fn java_hash_map_order(keys: &[String], calls: &[usize]) -> Vec<usize> {
    let hashes: Vec<u32> = keys
        .iter()
        .map(|k| {
            let h = k
                .encode_utf16()
                .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
                as u32;
            h ^ (h >> 16)
        })
        .collect();
    let hash = |k: usize| hashes.get(k).copied().unwrap_or(0) as usize;
    let mut table: Vec<Vec<usize>> = vec![Vec::new(); 16];
    let mut present = vec![false; keys.len()];
    let mut size = 0usize;
    for &k in calls {
        if size > table.len() / 4 * 3 {
            let old = table.len();
            let mut bigger: Vec<Vec<usize>> = vec![Vec::new(); old * 2];
            for (j, list) in table.into_iter().enumerate() {
                for key in list {
                    let to = if hash(key) & old == 0 { j } else { j + old };
                    if let Some(slot) = bigger.get_mut(to) {
                        slot.push(key);
                    }
                }
            }
            table = bigger;
        }
        match present.get_mut(k) {
            Some(p) if !*p => *p = true,
            _ => continue,
        }
        size += 1;
        let mask = table.len() - 1;
        if let Some(slot) = table.get_mut(hash(k) & mask) {
            slot.insert(0, k);
        }
    }
    table.into_iter().flatten().collect()
}

const EXAMPLES: usize = 3;

/// Writes `header` and the first [`EXAMPLES`] of `lines` (indented), then how many more
/// there are; nothing when `lines` is empty.
fn render_note_group(s: &mut String, header: String, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(s, "{header}");
    for l in lines.iter().take(EXAMPLES) {
        let _ = writeln!(s, "  {l}");
    }
    if lines.len() > EXAMPLES {
        let _ = writeln!(s, "  ... ({} more)", lines.len() - EXAMPLES);
    }
}

fn render_notes(s: &mut String, path: &std::path::Path, notes: &[Note]) {
    let chunk: Vec<String> = notes
        .iter()
        .filter_map(|n| match n {
            Note::ChunkOffsetEntry {
                offset,
                position,
                first_batch_last_offset,
                ..
            } => Some(format!(
                "Index offset: {offset}, position: {position}, first batch last offset: {first_batch_last_offset}"
            )),
            _ => None,
        })
        .collect();
    render_note_group(
        s,
        format!(
            "Note: {} offset index entries in :{} point at the first batch of a multi-batch append (follower fetch chunk). They are valid (lookups through them are correct); Kafka's own DumpLogSegments flags them, as --kafka-strict does.",
            chunk.len(),
            escape_path(path)
        ),
        &chunk,
    );
    let rec: Vec<String> = notes
        .iter()
        .filter_map(|n| match n {
            Note::RecordLevelTimeEntry {
                timestamp,
                offset,
                batch_last_offset,
                ..
            } => Some(format!(
                "Index timestamp: {timestamp}, offset: {offset}, batch last offset: {batch_last_offset}"
            )),
            _ => None,
        })
        .collect();
    render_note_group(
        s,
        format!(
            "Note: {} time index entries in :{} hold a record-level offset (written by a 2.x-3.7 leader). They are valid (the record carries the indexed timestamp); Kafka's own DumpLogSegments flags them, as --kafka-strict does.",
            rec.len(),
            escape_path(path)
        ),
        &rec,
    );
    for n in notes {
        match n {
            Note::ZeroFilledTail {
                slot, unused_slots, ..
            } => {
                let _ = writeln!(
                    s,
                    "Note: :{} has {unused_slots} zero-filled slots from entry {slot} (untrimmed index of an active segment or an unclean shutdown); they were not checked.",
                    escape_path(path)
                );
            }
            Note::MissingOffsetIndex { .. } => {
                let _ = writeln!(
                    s,
                    "Note: no offset index next to :{}; its entries were looked up from position 0.",
                    escape_path(path)
                );
            }
            _ => {}
        }
    }
}

#[cfg(test)]
// Tests may index and panic: a panic is how a test reports a failure.
#[allow(clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::{any_escape, java_hash_map_order, java_lossy, needs_escape};

    /// The screen gives `chars().any(..)`'s answer wherever the character sits: in the
    /// first or a later 64-byte block, at a block's edge, after non-ASCII text.
    #[test]
    fn any_escape_answers_as_a_scan_of_every_character() {
        let specials = [
            "\\",
            "\n",
            "\u{0}",
            "\u{1f}",
            "\u{7f}",
            "\u{85}",
            "\u{200b}",
            "\u{feff}",
            "é",
            "€",
            "\u{1f600}",
            " ",
            "~",
        ];
        for len in [0usize, 1, 63, 64, 65, 130] {
            for at in [0usize, 1, 62, 63, 64, 65, 127, 128, 129] {
                for sp in specials {
                    let mut s = "a".repeat(len);
                    s.insert_str(at.min(len), sp);
                    for backslash in [true, false] {
                        let scan = s
                            .chars()
                            .any(|c| (backslash || c != '\\') && needs_escape(c));
                        assert_eq!(any_escape(&s, backslash), scan, "{s:?} {backslash}");
                    }
                }
            }
        }
    }

    /// What `new String(bytes, UTF_8)` gives on JDK 17 (checked with a Java program on
    /// 20,000 random sequences of lead, continuation and invalid bytes; these are the
    /// shapes, including every one where it differs from `String::from_utf8_lossy`).
    #[test]
    fn java_hash_map_order_is_javas() {
        // The order java.util.HashMap (Java 17) iterates keys in after computeIfAbsent
        // calls with them, in this order (printed by a Java program).
        let order = |keys: &[String], calls: &[usize]| -> String {
            java_hash_map_order(keys, calls)
                .into_iter()
                .map(|i| keys[i].as_str())
                .collect::<Vec<_>>()
                .join(",")
        };
        // 20 keys: the table is doubled twice, keys sharing a slot are listed newest first.
        let keys: Vec<String> = (0..20)
            .map(|i| format!("/data/t-{}/{:020}.log", i % 3, i * 137))
            .collect();
        let calls: Vec<usize> = (0..20).collect();
        assert_eq!(
            order(&keys, &calls),
            "/data/t-0/00000000000000001644.log,/data/t-2/00000000000000001507.log,/data/t-1/00000000000000000959.log,/data/t-2/00000000000000000274.log,/data/t-0/00000000000000002466.log,/data/t-0/00000000000000000822.log,/data/t-2/00000000000000001096.log,/data/t-1/00000000000000002603.log,/data/t-1/00000000000000001370.log,/data/t-1/00000000000000002192.log,/data/t-0/00000000000000002055.log,/data/t-0/00000000000000001233.log,/data/t-2/00000000000000002329.log,/data/t-1/00000000000000001781.log,/data/t-1/00000000000000000137.log,/data/t-0/00000000000000000000.log,/data/t-2/00000000000000001918.log,/data/t-1/00000000000000000548.log,/data/t-2/00000000000000000685.log,/data/t-0/00000000000000000411.log"
        );
        // 13 keys fill 16 slots past three quarters; only a further call (here with a key
        // already present) doubles the table.
        let keys: Vec<String> = (0..13)
            .map(|i| format!("/p/{:020}.index", i * 1000))
            .collect();
        let calls: Vec<usize> = (0..13).collect();
        assert_eq!(
            order(&keys, &calls),
            "/p/00000000000000000000.index,/p/00000000000000003000.index,/p/00000000000000011000.index,/p/00000000000000002000.index,/p/00000000000000010000.index,/p/00000000000000006000.index,/p/00000000000000008000.index,/p/00000000000000012000.index,/p/00000000000000004000.index,/p/00000000000000001000.index,/p/00000000000000005000.index,/p/00000000000000009000.index,/p/00000000000000007000.index"
        );
        let calls: Vec<usize> = (0..13).chain([0]).collect();
        assert_eq!(
            order(&keys, &calls),
            "/p/00000000000000000000.index,/p/00000000000000003000.index,/p/00000000000000010000.index,/p/00000000000000006000.index,/p/00000000000000001000.index,/p/00000000000000005000.index,/p/00000000000000009000.index,/p/00000000000000011000.index,/p/00000000000000002000.index,/p/00000000000000008000.index,/p/00000000000000012000.index,/p/00000000000000004000.index,/p/00000000000000007000.index"
        );
    }

    #[test]
    fn java_lossy_replaces_as_java_does() {
        let r = '\u{fffd}';
        for (bytes, java) in [
            (&b"plain"[..], "plain".to_string()),
            (b"\xED\xA0\x80", format!("{r}")),
            (b"A\xED\xBF\xBFB", format!("A{r}B")),
            (b"x\xED\xA0", format!("x{r}")),
            (b"\xED\xA0A", format!("{r}A")),
            (b"\xED\x9F\xBF", "\u{d7ff}".to_string()),
            (b"\xE0\x80\x80", format!("{r}{r}{r}")),
            (b"\xF0\x90\x80", format!("{r}")),
            (b"\xF4\x90\x80\x80", format!("{r}{r}{r}{r}")),
            (b"\x80\xBF\xC0\xC1\xF5\xFF", format!("{r}{r}{r}{r}{r}{r}")),
            (b"\xF0\x90\x80A", format!("{r}A")),
            (b"\xE1\x80", format!("{r}")),
            (b"\xec\xed\xbf\xa0\xf3\xef\xbf", format!("{r}{r}{r}{r}")),
        ] {
            assert_eq!(java_lossy(bytes), java, "{bytes:x?}");
        }
    }
}
