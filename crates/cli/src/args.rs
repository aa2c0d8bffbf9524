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
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Run a chat session in the profile's chats folder.
    #[arg(long)]
    pub chat: bool,
    /// Print the JSON Schema of every op and event, then exit.
    #[arg(long)]
    pub print_schema: bool,
}
