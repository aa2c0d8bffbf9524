//! Issue: subagents with a live trace.

mod common;

use std::time::{Duration, Instant};

use common::*;
use jucode_testkit::{ScriptedResponse, ScriptedServer};
use serde_json::{json, Value};

fn spawn_args(name: &str, prompt: &str) -> String {
    json!({"task_name": name, "prompt": prompt}).to_string()
}

#[test]
fn two_subagents_work_at_the_same_time() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("sp1", "spawn_agent", &spawn_args("alpha", "check alpha"))
            .with_tool_call("sp2", "spawn_agent", &spawn_args("beta", "check beta"))
            .with_tool_call("w", "wait_agent", "{}"),
    );
    let work = r#"{"command":"echo start >> log.txt; sleep 1; echo end >> log.txt; echo worked"}"#;
    server.push(ScriptedResponse::tool_call("t1", "bash", work));
    server.push(ScriptedResponse::tool_call("t1", "bash", work));
    server.push(ScriptedResponse::text("agent report"));
    server.push(ScriptedResponse::text("agent report"));
    server.push(ScriptedResponse::text("both done"));
    let (home, mut d) = start(&server, "full-access");
    let started = Instant::now();
    d.send(&json!({"op":"user_message","content":"use two helpers"}));
    let events = d.collect_until(is_ready, Duration::from_secs(30));
    let elapsed = started.elapsed();

    // They overlapped: both started before either ended.
    let log = std::fs::read_to_string(home.workspace().join("log.txt")).unwrap();
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        ["start", "start", "end", "end"],
        "{log}"
    );

    let lifecycle: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["type"] == "subagent_lifecycle")
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_string(),
                e["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for id in ["/root/alpha", "/root/beta"] {
        assert!(
            lifecycle.contains(&(id.into(), "started".into())),
            "{lifecycle:?}"
        );
        assert!(
            lifecycle.contains(&(id.into(), "completed".into())),
            "{lifecycle:?}"
        );
    }
    let sl = events
        .iter()
        .find(|e| e["type"] == "subagent_lifecycle")
        .unwrap();
    assert_eq!(sl["tool_use_id"], "sp1");
    assert_eq!(sl["label"], "alpha");

    // agent_runs: every field, final states, and the throttle (lifecycle
    // changes at once, otherwise at most twice a second).
    let runs: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "agent_runs")
        .collect();
    let last = runs.last().unwrap();
    let agents = last["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    for a in agents {
        assert_eq!(a["state"], "completed");
        assert_eq!(a["type"], "subagent");
        assert_eq!(a["result"], "agent report");
        assert_eq!(a["tool_calls"], 1);
        for key in [
            "label",
            "model",
            "started_at",
            "duration_ms",
            "tokens",
            "prompt",
            "tool_use_id",
        ] {
            assert!(!a[key].is_null(), "{key} in {a}");
        }
        assert!(a["duration_ms"].as_u64().unwrap() >= 1000);
    }
    let lifecycle_changes = lifecycle.len();
    let budget = lifecycle_changes + 2 * (elapsed.as_secs() as usize + 1);
    assert!(
        runs.len() <= budget,
        "{} agent_runs in {elapsed:?}",
        runs.len()
    );
    let activity_seen = runs.iter().any(|r| {
        r["agents"].as_array().unwrap().iter().any(|a| {
            a["activity"]
                .as_str()
                .map(|s| s.starts_with("Running"))
                .unwrap_or(false)
        })
    });
    assert!(activity_seen, "activity was reported while they worked");

    // The parent got both results from wait_agent.
    let parent = server.requests().last().unwrap().body.to_string();
    assert!(
        parent.contains("/root/alpha (completed)") && parent.contains("/root/beta (completed)"),
        "{parent}"
    );

    // Transcripts; an unknown id answers with error.
    d.send(&json!({"op":"subagent_transcript","agent_id":"/root/alpha"}));
    let t = d.wait_type("subagent_transcript", T);
    let items = t["items"].as_array().unwrap();
    assert_eq!(items[0], json!({"role":"user","content":"check alpha"}));
    let tool = items.iter().find(|i| i["role"] == "tool").unwrap();
    assert_eq!(tool["name"], "bash");
    assert_eq!(tool["running"], false);
    assert!(tool["output"].as_str().unwrap().contains("worked"));
    assert!(tool["input"].as_str().unwrap().contains("sleep 1"));
    assert_eq!(items.last().unwrap()["content"], "agent report");
    d.send(&json!({"op":"subagent_transcript","agent_id":"/root/nobody"}));
    let t = d.wait_type("subagent_transcript", T);
    assert!(t["items"].is_null());
    assert!(t["error"].as_str().unwrap().contains("unknown agent"));
    d.send(&json!({"op":"agent_runs"}));
    assert_eq!(
        d.wait_type("agent_runs", T)["agents"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn a_subagents_gated_call_carries_its_id() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("sp", "spawn_agent", &spawn_args("writer", "write a file"))
            .with_tool_call("w", "wait_agent", "{}"),
    );
    server.push(ScriptedResponse::tool_call(
        "c1",
        "bash",
        r#"{"command":"touch by-agent"}"#,
    ));
    server.push(ScriptedResponse::text("wrote it"));
    server.push(ScriptedResponse::text("parent done"));
    let (home, mut d) = start(&server, "manual");
    d.send(&json!({"op":"user_message","content":"delegate"}));
    let req = d.wait_type("approval_request", T);
    assert_eq!(req["subagent_id"], "/root/writer");
    d.send(&json!({"op":"approve","call_id":req["call_id"],"decision":"allow"}));
    d.collect_until(is_ready, T);
    assert!(home.workspace().join("by-agent").exists());
}

#[test]
fn interrupt_closes_running_subagents() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("sp", "spawn_agent", &spawn_args("slow", "take forever"))
            .with_tool_call("w", "wait_agent", "{}"),
    );
    server.push(ScriptedResponse::text("never").with_gate("never"));
    let (_home, mut d) = start(&server, "manual");
    d.send(&json!({"op":"user_message","content":"delegate"}));
    server.wait_for_requests(2, T);
    d.send(&json!({"op":"interrupt"}));
    d.wait_for(|v| v["message"] == "interrupted", T);
    d.send(&json!({"op":"agent_runs"}));
    let runs = d.wait_for(
        |v| v["type"] == "agent_runs" && v["agents"][0]["state"] != "running",
        T,
    );
    assert_eq!(runs["agents"][0]["state"], "interrupted");
}

#[test]
fn subagent_transcripts_are_capped_and_trimmed() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("sp", "spawn_agent", &spawn_args("reader", "read a lot"))
            .with_tool_call("w", "wait_agent", "{}"),
    );
    for round in 0..2 {
        let mut response = ScriptedResponse::new();
        for i in 0..160 {
            response = response.with_tool_call(
                &format!("r{round}_{i}"),
                "read",
                r#"{"path":"small.txt"}"#,
            );
        }
        server.push(response);
    }
    server.push(ScriptedResponse::tool_call(
        "big",
        "bash",
        r#"{"command":"head -c 20000 /dev/zero | tr '\\0' x; echo; echo THE-END"}"#,
    ));
    server.push(ScriptedResponse::text("read everything"));
    server.push(ScriptedResponse::text("ok"));
    let (home, mut d) = start(&server, "full-access");
    home.write_workspace_file("small.txt", "tiny\n");
    d.send(&json!({"op":"user_message","content":"delegate"}));
    d.collect_until(is_ready, Duration::from_secs(60));
    d.send(&json!({"op":"subagent_transcript","agent_id":"/root/reader"}));
    let t = d.wait_type("subagent_transcript", T);
    let items = t["items"].as_array().unwrap();
    assert_eq!(items.len(), 300);
    assert_eq!(items[0]["content"], "read a lot");
    assert_eq!(items[1]["content"], "… earlier steps trimmed");
    let big = items.iter().find(|i| i["call_id"] == "big").unwrap();
    let output = big["output"].as_str().unwrap();
    assert!(output.len() <= 4 * 1024 + 8, "{}", output.len());
    assert!(output.trim_end().ends_with("THE-END"));
    let total: usize = items.iter().map(|i| i.to_string().len()).sum();
    assert!(total < 300 * 1024);
}
