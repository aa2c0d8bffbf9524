//! Transport faults: HTTP status errors, dropped and stalled streams, in-stream errors,
//! slow chunks.

mod common;

use std::time::Duration;

use common::{frames_one_per_chunk, post};
use jucode_testkit::{Fault, ScriptedResponse, ScriptedServer};
use serde_json::{json, Value};

#[test]
fn status_with_retry_headers_and_default_bodies() {
    let server = ScriptedServer::start();
    server.push_all([
        ScriptedResponse::status(429)
            .with_retry_after("2")
            .with_retry_after_ms(1500),
        ScriptedResponse::status(529),
        ScriptedResponse::status(503),
    ]);
    let r = post(server.addr(), "/v1/responses", "{}");
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("2"));
    assert_eq!(r.header("retry-after-ms"), Some("1500"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["error"]["code"], "rate_limit_exceeded");

    let r = post(server.addr(), "/v1/messages", "{}");
    assert_eq!(r.status, 529);
    assert_eq!(r.header("retry-after"), None);
    assert_eq!(r.json()["type"], "error");
    assert_eq!(r.json()["error"]["type"], "overloaded_error");

    let r = post(server.addr(), "/v1/chat/completions", "{}");
    assert_eq!(r.status, 503);
    assert_eq!(r.json()["error"]["type"], "server_error");
}

#[test]
fn status_with_custom_body() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::status(400).with_error_body(r#"{"custom":true}"#));
    let r = post(server.addr(), "/v1/responses", "{}");
    assert_eq!(r.status, 400);
    assert_eq!(r.body(), r#"{"custom":true}"#);
}

#[test]
fn drop_after_closes_without_terminal_event() {
    for path in ["/v1/responses", "/v1/chat/completions", "/v1/messages"] {
        let server = ScriptedServer::start();
        server.push(
            ScriptedResponse::text("one two three four five")
                .with_fault(Fault::DropAfter { events: 3 }),
        );
        let r = post(server.addr(), path, "{}");
        assert_eq!(r.status, 200);
        assert!(!r.complete, "{path}: body must end abruptly");
        let frames = frames_one_per_chunk(&r);
        let events = frames.iter().filter(|f| f.comment.is_none()).count();
        assert_eq!(events, 3, "{path}: {frames:?}");
    }
}

#[test]
fn drop_after_zero_events_sends_only_headers() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("x").with_fault(Fault::DropAfter { events: 0 }));
    let r = post(server.addr(), "/v1/messages", "{}");
    assert_eq!(r.status, 200);
    assert!(!r.complete);
    assert!(r.chunks.is_empty());
}

#[test]
fn stall_keeps_connection_silent_then_drops() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::text("a b c d").with_fault(Fault::StallAfter { events: 2, ms: 600 }),
    );
    let r = post(server.addr(), "/v1/responses", "{}");
    assert!(!r.complete);
    assert_eq!(r.chunks.len(), 2);
    let silence = r.ended_at - *r.chunk_times.last().unwrap();
    assert!(
        silence >= Duration::from_millis(400),
        "stall too short: {silence:?}"
    );
}

fn stream_error(after: usize) -> ScriptedResponse {
    ScriptedResponse::text("a b c").with_fault(Fault::StreamError {
        after,
        kind: "overloaded_error".into(),
        message: "Overloaded".into(),
    })
}

#[test]
fn stream_error_responses() {
    let server = ScriptedServer::start();
    server.push(stream_error(3));
    let r = post(server.addr(), "/v1/responses", "{}");
    assert!(r.complete);
    let events: Vec<Value> = frames_one_per_chunk(&r).iter().map(|f| f.json()).collect();
    assert_eq!(events.len(), 5);
    let err = &events[3];
    assert_eq!(err["type"], "error");
    assert_eq!(err["sequence_number"], 3);
    assert_eq!(err["error"]["type"], "overloaded_error");
    assert_eq!(err["error"]["message"], "Overloaded");
    let failed = &events[4];
    assert_eq!(failed["type"], "response.failed");
    assert_eq!(failed["sequence_number"], 4);
    assert_eq!(failed["response"]["status"], "failed");
    assert_eq!(
        failed["response"]["error"],
        json!({"code": "overloaded_error", "message": "Overloaded"})
    );
}

#[test]
fn stream_error_chat() {
    let server = ScriptedServer::start();
    server.push(stream_error(2));
    let r = post(server.addr(), "/v1/chat/completions", "{}");
    assert!(r.complete);
    let frames = frames_one_per_chunk(&r);
    // role chunk, keep-alive comment, first content chunk, error; no [DONE].
    assert_eq!(frames.len(), 4);
    assert_eq!(
        frames[3].json(),
        json!({"error": {"message": "Overloaded", "type": "overloaded_error", "code": "overloaded_error"}})
    );
}

#[test]
fn stream_error_anthropic() {
    let server = ScriptedServer::start();
    server.push(stream_error(1));
    let r = post(server.addr(), "/v1/messages", "{}");
    assert!(r.complete);
    let frames = frames_one_per_chunk(&r);
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[1].event.as_deref(), Some("error"));
    assert_eq!(
        frames[1].json(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
}

#[test]
fn chunk_delay_spaces_events() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("a b").with_chunk_delay(60));
    let r = post(server.addr(), "/v1/messages", "{}");
    assert!(r.complete);
    let times = &r.chunk_times;
    assert!(times.len() >= 8);
    // The server sleeps between sends, so the span is at least the sum of the delays (minus
    // the first event's delivery latency), and events arrive one by one, not in a burst.
    let span = *times.last().unwrap() - times[0];
    let min_span = Duration::from_millis(60 * (times.len() as u64 - 1) - 50);
    assert!(span >= min_span, "span {span:?} < {min_span:?}: {times:?}");
    let spaced = times
        .windows(2)
        .filter(|w| w[1] - w[0] >= Duration::from_millis(30))
        .count();
    assert!(spaced * 2 >= times.len() - 1, "events bunched: {times:?}");
}
