//! Issue: sessions that last — persistence, /resume, the tree, checkpoints,
//! /transcript, compaction.

mod common;

use std::time::Duration;

use common::*;
use jucode_testkit::{Driver, ScriptedResponse, ScriptedServer, TestHome};
use serde_json::{json, Value};

fn turn(d: &mut Driver, text: &str) -> Vec<Value> {
    d.send(&json!({"op":"user_message","content":text}));
    d.collect_until(is_ready, T)
}

fn command(d: &mut Driver, input: &str, answer: &str) -> Value {
    d.send(&json!({"op":"command","input":input}));
    d.wait_type(answer, T)
}

fn spawn(home: &TestHome, extra: &[&str]) -> (Driver, String) {
    let mut d = serve_with(home, extra);
    let batch = startup(&mut d);
    let id = batch[0]["session_id"].as_str().unwrap().to_string();
    (d, id)
}

fn body(server: &ScriptedServer, n: usize) -> String {
    server.requests()[n].body.to_string()
}

#[test]
fn a_killed_session_resumes_with_its_history() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("first answer").with_usage(100, 0, 5, 0));
    server.push(ScriptedResponse::tool_call(
        "r1",
        "read",
        r#"{"path":"notes.txt"}"#,
    ));
    server.push(ScriptedResponse::text("never").with_gate("never"));
    let home = home_for(&server, "responses");
    home.write_workspace_file("notes.txt", "remember the walrus\n");
    let (mut d, id) = spawn(&home, &[]);
    turn(&mut d, "first question");
    d.send(&json!({"op":"user_message","content":"second question"}));
    // The tool ran and its result is saved once the next request is out.
    server.wait_for_requests(3, T);
    d.kill();

    let file = home.path().join("sessions").join(format!("{id}.jsonl"));
    assert!(file.exists());
    for line in std::fs::read_to_string(&file).unwrap().lines() {
        let _: Value = serde_json::from_str(line).expect("every saved line is JSON");
    }

    server.push(ScriptedResponse::text("welcome back"));
    let (mut d, resumed) = spawn(&home, &["--resume", &id]);
    assert_eq!(resumed, id);
    turn(&mut d, "after restart");
    let request = body(&server, 3);
    for needle in [
        "first question",
        "first answer",
        "second question",
        "remember the walrus",
        "after restart",
    ] {
        assert!(request.contains(needle), "{needle} missing from {request}");
    }
    // Every later event carries the resumed id.
    assert!(d.seen().iter().skip(1).all(|e| e["session"] == id.as_str()));
    let transcript = command(&mut d, "/transcript", "transcript");
    let items = transcript["items"].as_array().unwrap();
    let roles: Vec<&str> = items.iter().map(|i| i["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user", "tool", "user", "assistant"],
        "{items:?}"
    );
    assert_eq!(items[3]["name"], "read");
    assert!(items[3]["output"].as_str().unwrap().contains("walrus"));
}

#[test]
fn continue_picks_the_latest_session_of_the_folder() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("one"));
    server.push(ScriptedResponse::text("two"));
    let home = home_for(&server, "responses");
    let (mut d, id) = spawn(&home, &[]);
    turn(&mut d, "hello there");
    drop(d);
    let (mut d, resumed) = spawn(&home, &["--continue"]);
    assert_eq!(resumed, id);
    turn(&mut d, "again");
    assert!(body(&server, 1).contains("hello there"));
}

#[test]
fn a_torn_last_line_is_skipped_with_an_info() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("kept answer"));
    server.push(ScriptedResponse::text("fine"));
    let home = home_for(&server, "responses");
    let (mut d, id) = spawn(&home, &[]);
    turn(&mut d, "kept question");
    drop(d);
    let file = home.path().join("sessions").join(format!("{id}.jsonl"));
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("{\"id\":\"abc\",\"parent_id\":null,\"type\":\"user_mess");
    std::fs::write(&file, text).unwrap();
    let mut d = serve_with(&home, &["--resume", &id]);
    d.next(T).unwrap();
    let batch = d.collect_until(|v| v["type"] == "mcp_servers", T);
    let info = batch
        .iter()
        .find(|e| e["type"] == "info")
        .expect("an info about the torn line");
    assert!(
        info["message"].as_str().unwrap().contains("damaged line"),
        "{info}"
    );
    turn(&mut d, "still works");
    let request = body(&server, 1);
    assert!(request.contains("kept question") && request.contains("kept answer"));
}

#[test]
fn resume_view_lists_this_folders_sessions_newest_first() {
    let server = ScriptedServer::start();
    for t in ["a", "b", "c"] {
        server.push(ScriptedResponse::text(t));
    }
    let home = home_for(&server, "responses");
    let (mut d, alpha) = spawn(&home, &[]);
    turn(&mut d, "alpha task\nwith details");
    drop(d);
    std::thread::sleep(Duration::from_millis(20));
    let (mut d, beta) = spawn(&home, &[]);
    turn(&mut d, "beta task");
    drop(d);
    let (mut d, _) = spawn(&home, &[]);
    let view = command(&mut d, "/resume", "resume_view");
    let items = view["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{view}");
    assert_eq!(items[0]["id"], beta.as_str());
    assert_eq!(items[0]["label"], "beta task");
    assert_eq!(items[1]["id"], alpha.as_str());
    assert!(items[1]["label"]
        .as_str()
        .unwrap()
        .starts_with("alpha task"));
    assert!(items.iter().all(|i| i["active"] == false));

    d.send(&json!({"op":"command","input":format!("/resume {alpha}")}));
    let startup = d.wait_type("startup", T);
    assert_eq!(startup["session_id"], alpha.as_str());
    assert_eq!(startup["session"], alpha.as_str());
    d.wait_type("model_status", T);
    let view = command(&mut d, "/resume", "resume_view");
    let active: Vec<&Value> = view["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["active"] == true)
        .collect();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0]["id"], alpha.as_str());
    turn(&mut d, "more alpha");
    assert!(body(&server, 2).contains("alpha task"));

    // Bad ids change nothing.
    d.send(&json!({"op":"command","input":"/resume no-such-session"}));
    let e = d.next(T).unwrap();
    assert_eq!(e["type"], "error");
    assert_eq!(e["session"], alpha.as_str());
}

#[test]
fn the_tree_branches_and_each_branch_has_its_own_history() {
    let server = ScriptedServer::start();
    for t in ["root answer", "one answer", "two answer", "one again"] {
        server.push(ScriptedResponse::text(t));
    }
    let home = home_for(&server, "responses");
    let (mut d, _) = spawn(&home, &[]);
    turn(&mut d, "root question");
    turn(&mut d, "branch one question");
    let view = command(&mut d, "/tree", "tree_view");
    let nodes = view["nodes"].as_array().unwrap().clone();
    assert_eq!(nodes.len(), 2);
    let (root, one) = (
        nodes[0]["id"].as_str().unwrap().to_string(),
        nodes[1]["id"].as_str().unwrap().to_string(),
    );
    assert!(nodes[0]["parent_id"].is_null());
    assert_eq!(nodes[1]["parent_id"], root.as_str());
    assert_eq!(nodes[1]["active"], true);
    assert_eq!(nodes[0]["label"], "root question");

    let view = command(&mut d, &format!("/tree {root}"), "tree_view");
    let active: Vec<&Value> = view["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["active"] == true)
        .collect();
    assert_eq!(active[0]["id"], root.as_str());
    turn(&mut d, "branch two question");
    let two = body(&server, 2);
    assert!(two.contains("root question") && two.contains("root answer"));
    assert!(!two.contains("branch one question"), "{two}");

    let view = command(&mut d, "/tree", "tree_view");
    let nodes = view["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3);
    assert_eq!(nodes[2]["parent_id"], root.as_str());

    command(&mut d, &format!("/tree {one}"), "tree_view");
    turn(&mut d, "continue one");
    let again = body(&server, 3);
    assert!(again.contains("branch one question") && again.contains("one answer"));
    assert!(!again.contains("branch two question"));
    let transcript = command(&mut d, "/transcript", "transcript");
    assert!(transcript["items"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["role"] == "branch"));

    d.send(&json!({"op":"command","input":"/tree nope"}));
    assert_eq!(d.next(T).unwrap()["type"], "error");
}

#[test]
fn checkout_restores_exactly_the_changed_files() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("w1", "write", r#"{"path":"new.txt","content":"v1"}"#)
            .with_tool_call(
                "e1",
                "edit",
                r#"{"path":"old.txt","old_text":"original","new_text":"changed"}"#,
            ),
    );
    server.push(ScriptedResponse::text("turn one done"));
    server.push(ScriptedResponse::tool_call(
        "w2",
        "write",
        r#"{"path":"new.txt","content":"v2"}"#,
    ));
    server.push(ScriptedResponse::text("turn two done"));
    server.push(ScriptedResponse::text("fresh start"));
    let home = home_for(&server, "responses");
    let old = home.write_workspace_file("old.txt", "original\n");
    let other = home.write_workspace_file("other.txt", "untouched\n");
    let (mut d, _) = spawn(&home, &["--approval-mode", "full-access"]);
    turn(&mut d, "make the first change");
    turn(&mut d, "make the second change");
    let new = home.workspace().join("new.txt");
    assert_eq!(std::fs::read_to_string(&new).unwrap(), "v2");
    std::fs::write(&other, "edited by the user\n").unwrap();

    let view = command(&mut d, "/checkout", "checkpoint_view");
    let items = view["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["label"], "make the second change");
    assert!(
        items[1]["detail"].as_str().unwrap().contains("2 file(s)"),
        "{view}"
    );
    let first = items[1]["id"].as_str().unwrap().to_string();

    d.send(&json!({"op":"command","input":format!("/checkout {first}")}));
    let fill = d.wait_type("fill_input", T);
    assert_eq!(fill["content"], "make the first change");
    assert!(!new.exists(), "new.txt did not exist before the first turn");
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "original\n");
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        "edited by the user\n"
    );

    turn(&mut d, "try differently");
    let request = body(&server, 4);
    assert!(!request.contains("make the first change"), "{request}");
    assert!(request.contains("try differently"));

    d.send(&json!({"op":"command","input":"/checkout nope"}));
    assert_eq!(d.next(T).unwrap()["type"], "error");
}

fn context_tokens(events: &[Value]) -> u64 {
    events
        .iter()
        .rev()
        .find(|e| e["type"] == "context_usage")
        .unwrap()["tokens"]
        .as_u64()
        .unwrap()
}

#[test]
fn manual_compaction_summarizes_and_shrinks_the_context() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("a long first answer").with_usage(30_000, 0, 500, 0));
    server.push(ScriptedResponse::text("second answer").with_usage(40_000, 0, 500, 0));
    server.push(
        ScriptedResponse::text("The user asked two questions; both answered.")
            .with_usage(40_000, 0, 20, 0),
    );
    server.push(ScriptedResponse::text("third answer"));
    let home = home_for(&server, "responses");
    let (mut d, _) = spawn(&home, &[]);
    turn(&mut d, "first question");
    let before = context_tokens(&turn(&mut d, "second question"));
    assert_eq!(before, 40_500);
    d.send(&json!({"op":"command","input":"/compact keep file names"}));
    let events = d.collect_until(is_ready, T);
    let kinds: Vec<String> = types(&events)
        .into_iter()
        .filter(|t| t != "compaction_progress")
        .collect();
    assert_eq!(
        kinds,
        [
            "status",
            "compaction_start",
            "compaction_end",
            "context_usage",
            "status"
        ],
        "{events:?}"
    );
    assert_eq!(events[0]["message"], "compacting");
    let progress: Vec<u64> = events
        .iter()
        .filter(|e| e["type"] == "compaction_progress")
        .map(|e| e["output_tokens"].as_u64().unwrap())
        .collect();
    assert!(!progress.is_empty() && progress.windows(2).all(|w| w[0] <= w[1]));
    let after = context_tokens(&events);
    assert!(
        after < before / 10,
        "context did not shrink: {before} → {after}"
    );
    let summary_request = &server.requests()[2].body;
    assert!(summary_request["tools"]
        .as_array()
        .map(|t| t.is_empty())
        .unwrap_or(true));
    assert!(summary_request.to_string().contains("keep file names"));
    turn(&mut d, "third question");
    let next = body(&server, 3);
    assert!(next.contains("both answered"));
    assert!(
        next.contains("second question"),
        "the latest user message stays verbatim"
    );
    assert!(!next.contains("a long first answer"), "{next}");
}

#[test]
fn automatic_compaction_runs_before_a_request_that_would_not_fit() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("big answer").with_usage(5_000, 0, 100, 0));
    server.push(ScriptedResponse::text("Summary: one question answered."));
    server.push(ScriptedResponse::text("small answer"));
    let home = home_for(&server, "responses");
    let (mut d, _) = spawn(&home, &["-c", "models.\"test-model\".context_limit=1000"]);
    turn(&mut d, "first question");
    let events = turn(&mut d, "second question");
    let kinds: Vec<String> = types(&events)
        .into_iter()
        .filter(|t| !t.ends_with("_delta") && t != "compaction_progress")
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message",
            "status",
            "compaction_start",
            "compaction_end",
            "connecting",
            "thinking_start",
            "assistant_start",
            "context_usage",
            "status"
        ],
        "{events:?}"
    );
    let request = body(&server, 2);
    assert!(request.contains("one question answered") && request.contains("second question"));
    assert!(!request.contains("big answer"));
    assert!(context_tokens(&events) < 1000);
}

#[test]
fn a_failed_summary_leaves_the_session_uncompacted() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("answer one"));
    server.push(ScriptedResponse::text("answer two"));
    server.push(ScriptedResponse::status(401));
    server.push(ScriptedResponse::text("answer three"));
    let home = home_for(&server, "responses");
    let (mut d, _) = spawn(&home, &[]);
    turn(&mut d, "one");
    turn(&mut d, "two");
    d.send(&json!({"op":"command","input":"/compact"}));
    let events = d.collect_until(is_ready, T);
    let failed = events
        .iter()
        .find(|e| e["type"] == "compaction_failed")
        .expect("compaction_failed");
    assert!(failed["error"].as_str().unwrap().contains("401"));
    assert!(!events.iter().any(|e| e["type"] == "compaction_end"));
    turn(&mut d, "three");
    let request = body(&server, 3);
    assert!(request.contains("answer one") && request.contains("answer two"));
}

#[test]
fn a_resumed_session_continues_on_its_active_branch() {
    let server = ScriptedServer::start();
    for t in ["root answer", "one answer", "two answer", "after restart"] {
        server.push(ScriptedResponse::text(t));
    }
    let home = home_for(&server, "responses");
    let (mut d, id) = spawn(&home, &[]);
    turn(&mut d, "root question");
    turn(&mut d, "branch one question");
    let view = command(&mut d, "/tree", "tree_view");
    let root = view["nodes"][0]["id"].as_str().unwrap().to_string();
    command(&mut d, &format!("/tree {root}"), "tree_view");
    turn(&mut d, "branch two question");
    d.kill();
    let (mut d, _) = spawn(&home, &["--resume", &id]);
    turn(&mut d, "continue");
    let request = body(&server, 3);
    assert!(request.contains("branch two question") && request.contains("root answer"));
    assert!(!request.contains("branch one question"), "{request}");
}
