//! Issue: project resources — instructions files, custom commands, skills,
//! hooks, trust — and chat sessions, web_search.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use jucode_testkit::{mock_config, Driver, ScriptedResponse, ScriptedServer, TestHome};
use serde_json::{json, Value};

fn turn(d: &mut Driver, text: &str) -> Vec<Value> {
    d.send(&json!({"op":"user_message","content":text}));
    d.collect_until(is_ready, T)
}

fn command(d: &mut Driver, input: &str) {
    d.send(&json!({"op":"command","input":input}));
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap()
}

fn path_arg(path: &Path) -> String {
    path.display().to_string()
}

/// The system prompt of request `n` (Responses wire: `instructions`).
fn instructions(server: &ScriptedServer, n: usize) -> String {
    server.requests()[n].body["instructions"]
        .as_str()
        .expect("instructions")
        .to_string()
}

fn tool_names(server: &ScriptedServer, n: usize) -> Vec<String> {
    server.requests()[n].body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn commands_of(event: &Value) -> Vec<String> {
    assert_eq!(event["type"], "command_list", "{event}");
    event["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap().to_string())
        .collect()
}

fn entry<'a>(event: &'a Value, name: &str) -> &'a Value {
    event["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command"] == name)
        .unwrap_or_else(|| panic!("no {name} in {event}"))
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn wait_for_file(path: &Path) -> String {
    let deadline = Instant::now() + T;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if !text.is_empty() {
                return text;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A workspace with project resources in `.jucode/` that need trust.
fn write_project_resources(home: &TestHome) {
    home.write_workspace_file(
        ".jucode/commands/greet.md",
        "---\ndescription: Greet someone\nargument-hint: NAME\n---\nSay hello to $ARGUMENTS.\n",
    );
    home.write_workspace_file(
        ".jucode/skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploy the app to staging\n---\n1. Run make deploy\n",
    );
    home.write_workspace_file(
        ".jucode/hooks.toml",
        "[[session_start]]\ncommand = \"echo project hook says hi\"\n",
    );
}

#[test]
fn instructions_files_reach_the_model_without_trust() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("ok"));
    let home = home_for(&server, "responses");
    home.write_workspace_file(".git/HEAD", "ref: refs/heads/main\n");
    home.write_workspace_file("AGENTS.md", "ROOT-RULE: indent with tabs");
    home.write_workspace_file("sub/JUCODE.md", "SUB-RULE: keep answers short");
    home.write_workspace_file(".jucode/commands/x.md", "untrusted command");
    home.write_file("AGENTS.md", "PROFILE-RULE: call me Sam");
    let sub = home.workspace().join("sub");
    let mut d = serve_with(&home, &["-C", &path_arg(&sub)]);
    startup(&mut d);
    turn(&mut d, "hello");
    let text = instructions(&server, 0);
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in {text}"))
    };
    // Profile first, then the repo root down to cwd.
    assert!(at("PROFILE-RULE") < at("ROOT-RULE"));
    assert!(at("ROOT-RULE") < at("SUB-RULE"));
    let root = canonical(home.workspace());
    assert!(text.contains(&format!("## {}", root.join("AGENTS.md").display())));
    assert!(text.contains(&format!("## {}", root.join("sub/JUCODE.md").display())));
    assert!(text.contains(&format!(
        "## {} (user profile)",
        home.path().join("AGENTS.md").display()
    )));
    // The untrusted .jucode/ folder asked for trust; the instructions loaded anyway.
    assert_eq!(of_type(&drain(&mut d), "trust_prompt").len(), 1);
}

#[test]
fn chat_sessions_load_no_project_resources() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("one"));
    server.push(ScriptedResponse::text("two"));
    let home = home_for(&server, "responses");
    home.write_file("AGENTS.md", "PROFILE-RULE: call me Sam");
    home.write_file("commands/mine.md", "my command");
    home.write_file(
        "hooks.toml",
        "[[session_start]]\ncommand = \"echo profile hook ran\"\n",
    );
    home.write_file("chats/topic/AGENTS.md", "FOLDER-RULE");
    home.write_file("chats/topic/.jucode/commands/x.md", "x");

    // serve --chat runs in the profile's chats folder.
    let mut d = serve_with(&home, &["--chat"]);
    let batch = startup(&mut d);
    assert_eq!(batch[0]["cwd"], path_arg(&home.path().join("chats")));
    let list = commands_of(batch.iter().find(|e| e["type"] == "command_list").unwrap());
    assert!(!list.contains(&"/mine".to_string()), "{list:?}");
    turn(&mut d, "hi");
    let text = instructions(&server, 0);
    assert!(text.contains("chat mode"), "{text}");
    assert!(!text.contains("PROFILE-RULE"), "{text}");
    assert_eq!(tool_names(&server, 0), ["web_fetch"]);
    let events = drain(&mut d);
    assert!(of_type(&events, "trust_prompt").is_empty());
    assert!(!events.iter().any(|e| e["message"] == "profile hook ran"));
    drop(d);

    // Any engine started inside the chats folder is a chat session too.
    let topic = home.path().join("chats/topic");
    let mut d = serve_with(&home, &["-C", &path_arg(&topic)]);
    startup(&mut d);
    turn(&mut d, "hi again");
    let text = instructions(&server, 1);
    assert!(text.contains("chat mode"), "{text}");
    assert!(!text.contains("FOLDER-RULE") && !text.contains("PROFILE-RULE"));
    assert_eq!(tool_names(&server, 1), ["web_fetch"]);
    assert!(of_type(&drain(&mut d), "trust_prompt").is_empty());
}

#[test]
fn an_untrusted_project_loads_nothing_until_trust_yes() {
    let server = ScriptedServer::start();
    for text in ["one", "two", "three"] {
        server.push(ScriptedResponse::text(text));
    }
    let home = home_for(&server, "responses");
    write_project_resources(&home);
    let ws = canonical(home.workspace());
    let mut d = serve_with(&home, &[]);
    let batch = startup(&mut d);
    let list = commands_of(batch.iter().find(|e| e["type"] == "command_list").unwrap());
    assert!(list.contains(&"/trust".to_string()));
    assert!(!list.contains(&"/greet".to_string()) && !list.contains(&"/deploy".to_string()));
    // Right after mcp_servers: the trust prompt.
    let prompt = d.next(T).expect("trust_prompt");
    assert_eq!(prompt["type"], "trust_prompt", "{prompt}");
    assert_eq!(prompt["cwd"], path_arg(&ws));
    assert_eq!(prompt["repo_root"], path_arg(&ws));

    turn(&mut d, "hi");
    assert!(!instructions(&server, 0).contains("deploy"));
    command(&mut d, "/greet Bob");
    let err = d.wait_type("error", T);
    assert!(err["message"].as_str().unwrap().contains("unknown command"));
    assert!(!d
        .seen()
        .iter()
        .any(|e| e["type"] == "info" && e["message"] == "project hook says hi"));
    command(&mut d, "/trust");
    let info = d.wait_type("info", T);
    assert!(
        info["message"]
            .as_str()
            .unwrap()
            .contains("no trust decision"),
        "{info}"
    );

    command(&mut d, "/trust yes");
    let status = d.wait_type("status", T);
    assert_eq!(status["message"], format!("trusted {}", ws.display()));
    let list = d.wait_type("command_list", T);
    let greet = entry(&list, "/greet");
    assert_eq!(greet["marker"], "custom");
    assert_eq!(greet["args"], "NAME");
    assert_eq!(greet["description"], "Greet someone");
    let deploy = entry(&list, "/deploy");
    assert_eq!(deploy["marker"], "skill");
    assert_eq!(deploy["description"], "Deploy the app to staging");
    let info = d.wait_type("info", T);
    assert_eq!(info["message"], "project hook says hi");

    turn(&mut d, "what can you do");
    let text = instructions(&server, 1);
    let skill_path = ws.join(".jucode/skills/deploy/SKILL.md");
    assert!(
        text.contains(&format!(
            "- deploy: Deploy the app to staging ({})",
            skill_path.display()
        )),
        "{text}"
    );
    assert!(text.contains("`read` tool"), "{text}");

    command(&mut d, "/greet Bob");
    let events = d.collect_until(is_ready, T);
    assert_eq!(
        of_type(&events, "user_message")[0]["content"],
        "Say hello to Bob."
    );
    assert!(server.requests()[2].body["input"]
        .to_string()
        .contains("Say hello to Bob."));
    let trust = std::fs::read_to_string(home.path().join("trust.toml")).unwrap();
    assert!(
        trust.contains(&format!("\"{}\" = \"yes\"", ws.display())),
        "{trust}"
    );
    drop(d);

    // Remembered: no prompt, the project's session_start hook runs at startup.
    let mut d = serve_with(&home, &[]);
    startup(&mut d);
    let next = d.next(T).expect("an event after the batch");
    assert_eq!(next["type"], "info", "{next}");
    assert_eq!(next["message"], "project hook says hi");
    assert!(of_type(&drain(&mut d), "trust_prompt").is_empty());
}

#[test]
fn trust_no_is_remembered_and_trust_repo_covers_the_repo() {
    let server = ScriptedServer::start();
    let home = home_for(&server, "responses");
    home.write_workspace_file(".git/HEAD", "ref: refs/heads/main\n");
    write_project_resources(&home);
    home.write_workspace_file("sub/readme.txt", "a subfolder");
    let ws = canonical(home.workspace());
    let sub = ws.join("sub");

    let mut d = serve_with(&home, &["-C", &path_arg(&sub)]);
    startup(&mut d);
    let prompt = d.wait_type("trust_prompt", T);
    assert_eq!(prompt["cwd"], path_arg(&sub));
    assert_eq!(prompt["repo_root"], path_arg(&ws));
    command(&mut d, "/trust no");
    let info = d.wait_type("info", T);
    assert!(info["message"].as_str().unwrap().contains("not trusting"));
    let list = commands_of(&d.wait_type("command_list", T));
    assert!(!list.contains(&"/greet".to_string()));
    drop(d);

    // The refusal is remembered: no prompt, nothing loaded.
    let mut d = serve_with(&home, &["-C", &path_arg(&sub)]);
    let batch = startup(&mut d);
    let list = commands_of(batch.iter().find(|e| e["type"] == "command_list").unwrap());
    assert!(!list.contains(&"/greet".to_string()));
    command(&mut d, "/trust");
    let info = d.wait_type("info", T);
    assert!(
        info["message"].as_str().unwrap().starts_with("not trusted"),
        "{info}"
    );
    assert!(of_type(d.seen(), "trust_prompt").is_empty());

    // /trust repo trusts the repo root, replacing the refusal inside it.
    command(&mut d, "/trust repo");
    let status = d.wait_type("status", T);
    assert_eq!(status["message"], format!("trusted {}", ws.display()));
    let list = commands_of(&d.wait_type("command_list", T));
    assert!(list.contains(&"/greet".to_string()), "{list:?}");
    drop(d);

    // Another folder of the repo is covered.
    let mut d = serve_with(&home, &[]);
    let batch = startup(&mut d);
    let list = commands_of(batch.iter().find(|e| e["type"] == "command_list").unwrap());
    assert!(list.contains(&"/greet".to_string()));
    assert!(of_type(&drain(&mut d), "trust_prompt").is_empty());
}

#[test]
fn a_custom_command_expands_its_arguments_and_queues_when_busy() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("first").with_gate("first"));
    server.push(ScriptedResponse::text("reviewed"));
    let home = home_for(&server, "responses");
    home.write_file(
        "commands/review.md",
        "---\ndescription: Review a file\nargument-hint: FILE [FOCUS]\n---\nPlease review $ARGUMENTS carefully.\n",
    );
    let mut d = serve_with(&home, &[]);
    let batch = startup(&mut d);
    let list = batch.iter().find(|e| e["type"] == "command_list").unwrap();
    let review = entry(list, "/review");
    assert_eq!(review["marker"], "custom");
    assert_eq!(review["args"], "FILE [FOCUS]");
    assert_eq!(review["description"], "Review a file");

    d.send(&json!({"op":"user_message","content":"first question"}));
    server.wait_for_requests(1, T);
    command(&mut d, "/review src/lib.rs for bugs");
    let queued = d.wait_type("pending_messages", T);
    let expanded = "Please review src/lib.rs for bugs carefully.";
    assert_eq!(queued["messages"][0]["content"], expanded);
    server.open_gate("first");
    d.collect_until(is_ready, T);
    let events = d.collect_until(is_ready, T);
    assert_eq!(of_type(&events, "user_message")[0]["content"], expanded);
    assert!(server.requests()[1].body["input"]
        .to_string()
        .contains(expanded));
}

#[test]
fn hooks_run_at_each_point_of_a_turn() {
    let server = ScriptedServer::start();
    server.push(
        ScriptedResponse::tool_call("b1", "bash", r#"{"command":"touch blocked-file"}"#)
            .with_tool_call("r1", "read", r#"{"path":"notes.txt"}"#),
    );
    server.push(ScriptedResponse::text("done"));
    let home = home_for(&server, "responses");
    home.write_workspace_file("notes.txt", "alpha\n");
    home.write_file(
        "hooks.toml",
        r#"
[[session_start]]
command = "echo session starting"

[[user_prompt_submit]]
command = '''
read -r payload
case "$payload" in *forbidden*) echo "no forbidden words" >&2; exit 2;; esac
echo "HOOK-CONTEXT: branch main"
'''

[[pre_tool_use]]
matcher = "bash"
command = "cat > pre.json; echo 'no shell today' >&2; exit 2"

[[post_tool_use]]
command = "cat >> post.jsonl"

[[stop]]
command = "cat > stop.json"
"#,
    );
    let mut d = serve_with(&home, &["--approval-mode", "full-access"]);
    startup(&mut d);
    let info = d.wait_type("info", T);
    assert_eq!(info["message"], "session starting");

    // Exit code 2 blocks the prompt: an error, no turn, no request.
    let events = turn(&mut d, "say something forbidden");
    let err = of_type(&events, "error");
    assert_eq!(
        err[0]["message"],
        "prompt blocked by hook: no forbidden words"
    );
    assert!(of_type(&events, "user_message").is_empty());
    assert_eq!(server.request_count(), 0);

    let events = turn(&mut d, "make a file");
    // The event shows the message as sent; the model also got the context.
    assert_eq!(
        of_type(&events, "user_message")[0]["content"],
        "make a file"
    );
    let input = server.requests()[0].body["input"].to_string();
    assert!(input.contains("make a file"), "{input}");
    assert!(input.contains("HOOK-CONTEXT: branch main"), "{input}");

    // pre_tool_use blocked the bash call (only bash matches its matcher).
    let blocked = events
        .iter()
        .find(|e| e["type"] == "tool_output" && e["call_id"] == "b1")
        .unwrap();
    assert_eq!(blocked["is_error"], true);
    assert_eq!(blocked["output"], "blocked by hook: no shell today");
    assert!(!home.workspace().join("blocked-file").exists());
    let pre: Value =
        serde_json::from_str(&wait_for_file(&home.workspace().join("pre.json"))).unwrap();
    assert_eq!(pre["event"], "pre_tool_use");
    assert_eq!(pre["tool_name"], "bash");
    assert_eq!(pre["arguments"]["command"], "touch blocked-file");
    assert_eq!(pre["cwd"], path_arg(&canonical(home.workspace())));
    assert!(pre["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    let second = server.requests()[1].body["input"].to_string();
    assert!(
        second.contains("blocked by hook: no shell today"),
        "{second}"
    );
    let read = events
        .iter()
        .find(|e| e["type"] == "tool_output" && e["call_id"] == "r1")
        .unwrap();
    assert_eq!(read["is_error"], false);

    // post_tool_use saw the read that ran; stop ran at the end of the turn.
    let post = wait_for_file(&home.workspace().join("post.jsonl"));
    let post: Value = serde_json::from_str(post.lines().next().unwrap()).unwrap();
    assert_eq!(post["event"], "post_tool_use");
    assert_eq!(post["tool_name"], "read");
    assert!(post["output"].as_str().unwrap().contains("alpha"));
    assert_eq!(post["is_error"], false);
    let stop: Value =
        serde_json::from_str(&wait_for_file(&home.workspace().join("stop.json"))).unwrap();
    assert_eq!(stop["event"], "stop");
    assert_eq!(stop["failed"], false);
}

#[test]
fn a_hook_past_its_timeout_is_killed() {
    let server = ScriptedServer::start();
    let home = home_for(&server, "responses");
    home.write_file(
        "hooks.toml",
        "[[session_start]]\ncommand = \"sleep 3; touch late-marker\"\ntimeout = 0.5\n\n\
         [[session_start]]\ncommand = \"echo after the slow one\"\n",
    );
    let started = Instant::now();
    let mut d = serve_with(&home, &[]);
    startup(&mut d);
    let info = d.wait_type("info", T);
    let message = info["message"].as_str().unwrap();
    assert!(message.contains("timed out after 0.5 s"), "{message}");
    assert!(
        message.starts_with("session_start hook `sleep 3;"),
        "{message}"
    );
    let info = d.wait_type("info", T);
    assert_eq!(info["message"], "after the slow one");
    assert!(started.elapsed() < Duration::from_secs(3));
    std::thread::sleep(Duration::from_millis(3500));
    assert!(!home.workspace().join("late-marker").exists());
}

/// A SearXNG stand-in on 127.0.0.1: every request gets `body` as JSON.
fn searxng(body: Value) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let body = body.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}")
}

#[test]
fn web_search_is_offered_only_when_configured() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("no search here"));
    server.push(ScriptedResponse::tool_call(
        "s1",
        "web_search",
        r#"{"query":"jucode docs"}"#,
    ));
    server.push(ScriptedResponse::text("found it"));
    let home = home_for(&server, "responses");
    let mut d = serve_with(&home, &[]);
    startup(&mut d);
    turn(&mut d, "hi");
    assert!(!tool_names(&server, 0).contains(&"web_search".to_string()));
    drop(d);

    let search = searxng(json!({"results": [
        {"title": "JuCode Docs", "url": "https://jucode.invalid/docs", "content": "How to use JuCode"}
    ]}));
    home.write_config(&format!(
        "{}\n[web_search]\nprovider = \"searxng\"\nbase_url = \"{search}\"\n",
        mock_config(&server.base_url(), "responses")
    ));
    let mut d = serve_with(&home, &[]);
    startup(&mut d);
    let events = turn(&mut d, "search the docs");
    let names = tool_names(&server, 1);
    assert!(names.contains(&"web_search".to_string()), "{names:?}");
    let output = events
        .iter()
        .find(|e| e["type"] == "tool_output" && e["call_id"] == "s1")
        .unwrap();
    assert_eq!(output["is_error"], false, "{output}");
    let text = output["output"].as_str().unwrap();
    assert!(text.contains("1. JuCode Docs"), "{text}");
    assert!(text.contains("https://jucode.invalid/docs"), "{text}");
    // Read-only: it ran without an approval_request in manual mode.
    assert!(of_type(&events, "approval_request").is_empty());
    drop(d);

    // A bad table is reported and the tool stays off.
    home.write_config(&format!(
        "{}\n[web_search]\nprovider = \"bing\"\n",
        mock_config(&server.base_url(), "responses")
    ));
    let mut d = serve_with(&home, &[]);
    let hello = d.next(T).unwrap();
    assert_eq!(hello["type"], "hello");
    let err = d.wait_type("error", T);
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("unknown provider"),
        "{err}"
    );
}
