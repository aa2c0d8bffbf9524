//! jucode-tools: the built-in tools a JuCode agent can call.
//!
//! The tool and argument names are a public contract with the models
//! (`bash`, `read`, `write`, `edit`, `list`, `search`, `web_fetch`, and
//! `web_search` when a backend is configured). Every
//! entry point takes the raw JSON text the model wrote, so that argument
//! mistakes become tool errors the model can read and fix, never panics.
//!
//! Besides running tools, the crate answers the questions an approval UI asks
//! before running one: what kind of effect it has ([`classify`]), a one-line
//! description ([`summary`]) and, for file edits, the hunks it would apply
//! ([`edit_hunks`], [`run_with_hunks`]).

mod args;
mod bash;
mod classify;
mod defs;
mod fs_tools;
mod hunks;
mod output;
mod paths;
mod rules;
mod search;
mod shell;
mod web;
mod web_search;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use classify::{classify, summary};
pub use defs::{builtin_defs, tool_defs};
pub use hunks::{edit_hunks, run_with_hunks};
pub use web_search::{WebSearchBackend, WebSearchConfig};

/// Which tools a session offers to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolSet {
    /// All built-in tools: shell, file access, search and web.
    Coding,
    /// Conversation only: the model may fetch web pages but not touch the machine.
    Chat,
}

/// A tool as advertised to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDef {
    pub name: &'static str,
    pub description: String,
    /// JSON Schema (an `object` schema) of the arguments.
    pub parameters: serde_json::Value,
}

/// Where and with which limits tools run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolContext {
    /// The workspace root; relative paths resolve against it.
    pub cwd: PathBuf,
    /// `bash` timeout when the model gives none.
    pub bash_timeout_default: Duration,
    /// Cap on the text a tool returns to the model.
    pub max_output_bytes: usize,
    /// The `web_search` backend; `None` when none is configured.
    pub web_search: Option<std::sync::Arc<WebSearchConfig>>,
}

impl ToolContext {
    /// A context rooted at `cwd` with the default limits (120 s, 30 000 bytes).
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        ToolContext {
            cwd: cwd.into(),
            bash_timeout_default: Duration::from_secs(120),
            max_output_bytes: 30_000,
            web_search: None,
        }
    }

    /// The same context with a `web_search` backend (or none).
    pub fn with_web_search(mut self, web_search: Option<std::sync::Arc<WebSearchConfig>>) -> Self {
        self.web_search = web_search;
        self
    }
}

/// What a tool call returned, as the model will see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutput {
    pub output: String,
    pub is_error: bool,
}

impl ToolOutput {
    pub fn ok(output: impl Into<String>) -> Self {
        ToolOutput {
            output: output.into(),
            is_error: false,
        }
    }

    pub fn error(output: impl Into<String>) -> Self {
        ToolOutput {
            output: output.into(),
            is_error: true,
        }
    }
}

/// What a call would do, for approval decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Only reads files (read, list, search).
    ReadOnly,
    /// Writes the given files (absolute, normalized paths).
    Edit {
        paths: Vec<PathBuf>,
        inside_workspace: bool,
    },
    /// Runs a shell command line.
    Shell {
        /// Every command in the line is on the read-only list and nothing
        /// writes through a redirection.
        read_only: bool,
        /// Matches a known destructive pattern (rm -rf /, sudo, curl | sh ...).
        dangerous: bool,
        /// No path argument or `cd` leaves the workspace.
        inside_workspace: bool,
    },
    /// Fetches a URL or searches the web (web_fetch, web_search); approval
    /// treats it as read-only.
    Network,
    /// A tool of an MCP server (`mcp__SERVER__TOOL`); `read_only` is the
    /// tool's `annotations.readOnlyHint`. [`classify`] never returns it: the
    /// engine, which knows the connected servers, does.
    Mcp { read_only: bool },
    /// Unknown tool or arguments that do not parse.
    Unknown,
}

/// A hunk a file-changing call would apply, for per-hunk approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hunk {
    /// `h0`, `h1`, ... in file order; unique within one call.
    pub id: String,
    /// The file as the model named it (relative to cwd when inside it).
    pub file: String,
    /// Unified diff header, e.g. `@@ -3,2 +3,2 @@`.
    pub header: String,
    /// Diff lines without line terminators: `" ctx"`, `"-old"`, `"+new"`.
    pub lines: Vec<String>,
}

/// Runs a built-in tool.
///
/// `args` is the JSON text the model wrote. Every failure (bad JSON, missing
/// file, ambiguous edit, ...) comes back as an `is_error` output whose text
/// tells the model what went wrong. `on_update` receives streamed output
/// (only `bash` streams).
///
/// Dropping the returned future cancels the call; for `bash` this kills the
/// command's whole process group.
pub async fn run(
    name: &str,
    args: &str,
    ctx: &ToolContext,
    on_update: &mut (dyn FnMut(String) + Send),
) -> ToolOutput {
    match name {
        "bash" => match args::parse::<args::BashArgs>(name, args) {
            Ok(a) => bash::run(&a, ctx, on_update).await,
            Err(e) => ToolOutput::error(e),
        },
        "read" => match args::parse::<args::ReadArgs>(name, args) {
            Ok(a) => fs_tools::read(a, ctx).await,
            Err(e) => ToolOutput::error(e),
        },
        "write" | "edit" => fs_tools::apply(name, args, ctx).await,
        "list" => match args::parse::<args::ListArgs>(name, args) {
            Ok(a) => search::list(a, ctx).await,
            Err(e) => ToolOutput::error(e),
        },
        "search" => match args::parse::<args::SearchArgs>(name, args) {
            Ok(a) => search::search(a, ctx).await,
            Err(e) => ToolOutput::error(e),
        },
        "web_fetch" => match args::parse::<args::WebFetchArgs>(name, args) {
            Ok(a) => web::fetch(&a, ctx).await,
            Err(e) => ToolOutput::error(e),
        },
        "web_search" => match args::parse::<args::WebSearchArgs>(name, args) {
            Ok(a) => web_search::search(&a.query, ctx).await,
            Err(e) => ToolOutput::error(e),
        },
        other => ToolOutput::error(format!(
            "unknown tool `{other}`; available tools: bash, read, write, edit, list, search, web_fetch"
        )),
    }
}

/// Resolves `path` against `cwd` and normalizes it, without touching the disk.
/// Exposed so that callers (approval UIs, the engine) resolve exactly like the tools.
pub fn resolve_path(cwd: &Path, path: &str) -> PathBuf {
    paths::resolve(cwd, path)
}
