//! `session/load` replay and `session/list`, straight from the store
//! (`<profile>/sessions`).
//!
//! Replay walks the session's current branch (root → last record written)
//! and turns it into updates:
//!
//! * event records: `user_message` → `user_message_chunk`; consecutive
//!   `assistant_delta` / `reasoning_delta` → one `agent_message_chunk` /
//!   `agent_thought_chunk`; `tool_start` → `tool_call`, `approval_request`
//!   → its title, `tool_output` → `tool_call_update` completed/failed.
//! * `history_item` records (what the model saw and said, as the engine
//!   saves it): assistant messages, reasoning, tool calls (titled from their
//!   arguments) and their results — and user messages when the file has no
//!   `user_message` events. Both the engine's own item shape (`kind`) and
//!   the Responses shape (`type`) are read.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentChunk, ListSessionsRequest, ListSessionsResponse, SessionInfo, SessionUpdate, ToolCall,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use agent_client_protocol::Error;
use jucode_store::{IndexEntry, LoadedSession, Record, Store};
use serde_json::Value;

use super::mapping;

/// Sessions listed per page.
const PAGE: usize = 100;

pub fn store() -> Store {
    Store::new(jucode_config::profile_dir().join("sessions"))
}

/// Text pieces of one kind are merged until something else comes.
#[derive(Default)]
struct Replay {
    updates: Vec<SessionUpdate>,
    pending: Option<(Kind, String)>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    User,
    Agent,
    Thought,
}

impl Replay {
    fn text(&mut self, kind: Kind, text: &str) {
        match &mut self.pending {
            Some((k, buf)) if *k == kind => buf.push_str(text),
            _ => {
                self.flush();
                self.pending = Some((kind, text.to_string()));
            }
        }
    }

    fn flush(&mut self) {
        if let Some((kind, text)) = self.pending.take() {
            if text.is_empty() {
                return;
            }
            let chunk = ContentChunk::new(text.into());
            self.updates.push(match kind {
                Kind::User => SessionUpdate::UserMessageChunk(chunk),
                Kind::Agent => SessionUpdate::AgentMessageChunk(chunk),
                Kind::Thought => SessionUpdate::AgentThoughtChunk(chunk),
            });
        }
    }

    /// A user message always starts a new chunk.
    fn user(&mut self, text: &str) {
        self.flush();
        self.text(Kind::User, text);
        self.flush();
    }

    fn push(&mut self, update: SessionUpdate) {
        self.flush();
        self.updates.push(update);
    }

    fn tool_call(&mut self, call_id: &str, name: &str, title: String) {
        let call = ToolCall::new(call_id.to_string(), title)
            .kind(mapping::tool_kind(name))
            .status(ToolCallStatus::InProgress)
            .name(name.to_string());
        self.push(SessionUpdate::ToolCall(call));
    }

    fn tool_result(&mut self, call_id: &str, output: &str, is_error: bool) {
        let status = if is_error {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        let fields =
            ToolCallUpdateFields::new()
                .status(status)
                .content(vec![mapping::text_content(mapping::tail(
                    output,
                    mapping::MAX_TOOL_TEXT,
                ))]);
        self.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call_id.to_string(),
            fields,
        )));
    }
}

fn s<'a>(body: &'a serde_json::Map<String, Value>, key: &str) -> &'a str {
    body.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The updates that replay a stored session.
pub fn history_updates(loaded: &LoadedSession, cwd: &Path) -> Vec<SessionUpdate> {
    let Some(last) = loaded.records.last() else {
        return Vec::new();
    };
    let branch = jucode_store::path_to(&loaded.records, &last.id);
    let has_events = branch
        .iter()
        .any(|r| matches!(r.kind(), Some("user_message" | "assistant_delta")));
    let mut replay = Replay::default();
    for record in branch {
        if record.kind() == Some("history_item") {
            // The engine saves what the model said as history items and the
            // user's messages as `user_message` events: take user text from
            // the events when there are any.
            if let Some(Value::Object(item)) = record.body.get("item") {
                let is_user = item.get("kind").and_then(Value::as_str) == Some("user");
                if !(has_events && is_user) {
                    from_item(&mut replay, item);
                }
            }
        } else if has_events {
            from_event(&mut replay, record, cwd);
        }
    }
    replay.flush();
    replay.updates
}

fn from_event(replay: &mut Replay, record: &Record, cwd: &Path) {
    let body = &record.body;
    match record.kind().unwrap_or_default() {
        "user_message" => replay.user(s(body, "content")),
        "assistant_delta" => replay.text(Kind::Agent, s(body, "delta")),
        "reasoning_delta" => replay.text(Kind::Thought, s(body, "delta")),
        "tool_start" => {
            let name = s(body, "name");
            replay.tool_call(s(body, "call_id"), name, mapping::generic_title(name));
        }
        "approval_request" => {
            let (name, summary) = (s(body, "name"), s(body, "summary"));
            let fields = ToolCallUpdateFields::new()
                .title(mapping::title_from_summary(name, summary))
                .locations(mapping::locations(name, summary, None, cwd));
            replay.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                s(body, "call_id").to_string(),
                fields,
            )));
        }
        "tool_output" => {
            let is_error = body.get("is_error").and_then(Value::as_bool) == Some(true);
            replay.tool_result(s(body, "call_id"), s(body, "output"), is_error);
        }
        _ => {}
    }
}

/// Text of a Responses message's `content` (a string or a list of parts).
fn message_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

fn from_item(replay: &mut Replay, item: &serde_json::Map<String, Value>) {
    let kind = item
        .get("kind")
        .or_else(|| item.get("type"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    match kind {
        "user" => replay.user(s(item, "text")),
        "assistant" => replay.text(Kind::Agent, s(item, "text")),
        "reasoning" => {
            let text = match item.get("summary") {
                Some(summary) => message_text(Some(summary)),
                None => s(item, "text").to_string(),
            };
            replay.text(Kind::Thought, &text);
        }
        "message" => {
            let text = message_text(item.get("content"));
            match s(item, "role") {
                "user" => replay.user(&text),
                "assistant" => replay.text(Kind::Agent, &text),
                _ => {}
            }
        }
        "tool_call" | "function_call" => {
            let name = s(item, "name");
            let summary = jucode_tools::summary(name, s(item, "arguments"));
            replay.tool_call(
                s(item, "call_id"),
                name,
                mapping::title_from_summary(name, &summary),
            );
        }
        "tool_result" | "function_call_output" => {
            let is_error = item.get("is_error").and_then(Value::as_bool) == Some(true);
            replay.tool_result(s(item, "call_id"), s(item, "output"), is_error);
        }
        _ => {}
    }
}

/// `session/list`: the store's index, for the given cwd or all, newest
/// first, `PAGE` at a time (the cursor is the offset of the next page).
pub fn list_sessions(req: &ListSessionsRequest) -> Result<ListSessionsResponse, Error> {
    let store = store();
    let entries: Vec<IndexEntry> = match &req.cwd {
        Some(cwd) => {
            let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.clone());
            store.list_for_cwd(&cwd)
        }
        None => store.list(),
    };
    let start = match &req.cursor {
        Some(cursor) => cursor
            .parse::<usize>()
            .map_err(|_| super::agent::invalid(format!("bad cursor: {cursor}")))?,
        None => 0,
    };
    let sessions = entries
        .iter()
        .skip(start)
        .take(PAGE)
        .map(|entry| {
            let info = SessionInfo::new(entry.id.clone(), entry.cwd.clone())
                .updated_at(rfc3339(entry.updated_at));
            if entry.label.is_empty() {
                info
            } else {
                info.title(entry.label.clone())
            }
        })
        .collect();
    let response = ListSessionsResponse::new(sessions);
    Ok(if start + PAGE < entries.len() {
        response.next_cursor((start + PAGE).to_string())
    } else {
        response
    })
}

/// Epoch milliseconds as `YYYY-MM-DDTHH:MM:SSZ`.
fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_709_210_096_000), "2024-02-29T12:34:56Z");
    }
}
