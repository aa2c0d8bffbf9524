//! Issue: headless runs — `jucode exec` and `--headless`.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::*;
use jucode_testkit::{ScriptedResponse, ScriptedServer, TestHome};
use serde_json::Value;

fn exec(home: &TestHome, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(bin())
        .args(args)
        .env("JUCODE_HOME", home.path())
        .env("JUCODE_TEST_KEY", "sk-test")
        .current_dir(home.workspace())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect()
}

#[test]
fn plain_exec_prints_the_answer_and_tool_activity_on_stderr() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::tool_call(
        "c1",
        "read",
        r#"{"path":"a.txt"}"#,
    ));
    server.push(ScriptedResponse::text("The file says hello."));
    let home = home_for(&server, "responses");
    home.write_workspace_file("a.txt", "hello");
    let out = exec(&home, &["exec", "what does a.txt say?"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "The file says hello.\n"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[tool] read"), "{stderr}");
    assert!(server.requests()[0]
        .body
        .to_string()
        .contains("what does a.txt say?"));
}

#[test]
fn json_exec_prints_the_serve_event_schema() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("Done.").with_usage(10, 0, 2, 0));
    let home = home_for(&server, "chat");
    let out = exec(&home, &["exec", "--json", "-"], Some("prompt from stdin"));
    assert_eq!(out.status.code(), Some(0));
    let events = lines(&out);
    assert_eq!(events[0]["type"], "hello");
    assert!(events[0].get("session").is_none());
    let kinds = types(&events);
    for kind in [
        "startup",
        "user_message",
        "assistant_delta",
        "usage",
        "context_usage",
        "status",
    ] {
        assert!(
            kinds.contains(&kind.to_string()),
            "{kind} missing: {kinds:?}"
        );
    }
    assert_eq!(events.last().unwrap()["message"], "ready");
    let user = events.iter().find(|e| e["type"] == "user_message").unwrap();
    assert_eq!(user["content"], "prompt from stdin");
    // --headless is the same as exec --json.
    server.push(ScriptedResponse::text("Again."));
    let out = exec(&home, &["--headless", "hi"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(lines(&out)[0]["type"], "hello");
}

#[test]
fn a_failed_turn_exits_one_and_gated_calls_are_denied() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::status(401));
    let home = home_for(&server, "responses");
    let out = exec(&home, &["exec", "hi"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("401"));

    server.push(ScriptedResponse::tool_call(
        "c1",
        "bash",
        r#"{"command":"touch made"}"#,
    ));
    server.push(ScriptedResponse::text("Could not."));
    let out = exec(&home, &["exec", "make it"], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(!home.workspace().join("made").exists());
    assert!(String::from_utf8_lossy(&out.stderr).contains("[denied] bash"));

    // The approval mode decides what runs.
    server.push(ScriptedResponse::tool_call(
        "c1",
        "bash",
        r#"{"command":"touch made"}"#,
    ));
    server.push(ScriptedResponse::text("Made."));
    let out = exec(
        &home,
        &["exec", "--approval-mode", "full-access", "make it"],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(home.workspace().join("made").exists());
}

#[test]
fn exec_resumes_a_session() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("First."));
    server.push(ScriptedResponse::text("Second."));
    let home = home_for(&server, "responses");
    let out = exec(&home, &["exec", "--json", "remember the number 42"], None);
    let session = lines(&out)[1]["session_id"].as_str().unwrap().to_string();
    let out = exec(&home, &["exec", "--resume", &session, "what number?"], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(server.requests()[1]
        .body
        .to_string()
        .contains("remember the number 42"));
}
