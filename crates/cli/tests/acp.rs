//! `jucode acp` end to end: the crate's own ACP client drives the binary,
//! which talks to a scripted model server. Every test also checks that
//! stdout carried JSON-RPC frames only.

mod acp_client;

use acp_client::*;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, EmbeddedResource, EmbeddedResourceResource, ImageContent,
    ListSessionsRequest, LoadSessionRequest, ResourceLink, SetSessionConfigOptionRequest,
    SetSessionModeRequest, StopReason, TextContent, TextResourceContents,
};
use jucode_testkit::ScriptedResponse;
use serde_json::{json, Value};

#[test]
fn initialize_advertises_jucode_and_new_session_offers_modes_options_and_commands() {
    let acp = Acp::new();
    let ((init, new), _) = acp.run(vec![], async |ctx| {
        let init = ctx.init().await;
        let new = ctx.new_session().await;
        ctx.wait_for("available_commands_update", |u| {
            !of_kind(u, "available_commands_update").is_empty()
        })
        .await;
        let commands = of_kind(&ctx.updates(), "available_commands_update");
        let names: Vec<&str> = commands[0]["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"model"), "{names:?}");
        assert!(!names.contains(&"quit"), "{names:?}");
        Ok((
            serde_json::to_value(init).unwrap(),
            serde_json::to_value(new).unwrap(),
        ))
    });
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentInfo"]["name"], "jucode");
    assert_eq!(init["agentInfo"]["version"], env!("CARGO_PKG_VERSION"));
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(caps["mcpCapabilities"]["http"], true);

    assert!(!new["sessionId"].as_str().unwrap().is_empty());
    assert_eq!(new["modes"]["currentModeId"], "manual");
    let modes: Vec<&str> = new["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        modes,
        ["manual", "plan", "auto-edit", "auto", "full-access"]
    );
    let options = new["configOptions"].as_array().unwrap();
    let model = options.iter().find(|o| o["id"] == "model").unwrap();
    assert_eq!(model["category"], "model");
    assert_eq!(model["type"], "select");
    assert_eq!(model["currentValue"], "test-model");
    let effort = options
        .iter()
        .find(|o| o["id"] == "reasoning_effort")
        .unwrap();
    assert_eq!(effort["category"], "thought_level");
    let efforts: Vec<&str> = effort["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect();
    assert_eq!(efforts, ["low", "medium", "high"]);
}

#[test]
fn a_prompt_streams_agent_message_chunks_and_ends_the_turn() {
    let acp = Acp::new();
    acp.server.push(
        ScriptedResponse::text("Hello from the scripted model")
            .with_reasoning("thinking it over")
            .with_usage(1000, 0, 50, 10),
    );
    let (stop, seen) = acp.run(vec![], async |ctx| {
        let sid = ctx.session().await;
        Ok(ctx.prompt(&sid, "say hello").await?.stop_reason)
    });
    assert_eq!(stop, StopReason::EndTurn);
    let updates = seen.updates.lock().unwrap().clone();
    let chunks = of_kind(&updates, "agent_message_chunk");
    assert!(chunks.len() > 1, "expected several chunks: {chunks:?}");
    assert_eq!(
        chunk_text(&updates, "agent_message_chunk"),
        "Hello from the scripted model"
    );
    assert_eq!(
        chunk_text(&updates, "agent_thought_chunk"),
        "thinking it over"
    );
    let usage = of_kind(&updates, "usage_update");
    assert_eq!(usage.last().unwrap()["size"], 100000, "{usage:?}");
    assert!(usage.last().unwrap()["used"].as_u64().unwrap() > 0);
    assert_eq!(usage.last().unwrap()["cost"]["currency"], "USD");
    let body = &acp.server.requests()[0].body;
    assert_eq!(body["model"], "test-model");
}

fn write_call(id: &str, path: &str, content: &str) -> ScriptedResponse {
    let args = json!({"path": path, "content": content}).to_string();
    ScriptedResponse::tool_call(id, "write", &args)
}

fn tool_updates(updates: &[Value], call_id: &str) -> Vec<Value> {
    updates
        .iter()
        .map(|u| u["update"].clone())
        .filter(|u| u["toolCallId"] == call_id)
        .collect()
}

#[test]
fn an_allowed_write_runs_and_shows_a_diff() {
    let acp = Acp::new();
    acp.server.push(write_call("w1", "out.txt", "hello\n"));
    acp.server.push(ScriptedResponse::text("Written."));
    let (stop, seen) = acp.run(vec![Answer::Pick("allow_once")], async |ctx| {
        let sid = ctx.session().await;
        Ok(ctx.prompt(&sid, "write it").await?.stop_reason)
    });
    assert_eq!(stop, StopReason::EndTurn);
    let file = acp.home.workspace().join("out.txt");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello\n");

    let permissions = seen.permissions.lock().unwrap().clone();
    assert_eq!(permissions.len(), 1);
    let req = &permissions[0];
    let kinds: Vec<&str> = req["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    let call = &req["toolCall"];
    assert_eq!(call["toolCallId"], "w1");
    assert_eq!(call["title"], "Write out.txt");
    assert_eq!(call["kind"], "edit");
    let diff = &call["content"][0];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["path"], file.display().to_string());
    assert_eq!(diff["newText"], "hello\n");
    assert!(diff.get("oldText").is_none() || diff["oldText"].is_null());
    assert_eq!(call["locations"][0]["path"], file.display().to_string());

    let updates = seen.updates.lock().unwrap().clone();
    let calls = tool_updates(&updates, "w1");
    assert_eq!(calls[0]["sessionUpdate"], "tool_call");
    assert_eq!(calls[0]["status"], "in_progress");
    assert_eq!(calls[0]["kind"], "edit");
    assert_eq!(calls.last().unwrap()["status"], "completed", "{calls:?}");
}

#[test]
fn a_rejected_write_never_runs() {
    let acp = Acp::new();
    acp.server.push(write_call("w1", "nope.txt", "x"));
    acp.server.push(ScriptedResponse::text("OK, I will not."));
    let (stop, seen) = acp.run(vec![Answer::Pick("reject_once")], async |ctx| {
        let sid = ctx.session().await;
        Ok(ctx.prompt(&sid, "write it").await?.stop_reason)
    });
    assert_eq!(stop, StopReason::EndTurn);
    assert!(!acp.home.workspace().join("nope.txt").exists());
    let updates = seen.updates.lock().unwrap().clone();
    let calls = tool_updates(&updates, "w1");
    assert_eq!(calls.last().unwrap()["status"], "failed", "{calls:?}");
    // The model was told it was denied.
    let body = &acp.server.requests()[1].body;
    assert!(body.to_string().contains("Denied by the user"), "{body}");
}

#[test]
fn reject_always_denies_that_tool_for_the_session_without_asking() {
    let acp = Acp::new();
    acp.server.push(write_call("w1", "a.txt", "a"));
    acp.server.push(write_call("w2", "b.txt", "b"));
    acp.server.push(ScriptedResponse::text("Giving up."));
    let (stop, seen) = acp.run(vec![Answer::Pick("reject_always")], async |ctx| {
        let sid = ctx.session().await;
        Ok(ctx.prompt(&sid, "write twice").await?.stop_reason)
    });
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(seen.permissions.lock().unwrap().len(), 1);
    assert!(!acp.home.workspace().join("a.txt").exists());
    assert!(!acp.home.workspace().join("b.txt").exists());
}

#[test]
fn cancel_mid_turn_stops_with_cancelled_and_the_session_goes_on() {
    let acp = Acp::new();
    acp.server
        .push(ScriptedResponse::text("never shown").with_gate("hold"));
    acp.server.push(ScriptedResponse::text("Back again."));
    let ((first, second), seen) = acp.run(vec![], async |ctx| {
        let sid = ctx.session().await;
        let prompt = ctx.prompt(&sid, "take your time");
        let cancel = async {
            requests_reach(&acp.server, 1).await;
            ctx.cx()
                .send_notification(CancelNotification::new(sid.clone()))
                .unwrap();
        };
        let (first, ()) = tokio::join!(prompt, cancel);
        acp.server.open_gate("hold");
        let second = ctx.prompt(&sid, "again").await?;
        Ok((first?.stop_reason, second.stop_reason))
    });
    assert_eq!(first, StopReason::Cancelled);
    assert_eq!(second, StopReason::EndTurn);
    let updates = seen.updates.lock().unwrap().clone();
    let text = chunk_text(&updates, "agent_message_chunk");
    assert!(!text.contains("never shown"), "{text}");
    assert!(text.contains("Back again."), "{text}");
}

#[test]
fn cancel_while_a_permission_is_pending_answers_cancelled() {
    let acp = Acp::new();
    acp.server.push(write_call("w1", "held.txt", "x"));
    let (stop, _) = acp.run(vec![Answer::Hold], async |ctx| {
        let sid = ctx.session().await;
        let prompt = ctx.prompt(&sid, "write it");
        let cancel = async {
            ctx.wait_permissions(1).await;
            ctx.cx()
                .send_notification(CancelNotification::new(sid.clone()))
                .unwrap();
        };
        let (stop, ()) = tokio::join!(prompt, cancel);
        Ok(stop?.stop_reason)
    });
    assert_eq!(stop, StopReason::Cancelled);
    assert!(!acp.home.workspace().join("held.txt").exists());
}

#[test]
fn cancel_is_per_session() {
    let acp = Acp::new();
    acp.server
        .push(ScriptedResponse::text("never shown").with_gate("hold"));
    acp.server
        .push(ScriptedResponse::text("Session B answers."));
    let ((a, b), _) = acp.run(vec![], async |ctx| {
        ctx.init().await;
        let sid_a = ctx.new_session().await.session_id.0.to_string();
        let sid_b = ctx.new_session().await.session_id.0.to_string();
        assert_ne!(sid_a, sid_b);
        let prompt_a = ctx.prompt(&sid_a, "slow");
        let rest = async {
            requests_reach(&acp.server, 1).await;
            let b = ctx.prompt(&sid_b, "fast").await;
            ctx.cx()
                .send_notification(CancelNotification::new(sid_a.clone()))
                .unwrap();
            b
        };
        let (a, b) = tokio::join!(prompt_a, rest);
        acp.server.open_gate("hold");
        Ok((a?.stop_reason, b?.stop_reason))
    });
    assert_eq!(a, StopReason::Cancelled);
    assert_eq!(b, StopReason::EndTurn);
}

#[test]
fn a_failed_turn_answers_the_prompt_with_an_error() {
    let acp = Acp::new();
    acp.server.push(ScriptedResponse::status(400));
    let (err, _) = acp.run(vec![], async |ctx| {
        let sid = ctx.session().await;
        Ok(ctx.prompt(&sid, "fail please").await.unwrap_err())
    });
    assert_eq!(err.code, agent_client_protocol::ErrorCode::INTERNAL_ERROR);
    assert!(err.message.contains("400"), "{err:?}");
}

#[test]
fn plan_mode_refuses_writes() {
    let acp = Acp::new();
    acp.server.push(write_call("w1", "plan.txt", "x"));
    acp.server.push(ScriptedResponse::text("Here is my plan."));
    acp.home.write_workspace_file("plan.txt", "original\n");
    let (stop, seen) = acp.run(vec![], async |ctx| {
        let sid = ctx.session().await;
        ctx.cx()
            .send_request(SetSessionModeRequest::new(sid.clone(), "plan"))
            .block_task()
            .await?;
        ctx.wait_for("current_mode_update", |u| {
            of_kind(u, "current_mode_update")
                .iter()
                .any(|m| m["currentModeId"] == "plan")
        })
        .await;
        Ok(ctx.prompt(&sid, "change it").await?.stop_reason)
    });
    assert_eq!(stop, StopReason::EndTurn);
    assert!(seen.permissions.lock().unwrap().is_empty());
    let path = acp.home.workspace().join("plan.txt");
    assert_eq!(std::fs::read_to_string(path).unwrap(), "original\n");
    let updates = seen.updates.lock().unwrap().clone();
    assert_eq!(
        tool_updates(&updates, "w1").last().unwrap()["status"],
        "failed"
    );
}

#[test]
fn set_mode_rejects_unknown_modes() {
    let acp = Acp::new();
    let (err, _) = acp.run(vec![], async |ctx| {
        let sid = ctx.session().await;
        let result = ctx
            .cx()
            .send_request(SetSessionModeRequest::new(sid, "yolo"))
            .block_task()
            .await;
        Ok(result.unwrap_err())
    });
    assert_eq!(err.code, agent_client_protocol::ErrorCode::INVALID_PARAMS);
}

#[test]
fn set_config_option_switches_the_model_and_effort() {
    let acp = Acp::new()
        .arg("-c")
        .arg(r#"models."other-model".provider="mock""#);
    acp.server.push(ScriptedResponse::text("one"));
    acp.server.push(ScriptedResponse::text("two"));
    let (options, _) = acp.run(vec![], async |ctx| {
        let sid = ctx.session().await;
        let effort = ctx
            .cx()
            .send_request(SetSessionConfigOptionRequest::new(
                sid.clone(),
                "reasoning_effort",
                "high",
            ))
            .block_task()
            .await?;
        ctx.prompt(&sid, "first").await?;
        let model = ctx
            .cx()
            .send_request(SetSessionConfigOptionRequest::new(
                sid.clone(),
                "model",
                "other-model",
            ))
            .block_task()
            .await?;
        ctx.prompt(&sid, "second").await?;
        let bad = ctx
            .cx()
            .send_request(SetSessionConfigOptionRequest::new(
                sid.clone(),
                "model",
                "no-such-model",
            ))
            .block_task()
            .await;
        assert!(bad.is_err());
        Ok((
            serde_json::to_value(effort).unwrap(),
            serde_json::to_value(model).unwrap(),
        ))
    });
    let (effort, model) = options;
    let find = |v: &Value, id: &str| {
        v["configOptions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == id)
            .cloned()
    };
    assert_eq!(
        find(&effort, "reasoning_effort").unwrap()["currentValue"],
        "high"
    );
    assert_eq!(
        find(&model, "model").unwrap()["currentValue"],
        "other-model"
    );
    // other-model has no reasoning efforts.
    assert!(find(&model, "reasoning_effort").is_none(), "{model}");
    let requests = acp.server.requests();
    assert_eq!(requests[0].body["model"], "test-model");
    assert_eq!(requests[0].body["reasoning"]["effort"], "high");
    assert_eq!(requests[1].body["model"], "other-model");
}

#[test]
fn slash_command_prompts_run_the_command() {
    let acp = Acp::new()
        .arg("-c")
        .arg(r#"models."other-model".provider="mock""#);
    let ((listed, switched), seen) = acp.run(vec![], async |ctx| {
        let sid = ctx.session().await;
        let listed = ctx.prompt(&sid, "/model").await?.stop_reason;
        let switched = ctx.prompt(&sid, "/model other-model").await?.stop_reason;
        Ok((listed, switched))
    });
    assert_eq!(listed, StopReason::EndTurn);
    assert_eq!(switched, StopReason::EndTurn);
    let updates = seen.updates.lock().unwrap().clone();
    let text = chunk_text(&updates, "agent_message_chunk");
    assert!(text.contains("* test-model"), "{text}");
    assert!(text.contains("Model: other-model"), "{text}");
    // The switch is announced as a config option change.
    let changes = of_kind(&updates, "config_option_update");
    let model = changes.last().unwrap()["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "model")
        .unwrap()
        .clone();
    assert_eq!(model["currentValue"], "other-model");
    assert_eq!(acp.server.request_count(), 0);
}

#[test]
fn images_resources_and_links_reach_the_model() {
    let acp = Acp::new();
    acp.server.push(ScriptedResponse::text("Seen."));
    acp.home.write_workspace_file("linked.rs", "fn main() {}\n");
    let linked = acp.home.workspace().join("linked.rs");
    // A 1x1 transparent PNG.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
    let (stop, _) = acp.run(vec![], async |ctx| {
        let sid = ctx.session().await;
        let blocks = vec![
            ContentBlock::Text(TextContent::new("Look at these:")),
            ContentBlock::Image(ImageContent::new(png, "image/png")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "let x = 1;",
                    "file:///virtual/snippet.rs",
                )),
            )),
            ContentBlock::ResourceLink(ResourceLink::new(
                "linked.rs",
                format!("file://{}", linked.display()),
            )),
        ];
        Ok(ctx.prompt_blocks(&sid, blocks).await?.stop_reason)
    });
    assert_eq!(stop, StopReason::EndTurn);
    let body = acp.server.requests()[0].body.to_string();
    assert!(body.contains("Look at these:"), "{body}");
    assert!(
        body.contains("file:///virtual/snippet.rs\\n```\\nlet x = 1;\\n```"),
        "{body}"
    );
    assert!(body.contains("[Attached file \\\"linked.rs\\\""), "{body}");
    assert!(body.contains("input_image"), "{body}");
}

/// Writes a stored session by hand, the way the engine persists one.
fn stored_session(acp: &Acp, id: &str) {
    let store = jucode_store::Store::new(acp.home.path().join("sessions"));
    let cwd = std::fs::canonicalize(acp.home.workspace()).unwrap();
    let header = jucode_store::SessionHeader {
        id: id.into(),
        cwd: cwd.display().to_string(),
        created_at: jucode_store::now_ms(),
        version: "0.3.0".into(),
        chat: false,
    };
    let mut writer = store.create(&header).unwrap();
    let mut parent: Option<String> = None;
    for body in [
        // The engine's own format: user messages as events, what the model
        // saw and said as history items.
        json!({"type": "user_message", "content": "what is in the box?"}),
        json!({"type": "history_item", "item": {"kind": "tool_call", "call_id": "r1", "name": "read", "arguments": "{\"path\":\"box.txt\"}"}}),
        json!({"type": "history_item", "item": {"kind": "tool_result", "call_id": "r1", "output": "meow", "is_error": false}}),
        json!({"type": "history_item", "item": {"kind": "assistant", "text": "A cat."}}),
        json!({"type": "context_usage", "tokens": 10, "tokenizer": "o200k", "cost": 0.0}),
    ] {
        let record = jucode_store::Record::new(parent.clone(), body.as_object().unwrap().clone());
        parent = Some(record.id.clone());
        writer.append(&record).unwrap();
    }
    writer.set_label("what is in the box?").unwrap();
    writer.touch().unwrap();
}

#[test]
fn load_replays_the_stored_history_before_answering_and_list_finds_it() {
    let acp = Acp::new();
    let id = "0190aaaa-bbbb-7ccc-8ddd-eeeeffff0001";
    stored_session(&acp, id);
    let ((replayed, listed), _) = acp.run(vec![], async |ctx| {
        ctx.init().await;
        let listed = ctx
            .cx()
            .send_request(ListSessionsRequest::new().cwd(ctx.workspace.clone()))
            .block_task()
            .await?;
        ctx.cx()
            .send_request(LoadSessionRequest::new(id, ctx.workspace.clone()))
            .block_task()
            .await?;
        // Whatever arrived before the response is the replay.
        Ok((ctx.updates(), serde_json::to_value(listed).unwrap()))
    });
    assert_eq!(
        chunk_text(&replayed, "user_message_chunk"),
        "what is in the box?"
    );
    assert_eq!(chunk_text(&replayed, "agent_message_chunk"), "A cat.");
    let calls = tool_updates(&replayed, "r1");
    assert_eq!(calls[0]["sessionUpdate"], "tool_call");
    assert_eq!(calls[0]["kind"], "read");
    assert_eq!(calls[1]["status"], "completed");
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed}");
    assert_eq!(sessions[0]["sessionId"], id);
    assert_eq!(sessions[0]["title"], "what is in the box?");
}

#[test]
fn load_of_an_unknown_session_fails() {
    let acp = Acp::new();
    let (err, _) = acp.run(vec![], async |ctx| {
        ctx.init().await;
        let result = ctx
            .cx()
            .send_request(LoadSessionRequest::new(
                "no-such-session",
                ctx.workspace.clone(),
            ))
            .block_task()
            .await;
        Ok(result.unwrap_err())
    });
    assert_eq!(
        err.code,
        agent_client_protocol::ErrorCode::RESOURCE_NOT_FOUND
    );
}

#[test]

fn a_session_continues_after_load_in_a_new_process() {
    let acp = Acp::new();
    acp.server.push(ScriptedResponse::text("First answer."));
    acp.server.push(ScriptedResponse::text("Second answer."));
    let (sid, _) = acp.run(vec![], async |ctx| {
        let sid = ctx.session().await;
        ctx.prompt(&sid, "remember the word pineapple").await?;
        Ok(sid)
    });
    let (replayed, _) = acp.run(vec![], async |ctx| {
        ctx.init().await;
        ctx.cx()
            .send_request(LoadSessionRequest::new(sid.clone(), ctx.workspace.clone()))
            .block_task()
            .await?;
        let replayed = ctx.updates();
        ctx.prompt(&sid, "which word?").await?;
        Ok(replayed)
    });
    assert!(chunk_text(&replayed, "user_message_chunk").contains("pineapple"));
    assert!(chunk_text(&replayed, "agent_message_chunk").contains("First answer."));
    let second = acp.server.requests()[1].body.to_string();
    assert!(second.contains("pineapple"), "{second}");
}

#[test]
fn stdout_carries_only_jsonrpc_frames_even_when_tools_print() {
    let acp = Acp::new().arg("--approval-mode").arg("full-access");
    acp.server.push(ScriptedResponse::tool_call(
        "b1",
        "bash",
        r#"{"command":"echo to-stdout; echo to-stderr >&2"}"#,
    ));
    acp.server.push(ScriptedResponse::text("Printed."));
    let (stop, seen) = acp.run(vec![], async |ctx| {
        let sid = ctx.session().await;
        Ok(ctx.prompt(&sid, "print something").await?.stop_reason)
    });
    assert_eq!(stop, StopReason::EndTurn);
    let stdout = seen.stdout.lock().unwrap().clone();
    assert_stdout_is_jsonrpc(&stdout);
    // The command's output reached the client only inside a frame.
    assert!(stdout.iter().all(|l| l.trim() != "to-stdout"));
    let updates = seen.updates.lock().unwrap().clone();
    let calls = tool_updates(&updates, "b1");
    assert_eq!(calls[0]["kind"], "execute");
    let done = calls.last().unwrap();
    assert_eq!(done["status"], "completed");
    assert!(done["content"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .contains("to-stdout"));
}
