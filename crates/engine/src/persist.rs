//! Writing the session to its append-only JSONL file as it happens.
//!
//! Records (each with `id` and `parent_id`, so the file is a tree):
//! * `user_message` — the wire event; it starts a turn and is a tree node.
//! * `history_item` — `{"item": HistoryItem}`: everything else the model
//!   saw or said (assistant text, reasoning with replay data, tool calls and
//!   results), enough to rebuild the model's history exactly.
//! * `usage`, `context_usage` — the wire events, to restore cost.
//! * `file_snapshot` — `{"path", "content_b64"|null, "turn"}`: a file's
//!   content before a turn first changed it (for `/checkout`).
//! * `compaction` — `{"summary", "history": [...]}`: the history that
//!   replaces everything before it on this branch.
//! * `leaf` — `{"target"}`: the active point moved (`/tree`, `/checkout`);
//!   its parent is the target, and the next record continues from there.
//!
//! The file is created on the first record, so an engine that never gets a
//! message leaves nothing behind.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use jucode_models::HistoryItem;
use jucode_protocol::Event;
use jucode_store::{Record, SessionHeader, SessionWriter, Store};
use serde_json::{json, Map, Value};

/// Shared by the actor and the turn worker.
pub type SharedPersist = Arc<Mutex<Persist>>;

pub struct Persist {
    pub store: Store,
    header: SessionHeader,
    writer: Option<SessionWriter>,
    /// Whether the file exists already (resumed sessions append).
    exists: bool,
    /// The active point: the parent of the next record.
    pub leaf: Option<String>,
    labeled: bool,
    /// Set after the first write error, which is reported once.
    pub failure: Option<String>,
}

impl Persist {
    pub fn new(store: Store, session_id: &str, cwd: &std::path::Path, chat: bool) -> Persist {
        Persist {
            store,
            header: SessionHeader {
                id: session_id.to_string(),
                cwd: cwd.display().to_string(),
                created_at: crate::ids::now_ms(),
                version: env!("CARGO_PKG_VERSION").to_string(),
                chat,
            },
            writer: None,
            exists: false,
            leaf: None,
            labeled: false,
            failure: None,
        }
    }

    /// Continues an existing session file.
    pub fn resumed(store: Store, header: SessionHeader, leaf: Option<String>) -> Persist {
        Persist {
            store,
            header,
            writer: None,
            exists: true,
            leaf,
            labeled: true,
            failure: None,
        }
    }

    pub fn session_id(&self) -> &str {
        &self.header.id
    }

    fn writer(&mut self) -> std::io::Result<&mut SessionWriter> {
        if self.writer.is_none() {
            let writer = if self.exists {
                self.store.append_to(&self.header.id)?
            } else {
                self.store.create(&self.header)?
            };
            self.exists = true;
            self.writer = Some(writer);
        }
        Ok(self.writer.as_mut().expect("just set"))
    }

    /// Appends a record at the active point and makes it the active point.
    /// Returns its id. A write failure is remembered (and reported once by
    /// the actor); the session goes on in memory.
    pub fn append(&mut self, body: Map<String, Value>) -> String {
        let record = Record::new(self.leaf.clone(), body);
        let id = record.id.clone();
        let result = self.writer().and_then(|w| w.append(&record));
        if let Err(err) = result {
            if self.failure.is_none() {
                self.failure = Some(format!(
                    "cannot write the session file (the session continues unsaved): {err}"
                ));
            }
        }
        self.leaf = Some(id.clone());
        id
    }

    pub fn event(&mut self, event: &Event) -> String {
        let id = self.append(to_map(event));
        if let Event::UserMessage { content, .. } = event {
            if !self.labeled {
                self.labeled = true;
                if let Ok(w) = self.writer() {
                    let _ = w.set_label(content);
                }
            }
        }
        id
    }

    pub fn item(&mut self, item: &HistoryItem) -> String {
        self.append(body("history_item", json!({ "item": item })))
    }

    /// Moves the active point (and records the move so a restart keeps it).
    pub fn move_leaf(&mut self, target: Option<String>) {
        self.leaf = target.clone();
        self.append(body("leaf", json!({ "target": target })));
        self.leaf = target;
    }

    /// Marks the session as recently used (turn ends).
    pub fn touch(&mut self) {
        if let Some(w) = self.writer.as_mut() {
            let _ = w.touch();
        }
    }

    pub fn take_failure(&mut self) -> Option<String> {
        self.failure.take()
    }
}

/// A record body of a file-only type.
pub fn body(kind: &str, fields: Value) -> Map<String, Value> {
    let mut map = match fields {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.insert("type".into(), Value::String(kind.to_string()));
    map
}

fn to_map(event: &Event) -> Map<String, Value> {
    match serde_json::to_value(event) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// The sessions folder of a profile.
pub fn sessions_dir(profile: &std::path::Path) -> PathBuf {
    profile.join("sessions")
}
