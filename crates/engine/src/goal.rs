//! `/goal`: an objective with an optional token budget, kept up to date as
//! the session works.

use std::time::Instant;

use jucode_models::Usage;
use jucode_protocol::{Event, GoalState};

use crate::actor::Session;

pub(crate) struct Goal {
    pub state: GoalState,
    started: Instant,
}

impl Goal {
    fn refresh(&mut self) {
        self.state.time_used_seconds = self.started.elapsed().as_secs();
        self.state.updated_at = crate::ids::now_ms();
        if let Some(budget) = self.state.token_budget {
            if self.state.status == "active" && self.state.tokens_used >= budget {
                self.state.status = "exhausted".into();
            }
        }
    }
}

impl Session {
    fn emit_goal(&self) {
        self.out.emit(Event::Goal {
            goal: self.goal.as_ref().map(|g| g.state.clone()),
        });
    }

    /// The goal, for the system prompt.
    pub(crate) fn goal_prompt(&self) -> Option<String> {
        let goal = self.goal.as_ref()?;
        (goal.state.status == "active").then(|| {
            format!(
                "\n\nThe user's current goal for this session: {}\nWork toward it; say when it is reached.",
                goal.state.objective
            )
        })
    }

    /// After a turn: count its tokens and time against the goal.
    pub(crate) fn goal_after_turn(&mut self, usage: Option<&Usage>) {
        let Some(goal) = self.goal.as_mut() else {
            return;
        };
        if goal.state.status != "active" {
            return;
        }
        if let Some(u) = usage {
            goal.state.tokens_used += u.input_tokens + u.output_tokens;
        }
        goal.refresh();
        self.emit_goal();
    }

    /// `/goal`, `/goal <objective> [--budget N]`, `/goal done`, `/goal clear`.
    pub(crate) fn goal_command(&mut self, rest: &str) {
        match rest {
            "" => {
                if let Some(goal) = self.goal.as_mut() {
                    goal.refresh();
                }
                self.emit_goal();
            }
            "clear" => {
                self.goal = None;
                self.emit_goal();
            }
            "done" => match self.goal.as_mut() {
                Some(goal) => {
                    goal.state.status = "done".into();
                    goal.refresh();
                    self.emit_goal();
                }
                None => self.out.emit(Event::error("/goal done: there is no goal")),
            },
            _ => {
                let (objective, budget) = match rest.split_once("--budget") {
                    Some((objective, budget)) => match budget.trim().replace('_', "").parse() {
                        Ok(n) => (objective.trim(), Some(n)),
                        Err(_) => {
                            self.out.emit(Event::error(format!(
                                "/goal: --budget needs a number of tokens, got `{}`",
                                budget.trim()
                            )));
                            return;
                        }
                    },
                    None => (rest.trim(), None),
                };
                if objective.is_empty() {
                    self.out
                        .emit(Event::error("usage: /goal <objective> [--budget TOKENS]"));
                    return;
                }
                let now = crate::ids::now_ms();
                self.goal = Some(Goal {
                    state: GoalState {
                        objective: objective.to_string(),
                        status: "active".into(),
                        token_budget: budget,
                        tokens_used: 0,
                        time_used_seconds: 0,
                        created_at: now,
                        updated_at: now,
                    },
                    started: Instant::now(),
                });
                self.emit_goal();
            }
        }
    }
}
