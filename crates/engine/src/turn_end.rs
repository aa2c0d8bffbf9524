//! What the session does when a turn ends: the closing events, saving them,
//! and the context figure.

use jucode_models::ModelError;
use jucode_protocol::Event;

use crate::actor::Session;
use crate::turn::{TurnError, TurnFinished};

impl Session {
    /// End-of-turn events: `usage`, `context_usage`, then `error` when the
    /// turn failed, then `status: ready`.
    pub(crate) fn finish_turn(&mut self, finished: TurnFinished) {
        let info = self.models.info();
        if let Some(usage) = finished.usage {
            let event = Event::Usage {
                input_tokens: usage.input_tokens,
                cached_input_tokens: usage.cached_input_tokens,
                output_tokens: usage.output_tokens,
                reasoning_tokens: usage.reasoning_tokens,
            };
            self.persist_event(&event);
            self.out.emit(event);
            self.cost_usd += info.cost_usd(&usage);
        }
        if finished.context_base.is_some() || finished.usage.is_none() {
            // A fresh provider figure, or none at all (compaction, failure):
            // either way the old one no longer describes this history.
            self.context_base = finished.context_base;
        }
        let context = Event::ContextUsage {
            tokens: self.context_tokens(),
            tokenizer: "o200k".to_string(),
            cost: self.cost_usd,
        };
        self.persist_event(&context);
        self.out.emit(context);
        match &finished.error {
            Some(TurnError::Setup(message)) => self.out.emit(Event::error(message.clone())),
            Some(TurnError::Model(err)) => {
                if matches!(err, ModelError::RetriesExhausted(_)) {
                    self.models.unreachable = true;
                }
                self.out.emit(Event::error(self.describe_model_error(err)));
            }
            Some(TurnError::Reported) => {}
            None => self.models.unreachable = false,
        }
        self.goal_after_turn(finished.usage.as_ref());
        self.persist.lock().expect("persist lock").touch();
        self.report_persist_failure();
        self.emit_model_status();
        self.out.emit(Event::status("ready"));
    }

    pub(crate) fn persist_event(&self, event: &Event) {
        self.persist.lock().expect("persist lock").event(event);
    }

    /// Says once that the session file cannot be written.
    pub(crate) fn report_persist_failure(&self) {
        if let Some(message) = self.persist.lock().expect("persist lock").take_failure() {
            self.out.emit(Event::error(message));
        }
    }

    /// Context size: the provider's figure for the last request, plus an
    /// o200k count of what was added since; all o200k without a figure.
    pub(crate) fn context_tokens(&self) -> u64 {
        match self.context_base {
            Some((base, covered)) if covered <= self.history.len() => {
                base + jucode_models::count_history(&self.history[covered..])
            }
            _ => {
                jucode_models::count_tokens(&self.system_prompt())
                    + jucode_models::count_history(&self.history)
            }
        }
    }

    fn describe_model_error(&self, err: &ModelError) -> String {
        match err {
            ModelError::Auth(message) => {
                let hint =
                    jucode_models::providers::provider_info(&self.models.provider, self.config())
                        .ok()
                        .and_then(|p| p.api_key_env)
                        .map(|env| format!(" (the key is read from ${env})"))
                        .unwrap_or_default();
                format!("{message}{hint}")
            }
            other => other.to_string(),
        }
    }
}
