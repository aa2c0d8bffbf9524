//! Each wire format renders reasoning + text + tool call with the right framing and order.

mod common;

use common::{frames_one_per_chunk, post};
use jucode_testkit::{ScriptedResponse, ScriptedServer};
use serde_json::{json, Value};

const ARGS: &str = r#"{"cmd":"cargo test"}"#;

fn full_script() -> ScriptedResponse {
    ScriptedResponse::text("I'll run the tests.")
        .with_reasoning("Checking the failure")
        .with_tool_call("call_1", "shell", ARGS)
        .with_usage(5120, 4096, 310, 192)
}

fn sse_headers_ok(resp: &common::HttpResponse) {
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("text/event-stream"));
    assert!(resp.complete, "stream must end cleanly");
}

#[test]
fn responses_format() {
    let server = ScriptedServer::start();
    server.push(full_script());
    let resp = post(server.addr(), "/v1/responses", r#"{"model":"gpt-x"}"#);
    sse_headers_ok(&resp);
    let frames = frames_one_per_chunk(&resp);
    let events: Vec<Value> = frames.iter().map(|f| f.json()).collect();
    for (i, (frame, ev)) in frames.iter().zip(&events).enumerate() {
        assert_eq!(
            frame.event.as_deref(),
            ev["type"].as_str(),
            "event line = type"
        );
        assert_eq!(ev["sequence_number"], json!(i));
    }
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let mut expected = vec![
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
    ];
    expected.extend(["response.reasoning_summary_text.delta"; 3]);
    expected.extend([
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
    ]);
    expected.extend(["response.output_text.delta"; 4]);
    expected.extend([
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
    ]);
    expected.extend(["response.function_call_arguments.delta"; 3]);
    expected.extend([
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(types, expected);

    assert_eq!(events[0]["response"]["model"], "gpt-x");
    assert_eq!(events[0]["response"]["id"], "resp_1");
    let of_type = |t: &str| -> Vec<&Value> { events.iter().filter(|e| e["type"] == t).collect() };
    let summary: String = of_type("response.reasoning_summary_text.delta")
        .iter()
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(summary, "Checking the failure");
    let added = of_type("response.output_item.added");
    assert!(added[0]["item"].get("encrypted_content").is_none());
    let done = of_type("response.output_item.done");
    assert_eq!(done[0]["item"]["type"], "reasoning");
    assert_eq!(done[0]["item"]["encrypted_content"], "enc:rs_1_0");
    let text: String = of_type("response.output_text.delta")
        .iter()
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "I'll run the tests.");
    assert_eq!(done[1]["item"]["content"][0]["text"], text);
    let args: String = of_type("response.function_call_arguments.delta")
        .iter()
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(args, ARGS);
    assert_eq!(
        done[2]["item"],
        json!({"type": "function_call", "id": "fc_1_2", "call_id": "call_1", "name": "shell",
               "arguments": ARGS, "status": "completed"})
    );
    assert_eq!(done[2]["output_index"], 2);
    let completed = &events.last().unwrap()["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(
        completed["usage"],
        json!({"input_tokens": 5120, "input_tokens_details": {"cached_tokens": 4096},
               "output_tokens": 310, "output_tokens_details": {"reasoning_tokens": 192},
               "total_tokens": 5430})
    );
    assert_eq!(completed["output"].as_array().unwrap().len(), 3);
}

#[test]
fn chat_format() {
    let server = ScriptedServer::start();
    server.push(full_script());
    let resp = post(server.addr(), "/v1/chat/completions", "{}");
    sse_headers_ok(&resp);
    let frames = frames_one_per_chunk(&resp);
    assert!(
        frames.iter().all(|f| f.event.is_none()),
        "chat has no event: lines"
    );
    assert_eq!(frames[1].comment.as_deref(), Some("keep-alive"));
    assert_eq!(frames.last().unwrap().data.as_deref(), Some("[DONE]"));
    let chunks: Vec<Value> = frames
        .iter()
        .filter(|f| f.comment.is_none() && f.data.as_deref() != Some("[DONE]"))
        .map(|f| f.json())
        .collect();
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    assert_eq!(chunks[0]["model"], "test-model");
    assert_eq!(chunks[0]["usage"], Value::Null);
    let deltas: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"].get(0).map(|ch| &ch["delta"]))
        .collect();
    let join = |key: &str| -> String {
        deltas
            .iter()
            .filter_map(|d| d.get(key).and_then(Value::as_str))
            .collect()
    };
    assert_eq!(join("reasoning_content"), "Checking the failure");
    assert_eq!(join("content"), "I'll run the tests.");
    // Reasoning strictly before text, text before tool calls.
    let has = |d: &Value, key: &str| d.get(key).is_some_and(|v| v != "");
    let first = |key: &str| deltas.iter().position(|d| has(d, key)).unwrap();
    let last = |key: &str| deltas.iter().rposition(|d| has(d, key)).unwrap();
    assert!(last("reasoning_content") < first("content"));
    assert!(last("content") < first("tool_calls"));
    let calls: Vec<&Value> = deltas
        .iter()
        .filter_map(|d| d.get("tool_calls"))
        .map(|t| &t[0])
        .collect();
    assert_eq!(
        *calls[0],
        json!({"index": 0, "id": "call_1", "type": "function",
               "function": {"name": "shell", "arguments": ""}})
    );
    assert!(calls[1..]
        .iter()
        .all(|c| c.get("id").is_none() && c["function"].get("name").is_none()));
    let args: String = calls
        .iter()
        .map(|c| c["function"]["arguments"].as_str().unwrap())
        .collect();
    assert_eq!(args, ARGS);
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(
        usage["usage"],
        json!({"prompt_tokens": 5120, "completion_tokens": 310, "total_tokens": 5430,
               "prompt_tokens_details": {"cached_tokens": 4096},
               "completion_tokens_details": {"reasoning_tokens": 192}})
    );
}

#[test]
fn chat_without_usage_or_tools() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("hi"));
    let resp = post(server.addr(), "/v1/chat/completions", "{}");
    let frames = frames_one_per_chunk(&resp);
    let last_chunk = frames[frames.len() - 2].json();
    assert_eq!(last_chunk["choices"][0]["finish_reason"], "stop");
    assert!(last_chunk.get("usage").is_none());
    assert_eq!(frames.last().unwrap().data.as_deref(), Some("[DONE]"));
}

#[test]
fn anthropic_format() {
    let server = ScriptedServer::start();
    server.push(full_script());
    let resp = post(server.addr(), "/v1/messages", r#"{"model":"claude-x"}"#);
    sse_headers_ok(&resp);
    let frames = frames_one_per_chunk(&resp);
    let events: Vec<Value> = frames.iter().map(|f| f.json()).collect();
    for (frame, ev) in frames.iter().zip(&events) {
        assert_eq!(frame.event.as_deref(), ev["type"].as_str());
    }
    let types: Vec<String> = events
        .iter()
        .map(|e| match e["type"].as_str().unwrap() {
            "content_block_delta" => format!("delta:{}", e["delta"]["type"].as_str().unwrap()),
            t => t.to_string(),
        })
        .collect();
    let mut expected = vec!["message_start", "ping", "content_block_start"];
    expected.extend(["delta:thinking_delta"; 3]);
    expected.extend([
        "delta:signature_delta",
        "content_block_stop",
        "content_block_start",
    ]);
    expected.extend(["delta:text_delta"; 4]);
    expected.extend(["content_block_stop", "content_block_start"]);
    expected.extend(["delta:input_json_delta"; 3]);
    expected.extend(["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(types, expected);

    let start = &events[0]["message"];
    assert_eq!(start["model"], "claude-x");
    assert_eq!(start["usage"]["input_tokens"], 5120 - 4096);
    assert_eq!(start["usage"]["cache_read_input_tokens"], 4096);
    assert_eq!(events[2]["content_block"]["type"], "thinking");
    assert_eq!(events[6]["delta"]["signature"], "sig:msg_1:0");
    let tool_start = events
        .iter()
        .find(|e| e["content_block"]["type"] == "tool_use")
        .unwrap();
    assert_eq!(tool_start["index"], 2);
    assert_eq!(
        tool_start["content_block"],
        json!({"type": "tool_use", "id": "call_1", "name": "shell", "input": {}})
    );
    let partial: String = events
        .iter()
        .filter(|e| e["delta"]["type"] == "input_json_delta")
        .map(|e| e["delta"]["partial_json"].as_str().unwrap())
        .collect();
    assert_eq!(partial, ARGS);
    let text: String = events
        .iter()
        .filter(|e| e["delta"]["type"] == "text_delta")
        .map(|e| e["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "I'll run the tests.");
    let delta = &events[events.len() - 2];
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"]["output_tokens"], 310);
}

#[test]
fn anthropic_text_only_ends_turn() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("hello"));
    let events: Vec<Value> = post(server.addr(), "/v1/messages", "{}")
        .events()
        .iter()
        .map(|f| f.json())
        .collect();
    let delta = &events[events.len() - 2];
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert_eq!(events[0]["message"]["usage"]["input_tokens"], 0);
}

#[test]
fn ids_follow_the_response_number() {
    let server = ScriptedServer::start();
    server.push_all([
        ScriptedResponse::text("a"),
        ScriptedResponse::tool_call("call_9", "read", "{}"),
    ]);
    post(server.addr(), "/v1/responses", "{}");
    let events: Vec<Value> = post(server.addr(), "/v1/responses", "{}")
        .events()
        .iter()
        .map(|f| f.json())
        .collect();
    assert_eq!(events[0]["response"]["id"], "resp_2");
    let done = events
        .iter()
        .find(|e| e["type"] == "response.output_item.done")
        .unwrap();
    assert_eq!(done["item"]["id"], "fc_2_0");
    assert_eq!(done["item"]["arguments"], "{}");
    // No usage scripted: Responses reports null usage.
    assert_eq!(events.last().unwrap()["response"]["usage"], Value::Null);
}
