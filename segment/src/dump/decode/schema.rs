//! Kafka's message schemas as a static table, and the reader that turns a message's bytes
//! into the JSON Kafka's generated `*JsonConverter.write(message, version)` would print.
//!
//! The wire rules (docs/format.md#coordinator-and-metadata-records): big-endian integers;
//! below a message's first flexible version, strings have an int16 length, bytes and
//! arrays an int32 length, −1 meaning null; from it on, all three have an unsigned-varint
//! length plus one (0 meaning null), and every struct ends with a tagged-field section
//! (an unsigned-varint count, then per field its tag, its size and its bytes). A field
//! that the version does not have is absent.
//!
//! The JSON rules: fields in declaration order; a field the version does not have is
//! left out; a tagged field is written only when its value differs from its default;
//! int64 and the other integers are JSON numbers, bytes are base64 (with padding), uuids
//! Kafka's base64url form (22 characters), null strings, bytes and arrays `null`.

use super::json::{java_double, write_str, Json};
use crate::dump::text::push_int;

/// The highest version (`N+` ranges end here).
pub(crate) const MAX: i16 = i16::MAX;

/// An inclusive version range; empty when `.0 > .1`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct V(pub i16, pub i16);

impl V {
    fn has(self, v: i16) -> bool {
        self.0 <= v && v <= self.1
    }
}

/// A field's type (the whole set of Kafka's message types; not every one occurs in the
/// schemas the decoders use).
#[derive(Debug)]
#[allow(dead_code)]
pub(crate) enum Ty {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Float64,
    Str,
    Bytes,
    Uuid,
    Array(&'static Ty),
    Struct(&'static [Field]),
}

/// A field's default (what a tagged field is compared with).
#[derive(Debug, Clone, Copy)]
#[allow(dead_code)]
pub(crate) enum Dflt {
    /// The type's own: 0, false, "", empty bytes and arrays, the zero uuid.
    Type,
    Null,
    Int(i64),
    Bool(bool),
    Str(&'static str),
}

/// One field of a struct.
#[derive(Debug)]
pub(crate) struct Field {
    /// The JSON name (the schema's name with its first letter in lower case).
    pub name: &'static str,
    pub ty: Ty,
    pub versions: V,
    pub nullable: V,
    /// `(tag, tagged versions)` of a tagged field.
    pub tag: Option<(u32, V)>,
    pub default: Dflt,
}

/// A message (record key, value, or data schema).
#[derive(Debug)]
pub(crate) struct Msg {
    pub name: &'static str,
    pub api_key: i16,
    pub valid: V,
    pub flexible: V,
    pub fields: &'static [Field],
}

impl Msg {
    /// Whether `version` is one of the message's valid versions.
    pub(crate) fn is_valid(&self, version: i16) -> bool {
        self.valid.has(version)
    }
}

/// Why bytes could not be read as a message. `Underflow` is Java's
/// `BufferUnderflowException`, whose message is `null`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadError {
    Underflow,
    Other(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Underflow => f.write_str("null"),
            ReadError::Other(s) => f.write_str(s),
        }
    }
}

/// A cursor over a message's bytes.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ReadError> {
        let end = self.pos.checked_add(n).ok_or(ReadError::Underflow)?;
        let s = self.buf.get(self.pos..end).ok_or(ReadError::Underflow)?;
        self.pos = end;
        Ok(s)
    }

    /// `n` bytes of a string or bytes field (Kafka's `readByteArray` and its message).
    fn byte_array(&mut self, n: usize) -> Result<&'a [u8], ReadError> {
        if n > self.remaining() {
            return Err(ReadError::Other(format!(
                "Error reading byte array of {n} byte(s): only {} byte(s) available",
                self.remaining()
            )));
        }
        self.take(n)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ReadError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub(crate) fn i8(&mut self) -> Result<i8, ReadError> {
        Ok(i8::from_be_bytes(self.array()?))
    }
    pub(crate) fn i16(&mut self) -> Result<i16, ReadError> {
        Ok(i16::from_be_bytes(self.array()?))
    }
    pub(crate) fn i32(&mut self) -> Result<i32, ReadError> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    pub(crate) fn i64(&mut self) -> Result<i64, ReadError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// Kafka's unsigned varint (`ByteUtils.readUnsignedVarint`), as the Java `int` it
    /// returns: at most 5 bytes; the 5th byte's bits go in whole (shifted by 28, its sign
    /// extended), so the result may be negative; a 5th byte with its top bit set is an
    /// error.
    pub(crate) fn uvarint(&mut self) -> Result<i32, ReadError> {
        let mut value: i32 = 0;
        for i in 0..4 {
            let b = self.array::<1>()?[0];
            value |= i32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        let b = self.array::<1>()?[0] as i8;
        value |= i32::from(b) << 28;
        if b < 0 {
            return Err(ReadError::Other(format!(
                "Varint is too long, the most significant bit in the 5th byte is set, converted value: {value:x}"
            )));
        }
        Ok(value)
    }
}

/// Reads `msg` at `version` and renders it as its JSON converter does.
pub(crate) fn read_message(msg: &Msg, version: i16, r: &mut Reader<'_>) -> Result<Json, ReadError> {
    read_struct(msg.fields, version, msg.flexible.has(version), r)
}

fn read_struct(
    fields: &[Field],
    version: i16,
    flexible: bool,
    r: &mut Reader<'_>,
) -> Result<Json, ReadError> {
    let tagged_fields = flexible
        && fields
            .iter()
            .any(|f| f.tag.is_some_and(|(_, tv)| tv.has(version)));
    if !tagged_fields {
        // The common case: the fields in order, straight into the object; a tagged field
        // in the buffer is none of this version's, so it is skipped as below.
        let mut out = Vec::with_capacity(fields.len());
        for f in fields.iter().filter(|f| f.versions.has(version)) {
            let v = read_value(f, &f.ty, f.nullable.has(version), version, flexible, r)?;
            out.push((std::borrow::Cow::Borrowed(f.name), v));
        }
        if flexible {
            for _ in 0..r.uvarint()?.max(0) {
                r.uvarint()?;
                let size = usize::try_from(r.uvarint()?).map_err(|_| ReadError::Underflow)?;
                r.take(size)?;
            }
        }
        return Ok(Json::Object(out));
    }
    let mut values: Vec<Option<Json>> = Vec::with_capacity(fields.len());
    for f in fields {
        let tagged = f.tag.is_some_and(|(_, tv)| tv.has(version));
        if tagged || !f.versions.has(version) {
            values.push(None);
            continue;
        }
        values.push(Some(read_value(
            f,
            &f.ty,
            f.nullable.has(version),
            version,
            flexible,
            r,
        )?));
    }
    if flexible {
        let count = r.uvarint()?;
        for _ in 0..count.max(0) {
            let tag = r.uvarint()? as u32;
            let size = usize::try_from(r.uvarint()?).map_err(|_| ReadError::Underflow)?;
            let bytes = r.take(size)?;
            let hit = fields.iter().position(|f| {
                f.tag
                    .is_some_and(|(t, tv)| t == tag && tv.has(version) && f.versions.has(version))
            });
            if let (Some(i), Some(f)) = (hit, hit.and_then(|i| fields.get(i))) {
                let mut sub = Reader::new(bytes);
                let v = read_value(
                    f,
                    &f.ty,
                    f.nullable.has(version),
                    version,
                    flexible,
                    &mut sub,
                )?;
                if let Some(slot) = values.get_mut(i) {
                    *slot = (v != default_json(f)).then_some(v);
                }
            }
        }
    }
    Ok(Json::Object(
        fields
            .iter()
            .zip(values)
            .filter_map(|(f, v)| v.map(|v| (std::borrow::Cow::Borrowed(f.name), v)))
            .collect(),
    ))
}

fn non_nullable(f: &Field) -> ReadError {
    ReadError::Other(format!(
        "non-nullable field {} was serialized as null",
        f.name
    ))
}

/// A length prefix: `None` for null.
fn length(r: &mut Reader<'_>, flexible: bool, short: bool) -> Result<Option<usize>, ReadError> {
    if flexible {
        // A length of 0 (and, as in Kafka, anything that wraps below it) is null.
        let n = r.uvarint()?.wrapping_sub(1);
        Ok(usize::try_from(n).ok())
    } else {
        let n = if short { i32::from(r.i16()?) } else { r.i32()? };
        Ok(usize::try_from(n).ok())
    }
}

/// Reads one value of `ty`: the field `f` itself (`nullable` as its versions say), or
/// an element of its array (`nullable` false: elements are never null).
fn read_value(
    f: &Field,
    ty: &Ty,
    nullable: bool,
    version: i16,
    flexible: bool,
    r: &mut Reader<'_>,
) -> Result<Json, ReadError> {
    Ok(match ty {
        Ty::Bool => Json::Bool(r.i8()? != 0),
        Ty::Int8 => Json::Int(r.i8()?.into()),
        Ty::Int16 => Json::Int(r.i16()?.into()),
        Ty::Uint16 => Json::Int(i64::from(r.i16()? as u16)),
        Ty::Int32 => Json::Int(r.i32()?.into()),
        Ty::Uint32 => Json::Int(i64::from(r.i32()? as u32)),
        Ty::Int64 => Json::Int(r.i64()?),
        Ty::Float64 => Json::Float(f64::from_be_bytes(r.array()?)),
        Ty::Uuid => Json::Str(uuid_string(&r.array::<16>()?)),
        Ty::Str => match length(r, flexible, true)? {
            None if nullable => Json::Null,
            None => return Err(non_nullable(f)),
            Some(n) => {
                if n > 0x7fff {
                    return Err(ReadError::Other(format!(
                        "string field {} had invalid length {n}",
                        f.name
                    )));
                }
                Json::Str(String::from_utf8_lossy(r.byte_array(n)?).into_owned())
            }
        },
        Ty::Bytes => match length(r, flexible, false)? {
            None if nullable => Json::Null,
            None => return Err(non_nullable(f)),
            Some(n) => Json::Str(base64(r.byte_array(n)?, false)),
        },
        Ty::Array(elem) => match length(r, flexible, false)? {
            None if nullable => Json::Null,
            None => return Err(non_nullable(f)),
            Some(n) => {
                if n > r.remaining() {
                    return Err(ReadError::Other(format!(
                        "Tried to allocate a collection of size {n}, but there are only {} bytes remaining.",
                        r.remaining()
                    )));
                }
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(read_value(f, elem, false, version, flexible, r)?);
                }
                Json::Array(items)
            }
        },
        Ty::Struct(fields) => {
            if nullable && r.i8()? < 0 {
                Json::Null
            } else {
                read_struct(fields, version, flexible, r)?
            }
        }
    })
}

/// The consumer protocol's messages: what a consumer group member's `subscription` and
/// `assignment` bytes hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConsumerProtocol {
    pub subscription: &'static Msg,
    pub assignment: &'static Msg,
}

/// The tool's own rewrites of a decoded value, which [`write_message`] makes as it
/// writes (what `consumer_protocol` and `transaction_status` in `decode/mod.rs` do to a
/// [`Json`] tree).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rewrite {
    /// None.
    Plain,
    /// `GroupMetadataValue`: with protocol type `consumer`, each member's `subscription`
    /// and `assignment` decoded as the consumer protocol's messages when they can be.
    GroupMetadata(ConsumerProtocol),
    /// `TransactionLogValue`: `transactionStatus` by name.
    TransactionLog,
}

/// Where a value is written (which rewrite applies to it).
#[derive(Debug, Clone, Copy)]
enum At {
    /// The message's own fields.
    Top(Rewrite),
    /// Inside the `members` of a consumer group's metadata.
    ConsumerMembers(ConsumerProtocol),
    /// Anywhere else.
    Inner,
}

/// Reads `msg` at `version` and appends the text Kafka's tool prints for it to `out`, as
/// [`read_message`] then [`Json::write`] with `inert` would, with `rewrite` applied: no
/// tree, no string per field. On an error `out` holds a partial text, which the caller
/// cuts off.
pub(crate) fn write_message(
    msg: &Msg,
    version: i16,
    r: &mut Reader<'_>,
    out: &mut String,
    rewrite: Rewrite,
) -> Result<(), ReadError> {
    write_struct(
        msg.fields,
        version,
        msg.flexible.has(version),
        r,
        out,
        At::Top(rewrite),
    )
}

/// `"name":`.
fn write_name(out: &mut String, name: &str) {
    out.push('"');
    out.push_str(name);
    out.push_str("\":");
}

/// The most fields a struct written by [`write_struct`] with its tagged fields in place
/// may have (Kafka's messages have at most 14); a wider one goes through the tree.
const MAX_FIELDS: usize = 64;

fn write_struct(
    fields: &[Field],
    version: i16,
    flexible: bool,
    r: &mut Reader<'_>,
    out: &mut String,
    at: At,
) -> Result<(), ReadError> {
    let tagged_fields = flexible
        && fields
            .iter()
            .any(|f| f.tag.is_some_and(|(_, tv)| tv.has(version)));
    if tagged_fields && fields.len() > MAX_FIELDS {
        read_struct(fields, version, flexible, r)?.write(out, true);
        return Ok(());
    }
    out.push('{');
    let open = out.len();
    // With protocol type `consumer` (known before `members`, which follows it).
    let mut consumer = false;
    // Per field: where a tagged field of this version goes in `out`, and the range of
    // its text in `sent` when it was sent with a value other than its default (a field
    // sent twice: the last wins).
    let mut places = [usize::MAX; MAX_FIELDS];
    let mut ranges: [Option<(usize, usize)>; MAX_FIELDS] = [None; MAX_FIELDS];
    for (i, f) in fields.iter().enumerate() {
        if tagged_fields && f.tag.is_some_and(|(_, tv)| tv.has(version)) {
            if let (true, Some(p)) = (f.versions.has(version), places.get_mut(i)) {
                *p = out.len();
            }
            continue;
        }
        if !f.versions.has(version) {
            continue;
        }
        // Every field is written after a comma; the object's first one is cut below.
        out.push(',');
        write_name(out, f.name);
        let start = out.len();
        let inner = match at {
            At::Top(Rewrite::GroupMetadata(p)) if consumer && f.name == "members" => {
                At::ConsumerMembers(p)
            }
            At::Top(Rewrite::TransactionLog) if f.name == "transactionStatus" => {
                if let Ty::Int8 = f.ty {
                    transaction_status(out, r.i8()?);
                    continue;
                }
                At::Inner
            }
            // A member's own fields (`subscription`, `assignment`).
            At::ConsumerMembers(p) => At::ConsumerMembers(p),
            _ => At::Inner,
        };
        write_value(
            f,
            &f.ty,
            f.nullable.has(version),
            version,
            flexible,
            r,
            out,
            inner,
        )?;
        if matches!(at, At::Top(Rewrite::GroupMetadata(_))) && f.name == "protocolType" {
            consumer = out.get(start..) == Some("\"consumer\"");
        }
    }
    if flexible {
        let count = r.uvarint()?;
        let mut sent = String::new();
        for _ in 0..count.max(0) {
            let tag = r.uvarint()? as u32;
            let size = usize::try_from(r.uvarint()?).map_err(|_| ReadError::Underflow)?;
            let bytes = r.take(size)?;
            if !tagged_fields {
                continue;
            }
            let hit = fields.iter().position(|f| {
                f.tag
                    .is_some_and(|(t, tv)| t == tag && tv.has(version) && f.versions.has(version))
            });
            if let (Some(i), Some(f)) = (hit, hit.and_then(|i| fields.get(i))) {
                let from = sent.len();
                sent.push(',');
                write_name(&mut sent, f.name);
                let value = sent.len();
                let mut sub = Reader::new(bytes);
                write_value(
                    f,
                    &f.ty,
                    f.nullable.has(version),
                    version,
                    flexible,
                    &mut sub,
                    &mut sent,
                    At::Inner,
                )?;
                // Written only when it differs from the default.
                let default = is_default(f, sent.get(value..).unwrap_or_default());
                if let Some(range) = ranges.get_mut(i) {
                    *range = (!default).then_some((from, sent.len()));
                }
            }
        }
        // Into their places, the last declared first so that each place stays valid.
        for (&place, range) in places.iter().zip(&ranges).rev() {
            if let Some(text) = range.and_then(|(a, b)| sent.get(a..b)) {
                if place <= out.len() {
                    out.insert_str(place, text);
                }
            }
        }
    }
    if out.as_bytes().get(open) == Some(&b',') {
        out.remove(open);
    }
    out.push('}');
    Ok(())
}

/// `transactionStatus` by name (the id as text when it has none).
fn transaction_status(out: &mut String, id: i8) {
    match usize::try_from(id)
        .ok()
        .and_then(|i| super::TRANSACTION_STATES.get(i))
    {
        Some(name) => write_str(out, name, true),
        None => {
            out.push('"');
            push_int(out, id.into());
            out.push('"');
        }
    }
}

/// Whether `text` (a tagged field's value as written) is its default's (see
/// [`default_json`]): the same answer as comparing the values, since no float64 field
/// is tagged.
fn is_default(f: &Field, text: &str) -> bool {
    match (f.default, &f.ty) {
        (Dflt::Null, _) | (Dflt::Type, Ty::Struct(_)) => text == "null",
        (Dflt::Bool(b), _) => text == if b { "true" } else { "false" },
        (Dflt::Int(i), Ty::Float64) => text == java_double(i as f64),
        (Dflt::Int(i), _) => text.parse::<i64>() == Ok(i),
        (Dflt::Str(d), _) => {
            let mut t = String::with_capacity(d.len() + 2);
            write_str(&mut t, d, true);
            text == t
        }
        (Dflt::Type, Ty::Bool) => text == "false",
        (Dflt::Type, Ty::Float64) => text == "0.0",
        (Dflt::Type, Ty::Str | Ty::Bytes) => text == "\"\"",
        (Dflt::Type, Ty::Uuid) => text == "\"AAAAAAAAAAAAAAAAAAAAAA\"",
        (Dflt::Type, Ty::Array(_)) => text == "[]",
        (Dflt::Type, _) => text == "0",
    }
}

/// Writes one value of `ty` (see [`read_value`]).
#[allow(clippy::too_many_arguments)]
fn write_value(
    f: &Field,
    ty: &Ty,
    nullable: bool,
    version: i16,
    flexible: bool,
    r: &mut Reader<'_>,
    out: &mut String,
    at: At,
) -> Result<(), ReadError> {
    match ty {
        Ty::Bool => out.push_str(if r.i8()? != 0 { "true" } else { "false" }),
        Ty::Int8 => push_int(out, r.i8()?.into()),
        Ty::Int16 => push_int(out, r.i16()?.into()),
        Ty::Uint16 => push_int(out, i64::from(r.i16()? as u16)),
        Ty::Int32 => push_int(out, r.i32()?.into()),
        Ty::Uint32 => push_int(out, i64::from(r.i32()? as u32)),
        Ty::Int64 => push_int(out, r.i64()?),
        Ty::Float64 => out.push_str(&java_double(f64::from_be_bytes(r.array()?))),
        Ty::Uuid => {
            out.push('"');
            push_base64(out, &r.array::<16>()?, true);
            out.push('"');
        }
        Ty::Str => match length(r, flexible, true)? {
            None if nullable => out.push_str("null"),
            None => return Err(non_nullable(f)),
            Some(n) => {
                if n > 0x7fff {
                    return Err(ReadError::Other(format!(
                        "string field {} had invalid length {n}",
                        f.name
                    )));
                }
                let bytes = r.byte_array(n)?;
                match std::str::from_utf8(bytes) {
                    Ok(s) => write_str(out, s, true),
                    Err(_) => write_str(out, &String::from_utf8_lossy(bytes), true),
                }
            }
        },
        Ty::Bytes => match length(r, flexible, false)? {
            None if nullable => out.push_str("null"),
            None => return Err(non_nullable(f)),
            Some(n) => {
                let bytes = r.byte_array(n)?;
                let decoded = match at {
                    At::ConsumerMembers(p) => consumer_message(p, f.name, bytes, out),
                    _ => false,
                };
                if !decoded {
                    out.push('"');
                    push_base64(out, bytes, false);
                    out.push('"');
                }
            }
        },
        Ty::Array(elem) => match length(r, flexible, false)? {
            None if nullable => out.push_str("null"),
            None => return Err(non_nullable(f)),
            Some(n) => {
                if n > r.remaining() {
                    return Err(ReadError::Other(format!(
                        "Tried to allocate a collection of size {n}, but there are only {} bytes remaining.",
                        r.remaining()
                    )));
                }
                out.push('[');
                for i in 0..n {
                    if i > 0 {
                        out.push(',');
                    }
                    write_value(f, elem, false, version, flexible, r, out, at)?;
                }
                out.push(']');
            }
        },
        Ty::Struct(fields) => {
            if nullable && r.i8()? < 0 {
                out.push_str("null");
            } else {
                write_struct(fields, version, flexible, r, out, at)?;
            }
        }
    }
    Ok(())
}

/// A consumer group member's `subscription` or `assignment` (`field`) decoded as the
/// consumer protocol's message (an int16 version, then the message) and written to
/// `out`; `false`, with `out` unchanged, for another field or bytes that do not decode.
fn consumer_message(p: ConsumerProtocol, field: &str, bytes: &[u8], out: &mut String) -> bool {
    let msg = match field {
        "subscription" => p.subscription,
        "assignment" => p.assignment,
        _ => return false,
    };
    let mut r = Reader::new(bytes);
    let Ok(version) = r.i16() else {
        return false;
    };
    let mark = out.len();
    if write_message(msg, version, &mut r, out, Rewrite::Plain).is_ok() {
        return true;
    }
    out.truncate(mark);
    false
}

/// The JSON of a field's default (see [`Dflt`]).
fn default_json(f: &Field) -> Json {
    match f.default {
        Dflt::Null => Json::Null,
        Dflt::Int(i) => match f.ty {
            Ty::Float64 => Json::Float(i as f64),
            _ => Json::Int(i),
        },
        Dflt::Bool(b) => Json::Bool(b),
        Dflt::Str(s) => Json::Str(s.to_string()),
        Dflt::Type => match f.ty {
            Ty::Bool => Json::Bool(false),
            Ty::Int8 | Ty::Int16 | Ty::Uint16 | Ty::Int32 | Ty::Uint32 | Ty::Int64 => Json::Int(0),
            Ty::Float64 => Json::Float(0.0),
            Ty::Str | Ty::Bytes => Json::Str(String::new()),
            Ty::Uuid => Json::Str(uuid_string(&[0; 16])),
            Ty::Array(_) => Json::Array(Vec::new()),
            // A tagged struct is written whenever it was sent.
            Ty::Struct(_) => Json::Null,
        },
    }
}

/// Kafka's `Uuid.toString()`: URL-safe base64 of the 16 bytes, without padding.
pub(crate) fn uuid_string(bytes: &[u8; 16]) -> String {
    base64(bytes, true)
}

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64: standard alphabet with padding (Jackson's binary nodes), or URL-safe without
/// padding (`url`, Kafka's uuids).
pub(crate) fn base64(bytes: &[u8], url: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    push_base64(&mut out, bytes, url);
    out
}

/// Appends [`base64`]'s text to `out`.
fn push_base64(out: &mut String, bytes: &[u8], url: bool) {
    let table = if url { URL } else { STD };
    let sym = |i: u32| table.get((i & 63) as usize).copied().unwrap_or(b'=');
    out.reserve(bytes.len().div_ceil(3) * 4);
    // Up to 64 symbols at a time through a buffer on the stack (a uuid is 22).
    for group in bytes.chunks(48) {
        let mut text = [0u8; 64];
        let mut len = 0;
        for chunk in group.chunks(3) {
            let b = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
            let n = (b(0) << 16) | (b(1) << 8) | b(2);
            let mut put = |c: u8| {
                if let Some(slot) = text.get_mut(len) {
                    *slot = c;
                    len += 1;
                }
            };
            put(sym(n >> 18));
            put(sym(n >> 12));
            if chunk.len() > 1 {
                put(sym(n >> 6));
            } else if !url {
                put(b'=');
            }
            if chunk.len() > 2 {
                put(sym(n));
            } else if !url {
                put(b'=');
            }
        }
        // Base64 symbols are ASCII.
        out.push_str(std::str::from_utf8(text.get(..len).unwrap_or_default()).unwrap_or_default());
    }
}

/// Decodes standard base64 (with padding); `None` for anything else.
pub(crate) fn unbase64(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in s.bytes() {
        let v = STD.iter().position(|&x| x == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
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

    #[test]
    fn base64_forms() {
        assert_eq!(base64(b"", false), "");
        assert_eq!(base64(b"f", false), "Zg==");
        assert_eq!(base64(b"fo", false), "Zm8=");
        assert_eq!(base64(b"foo", false), "Zm9v");
        assert_eq!(unbase64("Zm8=").as_deref(), Some(&b"fo"[..]));
        assert_eq!(uuid_string(&[0; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(base64(&[0xfb, 0xff], true), "-_8");
    }
}
