//! The event pump of one session: every engine event, in order, becomes
//! `session/update` notifications and state changes; turn ends and engine
//! round trips wake whoever waits for them.

use std::collections::HashMap;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, ContentChunk, CurrentModeUpdate, SessionUpdate, ToolCall, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields,
};
use jucode_engine::Emitted;
use jucode_protocol::Event;
use tokio::sync::mpsc;

use super::mapping;
use super::permissions;
use super::session::{apply, AcpSession, TurnEnd};

/// A tool call between `tool_start` and `tool_output`.
struct OpenCall {
    /// Streamed output so far (bounded to its tail).
    output: String,
}

pub async fn run(session: Arc<AcpSession>, mut events: mpsc::UnboundedReceiver<Emitted>) {
    let mut open: HashMap<String, OpenCall> = HashMap::new();
    while let Some(emitted) = events.recv().await {
        handle(&session, &mut open, emitted.event);
    }
    // The engine stopped: wake the waiters.
    let mut state = session.state.lock().expect("state lock");
    if let Some(turn) = state.turn.take() {
        let _ = turn.done.send(TurnEnd::Closed);
    }
    state.barriers.clear();
}

fn handle(session: &Arc<AcpSession>, open: &mut HashMap<String, OpenCall>, event: Event) {
    {
        let mut state = session.state.lock().expect("state lock");
        if let Event::AgentRuns { .. } = event {
            // The marker of a round trip: everything before it was handled.
            if let Some(barrier) = state.barriers.pop_front() {
                let _ = barrier.done.send(barrier.events);
            }
            return;
        }
        if let Some(barrier) = state.barriers.front_mut() {
            barrier.events.push(event.clone());
        }
    }
    match event {
        Event::AssistantDelta { delta } => session.notify(SessionUpdate::AgentMessageChunk(
            ContentChunk::new(delta.into()),
        )),
        Event::ReasoningDelta { delta } => session.notify(SessionUpdate::AgentThoughtChunk(
            ContentChunk::new(delta.into()),
        )),
        Event::ToolStart { call_id, name } => {
            open.insert(
                call_id.clone(),
                OpenCall {
                    output: String::new(),
                },
            );
            let call = ToolCall::new(call_id, mapping::generic_title(&name))
                .kind(mapping::tool_kind(&name))
                .status(ToolCallStatus::InProgress)
                .name(name);
            session.notify(SessionUpdate::ToolCall(call));
        }
        Event::ToolUpdate {
            call_id, output, ..
        } => {
            let call = open.entry(call_id.clone()).or_insert(OpenCall {
                output: String::new(),
            });
            call.output.push_str(&output);
            if call.output.len() > 2 * mapping::MAX_TOOL_TEXT {
                call.output = mapping::tail(&call.output, mapping::MAX_TOOL_TEXT);
            }
            let text = mapping::tail(&call.output, mapping::MAX_TOOL_TEXT);
            let fields = ToolCallUpdateFields::new().content(vec![mapping::text_content(text)]);
            session.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id, fields,
            )));
        }
        Event::ToolOutput {
            call_id,
            output,
            is_error,
            ..
        } => {
            open.remove(&call_id);
            let status = if is_error {
                ToolCallStatus::Failed
            } else {
                ToolCallStatus::Completed
            };
            let text = mapping::tail(&output, mapping::MAX_TOOL_TEXT);
            let fields = ToolCallUpdateFields::new()
                .status(status)
                .content(vec![mapping::text_content(text)]);
            session.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id, fields,
            )));
        }
        Event::ApprovalRequest {
            call_id,
            name,
            summary,
            hunks,
            ..
        } => permissions::on_request(session, call_id, name, summary, hunks),
        Event::Plan { plan } => session.notify(mapping::plan(&plan)),
        Event::CommandList { ref commands } => {
            let update = mapping::available_commands(commands);
            apply(&mut session.state.lock().expect("state lock"), &event);
            session.notify(update);
        }
        Event::ApprovalMode { mode } => {
            apply(&mut session.state.lock().expect("state lock"), &event);
            session.notify(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                mode.as_str(),
            )));
        }
        Event::ModelStatus { .. } => {
            let update = {
                let mut state = session.state.lock().expect("state lock");
                let changed = apply(&mut state, &event);
                (changed && state.config_calls == 0).then(|| mapping::config_options(&state))
            };
            if let Some(options) = update {
                session.notify(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                    options,
                )));
            }
        }
        Event::ModelView { .. } => {
            apply(&mut session.state.lock().expect("state lock"), &event);
        }
        Event::ContextUsage { tokens, cost, .. } => {
            let window = session.state.lock().expect("state lock").context_window;
            session.notify(mapping::usage(tokens, window, cost));
        }
        Event::Status { message } if message == "ready" => finish(session, None),
        Event::Status { message } if message == "interrupted" => {
            // Calls cut off by the interrupt never report an output.
            for (call_id, _) in open.drain() {
                let fields = ToolCallUpdateFields::new()
                    .status(ToolCallStatus::Failed)
                    .content(vec![mapping::text_content("Cancelled.")]);
                session.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    call_id, fields,
                )));
            }
            finish(session, Some(TurnEnd::Interrupted));
        }
        Event::Error { message } => {
            tracing::warn!("session {}: {message}", session.id);
            if let Some(turn) = session.state.lock().expect("state lock").turn.as_mut() {
                turn.errors.push(message);
            }
        }
        Event::Info { message } => tracing::info!("session {}: {message}", session.id),
        _ => {}
    }
}

/// Ends the waiting turn; `None` means `status: ready`.
fn finish(session: &AcpSession, end: Option<TurnEnd>) {
    let Some(turn) = session.state.lock().expect("state lock").turn.take() else {
        return;
    };
    let end = end.unwrap_or(TurnEnd::Ready {
        errors: turn.errors,
    });
    let _ = turn.done.send(end);
}
