//! OpenAI-compatible Chat Completions streaming format.
//!
//! Bare `data:` chunks ending with `data: [DONE]`. The stream deliberately includes the
//! quirks real servers have, so clients are tested against them: an SSE comment
//! (`: keep-alive`, like OpenRouter's `: OPENROUTER PROCESSING`) right after the role chunk,
//! `"usage": null` on ordinary chunks when usage will be reported, tool-call `id`/`name` only
//! on a call's first fragment, and usage in a final chunk with `choices: []`.

use serde_json::{json, Value};

use super::{Frame, RenderCtx};
use crate::script::{split_arguments, ScriptedResponse, Step};

const CREATED: u64 = 1_700_000_000;

pub(crate) fn render(resp: &ScriptedResponse, ctx: &RenderCtx) -> Vec<Frame> {
    let id = format!("chatcmpl-{}", ctx.n);
    let with_usage = resp.usage.is_some();
    let chunk = |delta: Value, finish: Value| {
        let mut c = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": ctx.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if with_usage {
            c["usage"] = Value::Null;
        }
        Frame::data(&c.to_string())
    };

    let mut frames = vec![
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        Frame::comment("keep-alive"),
    ];
    let mut tool_index = 0usize;
    for step in &resp.steps {
        match step {
            Step::Reasoning { deltas } => {
                for d in deltas {
                    frames.push(chunk(json!({ "reasoning_content": d }), Value::Null));
                }
            }
            Step::Text { deltas } => {
                for d in deltas {
                    frames.push(chunk(json!({ "content": d }), Value::Null));
                }
            }
            Step::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                frames.push(chunk(
                    json!({"tool_calls": [{
                        "index": tool_index, "id": call_id, "type": "function",
                        "function": {"name": name, "arguments": ""}
                    }]}),
                    Value::Null,
                ));
                for fragment in split_arguments(arguments) {
                    frames.push(chunk(
                        json!({"tool_calls": [{
                            "index": tool_index, "function": {"arguments": fragment}
                        }]}),
                        Value::Null,
                    ));
                }
                tool_index += 1;
            }
        }
    }
    let finish = if tool_index > 0 { "tool_calls" } else { "stop" };
    frames.push(chunk(json!({}), json!(finish)));

    if let Some(u) = resp.usage {
        let usage = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": ctx.model,
            "choices": [],
            "usage": {
                "prompt_tokens": u.input_tokens,
                "completion_tokens": u.output_tokens,
                "total_tokens": u.input_tokens + u.output_tokens,
                "prompt_tokens_details": {"cached_tokens": u.cached_input_tokens},
                "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
            },
        });
        frames.push(Frame::data(&usage.to_string()));
    }
    frames.push(Frame::data("[DONE]"));
    frames
}

/// Mid-stream error on an HTTP 200 stream, as OpenRouter and others send it; no `[DONE]`
/// follows.
pub(crate) fn stream_error(kind: &str, message: &str) -> Vec<Frame> {
    let err = json!({"error": {"message": message, "type": kind, "code": kind}});
    vec![Frame::data(&err.to_string())]
}
