//! mcp-server-time (Python SDK 2.3.0): speaks the stateless 2026-07-28
//! revision, so Auto mode negotiates it through `server/discover`.

use std::time::Duration;

use crate::common::*;
use jucode_mcp::McpManager;
use serde_json::json;
use tokio::sync::mpsc::unbounded_channel;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_server_negotiates_the_modern_era() {
    require_time_server();
    let (tx, mut updates) = unbounded_channel();
    let time = connecting("command = \"python3\"\nargs = [\"-m\", \"mcp_server_time\", \"--local-timezone\", \"UTC\"]");
    let mcp = McpManager::start(vec![("time".into(), time)], tx);
    let state = settled(&mcp, &mut updates, "time").await;
    assert_eq!(state.state, "connected", "{state:?}");
    assert_eq!(mcp.protocol_version("time").as_deref(), Some("2026-07-28"));
    let tools = mcp.tools();
    let now = tools
        .iter()
        .find(|t| t.name == "get_current_time")
        .expect("get_current_time listed");
    assert!(now.read_only, "get_current_time is read-only");
    assert_eq!(now.qualified_name, "mcp__time__get_current_time");

    let result = mcp
        .call_tool(&now.qualified_name, json!({"timezone": "UTC"}))
        .await;
    assert!(!result.is_error, "{}", result.output);
    assert!(result.output.contains("UTC"), "{}", result.output);
    assert!(result.output.contains("datetime"), "{}", result.output);

    let bad = mcp
        .call_tool(&now.qualified_name, json!({"timezone": "Not/AZone"}))
        .await;
    assert!(bad.is_error, "{}", bad.output);
    mcp.shutdown().await;
}

/// Modern servers push nothing unasked: list changes arrive through the
/// `subscriptions/listen` the manager holds open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_list_changed_arrives_through_listen() {
    require_time_server();
    let script = fixture("list_changes.py");
    let (tx, mut updates) = unbounded_channel();
    let mcp = McpManager::start(
        vec![(
            "grow".into(),
            connecting(&format!("command = \"python3\"\nargs = [{script:?}]")),
        )],
        tx,
    );
    assert_eq!(settled(&mcp, &mut updates, "grow").await.state, "connected");
    assert_eq!(mcp.protocol_version("grow").as_deref(), Some("2026-07-28"));
    assert!(mcp.tools().iter().all(|t| t.name != "added"));
    let result = mcp.call_tool("mcp__grow__add_tool", json!({})).await;
    assert!(result.output.contains("ok"), "{}", result.output);
    wait_for(&mcp, &mut updates, Duration::from_secs(10), |s| {
        s[0].tools.iter().any(|t| t == "added")
    })
    .await;
    assert!(mcp
        .call_tool("mcp__grow__added", json!({}))
        .await
        .output
        .contains("added!"));

    let mut args = serde_json::Map::new();
    args.insert("name".into(), json!("Ada"));
    assert_eq!(
        mcp.get_prompt("grow", "greet", args).await.as_deref(),
        Ok("Hello, Ada!")
    );
    let missing = mcp
        .get_prompt("grow", "greet", serde_json::Map::new())
        .await
        .unwrap_err();
    assert!(
        missing.contains("missing required argument `name`"),
        "{missing}"
    );
    mcp.shutdown().await;
}
