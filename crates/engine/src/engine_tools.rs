//! Tools the engine itself implements (as opposed to `jucode-tools`, which
//! touch the machine): `update_plan`, `propose_plan`, and the subagent tools.
//! They are not gated: they change nothing outside the session, and
//! subagents are gated call by call themselves.

use jucode_models::ToolSpec;
use jucode_protocol::ApprovalMode;
use serde_json::{json, Value};

use crate::plan::{self, PlanRecord};
use crate::tool_calls::{Call, ToolRunner};

/// Result text of a `propose_plan` call; the turn ends after it.
pub const PLAN_SUBMITTED: &str =
    "Plan submitted for the user's review. Stop here; the user will approve it or ask for a revision.";

/// The engine's tools offered in `mode`.
pub fn specs(mode: ApprovalMode, chat: bool) -> Vec<ToolSpec> {
    if chat {
        return Vec::new();
    }
    let mut specs = vec![ToolSpec {
        name: "update_plan".into(),
        description: "Keep a short step list of your work up to date for the user. Send the whole list each time; exactly one step should be in_progress while you work.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "explanation": {"type": "string"},
                "plan": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                        },
                        "required": ["step", "status"]
                    }
                }
            },
            "required": ["plan"]
        }),
    }];
    if mode == ApprovalMode::Plan {
        specs.push(ToolSpec {
            name: "propose_plan".into(),
            description: "Plan mode: deliver your finished plan for the user to approve. Give a short title and the complete plan in Markdown (goal, steps, files to change, how to verify). Call it once, when the plan is complete; your turn ends with it.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "markdown": {"type": "string"}
                },
                "required": ["title", "markdown"]
            }),
        });
    }
    specs.extend(crate::agents::specs());
    specs
}

/// Runs `call` if it is an engine tool; `None` means it is not one.
pub async fn run(runner: &ToolRunner, call: &Call) -> Option<(String, bool)> {
    match call.name.as_str() {
        "update_plan" => Some(match plan::steps_event(&call.arguments) {
            Ok(event) => {
                runner.out.emit(event);
                ("Plan updated.".to_string(), false)
            }
            Err(err) => (err, true),
        }),
        "propose_plan" => Some(propose(runner, call)),
        "spawn_agent" | "wait_agent" | "close_agent" => {
            Some(crate::agents::run_tool(runner, call).await)
        }
        _ => None,
    }
}

fn propose(runner: &ToolRunner, call: &Call) -> (String, bool) {
    let now = *runner.state.mode.lock().expect("mode lock");
    if now != ApprovalMode::Plan && runner.mode_at_start != ApprovalMode::Plan {
        return (
            "propose_plan is only available in plan mode.".to_string(),
            true,
        );
    }
    let args: Value = match serde_json::from_str(&call.arguments) {
        Ok(v) => v,
        Err(e) => return (format!("propose_plan: invalid JSON arguments: {e}"), true),
    };
    let field = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default();
    if field("markdown").trim().is_empty() {
        return (
            "propose_plan: `markdown` must hold the plan".to_string(),
            true,
        );
    }
    let id = runner
        .engine
        .plan_ids
        .lock()
        .expect("plan ids lock")
        .remove(&call.call_id)
        .unwrap_or_else(plan::new_plan_id);
    let record = PlanRecord {
        id,
        title: field("title").to_string(),
        markdown: field("markdown").to_string(),
        status: "pending".to_string(),
    };
    let event = record.event();
    runner.engine.plans.lock().expect("plans lock").push(record);
    if let Some(persist) = &runner.persist {
        persist.lock().expect("persist lock").event(&event);
    }
    runner.out.emit(event);
    (PLAN_SUBMITTED.to_string(), false)
}

/// Session state the engine tools use, shared with the actor.
#[derive(Clone)]
pub struct EngineState {
    pub plans: plan::Plans,
    /// propose_plan call id → the plan id its drafts used.
    pub plan_ids: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
    pub agents: crate::agents::Agents,
    pub deferred: crate::deferred::Deferred,
}

impl EngineState {
    pub fn new(out: crate::output::Output) -> EngineState {
        EngineState {
            plans: Default::default(),
            plan_ids: Default::default(),
            agents: crate::agents::Agents::new(out),
            deferred: Default::default(),
        }
    }
}

/// Whether the turn should end after these results: a plan was proposed.
pub fn ends_turn(calls: &[Call], results: &[(String, bool)]) -> bool {
    calls
        .iter()
        .zip(results)
        .any(|(c, (out, err))| c.name == "propose_plan" && !err && out == PLAN_SUBMITTED)
}
