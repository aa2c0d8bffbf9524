//! JuCode's wire types: the ops a front-end sends and the events the engine
//! emits, for protocol version 2. No I/O lives here.

mod events;
mod ops;
mod schema;

pub use events::*;
pub use ops::*;
pub use schema::protocol_schema;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The protocol version announced in `hello`.
pub const PROTOCOL_VERSION: u32 = 2;

/// The approval modes of decisions.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    Manual,
    Plan,
    AutoEdit,
    Auto,
    FullAccess,
}

impl ApprovalMode {
    pub const ALL: [ApprovalMode; 5] = [
        ApprovalMode::Manual,
        ApprovalMode::Plan,
        ApprovalMode::AutoEdit,
        ApprovalMode::Auto,
        ApprovalMode::FullAccess,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Manual => "manual",
            ApprovalMode::Plan => "plan",
            ApprovalMode::AutoEdit => "auto-edit",
            ApprovalMode::Auto => "auto",
            ApprovalMode::FullAccess => "full-access",
        }
    }
}

impl std::str::FromStr for ApprovalMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ApprovalMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!("unknown approval mode `{s}` (expected manual, plan, auto-edit, auto or full-access)")
            })
    }
}

impl std::fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
