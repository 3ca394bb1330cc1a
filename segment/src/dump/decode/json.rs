//! A JSON value in the order Kafka's generated `*JsonConverter`s build it, and its text in
//! the form Kafka's tool prints (Jackson's `JsonNode.toString()`: compact, fields in
//! insertion order, strings with `"`, `\` and control characters escaped, everything else
//! as is).

use std::borrow::Cow;
use std::fmt::Write as _;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::Serialize;

use crate::dump::text::push_int;

/// A decoded record, as a JSON value. Objects keep their fields in Kafka's order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer field (int8 to int64, uint16, uint32).
    Int(i64),
    /// A float64 field.
    Float(f64),
    /// A string (also uuids, base64 bytes and names Kafka substitutes).
    Str(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, fields in order. Names are borrowed when they are a schema's (every
    /// decoded field: no allocation per field and record).
    Object(Vec<(Cow<'static, str>, Json)>),
}

// `Eq` for the event types that hold a `Json`: a float64 field compares with `==` (a NaN is
// never equal to itself; no record Kafka writes holds one in a field it compares).
impl Eq for Json {}

impl Json {
    /// The field `name` of an object.
    pub fn get(&self, name: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Replaces the value of field `name` in place (keeping its position), or appends it.
    pub(crate) fn put(&mut self, name: &str, value: Json) {
        if let Json::Object(fields) = self {
            match fields.iter_mut().find(|(k, _)| k == name) {
                Some((_, v)) => *v = value,
                None => fields.push((Cow::Owned(name.to_string()), value)),
            }
        }
    }

    /// The text Kafka's tool prints for this value (see the module docs).
    pub fn to_kafka_string(&self) -> String {
        let mut out = String::with_capacity(256);
        self.write(&mut out, false);
        out
    }

    /// Appends the text Kafka's tool prints for this value to `out`; with `inert`, as a
    /// text line then shows it ([`crate::dump::text::json_inert`] applied to it).
    pub(crate) fn write(&self, out: &mut String, inert: bool) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => push_int(out, *i),
            Json::Float(f) => out.push_str(&java_double(*f)),
            Json::Str(s) => write_str(out, s, inert),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out, inert);
                }
                out.push(']');
            }
            Json::Object(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(out, k, inert);
                    out.push(':');
                    v.write(out, inert);
                }
                out.push('}');
            }
        }
    }
}

/// Jackson's string escaping: `"` and `\`, the short escapes for the usual control
/// characters, `\u00XX` for the other C0 controls. With `inert`, then also what
/// [`crate::dump::text::json_inert`] does to the result: every other character that a
/// text line escapes (DEL, C1 controls, invisible formatting characters) as `\uxxxx`.
pub(crate) fn write_str(out: &mut String, s: &str, inert: bool) {
    out.reserve(s.len() + 2);
    out.push('"');
    // Every escaped character is ASCII, or (with `inert`) a whole character, so the runs
    // between them are whole characters.
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            0x7f if inert => "\\u007f",
            0x80.. if inert => {
                // A multi-byte character: escaped when a text line would escape it.
                let c = s
                    .get(i..)
                    .and_then(|r| r.chars().next())
                    .unwrap_or('\u{fffd}');
                if crate::dump::text::needs_escape(c) {
                    out.push_str(s.get(start..i).unwrap_or_default());
                    let _ = write!(out, "\\u{:04x}", c as u32);
                    start = i + c.len_utf8();
                }
                i += c.len_utf8();
                continue;
            }
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(s.get(start..i).unwrap_or_default());
        start = i + 1;
        if short.is_empty() {
            let _ = write!(out, "\\u{:04X}", b);
        } else {
            out.push_str(short);
        }
        i += 1;
    }
    out.push_str(s.get(start..).unwrap_or_default());
    out.push('"');
}

/// Java's `Double.toString`: plain notation with at least one fraction digit for
/// 10^-3 <= |x| < 10^7, else `d.dddE±n`; the shortest digits that round-trip.
pub(crate) fn java_double(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let a = f.abs();
    if (1e-3..1e7).contains(&a) {
        let s = format!("{f}");
        if s.contains('.') {
            s
        } else {
            format!("{s}.0")
        }
    } else {
        let s = format!("{f:e}");
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let mant = if mant.contains('.') {
            mant.to_string()
        } else {
            format!("{mant}.0")
        };
        format!("{mant}E{exp}")
    }
}

impl Serialize for Json {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_none(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Int(i) => s.serialize_i64(*i),
            Json::Float(f) => s.serialize_f64(*f),
            Json::Str(v) => s.serialize_str(v),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(fields) => {
                let mut map = s.serialize_map(Some(fields.len()))?;
                for (k, v) in fields {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
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
    fn prints_like_jackson() {
        let v = Json::Object(vec![
            ("a".into(), Json::Str("x\"\\\n\u{1}é".into())),
            ("b".into(), Json::Array(vec![Json::Int(-1), Json::Null])),
            ("c".into(), Json::Float(1e10)),
            ("d".into(), Json::Float(0.5)),
            ("e".into(), Json::Float(100.0)),
        ]);
        assert_eq!(
            v.to_kafka_string(),
            r#"{"a":"x\"\\\n\u0001é","b":[-1,null],"c":1.0E10,"d":0.5,"e":100.0}"#
        );
    }

    #[test]
    fn integers_print_as_display_does() {
        for i in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            99,
            100,
            -99,
            255,
            256,
            1234567,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            let mut out = String::new();
            push_int(&mut out, i);
            assert_eq!(out, i.to_string());
        }
    }
}
