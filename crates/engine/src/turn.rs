//! A turn worker: runs one user turn — model request, tool calls, follow-up
//! requests — as its own task, streaming events straight to the output.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use jucode_models::{
    stream_response, HistoryItem, ModelError, ModelRequest, RetryPolicy, StreamEvent, Usage,
};
use jucode_protocol::{ApproveOp, Event, QueuedMessage};
use tokio::sync::mpsc;

use crate::actor::Session;
use crate::attachments;
use crate::output::Output;
use crate::pending::PendingApprovals;
use crate::prompt;
use crate::tool_calls::{Call, ToolRunner};

/// Sent to the actor when a worker ends on its own (not when aborted).
pub(crate) struct TurnFinished {
    pub turn_id: u64,
    pub usage: Option<Usage>,
    /// Prompt size the provider reported for the last request, plus that
    /// response's output, and how many log items that covered.
    pub context_base: Option<(u64, usize)>,
    pub error: Option<TurnError>,
    pub unread_steers: Vec<QueuedMessage>,
}

pub(crate) enum TurnError {
    /// The request could not be made at all (provider config, credentials).
    Setup(String),
    Model(ModelError),
}

/// The actor's grip on a running worker.
pub(crate) struct TurnHandle {
    pub id: u64,
    task: tokio::task::JoinHandle<()>,
    /// Items the turn completed, shared so an interrupt keeps them.
    log: Arc<Mutex<Vec<HistoryItem>>>,
    steers: Arc<Mutex<VecDeque<QueuedMessage>>>,
    approvals: PendingApprovals,
}

impl TurnHandle {
    pub fn steer(&self, msg: QueuedMessage) {
        self.steers.lock().expect("steer lock").push_back(msg);
    }

    /// Stops the worker; returns the steered messages it never read.
    pub fn abort(&self) -> Vec<QueuedMessage> {
        self.task.abort();
        self.approvals.clear();
        self.steers.lock().expect("steer lock").drain(..).collect()
    }

    pub fn take_log(&self) -> Vec<HistoryItem> {
        std::mem::take(&mut *self.log.lock().expect("log lock"))
    }

    pub fn has_pending_approval(&self, call_id: &str) -> bool {
        self.approvals.contains(call_id)
    }

    pub fn answer_approval(&self, op: ApproveOp) -> Result<(), String> {
        self.approvals.answer(op)
    }
}

/// Everything a worker needs, copied out of the session at turn start.
struct Worker {
    id: u64,
    out: Output,
    http: reqwest::Client,
    request: ModelRequest,
    policy: RetryPolicy,
    endpoint: Result<jucode_models::Endpoint, String>,
    log: Arc<Mutex<Vec<HistoryItem>>>,
    steers: Arc<Mutex<VecDeque<QueuedMessage>>>,
    tools: ToolRunner,
    finished: mpsc::UnboundedSender<TurnFinished>,
}

pub(crate) fn spawn(
    session: &mut Session,
    id: u64,
    msg: QueuedMessage,
    finished: mpsc::UnboundedSender<TurnFinished>,
) -> TurnHandle {
    let http = session.http_client();
    let config = &session.options.config.config;
    let info = session.models.info();
    let endpoint = session
        .models
        .endpoint(config)
        .map_err(|problem| problem.to_string());
    let request = ModelRequest {
        model: session.models.model.clone(),
        instructions: prompt::system_prompt(&session.options),
        history: session.history.clone(),
        tools: tool_specs(session.options.chat),
        reasoning_effort: session.models.effort.clone(),
        max_output_tokens: Some(info.max_output_tokens),
        cache_key: session.session_id.clone(),
    };
    let log = Arc::new(Mutex::new(Vec::new()));
    let steers = Arc::new(Mutex::new(VecDeque::new()));
    let approvals = PendingApprovals::default();
    let tools = ToolRunner {
        out: session.out.clone(),
        ctx: jucode_tools::ToolContext::new(session.options.cwd.clone()),
        approvals: approvals.clone(),
        state: session.approval.clone(),
        mode_at_start: session.mode(),
        subagent_id: None,
    };
    let worker = Worker {
        id,
        out: session.out.clone(),
        http,
        request,
        policy: retry_policy(config),
        endpoint,
        log: log.clone(),
        steers: steers.clone(),
        tools,
        finished,
    };
    // The user message is accepted now, before the task is scheduled, so
    // its event precedes anything the worker emits.
    worker.accept_user_message(msg);
    session.out.emit(Event::status("streaming"));
    let task = tokio::spawn(worker.run());
    TurnHandle {
        id,
        task,
        log,
        steers,
        approvals,
    }
}

/// The tools offered to the model: the coding set, or the chat set.
fn tool_specs(chat: bool) -> Vec<jucode_models::ToolSpec> {
    let set = if chat {
        jucode_tools::ToolSet::Chat
    } else {
        jucode_tools::ToolSet::Coding
    };
    jucode_tools::builtin_defs(set)
        .into_iter()
        .map(|def| jucode_models::ToolSpec {
            name: def.name.to_string(),
            description: def.description,
            parameters: def.parameters,
        })
        .collect()
}

fn retry_policy(config: &jucode_config::Config) -> RetryPolicy {
    let mut policy = RetryPolicy::default();
    if let Some(secs) = config.stream_idle_timeout {
        policy.idle_timeout_ms = (secs * 1000.0).max(1.0) as u64;
    }
    if let Some(n) = config.request_max_retries {
        policy.max_retries = n;
    }
    policy
}

impl Worker {
    /// Emits `user_message` and records the message in history, with the
    /// attachment lines the model (only) sees.
    fn accept_user_message(&self, msg: QueuedMessage) {
        let prepared = attachments::prepare(&msg, &self.out);
        self.out.emit(Event::UserMessage {
            content: msg.content,
            images: msg.images,
            files: msg.files,
        });
        self.log.lock().expect("log lock").push(prepared);
    }

    fn push(&self, item: HistoryItem) {
        self.log.lock().expect("log lock").push(item);
    }

    fn history_now(&self) -> Vec<HistoryItem> {
        let mut history = self.request.history.clone();
        history.extend(self.log.lock().expect("log lock").iter().cloned());
        history
    }

    async fn run(self) {
        let mut usage: Option<Usage> = None;
        let mut context_base = None;
        let error = loop {
            let steered: Vec<QueuedMessage> =
                self.steers.lock().expect("steer lock").drain(..).collect();
            for msg in steered {
                self.accept_user_message(msg);
            }
            let endpoint = match &self.endpoint {
                Ok(endpoint) => endpoint.clone(),
                Err(problem) => break Some(TurnError::Setup(problem.clone())),
            };
            let mut request = self.request.clone();
            request.history = self.history_now();
            self.out.emit(Event::Connecting);
            let out = self.out.clone();
            let mut text_started = false;
            let mut on_event = move |event: StreamEvent| match event {
                StreamEvent::ResponseStarted => out.emit(Event::ThinkingStart),
                StreamEvent::ReasoningDelta(delta) => out.emit(Event::ReasoningDelta { delta }),
                StreamEvent::TextDelta(delta) => {
                    if !text_started {
                        text_started = true;
                        out.emit(Event::AssistantStart);
                    }
                    out.emit(Event::AssistantDelta { delta })
                }
                StreamEvent::ToolCallStart { .. } | StreamEvent::ToolCallDelta { .. } => {}
                StreamEvent::Retrying {
                    attempt,
                    max,
                    delay_ms,
                    reason,
                } => out.emit(Event::Retrying {
                    attempt,
                    max,
                    delay_ms,
                    reason,
                }),
            };
            let result =
                stream_response(&self.http, &endpoint, &request, &self.policy, &mut on_event).await;
            match result {
                Ok(response) => {
                    if let Some(u) = &response.usage {
                        usage.get_or_insert_with(Usage::default).add(u);
                    }
                    let calls: Vec<Call> = response
                        .items
                        .iter()
                        .filter_map(|item| match item {
                            HistoryItem::ToolCall {
                                call_id,
                                name,
                                arguments,
                            } => Some(Call {
                                call_id: call_id.clone(),
                                name: name.clone(),
                                arguments: arguments.clone(),
                            }),
                            _ => None,
                        })
                        .collect();
                    for item in response.items {
                        self.push(item);
                    }
                    let covered = self.log.lock().expect("log lock").len();
                    if let Some(u) = &response.usage {
                        context_base = Some((u.input_tokens + u.output_tokens, covered));
                    }
                    if calls.is_empty() {
                        break None;
                    }
                    for result in self.tools.run_calls(calls).await {
                        self.push(result);
                    }
                }
                Err(err) => break Some(TurnError::Model(err)),
            }
        };
        let unread_steers = self.steers.lock().expect("steer lock").drain(..).collect();
        let _ = self.finished.send(TurnFinished {
            turn_id: self.id,
            usage,
            context_base,
            error,
            unread_steers,
        });
    }
}

impl Session {
    /// End-of-turn events: `usage`, `context_usage`, then `error` when the
    /// turn failed, then `status: ready`.
    pub(crate) fn finish_turn(&mut self, finished: TurnFinished, history_before: usize) {
        let info = self.models.info();
        if let Some(usage) = finished.usage {
            self.out.emit(Event::Usage {
                input_tokens: usage.input_tokens,
                cached_input_tokens: usage.cached_input_tokens,
                output_tokens: usage.output_tokens,
                reasoning_tokens: usage.reasoning_tokens,
            });
            self.cost_usd += info.cost_usd(&usage);
        }
        if let Some((tokens, covered)) = finished.context_base {
            self.context_base = Some((tokens, history_before + covered));
        }
        self.out.emit(Event::ContextUsage {
            tokens: self.context_tokens(),
            tokenizer: "o200k".to_string(),
            cost: self.cost_usd,
        });
        match &finished.error {
            Some(TurnError::Setup(message)) => self.out.emit(Event::error(message.clone())),
            Some(TurnError::Model(err)) => {
                if matches!(err, ModelError::RetriesExhausted(_)) {
                    self.models.unreachable = true;
                }
                self.out.emit(Event::error(self.describe_model_error(err)));
            }
            None => self.models.unreachable = false,
        }
        self.emit_model_status();
        self.out.emit(Event::status("ready"));
    }

    /// Context size: the provider's figure for the last request, plus an
    /// o200k count of what was added since; all o200k without a figure.
    pub(crate) fn context_tokens(&self) -> u64 {
        match self.context_base {
            Some((base, covered)) if covered <= self.history.len() => {
                base + jucode_models::count_history(&self.history[covered..])
            }
            _ => {
                jucode_models::count_tokens(&prompt::system_prompt(&self.options))
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
