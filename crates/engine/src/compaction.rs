//! Compaction: replacing the older part of a long history with a summary
//! written by the model, keeping the latest user message and what follows it
//! verbatim.

use jucode_models::{stream_response, HistoryItem, ModelRequest, RetryPolicy, StreamEvent};
use jucode_protocol::Event;

use crate::output::Output;

/// When a worker compacts on its own.
pub struct Compactor {
    /// Prompt size above which the next request is compacted first.
    pub context_limit: u64,
}

const SUMMARY_PROMPT: &str = "\
You are summarizing a coding session so that it can continue in a fresh context.
Write a summary another engineer could pick the work up from. Keep, in this order:
1. The task: what the user asked for, in their words where it matters.
2. Decisions made and constraints the user gave.
3. Files read, created or changed, with what changed in each.
4. Commands run and what they showed (failures especially).
5. Pending work: what is left to do, and the next step.
Be concrete (paths, names, numbers). Do not invent anything. Do not call tools.";

/// Prefix of the summary item in the compacted history.
pub const SUMMARY_HEADER: &str =
    "[Summary of the earlier conversation, written when the context was compacted]";

pub struct Summarizer<'a> {
    pub out: &'a Output,
    pub http: &'a reqwest::Client,
    pub endpoint: &'a jucode_models::Endpoint,
    pub policy: &'a RetryPolicy,
    /// The turn's request: model, effort and cache key are reused.
    pub request: &'a ModelRequest,
}

/// Where the verbatim tail starts: the latest user message.
fn split_point(history: &[HistoryItem]) -> usize {
    history
        .iter()
        .rposition(|item| matches!(item, HistoryItem::User { .. }))
        .unwrap_or(history.len())
}

impl Summarizer<'_> {
    /// Emits `compaction_start` and `compaction_progress`; returns the
    /// summary and the compacted history, or the error to report.
    pub async fn compact(
        &self,
        history: &[HistoryItem],
        instructions: &str,
    ) -> Result<(String, Vec<HistoryItem>), String> {
        self.out.emit(Event::CompactionStart);
        let split = split_point(history);
        let (older, recent) = history.split_at(split);
        if older.is_empty() {
            return Err("nothing to compact yet: the conversation is a single turn".into());
        }
        let mut ask = String::from(
            "Summarize the conversation above following your instructions. \
             Reply with the summary only.",
        );
        if !instructions.trim().is_empty() {
            ask.push_str("\nAdditional instructions from the user: ");
            ask.push_str(instructions.trim());
        }
        let mut summary_history = older.to_vec();
        summary_history.push(HistoryItem::User {
            text: ask,
            images: Vec::new(),
        });
        let request = ModelRequest {
            model: self.request.model.clone(),
            instructions: SUMMARY_PROMPT.to_string(),
            history: summary_history,
            tools: Vec::new(),
            reasoning_effort: self.request.reasoning_effort.clone(),
            max_output_tokens: self.request.max_output_tokens.map(|m| m.min(16_000)),
            cache_key: self.request.cache_key.clone(),
        };
        let out = self.out.clone();
        let mut summary = String::new();
        let mut tokens = 0u64;
        let mut on_event = |event: StreamEvent| {
            if let StreamEvent::TextDelta(delta) = event {
                tokens += jucode_models::count_tokens(&delta);
                summary.push_str(&delta);
                out.emit(Event::CompactionProgress {
                    output_tokens: tokens,
                });
            }
        };
        let response = stream_response(
            self.http,
            self.endpoint,
            &request,
            self.policy,
            &mut on_event,
        )
        .await
        .map_err(|err| err.to_string())?;
        // The finished items are authoritative (retries may have cut deltas).
        let text: String = response
            .items
            .iter()
            .filter_map(|item| match item {
                HistoryItem::Assistant { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let summary = if text.trim().is_empty() {
            summary
        } else {
            text
        };
        if summary.trim().is_empty() {
            return Err("the model returned an empty summary".into());
        }
        let mut compacted = vec![HistoryItem::User {
            text: format!("{SUMMARY_HEADER}\n{summary}"),
            images: Vec::new(),
        }];
        compacted.extend_from_slice(recent);
        Ok((summary, compacted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_from_the_latest_user_message() {
        let user = |t: &str| HistoryItem::User {
            text: t.into(),
            images: vec![],
        };
        let reply = |t: &str| HistoryItem::Assistant { text: t.into() };
        let history = vec![user("a"), reply("b"), user("c"), reply("d")];
        assert_eq!(split_point(&history), 2);
        assert_eq!(split_point(&[]), 0);
    }
}
