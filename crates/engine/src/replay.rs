//! Rebuilding a session from its records: the model's history along the
//! active branch, the transcript, the tree, and the checkpoints.

use std::collections::HashMap;

use base64::Engine as _;
use jucode_models::HistoryItem;
use jucode_protocol::{QueuedMessage, TreeNode};
use jucode_store::Record;
use serde::Deserialize;
use serde_json::{json, Value};

/// One user turn on the active branch.
pub struct TurnRecord {
    /// The `user_message` record's id: the checkpoint and tree-node id.
    pub id: String,
    pub parent_id: Option<String>,
    pub message: QueuedMessage,
    /// Files this turn changed, with their content before the change
    /// (`None`: the file did not exist).
    pub snapshots: Vec<(String, Option<Vec<u8>>)>,
}

/// What a branch of a session amounts to.
pub struct Replayed {
    pub history: Vec<HistoryItem>,
    pub cost: f64,
    pub turns: Vec<TurnRecord>,
    pub transcript: Vec<Value>,
}

/// The active point of a loaded session: the last record, or the target of
/// a trailing `leaf` record.
pub fn active_leaf(records: &[Record]) -> Option<String> {
    let last = records.last()?;
    if last.kind() == Some("leaf") {
        return last
            .body
            .get("target")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    Some(last.id.clone())
}

fn message_of(record: &Record) -> QueuedMessage {
    let strings = |key: &str| -> Vec<String> {
        record
            .body
            .get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    QueuedMessage {
        content: record
            .body
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        images: strings("images"),
        files: strings("files"),
    }
}

/// Replays the branch ending at `leaf`.
/// `with_transcript` builds the transcript too (resuming does not need it).
pub fn replay(records: &[Record], leaf: Option<&str>, with_transcript: bool) -> Replayed {
    let path = match leaf {
        Some(leaf) => jucode_store::path_to(records, leaf),
        None => Vec::new(),
    };
    // Only the transcript marks branches; resuming skips building the index.
    let (children, by_id) = if with_transcript {
        (
            jucode_store::children_index(records),
            records.iter().map(|r| (r.id.as_str(), r)).collect(),
        )
    } else {
        (HashMap::new(), HashMap::new())
    };
    let mut out = Replayed {
        history: Vec::new(),
        cost: 0.0,
        turns: Vec::new(),
        transcript: Vec::new(),
    };
    let mut tool_names: HashMap<String, String> = HashMap::new();
    for record in path {
        match record.kind() {
            Some("user_message") => {
                let message = message_of(record);
                if with_transcript && has_user_siblings(record, &children, &by_id) {
                    push_t(
                        &mut out.transcript,
                        with_transcript,
                        json!({
                            "role": "branch",
                            "id": record.id,
                            "label": label(&message.content),
                        }),
                    );
                }
                push_t(
                    &mut out.transcript,
                    with_transcript,
                    json!({
                        "role": "user", "id": record.id, "content": message.content,
                    }),
                );
                out.history
                    .push(crate::attachments::prepare_quiet(&message));
                out.turns.push(TurnRecord {
                    id: record.id.clone(),
                    parent_id: record.parent_id.clone(),
                    message,
                    snapshots: Vec::new(),
                });
            }
            Some("history_item") => {
                let Some(item) = record
                    .body
                    .get("item")
                    .and_then(|v| HistoryItem::deserialize(v).ok())
                else {
                    continue;
                };
                match &item {
                    HistoryItem::Assistant { text } => push_t(
                        &mut out.transcript,
                        with_transcript,
                        json!({"role": "assistant", "content": text}),
                    ),
                    HistoryItem::ToolCall { call_id, name, .. } => {
                        tool_names.insert(call_id.clone(), name.clone());
                    }
                    HistoryItem::ToolResult {
                        call_id,
                        output,
                        is_error,
                    } => push_t(
                        &mut out.transcript,
                        with_transcript,
                        json!({
                            "role": "tool",
                            "call_id": call_id,
                            "name": tool_names.get(call_id).cloned().unwrap_or_default(),
                            "output": output,
                            "is_error": is_error,
                        }),
                    ),
                    _ => {}
                }
                out.history.push(item);
            }
            Some("context_usage") => {
                if let Some(cost) = record.body.get("cost").and_then(Value::as_f64) {
                    out.cost = cost;
                }
            }
            Some("file_snapshot") => {
                let path = record.body.get("path").and_then(Value::as_str);
                let content = record
                    .body
                    .get("content_b64")
                    .and_then(Value::as_str)
                    .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok());
                if let (Some(path), Some(turn)) = (path, out.turns.last_mut()) {
                    turn.snapshots.push((path.to_string(), content));
                }
            }
            Some("proposed_plan") => {
                let text = |k: &str| record.body.get(k).cloned().unwrap_or(Value::Null);
                let item = json!({
                    "role": "plan",
                    "id": text("id"),
                    "title": text("title"),
                    "content": text("markdown"),
                    "status": text("status"),
                });
                match out
                    .transcript
                    .iter_mut()
                    .find(|i| i["role"] == "plan" && i["id"] == item["id"])
                {
                    Some(existing) => *existing = item,
                    None => push_t(&mut out.transcript, with_transcript, item),
                }
            }
            Some("compaction") => {
                if let Some(history) = record
                    .body
                    .get("history")
                    .and_then(|v| Vec::<HistoryItem>::deserialize(v).ok())
                {
                    out.history = history;
                }
                let summary = record.body.get("summary").and_then(Value::as_str);
                push_t(
                    &mut out.transcript,
                    with_transcript,
                    json!({"role": "compaction", "content": summary.unwrap_or_default()}),
                );
            }
            _ => {}
        }
    }
    out
}

fn has_user_siblings(
    record: &Record,
    children: &HashMap<&str, Vec<&str>>,
    by_id: &HashMap<&str, &Record>,
) -> bool {
    let Some(parent) = record.parent_id.as_deref() else {
        return false;
    };
    children
        .get(parent)
        .map(|kids| {
            kids.iter()
                .filter(|k| by_id.get(*k).and_then(|r| r.kind()) == Some("user_message"))
                .count()
                > 1
        })
        .unwrap_or(false)
}

/// A one-line label from a message.
pub fn label(content: &str) -> String {
    let line = content.lines().next().unwrap_or_default().trim();
    if line.chars().count() > 80 {
        format!("{}…", line.chars().take(79).collect::<String>())
    } else {
        line.to_string()
    }
}

/// The nearest `user_message` at or above `id`.
fn turn_of<'a>(by_id: &HashMap<&str, &'a Record>, id: Option<&str>) -> Option<&'a Record> {
    let mut current = id.and_then(|id| by_id.get(id).copied());
    while let Some(record) = current {
        if record.kind() == Some("user_message") {
            return Some(record);
        }
        current = record
            .parent_id
            .as_deref()
            .and_then(|p| by_id.get(p).copied());
    }
    None
}

/// Every turn of the session as a tree of user messages.
pub fn tree(records: &[Record], leaf: Option<&str>) -> Vec<TreeNode> {
    let by_id: HashMap<&str, &Record> = records.iter().map(|r| (r.id.as_str(), r)).collect();
    let current = turn_of(&by_id, leaf).map(|r| r.id.as_str());
    records
        .iter()
        .filter(|r| r.kind() == Some("user_message"))
        .map(|r| TreeNode {
            id: r.id.clone(),
            parent_id: turn_of(&by_id, r.parent_id.as_deref()).map(|p| p.id.clone()),
            label: label(&message_of(r).content),
            active: Some(r.id.as_str()) == current,
        })
        .collect()
}

/// The end of the turn that starts at `turn_id`: follow its records (never
/// into a later turn) as far as they go.
pub fn end_of_turn(records: &[Record], turn_id: &str) -> Option<String> {
    let by_id: HashMap<&str, &Record> = records.iter().map(|r| (r.id.as_str(), r)).collect();
    let start = by_id.get(turn_id)?;
    if start.kind() != Some("user_message") {
        return None;
    }
    let children = jucode_store::children_index(records);
    let mut current = turn_id;
    loop {
        let next = children.get(current).and_then(|kids| {
            kids.iter()
                .rev()
                .find(|k| {
                    let kind = by_id.get(*k).and_then(|r| r.kind());
                    kind != Some("user_message") && kind != Some("leaf")
                })
                .copied()
        });
        match next {
            Some(next) => current = next,
            None => return Some(current.to_string()),
        }
    }
}

/// Every proposed plan in the file, with its latest status.
pub fn plans(records: &[Record]) -> Vec<crate::plan::PlanRecord> {
    let mut plans: Vec<crate::plan::PlanRecord> = Vec::new();
    for record in records.iter().filter(|r| r.kind() == Some("proposed_plan")) {
        let text = |k: &str| {
            record
                .body
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let plan = crate::plan::PlanRecord {
            id: text("id"),
            title: text("title"),
            markdown: text("markdown"),
            status: text("status"),
        };
        match plans.iter_mut().find(|p| p.id == plan.id) {
            Some(existing) => *existing = plan,
            None => plans.push(plan),
        }
    }
    plans
}

/// Pushes a transcript item when a transcript is wanted.
fn push_t(transcript: &mut Vec<Value>, wanted: bool, item: Value) {
    if wanted {
        transcript.push(item);
    }
}
