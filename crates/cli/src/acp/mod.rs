//! `jucode acp`: the engine as an Agent Client Protocol (v1) agent.
//!
//! JSON-RPC 2.0 over stdin/stdout, one frame a line; stdout carries frames
//! only (logs go to stderr). Each ACP session owns one engine
//! ([`jucode_engine::start`]) and one event pump that turns the engine's
//! events into `session/update` notifications.
//!
//! ```text
//!  client ──JSON-RPC──▶ agent.rs handlers ──Op──▶ engine (one per session)
//!  client ◀─session/update── session.rs pump ◀─Emitted──┘
//!                          └─▶ permissions.rs: approval_request → session/request_permission
//! ```
//!
//! Handlers run one at a time in the SDK's dispatch loop, so anything that
//! waits (a turn, the engine's answer to a command, a permission request) is
//! moved into `cx.spawn` and answered through its responder.
//!
//! Files: `agent.rs` (the request handlers), `session.rs` (engine start-up,
//! the pump, turn bookkeeping), `mapping.rs` (engine event → ACP payloads),
//! `permissions.rs` (approvals), `prompt.rs` (ACP content → user message),
//! `replay.rs` (session/load and session/list from the store).

mod agent;
mod mapping;
mod permissions;
mod prompt;
mod pump;
mod replay;
mod session;

use agent_client_protocol::{ConnectTo, Stdio};

use crate::args::{AcpArgs, GlobalArgs};

pub fn run(global: &GlobalArgs, _args: &AcpArgs) -> i32 {
    crate::setup::init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime starts");
    let agent = match agent::JucodeAcp::new(global.clone()) {
        Ok(agent) => agent,
        Err(message) => {
            tracing::error!("jucode acp: {message}");
            return 1;
        }
    };
    let result = runtime.block_on(agent.clone().connect_to(Stdio::new()));
    // stdin closed (or the connection failed): stop every engine, then give
    // running tools a moment to be torn down with the runtime.
    agent.shutdown();
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    match result {
        Ok(()) => 0,
        // The client went away while we were still writing (it closed our
        // stdout after its last response): that ends the connection the
        // same way EOF on stdin does, not as a failure.
        Err(err) if format!("{err:?}").contains("Broken pipe") => {
            tracing::debug!("jucode acp: the client closed the connection");
            0
        }
        Err(err) => {
            tracing::error!("jucode acp: connection ended with an error: {err:?}");
            1
        }
    }
}
