//! What an engine is started with: the loaded config plus the global flags.

use std::path::PathBuf;

use jucode_config::LoadedConfig;
use jucode_protocol::ApprovalMode;

#[derive(Debug, Clone)]
pub struct EngineOptions {
    pub config: LoadedConfig,
    /// The session's working directory (absolute).
    pub cwd: PathBuf,
    /// `-m/--model`.
    pub model: Option<String>,
    /// `--provider`.
    pub provider: Option<String>,
    /// `--approval-mode`.
    pub approval_mode: Option<ApprovalMode>,
    /// `serve --chat`, or a cwd inside the profile's chats folder.
    pub chat: bool,
    /// Continue an existing session instead of starting a new one.
    pub resume: Option<Resume>,
}

/// Which session to continue at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resume {
    /// `--resume ID`.
    Id(String),
    /// `--continue`: the latest session of this cwd (a new one if none).
    Latest,
}
