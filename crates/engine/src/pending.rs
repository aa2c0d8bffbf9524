//! Approval requests waiting for an `approve` op.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jucode_protocol::{ApproveOp, Decision};
use tokio::sync::oneshot;

/// The user's answer to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Deny,
    Allow {
        always: bool,
        /// Only these hunks (edit calls); `None` = the whole call.
        hunks: Option<Vec<String>>,
    },
    /// The session became unattended while the request waited: the call
    /// becomes a deferred action (the text is ignored by the receiver).
    Deferred(String),
}

struct Waiting {
    /// The hunk ids the request offered, if it offered any.
    hunk_ids: Option<Vec<String>>,
    reply: oneshot::Sender<Answer>,
}

/// Shared between a turn worker (which waits) and the actor (which answers).
#[derive(Clone, Default)]
pub struct PendingApprovals {
    inner: Arc<Mutex<HashMap<String, Waiting>>>,
}

impl PendingApprovals {
    /// Registers a request; the receiver resolves when it is answered (or
    /// errors when the turn is interrupted and the request dropped).
    pub fn register(
        &self,
        call_id: &str,
        hunk_ids: Option<Vec<String>>,
    ) -> oneshot::Receiver<Answer> {
        let (reply, rx) = oneshot::channel();
        self.inner
            .lock()
            .expect("approvals lock")
            .insert(call_id.to_string(), Waiting { hunk_ids, reply });
        rx
    }

    /// Validates and delivers an answer. On a validation error the request
    /// stays pending so the client can retry with a corrected op.
    pub fn answer(&self, op: ApproveOp) -> Result<(), String> {
        let mut map = self.inner.lock().expect("approvals lock");
        let Some(waiting) = map.get(&op.call_id) else {
            return Err(format!("no pending approval with call_id {}", op.call_id));
        };
        if let Some(hunks) = &op.hunks {
            if op.always {
                return Err("approve: `hunks` cannot be combined with `always`".to_string());
            }
            if op.decision == Decision::Deny {
                return Err("approve: `hunks` only applies to allow".to_string());
            }
            let Some(offered) = &waiting.hunk_ids else {
                return Err(format!(
                    "approve: call {} has no hunks to choose from",
                    op.call_id
                ));
            };
            let unknown: Vec<&str> = hunks
                .iter()
                .filter(|h| !offered.contains(h))
                .map(String::as_str)
                .collect();
            if !unknown.is_empty() {
                return Err(format!(
                    "approve: unknown hunk id(s) {} for call {} (offered: {})",
                    unknown.join(", "),
                    op.call_id,
                    offered.join(", ")
                ));
            }
        }
        let waiting = map.remove(&op.call_id).expect("checked above");
        let answer = match op.decision {
            Decision::Deny => Answer::Deny,
            Decision::Allow => Answer::Allow {
                always: op.always,
                hunks: op.hunks,
            },
        };
        let _ = waiting.reply.send(answer);
        Ok(())
    }

    /// Drops every waiting request (interrupt).
    pub fn clear(&self) {
        self.inner.lock().expect("approvals lock").clear();
    }

    /// Answers every waiting request with "defer" (the session became
    /// unattended); returns how many there were.
    pub fn defer_all(&self) -> usize {
        let waiting: Vec<Waiting> = self
            .inner
            .lock()
            .expect("approvals lock")
            .drain()
            .map(|(_, w)| w)
            .collect();
        let n = waiting.len();
        for w in waiting {
            let _ = w.reply.send(Answer::Deferred(String::new()));
        }
        n
    }
}
