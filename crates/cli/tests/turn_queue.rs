//! Issue: the turn engine — the message queue: queue, steer, unqueue, interrupt.

mod common;

use std::time::{Duration, Instant};

use common::*;
use jucode_testkit::{ScriptedResponse, ScriptedServer};
use serde_json::{json, Value};

fn msg(text: &str) -> Value {
    json!({"op":"user_message","content":text})
}

fn user_messages(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "user_message")
        .map(|e| e["content"].as_str().unwrap().to_string())
        .collect()
}

fn contents(pending: &Value) -> Vec<String> {
    pending["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn three_queued_messages_each_start_in_order() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("one").with_gate("first"));
    for t in ["two", "three", "four"] {
        server.push(ScriptedResponse::text(t));
    }
    let (_home, mut d) = start(&server, "manual");
    d.send(&msg("m1"));
    d.wait_type("connecting", T);
    for (i, m) in ["m2", "m3", "m4"].iter().enumerate() {
        d.send(&msg(m));
        let pending = d.wait_type("pending_messages", T);
        assert_eq!(pending["messages"].as_array().unwrap().len(), i + 1);
        let status = d.next(T).unwrap();
        assert_eq!(status["message"], format!("queued: {}", i + 1));
    }
    server.open_gate("first");
    let mut events = Vec::new();
    for _ in 0..4 {
        events.extend(d.collect_until(is_ready, T));
    }
    assert_eq!(user_messages(&events), ["m2", "m3", "m4"]);
    // status: ready exactly once per turn, streaming once per turn.
    let all = d.seen().to_vec();
    assert_eq!(all.iter().filter(|e| is_ready(e)).count(), 4);
    assert_eq!(
        all.iter()
            .filter(|e| e["type"] == "status" && e["message"] == "streaming")
            .count(),
        4
    );
    let requests = server.requests();
    for (i, m) in ["m1", "m2", "m3", "m4"].iter().enumerate() {
        assert!(requests[i].body.to_string().contains(m));
    }
}

#[test]
fn a_steered_message_reaches_the_next_request() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("s1", "bash", r#"{"command":"echo tool ran"}"#).with_gate("g"),
    );
    server.push(ScriptedResponse::text("adjusted"));
    let (_home, mut d) = start(&server, "manual");
    d.send(&msg("start work"));
    d.wait_type("connecting", T);
    d.send(&msg("also check the docs"));
    d.wait_type("pending_messages", T);
    d.send(&json!({"op":"steer","index":-1}));
    let status = d.wait_type("status", T);
    // skip the "queued: 1" status
    let status = if status["message"] == "queued: 1" {
        d.wait_type("status", T)
    } else {
        status
    };
    assert_eq!(status["message"], "steering");
    let pending = d.next(T).unwrap();
    assert_eq!(pending["type"], "pending_messages");
    assert_eq!(pending["messages"], json!([]));
    server.open_gate("g");
    let events = d.collect_until(is_ready, T);
    let steered = events
        .iter()
        .position(|e| e["type"] == "user_message" && e["content"] == "also check the docs")
        .expect("the steered user_message");
    let second_connect = events
        .iter()
        .rposition(|e| e["type"] == "connecting")
        .unwrap();
    let tool_done = events
        .iter()
        .position(|e| e["type"] == "tool_output")
        .unwrap();
    assert!(
        tool_done < steered && steered < second_connect,
        "{events:?}"
    );
    let body = server.requests()[1].body.to_string();
    assert!(body.contains("also check the docs"));
    assert!(body.contains("tool ran"));
    // Only one turn ran.
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_steer_after_the_last_request_runs_next() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("final answer").with_gate("g"));
    server.push(ScriptedResponse::text("late reply"));
    let (_home, mut d) = start(&server, "manual");
    d.send(&msg("first"));
    d.wait_type("connecting", T);
    d.send(&msg("late"));
    d.wait_type("pending_messages", T);
    d.send(&json!({"op":"steer"}));
    d.wait_for(|v| v["message"] == "steering", T);
    server.open_gate("g");
    let first = d.collect_until(is_ready, T);
    assert!(!user_messages(&first).contains(&"late".to_string()));
    let second = d.collect_until(is_ready, T);
    assert_eq!(user_messages(&second), ["late"]);
    assert!(server.requests()[1].body.to_string().contains("late"));
}

#[test]
fn unqueue_returns_the_message() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("one").with_gate("g"));
    server.push(ScriptedResponse::text("two"));
    let (home, mut d) = start(&server, "manual");
    d.send(&msg("first"));
    d.wait_type("connecting", T);
    let file = home.write_workspace_file("a.txt", "x");
    d.send(&json!({"op":"user_message","content":"keep","files":[file]}));
    d.send(&msg("take back"));
    d.wait_for(|v| v["message"] == "queued: 2", T);
    d.send(&json!({"op":"unqueue","index":-1}));
    let pending = d.next(T).unwrap();
    assert_eq!(contents(&pending), ["keep"]);
    let unqueued = d.next(T).unwrap();
    assert_eq!(unqueued["type"], "unqueued");
    assert_eq!(unqueued["content"], "take back");
    assert_eq!(unqueued["images"], json!([]));
    assert!(unqueued.get("files").is_none());
    d.send(&json!({"op":"unqueue","index":0}));
    d.next(T).unwrap();
    let unqueued = d.next(T).unwrap();
    assert_eq!(unqueued["files"], json!([file]));
    // Out of range: nothing at all.
    d.send(&json!({"op":"unqueue","index":5}));
    d.send(&json!({"op":"agent_runs"}));
    assert_eq!(d.next(T).unwrap()["type"], "agent_runs");
}

#[test]
fn ops_on_an_idle_engine_are_no_ops() {
    let server = ScriptedServer::start();
    let (_home, mut d) = start(&server, "manual");
    for op in ["steer", "unqueue", "interrupt"] {
        d.send(&json!({"op":op}));
    }
    d.send(&json!({"op":"agent_runs"}));
    assert_eq!(d.next(T).unwrap()["type"], "agent_runs");
}

#[test]
fn interrupt_during_streaming_keeps_the_queue() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("never arrives").with_gate("never"));
    server.push(ScriptedResponse::text("queued reply"));
    let (_home, mut d) = start(&server, "manual");
    d.send(&msg("slow"));
    d.wait_type("connecting", T);
    // The gated script must be taken by this request before it is aborted.
    server.wait_for_requests(1, T);
    d.send(&msg("next"));
    d.wait_type("pending_messages", T);
    d.send(&json!({"op":"interrupt"}));
    let info = d.wait_type("info", T);
    assert_eq!(info["message"], "request interrupted");
    let status = d.next(T).unwrap();
    assert_eq!(status["message"], "interrupted");
    // The queued message starts by itself.
    let events = d.collect_until(is_ready, T);
    assert_eq!(user_messages(&events), ["next"]);
    assert!(server.requests()[1].body.to_string().contains("slow"));
}

fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .map(|rest| rest.trim_start().starts_with('Z'))
            .unwrap_or(true),
    }
}

#[test]
fn interrupt_during_a_long_bash_kills_the_process_group() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::tool_call(
        "long",
        "bash",
        r#"{"command":"sleep 60 & echo $! > child.pid; echo $$ > shell.pid; echo ready; wait"}"#,
    ));
    let (home, mut d) = start(&server, "full-access");
    d.send(&msg("long job"));
    d.wait_for(|v| v["type"] == "tool_update", T);
    let ws = home.workspace();
    let read_pid = |name: &str| -> i32 {
        let deadline = Instant::now() + T;
        loop {
            if let Ok(text) = std::fs::read_to_string(ws.join(name)) {
                if let Ok(pid) = text.trim().parse() {
                    return pid;
                }
            }
            assert!(Instant::now() < deadline, "{name} never written");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let (shell, child) = (read_pid("shell.pid"), read_pid("child.pid"));
    assert!(!process_gone(child));
    d.send(&json!({"op":"interrupt"}));
    d.wait_for(|v| v["message"] == "interrupted", T);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !(process_gone(shell) && process_gone(child)) {
        assert!(
            Instant::now() < deadline,
            "process group survived the interrupt"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn interrupt_with_an_index_starts_that_message_at_once() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("x").with_gate("never"));
    server.push(ScriptedResponse::text("for b"));
    server.push(ScriptedResponse::text("for a"));
    let (_home, mut d) = start(&server, "manual");
    d.send(&msg("slow"));
    d.wait_type("connecting", T);
    // The gated script must be taken by this request before it is aborted.
    server.wait_for_requests(1, T);
    d.send(&msg("a"));
    d.send(&msg("b"));
    d.wait_for(|v| v["message"] == "queued: 2", T);
    d.send(&json!({"op":"interrupt","index":-1}));
    let mut events = d.collect_until(is_ready, T);
    events.extend(d.collect_until(is_ready, T));
    assert_eq!(user_messages(&events), ["b", "a"]);
    let interrupted = events
        .iter()
        .position(|e| e["message"] == "interrupted")
        .unwrap();
    let b = events
        .iter()
        .position(|e| e["type"] == "user_message")
        .unwrap();
    assert!(interrupted < b);
}

#[test]
fn a_burst_of_two_hundred_messages_all_run_in_order() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("first").with_gate("g"));
    for i in 0..200 {
        server.push(ScriptedResponse::text(&format!("reply {i}")));
    }
    let (_home, mut d) = start(&server, "manual");
    d.send(&msg("first"));
    d.wait_type("connecting", T);
    for i in 0..200 {
        d.send(&msg(&format!("burst {i}")));
    }
    d.wait_for(|v| v["message"] == "queued: 200", Duration::from_secs(60));
    server.open_gate("g");
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(240);
    while seen.len() < 200 {
        assert!(Instant::now() < deadline);
        let e = d.wait_type("user_message", Duration::from_secs(60));
        seen.push(e["content"].as_str().unwrap().to_string());
    }
    d.collect_until(is_ready, T);
    let expected: Vec<String> = (0..200).map(|i| format!("burst {i}")).collect();
    assert_eq!(seen, expected);
    assert_eq!(server.requests().len(), 201);
}
