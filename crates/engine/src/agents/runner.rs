//! Starting a subagent and its own agent loop.

use std::sync::Arc;
use std::time::Instant;

use jucode_models::{stream_response, HistoryItem, StreamEvent};
use jucode_protocol::AgentRun;
use serde_json::Value;
use tokio::sync::watch;

use super::{Agents, Entry, Transcript};
use crate::tool_calls::{Call, ModelCtx, ToolRunner};

const SUBAGENT_NOTE: &str = "\n\nYou are a subagent: another agent gave you the task below. \
Work on it on your own with your tools, then answer with a concise report of what you found \
or did; that answer is all the other agent will see.";

/// Tools a subagent gets: the parent's, without the subagent and plan tools.
fn subagent_tools(ctx: &ModelCtx) -> Vec<jucode_models::ToolSpec> {
    ctx.request
        .tools
        .iter()
        .filter(|t| {
            !matches!(
                t.name.as_str(),
                "spawn_agent" | "wait_agent" | "close_agent" | "propose_plan"
            )
        })
        .cloned()
        .collect()
}

pub fn spawn(agents: &Agents, parent: &ToolRunner, call: &Call, args: &Value) -> (String, bool) {
    let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    let (Some(task_name), Some(prompt)) = (text("task_name"), text("prompt")) else {
        return (
            "spawn_agent: `task_name` and `prompt` are required".into(),
            true,
        );
    };
    let Some(ctx) = parent.model.clone() else {
        return ("spawn_agent is not available here".into(), true);
    };
    let model = text("model").unwrap_or_else(|| ctx.request.model.clone());
    let effort = text("effort").or_else(|| ctx.request.reasoning_effort.clone());
    let id = agents.new_id(&task_name);
    let runner = ToolRunner {
        out: parent.out.clone(),
        ctx: parent.ctx.clone(),
        approvals: parent.approvals.clone(),
        state: parent.state.clone(),
        mode_at_start: parent.mode_at_start,
        subagent_id: Some(id.clone()),
        persist: parent.persist.clone(),
        snapshots: parent.snapshots.clone(),
        engine: parent.engine.clone(),
        model: None,
        emit_tool_events: false,
        hooks: parent.hooks.clone(),
        mcp: parent.mcp.clone(),
    };
    let (done_tx, done) = watch::channel(false);
    let mut transcript = Transcript::default();
    transcript.user(&prompt);
    {
        // Registered under the lock before the task can touch the registry.
        let mut registry = agents.lock();
        let task = tokio::spawn(run_agent(
            agents.clone(),
            id.clone(),
            prompt.clone(),
            ctx,
            model.clone(),
            effort.clone(),
            runner,
        ));
        registry.agents.push(Entry {
            run: AgentRun {
                id: id.clone(),
                label: task_name,
                model,
                effort,
                state: "running".into(),
                started_at: crate::ids::now_ms(),
                duration_ms: 0,
                tokens: 0,
                tool_calls: 0,
                prompt,
                result: None,
                error: None,
                kind: "subagent".into(),
                tool_use_id: Some(call.call_id.clone()),
                activity: Some("Starting".into()),
            },
            started: Instant::now(),
            transcript,
            task: Some(task.abort_handle()),
            done,
            done_tx,
        });
    }
    agents.lifecycle(&id, "started", None);
    (
        format!("Started subagent {id}. Call wait_agent to get its result."),
        false,
    )
}

fn activity_of(call: &Call) -> String {
    let summary = jucode_tools::summary(&call.name, &call.arguments);
    let summary: String = summary.chars().take(60).collect();
    match call.name.as_str() {
        "bash" => format!("Running {summary}"),
        "read" => format!("Reading {summary}"),
        "edit" | "write" => format!("Editing {summary}"),
        "search" | "list" => format!("Searching {summary}"),
        _ => format!("{} {summary}", call.name),
    }
}

async fn run_agent(
    agents: Agents,
    id: String,
    prompt: String,
    ctx: Arc<ModelCtx>,
    model: String,
    effort: Option<String>,
    runner: ToolRunner,
) {
    let endpoint = match &ctx.endpoint {
        Ok(endpoint) => endpoint.clone(),
        Err(problem) => return agents.finish(&id, "errored", None, Some(problem.clone())),
    };
    let mut request = ctx.request.clone();
    request.model = model;
    request.reasoning_effort = effort;
    request.tools = subagent_tools(&ctx);
    request.instructions.push_str(SUBAGENT_NOTE);
    request.cache_key = format!("{}{id}", ctx.request.cache_key);
    let mut history = vec![HistoryItem::User {
        text: prompt,
        images: Vec::new(),
    }];
    loop {
        agents.update(&id, |e| e.run.activity = Some("Thinking".into()));
        agents.touched();
        request.history = history.clone();
        crate::mcp_glue::refresh_tools(&mut request.tools, &runner.mcp);
        let mut ignore = |_: StreamEvent| {};
        let response =
            match stream_response(&ctx.http, &endpoint, &request, &ctx.policy, &mut ignore).await {
                Ok(response) => response,
                Err(err) => return agents.finish(&id, "errored", None, Some(err.to_string())),
            };
        let calls = crate::turn::tool_calls_of(&response.items);
        let mut answer = String::new();
        agents.update(&id, |e| {
            if let Some(u) = &response.usage {
                e.run.tokens += u.input_tokens + u.output_tokens;
            }
            for item in &response.items {
                match item {
                    HistoryItem::Reasoning { text, .. } if !text.is_empty() => {
                        e.transcript.reasoning(text)
                    }
                    HistoryItem::Assistant { text } => {
                        e.transcript.assistant(text);
                        answer.push_str(text);
                    }
                    _ => {}
                }
            }
            for call in &calls {
                e.transcript
                    .tool_started(&call.call_id, &call.name, &call.arguments);
            }
            if let Some(first) = calls.first() {
                e.run.activity = Some(activity_of(first));
            }
        });
        agents.touched();
        history.extend(response.items);
        if calls.is_empty() {
            return agents.finish(&id, "completed", Some(answer), None);
        }
        let (results, _) = runner.run_calls(calls).await;
        agents.update(&id, |e| {
            for result in &results {
                if let HistoryItem::ToolResult {
                    call_id,
                    output,
                    is_error,
                } = result
                {
                    e.transcript.tool_finished(call_id, output, *is_error);
                    e.run.tool_calls += 1;
                }
            }
        });
        history.extend(results);
    }
}
