//! A real third-party ACP client end to end: the Python SDK
//! `agent-client-protocol` (pinned in requirements-acp.txt, installed by
//! scripts/deps-acp) runs tests/acp_client.py against `jucode acp`.
//!
//! Without the package the test fails under CI (`CI` set) and is skipped,
//! loudly, elsewhere.

use std::path::Path;
use std::process::{Command, Stdio};

use jucode_testkit::{ScriptedResponse, ScriptedServer, TestHome};
use serde_json::{json, Value};

fn sdk_available() -> bool {
    Command::new("python3")
        .args(["-c", "import acp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

#[test]
fn the_python_sdk_client_prompts_streams_and_approves() {
    if !sdk_available() {
        let message = "the Python ACP SDK is missing: run scripts/deps-acp \
                       (python3 -m pip install -r requirements-acp.txt)";
        if std::env::var_os("CI").is_some() {
            panic!("{message}");
        }
        eprintln!("\n!!!!!!!!!! SKIPPED acp_python: {message} !!!!!!!!!!\n");
        return;
    }
    let server = ScriptedServer::start();
    let args = json!({"path": "from_python.txt", "content": "written via ACP\n"}).to_string();
    server.push(ScriptedResponse::tool_call("py1", "write", &args));
    server.push(ScriptedResponse::text("All done from the scripted model"));
    let home = TestHome::with_server(&server, "responses");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp_client.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_jucode"))
        .arg(home.workspace())
        .arg("please write the file")
        .env("JUCODE_HOME", home.path())
        .env("JUCODE_TEST_KEY", "sk-test-secret-key")
        .stderr(Stdio::inherit())
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "client failed: {stdout}");
    let records: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let of =
        |event: &str| -> Vec<&Value> { records.iter().filter(|r| r["event"] == event).collect() };

    let init = &of("initialize")[0]["result"];
    assert_eq!(init["agentInfo"]["name"], "jucode");
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    let session_id = of("new_session")[0]["result"]["sessionId"].clone();
    assert!(session_id.as_str().is_some_and(|s| !s.is_empty()));

    assert_eq!(of("prompt")[0]["result"]["stopReason"], "end_turn");
    let text: String = of("update")
        .iter()
        .filter(|u| u["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["update"]["content"]["text"].as_str())
        .collect();
    assert_eq!(text, "All done from the scripted model");
    assert!(of("update").iter().all(|u| u["sessionId"] == session_id));

    let permissions = of("permission");
    assert_eq!(permissions.len(), 1);
    assert_eq!(permissions[0]["toolCall"]["toolCallId"], "py1");
    assert_eq!(permissions[0]["toolCall"]["kind"], "edit");
    let written = std::fs::read_to_string(home.workspace().join("from_python.txt")).unwrap();
    assert_eq!(written, "written via ACP\n");

    // Every frame the SDK read from the agent was JSON-RPC 2.0.
    let incoming: Vec<&Value> = of("frame")
        .into_iter()
        .filter(|f| f["direction"] == "incoming")
        .collect();
    assert!(!incoming.is_empty());
    for frame in incoming {
        assert_eq!(frame["message"]["jsonrpc"], "2.0", "{frame}");
    }
    assert_eq!(of("exit")[0]["returncode"], 0);
}
