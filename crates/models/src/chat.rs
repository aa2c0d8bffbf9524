//! OpenAI-compatible Chat Completions (local servers, gateways): request
//! body and a stream parser tolerant of the servers' quirks.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::emit::Emitter;
use crate::errors::{classify_stream_error, error_info};
use crate::retry::Failure;
use crate::sse::{Flow, WireParser};
use crate::types::{HistoryItem, ModelRequest, ModelResponse, StopReason, Usage};

pub(crate) fn build_body(req: &ModelRequest) -> Value {
    let mut messages: Vec<Value> = Vec::with_capacity(req.history.len() + 1);
    if !req.instructions.is_empty() {
        messages.push(json!({"role": "system", "content": req.instructions}));
    }
    for item in &req.history {
        match item {
            HistoryItem::User { text, images } if images.is_empty() => {
                messages.push(json!({"role": "user", "content": text}));
            }
            HistoryItem::User { text, images } => {
                let mut content = vec![json!({"type": "text", "text": text})];
                content.extend(images.iter().map(|img| {
                    json!({"type": "image_url", "image_url": {
                        "url": format!("data:{};base64,{}", img.media_type, img.data_base64)
                    }})
                }));
                messages.push(json!({"role": "user", "content": content}));
            }
            HistoryItem::Assistant { text } if text.is_empty() => {}
            HistoryItem::Assistant { text } => {
                // Text then calls of one turn form a single assistant message.
                open_assistant(&mut messages);
                let msg = messages.last_mut().expect("just pushed");
                let joined = match msg["content"].as_str() {
                    Some(prev) => format!("{prev}{text}"),
                    None => text.clone(),
                };
                msg["content"] = json!(joined);
            }
            // Chat has no way to replay reasoning.
            HistoryItem::Reasoning { .. } => {}
            HistoryItem::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                open_assistant(&mut messages);
                let msg = messages.last_mut().expect("just pushed");
                let call = json!({"id": call_id, "type": "function",
                    "function": {"name": name, "arguments": arguments}});
                match msg.get_mut("tool_calls").and_then(Value::as_array_mut) {
                    Some(calls) => calls.push(call),
                    None => msg["tool_calls"] = json!([call]),
                }
            }
            HistoryItem::ToolResult {
                call_id, output, ..
            } => messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": output})),
        }
    }
    let mut body = json!({
        "model": req.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    // OpenAI rejects an empty `tools` array and `parallel_tool_calls`
    // without tools, so both are sent only when there are tools.
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters
                }})
            })
            .collect();
        body["tool_choice"] = json!("auto");
        body["parallel_tool_calls"] = json!(true);
    }
    if let Some(effort) = &req.reasoning_effort {
        body["reasoning_effort"] = json!(effort);
    }
    // The o-series and GPT-5 reject the older `max_tokens`.
    if let Some(max) = req.max_output_tokens {
        body["max_completion_tokens"] = json!(max);
    }
    body
}

/// Makes the last message an assistant message that text or calls can be
/// added to.
fn open_assistant(messages: &mut Vec<Value>) {
    let is_open = messages.last().is_some_and(|m| m["role"] == "assistant");
    if !is_open {
        messages.push(json!({"role": "assistant", "content": null}));
    }
}

#[derive(Debug, Default)]
struct CallSlot {
    id: String,
    name: String,
    arguments: String,
    /// The start event was emitted (needs the name).
    started: bool,
}

#[derive(Debug, Default)]
pub(crate) struct ChatParser {
    reasoning: String,
    text: String,
    calls: Vec<CallSlot>,
    /// `tool_calls[].index` → slot.
    by_index: HashMap<u64, usize>,
    usage: Option<Usage>,
    finish: Option<String>,
}

fn text_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

impl ChatParser {
    /// Picks the slot for one `tool_calls[]` fragment. Key by `index`; if a
    /// gateway reuses an index for a call with a new id, or omits the
    /// index, go by id; an id-less, index-less fragment continues the last
    /// call.
    fn slot_for(&mut self, index: Option<u64>, id: &str) -> usize {
        let by_id = |calls: &[CallSlot]| calls.iter().position(|c| !id.is_empty() && c.id == id);
        let slot = match index.and_then(|i| self.by_index.get(&i).copied()) {
            Some(slot) if id.is_empty() || self.calls[slot].id == id => Some(slot),
            Some(_) | None => by_id(&self.calls).or_else(|| {
                (index.is_none() && id.is_empty() && !self.calls.is_empty())
                    .then(|| self.calls.len() - 1)
            }),
        };
        let slot = slot.unwrap_or_else(|| {
            self.calls.push(CallSlot::default());
            self.calls.len() - 1
        });
        if let Some(i) = index {
            self.by_index.insert(i, slot);
        }
        slot
    }

    fn on_tool_call(&mut self, tc: &Value, em: &mut Emitter<'_>) {
        let index = tc.get("index").and_then(Value::as_u64);
        let id = text_of(tc, "id");
        let slot = self.slot_for(index, id);
        let call = &mut self.calls[slot];
        if call.id.is_empty() {
            // Some servers never send ids; the engine still needs one to
            // pair the result with the call.
            call.id = if id.is_empty() {
                format!("call_{slot}")
            } else {
                id.to_string()
            };
        }
        let function = &tc["function"];
        call.name.push_str(text_of(function, "name"));
        let fragment = match &function["arguments"] {
            Value::String(s) => s.clone(),
            // A few servers send the arguments as an object.
            Value::Null => String::new(),
            other => other.to_string(),
        };
        if !call.started && !call.name.is_empty() {
            call.started = true;
            em.tool_start(&call.id, &call.name);
            if !call.arguments.is_empty() {
                em.tool_delta(&call.id, &call.arguments);
            }
        }
        if !fragment.is_empty() {
            call.arguments.push_str(&fragment);
            if call.started {
                em.tool_delta(&call.id, &fragment);
            }
        }
    }
}

fn parse_usage(v: &Value) -> Option<Usage> {
    let n = |p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    v.is_object().then(|| Usage {
        input_tokens: n("/prompt_tokens"),
        cached_input_tokens: n("/prompt_tokens_details/cached_tokens"),
        cache_write_tokens: 0,
        output_tokens: n("/completion_tokens"),
        reasoning_tokens: n("/completion_tokens_details/reasoning_tokens"),
    })
}

impl WireParser for ChatParser {
    fn on_event(
        &mut self,
        _event: &str,
        data: &str,
        em: &mut Emitter<'_>,
    ) -> Result<Flow, Failure> {
        if data.trim() == "[DONE]" {
            return Ok(Flow::Done);
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            tracing::warn!("skipping a non-JSON chat chunk");
            return Ok(Flow::Continue);
        };
        // Errors after the stream started come as data on an HTTP 200.
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(classify_stream_error(&error_info(&v), false));
        }
        // Earlier chunks carry `"usage": null`; only a real object counts.
        if let Some(usage) = v.get("usage").and_then(parse_usage) {
            self.usage = Some(usage);
        }
        for choice in v["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            // vLLM moved from `reasoning_content` to `reasoning`; a server
            // sending both means the same text, so take one.
            let reasoning = delta
                .get("reasoning_content")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .or_else(|| delta.get("reasoning").and_then(Value::as_str));
            if let Some(r) = reasoning.filter(|s| !s.is_empty()) {
                self.reasoning.push_str(r);
                em.reasoning(r);
            }
            if let Some(t) = delta.get("content").and_then(Value::as_str) {
                if !t.is_empty() {
                    self.text.push_str(t);
                    em.text(t);
                }
            }
            for tc in delta["tool_calls"].as_array().into_iter().flatten() {
                self.on_tool_call(tc, em);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish = Some(reason.to_string());
            }
        }
        Ok(Flow::Continue)
    }

    /// `[DONE]` is the terminal event, but a stream that ends right after a
    /// `finish_reason` is whole; some servers never send `[DONE]`.
    fn on_eof(&mut self) -> Result<(), Failure> {
        if self.finish.is_some() {
            Ok(())
        } else {
            Err(Failure::transient("stream closed before its finish_reason"))
        }
    }

    fn into_response(self) -> ModelResponse {
        let mut items = Vec::new();
        if !self.reasoning.is_empty() {
            items.push(HistoryItem::Reasoning {
                text: self.reasoning,
                replay: None,
            });
        }
        if !self.text.is_empty() {
            items.push(HistoryItem::Assistant { text: self.text });
        }
        let has_calls = !self.calls.is_empty();
        items.extend(self.calls.into_iter().map(|c| HistoryItem::ToolCall {
            call_id: c.id,
            name: c.name,
            // A call with no arguments is a call with an empty object.
            arguments: if c.arguments.trim().is_empty() {
                "{}".to_string()
            } else {
                c.arguments
            },
        }));
        let stop_reason = match self.finish.as_deref() {
            Some("length") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::ContentFilter,
            // llama.cpp and others may say `stop` after emitting calls.
            _ if has_calls => StopReason::ToolCalls,
            Some("stop") | Some("eos") | None => StopReason::End,
            Some("tool_calls") | Some("function_call") => StopReason::End,
            Some(other) => StopReason::Other(other.to_string()),
        };
        ModelResponse {
            items,
            usage: self.usage,
            stop_reason,
        }
    }
}

#[cfg(test)]
#[path = "tests/chat_tests.rs"]
mod tests;
