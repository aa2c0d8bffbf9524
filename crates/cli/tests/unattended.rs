//! Issue: unattended sessions with deferred actions.

mod common;

use common::*;
use jucode_testkit::{Driver, ScriptedResponse, ScriptedServer, TestHome};
use serde_json::json;

fn start(server: &ScriptedServer, extra: &[&str]) -> (TestHome, Driver, String) {
    let home = home_for(server, "responses");
    let mut d = serve_with(&home, extra);
    let batch = startup(&mut d);
    let id = batch[0]["session_id"].as_str().unwrap().to_string();
    (home, d, id)
}

fn unattend(d: &mut Driver) {
    d.send(&json!({"op":"set_attended","attended":false}));
    assert_eq!(d.wait_type("attended", T)["attended"], false);
}

const TOUCH: &str = r#"{"command":"touch deferred.txt"}"#;

#[test]
fn a_gated_call_is_deferred_and_the_turn_goes_on() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::tool_call("c1", "bash", TOUCH));
    server.push(ScriptedResponse::text("I'll wait for that."));
    server.push(ScriptedResponse::tool_call("c2", "bash", TOUCH));
    server.push(ScriptedResponse::text("still waiting"));
    let (home, mut d, session) = start(&server, &[]);
    unattend(&mut d);
    d.send(&json!({"op":"user_message","content":"make the file"}));
    let events = d.collect_until(is_ready, T);
    assert!(!events.iter().any(|e| e["type"] == "approval_request"));
    let action = events
        .iter()
        .find(|e| e["type"] == "action_deferred")
        .expect("action_deferred")
        .clone();
    let id = action["id"].as_str().unwrap();
    assert!(id.starts_with("act-"), "{id}");
    assert_eq!(action["session_id"], session.as_str());
    assert_eq!(action["call_id"], "c1");
    assert_eq!(action["name"], "bash");
    assert_eq!(action["arguments"], json!({"command":"touch deferred.txt"}));
    assert_eq!(action["summary"], "touch deferred.txt");
    assert!(action["subagent_id"].is_null());
    assert_eq!(action["digest"].as_str().unwrap().len(), 64);
    assert!(action["created_at"].is_u64());
    assert!(action["cwd"].as_str().unwrap().contains("jucode-ws"));
    assert!(!home.workspace().join("deferred.txt").exists());
    let result = server.requests()[1].body.to_string();
    assert!(result.contains("Submitted for confirmation") && result.contains(id));

    // The identical call reuses the open action: no new event.
    d.send(&json!({"op":"user_message","content":"try again"}));
    let events = d.collect_until(is_ready, T);
    assert!(!events.iter().any(|e| e["type"] == "action_deferred"));
    assert!(server.requests()[3].body.to_string().contains(id));
}

#[test]
fn going_unattended_converts_a_waiting_approval() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::tool_call("c1", "bash", TOUCH));
    server.push(ScriptedResponse::text("moving on"));
    let (home, mut d, _) = start(&server, &[]);
    d.send(&json!({"op":"user_message","content":"make the file"}));
    d.wait_type("approval_request", T);
    unattend(&mut d);
    let events = d.collect_until(is_ready, T);
    let action = events
        .iter()
        .find(|e| e["type"] == "action_deferred")
        .expect("converted");
    assert_eq!(action["call_id"], "c1");
    assert!(!home.workspace().join("deferred.txt").exists());
    // The old approval is gone.
    d.send(&json!({"op":"approve","call_id":"c1","decision":"allow"}));
    assert_eq!(d.next(T).unwrap()["type"], "error");
}

fn defer_one(server: &ScriptedServer, d: &mut Driver) -> String {
    server.push(ScriptedResponse::tool_call(
        "c1",
        "bash",
        r#"{"command":"touch deferred.txt; echo made it"}"#,
    ));
    server.push(ScriptedResponse::text("queued for you"));
    unattend(d);
    d.send(&json!({"op":"user_message","content":"make the file"}));
    let events = d.collect_until(is_ready, T);
    events
        .iter()
        .find(|e| e["type"] == "action_deferred")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn an_allowed_action_runs_and_the_session_hears_the_outcome() {
    let server = ScriptedServer::start();
    let (home, mut d, _) = start(&server, &[]);
    let id = defer_one(&server, &mut d);
    server.push(ScriptedResponse::text("great, it ran"));
    d.send(&json!({"op":"decide_action","action":id,"decision":"allow"}));
    let decided = d.wait_type("action_decided", T);
    assert_eq!(decided["decision"], "allow");
    assert_eq!(decided["is_error"], false);
    assert!(decided["output"].as_str().unwrap().contains("made it"));
    assert!(home.workspace().join("deferred.txt").exists());
    let events = d.collect_until(is_ready, T);
    let msg = events.iter().find(|e| e["type"] == "user_message").unwrap();
    assert!(msg["content"].as_str().unwrap().contains("was allowed"));
    assert!(server.requests()[2].body.to_string().contains("made it"));
    d.send(&json!({"op":"decide_action","action":id,"decision":"deny"}));
    assert!(d.next(T).unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("already decided"));
    d.send(&json!({"op":"decide_action","action":"act-0-0","decision":"deny"}));
    assert!(d.next(T).unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("unknown action"));
}

#[test]
fn a_denied_action_never_runs() {
    let server = ScriptedServer::start();
    let (home, mut d, _) = start(&server, &[]);
    let id = defer_one(&server, &mut d);
    server.push(ScriptedResponse::text("fine, skipping"));
    d.send(&json!({"op":"decide_action","action":id,"decision":"deny"}));
    let decided = d.wait_type("action_decided", T);
    assert_eq!(decided["decision"], "deny");
    assert!(decided["output"].is_null());
    let events = d.collect_until(is_ready, T);
    assert!(events.iter().any(
        |e| e["type"] == "user_message" && e["content"].as_str().unwrap().contains("declined")
    ));
    assert!(!home.workspace().join("deferred.txt").exists());
}

#[test]
fn deferred_actions_survive_a_restart() {
    let server = ScriptedServer::start();
    let (home, mut d, session) = start(&server, &[]);
    let id = defer_one(&server, &mut d);
    d.kill();
    let mut d = serve_with(&home, &["--resume", &session]);
    startup(&mut d);
    server.push(ScriptedResponse::text("ran after restart"));
    d.send(&json!({"op":"decide_action","action":id,"decision":"allow"}));
    let decided = d.wait_type("action_decided", T);
    assert_eq!(decided["id"], id.as_str());
    assert!(home.workspace().join("deferred.txt").exists());
}
