//! Everything the engine emits: one JSON object a line, tagged on `type`.
//!
//! The same vocabulary is used on the wire (`jucode serve`), in headless
//! output (`jucode exec --json`) and in session files.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ApprovalMode;

/// One entry of `command_list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandInfo {
    /// With the leading slash, e.g. `/model`.
    pub command: String,
    /// Where it comes from when not built in: `custom`, `skill`, `mcp`.
    pub marker: Option<String>,
    /// Argument hint, e.g. `[NAME] [EFFORT]`.
    pub args: String,
    pub description: String,
}

/// One queued message in `pending_messages`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QueuedMessage {
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

/// One hunk of an edit approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Hunk {
    pub id: String,
    pub file: String,
    pub header: String,
    pub lines: Vec<String>,
}

/// One MCP server in `mcp_servers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McpServerInfo {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// `connecting`, `connected`, `failed` or `disabled`.
    pub state: String,
    /// Tool names as the server lists them.
    pub tools: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One subagent in `agent_runs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentRun {
    /// Its path, `/root/<task_name>`.
    pub id: String,
    pub label: String,
    pub model: String,
    pub effort: Option<String>,
    /// pending, running, completed, errored, interrupted or closed.
    pub state: String,
    /// Epoch milliseconds.
    pub started_at: u64,
    pub duration_ms: u64,
    pub tokens: u64,
    pub tool_calls: u64,
    pub prompt: String,
    pub result: Option<String>,
    pub error: Option<String>,
    /// Always `subagent`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The parent's `spawn_agent` call id.
    pub tool_use_id: Option<String>,
    /// Its latest action in a few words.
    pub activity: Option<String>,
}

/// One model in `model_view`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelViewItem {
    pub model: String,
    pub active: bool,
    pub context_window: u64,
    pub max_output_tokens: u64,
    pub reasoning_efforts: Vec<String>,
}

/// One node of `tree_view`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TreeNode {
    pub id: String,
    pub parent_id: Option<String>,
    pub label: String,
    pub active: bool,
}

/// One item of `resume_view`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResumeItem {
    pub id: String,
    pub label: String,
    pub active: bool,
}

/// One item of `checkpoint_view`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckpointItem {
    pub id: String,
    pub label: String,
    pub detail: String,
}

/// The state carried by a `goal` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GoalState {
    pub objective: String,
    pub status: String,
    pub token_budget: Option<u64>,
    pub tokens_used: u64,
    pub time_used_seconds: u64,
    pub created_at: u64,
    pub updated_at: u64,
}

/// One step of a `plan` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanStep {
    pub step: String,
    /// pending, in_progress or completed.
    pub status: String,
}

/// Every event of protocol v2. See docs/serve-protocol.md for when each is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// First line on stdout; the only event without `session`.
    Hello {
        protocol: u32,
        version: String,
    },
    Startup {
        version: String,
        session_id: String,
        profile_dir: String,
        config_path: String,
        cwd: String,
        model: String,
        context_window: u64,
    },
    ModelStatus {
        provider: String,
        model: String,
        reasoning_effort: Option<String>,
        context_window: u64,
        context_limit: u64,
        max_output_tokens: u64,
        reasoning_efforts: Vec<String>,
        /// ready, missing_credentials, unavailable, unknown_provider.
        state: String,
    },
    CommandList {
        commands: Vec<CommandInfo>,
    },
    ApprovalMode {
        mode: ApprovalMode,
    },
    AgentRuns {
        workflows: Vec<Value>,
        agents: Vec<AgentRun>,
    },
    PlanDraft {
        id: String,
        title: String,
        append: String,
    },
    ProposedPlan {
        id: String,
        title: String,
        markdown: String,
        status: String,
    },
    McpServers {
        servers: Vec<McpServerInfo>,
    },
    TrustPrompt {
        cwd: String,
        repo_root: String,
    },
    UserMessage {
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<String>,
    },
    PendingMessages {
        messages: Vec<QueuedMessage>,
    },
    Unqueued {
        content: String,
        images: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<String>,
    },
    FillInput {
        content: String,
    },
    Connecting,
    ThinkingStart,
    ReasoningDelta {
        delta: String,
    },
    AssistantStart,
    AssistantDelta {
        delta: String,
    },
    Retrying {
        attempt: u32,
        max: u32,
        delay_ms: u64,
        reason: String,
    },
    ToolStart {
        call_id: String,
        name: String,
    },
    ToolUpdate {
        call_id: String,
        name: String,
        output: String,
    },
    ToolOutput {
        call_id: String,
        name: String,
        output: String,
        is_error: bool,
    },
    ApprovalRequest {
        call_id: String,
        name: String,
        summary: String,
        subagent_id: Option<String>,
        hunks: Option<Vec<Hunk>>,
    },
    ActionDeferred {
        id: String,
        session_id: String,
        cwd: String,
        call_id: String,
        name: String,
        arguments: Value,
        summary: String,
        subagent_id: Option<String>,
        digest: String,
        created_at: u64,
    },
    ActionDecided {
        id: String,
        decision: String,
        output: Option<String>,
        is_error: bool,
    },
    Attended {
        attended: bool,
    },
    SubagentLifecycle {
        path: String,
        status: String,
        message: Option<String>,
        label: String,
        model: String,
        tool_use_id: Option<String>,
    },
    SubagentTranscript {
        agent_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        items: Option<Vec<Value>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    Usage {
        input_tokens: u64,
        cached_input_tokens: u64,
        output_tokens: u64,
        reasoning_tokens: u64,
    },
    ContextUsage {
        tokens: u64,
        tokenizer: String,
        cost: f64,
    },
    CompactionStart,
    CompactionProgress {
        output_tokens: u64,
    },
    CompactionEnd,
    CompactionFailed {
        error: String,
    },
    ModelView {
        models: Vec<ModelViewItem>,
        active_effort: Option<String>,
    },
    TreeView {
        nodes: Vec<TreeNode>,
    },
    ResumeView {
        items: Vec<ResumeItem>,
    },
    CheckpointView {
        items: Vec<CheckpointItem>,
    },
    Goal {
        goal: Option<GoalState>,
    },
    Plan {
        plan: Vec<PlanStep>,
    },
    Transcript {
        items: Vec<Value>,
    },
    Info {
        message: String,
    },
    Error {
        message: String,
    },
    Status {
        message: String,
    },
}

impl Event {
    pub fn info(message: impl Into<String>) -> Self {
        Event::Info {
            message: message.into(),
        }
    }
    pub fn error(message: impl Into<String>) -> Self {
        Event::Error {
            message: message.into(),
        }
    }
    pub fn status(message: impl Into<String>) -> Self {
        Event::Status {
            message: message.into(),
        }
    }

    /// The wire `type` of this event.
    pub fn type_name(&self) -> String {
        // Serializing a small unit-free value just to read the tag would be
        // wasteful on the hot path, but this is only used by tests and logs.
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            _ => String::new(),
        }
    }
}

/// Serializes an event as one wire line (without the newline), adding the
/// `session` field that every event but `hello` carries.
pub fn event_line(event: &Event, session: Option<&str>) -> String {
    let mut line = serde_json::to_string(event).expect("events always serialize");
    if let Some(session) = session {
        // Every event serializes as a non-empty object ("type" is always
        // there), so the closing brace is the last byte.
        line.pop();
        line.push_str(",\"session\":");
        line.push_str(&serde_json::to_string(session).expect("strings serialize"));
        line.push('}');
    }
    line
}
