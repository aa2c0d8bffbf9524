//! Issue: the turn engine — the agent loop, built-in tools and approvals.

mod common;

use std::time::Duration;

use common::*;
use jucode_testkit::{Driver, ScriptedResponse, ScriptedServer};
use serde_json::{json, Value};

fn until_ready(d: &mut Driver) -> Vec<Value> {
    d.collect_until(|v| v["type"] == "status" && v["message"] == "ready", T)
}

/// The `function_call_output` the model received for `call_id`.
fn tool_result_in(server: &ScriptedServer, request: usize, call_id: &str) -> String {
    let body = &server.requests()[request].body;
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call_output" && i["call_id"] == call_id)
        .unwrap_or_else(|| panic!("no output for {call_id} in {body}"))["output"]
        .as_str()
        .unwrap()
        .to_string()
}

fn output_of<'a>(events: &'a [Value], call_id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_output" && e["call_id"] == call_id)
        .unwrap_or_else(|| panic!("no tool_output for {call_id}: {events:?}"))
}

#[test]
fn a_multi_tool_turn_feeds_every_result_back() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::tool_call(
        "c1",
        "read",
        r#"{"path":"notes.txt"}"#,
    ));
    server.push(ScriptedResponse::tool_call(
        "c2",
        "bash",
        r#"{"command":"wc -l notes.txt"}"#,
    ));
    server.push(ScriptedResponse::text("Two lines.").with_usage(50, 0, 5, 0));
    let (home, mut d) = start(&server, "manual");
    home.write_workspace_file("notes.txt", "alpha\nbeta\n");
    d.send(&json!({"op":"user_message","content":"count the lines"}));
    let events = until_ready(&mut d);
    assert_eq!(
        events.iter().filter(|e| e["type"] == "connecting").count(),
        3
    );
    assert!(!events.iter().any(|e| e["type"] == "approval_request"));
    assert_eq!(output_of(&events, "c1")["is_error"], false);
    assert!(tool_result_in(&server, 1, "c1").contains("alpha"));
    assert!(tool_result_in(&server, 2, "c2").contains("2 notes.txt"));
    // The whole history is replayed: the first call is still in request 3.
    assert!(tool_result_in(&server, 2, "c1").contains("beta"));
    let start = events
        .iter()
        .position(|e| e["type"] == "tool_start")
        .unwrap();
    let end = events
        .iter()
        .position(|e| e["type"] == "tool_output")
        .unwrap();
    assert!(start < end);
}

#[test]
fn parallel_calls_all_run_and_return_in_order() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("p1", "bash", r#"{"command":"sleep 0.4; echo one"}"#)
            .with_tool_call("p2", "bash", r#"{"command":"echo two"}"#),
    );
    server.push(ScriptedResponse::text("done"));
    let (_home, mut d) = start(&server, "full-access");
    d.send(&json!({"op":"user_message","content":"go"}));
    let events = until_ready(&mut d);
    // p2 finishes first (it does not sleep): they really ran concurrently.
    let pos = |id: &str| {
        events
            .iter()
            .position(|e| e["type"] == "tool_output" && e["call_id"] == id)
            .unwrap()
    };
    assert!(pos("p2") < pos("p1"), "{events:?}");
    let body = &server.requests()[1].body;
    let outputs: Vec<&Value> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .collect();
    assert_eq!(outputs[0]["call_id"], "p1");
    assert_eq!(outputs[1]["call_id"], "p2");
    assert!(outputs[0]["output"].as_str().unwrap().contains("one"));
}

#[test]
fn bash_streams_updates_and_times_out() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::tool_call(
        "b1",
        "bash",
        r#"{"command":"echo first; sleep 1; echo second"}"#,
    ));
    server.push(ScriptedResponse::tool_call(
        "b2",
        "bash",
        r#"{"command":"echo started; sleep 20","timeout":1}"#,
    ));
    server.push(ScriptedResponse::text("ok"));
    let (_home, mut d) = start(&server, "full-access");
    d.send(&json!({"op":"user_message","content":"run"}));
    let events = until_ready(&mut d);
    let update = events
        .iter()
        .position(|e| e["type"] == "tool_update" && e["call_id"] == "b1")
        .expect("a tool_update for b1");
    assert!(events[update]["output"].as_str().unwrap().contains("first"));
    let done = events
        .iter()
        .position(|e| e["type"] == "tool_output" && e["call_id"] == "b1")
        .unwrap();
    assert!(update < done);
    assert!(events[done]["output"].as_str().unwrap().contains("second"));
    let timed_out = output_of(&events, "b2");
    assert_eq!(timed_out["is_error"], true);
    let text = timed_out["output"].as_str().unwrap();
    assert!(text.contains("timed out"), "{text}");
    assert!(text.contains("started"), "{text}");
}

#[test]
fn edit_with_partial_hunk_approval_applies_only_the_approved_hunk() {
    let server = ScriptedServer::start();
    let original: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let old_text: String = (2..=28).map(|i| format!("line {i}\n")).collect();
    let new_text = old_text
        .replace("line 2\n", "line TWO\n")
        .replace("line 28\n", "line TWENTY-EIGHT\n");
    let args = json!({"path":"f.txt","old_text":old_text,"new_text":new_text}).to_string();
    server.push(ScriptedResponse::tool_call("e1", "edit", &args));
    server.push(ScriptedResponse::text("edited"));
    let (home, mut d) = start(&server, "manual");
    let path = home.write_workspace_file("f.txt", &original);
    d.send(&json!({"op":"user_message","content":"edit"}));
    let request = d.wait_type("approval_request", T);
    assert_eq!(request["call_id"], "e1");
    assert_eq!(request["name"], "edit");
    assert!(request["subagent_id"].is_null());
    let hunks = request["hunks"].as_array().expect("hunks");
    assert_eq!(hunks.len(), 2, "{request}");
    for h in hunks {
        assert!(h["file"].as_str().unwrap().ends_with("f.txt"));
        assert!(h["header"].as_str().unwrap().starts_with("@@"));
        assert!(h["lines"].is_array());
    }
    let first = hunks[0]["id"].as_str().unwrap();
    d.send(&json!({"op":"approve","call_id":"e1","decision":"allow","hunks":[first]}));
    until_ready(&mut d);
    let expected = original.replace("line 2\n", "line TWO\n");
    assert_eq!(std::fs::read_to_string(path).unwrap(), expected);
}

/// One call of each kind under one mode: what ran, what asked, what was refused.
fn mode_outcomes(mode: &str) -> Vec<(String, &'static str)> {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("read", "read", r#"{"path":"a.txt"}"#)
            .with_tool_call(
                "edit",
                "edit",
                r#"{"path":"a.txt","old_text":"alpha","new_text":"ALPHA"}"#,
            )
            .with_tool_call("shell", "bash", r#"{"command":"touch made-by-shell"}"#)
            .with_tool_call(
                "danger",
                "bash",
                r#"{"command":"git reset --hard; touch made-by-danger"}"#,
            ),
    );
    server.push(ScriptedResponse::text("done"));
    let (home, mut d) = start(&server, mode);
    home.write_workspace_file("a.txt", "alpha\n");
    d.send(&json!({"op":"user_message","content":"go"}));
    let mut asked = Vec::new();
    let events = d.collect_until(
        |v| {
            if v["type"] == "approval_request" {
                asked.push(v["call_id"].as_str().unwrap().to_string());
            }
            v["type"] == "status" && v["message"] == "ready" || v["type"] == "approval_request"
        },
        T,
    );
    let mut all = events;
    // Deny every request as it comes.
    loop {
        let last = all.last().unwrap().clone();
        if last["type"] == "approval_request" {
            d.send(&json!({"op":"approve","call_id":last["call_id"],"decision":"deny"}));
        } else {
            break;
        }
        all.extend(d.collect_until(
            |v| v["type"] == "status" && v["message"] == "ready" || v["type"] == "approval_request",
            T,
        ));
    }
    let ws = home.workspace().to_path_buf();
    ["read", "edit", "shell", "danger"]
        .iter()
        .map(|id| {
            let out = output_of(&all, id);
            let text = out["output"].as_str().unwrap();
            let was_asked = all
                .iter()
                .any(|e| e["type"] == "approval_request" && e["call_id"] == *id);
            let outcome = if was_asked {
                assert!(text.contains("Denied by the user"), "{id}: {text}");
                "ask"
            } else if text.contains("plan mode") {
                "refuse"
            } else {
                "run"
            };
            // Nothing that was denied or refused ran.
            if outcome != "run" {
                match *id {
                    "edit" => assert_eq!(
                        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
                        "alpha\n"
                    ),
                    "shell" => assert!(!ws.join("made-by-shell").exists()),
                    "danger" => assert!(!ws.join("made-by-danger").exists()),
                    _ => {}
                }
            }
            (id.to_string(), outcome)
        })
        .collect()
}

#[test]
fn every_approval_mode_gates_as_decided() {
    let table = [
        ("manual", ["run", "ask", "ask", "ask"]),
        ("plan", ["run", "refuse", "refuse", "refuse"]),
        ("auto-edit", ["run", "run", "ask", "ask"]),
        ("auto", ["run", "run", "run", "ask"]),
        ("full-access", ["run", "run", "run", "run"]),
    ];
    for (mode, expected) in table {
        let got: Vec<&str> = mode_outcomes(mode).into_iter().map(|(_, o)| o).collect();
        assert_eq!(got, expected, "mode {mode}");
    }
}

#[test]
fn always_adds_the_tool_to_the_allowlist() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::tool_call(
        "w1",
        "write",
        r#"{"path":"one.txt","content":"1"}"#,
    ));
    server.push(ScriptedResponse::tool_call(
        "w2",
        "write",
        r#"{"path":"two.txt","content":"2"}"#,
    ));
    server.push(ScriptedResponse::text("done"));
    let (home, mut d) = start(&server, "manual");
    d.send(&json!({"op":"user_message","content":"write"}));
    let req = d.wait_type("approval_request", T);
    assert_eq!(req["call_id"], "w1");
    d.send(&json!({"op":"approve","call_id":"w1","decision":"allow","always":true}));
    let events = until_ready(&mut d);
    assert!(
        !events.iter().any(|e| e["type"] == "approval_request"),
        "{events:?}"
    );
    assert!(home.workspace().join("one.txt").exists());
    assert!(home.workspace().join("two.txt").exists());
}

#[test]
fn approve_validation_errors_leave_the_request_pending() {
    let server = ScriptedServer::start();
    let args = json!({"path":"v.txt","old_text":"a","new_text":"b"}).to_string();
    server.push(ScriptedResponse::tool_call("v1", "edit", &args));
    server.push(ScriptedResponse::text("done"));
    let (home, mut d) = start(&server, "manual");
    home.write_workspace_file("v.txt", "a\n");
    d.send(&json!({"op":"user_message","content":"edit"}));
    let req = d.wait_type("approval_request", T);
    let hunk = req["hunks"][0]["id"].as_str().unwrap().to_string();
    let bad = [
        json!({"op":"approve","call_id":"nope","decision":"allow"}),
        json!({"op":"approve","call_id":"v1","decision":"maybe"}),
        json!({"op":"approve","call_id":"v1","decision":"allow","always":true,"hunks":[hunk]}),
        json!({"op":"approve","call_id":"v1","decision":"allow","hunks":["zzz"]}),
        json!({"op":"approve","decision":"allow"}),
    ];
    for op in bad {
        d.send(&op);
        let e = d.next(T).unwrap();
        assert_eq!(e["type"], "error", "{op} → {e}");
    }
    assert_eq!(
        std::fs::read_to_string(home.workspace().join("v.txt")).unwrap(),
        "a\n"
    );
    // Still pending: a correct answer goes through.
    d.send(&json!({"op":"approve","call_id":"v1","decision":"allow"}));
    until_ready(&mut d);
    assert_eq!(
        std::fs::read_to_string(home.workspace().join("v.txt")).unwrap(),
        "b\n"
    );
    // /approve text command, for a request that no longer exists.
    d.send(&json!({"op":"command","input":"/approve v1 allow"}));
    assert_eq!(d.next(T).unwrap()["type"], "error");
}

#[test]
fn a_denied_call_never_runs() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::tool_call(
        "d1",
        "bash",
        r#"{"command":"rm -f precious.txt"}"#,
    ));
    server.push(ScriptedResponse::text("understood"));
    let (home, mut d) = start(&server, "manual");
    let precious = home.write_workspace_file("precious.txt", "keep me");
    d.send(&json!({"op":"user_message","content":"clean up"}));
    let req = d.wait_type("approval_request", T);
    assert_eq!(req["summary"], "rm -f precious.txt");
    assert!(req["hunks"].is_null());
    d.send(&json!({"op":"approve","call_id":"d1","decision":"deny"}));
    let events = until_ready(&mut d);
    assert_eq!(output_of(&events, "d1")["is_error"], true);
    assert!(precious.exists());
    assert!(tool_result_in(&server, 1, "d1").contains("Denied by the user"));
}

#[test]
fn set_approval_mode_loosens_an_in_flight_turn() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("m1", "bash", r#"{"command":"touch loosened"}"#)
            .with_gate("go"),
    );
    server.push(ScriptedResponse::text("done"));
    let (home, mut d) = start(&server, "manual");
    d.send(&json!({"op":"user_message","content":"go"}));
    d.wait_type("connecting", T);
    d.send(&json!({"op":"set_approval_mode","mode":"full-access"}));
    d.wait_type("approval_mode", T);
    server.open_gate("go");
    let events = until_ready(&mut d);
    assert!(!events.iter().any(|e| e["type"] == "approval_request"));
    assert!(home.workspace().join("loosened").exists());
}

#[test]
fn images_and_files_are_attached() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("I see."));
    let (home, mut d) = start(&server, "manual");
    let png = home.write_workspace_file("pic.png", "\u{89}PNG fake image bytes");
    let doc = home.write_workspace_file("spec.pdf", "%PDF");
    let missing = home.workspace().join("missing.png");
    d.send(&json!({
        "op":"user_message","content":"look",
        "images":[png, missing],
        "files":[doc],
    }));
    let events = until_ready(&mut d);
    let info = events
        .iter()
        .find(|e| e["type"] == "info")
        .expect("info for the missing image");
    assert!(info["message"].as_str().unwrap().contains("missing.png"));
    let echo = events.iter().find(|e| e["type"] == "user_message").unwrap();
    assert_eq!(echo["content"], "look");
    assert_eq!(echo["files"], json!([doc]));
    let body = server.requests()[0].body.to_string();
    assert!(
        body.contains(&format!(
            "[Attached file \\\"spec.pdf\\\" is saved at: {}]",
            doc.display()
        )),
        "{body}"
    );
    assert!(body.contains("data:image/png;base64,"), "{body}");
}

#[test]
fn tool_errors_go_back_to_the_model() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("x1", "read", r#"{"path":"nope.txt"}"#)
            .with_tool_call("x2", "no_such_tool", "{}")
            .with_tool_call("x3", "read", "not json"),
    );
    server.push(ScriptedResponse::text("handled"));
    let (_home, mut d) = start(&server, "full-access");
    d.send(&json!({"op":"user_message","content":"go"}));
    let events = until_ready(&mut d);
    for id in ["x1", "x2", "x3"] {
        assert_eq!(output_of(&events, id)["is_error"], true, "{id}");
    }
    assert!(tool_result_in(&server, 1, "x2").contains("no_such_tool"));
    assert!(events.iter().any(|e| e["type"] == "assistant_delta"));
    let _ = Duration::from_secs(1);
}
