use serde_json::json;

use super::*;
use crate::sse::test_support::{join_deltas, run, run_all_splits};
use crate::types::{ImageInput, ModelError, StreamEvent, ToolSpec};

fn request() -> ModelRequest {
    ModelRequest {
        model: "gpt-5".into(),
        instructions: "Be brief.".into(),
        history: vec![
            HistoryItem::User {
                text: "Fix the test".into(),
                images: vec![ImageInput {
                    media_type: "image/png".into(),
                    data_base64: "iVBOR".into(),
                }],
            },
            HistoryItem::Reasoning {
                text: "Checking".into(),
                replay: Some(
                    json!({"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"}),
                ),
            },
            // Anthropic replay data is not ours to send.
            HistoryItem::Reasoning {
                text: "x".into(),
                replay: Some(json!({"type":"thinking","thinking":"x","signature":"s"})),
            },
            HistoryItem::Assistant {
                text: "Running tests.".into(),
            },
            HistoryItem::ToolCall {
                call_id: "call_1".into(),
                name: "shell".into(),
                arguments: "{\"cmd\":\"cargo test\"}".into(),
            },
            HistoryItem::ToolResult {
                call_id: "call_1".into(),
                output: "FAILED".into(),
                is_error: true,
            },
        ],
        tools: vec![ToolSpec {
            name: "shell".into(),
            description: "Run a command".into(),
            parameters: json!({"type":"object","properties":{"cmd":{"type":"string"}}}),
        }],
        reasoning_effort: Some("medium".into()),
        max_output_tokens: Some(4096),
        cache_key: "session-1".into(),
    }
}

#[test]
fn body_has_the_exact_shape() {
    assert_eq!(
        build_body(&request()),
        json!({
            "model": "gpt-5",
            "instructions": "Be brief.",
            "input": [
                {"type":"message","role":"user","content":[
                    {"type":"input_text","text":"Fix the test"},
                    {"type":"input_image","image_url":"data:image/png;base64,iVBOR"}]},
                {"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},
                {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Running tests."}]},
                {"type":"function_call","call_id":"call_1","name":"shell","arguments":"{\"cmd\":\"cargo test\"}"},
                {"type":"function_call_output","call_id":"call_1","output":"FAILED"}
            ],
            "tools": [{"type":"function","name":"shell","description":"Run a command",
                "parameters":{"type":"object","properties":{"cmd":{"type":"string"}}},"strict":false}],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort":"medium","summary":"auto"},
            "store": false,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "session-1",
            "max_output_tokens": 4096
        })
    );
}

#[test]
fn body_without_effort_or_limit() {
    let mut req = request();
    req.model = "gpt-4.1".into();
    req.reasoning_effort = None;
    req.max_output_tokens = None;
    let body = build_body(&req);
    assert!(body.get("reasoning").is_none());
    assert!(
        body.get("include").is_none(),
        "gpt-4.1 rejects encrypted reasoning"
    );
    assert!(body.get("max_output_tokens").is_none());
    req.model = "o4-mini".into();
    assert_eq!(
        build_body(&req)["include"],
        json!(["reasoning.encrypted_content"])
    );
}

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {}\n\n", e["type"].as_str().unwrap(), e))
        .collect()
}

fn full_stream() -> String {
    sse(&[
        json!({"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}),
        json!({"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}),
        json!({"type":"response.reasoning_summary_part.added","item_id":"rs_1","summary_index":0}),
        json!({"type":"response.reasoning_summary_text.delta","item_id":"rs_1","summary_index":0,"delta":"Checking…"}),
        json!({"type":"response.reasoning_summary_part.added","item_id":"rs_1","summary_index":1}),
        json!({"type":"response.reasoning_summary_text.delta","item_id":"rs_1","summary_index":1,"delta":"Done."}),
        // `.added` must never be used for replay: its content is partial.
        json!({"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1",
            "summary":[{"type":"summary_text","text":"Checking…"},{"type":"summary_text","text":"Done."}],
            "encrypted_content":"gAAA-full"}}),
        json!({"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}),
        json!({"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"I'll run "}),
        json!({"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"the tests. ✓"}),
        json!({"type":"response.output_item.done","output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant",
            "content":[{"type":"output_text","text":"I'll run the tests. ✓"}]}}),
        json!({"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"shell","arguments":""}}),
        json!({"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{\"cmd\":\"car"}),
        json!({"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"go test\"}"}),
        json!({"type":"response.function_call_arguments.done","item_id":"fc_1","arguments":"{\"cmd\":\"cargo test\"}"}),
        json!({"type":"response.output_item.done","output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"shell","arguments":"{\"cmd\":\"cargo test\"}","status":"completed"}}),
        // A parallel call that arrives whole, with no deltas.
        json!({"type":"response.output_item.done","output_index":3,"item":{"type":"function_call","id":"fc_2","call_id":"call_2","name":"read","arguments":"{}"}}),
        json!({"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":5120,
            "input_tokens_details":{"cached_tokens":4096},"output_tokens":310,
            "output_tokens_details":{"reasoning_tokens":192},"total_tokens":5430}}}),
    ])
}

#[test]
fn parses_a_full_stream_split_anywhere() {
    let (result, events) = run_all_splits(ResponsesParser::default, &full_stream());
    let response = result.unwrap();
    assert_eq!(
        response.items,
        vec![
            HistoryItem::Reasoning {
                text: "Checking…\n\nDone.".into(),
                replay: Some(json!({"type":"reasoning","id":"rs_1",
                    "summary":[{"type":"summary_text","text":"Checking…"},{"type":"summary_text","text":"Done."}],
                    "encrypted_content":"gAAA-full"})),
            },
            HistoryItem::Assistant {
                text: "I'll run the tests. ✓".into()
            },
            HistoryItem::ToolCall {
                call_id: "call_1".into(),
                name: "shell".into(),
                arguments: "{\"cmd\":\"cargo test\"}".into()
            },
            HistoryItem::ToolCall {
                call_id: "call_2".into(),
                name: "read".into(),
                arguments: "{}".into()
            },
        ]
    );
    assert_eq!(response.stop_reason, StopReason::ToolCalls);
    assert_eq!(
        response.usage,
        Some(Usage {
            input_tokens: 5120,
            cached_input_tokens: 4096,
            cache_write_tokens: 0,
            output_tokens: 310,
            reasoning_tokens: 192
        })
    );
    assert_eq!(
        join_deltas(&events),
        vec![
            StreamEvent::ReasoningDelta("Checking…\n\nDone.".into()),
            StreamEvent::TextDelta("I'll run the tests. ✓".into()),
            StreamEvent::ToolCallStart {
                call_id: "call_1".into(),
                name: "shell".into()
            },
            StreamEvent::ToolCallDelta {
                call_id: "call_1".into(),
                delta: "{\"cmd\":\"cargo test\"}".into()
            },
            StreamEvent::ToolCallStart {
                call_id: "call_2".into(),
                name: "read".into()
            },
            StreamEvent::ToolCallDelta {
                call_id: "call_2".into(),
                delta: "{}".into()
            },
        ]
    );
}

#[test]
fn deltas_arrive_one_per_event() {
    // Each delta is passed on by itself, not merged with its neighbours.
    let (_, events) = run(ResponsesParser::default(), vec![full_stream().into()]);
    let texts: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::TextDelta(_)))
        .collect();
    assert_eq!(texts.len(), 2);
}

#[test]
fn raw_reasoning_text_and_completed_output_fallback() {
    let body = sse(&[
        json!({"type":"response.reasoning_text.delta","item_id":"rs_1","delta":"raw thought"}),
        json!({"type":"response.output_text.delta","item_id":"m","delta":"hi"}),
        // No output_item.done at all: the completed response's output is used.
        json!({"type":"response.completed","response":{"output":[
            {"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"raw thought"}]},
            {"type":"message","content":[{"type":"output_text","text":"hi"}]}]}}),
    ]);
    let (result, events) = run_all_splits(ResponsesParser::default, &body);
    let response = result.unwrap();
    assert_eq!(response.stop_reason, StopReason::End);
    assert_eq!(response.usage, None);
    assert!(
        matches!(&response.items[0], HistoryItem::Reasoning { text, .. } if text == "raw thought")
    );
    assert_eq!(
        response.items[1],
        HistoryItem::Assistant { text: "hi".into() }
    );
    assert_eq!(events[0], StreamEvent::ReasoningDelta("raw thought".into()));
}

#[test]
fn incomplete_means_max_tokens() {
    let body = sse(&[
        json!({"type":"response.output_text.delta","delta":"partial"}),
        json!({"type":"response.output_item.done","output_index":0,"item":{"type":"message","content":[{"type":"output_text","text":"partial"}]}}),
        json!({"type":"response.incomplete","response":{"status":"incomplete",
            "incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":10,"output_tokens":5}}}),
    ]);
    let (result, _) = run_all_splits(ResponsesParser::default, &body);
    let response = result.unwrap();
    assert_eq!(response.stop_reason, StopReason::MaxTokens);
    assert_eq!(response.usage.unwrap().output_tokens, 5);
    assert_eq!(
        response.items,
        vec![HistoryItem::Assistant {
            text: "partial".into()
        }]
    );
}

#[test]
fn failures_are_classified() {
    let failed = |code: &str, message: &str| {
        sse(&[
            json!({"type":"response.failed","response":{"status":"failed","error":{"code":code,"message":message}}}),
        ])
    };
    let (r, _) = run(
        ResponsesParser::default(),
        vec![failed("context_length_exceeded", "too long").into()],
    );
    assert!(matches!(
        r,
        Err(Failure::Fatal(ModelError::ContextLength(_)))
    ));
    let (r, _) = run(
        ResponsesParser::default(),
        vec![failed("insufficient_quota", "no money").into()],
    );
    assert!(matches!(r, Err(Failure::Fatal(ModelError::Quota(_)))));
    let (r, _) = run(
        ResponsesParser::default(),
        vec![failed(
            "rate_limit_exceeded",
            "Rate limit reached. Please try again in 11.054s.",
        )
        .into()],
    );
    assert_eq!(
        r,
        Err(Failure::Transient {
            reason: "Rate limit reached. Please try again in 11.054s.".into(),
            delay: Some(std::time::Duration::from_millis(11_054)),
        })
    );

    // `error` events: live (nested) and spec (top-level) shapes.
    let nested = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"server_error\",\"code\":null,\"message\":\"boom\"}}\n\n";
    let (r, _) = run(ResponsesParser::default(), vec![nested.into()]);
    assert_eq!(r, Err(Failure::transient("boom")));
    let top = "event: error\ndata: {\"type\":\"error\",\"code\":\"context_length_exceeded\",\"message\":\"big\",\"param\":null}\n\n";
    let (r, _) = run(ResponsesParser::default(), vec![top.into()]);
    assert_eq!(
        r,
        Err(Failure::Fatal(ModelError::ContextLength("big".into())))
    );
}

#[test]
fn eof_before_completed_is_transient() {
    let body = sse(&[json!({"type":"response.output_text.delta","delta":"par"})]);
    let (r, events) = run(ResponsesParser::default(), vec![body.into()]);
    assert_eq!(
        r,
        Err(Failure::transient(
            "stream closed before response.completed"
        ))
    );
    assert_eq!(events, vec![StreamEvent::TextDelta("par".into())]);
}

#[test]
fn parsing_adds_well_under_a_millisecond_per_delta() {
    let delta = json!({"type":"response.output_text.delta","item_id":"msg_1","output_index":1,
        "content_index":0,"delta":"some words of text ","sequence_number":42});
    let mut body = String::new();
    for _ in 0..5_000 {
        body.push_str(&format!(
            "event: response.output_text.delta\ndata: {delta}\n\n"
        ));
    }
    let chunks = crate::sse::test_support::split_every(&body, 1_400);
    let started = std::time::Instant::now();
    let (_, events) = run(ResponsesParser::default(), chunks);
    let per_event = started.elapsed() / 5_000;
    assert_eq!(events.len(), 5_000);
    // Generous for an unoptimised build on a busy machine; release is ~100× lower.
    assert!(
        per_event < std::time::Duration::from_micros(500),
        "{per_event:?}"
    );
}
