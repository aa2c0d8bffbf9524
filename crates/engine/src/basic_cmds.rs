//! `/model` and `/approve`, and the `approve` op they share.

use jucode_protocol::{ApprovalMode, Event};

use crate::actor::Session;

impl Session {
    pub(crate) fn model_command(&mut self, args: &[&str]) {
        match args {
            [] => self.out.emit(self.models.view_event()),
            [name] | [name, _] => {
                let effort = args.get(1).copied();
                match self.models.switch(name, effort) {
                    Ok(()) => self.emit_model_status(),
                    Err(err) => self.out.emit(Event::error(err)),
                }
            }
            _ => self
                .out
                .emit(Event::error("usage: /model [NAME] [EFFORT]".to_string())),
        }
    }

    pub(crate) fn approve_command(&mut self, args: &[&str]) {
        match args {
            [mode] => match mode.parse::<ApprovalMode>() {
                Ok(mode) => self.set_approval_mode(mode),
                Err(err) => self.out.emit(Event::error(err)),
            },
            [call_id, decision, rest @ ..] => {
                let decision = match *decision {
                    "allow" => jucode_protocol::Decision::Allow,
                    "deny" => jucode_protocol::Decision::Deny,
                    other => {
                        self.out.emit(Event::error(format!(
                            "unknown decision `{other}` (expected allow or deny)"
                        )));
                        return;
                    }
                };
                let always = rest.first() == Some(&"always");
                self.approve(jucode_protocol::ApproveOp {
                    call_id: call_id.to_string(),
                    decision,
                    always,
                    hunks: None,
                });
            }
            _ => self.out.emit(Event::error(
                "usage: /approve MODE, or /approve CALL_ID allow|deny [always]".to_string(),
            )),
        }
    }

    pub(crate) fn approve(&mut self, op: jucode_protocol::ApproveOp) {
        if let Err(err) = self.approvals.answer(op) {
            self.out.emit(Event::error(err));
        }
    }
}
