//! A turn worker: runs one user turn — model request, tool calls, follow-up
//! requests — as its own task, streaming events straight to the output.
//! `/compact` runs as a worker too, so the queue treats it like a turn.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use jucode_models::{
    stream_response, HistoryItem, ModelError, ModelRequest, RetryPolicy, StreamEvent, Usage,
};
use jucode_protocol::{Event, QueuedMessage};
use tokio::sync::mpsc;

use crate::actor::Session;
use crate::attachments;
use crate::compaction::{self, Compactor};
use crate::output::Output;
use crate::pending::PendingApprovals;
use crate::persist::SharedPersist;
use crate::plan::DraftTracker;
use crate::project::{hooks, HookEvent};
use crate::tool_calls::{Call, ModelCtx, SnapshotState, ToolRunner};

/// What a worker does.
pub(crate) enum TurnKind {
    User(QueuedMessage),
    /// `/compact [instructions]`.
    Compact(String),
}

/// Sent to the actor when a worker ends on its own (not when aborted).
pub(crate) struct TurnFinished {
    pub turn_id: u64,
    pub usage: Option<Usage>,
    /// Prompt size the provider reported for the last request, plus that
    /// response's output, and how many history items that covered.
    pub context_base: Option<(u64, usize)>,
    pub error: Option<TurnError>,
    pub unread_steers: Vec<QueuedMessage>,
}

pub(crate) enum TurnError {
    /// The request could not be made at all (provider config, credentials).
    Setup(String),
    Model(ModelError),
    /// Reported already (compaction_failed); nothing more to say.
    Reported,
}

/// What a turn added to the history; shared so an interrupt keeps it.
#[derive(Default)]
pub(crate) struct TurnLog {
    /// Set when the turn compacted: the whole new history before `items`.
    pub replaced: Option<Vec<HistoryItem>>,
    pub items: Vec<HistoryItem>,
}

/// The actor's grip on a running worker.
pub(crate) struct TurnHandle {
    pub id: u64,
    task: tokio::task::JoinHandle<()>,
    log: Arc<Mutex<TurnLog>>,
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

    /// Applies what the turn did to `history`.
    pub fn absorb_into(&self, history: &mut Vec<HistoryItem>) {
        let log = std::mem::take(&mut *self.log.lock().expect("log lock"));
        if let Some(replaced) = log.replaced {
            *history = replaced;
        }
        history.extend(log.items);
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
    log: Arc<Mutex<TurnLog>>,
    steers: Arc<Mutex<VecDeque<QueuedMessage>>>,
    tools: ToolRunner,
    persist: SharedPersist,
    compactor: Compactor,
    /// The session's context figure at turn start (tokens, items covered).
    context_base: Option<(u64, usize)>,
    /// How long the first request waits for MCP servers still connecting.
    mcp_settle: std::time::Duration,
    finished: mpsc::UnboundedSender<TurnFinished>,
}

pub(crate) fn spawn(
    session: &mut Session,
    id: u64,
    kind: TurnKind,
    finished: mpsc::UnboundedSender<TurnFinished>,
) -> TurnHandle {
    let http = session.http_client();
    let config = &session.options.config.config;
    let info = session.models.info();
    let endpoint = session
        .models
        .endpoint(config)
        .map_err(|problem| problem.to_string());
    let web_search = crate::web_search::backend(config).ok().flatten();
    let mut instructions = session.system_prompt();
    if let Some(goal) = session.goal_prompt() {
        instructions.push_str(&goal);
    }
    let mut tools = tool_specs(session.options.chat, web_search.is_some());
    tools.extend(crate::engine_tools::specs(
        session.mode(),
        session.options.chat,
    ));
    let request = ModelRequest {
        model: session.models.model.clone(),
        instructions,
        history: session.history.clone(),
        tools,
        reasoning_effort: session.models.effort.clone(),
        max_output_tokens: Some(info.max_output_tokens),
        cache_key: session.session_id.clone(),
    };
    let log = Arc::new(Mutex::new(TurnLog::default()));
    let steers = Arc::new(Mutex::new(VecDeque::new()));
    let approvals = session.approvals.clone();
    let policy = retry_policy(config);
    let tools = ToolRunner {
        out: session.out.clone(),
        ctx: jucode_tools::ToolContext::new(session.options.cwd.clone())
            .with_web_search(web_search),
        approvals: approvals.clone(),
        state: session.approval.clone(),
        mode_at_start: session.mode(),
        subagent_id: None,
        persist: Some(session.persist.clone()),
        snapshots: Arc::new(Mutex::new(SnapshotState::default())),
        engine: session.engine.clone(),
        model: Some(Arc::new(ModelCtx {
            http: http.clone(),
            endpoint: endpoint.clone(),
            request: request.clone(),
            policy: policy.clone(),
        })),
        emit_tool_events: true,
        hooks: session.project.hooks.clone(),
        mcp: session.mcp.manager.clone(),
    };
    let worker = Worker {
        id,
        out: session.out.clone(),
        http,
        request,
        policy,
        endpoint,
        log: log.clone(),
        steers: steers.clone(),
        tools,
        persist: session.persist.clone(),
        compactor: Compactor {
            context_limit: info.context_limit,
        },
        context_base: session.context_base,
        mcp_settle: session.mcp.settle_limit(),
        finished,
    };
    let task = match kind {
        // `user_prompt_submit` hooks run in the worker before it accepts the message.
        TurnKind::User(msg) if session.project.hooks.has(HookEvent::UserPromptSubmit) => {
            tokio::spawn(worker.run_after_prompt_hooks(msg))
        }
        TurnKind::User(msg) => {
            // Accepted now, before the task is scheduled, so the user's
            // message precedes anything the worker emits.
            worker.accept_user_message(msg);
            session.out.emit(Event::status("streaming"));
            tokio::spawn(worker.run())
        }
        TurnKind::Compact(instructions) => {
            session.out.emit(Event::status("compacting"));
            tokio::spawn(worker.run_compaction(instructions))
        }
    };
    TurnHandle {
        id,
        task,
        log,
        steers,
        approvals,
    }
}

/// The tools offered to the model: the coding set, or the chat set (each
/// with `web_search` when a backend is configured).
fn tool_specs(chat: bool, web_search: bool) -> Vec<jucode_models::ToolSpec> {
    let set = if chat {
        jucode_tools::ToolSet::Chat
    } else {
        jucode_tools::ToolSet::Coding
    };
    jucode_tools::tool_defs(set, web_search)
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
    /// Emits `user_message`, saves it, and records it in history with the
    /// attachment lines the model (only) sees.
    fn accept_user_message(&self, msg: QueuedMessage) {
        let prepared = attachments::prepare(&msg, &self.out);
        let event = Event::UserMessage {
            content: msg.content,
            images: msg.images,
            files: msg.files,
        };
        let record = self.persist.lock().expect("persist lock").event(&event);
        self.tools.start_turn(record);
        self.out.emit(event);
        self.log.lock().expect("log lock").items.push(prepared);
    }

    fn push(&self, item: HistoryItem) {
        self.persist.lock().expect("persist lock").item(&item);
        self.log.lock().expect("log lock").items.push(item);
    }

    fn history_now(&self) -> Vec<HistoryItem> {
        let log = self.log.lock().expect("log lock");
        let mut history = log
            .replaced
            .clone()
            .unwrap_or_else(|| self.request.history.clone());
        history.extend(log.items.iter().cloned());
        history
    }

    /// The context the next request would carry, as `context_usage` counts
    /// it: the last reported figure plus an o200k count of what came since.
    fn context_estimate(&self, history: &[HistoryItem]) -> u64 {
        match self.context_base {
            Some((base, covered)) if covered <= history.len() => {
                base + jucode_models::count_history(&history[covered..])
            }
            _ => {
                jucode_models::count_tokens(&self.request.instructions)
                    + jucode_models::count_history(history)
            }
        }
    }

    async fn run(mut self) {
        crate::mcp_glue::settle(&self.tools.mcp, self.mcp_settle).await;
        let mut usage: Option<Usage> = None;
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
            let mut history = self.history_now();
            if self.context_estimate(&history) > self.compactor.context_limit {
                // Automatic compaction; on failure the request goes ahead
                // uncompacted (and the provider may still accept it).
                if let Ok(compacted) = self.compact(&endpoint, &history, "").await {
                    history = compacted;
                }
            }
            let mut request = self.request.clone();
            request.history = history;
            crate::mcp_glue::refresh_tools(&mut request.tools, &self.tools.mcp);
            self.out.emit(Event::Connecting);
            let result = self.stream(&endpoint, &request).await;
            match result {
                Ok(response) => {
                    if let Some(u) = &response.usage {
                        usage.get_or_insert_with(Usage::default).add(u);
                    }
                    let calls = tool_calls_of(&response.items);
                    for item in response.items {
                        self.push(item);
                    }
                    if let Some(u) = &response.usage {
                        let covered = self.history_now().len();
                        self.context_base = Some((u.input_tokens + u.output_tokens, covered));
                    }
                    if calls.is_empty() {
                        break None;
                    }
                    let (results, ends_turn) = self.tools.run_calls(calls).await;
                    for result in results {
                        self.push(result);
                    }
                    if ends_turn {
                        break None;
                    }
                }
                Err(err) => break Some(TurnError::Model(err)),
            }
        };
        self.tools.hooks.stop(&self.out, error.is_some());
        self.finish(usage, error);
    }

    /// A user turn whose message first goes through the `user_prompt_submit`
    /// hooks: they may block it (`error`, no turn) or add context the model
    /// reads after the message (the `user_message` event shows it as sent).
    async fn run_after_prompt_hooks(self, msg: QueuedMessage) {
        match self
            .tools
            .hooks
            .user_prompt_submit(&self.out, &msg.content)
            .await
        {
            Err(blocked) => {
                self.out.emit(Event::error(blocked));
                self.finish(None, Some(TurnError::Reported));
            }
            Ok(context) => {
                self.accept_user_message(msg);
                if let Some(context) = context {
                    if let Some(item) = self.log.lock().expect("log lock").items.last_mut() {
                        hooks::add_context(item, &context);
                    }
                }
                self.out.emit(Event::status("streaming"));
                self.run().await
            }
        }
    }

    fn finish(self, usage: Option<Usage>, error: Option<TurnError>) {
        let unread_steers = self.steers.lock().expect("steer lock").drain(..).collect();
        let context_base = self.context_base.filter(|_| usage.is_some());
        let _ = self.finished.send(TurnFinished {
            turn_id: self.id,
            usage,
            context_base,
            error,
            unread_steers,
        });
    }

    /// One model request, its stream mapped to protocol events.
    async fn stream(
        &self,
        endpoint: &jucode_models::Endpoint,
        request: &ModelRequest,
    ) -> Result<jucode_models::ModelResponse, ModelError> {
        let out = self.out.clone();
        let mut text_started = false;
        let mut drafts = DraftTracker::default();
        let plan_ids = self.tools.engine.plan_ids.clone();
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
            StreamEvent::ToolCallStart { call_id, name } => {
                drafts.start(&call_id, &name, &plan_ids)
            }
            StreamEvent::ToolCallDelta { call_id, delta } => drafts.delta(&call_id, &delta, &out),
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
        stream_response(&self.http, endpoint, request, &self.policy, &mut on_event).await
    }

    /// Compacts `history`; on success the turn log holds the new history.
    async fn compact(
        &mut self,
        endpoint: &jucode_models::Endpoint,
        history: &[HistoryItem],
        instructions: &str,
    ) -> Result<Vec<HistoryItem>, ()> {
        let summarizer = compaction::Summarizer {
            out: &self.out,
            http: &self.http,
            endpoint,
            policy: &self.policy,
            request: &self.request,
        };
        match summarizer.compact(history, instructions).await {
            Ok((summary, compacted)) => {
                self.persist
                    .lock()
                    .expect("persist lock")
                    .append(crate::persist::body(
                        "compaction",
                        serde_json::json!({ "summary": summary, "history": compacted }),
                    ));
                let mut log = self.log.lock().expect("log lock");
                log.replaced = Some(compacted.clone());
                log.items.clear();
                drop(log);
                // The provider's figure no longer applies to this history.
                self.context_base = None;
                self.out.emit(Event::CompactionEnd);
                Ok(compacted)
            }
            Err(error) => {
                self.out.emit(Event::CompactionFailed { error });
                Err(())
            }
        }
    }

    async fn run_compaction(mut self, instructions: String) {
        let endpoint = match &self.endpoint {
            Ok(endpoint) => endpoint.clone(),
            Err(problem) => {
                let problem = problem.clone();
                self.out.emit(Event::CompactionStart);
                self.out.emit(Event::CompactionFailed {
                    error: problem.clone(),
                });
                return self.finish(None, Some(TurnError::Reported));
            }
        };
        let history = self.history_now();
        let error = match self.compact(&endpoint, &history, &instructions).await {
            Ok(_) => None,
            Err(()) => Some(TurnError::Reported),
        };
        self.finish(None, error);
    }
}

pub(crate) fn tool_calls_of(items: &[HistoryItem]) -> Vec<Call> {
    items
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
        .collect()
}
