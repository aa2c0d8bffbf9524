//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use jucode_protocol::ApprovalMode;

#[derive(Debug, Parser)]
#[command(
    name = "jucode",
    version,
    about = "JuCode: a coding-agent engine for front-ends"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    /// One-shot headless run printing the serve event schema (same as `exec --json`).
    #[arg(long, value_name = "PROMPT")]
    pub headless: Option<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags every engine-starting subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Model to use (a catalog id or one from config.toml).
    #[arg(short = 'm', long = "model", global = true)]
    pub model: Option<String>,
    /// Provider to use (openai, anthropic, ollama, or one from config.toml).
    #[arg(long, global = true)]
    pub provider: Option<String>,
    /// Working directory of the session.
    #[arg(short = 'C', long = "cd", global = true)]
    pub cd: Option<PathBuf>,
    /// Override a config key: `-c key=value` (value in TOML syntax).
    #[arg(short = 'c', long = "config", global = true, value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Approval mode: manual, plan, auto-edit, auto or full-access.
    #[arg(long, global = true)]
    pub approval_mode: Option<ApprovalMode>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Protocol v2 over stdin/stdout for GUI and IDE front-ends.
    Serve(ServeArgs),
    /// Run one turn headless and exit (0 on success, 1 when the turn failed).
    Exec(ExecArgs),
    /// Agent Client Protocol (JSON-RPC over stdin/stdout) for ACP editors.
    Acp(AcpArgs),
}

/// `jucode acp` takes only the global flags; the working directory of each
/// session comes from the client's `session/new`.
#[derive(Debug, Clone, Args)]
pub struct AcpArgs {}

#[derive(Debug, Clone, Args)]
pub struct ExecArgs {
    /// Print every event as a JSON line (the serve schema) instead of plain text.
    #[arg(long)]
    pub json: bool,
    /// Continue this session instead of starting a new one.
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// The prompt; `-` reads it from stdin.
    pub prompt: String,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Run a chat session in the profile's chats folder.
    #[arg(long)]
    pub chat: bool,
    /// Print the JSON Schema of every op and event, then exit.
    #[arg(long)]
    pub print_schema: bool,
    /// Resume the session with this id.
    #[arg(long, value_name = "ID", conflicts_with = "continue_latest")]
    pub resume: Option<String>,
    /// Resume the latest session of this working directory.
    #[arg(long = "continue")]
    pub continue_latest: bool,
}
