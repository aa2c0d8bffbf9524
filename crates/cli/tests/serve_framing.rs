//! Issue: foundation. `jucode serve` framing, startup batch, errors, exit.

mod common;

use std::time::Duration;

use common::*;
use jucode_testkit::{Driver, TestHome};
use serde_json::{json, Value};

fn plain_home() -> TestHome {
    let home = TestHome::new();
    home.write_config("model = \"gpt-5.5\"\nprovider = \"openai\"\n");
    home
}

fn spawn(home: &TestHome) -> Driver {
    Driver::new(bin())
        .args(["serve"])
        .env("JUCODE_HOME", home.path())
        .env_remove("OPENAI_API_KEY")
        .current_dir(home.workspace())
        .spawn()
}

#[test]
fn hello_then_startup_batch_in_order() {
    let home = plain_home();
    let mut d = spawn(&home);
    let hello = d.next(T).unwrap();
    assert_eq!(
        hello,
        json!({"type":"hello","protocol":2,"version":env!("CARGO_PKG_VERSION")})
    );
    let batch = d.collect_until(|v| v["type"] == "mcp_servers", T);
    assert_eq!(
        types(&batch),
        [
            "startup",
            "model_status",
            "command_list",
            "approval_mode",
            "mcp_servers"
        ]
    );
    let startup = &batch[0];
    let session = startup["session_id"].as_str().unwrap().to_string();
    assert_eq!(session.len(), 36);
    for event in &batch {
        assert_eq!(event["session"], session.as_str(), "{event}");
    }
    assert_eq!(startup["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(startup["model"], "gpt-5.5");
    assert_eq!(startup["context_window"], 1_050_000);
    let profile = std::fs::canonicalize(home.path()).unwrap();
    assert_eq!(
        std::fs::canonicalize(startup["profile_dir"].as_str().unwrap()).unwrap(),
        profile
    );
    assert_eq!(
        startup["config_path"].as_str().unwrap(),
        home.path().join("config.toml").display().to_string()
    );
    assert_eq!(
        std::fs::canonicalize(startup["cwd"].as_str().unwrap()).unwrap(),
        std::fs::canonicalize(home.workspace()).unwrap()
    );
    let status = &batch[1];
    assert_eq!(status["provider"], "openai");
    assert_eq!(status["model"], "gpt-5.5");
    assert_eq!(status["state"], "missing_credentials");
    assert!(status["reasoning_efforts"].as_array().unwrap().len() >= 3);
    let commands = batch[2]["commands"].as_array().unwrap();
    for name in ["/help", "/model", "/quit", "/exit"] {
        let cmd = commands.iter().find(|c| c["command"] == name).expect(name);
        assert!(!cmd["description"].as_str().unwrap().is_empty());
        assert!(cmd["marker"].is_null());
    }
    assert_eq!(batch[3]["mode"], "manual");
    assert_eq!(batch[4]["servers"], json!([]));

    // A second engine gets a fresh session id.
    let mut d2 = spawn(&home);
    let batch2 = common::startup(&mut d2);
    assert_ne!(batch2[0]["session_id"], startup["session_id"]);
}

#[test]
fn malformed_lines_get_errors_and_the_engine_keeps_answering() {
    let home = plain_home();
    let mut d = spawn(&home);
    startup(&mut d);
    let cases: &[(&str, &str)] = &[
        (
            "[]",
            "invalid command: expected a JSON object, got an array",
        ),
        (
            "42",
            "invalid command: expected a JSON object, got a number",
        ),
        (
            "\"x\"",
            "invalid command: expected a JSON object, got a string",
        ),
        ("null", "invalid command: expected a JSON object, got null"),
        ("{broken json", "invalid command: not valid JSON"),
        (r#"{"content":"hi"}"#, "invalid command: missing field `op`"),
        (
            r#"{"op":7}"#,
            "invalid command: field `op` must be a string",
        ),
        (
            r#"{"op":"user_message"}"#,
            "invalid command: missing field `content`",
        ),
        (
            r#"{"op":"set_attended","attended":"yes"}"#,
            "invalid command: field `attended`",
        ),
        (
            r#"{"op":"steer","index":"first"}"#,
            "invalid command: field `index`",
        ),
        (
            r#"{"op":"set_approval_mode","mode":"yolo"}"#,
            "invalid command: field `mode`",
        ),
        (r#"{"op":"teleport"}"#, "unknown op: teleport"),
    ];
    for (line, expected) in cases {
        d.send_raw(line);
        let event = d.next(T).unwrap();
        assert_eq!(event["type"], "error", "{line} → {event}");
        let message = event["message"].as_str().unwrap();
        assert!(message.starts_with(expected), "{line} → {message}");
        assert!(event["session"].is_string());
        // The engine still answers the next op.
        d.send(&json!({"op":"set_attended","attended":true}));
        assert_eq!(d.next(T).unwrap()["type"], "attended", "after {line}");
    }
}

#[test]
fn empty_lines_are_ignored() {
    let home = plain_home();
    let mut d = spawn(&home);
    startup(&mut d);
    d.send_raw("");
    d.send_raw("   ");
    d.send_raw("\t");
    d.send(&json!({"op":"agent_runs"}));
    let event = d.next(T).unwrap();
    assert_eq!(event["type"], "agent_runs");
    assert_eq!(event["agents"], json!([]));
}

#[test]
fn a_ten_megabyte_line_is_answered() {
    let home = plain_home();
    let mut d = spawn(&home);
    startup(&mut d);
    let big = "x".repeat(10 * 1024 * 1024);
    // A valid op with a huge unknown-command text, then a huge broken line.
    d.send(&json!({"op":"command","input":format!("/{big}")}));
    let event = d.next(Duration::from_secs(60)).unwrap();
    assert_eq!(event["type"], "error");
    d.send_raw(&format!(
        "{{\"op\":\"user_message\",\"content\":{}",
        big.len()
    ));
    d.send_raw(&format!("[\"{big}\"]"));
    let event = d.next(Duration::from_secs(60)).unwrap();
    assert!(event["message"]
        .as_str()
        .unwrap()
        .starts_with("invalid command"));
    let event = d.next(Duration::from_secs(60)).unwrap();
    assert!(event["message"]
        .as_str()
        .unwrap()
        .starts_with("invalid command"));
    d.send(&json!({"op":"agent_runs"}));
    assert_eq!(d.next(T).unwrap()["type"], "agent_runs");
}

fn assert_clean_exit(mut d: Driver, trigger: impl FnOnce(&mut Driver)) {
    startup(&mut d);
    // Queue an answer, then the exit trigger: the answer must still arrive.
    d.send(&json!({"op":"set_approval_mode","mode":"auto"}));
    trigger(&mut d);
    let status = d.wait_exit(T);
    assert_eq!(status.code(), Some(0));
    let seen: Vec<Value> = drain(&mut d);
    assert!(
        seen.iter()
            .any(|e| e["type"] == "approval_mode" && e["mode"] == "auto"),
        "queued events were not flushed before exit: {seen:?}"
    );
}

#[test]
fn shutdown_op_exits_zero_after_flushing() {
    let home = plain_home();
    assert_clean_exit(spawn(&home), |d| d.send(&json!({"op":"shutdown"})));
}

#[test]
fn stdin_eof_exits_zero() {
    let home = plain_home();
    assert_clean_exit(spawn(&home), |d| d.close_stdin());
}

#[test]
fn quit_and_exit_commands_exit_zero() {
    let home = plain_home();
    assert_clean_exit(spawn(&home), |d| {
        d.send(&json!({"op":"command","input":"/quit"}))
    });
    assert_clean_exit(spawn(&home), |d| {
        d.send(&json!({"op":"command","input":"/exit"}))
    });
}

#[test]
fn model_status_is_only_reemitted_when_it_changes() {
    let home = plain_home();
    let mut d = spawn(&home);
    startup(&mut d);
    // Switching to the model already active changes nothing: no model_status.
    d.send(&json!({"op":"command","input":"/model gpt-5.5"}));
    d.send(&json!({"op":"agent_runs"}));
    assert_eq!(d.next(T).unwrap()["type"], "agent_runs");
    // A real change is emitted once.
    d.send(&json!({"op":"command","input":"/model gpt-5.5 high"}));
    let status = d.next(T).unwrap();
    assert_eq!(status["type"], "model_status");
    assert_eq!(status["reasoning_effort"], "high");
    d.send(&json!({"op":"command","input":"/model gpt-5.5 high"}));
    d.send(&json!({"op":"agent_runs"}));
    assert_eq!(d.next(T).unwrap()["type"], "agent_runs");
}

#[test]
fn a_broken_config_reports_the_line_and_starts_with_defaults() {
    let home = TestHome::new();
    home.write_config("model = \"gpt-5.5\"\napproval_mode = \"auto\"\nthis is not toml\n");
    let mut d = spawn(&home);
    assert_eq!(d.next(T).unwrap()["type"], "hello");
    let batch = d.collect_until(|v| v["type"] == "mcp_servers", T);
    let error = batch
        .iter()
        .find(|e| e["type"] == "error")
        .expect("error event");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("config.toml line 3"), "{message}");
    assert!(message.contains("using defaults"), "{message}");
    let startup = batch.iter().find(|e| e["type"] == "startup").unwrap();
    assert_eq!(startup["model"], "gpt-5.5"); // the default model
    let mode = batch.iter().find(|e| e["type"] == "approval_mode").unwrap();
    assert_eq!(mode["mode"], "manual"); // defaults, not the broken file's value
    d.send(&json!({"op":"agent_runs"}));
    assert_eq!(d.next(T).unwrap()["type"], "agent_runs");
}

#[test]
fn an_unknown_config_key_is_reported() {
    let home = TestHome::new();
    home.write_config("modle = \"x\"\n");
    let mut d = spawn(&home);
    d.next(T).unwrap();
    let batch = d.collect_until(|v| v["type"] == "mcp_servers", T);
    let error = batch
        .iter()
        .find(|e| e["type"] == "error")
        .expect("error event");
    assert!(
        error["message"].as_str().unwrap().contains("modle"),
        "{error}"
    );
}

#[test]
fn flags_override_config() {
    let home = plain_home();
    let mut d = Driver::new(bin())
        .args([
            "serve",
            "-m",
            "claude-sonnet-4-6",
            "--approval-mode",
            "auto-edit",
            "-c",
            "reasoning_effort=\"low\"",
        ])
        .env("JUCODE_HOME", home.path())
        .current_dir(home.workspace())
        .spawn();
    let batch = startup(&mut d);
    assert_eq!(batch[0]["model"], "claude-sonnet-4-6");
    assert_eq!(batch[1]["provider"], "anthropic");
    assert_eq!(batch[1]["reasoning_effort"], "low");
    assert_eq!(batch[3]["mode"], "auto-edit");
}

#[test]
fn set_approval_mode_emits_status_and_mode() {
    let home = plain_home();
    let mut d = spawn(&home);
    startup(&mut d);
    d.send(&json!({"op":"set_approval_mode","mode":"full-access","session":"whatever"}));
    let status = d.next(T).unwrap();
    assert_eq!(status["type"], "status");
    assert_eq!(status["message"], "approval mode: full-access");
    assert_eq!(d.next(T).unwrap(), {
        let mut v = json!({"type":"approval_mode","mode":"full-access"});
        v["session"] = status["session"].clone();
        v
    });
}

#[test]
fn print_schema_outputs_the_protocol_schema() {
    let out = std::process::Command::new(bin())
        .args(["serve", "--print-schema"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(schema["protocol"], 2);
    assert!(schema["ops"].is_object() && schema["events"].is_object());
}
