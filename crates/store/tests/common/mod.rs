//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different subset

use jucode_store::{Record, SessionHeader, Store};
use serde_json::{json, Map, Value};

pub fn store() -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path().join("sessions"));
    (tmp, store)
}

pub fn header(id: &str, cwd: &str, created_at: u64) -> SessionHeader {
    SessionHeader {
        id: id.to_owned(),
        cwd: cwd.to_owned(),
        created_at,
        version: "0.3.0".to_owned(),
        chat: false,
    }
}

/// A record of type `kind` with the fields of the `fields` object.
pub fn record(parent: Option<&str>, kind: &str, fields: Value) -> Record {
    let mut body = match fields {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    body.insert("type".into(), kind.into());
    Record::new(parent.map(str::to_owned), body)
}

pub fn delta(parent: Option<&str>, text: &str) -> Record {
    record(parent, "assistant_delta", json!({ "delta": text }))
}

/// Writes `n` records, each the child of the previous one; returns them.
pub fn write_chain(writer: &mut jucode_store::SessionWriter, n: usize) -> Vec<Record> {
    let mut parent: Option<String> = None;
    let mut out = Vec::new();
    for i in 0..n {
        let rec = delta(parent.as_deref(), &format!("chunk {i} "));
        writer.append(&rec).unwrap();
        parent = Some(rec.id.clone());
        out.push(rec);
    }
    out
}
