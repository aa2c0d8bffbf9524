use serde_json::json;

use super::*;
use crate::sse::test_support::{join_deltas, run, run_all_splits};
use crate::types::{ImageInput, ModelError, StreamEvent, ToolSpec};

fn request() -> ModelRequest {
    ModelRequest {
        model: "qwen3-coder:30b".into(),
        instructions: "Be brief.".into(),
        history: vec![
            HistoryItem::User {
                text: "Look".into(),
                images: vec![ImageInput {
                    media_type: "image/jpeg".into(),
                    data_base64: "/9j/".into(),
                }],
            },
            HistoryItem::Reasoning {
                text: "hmm".into(),
                replay: None,
            },
            HistoryItem::Assistant {
                text: "Running.".into(),
            },
            HistoryItem::ToolCall {
                call_id: "call_a".into(),
                name: "shell".into(),
                arguments: "{\"cmd\":\"ls\"}".into(),
            },
            HistoryItem::ToolCall {
                call_id: "call_b".into(),
                name: "read".into(),
                arguments: "{}".into(),
            },
            HistoryItem::ToolResult {
                call_id: "call_a".into(),
                output: "a.txt".into(),
                is_error: false,
            },
            HistoryItem::ToolResult {
                call_id: "call_b".into(),
                output: "".into(),
                is_error: false,
            },
            HistoryItem::User {
                text: "thanks".into(),
                images: vec![],
            },
        ],
        tools: vec![ToolSpec {
            name: "shell".into(),
            description: "Run".into(),
            parameters: json!({"type":"object"}),
        }],
        reasoning_effort: Some("low".into()),
        max_output_tokens: Some(1000),
        cache_key: "s".into(),
    }
}

#[test]
fn body_has_the_exact_shape() {
    assert_eq!(
        build_body(&request()),
        json!({
            "model": "qwen3-coder:30b",
            "messages": [
                {"role":"system","content":"Be brief."},
                {"role":"user","content":[{"type":"text","text":"Look"},
                    {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/"}}]},
                {"role":"assistant","content":"Running.","tool_calls":[
                    {"id":"call_a","type":"function","function":{"name":"shell","arguments":"{\"cmd\":\"ls\"}"}},
                    {"id":"call_b","type":"function","function":{"name":"read","arguments":"{}"}}]},
                {"role":"tool","tool_call_id":"call_a","content":"a.txt"},
                {"role":"tool","tool_call_id":"call_b","content":""},
                {"role":"user","content":"thanks"}
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [{"type":"function","function":{"name":"shell","description":"Run","parameters":{"type":"object"}}}],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning_effort": "low",
            "max_completion_tokens": 1000
        })
    );
}

#[test]
fn body_minimal() {
    let req = ModelRequest {
        instructions: String::new(),
        history: vec![HistoryItem::ToolCall {
            call_id: "c".into(),
            name: "n".into(),
            arguments: "{}".into(),
        }],
        tools: vec![],
        reasoning_effort: None,
        max_output_tokens: None,
        ..request()
    };
    assert_eq!(
        build_body(&req),
        json!({
            "model": "qwen3-coder:30b",
            "messages": [{"role":"assistant","content":null,"tool_calls":[
                {"id":"c","type":"function","function":{"name":"n","arguments":"{}"}}]}],
            "stream": true,
            "stream_options": {"include_usage": true}
        })
    );
}

fn data(chunks: &[Value]) -> String {
    let mut s: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    s.push_str("data: [DONE]\n\n");
    s
}

#[test]
fn streamed_text_reasoning_and_calls_split_anywhere() {
    let body = format!(
        ": OPENROUTER PROCESSING\n\n{}",
        data(&[
            json!({"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}),
            json!({"choices":[{"index":0,"delta":{"reasoning_content":"Think"}}],"usage":null}),
            json!({"choices":[{"index":0,"delta":{"reasoning":"ing"}}]}),
            json!({"choices":[{"index":0,"delta":{"reasoning":"x","reasoning_content":"."}}]}),
            json!({"choices":[{"index":0,"delta":{"content":"Héllo"}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"shell","arguments":""}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"cmd\":"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"read","arguments":"{}"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
            json!({"choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":40,"prompt_tokens_details":{"cached_tokens":1024}}}),
        ])
    );
    let (result, events) = run_all_splits(ChatParser::default, &body);
    let response = result.unwrap();
    assert_eq!(
        response.items,
        vec![
            HistoryItem::Reasoning {
                text: "Thinking.".into(),
                replay: None
            },
            HistoryItem::Assistant {
                text: "Héllo".into()
            },
            HistoryItem::ToolCall {
                call_id: "call_a".into(),
                name: "shell".into(),
                arguments: "{\"cmd\":\"ls\"}".into()
            },
            HistoryItem::ToolCall {
                call_id: "call_b".into(),
                name: "read".into(),
                arguments: "{}".into()
            },
        ]
    );
    assert_eq!(response.stop_reason, StopReason::ToolCalls);
    assert_eq!(
        response.usage,
        Some(Usage {
            input_tokens: 1200,
            cached_input_tokens: 1024,
            output_tokens: 40,
            ..Usage::default()
        })
    );
    assert_eq!(
        join_deltas(&events),
        vec![
            StreamEvent::ReasoningDelta("Thinking.".into()),
            StreamEvent::TextDelta("Héllo".into()),
            StreamEvent::ToolCallStart {
                call_id: "call_a".into(),
                name: "shell".into()
            },
            StreamEvent::ToolCallDelta {
                call_id: "call_a".into(),
                delta: "{\"cmd\":".into()
            },
            StreamEvent::ToolCallStart {
                call_id: "call_b".into(),
                name: "read".into()
            },
            StreamEvent::ToolCallDelta {
                call_id: "call_b".into(),
                delta: "{}".into()
            },
            StreamEvent::ToolCallDelta {
                call_id: "call_a".into(),
                delta: "\"ls\"}".into()
            },
        ]
    );
}

#[test]
fn whole_calls_without_index_and_reused_indexes() {
    // Ollama: each call whole in one chunk, older builds without `index`.
    // A gateway that sends index 0 for two different ids gets two calls.
    let body = data(&[
        json!({"choices":[{"delta":{"tool_calls":[{"id":"c1","function":{"name":"a","arguments":"{\"x\":1}"}}]}}]}),
        json!({"choices":[{"delta":{"tool_calls":[{"id":"c2","function":{"name":"b","arguments":{"y":2}}}]}}]}),
        json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c3","function":{"name":"c","arguments":""}}]}}]}),
        json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c4","function":{"name":"d"}}]}}]}),
        json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}),
        json!({"choices":[{"delta":{},"finish_reason":"stop"}]}),
    ]);
    let (result, _) = run_all_splits(ChatParser::default, &body);
    let response = result.unwrap();
    let calls: Vec<(String, String, String)> = response
        .items
        .iter()
        .map(|i| match i {
            HistoryItem::ToolCall {
                call_id,
                name,
                arguments,
            } => (call_id.clone(), name.clone(), arguments.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("c1".into(), "a".into(), "{\"x\":1}".into()),
            ("c2".into(), "b".into(), "{\"y\":2}".into()),
            ("c3".into(), "c".into(), "{}".into()),
            ("c4".into(), "d".into(), "{}".into()),
        ]
    );
    // `stop` after calls still means the model wants tool results.
    assert_eq!(response.stop_reason, StopReason::ToolCalls);
    assert_eq!(response.usage, None);
}

#[test]
fn calls_without_ids_get_one() {
    let body = data(&[
        json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"a","arguments":"{"}}]}}]}),
        json!({"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}),
        json!({"choices":[{"delta":{},"finish_reason":"tool_calls"}]}),
    ]);
    let (result, events) = run(ChatParser::default(), vec![body.into()]);
    let response = result.unwrap();
    assert_eq!(
        response.items,
        vec![HistoryItem::ToolCall {
            call_id: "call_0".into(),
            name: "a".into(),
            arguments: "{}".into()
        }]
    );
    assert_eq!(
        events[0],
        StreamEvent::ToolCallStart {
            call_id: "call_0".into(),
            name: "a".into()
        }
    );
}

#[test]
fn length_and_eof_rules() {
    let body =
        "data: {\"choices\":[{\"delta\":{\"content\":\"abc\"},\"finish_reason\":\"length\"}]}\n\n";
    // No [DONE], but a finish_reason: the response is whole.
    let (result, _) = run(ChatParser::default(), vec![body.into()]);
    assert_eq!(result.unwrap().stop_reason, StopReason::MaxTokens);

    let cut = "data: {\"choices\":[{\"delta\":{\"content\":\"abc\"}}]}\n\n";
    let (result, _) = run(ChatParser::default(), vec![cut.into()]);
    assert_eq!(
        result,
        Err(Failure::transient("stream closed before its finish_reason"))
    );
}

#[test]
fn mid_stream_errors() {
    let server = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"error\":{\"message\":\"upstream died\",\"type\":\"server_error\"}}\n\n";
    let (result, events) = run(ChatParser::default(), vec![server.into()]);
    assert_eq!(result, Err(Failure::transient("upstream died")));
    assert_eq!(events, vec![StreamEvent::TextDelta("a".into())]);

    let openrouter = "data: {\"error\":{\"message\":\"Provider returned error\",\"code\":502}}\n\n";
    let (result, _) = run(ChatParser::default(), vec![openrouter.into()]);
    assert!(matches!(result, Err(Failure::Transient { .. })));

    let bad =
        "data: {\"error\":{\"message\":\"unknown model\",\"type\":\"invalid_request_error\"}}\n\n";
    let (result, _) = run(ChatParser::default(), vec![bad.into()]);
    assert_eq!(
        result,
        Err(Failure::Fatal(ModelError::Request("unknown model".into())))
    );
}
