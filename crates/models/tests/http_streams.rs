//! `stream_response` against a real HTTP/SSE server when the stream
//! itself misbehaves: dropped, stalled or failing mid-stream (retried
//! without showing output twice), slow (deltas arrive as they come),
//! cancelled, or never connected.

mod common;

use std::time::{Duration, Instant};

use common::*;
use jucode_models::*;
use jucode_testkit::{Fault, ScriptedResponse, ScriptedServer};

/// Events at which each format's stream is cut after "Hello brave".
fn cut_after_two_words(wire: WireApi) -> usize {
    match wire {
        // created, in_progress, item.added, part.added, "Hello", " brave"
        WireApi::Responses => 6,
        // role chunk, "Hello", " brave"
        WireApi::Chat => 3,
        // message_start, ping, block_start, "Hello", " brave"
        WireApi::Anthropic => 5,
    }
}

#[tokio::test]
async fn a_dropped_stream_is_retried_without_duplicating_text() {
    for wire in WIRES {
        let server = ScriptedServer::start();
        let text = "Hello brave new world, again.";
        server.push(ScriptedResponse::text(text).with_fault(Fault::DropAfter {
            events: cut_after_two_words(wire),
        }));
        server.push(ScriptedResponse::text(text).with_usage(10, 0, 5, 0));
        let out = call(&server, wire, &policy()).await;
        let response = out
            .result
            .as_ref()
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        assert_eq!(out.text(), text, "{wire:?}: {:?}", out.events);
        assert_eq!(assistant_text(response), text, "{wire:?}");
        assert_eq!(out.count(|e| *e == StreamEvent::ResponseStarted), 1);
        let retries = out.retries();
        assert_eq!(retries.len(), 1, "{wire:?}");
        assert!(retries[0].3.contains("mock"), "{}", retries[0].3);
        // The first delta after the retry is the unseen rest, not a repeat.
        let after: Vec<&StreamEvent> = out
            .events
            .iter()
            .skip_while(|e| !matches!(e, StreamEvent::Retrying { .. }))
            .skip(1)
            .collect();
        assert_eq!(after[0], &StreamEvent::TextDelta(" new".into()), "{wire:?}");
    }
}

#[tokio::test]
async fn a_dropped_tool_call_restarts_only_once() {
    for wire in WIRES {
        let server = ScriptedServer::start();
        let args = r#"{"cmd":"cargo test --workspace"}"#;
        let script = ScriptedResponse::tool_call("call_9", "shell", args);
        // Cut after the call started and its first argument fragment.
        let cut = match wire {
            WireApi::Responses => 4,
            WireApi::Chat => 3,
            WireApi::Anthropic => 4,
        };
        server.push(script.clone().with_fault(Fault::DropAfter { events: cut }));
        server.push(script);
        let out = call(&server, wire, &policy()).await;
        let response = out.result.clone().unwrap();
        assert_eq!(
            out.count(|e| matches!(e, StreamEvent::ToolCallStart { .. })),
            1,
            "{wire:?}"
        );
        let shown: String = out
            .events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallDelta { call_id, delta } if call_id == "call_9" => {
                    Some(delta.as_str())
                }
                _ => None,
            })
            .collect();
        assert_eq!(shown, args, "{wire:?}");
        assert_eq!(
            response.items,
            vec![HistoryItem::ToolCall {
                call_id: "call_9".into(),
                name: "shell".into(),
                arguments: args.into()
            }]
        );
    }
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout_and_is_retried() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::text("slow answer here").with_fault(Fault::StallAfter {
            events: 5,
            ms: 5_000,
        }),
    );
    server.push(ScriptedResponse::text("slow answer here"));
    let out = call(&server, WireApi::Responses, &policy()).await;
    assert_eq!(
        assistant_text(out.result.as_ref().unwrap()),
        "slow answer here"
    );
    assert_eq!(out.text(), "slow answer here");
    let retries = out.retries();
    assert_eq!(retries.len(), 1);
    assert!(retries[0].3.contains("stalled"), "{}", retries[0].3);
    assert!(out.elapsed < Duration::from_secs(3), "{:?}", out.elapsed);
}

#[tokio::test]
async fn in_stream_errors_retry_or_fail_by_kind() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::text("partial answer").with_fault(Fault::StreamError {
            after: 4,
            kind: "overloaded_error".into(),
            message: "Overloaded".into(),
        }),
    );
    server.push(ScriptedResponse::text("partial answer"));
    let out = call(&server, WireApi::Anthropic, &policy()).await;
    assert!(out.result.is_ok());
    assert_eq!(out.text(), "partial answer");
    assert_eq!(out.retries().len(), 1);

    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("x").with_fault(Fault::StreamError {
        after: 2,
        kind: "context_length_exceeded".into(),
        message: "Your input exceeds the context window".into(),
    }));
    let out = call(&server, WireApi::Responses, &policy()).await;
    assert!(
        matches!(out.result, Err(ModelError::ContextLength(_))),
        "{:?}",
        out.result
    );
    assert_eq!(server.requests().len(), 1);

    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("x").with_fault(Fault::StreamError {
        after: 2,
        kind: "server_error".into(),
        message: "upstream failed".into(),
    }));
    server.push(ScriptedResponse::text("fine"));
    let out = call(&server, WireApi::Chat, &policy()).await;
    assert_eq!(assistant_text(&out.result.unwrap()), "fine");
}

#[tokio::test]
async fn deltas_arrive_while_the_stream_is_still_running() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("one two three four").with_chunk_delay(60));
    let http = reqwest::Client::new();
    let started = Instant::now();
    let mut first_text: Option<Duration> = None;
    let mut sink = |e: StreamEvent| {
        if matches!(e, StreamEvent::TextDelta(_)) && first_text.is_none() {
            first_text = Some(started.elapsed());
        }
    };
    stream_response(
        &http,
        &endpoint(&server, WireApi::Responses),
        &request(),
        &policy(),
        &mut sink,
    )
    .await
    .unwrap();
    let total = started.elapsed();
    let first = first_text.unwrap();
    // 11 events at 60 ms: the first delta must not wait for the rest.
    assert!(
        total - first >= Duration::from_millis(300),
        "first {first:?}, total {total:?}"
    );
}

#[tokio::test]
async fn dropping_the_future_cancels_cleanly() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("a b c d e f g h").with_chunk_delay(100));
    server.push(ScriptedResponse::text("next"));
    let http = reqwest::Client::new();
    let ep = endpoint(&server, WireApi::Chat);
    let mut seen = 0usize;
    let mut sink = |_e: StreamEvent| seen += 1;
    let (req, pol) = (request(), policy());
    let fut = stream_response(&http, &ep, &req, &pol, &mut sink);
    assert!(tokio::time::timeout(Duration::from_millis(250), fut)
        .await
        .is_err());
    assert!(seen > 0);
    // The client and the server are fine for the next request.
    let out = call(&server, WireApi::Chat, &policy()).await;
    assert_eq!(assistant_text(&out.result.unwrap()), "next");
}

#[tokio::test]
async fn connection_refused_is_transient() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let ep = Endpoint {
        provider: "gone".into(),
        wire_api: WireApi::Chat,
        base_url: format!("http://127.0.0.1:{port}/v1"),
        api_key: None,
        headers: vec![],
    };
    let mut events = Vec::new();
    let mut sink = |e: StreamEvent| events.push(e);
    let result = stream_response(
        &reqwest::Client::new(),
        &ep,
        &request(),
        &RetryPolicy {
            max_retries: 1,
            ..policy()
        },
        &mut sink,
    )
    .await;
    let Err(ModelError::RetriesExhausted(msg)) = result else {
        panic!("{result:?}")
    };
    assert!(msg.contains("cannot reach provider gone"), "{msg}");
    assert_eq!(events.len(), 1);
}
