//! Running the tool calls of one model response: gating, approvals, and
//! execution, concurrently, with results returned in call order.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use futures::future::join_all;
use jucode_models::HistoryItem;
use jucode_protocol::{ApprovalMode, Event, Hunk};
use jucode_tools::ToolContext;

use crate::approval::{self, Gate};
use crate::output::Output;
use crate::pending::{Answer, PendingApprovals};

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

pub struct ToolRunner {
    pub out: Output,
    pub ctx: ToolContext,
    pub approvals: PendingApprovals,
    pub state: ApprovalState,
    pub mode_at_start: ApprovalMode,
    pub subagent_id: Option<String>,
}

impl ToolRunner {
    /// Runs every call concurrently; the results come back in call order.
    pub async fn run_calls(&self, calls: Vec<Call>) -> Vec<HistoryItem> {
        for call in &calls {
            self.out.emit(Event::ToolStart {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
            });
        }
        let results = join_all(calls.iter().map(|call| self.run_one(call))).await;
        calls
            .into_iter()
            .zip(results)
            .map(|(call, (output, is_error))| HistoryItem::ToolResult {
                call_id: call.call_id,
                output,
                is_error,
            })
            .collect()
    }

    fn gate_for(&self, call: &Call) -> Gate {
        let effect = jucode_tools::classify(&call.name, &call.arguments, &self.ctx.cwd);
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
        let (output, is_error) = match self.gate_for(call) {
            Gate::Refuse => (approval::PLAN_REFUSAL.to_string(), true),
            Gate::Run => self.execute(call, None).await,
            Gate::Ask => match self.ask(call).await {
                Answer::Deny => (approval::DENIED.to_string(), true),
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
        };
        self.out.emit(Event::ToolOutput {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            output: output.clone(),
            is_error,
        });
        (output, is_error)
    }

    /// Emits `approval_request` and waits for the answer. A request dropped
    /// without an answer (interrupt) counts as a denial; the worker is being
    /// aborted then anyway.
    async fn ask(&self, call: &Call) -> Answer {
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
            summary: jucode_tools::summary(&call.name, &call.arguments),
            subagent_id: self.subagent_id.clone(),
            hunks,
        });
        reply.await.unwrap_or(Answer::Deny)
    }

    async fn execute(&self, call: &Call, hunks: Option<Vec<String>>) -> (String, bool) {
        let result = match hunks {
            Some(keep) => {
                jucode_tools::run_with_hunks(&call.name, &call.arguments, &self.ctx, &keep).await
            }
            None => {
                let out = self.out.clone();
                let (call_id, name) = (call.call_id.clone(), call.name.clone());
                let mut on_update = move |output: String| {
                    out.emit(Event::ToolUpdate {
                        call_id: call_id.clone(),
                        name: name.clone(),
                        output,
                    })
                };
                jucode_tools::run(&call.name, &call.arguments, &self.ctx, &mut on_update).await
            }
        };
        (result.output, result.is_error)
    }
}
