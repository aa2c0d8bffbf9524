//! Engine vocabulary → ACP payloads: tool kinds and titles, diffs from
//! approval hunks, bounded output, plans, commands, modes, config options.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, Cost, Diff, Plan, PlanEntry,
    PlanEntryPriority, PlanEntryStatus, SessionConfigOption, SessionConfigOptionCategory,
    SessionConfigSelectOption, SessionMode, SessionModeState, SessionUpdate, ToolCallContent,
    ToolCallLocation, ToolKind, UnstructuredCommandInput, UsageUpdate,
};
use jucode_protocol::{ApprovalMode, CommandInfo, Event, Hunk, PlanStep};

use super::session::State;

/// Config option ids.
pub const MODEL_OPTION: &str = "model";
pub const EFFORT_OPTION: &str = "reasoning_effort";

/// Tool output sent to the client is cut to its last this-many bytes.
pub const MAX_TOOL_TEXT: usize = 8 * 1024;

pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "read" => ToolKind::Read,
        "write" | "edit" => ToolKind::Edit,
        "list" | "search" => ToolKind::Search,
        "bash" => ToolKind::Execute,
        "web_fetch" => ToolKind::Fetch,
        "propose_plan" => ToolKind::SwitchMode,
        "update_plan" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// The title of a call before its arguments are known (`tool_start` only
/// carries the name).
pub fn generic_title(name: &str) -> String {
    match name {
        "bash" => "Run a command",
        "read" => "Read a file",
        "write" => "Write a file",
        "edit" => "Edit a file",
        "list" => "List files",
        "search" => "Search",
        "web_fetch" => "Fetch a URL",
        "propose_plan" => "Propose a plan",
        "update_plan" => "Update the plan",
        other => other,
    }
    .to_string()
}

/// A title from the engine's one-line summary of the call
/// (`jucode_tools::summary`): `Run: cargo test`, `Edit src/x.rs`, ...
pub fn title_from_summary(name: &str, summary: &str) -> String {
    match name {
        "bash" => format!("Run: {summary}"),
        "write" | "read" | "edit" => match summary_path(name, summary) {
            Some(path) => format!("{} {path}", capitalized(name)),
            None => capitalized(summary),
        },
        "web_fetch" => match summary.strip_prefix("fetch ") {
            Some(url) => format!("Fetch {url}"),
            None => capitalized(summary),
        },
        _ => capitalized(summary),
    }
}

/// The path a read/write/edit summary names.
pub fn summary_path(name: &str, summary: &str) -> Option<String> {
    let rest = summary.strip_prefix(name)?.strip_prefix(' ')?;
    let path = match (name, rest.rfind(" (")) {
        ("write", Some(at)) if rest.ends_with(" bytes)") => &rest[..at],
        _ => rest,
    };
    (!path.is_empty()).then(|| path.to_string())
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn absolute(cwd: &Path, path: &str) -> PathBuf {
    jucode_tools::resolve_path(cwd, path)
}

/// Where a call acts: the files of its hunks, else the path its summary names.
pub fn locations(
    name: &str,
    summary: &str,
    hunks: Option<&[Hunk]>,
    cwd: &Path,
) -> Vec<ToolCallLocation> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for hunk in hunks.unwrap_or_default() {
        let path = absolute(cwd, &hunk.file);
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    if paths.is_empty() {
        if let Some(path) = summary_path(name, summary) {
            paths.push(absolute(cwd, &path));
        }
    }
    paths.into_iter().map(ToolCallLocation::new).collect()
}

/// One `diff` per hunk: the old text is its context and removed lines, the
/// new text its context and added lines; a hunk that starts at `-0,0`
/// creates the file (no old text).
pub fn hunk_diffs(hunks: &[Hunk], cwd: &Path) -> Vec<ToolCallContent> {
    hunks
        .iter()
        .map(|hunk| {
            let mut old = String::new();
            let mut new = String::new();
            for line in &hunk.lines {
                let (mark, text) = line.split_at(line.chars().next().map_or(0, char::len_utf8));
                match mark {
                    " " | "" => {
                        old.push_str(text);
                        old.push('\n');
                        new.push_str(text);
                        new.push('\n');
                    }
                    "-" => {
                        old.push_str(text);
                        old.push('\n');
                    }
                    "+" => {
                        new.push_str(text);
                        new.push('\n');
                    }
                    _ => {} // "\ No newline at end of file"
                }
            }
            let creates = hunk.header.starts_with("@@ -0,0 ");
            let diff = Diff::new(absolute(cwd, &hunk.file), new);
            ToolCallContent::Diff(if creates { diff } else { diff.old_text(old) })
        })
        .collect()
}

/// Plain text as tool call content.
pub fn text_content(text: impl Into<String>) -> ToolCallContent {
    ToolCallContent::from(text.into())
}

/// The last `max` bytes of `text` (on a char boundary), marked when cut.
pub fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("…(earlier output cut)\n{}", &text[start..])
}

pub fn plan(steps: &[PlanStep]) -> SessionUpdate {
    let entries = steps
        .iter()
        .map(|step| {
            let status = match step.status.as_str() {
                "in_progress" => PlanEntryStatus::InProgress,
                "completed" => PlanEntryStatus::Completed,
                _ => PlanEntryStatus::Pending,
            };
            PlanEntry::new(step.step.clone(), PlanEntryPriority::Medium, status)
        })
        .collect();
    SessionUpdate::Plan(Plan::new(entries))
}

pub fn usage(tokens: u64, window: u64, cost: f64) -> SessionUpdate {
    SessionUpdate::UsageUpdate(UsageUpdate::new(tokens, window).cost(Cost::new(cost, "USD")))
}

/// Slash commands as ACP advertises them: without the slash, and without
/// `/quit` and `/exit` (the client ends sessions).
pub fn available_commands(commands: &[CommandInfo]) -> SessionUpdate {
    let list = commands
        .iter()
        .filter(|c| !matches!(c.command.as_str(), "/quit" | "/exit"))
        .map(|c| {
            let name = c.command.trim_start_matches('/');
            let command = AvailableCommand::new(name, c.description.clone());
            if c.args.is_empty() {
                command
            } else {
                command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(c.args.clone()),
                ))
            }
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(list))
}

const MODES: &[(ApprovalMode, &str, &str)] = &[
    (
        ApprovalMode::Manual,
        "Manual",
        "Ask before edits and before commands that are not read-only",
    ),
    (
        ApprovalMode::Plan,
        "Plan",
        "Read-only: investigate and plan; edits and commands are refused",
    ),
    (
        ApprovalMode::AutoEdit,
        "Auto-edit",
        "Edit files in the workspace without asking; ask before commands",
    ),
    (
        ApprovalMode::Auto,
        "Auto",
        "Edit and run commands in the workspace without asking; ask before risky ones",
    ),
    (
        ApprovalMode::FullAccess,
        "Full access",
        "Run everything without asking",
    ),
];

/// The approval modes as ACP session modes.
pub fn modes(current: ApprovalMode) -> SessionModeState {
    let available = MODES
        .iter()
        .map(|(mode, name, description)| {
            SessionMode::new(mode.as_str(), *name).description(description.to_string())
        })
        .collect();
    SessionModeState::new(current.as_str(), available)
}

/// `model` (a select over the catalog) and, when the model has efforts,
/// `reasoning_effort`.
pub fn config_options(state: &State) -> Vec<SessionConfigOption> {
    let mut models: Vec<SessionConfigSelectOption> = state
        .models
        .iter()
        .map(|m| SessionConfigSelectOption::new(m.model.clone(), m.model.clone()))
        .collect();
    if !state.models.iter().any(|m| m.model == state.model) {
        models.push(SessionConfigSelectOption::new(
            state.model.clone(),
            state.model.clone(),
        ));
    }
    let mut options =
        vec![
            SessionConfigOption::select(MODEL_OPTION, "Model", state.model.clone(), models)
                .category(SessionConfigOptionCategory::Model),
        ];
    if !state.efforts.is_empty() {
        let current = state
            .effort
            .clone()
            .unwrap_or_else(|| state.efforts[0].clone());
        let efforts: Vec<SessionConfigSelectOption> = state
            .efforts
            .iter()
            .map(|e| SessionConfigSelectOption::new(e.clone(), e.clone()))
            .collect();
        options.push(
            SessionConfigOption::select(EFFORT_OPTION, "Reasoning effort", current, efforts)
                .category(SessionConfigOptionCategory::ThoughtLevel),
        );
    }
    options
}

/// What a slash command answered, as text for an agent message.
pub fn render_command_answer(events: &[Event]) -> String {
    let mut out: Vec<String> = Vec::new();
    for event in events {
        match event {
            Event::Info { message } => out.push(message.clone()),
            Event::Error { message } => out.push(format!("Error: {message}")),
            Event::ModelStatus {
                model,
                reasoning_effort,
                ..
            } => out.push(match reasoning_effort {
                Some(effort) => format!("Model: {model} (reasoning effort {effort})"),
                None => format!("Model: {model}"),
            }),
            Event::ModelView {
                models,
                active_effort,
            } => {
                let mut lines = vec!["Models:".to_string()];
                for m in models {
                    let mark = if m.active { "* " } else { "  " };
                    let mut line = format!("{mark}{} ({} tokens)", m.model, m.context_window);
                    if !m.reasoning_efforts.is_empty() {
                        line.push_str(&format!(" efforts: {}", m.reasoning_efforts.join(", ")));
                    }
                    lines.push(line);
                }
                if let Some(effort) = active_effort {
                    lines.push(format!("Reasoning effort: {effort}"));
                }
                out.push(lines.join("\n"));
            }
            Event::ApprovalMode { mode } => out.push(format!("Approval mode: {}", mode.as_str())),
            _ => {}
        }
    }
    out.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_and_paths_come_from_summaries() {
        assert_eq!(title_from_summary("bash", "cargo test"), "Run: cargo test");
        assert_eq!(
            title_from_summary("write", "write src/x.rs (12 bytes)"),
            "Write src/x.rs"
        );
        assert_eq!(title_from_summary("edit", "edit a b.rs"), "Edit a b.rs");
        assert_eq!(
            title_from_summary("web_fetch", "fetch https://x"),
            "Fetch https://x"
        );
        assert_eq!(
            title_from_summary("search", "search /x/ in ."),
            "Search /x/ in ."
        );
        assert_eq!(
            summary_path("read", "read notes.txt").as_deref(),
            Some("notes.txt")
        );
        assert_eq!(summary_path("bash", "ls"), None);
    }

    #[test]
    fn diffs_are_rebuilt_from_hunk_lines() {
        let hunk = Hunk {
            id: "h0".into(),
            file: "a.txt".into(),
            header: "@@ -1,2 +1,2 @@".into(),
            lines: vec![" keep".into(), "-old".into(), "+new".into()],
        };
        let content = hunk_diffs(&[hunk], Path::new("/ws"));
        let ToolCallContent::Diff(diff) = &content[0] else {
            panic!("not a diff")
        };
        assert_eq!(diff.path, PathBuf::from("/ws/a.txt"));
        assert_eq!(diff.old_text.as_deref(), Some("keep\nold\n"));
        assert_eq!(diff.new_text, "keep\nnew\n");
    }

    #[test]
    fn tail_keeps_the_end_on_a_char_boundary() {
        assert_eq!(tail("short", 10), "short");
        let cut = tail("ééééé", 3);
        assert!(cut.ends_with("é"));
        assert!(cut.starts_with("…"));
    }

    #[test]
    fn kinds_follow_the_tool_names() {
        assert_eq!(tool_kind("bash"), ToolKind::Execute);
        assert_eq!(tool_kind("edit"), ToolKind::Edit);
        assert_eq!(tool_kind("list"), ToolKind::Search);
        assert_eq!(tool_kind("propose_plan"), ToolKind::SwitchMode);
        assert_eq!(tool_kind("mystery"), ToolKind::Other);
    }
}
