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
        content: record.text("content").to_string(),
        images: strings("images"),
        files: strings("files"),
    }
}

/// One record of a branch, as replay needs it.
pub enum Entry {
    User(QueuedMessage),
    Item(HistoryItem),
    Cost(f64),
    Snapshot(String, Option<Vec<u8>>),
    Plan(crate::plan::PlanRecord),
    Compaction(String, Vec<HistoryItem>),
    Skip,
}

fn decode_b64(text: Option<&str>) -> Option<Vec<u8>> {
    text.and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
}

/// The entry of a loaded record.
fn entry_of_record(record: &Record) -> Entry {
    let text = |k: &str| record.text(k).to_string();
    match record.kind() {
        Some("user_message") => Entry::User(message_of(record)),
        Some("history_item") => record
            .body
            .get("item")
            .and_then(|v| HistoryItem::deserialize(v).ok())
            .map_or(Entry::Skip, Entry::Item),
        Some("context_usage") => record
            .body
            .get("cost")
            .and_then(Value::as_f64)
            .map_or(Entry::Skip, Entry::Cost),
        Some("file_snapshot") => Entry::Snapshot(
            text("path"),
            decode_b64(record.body.get("content_b64").and_then(Value::as_str)),
        ),
        Some("proposed_plan") => Entry::Plan(crate::plan::PlanRecord {
            id: text("id"),
            title: text("title"),
            markdown: text("markdown"),
            status: text("status"),
        }),
        Some("compaction") => match record
            .body
            .get("history")
            .and_then(|v| Vec::<HistoryItem>::deserialize(v).ok())
        {
            Some(history) => Entry::Compaction(text("summary"), history),
            None => Entry::Skip,
        },
        _ => Entry::Skip,
    }
}

/// The entry of a raw record line, parsed straight into its type (no JSON
/// tree): the fast path for resuming long sessions.
pub fn entry_of_raw(kind: &str, json: &[u8]) -> Entry {
    #[derive(Deserialize)]
    struct User {
        #[serde(default)]
        content: String,
        #[serde(default)]
        images: Vec<String>,
        #[serde(default)]
        files: Vec<String>,
    }
    #[derive(Deserialize)]
    struct Item {
        item: HistoryItem,
    }
    #[derive(Deserialize)]
    struct Cost {
        cost: f64,
    }
    #[derive(Deserialize)]
    struct Snapshot {
        path: String,
        content_b64: Option<String>,
    }
    // The store writes a body's own `id` as `_id` (the record has an `id`).
    #[derive(Deserialize)]
    struct Plan {
        #[serde(rename = "_id")]
        id: String,
        #[serde(default)]
        title: String,
        #[serde(default)]
        markdown: String,
        #[serde(default)]
        status: String,
    }
    #[derive(Deserialize)]
    struct Compaction {
        #[serde(default)]
        summary: String,
        history: Vec<HistoryItem>,
    }
    let parsed = match kind {
        "user_message" => serde_json::from_slice::<User>(json).map(|u| {
            Entry::User(QueuedMessage {
                content: u.content,
                images: u.images,
                files: u.files,
            })
        }),
        "history_item" => serde_json::from_slice::<Item>(json).map(|i| Entry::Item(i.item)),
        "context_usage" => serde_json::from_slice::<Cost>(json).map(|c| Entry::Cost(c.cost)),
        "file_snapshot" => serde_json::from_slice::<Snapshot>(json)
            .map(|f| Entry::Snapshot(f.path, decode_b64(f.content_b64.as_deref()))),
        "proposed_plan" => serde_json::from_slice::<Plan>(json).map(|p| {
            Entry::Plan(crate::plan::PlanRecord {
                id: p.id,
                title: p.title,
                markdown: p.markdown,
                status: p.status,
            })
        }),
        "compaction" => serde_json::from_slice::<Compaction>(json)
            .map(|c| Entry::Compaction(c.summary, c.history)),
        _ => return Entry::Skip,
    };
    parsed.unwrap_or(Entry::Skip)
}

/// Builds a [`Replayed`] from a branch's entries, root first.
pub struct Replayer {
    out: Replayed,
    with_transcript: bool,
    tool_names: HashMap<String, String>,
}

impl Replayer {
    pub fn new(with_transcript: bool) -> Replayer {
        Replayer {
            out: Replayed {
                history: Vec::new(),
                cost: 0.0,
                turns: Vec::new(),
                transcript: Vec::new(),
            },
            with_transcript,
            tool_names: HashMap::new(),
        }
    }

    fn note(&mut self, item: Value) {
        if self.with_transcript {
            self.out.transcript.push(item);
        }
    }

    /// `branch_point`: this user message has sibling branches.
    pub fn feed(&mut self, id: &str, parent_id: Option<&str>, entry: Entry, branch_point: bool) {
        match entry {
            Entry::User(message) => {
                if branch_point {
                    self.note(
                        json!({"role": "branch", "id": id, "label": label(&message.content)}),
                    );
                }
                self.note(json!({"role": "user", "id": id, "content": message.content}));
                self.out
                    .history
                    .push(crate::attachments::prepare_quiet(&message));
                self.out.turns.push(TurnRecord {
                    id: id.to_string(),
                    parent_id: parent_id.map(str::to_string),
                    message,
                    snapshots: Vec::new(),
                });
            }
            Entry::Item(item) => {
                match &item {
                    HistoryItem::Assistant { text } => {
                        self.note(json!({"role": "assistant", "content": text}))
                    }
                    HistoryItem::ToolCall { call_id, name, .. } => {
                        self.tool_names.insert(call_id.clone(), name.clone());
                    }
                    HistoryItem::ToolResult {
                        call_id,
                        output,
                        is_error,
                    } => {
                        let name = self.tool_names.get(call_id).cloned().unwrap_or_default();
                        self.note(json!({
                            "role": "tool", "call_id": call_id, "name": name,
                            "output": output, "is_error": is_error,
                        }));
                    }
                    _ => {}
                }
                self.out.history.push(item);
            }
            Entry::Cost(cost) => self.out.cost = cost,
            Entry::Snapshot(path, content) => {
                if let Some(turn) = self.out.turns.last_mut() {
                    turn.snapshots.push((path, content));
                }
            }
            Entry::Plan(plan) => {
                let item = json!({
                    "role": "plan", "id": plan.id, "title": plan.title,
                    "content": plan.markdown, "status": plan.status,
                });
                match self
                    .out
                    .transcript
                    .iter_mut()
                    .find(|i| i["role"] == "plan" && i["id"] == item["id"])
                {
                    Some(existing) => *existing = item,
                    None => self.note(item),
                }
            }
            Entry::Compaction(summary, history) => {
                self.out.history = history;
                self.note(json!({"role": "compaction", "content": summary}));
            }
            Entry::Skip => {}
        }
    }

    pub fn finish(self) -> Replayed {
        self.out
    }
}

/// Replays the branch ending at `leaf`.
/// `with_transcript` builds the transcript too (resuming does not need it).
pub fn replay(records: &[Record], leaf: Option<&str>, with_transcript: bool) -> Replayed {
    let path = match leaf {
        Some(leaf) => jucode_store::path_to(records, leaf),
        None => Vec::new(),
    };
    // Only the transcript marks branches; other uses skip the index.
    let (children, by_id) = if with_transcript {
        (
            jucode_store::children_index(records),
            records.iter().map(|r| (r.id.as_str(), r)).collect(),
        )
    } else {
        (HashMap::new(), HashMap::new())
    };
    let mut replayer = Replayer::new(with_transcript);
    for record in path {
        let branch_point = with_transcript
            && record.kind() == Some("user_message")
            && has_user_siblings(record, &children, &by_id);
        replayer.feed(
            &record.id,
            record.parent_id.as_deref(),
            entry_of_record(record),
            branch_point,
        );
    }
    replayer.finish()
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
        let Entry::Plan(plan) = entry_of_record(record) else {
            continue;
        };
        match plans.iter_mut().find(|p| p.id == plan.id) {
            Some(existing) => *existing = plan,
            None => plans.push(plan),
        }
    }
    plans
}
