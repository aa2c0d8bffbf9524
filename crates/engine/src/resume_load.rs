//! Loading a session to resume it, in two passes over the file: first only
//! each record's id, parent and type (to find the active branch), then only
//! the branch's records, parsed straight into history items. Memory follows
//! the branch, not the file, and no generic JSON tree is built.

use std::collections::{HashMap, HashSet};

use jucode_store::{Record, SessionHeader, SkippedLine, Store, StoreError};
use serde_json::Value;

use crate::replay::{self, Replayed};

/// Record types kept whole wherever they are in the file: deferred actions
/// and plans belong to the session, not to one branch.
const SESSION_WIDE: [&str; 3] = ["action_deferred", "action_decided", "proposed_plan"];

pub struct ResumeLoad {
    pub header: SessionHeader,
    pub skipped: Vec<SkippedLine>,
    pub leaf: Option<String>,
    pub replayed: Replayed,
    /// The session-wide records, in file order.
    pub session_wide: Vec<Record>,
}

pub fn load(store: &Store, id: &str) -> Result<ResumeLoad, StoreError> {
    let mut parents: HashMap<String, Option<String>> = HashMap::new();
    let mut last: Option<(String, Option<String>)> = None;
    let mut session_wide = Vec::new();
    let (header, skipped) = store.scan(id, |raw| {
        parents.insert(raw.id.to_string(), raw.parent_id.map(str::to_string));
        let leaf_target = (raw.kind == "leaf")
            .then(|| {
                serde_json::from_slice::<Value>(raw.json)
                    .ok()
                    .and_then(|v| v.get("target").and_then(Value::as_str).map(str::to_string))
            })
            .flatten();
        last = Some((
            raw.id.to_string(),
            if raw.kind == "leaf" {
                leaf_target
            } else {
                Some(raw.id.to_string())
            },
        ));
        if SESSION_WIDE.contains(&raw.kind) {
            if let Ok(record) = serde_json::from_slice::<Record>(raw.json) {
                session_wide.push(record);
            }
        }
    })?;
    let leaf = last.and_then(|(_, active)| active);
    let mut branch = HashSet::new();
    let mut current = leaf.clone();
    while let Some(id) = current {
        if !branch.insert(id.clone()) {
            break; // a cycle in a damaged file
        }
        current = parents.get(&id).cloned().flatten();
    }
    drop(parents);
    // Parents are written before their children, so file order restricted
    // to the branch is root-to-leaf order.
    let mut replayer = replay::Replayer::new(false);
    store.scan(id, |raw| {
        if branch.contains(raw.id) {
            replayer.feed(
                raw.id,
                raw.parent_id,
                replay::entry_of_raw(raw.kind, raw.json),
                false,
            );
        }
    })?;
    Ok(ResumeLoad {
        header,
        skipped,
        leaf,
        replayed: replayer.finish(),
        session_wide,
    })
}
