//! Anthropic Messages streaming format.
//!
//! `event: NAME` + `data:` with the same `type`. Usage follows Anthropic's convention, which
//! is the opposite of OpenAI's: `message_start.usage.input_tokens` excludes cache reads
//! (scripted input − cached) and `cache_read_input_tokens` carries the cached part. The final
//! `message_delta.usage.output_tokens` is cumulative. Thinking blocks end with a
//! `signature_delta` whose value is `sig:<message id>:<block index>`, so tests can check the
//! engine sends signatures back unmodified. A `ping` follows `message_start`.

use serde_json::{json, Value};

use super::{Frame, RenderCtx};
use crate::script::{split_arguments, ScriptedResponse, Step};

fn ev(data: Value) -> Frame {
    let name = data["type"].as_str().unwrap_or("unknown").to_string();
    Frame::event(&name, &data)
}

pub(crate) fn render(resp: &ScriptedResponse, ctx: &RenderCtx) -> Vec<Frame> {
    let id = format!("msg_{}", ctx.n);
    let usage = resp.usage.unwrap_or_default();
    let mut frames = vec![
        ev(json!({
            "type": "message_start",
            "message": {
                "id": id, "type": "message", "role": "assistant", "model": ctx.model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {
                    "input_tokens": usage.input_tokens.saturating_sub(usage.cached_input_tokens),
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": usage.cached_input_tokens,
                    "output_tokens": usage.output_tokens.min(1),
                },
            },
        })),
        ev(json!({"type": "ping"})),
    ];

    let mut used_tools = false;
    for (index, step) in resp.steps.iter().enumerate() {
        let delta = |delta: Value| {
            ev(json!({"type": "content_block_delta", "index": index, "delta": delta}))
        };
        match step {
            Step::Reasoning { deltas } => {
                frames.push(block_start(
                    index,
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                ));
                for d in deltas {
                    frames.push(delta(json!({"type": "thinking_delta", "thinking": d})));
                }
                frames.push(delta(json!({
                    "type": "signature_delta", "signature": format!("sig:{id}:{index}")
                })));
            }
            Step::Text { deltas } => {
                frames.push(block_start(index, json!({"type": "text", "text": ""})));
                for d in deltas {
                    frames.push(delta(json!({"type": "text_delta", "text": d})));
                }
            }
            Step::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                used_tools = true;
                frames.push(block_start(
                    index,
                    json!({"type": "tool_use", "id": call_id, "name": name, "input": {}}),
                ));
                for fragment in split_arguments(arguments) {
                    frames.push(delta(
                        json!({"type": "input_json_delta", "partial_json": fragment}),
                    ));
                }
            }
        }
        frames.push(ev(json!({"type": "content_block_stop", "index": index})));
    }

    let stop_reason = if used_tools { "tool_use" } else { "end_turn" };
    frames.push(ev(json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": usage.output_tokens},
    })));
    frames.push(ev(json!({"type": "message_stop"})));
    frames
}

fn block_start(index: usize, block: Value) -> Frame {
    ev(json!({"type": "content_block_start", "index": index, "content_block": block}))
}

/// In-stream `error` event (e.g. `overloaded_error`); the stream ends after it.
pub(crate) fn stream_error(kind: &str, message: &str) -> Vec<Frame> {
    vec![ev(
        json!({"type": "error", "error": {"type": kind, "message": message}}),
    )]
}
