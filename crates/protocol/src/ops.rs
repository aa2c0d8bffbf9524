//! Commands a front-end sends on stdin: one JSON object a line, tagged on `op`.
//!
//! Parsing goes through [`parse_op`] rather than plain serde so that the two
//! error kinds the protocol distinguishes (`invalid command: ...` naming the
//! offending field, and `unknown op: ...`) come out exactly as specified.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ApprovalMode;

/// `{"op":"user_message"}`: submit a user turn (queued while a turn runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UserMessageOp {
    pub content: String,
    /// Local image paths to attach; unattachable ones produce `info` and are skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// Other local files: the model is told where each one is saved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

/// `{"op":"command"}`: run a slash command exactly as the TUI would.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandOp {
    pub input: String,
}

/// Shared shape of `steer`, `unqueue` and `interrupt`: an optional queue index,
/// negative counting from the end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QueueIndexOp {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<i64>,
}

/// Allow or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allow,
    Deny,
}

/// `{"op":"approve"}`: answer an `approval_request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApproveOp {
    pub call_id: String,
    pub decision: Decision,
    #[serde(default)]
    pub always: bool,
    /// For edit requests that carried hunks: apply only these hunk ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hunks: Option<Vec<String>>,
}

/// `{"op":"set_approval_mode"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SetApprovalModeOp {
    pub mode: ApprovalMode,
}

/// `{"op":"subagent_transcript"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SubagentTranscriptOp {
    pub agent_id: String,
}

/// `approve_plan` decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanDecision {
    Approve,
    Revise,
}

/// `{"op":"approve_plan"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApprovePlanOp {
    pub id: String,
    pub decision: PlanDecision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ApprovalMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

/// `{"op":"set_attended"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SetAttendedOp {
    pub attended: bool,
}

/// `{"op":"decide_action"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DecideActionOp {
    pub action: String,
    pub decision: Decision,
}

/// `{"op":"mcp_set"}`: add or replace one server's configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McpSetOp {
    pub name: String,
    /// The server's table as in config.toml (`command`/`args`/`env`/`cwd` or
    /// `url`/`headers`/`bearer_token_env`, plus `enabled`).
    pub config: Map<String, Value>,
}

/// `{"op":"mcp_remove"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McpNameOp {
    pub name: String,
}

/// `{"op":"mcp_toggle"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McpToggleOp {
    pub name: String,
    pub enabled: bool,
}

/// An op without fields (`shutdown`, `agent_runs`, `mcp_list`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NoFields {}

macro_rules! ops {
    ($($name:literal => $variant:ident($ty:ty)),* $(,)?) => {
        /// Every command of protocol v2. Unknown fields (such as `session`) are ignored.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(tag = "op")]
        pub enum Op {
            $( #[serde(rename = $name)] $variant($ty), )*
        }

        /// The `op` names this engine knows.
        pub const OP_NAMES: &[&str] = &[$($name),*];

        fn parse_known(name: &str, fields: Value) -> Result<Op, String> {
            match name {
                $( $name => from_value_named::<$ty>(fields).map(Op::$variant), )*
                _ => Err(format!("unknown op: {name}")),
            }
        }

        impl Op {
            /// The wire name of this op.
            pub fn name(&self) -> &'static str {
                match self { $( Op::$variant(_) => $name, )* }
            }
        }
    };
}

ops! {
    "user_message" => UserMessage(UserMessageOp),
    "command" => Command(CommandOp),
    "steer" => Steer(QueueIndexOp),
    "unqueue" => Unqueue(QueueIndexOp),
    "interrupt" => Interrupt(QueueIndexOp),
    "approve" => Approve(ApproveOp),
    "set_approval_mode" => SetApprovalMode(SetApprovalModeOp),
    "agent_runs" => AgentRuns(NoFields),
    "subagent_transcript" => SubagentTranscript(SubagentTranscriptOp),
    "approve_plan" => ApprovePlan(ApprovePlanOp),
    "set_attended" => SetAttended(SetAttendedOp),
    "decide_action" => DecideAction(DecideActionOp),
    "mcp_list" => McpList(NoFields),
    "mcp_set" => McpSet(McpSetOp),
    "mcp_remove" => McpRemove(McpNameOp),
    "mcp_toggle" => McpToggle(McpToggleOp),
    "shutdown" => Shutdown(NoFields),
}

/// Why a line is not a command. `Display` gives the exact `error` message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpError {
    /// `invalid command: ...`
    Invalid(String),
    /// `unknown op: ...`
    Unknown(String),
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpError::Invalid(why) => write!(f, "invalid command: {why}"),
            OpError::Unknown(op) => write!(f, "unknown op: {op}"),
        }
    }
}

/// Parses one input line (already known to be non-empty).
pub fn parse_op(line: &str) -> Result<Op, OpError> {
    let value: Value = serde_json::from_str(line)
        .map_err(|e| OpError::Invalid(format!("not valid JSON ({e})")))?;
    let Value::Object(mut map) = value else {
        return Err(OpError::Invalid(format!(
            "expected a JSON object, got {}",
            kind_of(&value)
        )));
    };
    let name = match map.remove("op") {
        Some(Value::String(name)) => name,
        Some(other) => {
            return Err(OpError::Invalid(format!(
                "field `op` must be a string, got {}",
                kind_of(&other)
            )))
        }
        None => return Err(OpError::Invalid("missing field `op`".into())),
    };
    if !OP_NAMES.contains(&name.as_str()) {
        return Err(OpError::Unknown(truncate(&name, 200)));
    }
    parse_known(&name, Value::Object(map)).map_err(OpError::Invalid)
}

/// Deserializes an op's fields, naming the offending field on failure.
fn from_value_named<T: serde::de::DeserializeOwned>(fields: Value) -> Result<T, String> {
    serde_path_to_error::deserialize::<_, T>(fields).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner().to_string();
        if path == "." || path.is_empty() {
            inner
        } else {
            format!("field `{path}`: {inner}")
        }
    })
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
