//! Deciding deferred actions (`decide_action`): an allowed call runs in the
//! background with its original arguments; either way the outcome goes to
//! the session as a user message.

use jucode_protocol::{DecideActionOp, Decision, Event, QueuedMessage};

use crate::actor::Session;
use crate::deferred::Action;

/// A deferred call that ran after it was allowed.
pub(crate) struct ActionRan {
    pub action: Action,
    pub output: String,
    pub is_error: bool,
}

impl Session {
    pub(crate) fn decide_action(&mut self, op: DecideActionOp) {
        let allow = op.decision == Decision::Allow;
        let action = match self.engine.deferred.decide(&op.action, allow) {
            Ok(action) => action,
            Err(err) => return self.out.emit(Event::error(err)),
        };
        if !allow {
            self.action_outcome(&action, "deny", None, false);
            return;
        }
        let ctx = jucode_tools::ToolContext::new(self.options.cwd.clone());
        let tx = self.actions_tx.clone();
        let mcp = self.mcp.manager.clone();
        tokio::spawn(async move {
            let (output, is_error) = if crate::mcp_glue::is_mcp_tool(&action.name) {
                crate::mcp_glue::call(&mcp, &action.name, &action.arguments).await
            } else {
                let mut ignore = |_: String| {};
                let result =
                    jucode_tools::run(&action.name, &action.arguments, &ctx, &mut ignore).await;
                (result.output, result.is_error)
            };
            let _ = tx.send(ActionRan {
                action,
                output,
                is_error,
            });
        });
    }

    pub(crate) fn on_action_ran(&mut self, ran: ActionRan) {
        self.action_outcome(&ran.action, "allow", Some(ran.output), ran.is_error);
    }

    fn action_outcome(
        &mut self,
        action: &Action,
        decision: &str,
        output: Option<String>,
        is_error: bool,
    ) {
        let event = Event::ActionDecided {
            id: action.id.clone(),
            decision: decision.to_string(),
            output: output.clone(),
            is_error,
        };
        self.persist_event(&event);
        self.out.emit(event);
        let content = match output {
            Some(output) => format!(
                "[Deferred action {} ({}: {}) was allowed by the user and ran{}. Output:]\n{}",
                action.id,
                action.name,
                action.summary,
                if is_error { ", with an error" } else { "" },
                output
            ),
            None => format!(
                "[Deferred action {} ({}: {}) was declined by the user; it did not run.]",
                action.id, action.name, action.summary
            ),
        };
        self.submit_message(QueuedMessage {
            content,
            images: Vec::new(),
            files: Vec::new(),
        });
    }
}
