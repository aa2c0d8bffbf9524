//! Failures at startup and runtime changes: set, remove, toggle.

use std::time::{Duration, Instant};

use crate::common::*;
use jucode_mcp::McpManager;
use serde_json::json;
use tokio::sync::mpsc::unbounded_channel;

/// A server that never answers fails within its startup timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_server_times_out() {
    let (tx, mut updates) = unbounded_channel();
    let silent = config("command = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_sec = 1");
    let started = Instant::now();
    let mcp = McpManager::start(vec![("silent".into(), silent)], tx);
    let state = settled(&mcp, &mut updates, "silent").await;
    assert_eq!(state.state, "failed");
    let error = state.error.expect("an error message");
    assert!(error.contains("timed out after 1 s"), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(mcp.tools().is_empty());
    mcp.shutdown().await;
}

/// A missing binary fails at once with the spawn error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_binary_fails_with_the_spawn_error() {
    let (tx, mut updates) = unbounded_channel();
    let missing = config("command = \"jucode-no-such-binary-xyz\"");
    let mcp = McpManager::start(vec![("missing".into(), missing)], tx);
    let state = settled(&mcp, &mut updates, "missing").await;
    assert_eq!(state.state, "failed");
    let error = state.error.expect("an error message");
    assert!(error.contains("jucode-no-such-binary-xyz"), "{error}");
    assert!(error.contains("No such file"), "{error}");
    let call = mcp.call_tool("mcp__missing__anything", json!({})).await;
    assert!(call.is_error);
    assert!(call.output.contains("not connected"), "{}", call.output);
    mcp.shutdown().await;
}

/// A server that exits during the handshake fails with what it printed on
/// stderr.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashing_server_reports_its_stderr() {
    let (tx, mut updates) = unbounded_channel();
    let crash = config("command = \"sh\"\nargs = [\"-c\", \"echo 'API key missing' >&2; exit 3\"]");
    let mcp = McpManager::start(vec![("crash".into(), crash)], tx);
    let state = settled(&mcp, &mut updates, "crash").await;
    assert_eq!(state.state, "failed");
    assert!(
        state
            .error
            .as_deref()
            .unwrap_or("")
            .contains("API key missing"),
        "{state:?}"
    );
    mcp.shutdown().await;
}

/// Nothing listening on the port: `failed`, saying the connection failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_connection_refused_fails() {
    let (tx, mut updates) = unbounded_channel();
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let mcp = McpManager::start(vec![("down".into(), config(&format!("url = {url:?}")))], tx);
    let state = settled(&mcp, &mut updates, "down").await;
    assert_eq!(state.state, "failed");
    let error = state.error.expect("an error message");
    assert!(
        !error.contains("timed out"),
        "fails fast, not by timeout: {error}"
    );
    assert!(error.to_lowercase().contains("connect"), "{error}");
    mcp.shutdown().await;
}

/// A stdio server that dies after connecting turns `failed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_exit_after_connect_is_noticed() {
    let marker = format!("{}.{}", 4000 + std::process::id() % 1000, 3);
    // A fuse in the background kills the server (the shell exec'd into
    // node, so `$$` is node) when its `sleep` ends; the test lights it.
    let script = format!(
        "(sleep {marker}; echo 'fuse blown' >&2; kill $$) & exec node {:?} stdio",
        everything_js()
    );
    let (tx, mut updates) = unbounded_channel();
    let fuse = connecting(&format!("command = \"sh\"\nargs = [\"-c\", {script:?}]"));
    let mcp = McpManager::start(vec![("fuse".into(), fuse)], tx);
    assert_eq!(settled(&mcp, &mut updates, "fuse").await.state, "connected");
    // 4000+ seconds is no fuse at all: end the sleep to light it.
    let fuse_pids = pids_of(&format!("sleep {marker}"));
    assert_eq!(fuse_pids.len(), 1, "the fuse sleep is running");
    // SAFETY: signals the one `sleep` this test's server started.
    unsafe {
        libc::kill(fuse_pids[0], libc::SIGTERM);
    }
    let snapshot = wait_for(&mcp, &mut updates, Duration::from_secs(10), |s| {
        s[0].state == "failed"
    })
    .await;
    let error = snapshot[0].error.clone().unwrap_or_default();
    assert!(error.contains("closed the connection"), "{error}");
    assert!(error.contains("fuse blown"), "{error}");
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_remove_and_toggle() {
    let (tx, mut updates) = unbounded_channel();
    let disabled = connecting(&format!(
        "command = \"node\"\nargs = [{:?}, \"stdio\"]\nenabled = false",
        everything_js()
    ));
    let mcp = McpManager::start(
        vec![("a".into(), everything_stdio()), ("b".into(), disabled)],
        tx,
    );
    let names: Vec<_> = mcp
        .snapshot()
        .into_iter()
        .map(|s| (s.name, s.state))
        .collect();
    assert_eq!(
        names,
        [
            ("a".into(), "connecting".into()),
            ("b".into(), "disabled".into())
        ]
    );
    assert_eq!(settled(&mcp, &mut updates, "a").await.state, "connected");

    // Enable b: it connects.
    assert!(mcp.toggle_server("b", true));
    assert_eq!(state_of(&mcp.snapshot(), "b").state, "connecting");
    assert_eq!(settled(&mcp, &mut updates, "b").await.state, "connected");
    assert!(mcp
        .tools()
        .iter()
        .any(|t| t.qualified_name == "mcp__b__echo"));

    // Disable a: at once disabled, its tools gone, an update sent.
    drain(&mut updates);
    assert!(mcp.toggle_server("a", false));
    assert_eq!(state_of(&mcp.snapshot(), "a").state, "disabled");
    assert!(drain(&mut updates) >= 1, "toggle announced");
    assert!(mcp.tools().iter().all(|t| t.server != "a"));
    let call = mcp.call_tool("mcp__a__echo", json!({"message": "x"})).await;
    assert!(
        call.is_error && call.output.contains("not connected"),
        "{}",
        call.output
    );

    // Replace b with a broken config: it fails; replace again: it connects.
    assert!(!mcp.toggle_server("nope", true));
    mcp.set_server("b", config("command = \"jucode-no-such-binary-xyz\""));
    assert_eq!(state_of(&mcp.snapshot(), "b").state, "connecting");
    assert_eq!(settled(&mcp, &mut updates, "b").await.state, "failed");
    mcp.set_server("b", everything_stdio());
    assert_eq!(settled(&mcp, &mut updates, "b").await.state, "connected");

    // Add c (a new name goes last), then remove it.
    mcp.set_server(
        "c",
        config("command = \"sleep\"\nargs = [\"30\"]\nstartup_timeout_sec = 5"),
    );
    let order: Vec<_> = mcp.snapshot().into_iter().map(|s| s.name).collect();
    assert_eq!(order, ["a", "b", "c"]);
    drain(&mut updates);
    assert!(mcp.remove_server("c"), "removing while it connects");
    assert!(drain(&mut updates) >= 1, "remove announced");
    assert!(!mcp.remove_server("c"));
    assert_eq!(mcp.snapshot().len(), 2);

    // Re-enable a.
    assert!(mcp.toggle_server("a", true));
    assert_eq!(settled(&mcp, &mut updates, "a").await.state, "connected");
    assert_eq!(
        mcp.call_tool("mcp__a__echo", json!({"message": "back"}))
            .await
            .output,
        "Echo: back"
    );
    mcp.shutdown().await;
    assert!(mcp.snapshot().iter().all(|s| s.state == "disabled"));
}
