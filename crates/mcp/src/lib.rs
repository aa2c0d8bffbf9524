//! JuCode's MCP client: connects the servers of `[mcp_servers.NAME]` and
//! exposes their tools (to the model) and prompts (as slash commands).
//!
//! ```no_run
//! # async fn demo(table: toml::Table) -> Result<(), String> {
//! use jucode_mcp::{McpManager, McpUpdate, ServerConfig};
//! let (tx, mut updates) = tokio::sync::mpsc::unbounded_channel();
//! let mcp = McpManager::start(vec![("everything".into(), ServerConfig::from_table(&table)?)], tx);
//! while let Some(McpUpdate::Changed) = updates.recv().await {
//!     let servers = mcp.snapshot(); // → the `mcp_servers` event
//!     if servers.iter().all(|s| s.state != "connecting") { break; }
//! }
//! let result = mcp.call_tool("mcp__everything__echo", serde_json::json!({"message": "hi"})).await;
//! assert_eq!(result.output, "Echo: hi");
//! mcp.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Built on rmcp, which speaks both protocol eras (the 2025-11-25 handshake
//! and the stateless 2026-07-28 revision) but has no timeouts: every wait on a
//! server here has one. See docs/mcp.md for configuration and behaviour.

mod calls;
mod client;
mod config;
mod errors;
mod manager;
mod naming;
mod output;
mod stderr;
mod transport;
mod watch;

use serde::Serialize;
use serde_json::Value;

pub use config::{table_from_json, ServerConfig, TransportConfig};
pub use manager::McpManager;
pub use naming::{prompt_command, qualified_tool_name, MAX_TOOL_NAME_LEN};
pub use output::MAX_OUTPUT_BYTES;
pub use stderr::STDERR_TAIL_BYTES;

/// Sent on the manager's `updates` channel whenever anything that
/// [`McpManager::snapshot`], [`McpManager::tools`] or [`McpManager::prompts`]
/// shows has changed: a server connected, failed, was added, removed or
/// toggled, or re-listed its tools or prompts. Several changes may be
/// announced by one message or one change by several; read the snapshot
/// when it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpUpdate {
    Changed,
}

/// One server as the `mcp_servers` event shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerState {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// `connecting`, `connected`, `failed` or `disabled`.
    pub state: String,
    /// Tool names as the server lists them (empty unless connected).
    pub tools: Vec<String>,
    /// Why it failed (only for `failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A tool of a connected server, ready to offer to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpTool {
    pub server: String,
    /// The name the server knows it by (used in `tools/call`).
    pub name: String,
    /// The name the model sees: `mcp__SERVER__TOOL` (see
    /// [`qualified_tool_name`]), unique across all servers.
    pub qualified_name: String,
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: Value,
    /// `annotations.readOnlyHint == true`. A hint from the server, to be
    /// trusted only as far as the server is.
    pub read_only: bool,
}

/// A prompt of a connected server, offered as a slash command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpPrompt {
    pub server: String,
    pub name: String,
    /// `/mcp__SERVER__PROMPT` (see [`prompt_command`]).
    pub command: String,
    pub description: String,
    /// `(name, required)` in the server's order; positional arguments of
    /// the slash command map onto these.
    pub arguments: Vec<(String, bool)>,
}

/// The outcome of [`McpManager::call_tool`], as text for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpCallResult {
    /// Text blocks joined by newlines, other blocks as short notes such as
    /// `[image: image/png]`, structured content as JSON when there is no
    /// text; at most [`MAX_OUTPUT_BYTES`], keeping the end.
    pub output: String,
    /// The tool reported an error, or the call itself failed (unknown tool,
    /// server not connected, timeout…; then `output` says so).
    pub is_error: bool,
}

impl McpCallResult {
    fn error(message: String) -> McpCallResult {
        McpCallResult {
            output: message,
            is_error: true,
        }
    }
}
