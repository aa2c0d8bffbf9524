//! MCP servers in the engine, against real servers: server-everything
//! (stdio and loopback HTTP) and mcp-server-time, installed by
//! `scripts/deps-mcp`. A missing server fails the test with that hint.

#[path = "../common/mod.rs"]
mod common;
mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use jucode_testkit::ScriptedResponse;
use jucode_testkit::ScriptedServer;
use serde_json::{json, Value};
use support::*;

#[test]
fn stdio_tools_reach_the_model_are_gated_and_prompts_become_commands() {
    let server = ScriptedServer::start();
    let marker = unique("everything");
    let home = home_with(&server, &everything_table("everything", &marker));
    let mut d = serve_with(&home, &["--approval-mode", "manual"]);
    let batch = startup(&mut d);
    let list = batch.iter().find(|e| e["type"] == "command_list").unwrap();
    assert!(list["commands"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["command"] == "/mcp"));
    // Startup does not wait: the batch shows the server connecting.
    let view = batch.last().unwrap();
    assert_eq!(
        server_of(view, "everything").unwrap(),
        &json!({"name":"everything","transport":"stdio","state":"connecting","tools":[]})
    );
    let connected = wait_state(&mut d, "everything", "connected");
    assert!(connected["tools"]
        .as_array()
        .unwrap()
        .contains(&json!("echo")));
    let list = d.wait_for(
        |v| {
            v["type"] == "command_list"
                && v["commands"]
                    .to_string()
                    .contains("/mcp__everything__simple-prompt")
        },
        T,
    );
    let args_prompt = list["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command"] == "/mcp__everything__args-prompt")
        .expect("args-prompt listed");
    assert_eq!(args_prompt["marker"], "mcp");
    assert_eq!(args_prompt["args"], "city [state]");

    // echo is readOnlyHint: it runs in manual mode without asking.
    server.push(ScriptedResponse::tool_call(
        "c1",
        "mcp__everything__echo",
        r#"{"message":"hi"}"#,
    ));
    server.push(ScriptedResponse::text("echoed"));
    d.send(&json!({"op":"user_message","content":"echo hi"}));
    let events = d.collect_until(is_ready, SLOW);
    assert!(!events.iter().any(|e| e["type"] == "approval_request"));
    assert_eq!(output_of(&events, "c1")["output"], "Echo: hi");
    assert_eq!(tool_result_in(&server, 1, "c1"), "Echo: hi");
    let names = tool_names(&server, 0);
    for name in ["read", "mcp__everything__echo", "mcp__everything__get-sum"] {
        assert!(names.contains(&name.to_string()), "{name} in {names:?}");
    }
    let echo = &server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "mcp__everything__echo")
        .unwrap()
        .clone();
    assert!(
        echo["parameters"]["properties"]["message"].is_object(),
        "{echo}"
    );

    // A tool without readOnlyHint asks in manual mode.
    server.push(ScriptedResponse::tool_call(
        "c2",
        "mcp__everything__toggle-simulated-logging",
        "{}",
    ));
    server.push(ScriptedResponse::text("toggled"));
    d.send(&json!({"op":"user_message","content":"toggle logging"}));
    let request = d.wait_type("approval_request", SLOW);
    assert_eq!(request["name"], "mcp__everything__toggle-simulated-logging");
    assert_eq!(request["summary"], "everything: toggle-simulated-logging");
    d.send(&json!({"op":"approve","call_id":"c2","decision":"allow"}));
    let events = d.collect_until(is_ready, SLOW);
    let out = output_of(&events, "c2");
    assert_eq!(out["is_error"], false, "{out}");
    assert!(
        out["output"].as_str().unwrap().contains("simulated"),
        "{out}"
    );

    // Plan mode: the read-only tool runs, the other one is refused.
    d.send(&json!({"op":"set_approval_mode","mode":"plan"}));
    server.push(
        ScriptedResponse::tool_call("p1", "mcp__everything__echo", r#"{"message":"plan"}"#)
            .with_tool_call("p2", "mcp__everything__toggle-simulated-logging", "{}"),
    );
    server.push(ScriptedResponse::text("planned"));
    d.send(&json!({"op":"user_message","content":"plan it"}));
    let events = d.collect_until(is_ready, SLOW);
    assert!(!events.iter().any(|e| e["type"] == "approval_request"));
    assert_eq!(output_of(&events, "p1")["output"], "Echo: plan");
    let refused = output_of(&events, "p2");
    assert_eq!(refused["is_error"], true);
    assert!(refused["output"].as_str().unwrap().contains("plan mode"));
    d.send(&json!({"op":"set_approval_mode","mode":"manual"}));

    // A prompt command sends the prompt's text as the user's message.
    server.push(ScriptedResponse::text("sure"));
    command(&mut d, "/mcp__everything__simple-prompt");
    let events = d.collect_until(is_ready, SLOW);
    let sent = events.iter().find(|e| e["type"] == "user_message").unwrap();
    assert_eq!(
        sent["content"],
        "This is a simple prompt without arguments."
    );
    let last = server.requests().len() - 1;
    assert!(server.requests()[last].body["input"]
        .to_string()
        .contains("This is a simple prompt without arguments."));
    server.push(ScriptedResponse::text("sunny"));
    command(&mut d, "/mcp__everything__args-prompt Paris");
    let events = d.collect_until(is_ready, SLOW);
    let sent = events.iter().find(|e| e["type"] == "user_message").unwrap();
    assert_eq!(sent["content"], "What's weather in Paris?");
    command(&mut d, "/mcp__everything__args-prompt");
    let err = d.wait_type("error", SLOW);
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("missing required argument `city`"),
        "{err}"
    );

    // `/mcp` shows the view; no two views in a row were the same.
    command(&mut d, "/mcp");
    let view = d.wait_type("mcp_servers", T);
    assert_eq!(
        server_of(&view, "everything").unwrap()["state"],
        "connected"
    );
    let views: Vec<&Value> = d
        .seen()
        .iter()
        .filter(|e| e["type"] == "mcp_servers")
        .collect();
    for pair in views[..views.len() - 1].windows(2) {
        assert_ne!(pair[0], pair[1], "repeated mcp_servers event");
    }

    // Shutdown closes the server's process group.
    assert!(process_with(&marker));
    d.send(&json!({"op":"shutdown"}));
    assert!(d.wait_exit(T).success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while process_with(&marker) {
        assert!(
            Instant::now() < deadline,
            "the MCP server outlived the engine"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn mcp_ops_change_the_servers_and_config_toml() {
    let ok = Command::new("python3")
        .args(["-c", "import mcp_server_time"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "python3 cannot import mcp_server_time: run scripts/deps-mcp"
    );
    let server = ScriptedServer::start();
    let home = home_with(&server, "");
    let mut d = serve_with(&home, &[]);
    let batch = startup(&mut d);
    assert_eq!(batch.last().unwrap()["servers"], json!([]));

    d.send(&json!({"op":"mcp_list"}));
    assert_eq!(d.wait_type("mcp_servers", T)["servers"], json!([]));

    let config =
        json!({"command":"python3","args":["-m","mcp_server_time"],"startup_timeout_sec":60});
    d.send(&json!({"op":"mcp_set","name":"time","config":config}));
    let view = d.wait_type("mcp_servers", T);
    assert_eq!(server_of(&view, "time").unwrap()["state"], "connecting");
    let saved = config_table(&home);
    assert_eq!(
        saved["model"].as_str(),
        Some("test-model"),
        "the rest is kept"
    );
    assert!(saved["providers"]["mock"].is_table());
    let time = saved["mcp_servers"]["time"].as_table().unwrap();
    assert_eq!(time["command"].as_str(), Some("python3"));
    assert_eq!(time["startup_timeout_sec"].as_integer(), Some(60));
    let connected = wait_state(&mut d, "time", "connected");
    assert!(connected["tools"]
        .as_array()
        .unwrap()
        .contains(&json!("get_current_time")));

    // The model sees the new server's tools.
    server.push(ScriptedResponse::text("ok"));
    d.send(&json!({"op":"user_message","content":"what time is it"}));
    d.collect_until(is_ready, SLOW);
    assert!(tool_names(&server, 0).contains(&"mcp__time__get_current_time".to_string()));

    d.send(&json!({"op":"mcp_toggle","name":"time","enabled":false}));
    let view = d.wait_type("mcp_servers", T);
    assert_eq!(
        server_of(&view, "time").unwrap(),
        &json!({"name":"time","transport":"stdio","state":"disabled","tools":[]})
    );
    assert_eq!(
        config_table(&home)["mcp_servers"]["time"]["enabled"].as_bool(),
        Some(false)
    );
    d.send(&json!({"op":"mcp_toggle","name":"time","enabled":true}));
    let view = d.wait_type("mcp_servers", T);
    assert_eq!(server_of(&view, "time").unwrap()["state"], "connecting");
    assert_eq!(
        config_table(&home)["mcp_servers"]["time"]["enabled"].as_bool(),
        Some(true)
    );
    wait_state(&mut d, "time", "connected");

    // Invalid config: an error, nothing changed.
    let before = std::fs::read_to_string(home.config_path()).unwrap();
    d.send(&json!({"op":"mcp_set","name":"bad","config":{"command":"x","args":"nope"}}));
    let err = d.wait_type("error", T);
    assert_eq!(
        err["message"],
        "mcp_servers.bad: `args` must be an array of strings"
    );
    assert_eq!(std::fs::read_to_string(home.config_path()).unwrap(), before);
    for op in [
        json!({"op":"mcp_remove","name":"nope"}),
        json!({"op":"mcp_toggle","name":"nope","enabled":true}),
    ] {
        d.send(&op);
        assert_eq!(
            d.wait_type("error", T)["message"],
            "unknown MCP server: nope"
        );
    }

    d.send(&json!({"op":"mcp_remove","name":"time"}));
    let view = d.wait_type("mcp_servers", T);
    assert_eq!(view["servers"], json!([]));
    let saved = config_table(&home);
    assert!(!saved.contains_key("mcp_servers"), "{saved:?}");
    assert_eq!(saved["model"].as_str(), Some("test-model"));

    // `/mcp add` and `/mcp disable` do the same as the ops.
    command(
        &mut d,
        "/mcp add gone /nonexistent/jucode-no-such-server --flag",
    );
    let view = d.wait_type("mcp_servers", T);
    // A missing program may fail before the answer is written.
    let gone = server_of(&view, "gone").unwrap()["state"].clone();
    assert!(gone == "connecting" || gone == "failed", "{view}");
    command(&mut d, "/mcp disable gone");
    wait_state(&mut d, "gone", "disabled");
    let gone = &config_table(&home)["mcp_servers"]["gone"];
    assert_eq!(gone["args"], toml::Value::Array(vec!["--flag".into()]));
    assert_eq!(gone["enabled"].as_bool(), Some(false));
    finish(d);
}

#[test]
fn servers_that_cannot_start_fail_with_the_reason() {
    let server = ScriptedServer::start();
    let home = home_with(
        &server,
        "[mcp_servers.silent]\ncommand = \"sleep\"\nargs = [\"60\"]\nstartup_timeout_sec = 1\n\
         [mcp_servers.missing]\ncommand = \"/nonexistent/jucode-no-such-binary\"\n\
         [mcp_servers.broken]\ncommand = \"x\"\nargs = \"nope\"\n",
    );
    let mut d = serve_with(&home, &[]);
    let batch = startup(&mut d);
    let view = batch.last().unwrap();
    let names: Vec<&str> = view["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["missing", "silent"],
        "the broken one is not started"
    );
    let err = d.wait_type("error", T);
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("mcp_servers.broken: `args` must be an array of strings"),
        "{err}"
    );
    let missing = wait_state(&mut d, "missing", "failed");
    assert!(
        missing["error"]
            .as_str()
            .unwrap()
            .contains("cannot start `/nonexistent/jucode-no-such-binary`"),
        "{missing}"
    );
    let silent = wait_state(&mut d, "silent", "failed");
    assert!(
        silent["error"]
            .as_str()
            .unwrap()
            .contains("timed out after 1 s"),
        "{silent}"
    );
    // A turn does not wait for failed servers, and offers none of their tools.
    server.push(ScriptedResponse::text("fine"));
    d.send(&json!({"op":"user_message","content":"hi"}));
    d.collect_until(is_ready, T);
    assert!(!tool_names(&server, 0)
        .iter()
        .any(|n| n.starts_with("mcp__")));
    finish(d);
}

#[test]
fn a_loopback_http_server_connects() {
    let http = HttpEverything::start();
    let server = ScriptedServer::start();
    let home = home_with(
        &server,
        &format!(
            "[mcp_servers.web]\nurl = \"http://127.0.0.1:{}/mcp\"\nstartup_timeout_sec = 60\n",
            http.port
        ),
    );
    let mut d = serve_with(&home, &["--approval-mode", "full-access"]);
    let batch = startup(&mut d);
    assert_eq!(
        server_of(batch.last().unwrap(), "web").unwrap()["transport"],
        "http"
    );
    let web = wait_state(&mut d, "web", "connected");
    assert!(web["tools"].as_array().unwrap().contains(&json!("get-sum")));
    server.push(ScriptedResponse::tool_call(
        "s1",
        "mcp__web__get-sum",
        r#"{"a":2,"b":3}"#,
    ));
    server.push(ScriptedResponse::text("5"));
    d.send(&json!({"op":"user_message","content":"add"}));
    let events = d.collect_until(is_ready, SLOW);
    let out = output_of(&events, "s1");
    assert_eq!(out["is_error"], false, "{out}");
    assert!(out["output"].as_str().unwrap().contains('5'), "{out}");
    finish(d);
}

#[test]
fn interrupting_a_long_mcp_call_returns_at_once() {
    let server = ScriptedServer::start();
    let home = home_with(&server, &everything_table("everything", &unique("long")));
    let mut d = serve_with(&home, &[]);
    startup(&mut d);
    wait_state(&mut d, "everything", "connected");
    server.push(ScriptedResponse::tool_call(
        "l1",
        "mcp__everything__trigger-long-running-operation",
        r#"{"duration":30,"steps":30}"#,
    ));
    d.send(&json!({"op":"user_message","content":"take your time"}));
    d.wait_for(|v| v["type"] == "tool_start" && v["call_id"] == "l1", SLOW);
    std::thread::sleep(Duration::from_millis(500));
    let asked = Instant::now();
    d.send(&json!({"op":"interrupt"}));
    d.wait_for(
        |v| v["type"] == "status" && v["message"] == "interrupted",
        T,
    );
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "interrupt took {:?}",
        asked.elapsed()
    );
    // The next turn works, and so does the server.
    server.push(ScriptedResponse::tool_call(
        "e1",
        "mcp__everything__echo",
        r#"{"message":"still here"}"#,
    ));
    server.push(ScriptedResponse::text("back"));
    d.send(&json!({"op":"user_message","content":"again"}));
    let events = d.collect_until(is_ready, SLOW);
    assert_eq!(output_of(&events, "e1")["output"], "Echo: still here");
    assert!(
        asked.elapsed() < Duration::from_secs(25),
        "the call was not abandoned"
    );
    finish(d);
}

#[test]
fn an_untrusted_projects_servers_wait_for_trust() {
    let server = ScriptedServer::start();
    let home = home_with(&server, "");
    home.write_workspace_file(
        ".jucode/mcp.toml",
        &everything_table("proj", &unique("proj")),
    );
    let mut d = serve_with(&home, &[]);
    let batch = startup(&mut d);
    assert_eq!(batch.last().unwrap()["servers"], json!([]));
    assert_eq!(d.next(T).expect("trust_prompt")["type"], "trust_prompt");
    // Nothing starts while the project is untrusted.
    while let Some(event) = d.next(Duration::from_secs(1)) {
        assert_ne!(event["type"], "mcp_servers", "{event}");
    }
    command(&mut d, "/trust yes");
    let proj = wait_state(&mut d, "proj", "connected");
    assert_eq!(proj["transport"], "stdio");
    assert!(proj["tools"].as_array().unwrap().contains(&json!("echo")));
    // Remembered: the next session starts it at once.
    finish(d);
    let mut d = serve_with(&home, &[]);
    let batch = startup(&mut d);
    assert_eq!(
        server_of(batch.last().unwrap(), "proj").unwrap()["state"],
        "connecting"
    );
    // A project server cannot be removed from config.toml.
    d.send(&json!({"op":"mcp_remove","name":"proj"}));
    let err = d.wait_type("error", T);
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains(".jucode/mcp.toml"),
        "{err}"
    );
    finish(d);
}
