//! Unattended sessions: gated calls become deferred actions that the user
//! decides later (`decide_action`), while the turn goes on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use jucode_protocol::Event;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// One recorded call.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub id: String,
    pub call_id: String,
    pub name: String,
    /// The arguments as the model wrote them (JSON text).
    pub arguments: String,
    pub summary: String,
    pub subagent_id: Option<String>,
    pub digest: String,
    pub cwd: String,
    pub created_at: u64,
    /// `None` while open; `Some(true)` allowed, `Some(false)` denied.
    pub decision: Option<bool>,
}

impl Action {
    pub fn event(&self, session_id: &str) -> Event {
        Event::ActionDeferred {
            id: self.id.clone(),
            session_id: session_id.to_string(),
            cwd: self.cwd.clone(),
            call_id: self.call_id.clone(),
            name: self.name.clone(),
            arguments: serde_json::from_str(&self.arguments)
                .unwrap_or(Value::String(self.arguments.clone())),
            summary: self.summary.clone(),
            subagent_id: self.subagent_id.clone(),
            digest: self.digest.clone(),
            created_at: self.created_at,
        }
    }
}

/// What an unattended gated call gets.
pub enum Outcome {
    /// A new or still-open action: the model hears "submitted".
    Submitted(Box<Action>, bool /* new */),
    /// The same call was allowed before: run it.
    AllowedBefore,
    /// The same call was denied before.
    DeniedBefore,
}

/// The session's deferred actions and its attended flag.
#[derive(Clone)]
pub struct Deferred {
    pub attended: Arc<AtomicBool>,
    actions: Arc<Mutex<Vec<Action>>>,
}

impl Default for Deferred {
    fn default() -> Self {
        Deferred {
            attended: Arc::new(AtomicBool::new(true)),
            actions: Arc::default(),
        }
    }
}

/// Identifies "the same call": tool, arguments and working directory.
pub fn digest(name: &str, arguments: &str, cwd: &str) -> String {
    // Canonical JSON (sorted keys, no spacing) so key order and spacing don't
    // make two calls differ. Keys are sorted here rather than trusting
    // serde_json's map order, which a dependency's `preserve_order` changes.
    let args = serde_json::from_str::<Value>(arguments)
        .map(|v| canonical(&v))
        .unwrap_or_else(|_| arguments.to_string());
    let mut hasher = Sha256::new();
    for part in [name, "\0", &args, "\0", cwd] {
        hasher.update(part.as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

impl Deferred {
    pub fn attended(&self) -> bool {
        self.attended.load(Ordering::SeqCst)
    }

    pub fn set_attended(&self, attended: bool) {
        self.attended.store(attended, Ordering::SeqCst);
    }

    /// Records a gated call (or finds the same call recorded before).
    pub fn submit(
        &self,
        call_id: &str,
        name: &str,
        arguments: &str,
        summary: String,
        subagent_id: Option<String>,
        cwd: &str,
    ) -> Outcome {
        let digest = digest(name, arguments, cwd);
        let mut actions = self.actions.lock().expect("actions lock");
        if let Some(existing) = actions.iter().rev().find(|a| a.digest == digest) {
            return match existing.decision {
                None => Outcome::Submitted(Box::new(existing.clone()), false),
                Some(true) => Outcome::AllowedBefore,
                Some(false) => Outcome::DeniedBefore,
            };
        }
        let created_at = crate::ids::now_ms();
        let action = Action {
            id: format!("act-{created_at}-{:08x}", rand::random::<u32>()),
            call_id: call_id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
            summary,
            subagent_id,
            digest,
            cwd: cwd.to_string(),
            created_at,
            decision: None,
        };
        actions.push(action.clone());
        Outcome::Submitted(Box::new(action), true)
    }

    /// Marks an open action decided; errors name what is wrong.
    pub fn decide(&self, id: &str, allow: bool) -> Result<Action, String> {
        let mut actions = self.actions.lock().expect("actions lock");
        let Some(action) = actions.iter_mut().find(|a| a.id == id) else {
            return Err(format!("unknown action id: {id}"));
        };
        if action.decision.is_some() {
            return Err(format!("action {id} was already decided"));
        }
        action.decision = Some(allow);
        Ok(action.clone())
    }

    /// Restores actions from a session file (`action_deferred` and
    /// `action_decided` records, in order).
    pub fn restore(&self, records: &[jucode_store::Record]) {
        let mut actions = self.actions.lock().expect("actions lock");
        actions.clear();
        for record in records {
            let text = |k: &str| record.text(k).to_string();
            match record.kind() {
                Some("action_deferred") => actions.push(Action {
                    id: text("id"),
                    call_id: text("call_id"),
                    name: text("name"),
                    arguments: record
                        .body
                        .get("arguments")
                        .map(|v| match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .unwrap_or_default(),
                    summary: text("summary"),
                    subagent_id: record
                        .body
                        .get("subagent_id")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    digest: text("digest"),
                    cwd: text("cwd"),
                    created_at: record
                        .body
                        .get("created_at")
                        .and_then(Value::as_u64)
                        .unwrap_or_default(),
                    decision: None,
                }),
                Some("action_decided") => {
                    let id = text("id");
                    if let Some(a) = actions.iter_mut().find(|a| a.id == id) {
                        a.decision = Some(text("decision") == "allow");
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_call_same_digest() {
        assert_eq!(
            digest("bash", r#"{"command":"ls", "timeout": 5}"#, "/w"),
            digest("bash", r#"{"timeout":5,"command":"ls"}"#, "/w")
        );
        assert_ne!(
            digest("bash", r#"{"command":"ls"}"#, "/w"),
            digest("bash", r#"{"command":"ls"}"#, "/x")
        );
    }

    #[test]
    fn dedup_and_decisions() {
        let d = Deferred::default();
        let first = match d.submit("c1", "bash", "{}", "s".into(), None, "/w") {
            Outcome::Submitted(a, true) => a,
            _ => panic!(),
        };
        assert!(matches!(
            d.submit("c2", "bash", "{}", "s".into(), None, "/w"),
            Outcome::Submitted(_, false)
        ));
        assert!(d.decide("nope", true).is_err());
        d.decide(&first.id, true).unwrap();
        assert!(d.decide(&first.id, true).is_err());
        assert!(matches!(
            d.submit("c3", "bash", "{}", "s".into(), None, "/w"),
            Outcome::AllowedBefore
        ));
    }
}
