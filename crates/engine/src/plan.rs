//! Plan mode's plans and the `update_plan` step list.
//!
//! While the model writes a `propose_plan` call, its arguments arrive as JSON
//! text in pieces; [`DraftTracker`] reads the title and Markdown out of the
//! unfinished JSON and emits `plan_draft` with what was added.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jucode_protocol::Event;
use serde_json::Value;

use crate::output::Output;

/// One proposed plan and its review status.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRecord {
    pub id: String,
    pub title: String,
    pub markdown: String,
    /// pending, approved or revising.
    pub status: String,
}

impl PlanRecord {
    pub fn event(&self) -> Event {
        Event::ProposedPlan {
            id: self.id.clone(),
            title: self.title.clone(),
            markdown: self.markdown.clone(),
            status: self.status.clone(),
        }
    }
}

/// Plans of the session, shared between the actor and workers.
pub type Plans = Arc<Mutex<Vec<PlanRecord>>>;

pub fn new_plan_id() -> String {
    format!("plan-{:016x}", rand::random::<u64>())
}

/// The value of string field `field` in possibly unfinished JSON object
/// text, decoded as far as it goes.
pub fn partial_string_field(text: &str, field: &str) -> Option<String> {
    let key = format!("\"{field}\"");
    let at = text.find(&key)? + key.len();
    let rest = text[at..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('b') => out.push('\u{8}'),
                Some('f') => out.push('\u{c}'),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    if hex.len() < 4 {
                        return Some(out); // cut inside the escape
                    }
                    match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        Some(ch) => out.push(ch),
                        // A surrogate half: wait for the full pair.
                        None => return Some(out),
                    }
                }
                Some(other) => out.push(other),
                None => return Some(out),
            },
            c => out.push(c),
        }
    }
    Some(out)
}

/// Follows `propose_plan` calls while they stream.
#[derive(Default)]
pub struct DraftTracker {
    /// call_id → (plan id, arguments so far, markdown emitted so far, title)
    calls: HashMap<String, (String, String, usize, String)>,
}

impl DraftTracker {
    pub fn start(&mut self, call_id: &str, name: &str, ids: &Mutex<HashMap<String, String>>) {
        if name != "propose_plan" {
            return;
        }
        let id = new_plan_id();
        ids.lock()
            .expect("plan ids lock")
            .insert(call_id.to_string(), id.clone());
        self.calls
            .insert(call_id.to_string(), (id, String::new(), 0, String::new()));
    }

    pub fn delta(&mut self, call_id: &str, delta: &str, out: &Output) {
        let Some((id, args, emitted, title)) = self.calls.get_mut(call_id) else {
            return;
        };
        args.push_str(delta);
        let new_title = partial_string_field(args, "title").unwrap_or_default();
        let markdown = partial_string_field(args, "markdown").unwrap_or_default();
        if markdown.len() > *emitted || new_title != *title {
            let append = markdown.get(*emitted..).unwrap_or_default().to_string();
            *emitted = markdown.len();
            *title = new_title.clone();
            out.emit(Event::PlanDraft {
                id: id.clone(),
                title: new_title,
                append,
            });
        }
    }
}

/// The `plan` event for an `update_plan` call, or why the arguments are bad.
pub fn steps_event(arguments: &str) -> Result<Event, String> {
    let value: Value = serde_json::from_str(arguments)
        .map_err(|e| format!("update_plan: arguments are not valid JSON: {e}"))?;
    let steps = value
        .get("plan")
        .and_then(Value::as_array)
        .ok_or("update_plan: `plan` must be an array of {step, status}")?;
    let mut plan = Vec::new();
    for step in steps {
        let text = step.get("step").and_then(Value::as_str).unwrap_or_default();
        let status = step
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("pending");
        if text.is_empty() {
            return Err("update_plan: every entry needs a non-empty `step`".into());
        }
        if !matches!(status, "pending" | "in_progress" | "completed") {
            return Err(format!(
                "update_plan: status `{status}` is not pending, in_progress or completed"
            ));
        }
        plan.push(jucode_protocol::PlanStep {
            step: text.to_string(),
            status: status.to_string(),
        });
    }
    Ok(Event::Plan { plan })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_unfinished_json_strings() {
        let t = r##"{"title":"Fix it","markdown":"# Plan\n1. Read\u00e9 the"##;
        assert_eq!(partial_string_field(t, "title").unwrap(), "Fix it");
        assert_eq!(
            partial_string_field(t, "markdown").unwrap(),
            "# Plan\n1. Readé the"
        );
        assert_eq!(
            partial_string_field(r#"{"markdown":"a\"#, "markdown").unwrap(),
            "a"
        );
        assert_eq!(
            partial_string_field(r#"{"markdown":"a\u00"#, "markdown").unwrap(),
            "a"
        );
        assert!(partial_string_field(r#"{"title":"x""#, "markdown").is_none());
    }

    #[test]
    fn validates_plan_steps() {
        assert!(steps_event(r#"{"plan":[{"step":"a","status":"completed"}]}"#).is_ok());
        assert!(steps_event(r#"{"plan":[{"step":"a","status":"done"}]}"#).is_err());
        assert!(steps_event(r#"{"plan":"x"}"#).is_err());
    }
}
