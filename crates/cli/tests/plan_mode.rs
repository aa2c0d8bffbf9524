//! Issue: plan mode, update_plan and goals.

mod common;

use common::*;
use jucode_testkit::{Driver, ScriptedResponse, ScriptedServer};
use serde_json::{json, Value};

const MARKDOWN: &str = "# Plan\n1. Write the test\n2. Make it pass\n3. Run `cargo test`";

fn propose(title: &str) -> ScriptedResponse {
    let args = json!({"title": title, "markdown": MARKDOWN}).to_string();
    ScriptedResponse::tool_call("plan_call", "propose_plan", &args)
}

/// Runs a plan-mode turn that proposes a plan; returns (events, plan id).
fn proposed(d: &mut Driver, server: &ScriptedServer) -> (Vec<Value>, String) {
    server.push(propose("Add the test"));
    d.send(&json!({"op":"user_message","content":"plan the work"}));
    let events = d.collect_until(is_ready, T);
    let plan = events
        .iter()
        .find(|e| e["type"] == "proposed_plan")
        .expect("proposed_plan");
    (events.clone(), plan["id"].as_str().unwrap().to_string())
}

#[test]
fn plan_mode_refuses_changes_and_allows_reads() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("r", "read", r#"{"path":"a.txt"}"#)
            .with_tool_call("w", "write", r#"{"path":"b.txt","content":"x"}"#)
            .with_tool_call("s", "bash", r#"{"command":"touch c.txt"}"#)
            .with_tool_call("l", "bash", r#"{"command":"ls"}"#),
    );
    server.push(ScriptedResponse::text("ok"));
    let (home, mut d) = start(&server, "plan");
    home.write_workspace_file("a.txt", "alpha");
    d.send(&json!({"op":"user_message","content":"look around"}));
    let events = d.collect_until(is_ready, T);
    let out = |id: &str| {
        events
            .iter()
            .find(|e| e["type"] == "tool_output" && e["call_id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(out("r")["is_error"], false);
    assert_eq!(out("l")["is_error"], false);
    for id in ["w", "s"] {
        assert_eq!(out(id)["is_error"], true);
        assert!(out(id)["output"].as_str().unwrap().contains("plan mode"));
    }
    assert!(!home.workspace().join("b.txt").exists());
    assert!(!home.workspace().join("c.txt").exists());
    // propose_plan is offered in plan mode only.
    let tools = server.requests()[0].body["tools"].to_string();
    assert!(tools.contains("propose_plan"));
}

#[test]
fn a_proposed_plan_streams_drafts_and_ends_the_turn() {
    let server = ScriptedServer::start();
    let (_home, mut d) = start(&server, "plan");
    let (events, id) = proposed(&mut d, &server);
    assert!(id.starts_with("plan-"));
    let drafts: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "plan_draft")
        .collect();
    assert!(!drafts.is_empty());
    assert!(drafts.iter().all(|e| e["id"] == id.as_str()));
    let appended: String = drafts
        .iter()
        .map(|e| e["append"].as_str().unwrap())
        .collect();
    assert_eq!(appended, MARKDOWN);
    assert_eq!(drafts.last().unwrap()["title"], "Add the test");
    let plan = events
        .iter()
        .find(|e| e["type"] == "proposed_plan")
        .unwrap();
    assert_eq!(plan["status"], "pending");
    assert_eq!(plan["markdown"], MARKDOWN);
    assert_eq!(plan["title"], "Add the test");
    let last_draft = events
        .iter()
        .rposition(|e| e["type"] == "plan_draft")
        .unwrap();
    let plan_at = events
        .iter()
        .position(|e| e["type"] == "proposed_plan")
        .unwrap();
    assert!(last_draft < plan_at);
    // The turn ended with the plan: no follow-up request.
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn approving_switches_mode_and_implements_the_plan() {
    let server = ScriptedServer::start();
    let (_home, mut d) = start(&server, "plan");
    let (_, id) = proposed(&mut d, &server);
    server.push(ScriptedResponse::text("Implementing."));
    d.send(&json!({"op":"approve_plan","id":id,"decision":"approve","mode":"auto","feedback":"be quick"}));
    let events = d.collect_until(is_ready, T);
    let plan = events
        .iter()
        .find(|e| e["type"] == "proposed_plan")
        .unwrap();
    assert_eq!(plan["status"], "approved");
    assert!(events
        .iter()
        .any(|e| e["type"] == "status" && e["message"] == "approval mode: auto"));
    assert!(events
        .iter()
        .any(|e| e["type"] == "approval_mode" && e["mode"] == "auto"));
    let request = server.requests()[1].body.to_string();
    assert!(
        request.contains("Make it pass") && request.contains("be quick"),
        "{request}"
    );
    // No propose_plan outside plan mode.
    assert!(!server.requests()[1].body["tools"]
        .to_string()
        .contains("propose_plan"));

    d.send(&json!({"op":"approve_plan","id":id,"decision":"approve"}));
    assert!(d.next(T).unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("already approved"));
    d.send(&json!({"op":"approve_plan","id":"plan-nope","decision":"approve"}));
    assert!(d.next(T).unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("unknown plan"));
    let transcript = {
        d.send(&json!({"op":"command","input":"/transcript"}));
        d.wait_type("transcript", T)
    };
    let plans: Vec<&Value> = transcript["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["role"] == "plan")
        .collect();
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0]["status"], "approved");
    assert_eq!(plans[0]["content"], MARKDOWN);
}

#[test]
fn revising_keeps_plan_mode_and_needs_feedback() {
    let server = ScriptedServer::start();
    let (_home, mut d) = start(&server, "plan");
    let (_, id) = proposed(&mut d, &server);
    d.send(&json!({"op":"approve_plan","id":id,"decision":"revise"}));
    let e = d.next(T).unwrap();
    assert_eq!(e["type"], "error");
    d.send(&json!({"op":"approve_plan","id":id,"decision":"approve","mode":"plan"}));
    assert_eq!(d.next(T).unwrap()["type"], "error");

    server.push(propose("Add the test, revised"));
    d.send(&json!({"op":"command","input":format!("/plan {id} revise also cover the edge case")}));
    let events = d.collect_until(is_ready, T);
    let statuses: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "proposed_plan")
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["revising", "pending"]);
    assert!(!events.iter().any(|e| e["type"] == "approval_mode"));
    assert!(server.requests()[1]
        .body
        .to_string()
        .contains("also cover the edge case"));
    // Still plan mode: the revised turn offered propose_plan again.
    assert!(server.requests()[1].body["tools"]
        .to_string()
        .contains("propose_plan"));
    let new_id = events
        .iter()
        .rev()
        .find(|e| e["type"] == "proposed_plan")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    server.push(ScriptedResponse::text("on it"));
    d.send(&json!({"op":"command","input":format!("/plan {new_id} approve full-access ship it")}));
    let events = d.collect_until(is_ready, T);
    assert!(events
        .iter()
        .any(|e| e["type"] == "approval_mode" && e["mode"] == "full-access"));
    assert!(server.requests()[2].body.to_string().contains("ship it"));
}

#[test]
fn update_plan_emits_the_step_list() {
    let server = ScriptedServer::start();
    let steps = json!({"plan":[{"step":"Read code","status":"completed"},{"step":"Fix bug","status":"in_progress"}]}).to_string();
    server.push(
        ScriptedResponse::tool_call("u1", "update_plan", &steps).with_tool_call(
            "u2",
            "update_plan",
            r#"{"plan":[{"step":"x","status":"done"}]}"#,
        ),
    );
    server.push(ScriptedResponse::text("ok"));
    let (_home, mut d) = start(&server, "manual");
    d.send(&json!({"op":"user_message","content":"go"}));
    let events = d.collect_until(is_ready, T);
    let plan = events
        .iter()
        .find(|e| e["type"] == "plan")
        .expect("plan event");
    assert_eq!(
        plan["plan"],
        json!([{"step":"Read code","status":"completed"},{"step":"Fix bug","status":"in_progress"}])
    );
    let bad = events
        .iter()
        .find(|e| e["type"] == "tool_output" && e["call_id"] == "u2")
        .unwrap();
    assert_eq!(bad["is_error"], true);
    assert_eq!(events.iter().filter(|e| e["type"] == "plan").count(), 1);
}

#[test]
fn a_goal_tracks_tokens_until_its_budget_is_spent() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("progress").with_usage(80, 0, 30, 0));
    let (_home, mut d) = start(&server, "manual");
    d.send(&json!({"op":"command","input":"/goal ship the release --budget 100"}));
    let goal = d.wait_type("goal", T)["goal"].clone();
    assert_eq!(goal["objective"], "ship the release");
    assert_eq!(goal["status"], "active");
    assert_eq!(goal["token_budget"], 100);
    assert_eq!(goal["tokens_used"], 0);
    for key in ["time_used_seconds", "created_at", "updated_at"] {
        assert!(goal[key].is_u64(), "{key}");
    }
    d.send(&json!({"op":"user_message","content":"work"}));
    let events = d.collect_until(is_ready, T);
    let goal = events.iter().find(|e| e["type"] == "goal").unwrap()["goal"].clone();
    assert_eq!(goal["tokens_used"], 110);
    assert_eq!(goal["status"], "exhausted");
    assert!(server.requests()[0].body["instructions"]
        .as_str()
        .unwrap()
        .contains("ship the release"));
    d.send(&json!({"op":"command","input":"/goal clear"}));
    assert_eq!(d.wait_type("goal", T)["goal"], Value::Null);
    d.send(&json!({"op":"command","input":"/goal done"}));
    assert_eq!(d.next(T).unwrap()["type"], "error");
    d.send(&json!({"op":"command","input":"/goal x --budget lots"}));
    assert_eq!(d.next(T).unwrap()["type"], "error");
    d.send(&json!({"op":"command","input":"/goal finish docs"}));
    d.wait_type("goal", T);
    d.send(&json!({"op":"command","input":"/goal done"}));
    assert_eq!(d.wait_type("goal", T)["goal"]["status"], "done");
}
