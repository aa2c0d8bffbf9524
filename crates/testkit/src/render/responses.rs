//! OpenAI Responses streaming format.
//!
//! Every event carries `type` and a monotonically increasing `sequence_number`, and the SSE
//! `event:` line repeats the type. There is no `[DONE]`: `response.completed` (or
//! `response.failed`) is terminal. Ids are `resp_N`, and per output item `rs_N_I` /
//! `msg_N_I` / `fc_N_I` (N = response number, I = output index). A reasoning item's
//! `encrypted_content` is `enc:<item id>` and appears only in `response.output_item.done`,
//! as with the real API, so tests can check that the engine replays it from the final item.

use serde_json::{json, Map, Value};

use super::{Frame, RenderCtx};
use crate::script::{split_arguments, ScriptedResponse, Step};

/// Creation timestamp used in every response object; fixed so output is reproducible.
const CREATED_AT: u64 = 1_700_000_000;

/// Appends events while numbering them, so `sequence_number` can never be wrong.
struct Writer {
    seq: usize,
    frames: Vec<Frame>,
}

impl Writer {
    fn emit(&mut self, kind: &str, fields: Value) {
        let mut obj = Map::new();
        obj.insert("type".into(), json!(kind));
        obj.insert("sequence_number".into(), json!(self.seq));
        if let Value::Object(fields) = fields {
            obj.extend(fields);
        }
        self.frames.push(Frame::event(kind, &Value::Object(obj)));
        self.seq += 1;
    }
}

fn response_object(ctx: &RenderCtx, status: &str, output: Vec<Value>, usage: Value) -> Value {
    json!({
        "id": format!("resp_{}", ctx.n),
        "object": "response",
        "created_at": CREATED_AT,
        "status": status,
        "model": ctx.model,
        "output": output,
        "usage": usage,
    })
}

pub(crate) fn render(resp: &ScriptedResponse, ctx: &RenderCtx) -> Vec<Frame> {
    let mut w = Writer {
        seq: 0,
        frames: Vec::new(),
    };
    let initial = response_object(ctx, "in_progress", vec![], Value::Null);
    w.emit("response.created", json!({ "response": initial }));
    w.emit("response.in_progress", json!({ "response": initial }));

    let mut done_items = Vec::new();
    for (index, step) in resp.steps.iter().enumerate() {
        let item = match step {
            Step::Reasoning { deltas } => reasoning(&mut w, ctx, index, deltas),
            Step::Text { deltas } => message(&mut w, ctx, index, deltas),
            Step::ToolCall {
                call_id,
                name,
                arguments,
            } => function_call(&mut w, ctx, index, call_id, name, arguments),
        };
        done_items.push(item);
    }

    let usage = match resp.usage {
        Some(u) => json!({
            "input_tokens": u.input_tokens,
            "input_tokens_details": {"cached_tokens": u.cached_input_tokens},
            "output_tokens": u.output_tokens,
            "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
            "total_tokens": u.input_tokens + u.output_tokens,
        }),
        None => Value::Null,
    };
    let completed = response_object(ctx, "completed", done_items, usage);
    w.emit("response.completed", json!({ "response": completed }));
    w.frames
}

fn reasoning(w: &mut Writer, ctx: &RenderCtx, index: usize, deltas: &[String]) -> Value {
    let id = format!("rs_{}_{index}", ctx.n);
    let text = deltas.concat();
    let base = json!({"item_id": id, "output_index": index, "summary_index": 0});
    let with = |extra: Value| merge(&base, extra);
    w.emit(
        "response.output_item.added",
        json!({"output_index": index, "item": {"type": "reasoning", "id": id, "summary": []}}),
    );
    w.emit(
        "response.reasoning_summary_part.added",
        with(json!({"part": {"type": "summary_text", "text": ""}})),
    );
    for delta in deltas {
        w.emit(
            "response.reasoning_summary_text.delta",
            with(json!({ "delta": delta })),
        );
    }
    w.emit(
        "response.reasoning_summary_text.done",
        with(json!({ "text": text })),
    );
    w.emit(
        "response.reasoning_summary_part.done",
        with(json!({"part": {"type": "summary_text", "text": text}})),
    );
    let item = json!({
        "type": "reasoning",
        "id": id,
        "summary": [{"type": "summary_text", "text": text}],
        "encrypted_content": format!("enc:{id}"),
    });
    w.emit(
        "response.output_item.done",
        json!({"output_index": index, "item": item}),
    );
    item
}

fn message(w: &mut Writer, ctx: &RenderCtx, index: usize, deltas: &[String]) -> Value {
    let id = format!("msg_{}_{index}", ctx.n);
    let text = deltas.concat();
    let base = json!({"item_id": id, "output_index": index, "content_index": 0});
    let with = |extra: Value| merge(&base, extra);
    w.emit(
        "response.output_item.added",
        json!({"output_index": index, "item": {
            "type": "message", "id": id, "status": "in_progress", "role": "assistant", "content": []
        }}),
    );
    w.emit(
        "response.content_part.added",
        with(json!({"part": {"type": "output_text", "text": "", "annotations": []}})),
    );
    for delta in deltas {
        w.emit(
            "response.output_text.delta",
            with(json!({ "delta": delta })),
        );
    }
    w.emit("response.output_text.done", with(json!({ "text": text })));
    let part = json!({"type": "output_text", "text": text, "annotations": []});
    w.emit(
        "response.content_part.done",
        with(json!({ "part": part.clone() })),
    );
    let item = json!({
        "type": "message", "id": id, "status": "completed", "role": "assistant", "content": [part]
    });
    w.emit(
        "response.output_item.done",
        json!({"output_index": index, "item": item}),
    );
    item
}

fn function_call(
    w: &mut Writer,
    ctx: &RenderCtx,
    index: usize,
    call_id: &str,
    name: &str,
    arguments: &str,
) -> Value {
    let id = format!("fc_{}_{index}", ctx.n);
    w.emit(
        "response.output_item.added",
        json!({"output_index": index, "item": {
            "type": "function_call", "id": id, "call_id": call_id, "name": name,
            "arguments": "", "status": "in_progress"
        }}),
    );
    for fragment in split_arguments(arguments) {
        w.emit(
            "response.function_call_arguments.delta",
            json!({"item_id": id, "output_index": index, "delta": fragment}),
        );
    }
    w.emit(
        "response.function_call_arguments.done",
        json!({"item_id": id, "output_index": index, "arguments": arguments}),
    );
    let item = json!({
        "type": "function_call", "id": id, "call_id": call_id, "name": name,
        "arguments": arguments, "status": "completed"
    });
    w.emit(
        "response.output_item.done",
        json!({"output_index": index, "item": item}),
    );
    item
}

/// The live API's error shape (fields nested under `error`), followed by `response.failed`
/// carrying the same code: clients that stop at `error` and clients that wait for the
/// terminal `response.failed` both see the failure. `sent` is the number of events already
/// sent, so sequence numbers continue.
pub(crate) fn stream_error(ctx: &RenderCtx, sent: usize, kind: &str, message: &str) -> Vec<Frame> {
    let mut w = Writer {
        seq: sent,
        frames: Vec::new(),
    };
    w.emit(
        "error",
        json!({"error": {"type": kind, "code": kind, "message": message, "param": null}}),
    );
    let mut failed = response_object(ctx, "failed", vec![], Value::Null);
    failed["error"] = json!({"code": kind, "message": message});
    w.emit("response.failed", json!({ "response": failed }));
    w.frames
}

fn merge(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    if let (Value::Object(out), Value::Object(extra)) = (&mut out, extra) {
        out.extend(extra);
    }
    out
}
