//! Records inside a batch: [`Record`], [`Header`], [`TimestampType`] and the [`Records`]
//! iterator shared by v2 batches and legacy message sets (docs/kafka-behaviour.md#v2-records, docs/kafka-behaviour.md#legacy-message-sets).

use std::borrow::Cow;

use super::varint::{Cursor, DecodeError};
use super::{RecordError, NO_SEQUENCE};

/// How a batch's timestamps are to be read (Kafka `TimestampType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimestampType {
    /// Magic 0 messages carry no timestamp (Kafka `NO_TIMESTAMP_TYPE`); timestamps read −1.
    NoTimestamp,
    /// The producer's timestamp.
    CreateTime,
    /// The broker's append time; every record's timestamp is the batch max timestamp.
    LogAppendTime,
}

impl TimestampType {
    /// Kafka's display name: `NoTimestampType`, `CreateTime` or `LogAppendTime`
    /// (as printed by `kafka-dump-log.sh`).
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::NoTimestamp => "NoTimestampType",
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

/// A record header: a key (UTF-8 text in Kafka, kept as bytes here) and an optional value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Header<'a> {
    /// Header key bytes (UTF-8 by convention; not validated, as Kafka's reader doesn't).
    pub key: Cow<'a, [u8]>,
    /// Header value; `None` for a null value (length −1 on disk).
    pub value: Option<Cow<'a, [u8]>>,
}

impl Header<'_> {
    /// The key as text, with invalid UTF-8 replaced (as Java's decoder does).
    pub fn key_str(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.key)
    }

    /// Copies borrowed bytes so the header outlives the batch.
    pub fn into_owned(self) -> Header<'static> {
        Header {
            key: Cow::Owned(self.key.into_owned()),
            value: self.value.map(|v| Cow::Owned(v.into_owned())),
        }
    }
}

/// One logical record, from a v2 batch or a legacy message.
///
/// Byte fields borrow from the batch when it is uncompressed and own their bytes when the
/// batch had to be decompressed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Record<'a> {
    /// Absolute offset: `base_offset + offset_delta` (v2) or the entry offset (legacy).
    pub offset: i64,
    /// Timestamp in ms since epoch: `base_timestamp + timestamp_delta` under CreateTime,
    /// the batch max timestamp under LogAppendTime, −1 for magic 0.
    pub timestamp: i64,
    /// Producer sequence of this record: `base_sequence + offset_delta` (wrapping), or −1.
    pub sequence: i32,
    /// Record attributes byte (unused in v2, always 0 when written by Kafka); the legacy
    /// message attributes for magic 0/1.
    pub attributes: i8,
    /// Key; `None` for a null key.
    pub key: Option<Cow<'a, [u8]>>,
    /// Value; `None` for a null value (a tombstone in compacted topics).
    pub value: Option<Cow<'a, [u8]>>,
    /// Headers (always empty for legacy messages).
    pub headers: Vec<Header<'a>>,
    /// Encoded size of the record in bytes: the length varint plus the body (v2), or the
    /// whole log entry `12 + message size` (legacy).
    pub size_in_bytes: usize,
}

impl Record<'_> {
    /// The key bytes, if any.
    pub fn key(&self) -> Option<&[u8]> {
        self.key.as_deref()
    }

    /// The value bytes, if any.
    pub fn value(&self) -> Option<&[u8]> {
        self.value.as_deref()
    }

    /// Copies borrowed bytes so the record outlives the batch.
    pub fn into_owned(self) -> Record<'static> {
        Record {
            offset: self.offset,
            timestamp: self.timestamp,
            sequence: self.sequence,
            attributes: self.attributes,
            key: self.key.map(|k| Cow::Owned(k.into_owned())),
            value: self.value.map(|v| Cow::Owned(v.into_owned())),
            headers: self.headers.into_iter().map(Header::into_owned).collect(),
            size_in_bytes: self.size_in_bytes,
        }
    }
}

/// Batch-level values needed to decode a v2 record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordContext {
    pub(crate) base_offset: i64,
    pub(crate) base_timestamp: i64,
    /// `Some(max_timestamp)` under LogAppendTime.
    pub(crate) log_append_time: Option<i64>,
    pub(crate) base_sequence: i32,
    pub(crate) position: u64,
}

fn structure_error(ctx: &RecordContext, index: u32, e: DecodeError) -> RecordError {
    RecordError::invalid(
        ctx.position,
        format!("found invalid record structure in record {index}: {e}"),
    )
}

fn read_len_prefixed<'b>(body: &mut Cursor<'b>, len: i32) -> Result<Option<&'b [u8]>, DecodeError> {
    if len < 0 {
        return Ok(None);
    }
    body.read_bytes(len as usize).map(Some)
}

/// One v2 record as [`walk_v2_record`] read it, borrowed from the batch.
struct Walked<'b> {
    attributes: i8,
    offset: i64,
    timestamp: i64,
    offset_delta: i32,
    key: Option<&'b [u8]>,
    value: Option<&'b [u8]>,
    size_in_bytes: usize,
}

/// Walks one v2 record at the cursor (Kafka `DefaultRecord.readFrom`): every length and
/// count checked, in Kafka's order, with its error. The headers go to `headers` when it
/// is given (the full decode); the leader's skim passes `None` and nothing allocates.
/// In line, so each caller gets a copy fitted to it (the skim's without headers).
#[inline(always)]
fn walk_v2_record<'b>(
    cur: &mut Cursor<'b>,
    ctx: &RecordContext,
    index: u32,
    mut headers: Option<&mut Vec<Header<'b>>>,
) -> Result<Walked<'b>, RecordError> {
    let start = cur.position();
    // Kafka reads the record's length outside the check that turns a decoding error
    // into an `InvalidRecordException`, so an over-long varint there escapes as its
    // `IllegalArgumentException` (a produce answered `UNKNOWN_SERVER_ERROR`,
    // docs/kafka-behaviour.md#record-length-overlong); a length cut short is Kafka's
    // premature EOF, an invalid record. In a compressed batch's records Kafka's stream
    // iterator catches that exception: `Records` maps the kind there (`stream_error`).
    let body_len = cur.read_varint().map_err(|e| match e {
        DecodeError::VarintTooLong => RecordError::RecordLengthOverlong {
            position: ctx.position,
            index,
        },
        e => structure_error(ctx, index, e),
    })?;
    if body_len < 0 {
        return Err(RecordError::invalid(
            ctx.position,
            format!("invalid record size {body_len} in record {index}"),
        ));
    }
    let body_len = body_len as usize;
    if cur.remaining() < body_len {
        return Err(RecordError::invalid(
            ctx.position,
            format!(
                "invalid record size: expected {body_len} bytes in record payload of record {index}, but the buffer has only {} remaining bytes",
                cur.remaining()
            ),
        ));
    }
    let body_bytes = cur
        .read_bytes(body_len)
        .map_err(|e| structure_error(ctx, index, e))?;
    let size_in_bytes = cur.position() - start;
    let mut body = Cursor::new(body_bytes);
    let err = |e| structure_error(ctx, index, e);

    let attributes = body.read_u8().map_err(err)? as i8;
    let timestamp_delta = body.read_varlong().map_err(err)?;
    let offset_delta = body.read_varint().map_err(err)?;
    let key_len = body.read_varint().map_err(err)?;
    let key = read_len_prefixed(&mut body, key_len).map_err(err)?;
    let value_len = body.read_varint().map_err(err)?;
    let value = read_len_prefixed(&mut body, value_len).map_err(err)?;
    let header_count = body.read_varint().map_err(err)?;
    if header_count < 0 {
        return Err(RecordError::invalid(
            ctx.position,
            format!("found invalid number of record headers {header_count} in record {index}"),
        ));
    }
    if header_count as usize > body.remaining() {
        return Err(RecordError::invalid(
            ctx.position,
            format!(
                "found invalid number of record headers {header_count} in record {index}: only {} bytes remain",
                body.remaining()
            ),
        ));
    }
    if let Some(h) = headers.as_deref_mut() {
        h.reserve_exact(header_count as usize);
    }
    for _ in 0..header_count {
        let key_len = body.read_varint().map_err(err)?;
        if key_len < 0 {
            return Err(RecordError::invalid(
                ctx.position,
                format!("invalid negative header key size {key_len} in record {index}"),
            ));
        }
        let key = body.read_bytes(key_len as usize).map_err(err)?;
        let value_len = body.read_varint().map_err(err)?;
        let value = read_len_prefixed(&mut body, value_len).map_err(err)?;
        if let Some(h) = headers.as_deref_mut() {
            h.push(Header {
                key: Cow::Borrowed(key),
                value: value.map(Cow::Borrowed),
            });
        }
    }
    if body.remaining() != 0 {
        return Err(RecordError::invalid(
            ctx.position,
            format!(
                "invalid record size: expected to read {body_len} bytes in record payload of record {index}, but instead read {}",
                body.position()
            ),
        ));
    }
    Ok(Walked {
        attributes,
        offset: ctx.base_offset.wrapping_add(i64::from(offset_delta)),
        timestamp: match ctx.log_append_time {
            Some(t) => t,
            None => ctx.base_timestamp.wrapping_add(timestamp_delta),
        },
        offset_delta,
        key,
        value,
        size_in_bytes,
    })
}

/// Decodes one v2 record at the cursor (Kafka `DefaultRecord.readFrom`).
pub(crate) fn decode_v2_record<'b>(
    cur: &mut Cursor<'b>,
    ctx: &RecordContext,
    index: u32,
) -> Result<Record<'b>, RecordError> {
    let mut headers = Vec::new();
    let w = walk_v2_record(cur, ctx, index, Some(&mut headers))?;
    let sequence = if ctx.base_sequence >= 0 {
        increment_sequence(ctx.base_sequence, w.offset_delta)
    } else {
        NO_SEQUENCE
    };
    Ok(Record {
        offset: w.offset,
        timestamp: w.timestamp,
        sequence,
        attributes: w.attributes,
        key: w.key.map(Cow::Borrowed),
        value: w.value.map(Cow::Borrowed),
        headers,
        size_in_bytes: w.size_in_bytes,
    })
}

/// What the leader's per-record checks read of one v2 record
/// (docs/kafka-behaviour.md#leader-validation): taken by [`skim_v2_record`] without
/// building a [`Record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordSummary {
    /// Absolute offset, as [`Record::offset`].
    pub(crate) offset: i64,
    /// Timestamp, ms since the epoch, as [`Record::timestamp`].
    pub(crate) timestamp: i64,
    /// Whether the key is non-null.
    pub(crate) has_key: bool,
}

impl RecordSummary {
    /// The summary of a decoded record.
    pub(crate) fn of(r: &Record<'_>) -> Self {
        RecordSummary {
            offset: r.offset,
            timestamp: r.timestamp,
            has_key: r.key.is_some(),
        }
    }
}

/// Walks one v2 record at the cursor as [`decode_v2_record`] does (the same walk: the
/// same checks in the same order and the same errors) but keeps only what the leader's
/// checks read: no header list is built, nothing allocates.
pub(crate) fn skim_v2_record(
    cur: &mut Cursor<'_>,
    ctx: &RecordContext,
    index: u32,
) -> Result<RecordSummary, RecordError> {
    let w = walk_v2_record(cur, ctx, index, None)?;
    Ok(RecordSummary {
        offset: w.offset,
        timestamp: w.timestamp,
        has_key: w.key.is_some(),
    })
}

/// The walk state shared by [`Records`] and [`SkimRecords`]: the byte position in the
/// records section, the declared count, how many records were read, and whether the walk
/// ended (after the declared records, or after its first error, yielded once).
#[derive(Debug, Clone, Copy)]
struct Walk {
    /// Byte offset of the next record in the records section; it only advances by what
    /// a cursor over the bytes left consumed, so it never passes their end.
    pos: usize,
    total: u32,
    read: u32,
    done: bool,
}

impl Walk {
    fn new(total: u32) -> Self {
        Walk {
            pos: 0,
            total,
            read: 0,
            done: false,
        }
    }

    /// The next item `produce` gives, with the accounting of every walk: nothing once
    /// the walk ended; an end or an error ends it; a record counts as read.
    #[inline]
    fn advance<T>(
        &mut self,
        produce: impl FnOnce(&mut Self) -> Option<Result<T, RecordError>>,
    ) -> Option<Result<T, RecordError>> {
        if self.done {
            return None;
        }
        let out = produce(self);
        match &out {
            None | Some(Err(_)) => self.done = true,
            Some(Ok(_)) => self.read += 1,
        }
        out
    }

    /// The next v2 record of `data` (the records section), read by `decode`: the framing
    /// rules of [`Records`] (declared count against the bytes left), then `decode` of the
    /// record at the position, which advances it.
    #[inline]
    fn next_with<'b, T>(
        &mut self,
        data: &'b [u8],
        ctx: &RecordContext,
        decode: impl FnOnce(&mut Cursor<'b>, &RecordContext, u32) -> Result<T, RecordError>,
    ) -> Option<Result<T, RecordError>> {
        self.advance(|w| {
            let rest = data.get(w.pos..).unwrap_or_default();
            let (read, total) = (w.read, w.total);
            if read >= total {
                if rest.is_empty() {
                    return None;
                }
                return Some(Err(RecordError::invalid(
                    ctx.position,
                    format!(
                        "incorrect declared batch size, {} bytes remain after the {total} declared records",
                        rest.len()
                    ),
                )));
            }
            if rest.is_empty() {
                return Some(Err(RecordError::invalid(
                    ctx.position,
                    format!(
                        "incorrect declared batch size, premature end of records after {read} of {total}"
                    ),
                )));
            }
            let mut cur = Cursor::new(rest);
            let r = decode(&mut cur, ctx, read);
            w.pos += cur.position();
            Some(r)
        })
    }

    /// At most the records left and one error.
    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            return (0, Some(0));
        }
        let left = self.total.saturating_sub(self.read) as usize;
        (0, Some(left + 1))
    }
}

/// The records of an uncompressed v2 batch as [`RecordSummary`]s: the walk of [`Records`]
/// (same framing rules, same errors, ends after the first error) with
/// [`skim_v2_record`] in place of the full decode.
#[derive(Debug)]
pub(crate) struct SkimRecords<'a> {
    data: &'a [u8],
    ctx: RecordContext,
    walk: Walk,
}

impl<'a> SkimRecords<'a> {
    pub(crate) fn new(data: &'a [u8], count: u32, ctx: RecordContext) -> Self {
        SkimRecords {
            data,
            ctx,
            walk: Walk::new(count),
        }
    }
}

impl SkimRecords<'_> {
    /// The whole walk in one loop, for a batch that passes: each record's summary, in
    /// order, goes to `accept`, and `Some(records)` comes back when every record is
    /// well formed (each check of [`walk_v2_record`], in the same terms: the same
    /// cursor reads) and the bytes hold exactly the declared count, and `accept` took
    /// every summary. `None` when anything fails, with nothing said of why: the caller
    /// then walks again with the iterator, which gives Kafka's error. So `Some` is
    /// answered exactly where the iterator would yield these summaries and no error,
    /// without its per-record error plumbing (a [`RecordError`] with its message in
    /// every `Result`). Does not move the iterator.
    #[inline]
    pub(crate) fn accept_all(&self, mut accept: impl FnMut(RecordSummary) -> bool) -> Option<u32> {
        if self.walk.pos != 0 || self.walk.done {
            return None;
        }
        let ctx = &self.ctx;
        let mut cur = Cursor::new(self.data);
        for _ in 0..self.walk.total {
            let body_len = usize::try_from(cur.read_varint().ok()?).ok()?;
            let mut body = Cursor::new(cur.read_bytes(body_len).ok()?);
            body.read_u8().ok()?;
            let timestamp_delta = body.read_varlong().ok()?;
            let offset_delta = body.read_varint().ok()?;
            let key_len = body.read_varint().ok()?;
            if key_len >= 0 {
                body.read_bytes(key_len as usize).ok()?;
            }
            let value_len = body.read_varint().ok()?;
            if value_len >= 0 {
                body.read_bytes(value_len as usize).ok()?;
            }
            let header_count = usize::try_from(body.read_varint().ok()?).ok()?;
            if header_count > body.remaining() {
                return None;
            }
            for _ in 0..header_count {
                let key_len = usize::try_from(body.read_varint().ok()?).ok()?;
                body.read_bytes(key_len).ok()?;
                let value_len = body.read_varint().ok()?;
                if value_len >= 0 {
                    body.read_bytes(value_len as usize).ok()?;
                }
            }
            if body.remaining() != 0 {
                return None;
            }
            let summary = RecordSummary {
                offset: ctx.base_offset.wrapping_add(i64::from(offset_delta)),
                timestamp: match ctx.log_append_time {
                    Some(t) => t,
                    None => ctx.base_timestamp.wrapping_add(timestamp_delta),
                },
                has_key: key_len >= 0,
            };
            if !accept(summary) {
                return None;
            }
        }
        (cur.remaining() == 0).then_some(self.walk.total)
    }
}

impl Iterator for SkimRecords<'_> {
    type Item = Result<RecordSummary, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.walk.next_with(self.data, &self.ctx, skim_v2_record)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.walk.size_hint()
    }
}

enum Inner<'a> {
    V2Borrowed {
        data: &'a [u8],
        ctx: RecordContext,
    },
    V2Owned {
        data: Vec<u8>,
        ctx: RecordContext,
    },
    /// Already decoded records (legacy messages).
    List(std::vec::IntoIter<Record<'a>>),
}

/// Iterator over the records of one batch, yielding `Result<Record, RecordError>`.
///
/// Created by [`RecordBatch::records`](super::RecordBatch::records),
/// [`LegacyBatch::records`](super::LegacyBatch::records) or
/// [`FileBatch::records`](super::FileBatch::records). It ends after the declared number of
/// records, or after the first error (the error is yielded once).
pub struct Records<'a> {
    inner: Inner<'a>,
    walk: Walk,
}

impl std::fmt::Debug for Records<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records")
            .field("total", &self.walk.total)
            .field("read", &self.walk.read)
            .field("done", &self.walk.done)
            .finish_non_exhaustive()
    }
}

impl<'a> Records<'a> {
    pub(crate) fn v2_borrowed(data: &'a [u8], count: u32, ctx: RecordContext) -> Self {
        Records {
            inner: Inner::V2Borrowed { data, ctx },
            walk: Walk::new(count),
        }
    }

    pub(crate) fn v2_owned(data: Vec<u8>, count: u32, ctx: RecordContext) -> Self {
        Records {
            inner: Inner::V2Owned { data, ctx },
            walk: Walk::new(count),
        }
    }

    pub(crate) fn list(records: Vec<Record<'a>>) -> Self {
        let total = u32::try_from(records.len()).unwrap_or(u32::MAX);
        Records {
            inner: Inner::List(records.into_iter()),
            walk: Walk::new(total),
        }
    }

    /// Number of records the batch declares (legacy: number of messages decoded).
    pub fn declared_count(&self) -> u32 {
        self.walk.total
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::V2Borrowed { data, ctx } => {
                let data: &'a [u8] = data;
                self.walk.next_with(data, ctx, decode_v2_record)
            }
            Inner::V2Owned { data, ctx } => self
                .walk
                .next_with(data, ctx, decode_v2_record)
                .map(|r| r.map(Record::into_owned).map_err(stream_error)),
            Inner::List(it) => self.walk.advance(|_| it.next().map(Ok)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.walk.size_hint()
    }
}

/// The error of a record read from a compressed batch's decompressed records. Kafka reads
/// those through the batch's stream iterator (`DefaultRecordBatch.StreamRecordIterator`),
/// which turns every `IllegalArgumentException` of `DefaultRecord.readFrom` into an
/// `InvalidRecordException` ("premature EOF"): there an over-long record length is an
/// invalid record, not the escaping exception of an uncompressed batch
/// (docs/kafka-behaviour.md#record-length-overlong). Every other error is kept.
fn stream_error(e: RecordError) -> RecordError {
    match e {
        RecordError::RecordLengthOverlong { position, index } => RecordError::invalid(
            position,
            format!(
                "incorrect declared batch size, premature EOF reached: the length of record {index} is a varint too long, the most significant bit in the 5th byte is set"
            ),
        ),
        e => e,
    }
}

/// Kafka's `DefaultRecordBatch.incrementSequence`: `sequence + increment`, wrapping past
/// `i32::MAX` to 0 (not to `i32::MIN`). Arithmetic wraps like Java's `int` for hostile
/// inputs instead of panicking.
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}
