//! Issue: model providers. Streamed turns in all three wire formats against
//! the scripted model server; retries, errors, usage, context, cost, /model.

mod common;

use common::*;
use jucode_testkit::{Fault, ScriptedResponse, ScriptedServer};
use serde_json::{json, Value};

const WIRES: [&str; 3] = ["responses", "chat", "anthropic"];

/// Runs one user turn and returns every event up to `status: ready`.
fn turn(d: &mut jucode_testkit::Driver, text: &str) -> Vec<Value> {
    d.send(&json!({"op":"user_message","content":text}));
    d.collect_until(|v| v["type"] == "status" && v["message"] == "ready", T)
}

fn deltas(events: &[Value], kind: &str) -> String {
    events
        .iter()
        .filter(|e| e["type"] == kind)
        .map(|e| e["delta"].as_str().unwrap())
        .collect()
}

#[test]
fn a_streamed_turn_produces_the_exact_events_in_every_wire_format() {
    for wire in WIRES {
        let server = ScriptedServer::start();
        server.push(
            ScriptedResponse::text("Hello there, friend.")
                .with_reasoning("Thinking it over.")
                .with_usage(1000, 200, 50, 10),
        );
        let home = home_for(&server, wire);
        let mut d = serve_with(&home, &[]);
        let batch = startup(&mut d);
        assert_eq!(batch[1]["state"], "ready", "{wire}");
        let events = turn(&mut d, "Say hello");
        let kinds: Vec<String> = types(&events)
            .into_iter()
            .filter(|t| t != "reasoning_delta" && t != "assistant_delta")
            .collect();
        assert_eq!(
            kinds,
            [
                "user_message",
                "status",
                "connecting",
                "thinking_start",
                "assistant_start",
                "usage",
                "context_usage",
                "status"
            ],
            "{wire}: {events:?}"
        );
        assert_eq!(events[0]["content"], "Say hello");
        assert_eq!(events[1]["message"], "streaming");
        // Reasoning comes before the text, and all of both arrives.
        let first_reasoning = events.iter().position(|e| e["type"] == "reasoning_delta");
        let start = events.iter().position(|e| e["type"] == "assistant_start");
        assert!(first_reasoning.unwrap() < start.unwrap(), "{wire}");
        assert_eq!(
            deltas(&events, "reasoning_delta"),
            "Thinking it over.",
            "{wire}"
        );
        assert_eq!(
            deltas(&events, "assistant_delta"),
            "Hello there, friend.",
            "{wire}"
        );
        let usage = events.iter().find(|e| e["type"] == "usage").unwrap();
        assert_eq!(usage["input_tokens"], 1000, "{wire}");
        assert_eq!(usage["cached_input_tokens"], 200, "{wire}");
        assert_eq!(usage["output_tokens"], 50, "{wire}");
        let context = events
            .iter()
            .find(|e| e["type"] == "context_usage")
            .unwrap();
        assert_eq!(context["tokenizer"], "o200k");
        assert_eq!(context["tokens"], 1050, "{wire}: reported input + output");
        // 800 uncached × $1 + 200 cached × $0.1 + 50 out × $2, per 1M tokens.
        let cost = context["cost"].as_f64().unwrap();
        assert!((cost - 0.000_92).abs() < 1e-9, "{wire}: cost {cost}");
    }
}

#[test]
fn the_request_has_the_right_shape_in_every_wire_format() {
    for wire in WIRES {
        let server = ScriptedServer::start();
        server.push(ScriptedResponse::text("First answer.").with_usage(10, 0, 3, 0));
        server.push(ScriptedResponse::text("Second answer.").with_usage(20, 0, 3, 0));
        let home = home_for(&server, wire);
        let mut d = serve_with(&home, &[]);
        let batch = startup(&mut d);
        let session = batch[0]["session_id"].as_str().unwrap().to_string();
        d.send(&json!({"op":"command","input":"/model test-model high"}));
        assert_eq!(d.wait_type("model_status", T)["reasoning_effort"], "high");
        turn(&mut d, "first question");
        turn(&mut d, "second question");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{wire}");
        let body = &requests[1].body;
        assert_eq!(body["model"], "test-model", "{wire}");
        assert_eq!(body["stream"], true, "{wire}");
        let dump = body.to_string();
        for needle in ["first question", "First answer.", "second question"] {
            assert!(
                dump.contains(needle),
                "{wire}: history lacks {needle}: {dump}"
            );
        }
        let auth = |name: &str| {
            requests[1]
                .headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let tools = body["tools"].as_array().expect("tools");
        let tool_name = |t: &Value| {
            t["name"]
                .as_str()
                .or(t["function"]["name"].as_str())
                .unwrap_or_default()
                .to_string()
        };
        let names: Vec<String> = tools.iter().map(tool_name).collect();
        assert!(names.contains(&"bash".to_string()), "{wire}: {names:?}");
        match wire {
            "responses" => {
                assert_eq!(body["prompt_cache_key"], session.as_str());
                assert_eq!(body["reasoning"]["effort"], "high");
                assert_eq!(body["store"], false);
                assert!(body["instructions"].as_str().unwrap().contains("JuCode"));
                assert_eq!(auth("authorization").unwrap(), "Bearer sk-test-secret-key");
                assert_eq!(tools[0]["type"], "function");
            }
            "chat" => {
                assert_eq!(body["reasoning_effort"], "high");
                assert_eq!(body["messages"][0]["role"], "system");
                assert_eq!(body["stream_options"]["include_usage"], true);
                assert_eq!(auth("authorization").unwrap(), "Bearer sk-test-secret-key");
                assert!(tools[0]["function"].is_object());
            }
            _ => {
                assert_eq!(auth("x-api-key").unwrap(), "sk-test-secret-key");
                assert!(auth("anthropic-version").is_some());
                assert!(body["system"].is_array());
                assert!(body["max_tokens"].as_u64().unwrap() > 0);
                assert!(tools[0]["input_schema"].is_object());
            }
        }
    }
}

#[test]
fn server_errors_retry_with_events_then_answer() {
    for wire in WIRES {
        let server = ScriptedServer::start();
        server.push(ScriptedResponse::status(500));
        server.push(ScriptedResponse::text("Recovered.").with_usage(5, 0, 2, 0));
        let home = home_for(&server, wire);
        let mut d = serve_with(&home, &[]);
        startup(&mut d);
        let events = turn(&mut d, "hi");
        let retrying: Vec<&Value> = events.iter().filter(|e| e["type"] == "retrying").collect();
        assert_eq!(retrying.len(), 1, "{wire}: {events:?}");
        assert_eq!(retrying[0]["attempt"], 1);
        assert!(retrying[0]["max"].as_u64().unwrap() >= 1);
        assert!(retrying[0]["delay_ms"].is_u64());
        assert_eq!(deltas(&events, "assistant_delta"), "Recovered.", "{wire}");
        assert!(!events.iter().any(|e| e["type"] == "error"), "{wire}");
        assert_eq!(server.requests().len(), 2);
    }
}

#[test]
fn retry_after_is_honoured() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::status(429).with_fault(Fault::Status {
        code: 429,
        retry_after: Some("1".into()),
        retry_after_ms: None,
        body: None,
    }));
    server.push(ScriptedResponse::text("Done.").with_usage(5, 0, 2, 0));
    let home = home_for(&server, "responses");
    let mut d = serve_with(&home, &[]);
    startup(&mut d);
    let start = std::time::Instant::now();
    let events = turn(&mut d, "hi");
    let retry = events
        .iter()
        .find(|e| e["type"] == "retrying")
        .expect("retrying");
    assert_eq!(retry["delay_ms"], 1000);
    assert!(start.elapsed() >= std::time::Duration::from_millis(950));
    assert_eq!(deltas(&events, "assistant_delta"), "Done.");
}

#[test]
fn a_dropped_stream_retries_without_duplicating_text() {
    for wire in WIRES {
        let server = ScriptedServer::start();
        let answer = "One two three four five six seven eight nine ten.";
        server.push(ScriptedResponse::text(answer).with_fault(Fault::DropAfter { events: 7 }));
        server.push(ScriptedResponse::text(answer).with_usage(5, 0, 10, 0));
        let home = home_for(&server, wire);
        let mut d = serve_with(&home, &[]);
        startup(&mut d);
        let events = turn(&mut d, "count");
        assert!(events.iter().any(|e| e["type"] == "retrying"), "{wire}");
        assert_eq!(
            deltas(&events, "assistant_delta"),
            answer,
            "{wire}: {events:?}"
        );
        assert_eq!(
            events
                .iter()
                .filter(|e| e["type"] == "assistant_start")
                .count(),
            1,
            "{wire}"
        );
        assert_eq!(
            events
                .iter()
                .filter(|e| e["type"] == "thinking_start")
                .count(),
            1,
            "{wire}"
        );
        // The next request's history holds the answer once.
        server.push(ScriptedResponse::text("ok").with_usage(5, 0, 1, 0));
        turn(&mut d, "again");
        let body = server.requests()[2].body.to_string();
        assert_eq!(body.matches("seven eight").count(), 1, "{wire}: {body}");
    }
}

#[test]
fn unauthorized_ends_the_turn_with_a_clear_error_and_the_next_turn_works() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::status(401));
    server.push(ScriptedResponse::text("Works now.").with_usage(5, 0, 2, 0));
    let home = home_for(&server, "chat");
    let mut d = serve_with(&home, &[]);
    startup(&mut d);
    let events = turn(&mut d, "hi");
    assert!(!events.iter().any(|e| e["type"] == "retrying"));
    let error = events.iter().find(|e| e["type"] == "error").expect("error");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("401"), "{message}");
    assert!(message.contains("JUCODE_TEST_KEY"), "{message}");
    assert!(!message.contains("sk-test-secret-key"));
    assert_eq!(events.last().unwrap()["message"], "ready");
    let events = turn(&mut d, "again");
    assert_eq!(deltas(&events, "assistant_delta"), "Works now.");
    assert!(!d.stderr().contains("sk-test-secret-key"));
    for e in d.seen() {
        assert!(!e.to_string().contains("sk-test-secret-key"));
    }
}

#[test]
fn a_stalled_stream_times_out_and_retries() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::text("Never finishes this.").with_fault(Fault::StallAfter {
            events: 3,
            ms: 5000,
        }),
    );
    server.push(ScriptedResponse::text("Fresh answer.").with_usage(5, 0, 2, 0));
    let home = home_for(&server, "responses");
    let mut d = serve_with(&home, &["-c", "stream_idle_timeout=0.3"]);
    startup(&mut d);
    let events = turn(&mut d, "hi");
    let retry = events
        .iter()
        .find(|e| e["type"] == "retrying")
        .expect("retrying");
    assert!(
        retry["reason"].as_str().unwrap().contains("stalled"),
        "{retry}"
    );
    assert!(deltas(&events, "assistant_delta").ends_with("Fresh answer."));
}

#[test]
fn retries_run_out_into_an_error_not_a_hang() {
    let server = ScriptedServer::start();
    for _ in 0..3 {
        server.push(ScriptedResponse::status(503));
    }
    let home = home_for(&server, "anthropic");
    let mut d = serve_with(&home, &["-c", "request_max_retries=2"]);
    startup(&mut d);
    let events = turn(&mut d, "hi");
    assert_eq!(events.iter().filter(|e| e["type"] == "retrying").count(), 2);
    assert!(events.iter().any(|e| e["type"] == "error"));
    let status = d.seen().iter().rev().find(|e| e["type"] == "model_status");
    assert_eq!(status.unwrap()["state"], "unavailable");
}

#[test]
fn missing_credentials_are_reported_and_named() {
    let server = ScriptedServer::start();
    let home = home_for(&server, "responses");
    let mut d = jucode_testkit::Driver::new(bin())
        .args(["serve"])
        .env("JUCODE_HOME", home.path())
        .env_remove("JUCODE_TEST_KEY")
        .current_dir(home.workspace())
        .spawn();
    let batch = startup(&mut d);
    assert_eq!(batch[1]["state"], "missing_credentials");
    let events = turn(&mut d, "hi");
    let error = events.iter().find(|e| e["type"] == "error").unwrap();
    assert!(error["message"]
        .as_str()
        .unwrap()
        .contains("JUCODE_TEST_KEY"));
    assert!(server.requests().is_empty());
}

#[test]
fn model_command_views_switches_and_rejects_bad_arguments() {
    let server = ScriptedServer::start();
    let home = home_for(&server, "responses");
    let mut d = serve_with(&home, &[]);
    startup(&mut d);
    d.send(&json!({"op":"command","input":"/model"}));
    let view = d.next(T).unwrap();
    assert_eq!(view["type"], "model_view");
    let models = view["models"].as_array().unwrap();
    let active: Vec<&Value> = models.iter().filter(|m| m["active"] == true).collect();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0]["model"], "test-model");
    assert_eq!(active[0]["context_window"], 100_000);
    assert!(models.iter().any(|m| m["model"] == "gpt-5.5"));
    assert!(models.iter().any(|m| m["model"] == "claude-sonnet-4-6"));

    d.send(&json!({"op":"command","input":"/model gpt-5.5 low"}));
    let status = d.next(T).unwrap();
    assert_eq!(status["type"], "model_status");
    assert_eq!(status["model"], "gpt-5.5");
    assert_eq!(status["provider"], "openai");
    assert_eq!(status["reasoning_effort"], "low");

    for bad in [
        "/model no-such-model",
        "/model gpt-5.5 ludicrous",
        "/model a b c",
    ] {
        d.send(&json!({"op":"command","input":bad}));
        let e = d.next(T).unwrap();
        assert_eq!(e["type"], "error", "{bad}");
    }
    // Nothing changed.
    d.send(&json!({"op":"command","input":"/model"}));
    let view = d.next(T).unwrap();
    assert_eq!(view["active_effort"], "low");
}
