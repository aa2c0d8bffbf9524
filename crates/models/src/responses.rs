//! OpenAI Responses API: request body and stream parser.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

use crate::emit::Emitter;
use crate::errors::{classify_stream_error, error_info};
use crate::retry::Failure;
use crate::sse::{event_type, Flow, WireParser};
use crate::types::{HistoryItem, ModelRequest, ModelResponse, StopReason, Usage};

/// Models that reason even when no effort is sent, so their encrypted
/// reasoning must be requested for replay. Non-reasoning models (gpt-4.1)
/// reject `include: ["reasoning.encrypted_content"]`.
fn is_reasoning_model(model: &str) -> bool {
    let m = model.rsplit('/').next().unwrap_or(model);
    m.starts_with("gpt-5")
        || m.contains("gpt-oss")
        || (m.starts_with('o') && m[1..].starts_with(|c: char| c.is_ascii_digit()))
}

pub(crate) fn build_body(req: &ModelRequest) -> Value {
    let mut input = Vec::with_capacity(req.history.len());
    for item in &req.history {
        match item {
            HistoryItem::User { text, images } => {
                let mut content = vec![json!({"type": "input_text", "text": text})];
                content.extend(images.iter().map(|img| {
                    json!({
                        "type": "input_image",
                        "image_url": format!("data:{};base64,{}", img.media_type, img.data_base64),
                    })
                }));
                input.push(json!({"type": "message", "role": "user", "content": content}));
            }
            HistoryItem::Assistant { text } if !text.is_empty() => {
                input.push(json!({
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                }));
            }
            HistoryItem::Assistant { .. } => {}
            // Only our own reasoning items can be replayed; with
            // `store:false` they are useless without `encrypted_content`.
            HistoryItem::Reasoning {
                replay: Some(replay),
                ..
            } if replay.get("type").and_then(Value::as_str) == Some("reasoning")
                && replay
                    .get("encrypted_content")
                    .is_some_and(Value::is_string) =>
            {
                input.push(replay.clone());
            }
            HistoryItem::Reasoning { .. } => {}
            HistoryItem::ToolCall {
                call_id,
                name,
                arguments,
            } => input.push(json!({
                "type": "function_call",
                "call_id": call_id,
                "name": name,
                "arguments": arguments,
            })),
            HistoryItem::ToolResult {
                call_id, output, ..
            } => input.push(json!({
                "type": "function_call_output",
                "call_id": call_id,
                "output": output,
            })),
        }
    }
    let tools: Vec<Value> = req
        .tools
        .iter()
        .map(|t| {
            json!({
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": false,
            })
        })
        .collect();
    let mut body = json!({
        "model": req.model,
        "instructions": req.instructions,
        "input": input,
        "tools": tools,
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "store": false,
        "stream": true,
        "prompt_cache_key": req.cache_key,
    });
    if let Some(effort) = &req.reasoning_effort {
        body["reasoning"] = json!({"effort": effort, "summary": "auto"});
    }
    if req.reasoning_effort.is_some() || is_reasoning_model(&req.model) {
        body["include"] = json!(["reasoning.encrypted_content"]);
    }
    if let Some(max) = req.max_output_tokens {
        body["max_output_tokens"] = json!(max);
    }
    body
}

/// A function call in progress, keyed by its item id.
#[derive(Debug, Default)]
struct Call {
    call_id: String,
    /// Argument text passed on so far.
    arguments: String,
}

#[derive(Debug, Default)]
pub(crate) struct ResponsesParser {
    /// Finished items by `output_index`, from `response.output_item.done`.
    done: BTreeMap<u64, HistoryItem>,
    calls: HashMap<String, Call>,
    reasoning_shown: bool,
    usage: Option<Usage>,
    stop: Option<StopReason>,
}

fn text_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn parse_usage(v: &Value) -> Option<Usage> {
    let n = |p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    v.is_object().then(|| Usage {
        input_tokens: n("/input_tokens"),
        cached_input_tokens: n("/input_tokens_details/cached_tokens"),
        cache_write_tokens: 0,
        output_tokens: n("/output_tokens"),
        reasoning_tokens: n("/output_tokens_details/reasoning_tokens"),
    })
}

/// The history item for a finished output item; `None` for kinds the
/// engine does not keep (built-in tool calls and the like).
fn history_item(item: &Value) -> Option<HistoryItem> {
    let parts = |key: &str, kinds: &[&str], sep: &str| -> String {
        let texts: Vec<&str> = item
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|p| kinds.contains(&text_of(p, "type")))
            .map(|p| {
                let t = text_of(p, "text");
                if t.is_empty() {
                    text_of(p, "refusal")
                } else {
                    t
                }
            })
            .collect();
        texts.join(sep)
    };
    match text_of(item, "type") {
        "message" => Some(HistoryItem::Assistant {
            text: parts("content", &["output_text", "refusal"], ""),
        }),
        "reasoning" => {
            let mut text = parts("summary", &["summary_text"], "\n\n");
            if text.is_empty() {
                text = parts("content", &["reasoning_text"], "");
            }
            Some(HistoryItem::Reasoning {
                text,
                replay: Some(item.clone()),
            })
        }
        "function_call" => Some(HistoryItem::ToolCall {
            call_id: text_of(item, "call_id").to_string(),
            name: text_of(item, "name").to_string(),
            arguments: text_of(item, "arguments").to_string(),
        }),
        _ => None,
    }
}

impl ResponsesParser {
    fn start_call(&mut self, item: &Value, em: &mut Emitter<'_>) {
        let item_id = text_of(item, "id");
        let call_id = text_of(item, "call_id");
        if self.calls.contains_key(item_id) {
            return;
        }
        em.tool_start(call_id, text_of(item, "name"));
        self.calls.insert(
            item_id.to_string(),
            Call {
                call_id: call_id.to_string(),
                arguments: String::new(),
            },
        );
        let arguments = text_of(item, "arguments");
        self.call_arguments(item_id, arguments, em);
    }

    /// Passes on whatever of the full `arguments` was not shown yet; used
    /// when a server sends arguments whole rather than as deltas.
    fn call_arguments(&mut self, item_id: &str, arguments: &str, em: &mut Emitter<'_>) {
        if let Some(call) = self.calls.get_mut(item_id) {
            if let Some(rest) = arguments.strip_prefix(call.arguments.as_str()) {
                if !rest.is_empty() {
                    em.tool_delta(&call.call_id, rest);
                    call.arguments.push_str(rest);
                }
            }
        }
    }

    fn finish(&mut self, response: &Value, stop: StopReason) {
        self.usage = response.get("usage").and_then(parse_usage);
        // Items whose `output_item.done` never came (some compatible
        // servers skip it) are taken from the final response object.
        if let Some(output) = response.get("output").and_then(Value::as_array) {
            for (index, item) in output.iter().enumerate() {
                if let std::collections::btree_map::Entry::Vacant(slot) =
                    self.done.entry(index as u64)
                {
                    if let Some(h) = history_item(item) {
                        slot.insert(h);
                    }
                }
            }
        }
        let has_calls = self
            .done
            .values()
            .any(|i| matches!(i, HistoryItem::ToolCall { .. }));
        self.stop = Some(match stop {
            StopReason::End if has_calls => StopReason::ToolCalls,
            other => other,
        });
    }
}

impl WireParser for ResponsesParser {
    fn on_event(&mut self, event: &str, data: &str, em: &mut Emitter<'_>) -> Result<Flow, Failure> {
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            tracing::warn!(event, "skipping a non-JSON Responses event");
            return Ok(Flow::Continue);
        };
        match event_type(event, &v) {
            "response.output_text.delta" => em.text(text_of(&v, "delta")),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.reasoning_shown = true;
                em.reasoning(text_of(&v, "delta"));
            }
            // Separates summary sections the way the final text joins them.
            "response.reasoning_summary_part.added" if self.reasoning_shown => {
                em.reasoning("\n\n");
            }
            "response.output_item.added" => {
                let item = &v["item"];
                if text_of(item, "type") == "function_call" {
                    self.start_call(item, em);
                }
            }
            "response.function_call_arguments.delta" => {
                let item_id = text_of(&v, "item_id");
                if let Some(call) = self.calls.get_mut(item_id) {
                    let delta = text_of(&v, "delta");
                    em.tool_delta(&call.call_id, delta);
                    call.arguments.push_str(delta);
                }
            }
            "response.function_call_arguments.done" => {
                self.call_arguments(text_of(&v, "item_id"), text_of(&v, "arguments"), em);
            }
            // Replay data comes only from `.done`: while an item is in
            // progress its `encrypted_content` can be incomplete.
            "response.output_item.done" => {
                let item = &v["item"];
                if text_of(item, "type") == "function_call" {
                    self.start_call(item, em);
                    self.call_arguments(text_of(item, "id"), text_of(item, "arguments"), em);
                }
                if let Some(h) = history_item(item) {
                    let index = v
                        .get("output_index")
                        .and_then(Value::as_u64)
                        .unwrap_or_else(|| self.done.keys().next_back().map_or(0, |k| k + 1));
                    self.done.insert(index, h);
                }
            }
            "response.completed" => {
                self.finish(&v["response"], StopReason::End);
                return Ok(Flow::Done);
            }
            "response.incomplete" => {
                let response = &v["response"];
                let stop = match response
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str)
                {
                    Some("max_output_tokens") => StopReason::MaxTokens,
                    Some("content_filter") => StopReason::ContentFilter,
                    Some(other) => StopReason::Other(other.to_string()),
                    None => StopReason::Other("incomplete".to_string()),
                };
                self.finish(response, stop);
                return Ok(Flow::Done);
            }
            "response.failed" => {
                let error = v.pointer("/response/error").cloned().unwrap_or(Value::Null);
                let mut info = error_info(&json!({ "error": error }));
                if info.message.is_empty() {
                    info.message = "the response failed without an error message".into();
                }
                return Err(classify_stream_error(&info, true));
            }
            "error" => return Err(classify_stream_error(&error_info(&v), true)),
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn on_eof(&mut self) -> Result<(), Failure> {
        Err(Failure::transient(
            "stream closed before response.completed",
        ))
    }

    fn into_response(self) -> ModelResponse {
        ModelResponse {
            items: self.done.into_values().collect(),
            usage: self.usage,
            stop_reason: self.stop.unwrap_or(StopReason::End),
        }
    }
}

#[cfg(test)]
#[path = "tests/responses_tests.rs"]
mod tests;
