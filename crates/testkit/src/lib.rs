//! Test kit for JuCode: everything an end-to-end test needs to run the real `jucode` binary
//! against a fake model, deterministically and offline.
//!
//! - [`ScriptedServer`]: an HTTP/SSE server on 127.0.0.1 that plays back a FIFO queue of
//!   [`ScriptedResponse`]s in the wire format of the route it is hit on (OpenAI Responses,
//!   Chat Completions, Anthropic Messages), injects transport faults, holds responses behind
//!   gates, and records every request.
//! - [`Driver`]: spawns `jucode`, writes JSON ops to its stdin and reads JSON events from
//!   its stdout with timeouts that fail loudly (full event history + stderr).
//! - [`TestHome`]: a temporary `JUCODE_HOME` with a config pointing at the server, plus a
//!   temporary workspace.
//!
//! Everything is synchronous, so plain `#[test]` functions work:
//!
//! ```no_run
//! use jucode_testkit::*;
//! use serde_json::json;
//!
//! let server = ScriptedServer::start();
//! server.push(ScriptedResponse::tool_call("call_1", "shell", r#"{"cmd":"ls"}"#));
//! server.push(ScriptedResponse::text("All done.").with_usage(1000, 800, 50, 10));
//! let home = TestHome::with_server(&server, "responses");
//! let mut jucode = Driver::new(locate_bin("jucode")).arg("serve").home(&home).spawn();
//! jucode.wait_type("hello", DEFAULT_TIMEOUT);
//! jucode.send(&json!({"op": "user_message", "content": "list files"}));
//! let requests = server.wait_for_requests(2, DEFAULT_TIMEOUT);
//! assert_eq!(requests[0].path, "/v1/responses");
//! ```
//!
//! Generated ids are deterministic: response number N (1-based, counting consumed scripts)
//! gives `resp_N` / `chatcmpl-N` / `msg_N`; Responses items are `rs_N_I`, `msg_N_I`, `fc_N_I`
//! (I = output index) with reasoning `encrypted_content` = `enc:rs_N_I`; Anthropic thinking
//! signatures are `sig:msg_N:I` (I = block index). Tool-call ids are the scripted `call_id`.

mod driver;
mod home;
pub mod render;
mod script;
mod server;

pub use driver::{locate_bin, Driver, DriverBuilder, DEFAULT_TIMEOUT};
pub use home::{mock_config, TestHome, TEST_API_KEY, TEST_API_KEY_ENV, TEST_MODEL};
pub use render::WireFormat;
pub use script::{split_arguments, split_words, Fault, ScriptUsage, ScriptedResponse, Step};
pub use server::{RecordedRequest, ScriptedServer};
