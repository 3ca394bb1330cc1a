//! Record decoders: what Kafka's `DumpLogSegments` prints for the records of its internal
//! topics with `--offsets-decoder` (`__consumer_offsets`), `--transaction-log-decoder`
//! (`__transaction_state`), `--share-group-state-decoder` (`__share_group_state`),
//! `--cluster-metadata-decoder` (`__cluster_metadata`) and
//! `--remote-log-metadata-decoder` (`__remote_log_metadata`), and for KRaft control records,
//! which it always decodes (docs/format.md#coordinator-and-metadata-records).
//!
//! The schemas are a static table (`decode/schemas.rs`, written by
//! `xtask/kafka/gen_dump_schemas.py` from the message definitions of Kafka 4.4); the
//! reader (`decode/schema.rs`) renders each message as Kafka's generated JSON converters do, and
//! this module adds what the tool itself does around them: the `{"type":..,"data":..}` and
//! `{"version":..,"data":..}` envelopes, `<DELETE>` for a tombstone, the consumer protocol
//! inside group metadata, the transaction state names, and its error lines.

mod json;
mod schema;
#[rustfmt::skip]
#[allow(clippy::all)]
mod schemas;

pub use json::Json;

use crate::dump::text::push_int;
use schema::{read_message, unbase64, ConsumerProtocol, Msg, ReadError, Reader, Rewrite};
use serde::Serialize;

/// A `--*-decoder` option of Kafka's tool: how record keys and values are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decoder {
    /// `--offsets-decoder`: `__consumer_offsets` (group coordinator records).
    Offsets,
    /// `--transaction-log-decoder`: `__transaction_state`.
    TransactionLog,
    /// `--cluster-metadata-decoder`: `__cluster_metadata` (KRaft metadata records).
    ClusterMetadata,
    /// `--share-group-state-decoder`: `__share_group_state`.
    ShareGroupState,
    /// `--remote-log-metadata-decoder`: `__remote_log_metadata` (the records of
    /// `TopicBasedRemoteLogMetadataManager`), printed as Kafka's tool prints them: the
    /// Java `toString()` of the metadata objects.
    RemoteLogMetadata,
}

/// A printed key or payload: text (the record's bytes as UTF-8, or one of the tool's own
/// lines such as `<DELETE>`), or a decoded record as JSON. In `--json` output, text is a
/// JSON string and a decoded record a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Text.
    Text(String),
    /// A decoded record.
    Json(Json),
}

impl Content {
    /// The JSON value, for a decoded record.
    pub fn as_json(&self) -> Option<&Json> {
        match self {
            Content::Json(j) => Some(j),
            Content::Text(_) => None,
        }
    }
}

impl From<String> for Content {
    fn from(s: String) -> Self {
        Content::Text(s)
    }
}

impl Serialize for Content {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Text(t) => s.serialize_str(t),
            Content::Json(j) => j.serialize(s),
        }
    }
}

/// What a decoder prints for one record: its key and payload parts, either absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedRecord {
    /// Printed after `key: `.
    pub key: Option<Content>,
    /// Printed after `payload: `.
    pub payload: Option<Content>,
}

/// Decodes one (non-control) record's key and value as `decoder` says.
///
/// # Errors
/// A coordinator record without a key: Kafka's tool stops there with
/// `Failed to decode message at offset N using the specified decoder (message had a
/// missing key)`, the text of the error.
pub fn decode_record(
    decoder: Decoder,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<DecodedRecord, String> {
    match decoder {
        Decoder::ClusterMetadata => Ok(DecodedRecord {
            key: None,
            payload: Some(metadata(offset, value)),
        }),
        Decoder::RemoteLogMetadata => Ok(DecodedRecord {
            key: None,
            payload: Some(Content::Text(match value.map(|v| remote_log_metadata(Some(v))) {
                Some(Ok(s)) => s,
                Some(Err(e)) => format!("Error at offset {offset}, skipping. {e}"),
                // The JVM's message for the null value Kafka's parser dereferences.
                None => format!("Error at offset {offset}, skipping. Cannot invoke \"java.nio.ByteBuffer.remaining()\" because the return value of \"org.apache.kafka.common.record.internal.Record.value()\" is null"),
            })),
        }),
        coordinator => {
            let Some(key) = key else {
                return Err(format!("Failed to decode message at offset {offset} using the specified decoder (message had a missing key)"));
            };
            Ok(coordinator_record(coordinator, offset, key, value))
        }
    }
}

/// Appends to `out` what a text line prints for one (non-control) record's key and
/// payload, ` key: …` and ` payload: …` (each only when [`decode_record`] gives it), the
/// same text as [`decode_record`]'s parts rendered for a text line (a decoded record
/// through [`crate::dump::text::json_inert`], a line of text through
/// [`crate::dump::text::escape`]), written straight from the record's bytes: no [`Json`]
/// tree, no string per field.
///
/// # Errors
/// As [`decode_record`]; `out` is then unchanged.
pub(crate) fn write_record_text(
    decoder: Decoder,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    out: &mut String,
) -> Result<(), String> {
    let text = |out: &mut String, label: &str, t: &str| {
        out.push_str(label);
        out.push_str(&super::text::escape(t));
    };
    match decoder {
        Decoder::ClusterMetadata => {
            let mark = out.len();
            let written = framed_with(value, schemas::METADATA, |msg, version, r| {
                out.push_str(" payload: {\"type\":\"");
                push_metadata_type(out, msg);
                out.push_str("\",\"version\":");
                push_int(out, version.into());
                out.push_str(",\"data\":");
                schema::write_message(msg, version, r, out, Rewrite::Plain)?;
                out.push('}');
                Ok(())
            });
            if let Err(e) = written {
                out.truncate(mark);
                text(
                    out,
                    " payload: ",
                    &format!("Error at {offset}, skipping. {e}"),
                );
            }
            Ok(())
        }
        Decoder::RemoteLogMetadata => {
            // Java `toString()`s of a few objects: through the decoded record.
            let d = decode_record(decoder, offset, key, value)?;
            if let Some(Content::Text(t)) = &d.payload {
                text(out, " payload: ", t);
            }
            Ok(())
        }
        coordinator => {
            let Some(key) = key else {
                return Err(format!("Failed to decode message at offset {offset} using the specified decoder (message had a missing key)"));
            };
            write_coordinator_record(coordinator, offset, key, value, out);
            Ok(())
        }
    }
}

/// [`coordinator_record`], written to `out` as [`write_record_text`] writes it.
fn write_coordinator_record(
    decoder: Decoder,
    offset: i64,
    key: &[u8],
    value: Option<&[u8]>,
    out: &mut String,
) {
    let mark = out.len();
    let error = |out: &mut String, reason: String| {
        out.truncate(mark);
        out.push_str(" key: ");
        out.push_str(&super::text::escape(&format!(
            "Error at offset {offset}, skipping. {reason}"
        )));
    };
    let mut kr = Reader::new(key);
    let Ok(ty) = kr.i16() else {
        return error(out, "Could not read version from key's buffer.".into());
    };
    let Some((key_msg, value_msg)) = coordinator_types(decoder, ty) else {
        out.push_str(" key: ");
        out.push_str(&super::text::escape(&format!(
            "Unknown record type {ty} at offset {offset}, skipping."
        )));
        return;
    };
    out.push_str(" key: {\"type\":\"");
    push_int(out, key_msg.api_key.into());
    out.push_str("\",\"data\":");
    if let Err(e) = schema::write_message(key_msg, 0, &mut kr, out, Rewrite::Plain) {
        return error(out, read_failure(ty, "key", &e));
    }
    out.push('}');
    let Some(value) = value else {
        out.push_str(" payload: <DELETE>");
        return;
    };
    let mut vr = Reader::new(value);
    let Ok(version) = vr.i16() else {
        return error(out, "Could not read version from value's buffer.".into());
    };
    if !value_msg.is_valid(version) {
        return error(
            out,
            format!("Found an unknown record version {version} for {ty} type"),
        );
    }
    out.push_str(" payload: {\"version\":\"");
    push_int(out, version.into());
    out.push_str("\",\"data\":");
    let rewrite = match (decoder, ty) {
        (Decoder::Offsets, 2) => Rewrite::GroupMetadata(ConsumerProtocol {
            subscription: &schemas::CONSUMER_PROTOCOL_SUBSCRIPTION,
            assignment: &schemas::CONSUMER_PROTOCOL_ASSIGNMENT,
        }),
        (Decoder::TransactionLog, 0) => Rewrite::TransactionLog,
        _ => Rewrite::Plain,
    };
    if let Err(e) = schema::write_message(value_msg, version, &mut vr, out, rewrite) {
        return error(out, read_failure(version, "value", &e));
    }
    out.push('}');
}

/// The coordinator record types of a decoder (type id → key and value schemas).
fn coordinator_types(decoder: Decoder, ty: i16) -> Option<(&'static Msg, &'static Msg)> {
    use schemas::*;
    Some(match (decoder, ty) {
        (Decoder::Offsets, 0) => (&LEGACY_OFFSET_COMMIT_KEY, &LEGACY_OFFSET_COMMIT_VALUE),
        (Decoder::Offsets, 1) => (&OFFSET_COMMIT_KEY, &OFFSET_COMMIT_VALUE),
        (Decoder::Offsets, 2) => (&GROUP_METADATA_KEY, &GROUP_METADATA_VALUE),
        (Decoder::Offsets, 3) => (&CONSUMER_GROUP_METADATA_KEY, &CONSUMER_GROUP_METADATA_VALUE),
        (Decoder::Offsets, 4) => (
            &CONSUMER_GROUP_PARTITION_METADATA_KEY,
            &CONSUMER_GROUP_PARTITION_METADATA_VALUE,
        ),
        (Decoder::Offsets, 5) => (
            &CONSUMER_GROUP_MEMBER_METADATA_KEY,
            &CONSUMER_GROUP_MEMBER_METADATA_VALUE,
        ),
        (Decoder::Offsets, 6) => (
            &CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
            &CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
        ),
        (Decoder::Offsets, 7) => (
            &CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
            &CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
        ),
        (Decoder::Offsets, 8) => (
            &CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
            &CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
        ),
        (Decoder::Offsets, 10) => (
            &SHARE_GROUP_MEMBER_METADATA_KEY,
            &SHARE_GROUP_MEMBER_METADATA_VALUE,
        ),
        (Decoder::Offsets, 11) => (&SHARE_GROUP_METADATA_KEY, &SHARE_GROUP_METADATA_VALUE),
        (Decoder::Offsets, 12) => (
            &SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
            &SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
        ),
        (Decoder::Offsets, 13) => (
            &SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
            &SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
        ),
        (Decoder::Offsets, 14) => (
            &SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
            &SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
        ),
        (Decoder::Offsets, 15) => (
            &SHARE_GROUP_STATE_PARTITION_METADATA_KEY,
            &SHARE_GROUP_STATE_PARTITION_METADATA_VALUE,
        ),
        (Decoder::Offsets, 16) => (
            &CONSUMER_GROUP_REGULAR_EXPRESSION_KEY,
            &CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE,
        ),
        (Decoder::Offsets, 17) => (&STREAMS_GROUP_METADATA_KEY, &STREAMS_GROUP_METADATA_VALUE),
        (Decoder::Offsets, 19) => (
            &STREAMS_GROUP_MEMBER_METADATA_KEY,
            &STREAMS_GROUP_MEMBER_METADATA_VALUE,
        ),
        (Decoder::Offsets, 20) => (
            &STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
            &STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
        ),
        (Decoder::Offsets, 21) => (
            &STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
            &STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
        ),
        (Decoder::Offsets, 22) => (
            &STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
            &STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
        ),
        (Decoder::Offsets, 23) => (&STREAMS_GROUP_TOPOLOGY_KEY, &STREAMS_GROUP_TOPOLOGY_VALUE),
        (Decoder::TransactionLog, 0) => (&TRANSACTION_LOG_KEY, &TRANSACTION_LOG_VALUE),
        (Decoder::ShareGroupState, 0) => (&SHARE_SNAPSHOT_KEY, &SHARE_SNAPSHOT_VALUE),
        (Decoder::ShareGroupState, 1) => (&SHARE_UPDATE_KEY, &SHARE_UPDATE_VALUE),
        _ => return None,
    })
}

/// Kafka's `CoordinatorRecordMessageParser.parse`: the key is an int16 record type and
/// the key message (read at version 0); the value an int16 version and the value message.
fn coordinator_record(
    decoder: Decoder,
    offset: i64,
    key: &[u8],
    value: Option<&[u8]>,
) -> DecodedRecord {
    let error = |reason: String| DecodedRecord {
        key: Some(Content::Text(format!(
            "Error at offset {offset}, skipping. {reason}"
        ))),
        payload: None,
    };
    let mut kr = Reader::new(key);
    let Ok(ty) = kr.i16() else {
        return error("Could not read version from key's buffer.".into());
    };
    let Some((key_msg, value_msg)) = coordinator_types(decoder, ty) else {
        return DecodedRecord {
            key: Some(Content::Text(format!(
                "Unknown record type {ty} at offset {offset}, skipping."
            ))),
            payload: None,
        };
    };
    let key_json = match read_message(key_msg, 0, &mut kr) {
        Ok(j) => j,
        Err(e) => return error(read_failure(ty, "key", &e)),
    };
    let key_out = Json::Object(vec![
        ("type".into(), Json::Str(key_msg.api_key.to_string())),
        ("data".into(), key_json),
    ]);
    let Some(value) = value else {
        return DecodedRecord {
            key: Some(Content::Json(key_out)),
            payload: Some(Content::Text("<DELETE>".into())),
        };
    };
    let mut vr = Reader::new(value);
    let Ok(version) = vr.i16() else {
        return error("Could not read version from value's buffer.".into());
    };
    if !value_msg.is_valid(version) {
        return error(format!(
            "Found an unknown record version {version} for {ty} type"
        ));
    }
    let mut data = match read_message(value_msg, version, &mut vr) {
        Ok(j) => j,
        Err(e) => return error(read_failure(version, "value", &e)),
    };
    match (decoder, ty) {
        (Decoder::Offsets, 2) => consumer_protocol(&mut data),
        (Decoder::TransactionLog, 0) => transaction_status(&mut data),
        _ => {}
    }
    DecodedRecord {
        key: Some(Content::Json(key_out)),
        payload: Some(Content::Json(Json::Object(vec![
            ("version".into(), Json::Str(version.to_string())),
            ("data".into(), data),
        ]))),
    }
}

fn read_failure(version: i16, what: &str, e: &ReadError) -> String {
    format!("Could not read record with version {version} from {what}'s buffer due to: {e}.")
}

/// Group metadata of protocol type `consumer`: each member's `subscription` and
/// `assignment` bytes are the consumer protocol's own messages (an int16 version, then
/// the message); decoded when they can be, left as base64 when not (as Kafka does).
fn consumer_protocol(data: &mut Json) {
    if data.get("protocolType") != Some(&Json::Str("consumer".into())) {
        return;
    }
    let Json::Object(fields) = data else {
        return;
    };
    let Some((_, Json::Array(members))) = fields.iter_mut().find(|(k, _)| k == "members") else {
        return;
    };
    for member in members {
        for (field, msg) in [
            ("subscription", &schemas::CONSUMER_PROTOCOL_SUBSCRIPTION),
            ("assignment", &schemas::CONSUMER_PROTOCOL_ASSIGNMENT),
        ] {
            let Some(Json::Str(b64)) = member.get(field) else {
                continue;
            };
            let Some(bytes) = unbase64(b64) else {
                continue;
            };
            let mut r = Reader::new(&bytes);
            let Ok(version) = r.i16() else {
                continue;
            };
            if let Ok(decoded) = read_message(msg, version, &mut r) {
                member.put(field, decoded);
            }
        }
    }
}

/// Kafka's transaction state names (`TransactionState.stateName`), by id.
const TRANSACTION_STATES: [&str; 8] = [
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
];

/// `transactionStatus` by name (the id as text when it has none).
fn transaction_status(data: &mut Json) {
    if let Some(Json::Int(id)) = data.get("transactionStatus") {
        let name = usize::try_from(*id)
            .ok()
            .and_then(|i| TRANSACTION_STATES.get(i))
            .map_or_else(|| id.to_string(), |s| (*s).to_string());
        data.put("transactionStatus", Json::Str(name));
    }
}

/// `MetadataRecordType`'s name for a schema name: `TopicRecord` → `TOPIC_RECORD`.
fn screaming(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    push_screaming(&mut out, name);
    out
}

/// Appends [`screaming`] of a metadata record's schema name to `out` (computed once per
/// schema of [`schemas::METADATA`]).
fn push_metadata_type(out: &mut String, msg: &Msg) {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        schemas::METADATA
            .iter()
            .map(|m| screaming(m.name))
            .collect()
    });
    match schemas::METADATA
        .iter()
        .position(|m| std::ptr::eq(*m, msg))
        .and_then(|i| names.get(i))
    {
        Some(name) => out.push_str(name),
        None => push_screaming(out, msg.name),
    }
}

/// Appends [`screaming`]'s text to `out`.
fn push_screaming(out: &mut String, name: &str) {
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(c.to_ascii_uppercase());
    }
}

/// Kafka's `AbstractApiMessageSerde.read`: an unsigned-varint frame version (1), api key
/// and version, then the record from `table`; nothing may follow it. The error is the
/// message of Kafka's exception.
fn framed(
    value: Option<&[u8]>,
    table: &[&'static Msg],
) -> Result<(&'static Msg, i16, Json), String> {
    framed_with(value, table, |msg, version, r| {
        read_message(msg, version, r)
    })
}

/// [`framed`], the record read by `read` (given its schema and version).
fn framed_with<T>(
    value: Option<&[u8]>,
    table: &[&'static Msg],
    read: impl FnOnce(&'static Msg, i16, &mut Reader<'_>) -> Result<T, ReadError>,
) -> Result<(&'static Msg, i16, T), String> {
    // Kafka reads a null value as an empty one that fails at once.
    let mut r = Reader::new(value.unwrap_or_default());
    // Kafka's `unsignedIntToShort`: an int above 32767 is refused, a negative one (a
    // 5-byte varint) is cut to its low 16 bits.
    let short = |r: &mut Reader<'_>, what: &str| -> Result<i16, String> {
        let v = r
            .uvarint()
            .map_err(|_| format!("Error while reading {what}"))?;
        if v > i32::from(i16::MAX) {
            return Err(format!("Value for {what} was too large."));
        }
        Ok(v as i16)
    };
    let frame = short(&mut r, "frame version")?;
    if frame == 0 {
        return Err("Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.".into());
    }
    if frame != 1 {
        return Err(format!("Could not deserialize metadata record due to unknown frame version {frame}(only frame version 1 is supported)"));
    }
    let api_key = short(&mut r, "type")?;
    let version = short(&mut r, "version")?;
    let Some(msg) = table.iter().copied().find(|m| m.api_key == api_key) else {
        return Err(format!(
            "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}"
        ));
    };
    let data = read(msg, version, &mut r)
        .map_err(|_| format!("Failed to deserialize record with type {api_key}"))?;
    if r.remaining() > 0 {
        return Err(format!(
            "Found {} byte(s) of garbage after {api_key}",
            r.remaining()
        ));
    }
    Ok((msg, version, data))
}

/// Kafka's `ClusterMetadataLogMessageParser`: `{"type":NAME,"version":N,"data":{..}}`.
fn metadata(offset: i64, value: Option<&[u8]>) -> Content {
    match framed(value, schemas::METADATA) {
        Ok((msg, version, data)) => Content::Json(Json::Object(vec![
            ("type".into(), Json::Str(screaming(msg.name))),
            ("version".into(), Json::Int(version.into())),
            ("data".into(), data),
        ])),
        Err(e) => Content::Text(format!("Error at {offset}, skipping. {e}")),
    }
}

/// The remote log metadata record schemas, by api key.
static REMOTE: [&Msg; 4] = [
    &schemas::REMOTE_LOG_SEGMENT_METADATA_RECORD,
    &schemas::REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD,
    &schemas::REMOTE_PARTITION_DELETE_METADATA_RECORD,
    &schemas::REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD,
];

/// Kafka's `RemoteMetadataLogMessageParser`: the record read as Kafka's
/// `RemoteLogMetadataSerde` does, printed as the `toString()` of the object it builds
/// (`RemoteLogSegmentMetadata{..}`, `RemoteLogSegmentMetadataUpdate{..}`,
/// `RemotePartitionDeleteMetadata{..}`, `RemoteLogSegmentMetadataSnapshot{..}`); the
/// error is the message of the exception Kafka's constructors throw.
fn remote_log_metadata(value: Option<&[u8]>) -> Result<String, String> {
    let (msg, _, d) = framed(value, &REMOTE)?;
    let int = |j: &Json, k: &str| match j.get(k) {
        Some(Json::Int(i)) => *i,
        _ => 0,
    };
    let text = |j: &Json, k: &str| match j.get(k) {
        Some(Json::Str(s)) => s.clone(),
        _ => String::new(),
    };
    let tip = |j: &Json| {
        let t = j.get("topicIdPartition").cloned().unwrap_or(Json::Null);
        format!(
            "{}:{}-{}",
            text(&t, "id"),
            text(&t, "name"),
            int(&t, "partition")
        )
    };
    let segment_id = |j: &Json| {
        let id = j.get("remoteLogSegmentId").cloned().unwrap_or(Json::Null);
        format!(
            "RemoteLogSegmentId{{topicIdPartition={}, id={}}}",
            tip(&id),
            text(&id, "id")
        )
    };
    let custom = |j: &Json| match j.get("customMetadata") {
        Some(Json::Str(b64)) => format!(
            "Optional[CustomMetadata{{{} bytes}}]",
            unbase64(b64).map_or(0, |b| b.len())
        ),
        _ => "Optional.empty".to_string(),
    };
    // A Java map of leader epoch to start offset, sorted (a TreeMap; the last entry of an
    // epoch wins).
    let epochs = |j: &Json| -> Option<String> {
        let Some(Json::Array(items)) = j.get("segmentLeaderEpochs") else {
            return None;
        };
        let map: std::collections::BTreeMap<i64, i64> = items
            .iter()
            .map(|e| (int(e, "leaderEpoch"), int(e, "offset")))
            .collect();
        if map.is_empty() {
            return None;
        }
        let parts: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
        Some(format!("{{{}}}", parts.join(", ")))
    };
    let segment_state = |j: &Json| -> Option<&'static str> {
        match int(j, "remoteLogSegmentState") {
            0 => Some("COPY_SEGMENT_STARTED"),
            1 => Some("COPY_SEGMENT_FINISHED"),
            2 => Some("DELETE_SEGMENT_STARTED"),
            3 => Some("DELETE_SEGMENT_FINISHED"),
            _ => None,
        }
    };
    let txn_empty = |j: &Json| matches!(j.get("txnIndexEmpty"), Some(Json::Bool(true)));
    const NO_EPOCHS: &str = "segmentLeaderEpochs can not be null or empty";
    const NO_STATE: &str = "state can not be null";
    Ok(match msg.api_key {
        0 => {
            let (start, end) = (int(&d, "startOffset"), int(&d, "endOffset"));
            if start < 0 {
                return Err(format!("Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative"));
            }
            if end < start {
                return Err(format!("Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than startOffset = {start}"));
            }
            let epochs = epochs(&d).ok_or(NO_EPOCHS)?;
            let state = segment_state(&d).ok_or(NO_STATE)?;
            format!(
                "RemoteLogSegmentMetadata{{remoteLogSegmentId={}, startOffset={start}, endOffset={end}, brokerId={}, maxTimestampMs={}, eventTimestampMs={}, segmentLeaderEpochs={epochs}, segmentSizeInBytes={}, customMetadata={}, state={state}, txnIdxEmpty={}}}",
                segment_id(&d),
                int(&d, "brokerId"),
                int(&d, "maxTimestampMs"),
                int(&d, "eventTimestampMs"),
                int(&d, "segmentSizeInBytes"),
                custom(&d),
                txn_empty(&d)
            )
        }
        1 => {
            let state = segment_state(&d).ok_or(NO_STATE)?;
            format!(
                "RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={}, customMetadata={}, state={state}, eventTimestampMs={}, brokerId={}}}",
                segment_id(&d),
                custom(&d),
                int(&d, "eventTimestampMs"),
                int(&d, "brokerId")
            )
        }
        2 => {
            let state = match int(&d, "remotePartitionDeleteState") {
                0 => "DELETE_PARTITION_MARKED",
                1 => "DELETE_PARTITION_STARTED",
                2 => "DELETE_PARTITION_FINISHED",
                // `Objects.requireNonNull(state)`: a NullPointerException without a message.
                _ => return Err("null".into()),
            };
            format!(
                "RemotePartitionDeleteMetadata{{topicPartition={}, state={state}, eventTimestampMs={}, brokerId={}}}",
                tip(&d),
                int(&d, "eventTimestampMs"),
                int(&d, "brokerId")
            )
        }
        _ => {
            let state = segment_state(&d).ok_or(NO_STATE)?;
            let epochs = epochs(&d).ok_or(NO_EPOCHS)?;
            format!(
                "RemoteLogSegmentMetadataSnapshot{{segmentId={}, startOffset={}, endOffset={}, maxTimestampMs={}, segmentLeaderEpochs={epochs}, segmentSizeInBytes={}, customMetadata={}, state={state}, txnIdxEmpty={}}}",
                text(&d, "segmentId"),
                int(&d, "startOffset"),
                int(&d, "endOffset"),
                int(&d, "maxTimestampMs"),
                int(&d, "segmentSizeInBytes"),
                custom(&d),
                txn_empty(&d)
            )
        }
    })
}

/// A KRaft control record as Kafka's tool prints it after the record metadata: the label
/// (`LeaderChange:`, `SnapshotHeader`, `SnapshotFooter`, `KRaftVersion`, `KRaftVoters`)
/// and the record's JSON. The value is the message, read at version 0 as Kafka reads it.
/// `None` for other types (transaction markers, unknown types)
/// and for a value that cannot be read.
pub fn decode_control(type_id: i16, value: Option<&[u8]>) -> Option<(&'static str, Json)> {
    let (label, msg) = match type_id {
        2 => ("LeaderChange:", &schemas::LEADER_CHANGE_MESSAGE),
        3 => ("SnapshotHeader", &schemas::SNAPSHOT_HEADER_RECORD),
        4 => ("SnapshotFooter", &schemas::SNAPSHOT_FOOTER_RECORD),
        5 => ("KRaftVersion", &schemas::K_RAFT_VERSION_RECORD),
        6 => ("KRaftVoters", &schemas::VOTERS_RECORD),
        _ => return None,
    };
    // The value is the message itself (its first field is its own int16 version), which
    // Kafka's ControlRecordUtils reads at version 0 whatever that field says. Kafka then
    // writes the JSON at the field's version; every control record Kafka 4.4 writes is a
    // version 0 one, and version 0 is what is rendered here.
    let json = read_message(msg, 0, &mut Reader::new(value?)).ok()?;
    Some((label, json))
}

#[cfg(test)]
// Tests may unwrap, index and panic: a panic is how a test reports a failure.
#[allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]
mod tests {
    use super::*;

    /// Arbitrary bytes never panic, and every decoder answers (a record, or a line of
    /// text); the inputs start with each valid type and version so that the readers get
    /// past the headers.
    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..20_000u32 {
            let len = (next() % 48) as usize;
            let mut key: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let mut value: Vec<u8> = (0..(next() % 96) as usize).map(|_| next() as u8).collect();
            let ty = (round % 25) as u8;
            if key.len() >= 2 {
                key[0] = 0;
                key[1] = ty;
            }
            if value.len() >= 2 {
                value[0] = 0;
                value[1] = (round % 5) as u8;
            }
            for decoder in [
                Decoder::Offsets,
                Decoder::TransactionLog,
                Decoder::ShareGroupState,
            ] {
                let d = decode_record(decoder, 1, Some(&key), Some(&value)).unwrap();
                assert!(d.key.is_some());
                same_text(decoder, Some(&key), Some(&value));
                same_text(decoder, Some(&key), None);
            }
            let mut meta = value.clone();
            if meta.len() >= 3 {
                meta[0] = 1;
                meta[1] = (round % 30) as u8;
                meta[2] = (round % 3) as u8;
            }
            let d = decode_record(Decoder::ClusterMetadata, 1, None, Some(&meta)).unwrap();
            assert!(d.payload.is_some());
            same_text(Decoder::ClusterMetadata, None, Some(&meta));
            if meta.len() >= 3 {
                meta[1] = (round % 5) as u8;
                meta[2] = 0;
            }
            let d = decode_record(Decoder::RemoteLogMetadata, 1, None, Some(&meta)).unwrap();
            assert!(d.payload.is_some());
            let _ = decode_control((round % 8) as i16, Some(&value));
        }
    }

    /// What a text line prints after the record's metadata, from the decoded record.
    fn from_tree(d: &DecodedRecord) -> String {
        use crate::dump::text::{escape, json_inert};
        let mut s = String::new();
        for (label, c) in [(" key: ", &d.key), (" payload: ", &d.payload)] {
            match c {
                Some(Content::Text(t)) => s = s + label + &escape(t),
                Some(Content::Json(j)) => s = s + label + &json_inert(&j.to_kafka_string()),
                None => {}
            }
        }
        s
    }

    /// [`write_record_text`] writes what the decoded record renders to.
    fn same_text(decoder: Decoder, key: Option<&[u8]>, value: Option<&[u8]>) {
        let mut direct = String::from("|");
        let tree = decode_record(decoder, 7, key, value);
        match (tree, write_record_text(decoder, 7, key, value, &mut direct)) {
            (Ok(d), Ok(())) => assert_eq!(
                direct.get(1..).unwrap(),
                from_tree(&d),
                "{decoder:?} {key:?} {value:?}"
            ),
            (Err(a), Err(b)) => {
                assert_eq!(a, b);
                assert_eq!(direct, "|");
            }
            (a, b) => panic!("{decoder:?} {key:?} {value:?}: {a:?} / {b:?}"),
        }
    }

    /// Valid records of every shape the decoders rewrite or reorder: tagged fields sent
    /// out of order, twice, at their default; group metadata with consumer protocol
    /// members (decodable and not); transaction states; strings a text line escapes.
    #[test]
    fn direct_text_is_the_trees_text() {
        let s16 = |v: &mut Vec<u8>, s: &[u8]| {
            v.extend_from_slice(&(s.len() as i16).to_be_bytes());
            v.extend_from_slice(s);
        };
        // OffsetCommitValue v4 (flexible, tagged topicId) with and without the tag.
        let key = [0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 2];
        for tags in [
            vec![0u8],
            {
                let mut t = vec![1, 0, 16];
                t.extend_from_slice(&[7; 16]);
                t
            },
            {
                let mut t = vec![1, 0, 16];
                t.extend_from_slice(&[0; 16]);
                t
            },
        ] {
            let mut value = vec![0, 4];
            value.extend_from_slice(&5i64.to_be_bytes());
            value.extend_from_slice(&(-1i32).to_be_bytes());
            value.extend_from_slice(&[3, b'm', 0x7f]); // compact string "m\x7f"
            value.extend_from_slice(&7i64.to_be_bytes());
            value.extend_from_slice(&tags);
            same_text(Decoder::Offsets, Some(&key), Some(&value));
        }
        // GroupMetadataValue v3 of protocol type `consumer` (and of another), one member
        // whose subscription decodes and whose assignment does not.
        for protocol in [
            &b"consumer"[..],
            b"connect",
            "c\u{200b}\u{85}\"\\\n".as_bytes(),
        ] {
            let mut v = vec![0, 3];
            s16(&mut v, protocol);
            v.extend_from_slice(&4i32.to_be_bytes());
            s16(&mut v, b"range");
            s16(&mut v, b"leader-1");
            v.extend_from_slice(&9i64.to_be_bytes());
            v.extend_from_slice(&1i32.to_be_bytes());
            s16(&mut v, b"member-1");
            v.extend_from_slice(&(-1i16).to_be_bytes()); // groupInstanceId null
            s16(&mut v, b"client\xff");
            s16(&mut v, b"/10.0.0.1");
            v.extend_from_slice(&30_000i32.to_be_bytes());
            v.extend_from_slice(&10_000i32.to_be_bytes());
            // Subscription v0: topics ["a", "b"], null user data.
            let mut sub = vec![0, 0, 0, 0, 0, 2];
            s16(&mut sub, b"a");
            s16(&mut sub, b"b");
            sub.extend_from_slice(&(-1i32).to_be_bytes());
            v.extend_from_slice(&(sub.len() as i32).to_be_bytes());
            v.extend_from_slice(&sub);
            v.extend_from_slice(&3i32.to_be_bytes());
            v.extend_from_slice(&[0, 0, 9]);
            same_text(Decoder::Offsets, Some(&[0, 2, 0, 1, b'g']), Some(&v));
        }
        // TransactionLogValue v0 of every state id and an unknown one.
        for state in [0u8, 3, 7, 8, 0x80] {
            let mut v = vec![0, 0];
            v.extend_from_slice(&5i64.to_be_bytes());
            v.extend_from_slice(&1i16.to_be_bytes());
            v.extend_from_slice(&60_000i32.to_be_bytes());
            v.push(state);
            v.extend_from_slice(&0i32.to_be_bytes());
            v.extend_from_slice(&1i64.to_be_bytes());
            v.extend_from_slice(&2i64.to_be_bytes());
            same_text(
                Decoder::TransactionLog,
                Some(&[0, 0, 0, 2, b't', b'x']),
                Some(&v),
            );
        }
        // PartitionChangeRecord v0: tagged fields sent out of order, one twice, one at its
        // default (leader -2), and an unknown tag.
        let mut v = vec![1, 5, 0];
        v.extend_from_slice(&3i32.to_be_bytes());
        v.extend_from_slice(&[1; 16]);
        v.push(5);
        v.extend_from_slice(&[1, 4, 0, 0, 0, 2]); // leader 2
        v.extend_from_slice(&[0, 5, 2, 0, 0, 0, 1, 0, 0, 0, 2]); // isr [1, 2]
        v.extend_from_slice(&[0, 5, 2, 0, 0, 0, 3, 0, 0, 0, 4]); // isr [3, 4]
        v.extend_from_slice(&[9, 1, 0]); // unknown tag
        v.extend_from_slice(&[5, 1, 0xff]); // leaderRecoveryState -1: its default
        same_text(Decoder::ClusterMetadata, None, Some(&v));
        // Trailing garbage, and a null value.
        v.push(0);
        same_text(Decoder::ClusterMetadata, None, Some(&v));
        same_text(Decoder::ClusterMetadata, None, None);
        same_text(Decoder::RemoteLogMetadata, None, Some(&v));
        // A missing key.
        same_text(Decoder::Offsets, None, Some(&v));
    }

    #[test]
    fn names() {
        assert_eq!(screaming("TopicRecord"), "TOPIC_RECORD");
        assert_eq!(
            screaming("ZkMigrationStateRecord"),
            "ZK_MIGRATION_STATE_RECORD"
        );
        assert_eq!(screaming("NoOpRecord"), "NO_OP_RECORD");
        assert_eq!(screaming("ClearElrRecord"), "CLEAR_ELR_RECORD");
    }

    #[test]
    fn offset_commit_v3_and_tombstone() {
        // Key: type 1, group "g", topic "t", partition 2.
        let key = [0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 2];
        let mut value = vec![0, 3];
        value.extend_from_slice(&5i64.to_be_bytes());
        value.extend_from_slice(&(-1i32).to_be_bytes());
        value.extend_from_slice(&[0, 0]);
        value.extend_from_slice(&7i64.to_be_bytes());
        let d = decode_record(Decoder::Offsets, 9, Some(&key), Some(&value)).unwrap();
        let text = |c: &Option<Content>| match c {
            Some(Content::Json(j)) => j.to_kafka_string(),
            Some(Content::Text(t)) => t.clone(),
            None => String::new(),
        };
        assert_eq!(
            text(&d.key),
            r#"{"type":"1","data":{"group":"g","topic":"t","partition":2}}"#
        );
        assert_eq!(
            text(&d.payload),
            r#"{"version":"3","data":{"offset":5,"leaderEpoch":-1,"metadata":"","commitTimestamp":7}}"#
        );
        let d = decode_record(Decoder::Offsets, 9, Some(&key), None).unwrap();
        assert_eq!(text(&d.payload), "<DELETE>");
        let d = decode_record(Decoder::Offsets, 9, Some(&[0, 99]), None).unwrap();
        assert_eq!(
            text(&d.key),
            "Unknown record type 99 at offset 9, skipping."
        );
        assert!(d.payload.is_none());
    }
}
