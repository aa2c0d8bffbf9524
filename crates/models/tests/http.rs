//! `stream_response` against a real HTTP/SSE server (jucode-testkit's
//! ScriptedServer): request shape and auth headers, HTTP-status retries
//! with server-requested delays, and non-retryable failures.

mod common;

use std::time::Duration;

use common::*;
use jucode_models::*;
use jucode_testkit::{ScriptedResponse, ScriptedServer};

#[tokio::test]
async fn happy_path_in_every_format_with_auth_headers_and_usage() {
    for wire in WIRES {
        let server = ScriptedServer::start();
        server.push(
            ScriptedResponse::text("All done here.")
                .with_reasoning("Thinking it over")
                .with_tool_call("call_1", "shell", r#"{"cmd":"ls -la"}"#)
                .with_usage(1000, 800, 50, 10),
        );
        let out = call(&server, wire, &policy()).await;
        let response = out
            .result
            .as_ref()
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        assert_eq!(assistant_text(response), "All done here.", "{wire:?}");
        assert_eq!(out.text(), "All done here.", "{wire:?}");
        assert_eq!(out.events[0], StreamEvent::ResponseStarted, "{wire:?}");
        assert_eq!(response.stop_reason, StopReason::ToolCalls, "{wire:?}");
        assert!(response.items.contains(&HistoryItem::ToolCall {
            call_id: "call_1".into(),
            name: "shell".into(),
            arguments: r#"{"cmd":"ls -la"}"#.into(),
        }));
        let usage = response.usage.unwrap();
        assert_eq!(
            (
                usage.input_tokens,
                usage.cached_input_tokens,
                usage.output_tokens
            ),
            (1000, 800, 50),
            "{wire:?}"
        );

        let reqs = server.requests();
        assert_eq!(reqs.len(), 1);
        let r = &reqs[0];
        assert_eq!(r.header("x-extra"), Some("yes"));
        match wire {
            WireApi::Responses => {
                assert_eq!(r.path, "/v1/responses");
                assert_eq!(
                    r.header("authorization"),
                    Some(format!("Bearer {KEY}").as_str())
                );
                assert_eq!(r.body["prompt_cache_key"], "session-1");
            }
            WireApi::Chat => {
                assert_eq!(r.path, "/v1/chat/completions");
                assert_eq!(
                    r.header("authorization"),
                    Some(format!("Bearer {KEY}").as_str())
                );
            }
            WireApi::Anthropic => {
                assert_eq!(r.path, "/v1/messages");
                assert_eq!(r.header("x-api-key"), Some(KEY));
                assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(r.header("authorization"), None);
                // Thinking comes back with its signature for replay.
                assert!(response.items.iter().any(|i| matches!(i,
                    HistoryItem::Reasoning { replay: Some(v), .. } if v["signature"] == "sig:msg_1:0")));
            }
        }
        assert_eq!(r.body["stream"], true);
    }
}

#[tokio::test]
async fn retries_a_500_then_succeeds() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::status(500));
    server.push(ScriptedResponse::text("Recovered."));
    let out = call(&server, WireApi::Responses, &policy()).await;
    assert_eq!(assistant_text(out.result.as_ref().unwrap()), "Recovered.");
    let retries = out.retries();
    assert_eq!(retries.len(), 1);
    let (attempt, max, delay_ms, reason) = &retries[0];
    assert_eq!((*attempt, *max), (1, 3));
    assert!(
        (7..=10).contains(delay_ms),
        "backoff 10 ms minus jitter: {delay_ms}"
    );
    assert!(
        reason.contains("HTTP 500") && reason.contains("scripted HTTP 500"),
        "{reason}"
    );
    assert_eq!(out.count(|e| *e == StreamEvent::ResponseStarted), 1);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn honours_retry_after_ms_and_retry_after_seconds() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::status(429).with_retry_after_ms(150));
    server.push(ScriptedResponse::text("ok"));
    let out = call(&server, WireApi::Chat, &policy()).await;
    assert!(out.result.is_ok());
    assert_eq!(out.retries()[0].2, 150);
    assert!(
        out.elapsed >= Duration::from_millis(150),
        "{:?}",
        out.elapsed
    );

    let server = ScriptedServer::start();
    server.push(ScriptedResponse::status(503).with_retry_after("1"));
    server.push(ScriptedResponse::text("ok"));
    let out = call(&server, WireApi::Anthropic, &policy()).await;
    assert!(out.result.is_ok());
    assert_eq!(out.retries()[0].2, 1_000);
    assert!(out.elapsed >= Duration::from_secs(1));
}

#[tokio::test]
async fn a_delay_above_the_honoured_maximum_fails_at_once() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::status(429).with_retry_after("120"));
    server.push(ScriptedResponse::text("never"));
    let out = call(&server, WireApi::Responses, &policy()).await;
    let Err(ModelError::RetriesExhausted(msg)) = &out.result else {
        panic!("{:?}", out.result)
    };
    assert!(msg.contains("120 s"), "{msg}");
    assert!(out.retries().is_empty());
    assert_eq!(server.requests().len(), 1);
    assert!(out.elapsed < Duration::from_secs(2));
}

#[tokio::test]
async fn gives_up_after_max_retries_with_the_last_reason() {
    let server = ScriptedServer::start();
    for _ in 0..4 {
        server.push(ScriptedResponse::status(503));
    }
    let out = call(
        &server,
        WireApi::Chat,
        &RetryPolicy {
            max_retries: 2,
            ..policy()
        },
    )
    .await;
    let Err(ModelError::RetriesExhausted(msg)) = &out.result else {
        panic!("{:?}", out.result)
    };
    assert!(
        msg.contains("failed 3 times") && msg.contains("HTTP 503"),
        "{msg}"
    );
    let attempts: Vec<u32> = out.retries().iter().map(|r| r.0).collect();
    assert_eq!(attempts, [1, 2]);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn auth_failure_is_not_retried_and_never_shows_the_key() {
    for wire in WIRES {
        let server = ScriptedServer::start();
        server.push(ScriptedResponse::status(401).with_error_body(&format!(
            r#"{{"error":{{"message":"Incorrect API key provided: {KEY}","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
        )));
        let out = call(&server, wire, &policy()).await;
        let Err(ModelError::Auth(msg)) = &out.result else {
            panic!("{:?}", out.result)
        };
        assert_eq!(
            msg,
            "authentication failed (HTTP 401) for provider mock: check the API key"
        );
        assert!(!msg.contains(KEY));
        assert!(out.events.is_empty(), "{:?}", out.events);
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn other_client_errors_carry_the_server_message() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::status(404));
    let out = call(&server, WireApi::Responses, &policy()).await;
    assert_eq!(
        out.result,
        Err(ModelError::Request(
            "HTTP 404 from provider mock: scripted HTTP 404".into()
        ))
    );
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::status(400).with_error_body(
        r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","code":"context_length_exceeded"}}"#,
    ));
    let out = call(&server, WireApi::Chat, &policy()).await;
    assert!(
        matches!(out.result, Err(ModelError::ContextLength(_))),
        "{:?}",
        out.result
    );
}

#[test]
fn the_future_is_send_so_the_engine_can_spawn_it() {
    fn assert_send<T: Send>(_: &T) {}
    let http = reqwest::Client::new();
    let server = ScriptedServer::start();
    let (ep, req, pol) = (endpoint(&server, WireApi::Chat), request(), policy());
    let mut sink = |_e: StreamEvent| {};
    let fut = stream_response(&http, &ep, &req, &pol, &mut sink);
    assert_send(&fut);
}
