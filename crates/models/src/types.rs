//! The provider-neutral shapes the engine speaks to every wire format.
//! (Interface agreed with the engine; providers translate to and from these.)

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireApi {
    /// OpenAI Responses API (`POST {base}/responses`).
    Responses,
    /// OpenAI-compatible Chat Completions (`POST {base}/chat/completions`).
    Chat,
    /// Anthropic Messages (`POST {base}/messages`).
    Anthropic,
}

/// A resolved provider: where to send requests and how to authenticate.
#[derive(Clone)]
pub struct Endpoint {
    pub provider: String,
    pub wire_api: WireApi,
    /// Base URL including the version path, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// The key itself; never printed (Debug redacts it).
    pub api_key: Option<String>,
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("wire_api", &self.wire_api)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

/// An image attached to a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageInput {
    /// e.g. `image/png`.
    pub media_type: String,
    pub data_base64: String,
}

/// One item of conversation history, in the order the model saw or said it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HistoryItem {
    User {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageInput>,
    },
    Assistant {
        text: String,
    },
    /// Reasoning the model produced. `replay` is the provider's opaque data
    /// that must be sent back verbatim (Responses: the whole reasoning item
    /// with `encrypted_content`; Anthropic: the thinking block with its
    /// `signature`, or a `redacted_thinking` block). Providers skip replay
    /// data that came from another wire format.
    Reasoning {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay: Option<Value>,
    },
    ToolCall {
        call_id: String,
        name: String,
        /// The arguments as the model wrote them (a JSON object in text).
        arguments: String,
    },
    ToolResult {
        call_id: String,
        output: String,
        #[serde(default)]
        is_error: bool,
    },
}

/// One request to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub model: String,
    /// The system prompt.
    pub instructions: String,
    pub history: Vec<HistoryItem>,
    pub tools: Vec<ToolSpec>,
    pub reasoning_effort: Option<String>,
    pub max_output_tokens: Option<u64>,
    /// Stable per session: Responses `prompt_cache_key`.
    pub cache_key: String,
}

/// Progress of a streaming response, in arrival order.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// The server answered (HTTP status OK, stream open). Emitted once per
    /// request, not again on a retry.
    ResponseStarted,
    ReasoningDelta(String),
    /// Assistant text; the first one of a response means "assistant_start".
    TextDelta(String),
    /// A tool call began (its arguments follow as deltas).
    ToolCallStart {
        call_id: String,
        name: String,
    },
    ToolCallDelta {
        call_id: String,
        delta: String,
    },
    /// A transient failure; the request is sent again after `delay_ms`.
    Retrying {
        attempt: u32,
        max: u32,
        delay_ms: u64,
        reason: String,
    },
}

/// Token usage of one response, normalized to OpenAI's convention:
/// `input_tokens` is the whole prompt (cached reads and cache writes
/// included), `reasoning_tokens` is part of `output_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    /// Anthropic cache writes (part of `input_tokens`).
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// Finished its answer.
    End,
    /// Wants tool results.
    ToolCalls,
    /// Hit the output limit.
    MaxTokens,
    /// Stopped by a content filter or refusal.
    ContentFilter,
    Other(String),
}

/// A finished response: the items to append to history, and its usage.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    pub items: Vec<HistoryItem>,
    pub usage: Option<Usage>,
    pub stop_reason: StopReason,
}

/// A request that failed for good (after retries where they apply).
/// Messages say what to do and never contain the API key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// 401/403: fix the key.
    #[error("{0}")]
    Auth(String),
    /// The prompt does not fit the model's context.
    #[error("{0}")]
    ContextLength(String),
    /// Out of quota or credits.
    #[error("{0}")]
    Quota(String),
    /// Any other non-transient failure (400, 404, 413, 422, ...).
    #[error("{0}")]
    Request(String),
    /// Transient failures that outlasted every retry.
    #[error("{0}")]
    RetriesExhausted(String),
}

/// How failed requests are retried.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// First backoff delay; doubles each retry, with up to 25 % jitter off.
    pub base_delay_ms: u64,
    pub max_delay_ms: u64,
    /// A server-requested delay above this is not honoured: the request fails.
    pub max_honoured_delay_ms: u64,
    /// No byte (data or comment) for this long ends the attempt as stalled.
    pub idle_timeout_ms: u64,
    /// Limit for establishing the connection and receiving headers.
    pub connect_timeout_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay_ms: 500,
            max_delay_ms: 8_000,
            max_honoured_delay_ms: 60_000,
            idle_timeout_ms: 300_000,
            connect_timeout_ms: 30_000,
        }
    }
}
