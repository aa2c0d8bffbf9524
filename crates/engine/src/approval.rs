//! Approval policy: the table of decisions.md, as code.
//!
//! | mode        | runs without asking                         | asks                         | refused |
//! |-------------|---------------------------------------------|------------------------------|---------|
//! | manual      | read-only tools, read-only shell            | everything else              | —       |
//! | plan        | read-only tools, read-only shell, subagents | —                            | all else|
//! | auto-edit   | + edits inside the workspace                | other shell, outside edits   | —       |
//! | auto        | + shell inside the workspace                | outside writes, dangerous    | —       |
//! | full-access | everything                                  | —                            | —       |
//!
//! An MCP tool counts as read-only when the server marks it `readOnlyHint`;
//! any other MCP tool asks in every mode but full-access (where it runs) and
//! plan mode (where it is refused).

use jucode_protocol::ApprovalMode;
use jucode_tools::Effect;

/// What to do with one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    Run,
    Ask,
    /// Plan mode: the call is refused and the model told to plan instead.
    Refuse,
}

impl Gate {
    fn rank(&self) -> u8 {
        match self {
            Gate::Refuse => 0,
            Gate::Ask => 1,
            Gate::Run => 2,
        }
    }

    /// The looser of two gates: an in-flight turn's gating may only loosen.
    pub fn looser(self, other: Gate) -> Gate {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }
}

/// The gate for a call with `effect` under `mode`.
pub fn gate(mode: ApprovalMode, effect: &Effect) -> Gate {
    let read_only = matches!(
        effect,
        Effect::ReadOnly
            | Effect::Network
            | Effect::Mcp { read_only: true }
            | Effect::Shell {
                read_only: true,
                ..
            }
    );
    match mode {
        ApprovalMode::FullAccess => Gate::Run,
        ApprovalMode::Plan if read_only => Gate::Run,
        ApprovalMode::Plan => Gate::Refuse,
        _ if read_only => Gate::Run,
        ApprovalMode::Manual => Gate::Ask,
        ApprovalMode::AutoEdit => match effect {
            Effect::Edit {
                inside_workspace: true,
                ..
            } => Gate::Run,
            _ => Gate::Ask,
        },
        ApprovalMode::Auto => match effect {
            Effect::Edit {
                inside_workspace: true,
                ..
            } => Gate::Run,
            Effect::Shell {
                dangerous: false,
                inside_workspace: true,
                ..
            } => Gate::Run,
            _ => Gate::Ask,
        },
    }
}

/// The result the model gets for a call refused in plan mode.
pub const PLAN_REFUSAL: &str = "Refused: the session is in plan mode, where only read-only tools run. \
Do not try to change anything; investigate with read-only tools and deliver your plan with propose_plan.";

/// The result the model gets for a denied call.
pub const DENIED: &str = "Denied by the user: the call was not run. Do not retry it as is; \
ask the user or take another approach.";

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn edit(inside: bool) -> Effect {
        Effect::Edit {
            paths: vec![PathBuf::from("x")],
            inside_workspace: inside,
        }
    }
    fn shell(read_only: bool, dangerous: bool, inside: bool) -> Effect {
        Effect::Shell {
            read_only,
            dangerous,
            inside_workspace: inside,
        }
    }

    #[test]
    fn the_decisions_table() {
        use ApprovalMode::*;
        use Gate::*;
        let cases = [
            (Manual, Effect::ReadOnly, Run),
            (Manual, shell(true, false, true), Run),
            (Manual, edit(true), Ask),
            (Manual, shell(false, false, true), Ask),
            (Plan, Effect::ReadOnly, Run),
            (Plan, shell(true, false, true), Run),
            (Plan, edit(true), Refuse),
            (Plan, shell(false, false, true), Refuse),
            (AutoEdit, edit(true), Run),
            (AutoEdit, edit(false), Ask),
            (AutoEdit, shell(false, false, true), Ask),
            (Auto, edit(true), Run),
            (Auto, edit(false), Ask),
            (Auto, shell(false, false, true), Run),
            (Auto, shell(false, true, true), Ask),
            (Auto, shell(false, false, false), Ask),
            (Auto, Effect::Unknown, Ask),
            (FullAccess, shell(false, true, false), Run),
            (FullAccess, Effect::Unknown, Run),
        ];
        for (mode, effect, want) in cases {
            assert_eq!(gate(mode, &effect), want, "{mode:?} {effect:?}");
        }
    }

    #[test]
    fn mcp_tools_follow_their_read_only_hint() {
        use ApprovalMode::*;
        use Gate::*;
        let read_only = || Effect::Mcp { read_only: true };
        let other = || Effect::Mcp { read_only: false };
        let cases = [
            (Manual, read_only(), Run),
            (Manual, other(), Ask),
            (Plan, read_only(), Run),
            (Plan, other(), Refuse),
            (AutoEdit, read_only(), Run),
            (AutoEdit, other(), Ask),
            (Auto, read_only(), Run),
            (Auto, other(), Ask),
            (FullAccess, read_only(), Run),
            (FullAccess, other(), Run),
        ];
        for (mode, effect, want) in cases {
            assert_eq!(gate(mode, &effect), want, "{mode:?} {effect:?}");
        }
    }

    #[test]
    fn looser_only_loosens() {
        assert_eq!(Gate::Ask.looser(Gate::Run), Gate::Run);
        assert_eq!(Gate::Run.looser(Gate::Ask), Gate::Run);
        assert_eq!(Gate::Refuse.looser(Gate::Ask), Gate::Ask);
    }
}
