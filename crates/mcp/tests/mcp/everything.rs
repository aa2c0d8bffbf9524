//! server-everything (legacy era: `server/discover` → -32601, then the
//! `initialize` handshake) over stdio and over loopback Streamable HTTP.

use std::time::{Duration, Instant};

use crate::common::*;
use jucode_mcp::{McpManager, MAX_TOOL_NAME_LEN};
use serde_json::{json, Map};
use tokio::sync::mpsc::unbounded_channel;

/// What every transport must offer: tools with annotations, prompts, calls.
async fn exercise(mcp: &McpManager, name: &str) {
    let tools = mcp.tools();
    let echo = tools
        .iter()
        .find(|t| t.name == "echo")
        .expect("echo listed");
    assert_eq!(echo.server, name);
    assert_eq!(echo.qualified_name, format!("mcp__{name}__echo"));
    assert!(echo.read_only, "echo has readOnlyHint: true");
    assert_eq!(echo.input_schema["type"], "object");
    assert!(echo.input_schema["properties"]["message"].is_object());
    let gzip = tools
        .iter()
        .find(|t| t.name == "gzip-file-as-resource")
        .expect("gzip listed");
    assert!(
        !gzip.read_only,
        "gzip-file-as-resource has readOnlyHint: false"
    );
    let long = tools
        .iter()
        .find(|t| t.name == "trigger-long-running-operation")
        .expect("long-running listed");
    assert!(long.qualified_name.len() <= MAX_TOOL_NAME_LEN);

    let prompts = mcp.prompts();
    let simple = prompts
        .iter()
        .find(|p| p.name == "simple-prompt")
        .expect("simple-prompt listed");
    assert_eq!(simple.command, format!("/mcp__{name}__simple-prompt"));
    assert!(simple.arguments.is_empty());
    let args = prompts
        .iter()
        .find(|p| p.name == "args-prompt")
        .expect("args-prompt listed");
    assert!(
        args.arguments.contains(&("city".to_owned(), true)),
        "{:?}",
        args.arguments
    );
    assert!(
        args.arguments.contains(&("state".to_owned(), false)),
        "{:?}",
        args.arguments
    );

    let result = mcp
        .call_tool(&echo.qualified_name, json!({"message": "hi"}))
        .await;
    assert_eq!(result.output, "Echo: hi");
    assert!(!result.is_error);

    let sum = mcp
        .call_tool(&format!("mcp__{name}__get-sum"), json!({"a": 2, "b": 3}))
        .await;
    assert!(!sum.is_error, "{}", sum.output);
    assert!(sum.output.contains('5'), "{}", sum.output);

    let image = mcp
        .call_tool(&format!("mcp__{name}__get-tiny-image"), json!({}))
        .await;
    assert!(
        image.output.contains("[image: image/png]"),
        "{}",
        image.output
    );

    // Invalid arguments are the tool's (or the server's) error, not a panic.
    let bad = mcp
        .call_tool(&echo.qualified_name, json!({"message": 5}))
        .await;
    assert!(bad.is_error, "{}", bad.output);

    let text = mcp
        .get_prompt(name, "simple-prompt", Map::new())
        .await
        .expect("simple-prompt");
    assert!(!text.is_empty());
    let mut city = Map::new();
    city.insert("city".into(), json!("Paris"));
    let text = mcp
        .get_prompt(name, "args-prompt", city)
        .await
        .expect("args-prompt");
    assert!(text.contains("Paris"), "{text}");
    let missing = mcp
        .get_prompt(name, "no-such-prompt", Map::new())
        .await
        .unwrap_err();
    assert!(missing.contains("no-such-prompt"), "{missing}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_tools_prompts_and_calls() {
    let (tx, mut updates) = unbounded_channel();
    let mcp = McpManager::start(vec![("everything".into(), everything_stdio())], tx);
    assert_eq!(mcp.snapshot()[0].state, "connecting", "start never blocks");
    let state = settled(&mcp, &mut updates, "everything").await;
    assert_eq!(state.state, "connected", "{state:?}");
    assert_eq!(state.transport, "stdio");
    assert!(state.tools.iter().any(|t| t == "echo"));
    assert_eq!(
        mcp.protocol_version("everything").as_deref(),
        Some("2025-11-25")
    );
    exercise(&mcp, "everything").await;

    let unknown = mcp.call_tool("mcp__everything__nope", json!({})).await;
    assert!(
        unknown.is_error && unknown.output.contains("unknown MCP tool"),
        "{}",
        unknown.output
    );
    let not_object = mcp.call_tool("mcp__everything__echo", json!([1])).await;
    assert!(not_object.is_error && not_object.output.contains("JSON object"));
    mcp.shutdown().await;
    assert_eq!(mcp.snapshot()[0].state, "disabled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_tools_prompts_and_calls() {
    let server = HttpEverything::start();
    let (tx, mut updates) = unbounded_channel();
    let config = connecting(&format!(
        "url = {:?}\nheaders = {{ X-Test = \"1\" }}",
        server.url()
    ));
    let mcp = McpManager::start(vec![("web".into(), config)], tx);
    let state = settled(&mcp, &mut updates, "web").await;
    assert_eq!(state.state, "connected", "{state:?}");
    assert_eq!(state.transport, "http");
    exercise(&mcp, "web").await;
    mcp.shutdown().await;
    drop(server);
}

/// Dropping a call future abandons the request at once (rmcp sends
/// `notifications/cancelled`); the connection stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_long_call_returns_promptly() {
    let (tx, mut updates) = unbounded_channel();
    let mcp = McpManager::start(vec![("everything".into(), everything_stdio())], tx);
    assert_eq!(
        settled(&mcp, &mut updates, "everything").await.state,
        "connected"
    );

    let started = Instant::now();
    let call = mcp.call_tool(
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 30, "steps": 5}),
    );
    let outcome = tokio::time::timeout(Duration::from_millis(500), call).await;
    assert!(outcome.is_err(), "a 30 s operation cannot finish in 0.5 s");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "dropping the call returned promptly"
    );

    let started = Instant::now();
    let echo = mcp
        .call_tool("mcp__everything__echo", json!({"message": "still here"}))
        .await;
    assert_eq!(echo.output, "Echo: still here");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(mcp.snapshot()[0].state, "connected");
    mcp.shutdown().await;
}

/// A call that outlives `tool_timeout_sec` is an `is_error` result naming
/// the timeout, and the server stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_timeout_is_an_error_result() {
    let (tx, mut updates) = unbounded_channel();
    let config = connecting(&format!(
        "command = \"node\"\nargs = [{:?}, \"stdio\"]\ntool_timeout_sec = 1",
        everything_js()
    ));
    let mcp = McpManager::start(vec![("slow".into(), config)], tx);
    assert_eq!(settled(&mcp, &mut updates, "slow").await.state, "connected");
    let started = Instant::now();
    let result = mcp
        .call_tool(
            "mcp__slow__trigger-long-running-operation",
            json!({"duration": 30, "steps": 5}),
        )
        .await;
    assert!(result.is_error);
    assert!(
        result.output.contains("timed out after 1 s"),
        "{}",
        result.output
    );
    assert!(started.elapsed() < Duration::from_secs(6));
    let echo = mcp
        .call_tool("mcp__slow__echo", json!({"message": "ok"}))
        .await;
    assert_eq!(echo.output, "Echo: ok");
    mcp.shutdown().await;
}

/// shutdown kills the whole process group, not only the direct child.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_kills_the_process_group() {
    // A marker no other process has: a grandchild `sleep` left running by
    // the shell that then becomes the server.
    let marker = format!("{}.{}", 3000 + std::process::id() % 1000, 7);
    let script = format!("sleep {marker} & exec node {:?} stdio", everything_js());
    let (tx, mut updates) = unbounded_channel();
    let config = connecting(&format!("command = \"sh\"\nargs = [\"-c\", {script:?}]"));
    let mcp = McpManager::start(vec![("tree".into(), config)], tx);
    assert_eq!(settled(&mcp, &mut updates, "tree").await.state, "connected");
    let needle = format!("sleep {marker}");
    assert!(
        process_running(&needle),
        "the grandchild runs while connected"
    );
    mcp.shutdown().await;
    let deadline = Instant::now() + Duration::from_secs(3);
    while process_running(&needle) {
        assert!(Instant::now() < deadline, "`{needle}` survived shutdown");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Legacy push: the server sends `notifications/tools/list_changed` by
/// itself; the manager re-lists and announces the new tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_list_changed_is_followed() {
    everything_js(); // the fixture imports the SDK that server-everything installs
    let script = fixture("list_changes.mjs");
    let (tx, mut updates) = unbounded_channel();
    let mcp = McpManager::start(
        vec![(
            "grow".into(),
            connecting(&format!("command = \"node\"\nargs = [{script:?}]")),
        )],
        tx,
    );
    assert_eq!(settled(&mcp, &mut updates, "grow").await.state, "connected");
    assert_eq!(mcp.protocol_version("grow").as_deref(), Some("2025-11-25"));
    assert!(mcp.tools().iter().all(|t| t.name != "added"));
    let result = mcp.call_tool("mcp__grow__add_tool", json!({})).await;
    assert_eq!(result.output, "ok");
    wait_for(&mcp, &mut updates, Duration::from_secs(10), |s| {
        s[0].tools.iter().any(|t| t == "added")
    })
    .await;
    assert_eq!(
        mcp.call_tool("mcp__grow__added", json!({})).await.output,
        "added!"
    );
    mcp.shutdown().await;
}
