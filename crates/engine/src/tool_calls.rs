//! Running the tool calls of one model response: gating, approvals (or
//! deferral when nobody is watching), and execution — concurrently, with
//! results returned in call order.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use futures::future::join_all;
use jucode_models::{HistoryItem, ModelRequest, RetryPolicy};
use jucode_protocol::{ApprovalMode, Event, Hunk};
use jucode_tools::ToolContext;

use crate::approval::{self, Gate};
use crate::deferred::Outcome;
use crate::engine_tools::{self, EngineState};
use crate::mcp_glue;
use crate::output::Output;
use crate::pending::{Answer, PendingApprovals};
use crate::persist::SharedPersist;

/// One call as the model made it.
#[derive(Debug, Clone)]
pub struct Call {
    pub call_id: String,
    pub name: String,
    pub arguments: String,
}

/// Session-level approval state a turn reads (and `always` writes).
#[derive(Clone)]
pub struct ApprovalState {
    /// The mode right now; the turn also keeps the mode it started with.
    pub mode: Arc<Mutex<ApprovalMode>>,
    /// Tools the user allowed with `always`.
    pub allowlist: Arc<Mutex<HashSet<String>>>,
}

/// What a subagent needs to make model requests like its parent.
pub struct ModelCtx {
    pub http: reqwest::Client,
    pub endpoint: Result<jucode_models::Endpoint, String>,
    /// The parent's request: model, instructions, tools, effort.
    pub request: ModelRequest,
    pub policy: RetryPolicy,
}

pub struct ToolRunner {
    pub out: Output,
    pub ctx: ToolContext,
    pub approvals: PendingApprovals,
    pub state: ApprovalState,
    pub mode_at_start: ApprovalMode,
    /// Set for a subagent's calls (`approval_request.subagent_id`).
    pub subagent_id: Option<String>,
    pub persist: Option<SharedPersist>,
    pub snapshots: Arc<Mutex<SnapshotState>>,
    pub engine: EngineState,
    /// For `spawn_agent`; `None` inside subagents.
    pub model: Option<Arc<ModelCtx>>,
    /// `tool_start` / `tool_update` / `tool_output` on the wire: the parent's
    /// calls only (a subagent's show in its transcript).
    pub emit_tool_events: bool,
    /// `pre_tool_use` / `post_tool_use` (and the turn's `stop`) hooks.
    pub hooks: crate::project::Hooks,
    /// The session's MCP servers: `mcp__SERVER__TOOL` calls go there.
    pub mcp: jucode_mcp::McpManager,
}

/// Which files the current user turn has already saved the old content of.
#[derive(Default)]
pub struct SnapshotState {
    /// The `user_message` record of the turn.
    turn: Option<String>,
    saved: HashSet<PathBuf>,
}

impl ToolRunner {
    /// A new user message: later file changes belong to its checkpoint.
    pub fn start_turn(&self, record_id: String) {
        let mut state = self.snapshots.lock().expect("snapshot lock");
        state.turn = Some(record_id);
        state.saved.clear();
    }

    /// Saves a file's content before this turn first changes it, so
    /// `/checkout` can restore it. Only `write` and `edit` are tracked:
    /// what a shell command changes cannot be known in advance.
    fn snapshot_before_change(&self, call: &Call) {
        let Some(persist) = &self.persist else {
            return;
        };
        if !matches!(call.name.as_str(), "write" | "edit") {
            return;
        }
        let Some(path) = serde_json::from_str::<serde_json::Value>(&call.arguments)
            .ok()
            .and_then(|v| v.get("path").and_then(|p| p.as_str()).map(str::to_string))
        else {
            return;
        };
        let path = jucode_tools::resolve_path(&self.ctx.cwd, &path);
        let mut state = self.snapshots.lock().expect("snapshot lock");
        let Some(turn) = state.turn.clone() else {
            return;
        };
        if !state.saved.insert(path.clone()) {
            return;
        }
        let content = std::fs::read(&path)
            .ok()
            .map(|bytes| base64::engine::general_purpose::STANDARD.encode(bytes));
        persist
            .lock()
            .expect("persist lock")
            .append(crate::persist::body(
                "file_snapshot",
                serde_json::json!({
                    "path": path.display().to_string(),
                    "content_b64": content,
                    "turn": turn,
                }),
            ));
    }

    fn emit(&self, event: Event) {
        if self.emit_tool_events {
            self.out.emit(event);
        }
    }

    /// Runs every call concurrently; the results come back in call order.
    /// The flag says the turn should end here (a plan was proposed).
    pub async fn run_calls(&self, calls: Vec<Call>) -> (Vec<HistoryItem>, bool) {
        for call in &calls {
            self.emit(Event::ToolStart {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
            });
        }
        let results = join_all(calls.iter().map(|call| self.run_one(call))).await;
        let ends = engine_tools::ends_turn(&calls, &results);
        let items = calls
            .into_iter()
            .zip(results)
            .map(|(call, (output, is_error))| HistoryItem::ToolResult {
                call_id: call.call_id,
                output,
                is_error,
            })
            .collect();
        (items, ends)
    }

    fn gate_for(&self, call: &Call) -> Gate {
        let effect = if mcp_glue::is_mcp_tool(&call.name) {
            mcp_glue::effect(&self.mcp, &call.name)
        } else {
            jucode_tools::classify(&call.name, &call.arguments, &self.ctx.cwd)
        };
        let now = *self.state.mode.lock().expect("mode lock");
        let gate = approval::gate(self.mode_at_start, &effect).looser(approval::gate(now, &effect));
        if gate == Gate::Ask
            && self
                .state
                .allowlist
                .lock()
                .expect("allowlist lock")
                .contains(&call.name)
        {
            return Gate::Run;
        }
        gate
    }

    async fn run_one(&self, call: &Call) -> (String, bool) {
        let (output, is_error) = match engine_tools::run(self, call).await {
            Some(result) => result,
            None => match self.gate_for(call) {
                Gate::Refuse => (approval::PLAN_REFUSAL.to_string(), true),
                Gate::Run => self.execute(call, None).await,
                Gate::Ask => match self.ask(call).await {
                    Answer::Deny => (approval::DENIED.to_string(), true),
                    Answer::Deferred(text) => (text, false),
                    Answer::Allow { always, hunks } => {
                        if always {
                            self.state
                                .allowlist
                                .lock()
                                .expect("allowlist lock")
                                .insert(call.name.clone());
                        }
                        self.execute(call, hunks).await
                    }
                },
            },
        };
        self.emit(Event::ToolOutput {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            output: output.clone(),
            is_error,
        });
        (output, is_error)
    }

    /// One line describing the call for approvals and deferred actions.
    pub fn summary(&self, call: &Call) -> String {
        if mcp_glue::is_mcp_tool(&call.name) {
            mcp_glue::summary(&self.mcp, &call.name, &call.arguments)
        } else {
            jucode_tools::summary(&call.name, &call.arguments)
        }
    }

    /// Unattended: record the call as a deferred action instead of asking.
    pub fn defer(&self, call: &Call) -> Answer {
        let cwd = self.ctx.cwd.display().to_string();
        let outcome = self.engine.deferred.submit(
            &call.call_id,
            &call.name,
            &call.arguments,
            self.summary(call),
            self.subagent_id.clone(),
            &cwd,
        );
        match outcome {
            Outcome::Submitted(action, new) => {
                if new {
                    let event = action.event(&self.out.session());
                    if let Some(persist) = &self.persist {
                        persist.lock().expect("persist lock").event(&event);
                    }
                    self.out.emit(event);
                }
                Answer::Deferred(format!(
                    "Submitted for confirmation as deferred action {}: nobody is watching this session, \
                     so the user will decide later. The call has not run; carry on with what does not depend on it.",
                    action.id
                ))
            }
            Outcome::AllowedBefore => Answer::Allow {
                always: false,
                hunks: None,
            },
            Outcome::DeniedBefore => Answer::Deny,
        }
    }

    /// Emits `approval_request` and waits for the answer — or, while the
    /// session is unattended, defers the call. A request dropped without an
    /// answer (interrupt) counts as a denial.
    async fn ask(&self, call: &Call) -> Answer {
        if !self.engine.deferred.attended() {
            return self.defer(call);
        }
        let hunks = if matches!(call.name.as_str(), "edit" | "write") {
            jucode_tools::edit_hunks(&call.name, &call.arguments, &self.ctx.cwd).ok()
        } else {
            None
        };
        let hunks: Option<Vec<Hunk>> = hunks.map(|hs| {
            hs.into_iter()
                .map(|h| Hunk {
                    id: h.id,
                    file: h.file,
                    header: h.header,
                    lines: h.lines,
                })
                .collect()
        });
        let ids = hunks
            .as_ref()
            .map(|hs| hs.iter().map(|h| h.id.clone()).collect());
        let reply = self.approvals.register(&call.call_id, ids);
        self.out.emit(Event::ApprovalRequest {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            summary: self.summary(call),
            subagent_id: self.subagent_id.clone(),
            hunks,
        });
        match reply.await {
            Ok(Answer::Deferred(_)) => self.defer(call),
            Ok(answer) => answer,
            Err(_) => Answer::Deny,
        }
    }

    async fn execute(&self, call: &Call, hunks: Option<Vec<String>>) -> (String, bool) {
        if let Some(blocked) = self.hooks.pre_tool_use(&self.out, call).await {
            return (blocked, true); // a pre_tool_use hook exited with 2
        }
        self.snapshot_before_change(call);
        let result = match hunks {
            None if mcp_glue::is_mcp_tool(&call.name) => {
                let (output, is_error) =
                    mcp_glue::call(&self.mcp, &call.name, &call.arguments).await;
                jucode_tools::ToolOutput { output, is_error }
            }
            Some(keep) => {
                jucode_tools::run_with_hunks(&call.name, &call.arguments, &self.ctx, &keep).await
            }
            None => {
                let out = self.out.clone();
                let emit = self.emit_tool_events;
                let (call_id, name) = (call.call_id.clone(), call.name.clone());
                let mut on_update = move |output: String| {
                    if emit {
                        out.emit(Event::ToolUpdate {
                            call_id: call_id.clone(),
                            name: name.clone(),
                            output,
                        })
                    }
                };
                jucode_tools::run(&call.name, &call.arguments, &self.ctx, &mut on_update).await
            }
        };
        self.hooks
            .post_tool_use(&self.out, call, &result.output, result.is_error);
        (result.output, result.is_error)
    }
}
