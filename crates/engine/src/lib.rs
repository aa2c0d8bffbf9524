//! The JuCode engine: one session actor per engine that takes ops and emits
//! events. Front-ends (serve, exec, acp) are thin adapters over the two
//! channels returned by [`start`]; they never reach inside.
//!
//! ```text
//!  front-end ──Input──▶ SessionActor ──Emitted──▶ front-end writer
//!                         │    ▲
//!                 spawns  ▼    │ TurnFinished
//!                        TurnWorker ──Emitted (deltas, direct)──▶
//! ```
//! Turn workers send their streaming events straight to the output channel
//! (no hop through the actor, so a delta costs one channel send) and report
//! to the actor only when the turn ends.

mod actions;
mod actor;
mod agents;
mod approval;
mod attachments;
mod basic_cmds;
mod commands;
mod compaction;
mod deferred;
mod engine_tools;
mod goal;
mod ids;
mod mcp_commands;
mod mcp_glue;
mod mcp_ops;
mod model_state;
mod options;
mod output;
mod pending;
mod persist;
mod plan;
mod plan_ops;
mod project;
mod prompt;
mod replay;
mod resume_load;
mod session_cmds;
mod tool_calls;
mod turn;
mod turn_end;
mod web_search;

use std::sync::Arc;

use jucode_protocol::{Op, OpError};
use tokio::sync::mpsc;

pub use options::{EngineOptions, Resume};
pub use output::Emitted;
pub use project::{is_trusted, project_trust};

/// One line of front-end input, already parsed (or rejected) by the adapter.
pub type Input = Result<Op, OpError>;

/// The channels of a running engine.
pub struct EngineHandle {
    /// Ops in. Dropping the sender (stdin EOF) shuts the engine down.
    pub input: mpsc::UnboundedSender<Input>,
    /// Events out, each with the session id it belongs to. The channel closes
    /// when the engine has stopped and everything it emitted was delivered.
    pub events: mpsc::UnboundedReceiver<Emitted>,
    /// Resolves once the engine stopped; says whether it stopped cleanly.
    pub done: tokio::task::JoinHandle<()>,
}

/// Starts an engine on the current tokio runtime. The startup batch is the
/// first thing it emits.
pub fn start(options: EngineOptions) -> EngineHandle {
    let (input_tx, input_rx) = mpsc::unbounded_channel();
    let (event_tx, event_rx) = mpsc::unbounded_channel();
    let out = output::Output::new(event_tx);
    let done = tokio::spawn(actor::run(Arc::new(options), input_rx, out));
    EngineHandle {
        input: input_tx,
        events: event_rx,
        done,
    }
}
