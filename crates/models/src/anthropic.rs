//! Anthropic Messages: request body (with prompt-cache breakpoints and
//! thinking configuration) and stream parser.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::emit::Emitter;
use crate::errors::{classify_stream_error, error_info};
use crate::retry::Failure;
use crate::sse::{event_type, Flow, WireParser};
use crate::types::{HistoryItem, ModelRequest, ModelResponse, StopReason, Usage};

/// `max_tokens` is required by the API; used when the request sets none.
pub(crate) const DEFAULT_MAX_TOKENS: u64 = 32_000;

/// Model families (4.6 and later, 5.x) that take adaptive thinking with an
/// effort; manual `budget_tokens` is deprecated there and a 400 on Sonnet 5.
const ADAPTIVE: &[&str] = &[
    "opus-4-6",
    "sonnet-4-6",
    "opus-4-7",
    "opus-4-8",
    "sonnet-5",
    "opus-5",
    "haiku-5",
];

pub(crate) fn uses_adaptive_thinking(model: &str) -> bool {
    ADAPTIVE.iter().any(|family| model.contains(family))
}

/// The thinking budget for an effort on models with manual thinking.
/// The API wants 1024 ≤ budget < max_tokens; `None` when that is
/// impossible (a tiny max_tokens), in which case thinking stays off.
fn thinking_budget(effort: &str, max_tokens: u64) -> Option<u64> {
    let wanted: u64 = match effort {
        "minimal" | "low" => 2_048,
        "high" => 16_384,
        "xhigh" | "max" => 32_000,
        _ => 8_192,
    };
    let budget = wanted.min(max_tokens.saturating_sub(1));
    (budget >= 1_024).then_some(budget)
}

/// Adaptive efforts are low|medium|high|max; OpenAI-style names map onto
/// the nearest one.
fn adaptive_effort(effort: &str) -> &str {
    match effort {
        "minimal" => "low",
        "xhigh" => "max",
        other => other,
    }
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Adds blocks to the last message when it has the same role, so that
/// consecutive tool results (and a user message after them) form one
/// user turn, and text, thinking and tool_use of one reply one assistant
/// turn.
fn push_blocks(messages: &mut Vec<Value>, role: &str, blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    if let Some(last) = messages.last_mut().filter(|m| m["role"] == role) {
        if let Some(content) = last["content"].as_array_mut() {
            content.extend(blocks);
            return;
        }
    }
    messages.push(json!({"role": role, "content": blocks}));
}

pub(crate) fn build_body(req: &ModelRequest) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    for item in &req.history {
        match item {
            HistoryItem::User { text, images } => {
                let mut blocks = Vec::new();
                blocks.extend(images.iter().map(|img| {
                    json!({"type": "image", "source": {
                        "type": "base64", "media_type": img.media_type, "data": img.data_base64
                    }})
                }));
                // Empty text blocks are rejected by the API.
                if !text.is_empty() || blocks.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                push_blocks(&mut messages, "user", blocks);
            }
            HistoryItem::Assistant { text } if !text.is_empty() => {
                push_blocks(
                    &mut messages,
                    "assistant",
                    vec![json!({"type": "text", "text": text})],
                );
            }
            HistoryItem::Assistant { .. } => {}
            // Thinking goes back unmodified, signature included, or the
            // API rejects the tool-use turn; other formats' replay is skipped.
            HistoryItem::Reasoning {
                replay: Some(block),
                ..
            } if matches!(
                block.get("type").and_then(Value::as_str),
                Some("thinking" | "redacted_thinking")
            ) =>
            {
                push_blocks(&mut messages, "assistant", vec![block.clone()]);
            }
            HistoryItem::Reasoning { .. } => {}
            HistoryItem::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                let input = serde_json::from_str::<Value>(arguments)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({}));
                push_blocks(
                    &mut messages,
                    "assistant",
                    vec![json!({"type": "tool_use", "id": call_id, "name": name, "input": input})],
                );
            }
            HistoryItem::ToolResult {
                call_id,
                output,
                is_error,
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "is_error": is_error});
                // `content` is optional; an empty text is not accepted everywhere.
                if !output.is_empty() {
                    block["content"] = json!(output);
                }
                push_blocks(&mut messages, "user", vec![block]);
            }
        }
    }
    // Cache breakpoint on the last user block: the whole conversation up
    // to it is read from cache on the next turn.
    if let Some(block) = messages
        .iter_mut()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_array_mut())
        .and_then(|c| c.last_mut())
    {
        block["cache_control"] = ephemeral();
    }

    let max_tokens = req.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let mut body = json!({
        "model": req.model,
        "max_tokens": max_tokens,
        "stream": true,
        "messages": messages,
    });
    if !req.instructions.is_empty() {
        body["system"] =
            json!([{"type": "text", "text": req.instructions, "cache_control": ephemeral()}]);
    }
    if !req.tools.is_empty() {
        let mut tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        // One breakpoint after the last tool caches system + tools.
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
        }
        body["tools"] = json!(tools);
    }
    match req.reasoning_effort.as_deref() {
        None | Some("none") => {}
        Some(effort) if uses_adaptive_thinking(&req.model) => {
            body["thinking"] = json!({"type": "adaptive"});
            body["output_config"] = json!({"effort": adaptive_effort(effort)});
        }
        Some(effort) => {
            if let Some(budget) = thinking_budget(effort, max_tokens) {
                body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
            }
        }
    }
    body
}

/// A content block being streamed.
#[derive(Debug)]
enum Block {
    Thinking {
        text: String,
        signature: String,
    },
    /// Passed back as is; it has no readable text.
    Redacted(Value),
    Text(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
        initial: Value,
    },
    /// Server-tool blocks and future types: not kept.
    Other,
}

/// Usage as Anthropic reports it. Every field is cumulative, so a later
/// event's value replaces an earlier one; a field an event leaves out
/// keeps its value.
#[derive(Debug, Default)]
struct RawUsage {
    /// Excludes cache reads and writes, unlike OpenAI's.
    input: u64,
    cache_read: u64,
    cache_write: u64,
    output: u64,
}

impl RawUsage {
    /// In our (OpenAI's) convention the prompt size includes the cache.
    fn normalized(&self) -> Usage {
        Usage {
            input_tokens: self.input + self.cache_read + self.cache_write,
            cached_input_tokens: self.cache_read,
            cache_write_tokens: self.cache_write,
            output_tokens: self.output,
            reasoning_tokens: 0,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct AnthropicParser {
    open: BTreeMap<u64, Block>,
    /// Finished items by block index.
    done: BTreeMap<u64, HistoryItem>,
    raw_usage: RawUsage,
    saw_usage: bool,
    stop: Option<StopReason>,
}

fn text_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

impl AnthropicParser {
    /// Reads a `message_start` or `message_delta` usage object.
    fn read_usage(&mut self, u: &Value) {
        let Some(u) = u.as_object() else { return };
        self.saw_usage = true;
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        let raw = &mut self.raw_usage;
        for (field, key) in [
            (&mut raw.input, "input_tokens"),
            (&mut raw.cache_read, "cache_read_input_tokens"),
            (&mut raw.cache_write, "cache_creation_input_tokens"),
            (&mut raw.output, "output_tokens"),
        ] {
            if let Some(value) = n(key) {
                *field = value;
            }
        }
    }

    fn start_block(&mut self, index: u64, block: &Value, em: &mut Emitter<'_>) {
        let b = match text_of(block, "type") {
            "thinking" => {
                let text = text_of(block, "thinking").to_string();
                em.reasoning(&text);
                Block::Thinking {
                    text,
                    signature: text_of(block, "signature").to_string(),
                }
            }
            "redacted_thinking" => Block::Redacted(block.clone()),
            "text" => {
                let text = text_of(block, "text").to_string();
                em.text(&text);
                Block::Text(text)
            }
            "tool_use" => {
                let id = text_of(block, "id").to_string();
                let name = text_of(block, "name").to_string();
                em.tool_start(&id, &name);
                Block::ToolUse {
                    id,
                    name,
                    json: String::new(),
                    initial: block["input"].clone(),
                }
            }
            _ => Block::Other,
        };
        self.open.insert(index, b);
    }

    fn delta(&mut self, index: u64, delta: &Value, em: &mut Emitter<'_>) {
        let Some(block) = self.open.get_mut(&index) else {
            return;
        };
        match (text_of(delta, "type"), block) {
            ("thinking_delta", Block::Thinking { text, .. }) => {
                let d = text_of(delta, "thinking");
                em.reasoning(d);
                text.push_str(d);
            }
            ("signature_delta", Block::Thinking { signature, .. }) => {
                signature.push_str(text_of(delta, "signature"));
            }
            ("text_delta", Block::Text(text)) => {
                let d = text_of(delta, "text");
                em.text(d);
                text.push_str(d);
            }
            // Pauses between these are normal; the JSON is only whole at
            // content_block_stop.
            ("input_json_delta", Block::ToolUse { id, json, .. }) => {
                let d = text_of(delta, "partial_json");
                em.tool_delta(id, d);
                json.push_str(d);
            }
            _ => {}
        }
    }

    fn stop_block(&mut self, index: u64) {
        let item = match self.open.remove(&index) {
            Some(Block::Thinking { text, signature }) => HistoryItem::Reasoning {
                replay: Some(json!({"type": "thinking", "thinking": text, "signature": signature})),
                text,
            },
            Some(Block::Redacted(block)) => HistoryItem::Reasoning {
                text: String::new(),
                replay: Some(block),
            },
            Some(Block::Text(text)) => HistoryItem::Assistant { text },
            Some(Block::ToolUse {
                id,
                name,
                json,
                initial,
            }) => {
                let arguments = if json.trim().is_empty() {
                    // The whole input came in content_block_start.
                    match initial {
                        Value::Object(_) => initial.to_string(),
                        _ => "{}".to_string(),
                    }
                } else {
                    if serde_json::from_str::<Value>(&json).is_err() {
                        tracing::warn!(tool = %name, "tool input is not valid JSON; passing it on as is");
                    }
                    json
                };
                HistoryItem::ToolCall {
                    call_id: id,
                    name,
                    arguments,
                }
            }
            Some(Block::Other) | None => return,
        };
        self.done.insert(index, item);
    }
}

impl WireParser for AnthropicParser {
    fn on_event(&mut self, event: &str, data: &str, em: &mut Emitter<'_>) -> Result<Flow, Failure> {
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            tracing::warn!(event, "skipping a non-JSON Anthropic event");
            return Ok(Flow::Continue);
        };
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match event_type(event, &v) {
            "message_start" => self.read_usage(&v["message"]["usage"]),
            "content_block_start" => self.start_block(index, &v["content_block"], em),
            "content_block_delta" => self.delta(index, &v["delta"], em),
            "content_block_stop" => self.stop_block(index),
            "message_delta" => {
                if let Some(reason) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop = Some(match reason {
                        "end_turn" | "stop_sequence" => StopReason::End,
                        "tool_use" => StopReason::ToolCalls,
                        "max_tokens" => StopReason::MaxTokens,
                        "refusal" => StopReason::ContentFilter,
                        other => StopReason::Other(other.to_string()),
                    });
                }
                self.read_usage(&v["usage"]);
            }
            "message_stop" => {
                // Blocks left open by a sloppy proxy still count.
                let open: Vec<u64> = self.open.keys().copied().collect();
                for index in open {
                    self.stop_block(index);
                }
                return Ok(Flow::Done);
            }
            "error" => return Err(classify_stream_error(&error_info(&v), true)),
            // `ping` and event types added later are ignored, as
            // Anthropic's versioning policy asks.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn on_eof(&mut self) -> Result<(), Failure> {
        Err(Failure::transient("stream closed before message_stop"))
    }

    fn into_response(self) -> ModelResponse {
        let has_calls = self
            .done
            .values()
            .any(|i| matches!(i, HistoryItem::ToolCall { .. }));
        let stop_reason = match self.stop {
            Some(stop) => stop,
            None if has_calls => StopReason::ToolCalls,
            None => StopReason::End,
        };
        ModelResponse {
            items: self.done.into_values().collect(),
            usage: self.saw_usage.then(|| self.raw_usage.normalized()),
            stop_reason,
        }
    }
}

#[cfg(test)]
#[path = "tests/anthropic_tests.rs"]
mod tests;
