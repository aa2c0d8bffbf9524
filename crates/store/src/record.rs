//! The two kinds of line in a session file: the header (first line) and
//! records (every other line), plus record ids and timestamps.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use jucode_protocol::Event;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The `type` of a session file's first line.
pub const HEADER_TYPE: &str = "session_header";

/// What a session file starts with, as `{"type":"session_header", ...}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct SessionHeader {
    pub id: String,
    pub cwd: String,
    /// Epoch milliseconds.
    pub created_at: u64,
    /// The engine version that created the session.
    pub version: String,
    /// A chat session (no workspace tools) rather than a coding one.
    #[serde(default)]
    pub chat: bool,
}

/// One line of a session file after the header: a protocol event or an
/// engine-only record (`history_item`, ...), placed in the session tree by
/// `id` and `parent_id`.
///
/// On disk the body's keys sit next to `id`, `parent_id` and `ts` in one flat
/// object, so a record reads like the wire event it carries. Some events have
/// their own `id` (`proposed_plan`, `action_decided`, ...), which would clash
/// with the record's; a body key named `id`, `parent_id` or `ts` preceded by
/// any number of underscores is therefore written with one more leading
/// underscore and read back with one less. That mapping is a bijection, so
/// every body round-trips unchanged and `body` always holds the event's own
/// keys.
///
/// Serialize/Deserialize are written by hand rather than derived with
/// `#[serde(flatten)]`: flatten buffers every value into an intermediate tree
/// before building the map, which roughly doubles load time on large files.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub id: String,
    pub parent_id: Option<String>,
    /// Epoch milliseconds.
    pub ts: u64,
    /// The event's fields, including its `"type"`.
    pub body: Map<String, Value>,
}

impl Record {
    /// A record with a fresh id and the current time.
    pub fn new(parent_id: Option<String>, body: Map<String, Value>) -> Record {
        Record {
            id: new_record_id(),
            parent_id,
            ts: now_ms(),
            body,
        }
    }

    /// A record carrying a protocol event, in its wire form.
    pub fn from_event(parent_id: Option<String>, event: &Event) -> Record {
        let body = match serde_json::to_value(event) {
            Ok(Value::Object(map)) => map,
            // Event is an internally tagged enum: always an object.
            _ => unreachable!("events serialize to objects"),
        };
        Record::new(parent_id, body)
    }

    /// The record's `type`, e.g. `assistant_delta` or `history_item`.
    pub fn kind(&self) -> Option<&str> {
        self.body.get("type").and_then(Value::as_str)
    }

    /// The string field `key` of the body, or "" when absent or not a string.
    pub fn text(&self, key: &str) -> &str {
        self.body
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

/// Which record field `key` would clash with (or is an escaped form of),
/// ignoring leading underscores.
fn reserved_base(key: &str) -> Option<&'static str> {
    match key.trim_start_matches('_') {
        "id" => Some("id"),
        "parent_id" => Some("parent_id"),
        "ts" => Some("ts"),
        _ => None,
    }
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.body.len() + 3))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("parent_id", &self.parent_id)?;
        map.serialize_entry("ts", &self.ts)?;
        // `type` first, so a line's kind is visible at a glance (and to grep)
        // whatever order the map keeps.
        if let Some(kind) = self.body.get("type") {
            map.serialize_entry("type", kind)?;
        }
        for (key, value) in &self.body {
            if key == "type" {
                continue;
            }
            if reserved_base(key).is_some() {
                map.serialize_entry(&format!("_{key}"), value)?;
            } else {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Record, D::Error> {
        deserializer.deserialize_map(RecordVisitor)
    }
}

/// A key of a record line. Borrowed when the input allows, so the three
/// record fields and unescaped body keys cost no allocation to recognize.
enum Key<'a> {
    Id,
    ParentId,
    Ts,
    Body(std::borrow::Cow<'a, str>),
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(match v {
                    "id" => Key::Id,
                    "parent_id" => Key::ParentId,
                    "ts" => Key::Ts,
                    _ => Key::Body(std::borrow::Cow::Borrowed(v)),
                })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(match v {
                    "id" => Key::Id,
                    "parent_id" => Key::ParentId,
                    "ts" => Key::Ts,
                    _ => Key::Body(std::borrow::Cow::Owned(v.to_owned())),
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct RecordVisitor;

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = Record;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a record object with id, parent_id and ts")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Record, A::Error> {
        let mut id: Option<String> = None;
        let mut parent_id: Option<Option<String>> = None;
        let mut ts: Option<u64> = None;
        let mut body = Map::new();
        while let Some(key) = access.next_key::<Key>()? {
            match key {
                Key::Id if id.is_some() => return Err(de::Error::duplicate_field("id")),
                Key::Id => id = Some(access.next_value()?),
                Key::ParentId if parent_id.is_some() => {
                    return Err(de::Error::duplicate_field("parent_id"))
                }
                Key::ParentId => parent_id = Some(access.next_value()?),
                Key::Ts if ts.is_some() => return Err(de::Error::duplicate_field("ts")),
                Key::Ts => ts = Some(access.next_value()?),
                Key::Body(name) => {
                    // Undo the escaping of `Serialize`: `_id` -> `id`, `__ts` -> `_ts`.
                    let name = if reserved_base(&name).is_some() {
                        name[1..].to_owned()
                    } else {
                        name.into_owned()
                    };
                    let value: Value = access.next_value()?;
                    body.insert(name, value);
                }
            }
        }
        Ok(Record {
            id: id.ok_or_else(|| de::Error::missing_field("id"))?,
            // A root may write `null` or leave the key out.
            parent_id: parent_id.flatten(),
            ts: ts.ok_or_else(|| de::Error::missing_field("ts"))?,
            body,
        })
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

const ID_BITS: u32 = 48;
const ID_MASK: u64 = (1 << ID_BITS) - 1;

/// A short unique record id: 12 hex characters (48 bits).
///
/// Ids are a per-process counter started at a random offset and passed
/// through a bijective mix on 48 bits, so one process never repeats an id
/// (for 2^48 calls) and ids from different processes (a session resumed
/// later) collide only by chance, about 1 in 10^5 for two 50,000-record
/// runs. The seed comes from std's `RandomState`, which the OS seeds
/// randomly, mixed with time and pid; no RNG crate needed.
pub fn new_record_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static SEED: OnceLock<u64> = OnceLock::new();
    let seed = *SEED.get_or_init(|| {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        hasher.write_u32(std::process::id());
        hasher.finish()
    });
    let n = seed.wrapping_add(COUNTER.fetch_add(1, Ordering::Relaxed)) & ID_MASK;
    format!("{:012x}", mix48(n))
}

/// A bijection on 48-bit values: xor-shifts and multiplications by odd
/// constants modulo 2^48 are each invertible.
fn mix48(mut x: u64) -> u64 {
    x ^= x >> 24;
    x = x.wrapping_mul(0x9E37_79B9_7F4B) & ID_MASK;
    x ^= x >> 23;
    x = x.wrapping_mul(0xBF58_476D_1CE5) & ID_MASK;
    x ^= x >> 24;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix48_is_injective_on_a_sample() {
        let mut seen = std::collections::HashSet::new();
        for n in 0..200_000u64 {
            assert!(seen.insert(mix48(n)));
        }
    }

    #[test]
    fn ids_are_twelve_hex_chars() {
        let id = new_record_id();
        assert_eq!(id.len(), 12);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(id, new_record_id());
    }

    #[test]
    fn reserved_body_keys_round_trip() {
        let mut body = Map::new();
        body.insert("type".into(), "proposed_plan".into());
        body.insert("id".into(), "plan-1".into());
        body.insert("_ts".into(), 5.into());
        body.insert("__parent_id".into(), Value::Null);
        let rec = Record {
            id: "r1".into(),
            parent_id: None,
            ts: 1,
            body,
        };
        let line = serde_json::to_string(&rec).unwrap();
        assert!(line.contains(r#""_id":"plan-1""#), "{line}");
        assert!(line.contains(r#""__ts":5"#), "{line}");
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(back, rec);
    }

    #[test]
    fn missing_parent_is_root_and_missing_ts_is_an_error() {
        let rec: Record = serde_json::from_str(r#"{"id":"a","ts":3,"type":"x"}"#).unwrap();
        assert_eq!(rec.parent_id, None);
        assert!(serde_json::from_str::<Record>(r#"{"id":"a","type":"x"}"#).is_err());
        assert!(serde_json::from_str::<Record>(r#"{"id":"a","id":"b","ts":1}"#).is_err());
    }
}
