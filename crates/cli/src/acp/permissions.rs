//! `approval_request` → `session/request_permission` → `approve` op.
//!
//! | option          | engine answer                                        |
//! |-----------------|------------------------------------------------------|
//! | `allow_once`    | allow                                                |
//! | `allow_always`  | allow, `always` (the engine stops asking for the tool) |
//! | `reject_once`   | deny                                                 |
//! | `reject_always` | deny, and the adapter denies that tool for the rest of the session without asking |
//! | cancelled / error | deny                                               |
//!
//! Each request races against the prompt's cancel token: on `session/cancel`
//! the request is dropped (the SDK then sends `$/cancel_request`) and no
//! answer goes to the engine, whose interrupt already dropped the call.

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionUpdate, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use jucode_protocol::{ApproveOp, Decision, Hunk, Op};

use super::mapping;
use super::session::AcpSession;

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";
const REJECT_ALWAYS: &str = "reject_always";

fn options(name: &str) -> Vec<PermissionOption> {
    vec![
        PermissionOption::new(ALLOW_ONCE, "Allow", PermissionOptionKind::AllowOnce),
        PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow {name}"),
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce),
        PermissionOption::new(
            REJECT_ALWAYS,
            format!("Always reject {name}"),
            PermissionOptionKind::RejectAlways,
        ),
    ]
}

fn approve(call_id: &str, decision: Decision, always: bool) -> Op {
    Op::Approve(ApproveOp {
        call_id: call_id.to_string(),
        decision,
        always,
        hunks: None,
    })
}

/// Handles one `approval_request` (called by the pump; never waits).
pub fn on_request(
    session: &Arc<AcpSession>,
    call_id: String,
    name: String,
    summary: String,
    hunks: Option<Vec<Hunk>>,
) {
    let content = hunks
        .as_deref()
        .map(|h| mapping::hunk_diffs(h, &session.cwd))
        .unwrap_or_default();
    let fields = ToolCallUpdateFields::new()
        .title(mapping::title_from_summary(&name, &summary))
        .kind(mapping::tool_kind(&name))
        .status(ToolCallStatus::Pending)
        .content(content)
        .locations(mapping::locations(
            &name,
            &summary,
            hunks.as_deref(),
            &session.cwd,
        ));
    // The call's title, diff and paths, whatever the answer will be.
    session.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        call_id.clone(),
        fields.clone(),
    )));
    let (denied, token) = {
        let state = session.state.lock().expect("state lock");
        let token = state
            .turn
            .as_ref()
            .map(|t| t.cancel.clone())
            .unwrap_or_default();
        (state.deny_always.contains(&name), token)
    };
    if denied {
        session.send(approve(&call_id, Decision::Deny, false));
        return;
    }
    let request = RequestPermissionRequest::new(
        session.id.clone(),
        ToolCallUpdate::new(call_id.clone(), fields),
        options(&name),
    );
    let task_session = session.clone();
    let task_call_id = call_id.clone();
    let spawned = session.cx.spawn(async move {
        let (session, call_id) = (task_session, task_call_id);
        let sent = session.cx.send_request(request);
        let outcome = tokio::select! {
            biased;
            // Dropping the request's future sends `$/cancel_request`.
            _ = token.cancelled() => return Ok(()),
            outcome = sent.block_task() => outcome,
        };
        let choice = match outcome {
            Ok(response) => match response.outcome {
                RequestPermissionOutcome::Selected(selected) => selected.option_id.0.to_string(),
                _ => REJECT_ONCE.to_string(),
            },
            Err(err) => {
                tracing::warn!("session/request_permission failed ({err:?}); denying {call_id}");
                REJECT_ONCE.to_string()
            }
        };
        if token.is_cancelled() {
            return Ok(());
        }
        let op = match choice.as_str() {
            ALLOW_ONCE => approve(&call_id, Decision::Allow, false),
            ALLOW_ALWAYS => approve(&call_id, Decision::Allow, true),
            REJECT_ALWAYS => {
                session
                    .state
                    .lock()
                    .expect("state lock")
                    .deny_always
                    .insert(name);
                approve(&call_id, Decision::Deny, false)
            }
            _ => approve(&call_id, Decision::Deny, false),
        };
        if matches!(&op, Op::Approve(a) if a.decision == Decision::Allow) {
            let fields = ToolCallUpdateFields::new().status(ToolCallStatus::InProgress);
            session.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id.clone(),
                fields,
            )));
        }
        session.send(op);
        Ok(())
    });
    if let Err(err) = spawned {
        tracing::warn!("cannot ask for permission ({err:?}); denying");
        session.send(approve(&call_id, Decision::Deny, false));
    }
}
