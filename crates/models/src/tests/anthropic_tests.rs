use serde_json::json;

use super::*;
use crate::sse::test_support::{join_deltas, run, run_all_splits};
use crate::types::{ImageInput, ModelError, StreamEvent, ToolSpec};

fn request(model: &str, effort: Option<&str>, max: Option<u64>) -> ModelRequest {
    ModelRequest {
        model: model.into(),
        instructions: "You are JuCode.".into(),
        history: vec![
            HistoryItem::User {
                text: "Fix the test".into(),
                images: vec![],
            },
            HistoryItem::Reasoning {
                text: "Let me…".into(),
                replay: Some(json!({"type":"thinking","thinking":"Let me…","signature":"EqQB"})),
            },
            // Responses replay data is not ours to send.
            HistoryItem::Reasoning {
                text: "r".into(),
                replay: Some(json!({"type":"reasoning","encrypted_content":"x"})),
            },
            HistoryItem::Assistant {
                text: "Running.".into(),
            },
            HistoryItem::ToolCall {
                call_id: "toolu_1".into(),
                name: "shell".into(),
                arguments: "{\"cmd\":\"cargo test\"}".into(),
            },
            HistoryItem::ToolCall {
                call_id: "toolu_2".into(),
                name: "read".into(),
                arguments: "not json".into(),
            },
            HistoryItem::ToolResult {
                call_id: "toolu_1".into(),
                output: "FAILED".into(),
                is_error: true,
            },
            HistoryItem::ToolResult {
                call_id: "toolu_2".into(),
                output: "ok".into(),
                is_error: false,
            },
            HistoryItem::User {
                text: "and?".into(),
                images: vec![ImageInput {
                    media_type: "image/png".into(),
                    data_base64: "iVBOR".into(),
                }],
            },
        ],
        tools: vec![
            ToolSpec {
                name: "shell".into(),
                description: "Run".into(),
                parameters: json!({"type":"object"}),
            },
            ToolSpec {
                name: "read".into(),
                description: "Read".into(),
                parameters: json!({"type":"object"}),
            },
        ],
        reasoning_effort: effort.map(String::from),
        max_output_tokens: max,
        cache_key: "s".into(),
    }
}

#[test]
fn body_has_the_exact_shape() {
    assert_eq!(
        build_body(&request(
            "claude-sonnet-4-5-20250929",
            Some("medium"),
            Some(16000)
        )),
        json!({
            "model": "claude-sonnet-4-5-20250929",
            "max_tokens": 16000,
            "stream": true,
            "system": [{"type":"text","text":"You are JuCode.","cache_control":{"type":"ephemeral"}}],
            "thinking": {"type":"enabled","budget_tokens":8192},
            "tools": [
                {"name":"shell","description":"Run","input_schema":{"type":"object"}},
                {"name":"read","description":"Read","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}
            ],
            "messages": [
                {"role":"user","content":[{"type":"text","text":"Fix the test"}]},
                {"role":"assistant","content":[
                    {"type":"thinking","thinking":"Let me…","signature":"EqQB"},
                    {"type":"text","text":"Running."},
                    {"type":"tool_use","id":"toolu_1","name":"shell","input":{"cmd":"cargo test"}},
                    {"type":"tool_use","id":"toolu_2","name":"read","input":{}}]},
                {"role":"user","content":[
                    {"type":"tool_result","tool_use_id":"toolu_1","content":"FAILED","is_error":true},
                    {"type":"tool_result","tool_use_id":"toolu_2","content":"ok","is_error":false},
                    {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}},
                    {"type":"text","text":"and?","cache_control":{"type":"ephemeral"}}]}
            ]
        })
    );
}

#[test]
fn thinking_configuration_by_model_and_effort() {
    let thinking = |model: &str, effort: Option<&str>, max: Option<u64>| {
        let b = build_body(&request(model, effort, max));
        (
            b.get("thinking").cloned(),
            b.get("output_config").cloned(),
            b["max_tokens"].clone(),
        )
    };
    for model in [
        "claude-opus-4-6",
        "claude-sonnet-4-6",
        "claude-opus-4-7",
        "claude-sonnet-5",
        "claude-haiku-5-5",
    ] {
        assert_eq!(
            thinking(model, Some("high"), None),
            (
                Some(json!({"type":"adaptive"})),
                Some(json!({"effort":"high"})),
                json!(32000)
            ),
            "{model}"
        );
    }
    assert_eq!(
        thinking("claude-opus-4-6", Some("xhigh"), None).1,
        Some(json!({"effort":"max"}))
    );
    assert_eq!(
        thinking("claude-sonnet-5", None, None),
        (None, None, json!(32000))
    );
    assert_eq!(
        thinking("claude-haiku-4-5-20251001", Some("low"), None).0,
        Some(json!({"type":"enabled","budget_tokens":2048}))
    );
    assert_eq!(
        thinking("claude-opus-4-5", Some("high"), None).0,
        Some(json!({"type":"enabled","budget_tokens":16384}))
    );
    // Clamped below max_tokens.
    assert_eq!(
        thinking("claude-opus-4-5", Some("high"), Some(4000)).0,
        Some(json!({"type":"enabled","budget_tokens":3999}))
    );
    // No room for the 1024 minimum: no thinking.
    assert_eq!(
        thinking("claude-opus-4-5", Some("high"), Some(1000)).0,
        None
    );
    assert_eq!(thinking("claude-opus-4-5", None, None).0, None);
}

#[test]
fn body_without_system_or_tools() {
    let mut req = request("claude-sonnet-5", None, None);
    req.instructions.clear();
    req.tools.clear();
    req.history = vec![HistoryItem::User {
        text: "hi".into(),
        images: vec![],
    }];
    assert_eq!(
        build_body(&req),
        json!({"model":"claude-sonnet-5","max_tokens":32000,"stream":true,
            "messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]})
    );
}

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {}\n\n", e["type"].as_str().unwrap(), e))
        .collect()
}

#[test]
fn parses_thinking_text_and_tool_use_split_anywhere() {
    let body = sse(&[
        json!({"type":"message_start","message":{"id":"msg_1","stop_reason":null,"usage":{"input_tokens":472,
            "cache_creation_input_tokens":100,"cache_read_input_tokens":12000,"output_tokens":2}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me…"}}),
        json!({"type":"ping"}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"xyz"}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}),
        json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Running "}}),
        json!({"type":"some_future_event","index":1,"whatever":true}),
        json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"tests."}}),
        json!({"type":"content_block_stop","index":1}),
        json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"shell","input":{}}}),
        json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}),
        json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"cmd\": \"car"}}),
        json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"go test\"}"}}),
        json!({"type":"content_block_stop","index":2}),
        json!({"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_2","name":"list","input":{}}}),
        json!({"type":"content_block_stop","index":3}),
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":89}}),
        json!({"type":"message_stop"}),
    ]);
    let (result, events) = run_all_splits(AnthropicParser::default, &body);
    let response = result.unwrap();
    assert_eq!(
        response.items,
        vec![
            HistoryItem::Reasoning {
                text: "Let me…".into(),
                replay: Some(json!({"type":"thinking","thinking":"Let me…","signature":"EqQBxyz"})),
            },
            HistoryItem::Assistant {
                text: "Running tests.".into()
            },
            HistoryItem::ToolCall {
                call_id: "toolu_1".into(),
                name: "shell".into(),
                arguments: "{\"cmd\": \"cargo test\"}".into()
            },
            HistoryItem::ToolCall {
                call_id: "toolu_2".into(),
                name: "list".into(),
                arguments: "{}".into()
            },
        ]
    );
    assert_eq!(response.stop_reason, StopReason::ToolCalls);
    assert_eq!(
        response.usage,
        Some(Usage {
            input_tokens: 472 + 12000 + 100,
            cached_input_tokens: 12000,
            cache_write_tokens: 100,
            output_tokens: 89,
            reasoning_tokens: 0
        })
    );
    assert_eq!(
        join_deltas(&events),
        vec![
            StreamEvent::ReasoningDelta("Let me…".into()),
            StreamEvent::TextDelta("Running tests.".into()),
            StreamEvent::ToolCallStart {
                call_id: "toolu_1".into(),
                name: "shell".into()
            },
            StreamEvent::ToolCallDelta {
                call_id: "toolu_1".into(),
                delta: "{\"cmd\": \"cargo test\"}".into()
            },
            StreamEvent::ToolCallStart {
                call_id: "toolu_2".into(),
                name: "list".into()
            },
        ]
    );
}

#[test]
fn redacted_thinking_max_tokens_and_no_event_lines() {
    // Without `event:` lines the payload type is used.
    let body: String = [
        json!({"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"abc"}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"content_block_start","index":1,"content_block":{"type":"text","text":"trunc"}}),
        json!({"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":7}}),
        json!({"type":"message_stop"}),
    ]
    .iter()
    .map(|e| format!("data: {e}\n\n"))
    .collect();
    let (result, events) = run_all_splits(AnthropicParser::default, &body);
    let response = result.unwrap();
    assert_eq!(response.stop_reason, StopReason::MaxTokens);
    assert_eq!(
        response.items,
        vec![
            HistoryItem::Reasoning {
                text: String::new(),
                replay: Some(json!({"type":"redacted_thinking","data":"abc"}))
            },
            HistoryItem::Assistant {
                text: "trunc".into()
            },
        ]
    );
    assert_eq!(response.usage.unwrap().input_tokens, 5);
    assert_eq!(response.usage.unwrap().output_tokens, 7);
    assert_eq!(events, vec![StreamEvent::TextDelta("trunc".into())]);
}

#[test]
fn error_events_and_early_eof() {
    let err = |kind: &str| {
        format!(
            "event: error\ndata: {}\n\n",
            json!({"type":"error","error":{"type":kind,"message":"Overloaded"}})
        )
    };
    let (r, _) = run(
        AnthropicParser::default(),
        vec![err("overloaded_error").into()],
    );
    assert_eq!(r, Err(Failure::transient("Overloaded")));
    let (r, _) = run(AnthropicParser::default(), vec![err("api_error").into()]);
    assert!(matches!(r, Err(Failure::Transient { .. })));
    let (r, _) = run(
        AnthropicParser::default(),
        vec![err("invalid_request_error").into()],
    );
    assert!(matches!(r, Err(Failure::Fatal(ModelError::Request(_)))));

    let cut = sse(&[json!({"type":"message_start","message":{"usage":{"input_tokens":5}}})]);
    let (r, _) = run(AnthropicParser::default(), vec![cut.into()]);
    assert_eq!(
        r,
        Err(Failure::transient("stream closed before message_stop"))
    );
}

#[test]
fn empty_tool_output_has_no_content_field() {
    let mut req = request("claude-sonnet-5", None, None);
    req.history = vec![
        HistoryItem::ToolCall {
            call_id: "t".into(),
            name: "n".into(),
            arguments: "{}".into(),
        },
        HistoryItem::ToolResult {
            call_id: "t".into(),
            output: String::new(),
            is_error: false,
        },
    ];
    assert_eq!(
        build_body(&req)["messages"][1],
        json!({"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":false,
            "cache_control":{"type":"ephemeral"}}]})
    );
}

#[test]
fn later_usage_fields_replace_earlier_ones() {
    let body = sse(&[
        json!({"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":1}}}),
        // Newer API versions repeat cumulative input counts here.
        json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":12,"output_tokens":30}}),
        json!({"type":"message_stop"}),
    ]);
    let (result, _) = run(AnthropicParser::default(), vec![body.into()]);
    assert_eq!(
        result.unwrap().usage,
        Some(Usage {
            input_tokens: 102,
            cached_input_tokens: 90,
            cache_write_tokens: 0,
            output_tokens: 30,
            reasoning_tokens: 0
        })
    );
}
