//! Helpers of the MCP tests: the real servers, config tables, and waiting
//! for `mcp_servers` views.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use jucode_testkit::{mock_config, Driver, ScriptedServer, TestHome};
use serde_json::{json, Value};

use crate::common::T;

/// Servers are slow to start on small, busy machines.
pub const SLOW: Duration = Duration::from_secs(90);

pub fn everything_js() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file(),
        "{} is missing: run scripts/deps-mcp (installs the test MCP servers)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// `[mcp_servers.NAME]` for server-everything over stdio; `marker` is an
/// extra argument (ignored by the server) that finds its process.
pub fn everything_table(name: &str, marker: &str) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = \"node\"\nargs = [{:?}, \"stdio\", {marker:?}]\nstartup_timeout_sec = 60\n",
        everything_js()
    )
}

/// A home whose config.toml talks to `server` and has `extra` appended.
pub fn home_with(server: &ScriptedServer, extra: &str) -> TestHome {
    let home = TestHome::new();
    home.write_config(&format!(
        "{}\n{extra}",
        mock_config(&server.base_url(), "responses")
    ));
    home
}

pub fn unique(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("jucode-test-{tag}-{}-{nanos}", std::process::id())
}

pub fn server_of<'a>(event: &'a Value, name: &str) -> Option<&'a Value> {
    event["servers"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)
}

/// Waits for an `mcp_servers` event where `name` is in `state`, unless the
/// latest one seen already says so (a server may fail before the startup
/// batch is written, or two servers settle in one view).
pub fn wait_state(d: &mut Driver, name: &str, state: &str) -> Value {
    let latest = d.seen().iter().rev().find(|v| v["type"] == "mcp_servers");
    if let Some(server) = latest.and_then(|v| server_of(v, name)) {
        if server["state"] == state {
            return server.clone();
        }
    }
    let event = d.wait_for(
        |v| v["type"] == "mcp_servers" && server_of(v, name).is_some_and(|s| s["state"] == state),
        SLOW,
    );
    server_of(&event, name).unwrap().clone()
}

pub fn tool_names(server: &ScriptedServer, n: usize) -> Vec<String> {
    server.requests()[n].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

pub fn tool_result_in(server: &ScriptedServer, request: usize, call_id: &str) -> String {
    let body = &server.requests()[request].body;
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call_output" && i["call_id"] == call_id)
        .unwrap_or_else(|| panic!("no output for {call_id} in {body}"))["output"]
        .as_str()
        .unwrap()
        .to_string()
}

pub fn output_of<'a>(events: &'a [Value], call_id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_output" && e["call_id"] == call_id)
        .unwrap_or_else(|| panic!("no tool_output for {call_id}: {events:?}"))
}

pub fn command(d: &mut Driver, input: &str) {
    d.send(&json!({"op":"command","input":input}));
}

/// Whether a live (not zombie) process has `needle` in its command line.
pub fn process_with(needle: &str) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return false;
    };
    dir.flatten().any(|entry| {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        !zombie && String::from_utf8_lossy(&cmdline).contains(needle)
    })
}

/// Shuts the engine down and waits for it (a dropped driver SIGKILLs it).
pub fn finish(mut d: Driver) {
    d.send(&json!({"op":"shutdown"}));
    assert!(d.wait_exit(T).success());
}

pub fn config_table(home: &TestHome) -> toml::Table {
    std::fs::read_to_string(home.config_path())
        .unwrap()
        .parse()
        .unwrap()
}

/// server-everything in Streamable HTTP mode on a loopback port, killed on
/// drop.
pub struct HttpEverything {
    child: Child,
    pub port: u16,
}

impl HttpEverything {
    pub fn start() -> HttpEverything {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("node")
            .args([everything_js().as_str(), "streamableHttp"])
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn node");
        let server = HttpEverything { child, port };
        let deadline = Instant::now() + SLOW;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill(); // node itself: it starts no children
        let _ = self.child.wait();
    }
}
