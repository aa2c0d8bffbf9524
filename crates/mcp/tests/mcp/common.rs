//! Shared helpers for the tests against real MCP servers.
//!
//! The servers are installed by `scripts/deps-mcp` (CI runs it). A missing
//! server fails the test with that hint instead of skipping it: a skipped
//! test would hide that the suite no longer covers anything.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use jucode_mcp::{McpManager, McpUpdate, ServerConfig, ServerState};
use tokio::sync::mpsc::UnboundedReceiver;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `node_modules/@modelcontextprotocol/server-everything/dist/index.js`.
pub fn everything_js() -> String {
    let path =
        repo_root().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.is_file(),
        "{} is missing: run scripts/deps-mcp (installs the test MCP servers)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// A file of `crates/mcp/tests/fixtures`, as a string for a config.
pub fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Checks that `mcp-server-time` is importable by `python3`.
pub fn require_time_server() {
    let ok = Command::new("python3")
        .args(["-c", "import mcp_server_time"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "python3 cannot import mcp_server_time: run scripts/deps-mcp (installs the test MCP servers)");
}

/// Parses a server table written as TOML.
pub fn config(toml_text: &str) -> ServerConfig {
    ServerConfig::from_table(&toml_text.parse::<toml::Table>().expect("valid TOML"))
        .expect("valid config")
}

/// Startup limit for servers that are expected to connect: generous, since
/// CI machines are small and busy (the default is 10 s).
pub const SLOW_START: &str = "startup_timeout_sec = 60";

/// [`config`] plus [`SLOW_START`], for servers expected to connect.
pub fn connecting(toml_text: &str) -> ServerConfig {
    config(&format!("{toml_text}\n{SLOW_START}"))
}

/// server-everything over stdio.
pub fn everything_stdio() -> ServerConfig {
    connecting(&format!(
        "command = \"node\"\nargs = [{:?}, \"stdio\"]",
        everything_js()
    ))
}

/// Waits (on the updates channel, never by polling) until the snapshot
/// satisfies `done`, and returns it. Panics with the last snapshot after
/// `limit`.
pub async fn wait_for(
    mcp: &McpManager,
    updates: &mut UnboundedReceiver<McpUpdate>,
    limit: Duration,
    done: impl Fn(&[ServerState]) -> bool,
) -> Vec<ServerState> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let snapshot = mcp.snapshot();
        if done(&snapshot) {
            return snapshot;
        }
        match tokio::time::timeout_at(deadline, updates.recv()).await {
            Ok(Some(McpUpdate::Changed)) => {}
            Ok(None) => panic!("updates channel closed; last snapshot: {snapshot:#?}"),
            Err(_) => panic!("timed out after {limit:?}; last snapshot: {snapshot:#?}"),
        }
    }
}

/// The state of `name` in a snapshot.
pub fn state_of<'a>(snapshot: &'a [ServerState], name: &str) -> &'a ServerState {
    snapshot
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no server {name} in {snapshot:#?}"))
}

/// Waits until `name` is no longer connecting; returns its state.
pub async fn settled(
    mcp: &McpManager,
    updates: &mut UnboundedReceiver<McpUpdate>,
    name: &str,
) -> ServerState {
    let snapshot = wait_for(mcp, updates, Duration::from_secs(90), |s| {
        s.iter().any(|s| s.name == name && s.state != "connecting")
    })
    .await;
    state_of(&snapshot, name).clone()
}

/// Drains updates that are already queued; returns how many there were.
pub fn drain(updates: &mut UnboundedReceiver<McpUpdate>) -> usize {
    let mut n = 0;
    while updates.try_recv().is_ok() {
        n += 1;
    }
    n
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// server-everything in Streamable HTTP mode on a loopback port; killed
/// (its whole process group) on drop.
pub struct HttpEverything {
    child: Child,
    pub port: u16,
}

impl HttpEverything {
    pub fn start() -> HttpEverything {
        use std::os::unix::process::CommandExt;
        let js = everything_js();
        let port = free_port();
        let child = Command::new("node")
            .args([js.as_str(), "streamableHttp"])
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn node");
        let server = HttpEverything { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        // SAFETY: signals the process group this test created.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// Pids of live processes whose command line is exactly `cmdline` (args
/// joined by spaces).
pub fn pids_of(cmdline: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let raw = std::fs::read(entry.path().join("cmdline")).ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // Zombies (state Z) are dead already, only not yet reaped.
            let zombie = stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'));
            let text = String::from_utf8_lossy(&raw)
                .trim_end_matches('\0')
                .replace('\0', " ");
            (!zombie && text == cmdline).then_some(pid)
        })
        .collect()
}

pub fn process_running(cmdline: &str) -> bool {
    !pids_of(cmdline).is_empty()
}
