//! Reviewing proposed plans: the `approve_plan` op and `/plan`.

use jucode_protocol::{ApprovalMode, ApprovePlanOp, Event, PlanDecision, QueuedMessage};

use crate::actor::Session;

impl Session {
    pub(crate) fn approve_plan(&mut self, op: ApprovePlanOp) {
        let (record, mode) = {
            let plans = self.engine.plans.lock().expect("plans lock");
            let Some(record) = plans.iter().find(|p| p.id == op.id).cloned() else {
                drop(plans);
                self.out
                    .emit(Event::error(format!("unknown plan id: {}", op.id)));
                return;
            };
            (record, op.mode.unwrap_or(ApprovalMode::AutoEdit))
        };
        if record.status == "approved" {
            self.out
                .emit(Event::error(format!("plan {} is already approved", op.id)));
            return;
        }
        let feedback = op
            .feedback
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty());
        let (status, prompt) = match op.decision {
            PlanDecision::Approve => {
                if mode == ApprovalMode::Plan {
                    self.out.emit(Event::error(
                        "approve_plan: the mode to implement in cannot be plan",
                    ));
                    return;
                }
                let mut prompt = format!(
                    "The user approved your plan \"{}\". Implement it now, step by step, and verify the result.\n\n{}",
                    record.title, record.markdown
                );
                if let Some(notes) = feedback {
                    prompt.push_str(&format!("\n\nNotes from the user: {notes}"));
                }
                ("approved", prompt)
            }
            PlanDecision::Revise => {
                let Some(feedback) = feedback else {
                    self.out.emit(Event::error(
                        "approve_plan: revise needs `feedback` saying what to change",
                    ));
                    return;
                };
                (
                    "revising",
                    format!(
                        "The user wants changes to your plan \"{}\": {feedback}\n\nInvestigate as needed and propose a complete revised plan with propose_plan.",
                        record.title
                    ),
                )
            }
        };
        let updated = {
            let mut plans = self.engine.plans.lock().expect("plans lock");
            let plan = plans
                .iter_mut()
                .find(|p| p.id == op.id)
                .expect("found above");
            plan.status = status.to_string();
            plan.clone()
        };
        let event = updated.event();
        self.persist_event(&event);
        self.out.emit(event);
        if op.decision == PlanDecision::Approve {
            self.set_approval_mode(mode);
        }
        self.submit_message(QueuedMessage {
            content: prompt,
            images: Vec::new(),
            files: Vec::new(),
        });
    }

    /// `/plan <id> approve [mode] [notes]` and `/plan <id> revise <feedback>`.
    pub(crate) fn plan_command(&mut self, rest: &str) {
        let mut words = rest.split_whitespace();
        let (Some(id), Some(decision)) = (words.next(), words.next()) else {
            self.out.emit(Event::error(
                "usage: /plan <id> approve [mode] [notes] | /plan <id> revise <feedback>",
            ));
            return;
        };
        let rest: Vec<&str> = words.collect();
        let op = match decision {
            "approve" => {
                let (mode, notes) = match rest.first().map(|m| m.parse::<ApprovalMode>()) {
                    Some(Ok(mode)) => (Some(mode), rest[1..].join(" ")),
                    _ => (None, rest.join(" ")),
                };
                ApprovePlanOp {
                    id: id.to_string(),
                    decision: PlanDecision::Approve,
                    mode,
                    feedback: Some(notes).filter(|n| !n.is_empty()),
                }
            }
            "revise" => ApprovePlanOp {
                id: id.to_string(),
                decision: PlanDecision::Revise,
                mode: None,
                feedback: Some(rest.join(" ")).filter(|n| !n.is_empty()),
            },
            other => {
                self.out.emit(Event::error(format!(
                    "/plan: unknown decision `{other}` (approve or revise)"
                )));
                return;
            }
        };
        self.approve_plan(op);
    }
}
