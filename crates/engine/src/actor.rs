//! The session actor: owns all session state, handles ops one at a time in
//! arrival order, and runs at most one turn worker.

use std::collections::VecDeque;
use std::sync::Arc;

use jucode_models::HistoryItem;
use jucode_protocol::{
    ApprovalMode, Event, Op, QueueIndexOp, QueuedMessage, UserMessageOp, PROTOCOL_VERSION,
};
use tokio::sync::mpsc;

use crate::actions::ActionRan;
use crate::commands;
use crate::engine_tools::EngineState;
use crate::ids;
use crate::mcp_ops::{McpChannels, McpState};
use crate::model_state::ModelState;
use crate::options::EngineOptions;
use crate::output::Output;
use crate::pending::PendingApprovals;
use crate::persist::{Persist, SharedPersist};
use crate::tool_calls::ApprovalState;
use crate::turn::{self, TurnFinished, TurnHandle, TurnKind};
use crate::Input;

/// Why the actor loop stopped.
enum Flow {
    Continue,
    Stop,
}

pub(crate) struct Session {
    pub options: Arc<EngineOptions>,
    pub out: Output,
    pub session_id: String,
    pub models: ModelState,
    pub approval: ApprovalState,
    pub engine: EngineState,
    /// Approval requests of the turn and its subagents.
    pub approvals: PendingApprovals,
    pub goal: Option<crate::goal::Goal>,
    pub actions_tx: mpsc::UnboundedSender<ActionRan>,
    pub history: Vec<HistoryItem>,
    pub queue: VecDeque<QueuedMessage>,
    pub turn: Option<TurnHandle>,
    /// Cumulative cost of the session in USD.
    pub cost_usd: f64,
    /// Provider-reported prompt size of the latest request and how many
    /// history items it covered: the base of `context_usage`.
    pub context_base: Option<(u64, usize)>,
    pub persist: SharedPersist,
    /// Instructions, custom commands, skills, hooks (see `project`).
    pub project: crate::project::Project,
    /// The MCP servers (see `mcp_ops`).
    pub mcp: crate::mcp_ops::McpState,
    next_turn_id: u64,
    http: Option<reqwest::Client>,
    finished_tx: mpsc::UnboundedSender<TurnFinished>,
}

pub(crate) async fn run(
    options: Arc<EngineOptions>,
    mut input: mpsc::UnboundedReceiver<Input>,
    out: Output,
) {
    let (finished_tx, mut finished_rx) = mpsc::unbounded_channel();
    let (actions_tx, mut actions_rx) = mpsc::unbounded_channel();
    let (updates, mut mcp_updates) = mpsc::unbounded_channel();
    let (prompts, mut mcp_prompts) = mpsc::unbounded_channel();
    let mcp = McpChannels { updates, prompts };
    let mut session = Session::new(options, out, finished_tx, actions_tx, mcp);
    session.resume_at_start();
    session.emit_startup_batch();
    session.report_mcp_problems();
    session.project_startup().await;

    loop {
        let flow = tokio::select! {
            // Ops first: an interrupt must win over a turn that just ended.
            biased;
            line = input.recv() => match line {
                Some(Ok(op)) => session.handle_op(op),
                Some(Err(err)) => {
                    session.out.emit(Event::error(err.to_string()));
                    Flow::Continue
                }
                None => Flow::Stop, // stdin closed
            },
            Some(finished) = finished_rx.recv() => {
                session.on_turn_finished(finished);
                Flow::Continue
            }
            Some(ran) = actions_rx.recv() => {
                session.on_action_ran(ran);
                Flow::Continue
            }
            Some(_) = mcp_updates.recv() => {
                while mcp_updates.try_recv().is_ok() {} // one view for a burst
                session.on_mcp_changed();
                Flow::Continue
            }
            Some(ready) = mcp_prompts.recv() => {
                session.on_prompt_ready(ready);
                Flow::Continue
            }
        };
        if let Flow::Stop = flow {
            break;
        }
    }
    session.abort_turn();
    // Stdio servers get EOF, then their process groups are killed.
    session.mcp.manager.shutdown().await;
}

impl Session {
    fn new(
        options: Arc<EngineOptions>,
        out: Output,
        finished_tx: mpsc::UnboundedSender<TurnFinished>,
        actions_tx: mpsc::UnboundedSender<ActionRan>,
        mcp: McpChannels,
    ) -> Session {
        let config = &options.config.config;
        let models = ModelState::new(
            config,
            options.model.as_deref(),
            options.provider.as_deref(),
        );
        let mut problems: Vec<String> = Vec::new();
        let approval_mode = match (options.approval_mode, config.approval_mode.as_deref()) {
            (Some(mode), _) => mode,
            (None, Some(text)) => text.parse().unwrap_or_else(|err: String| {
                problems.push(format!("config.toml approval_mode: {err}; using manual"));
                ApprovalMode::Manual
            }),
            (None, None) => ApprovalMode::Manual,
        };
        problems.extend(crate::web_search::backend(config).err());
        let project = crate::project::Project::load(&options);
        let mcp = McpState::start(config, &options, &project, mcp);
        let session_id = ids::session_id();
        out.set_session(&session_id);
        let store =
            jucode_store::Store::new(crate::persist::sessions_dir(&options.config.profile_dir));
        let persist = Persist::new(store, &session_id, &options.cwd, options.chat);
        for problem in &options.config.problems {
            out.emit(Event::error(problem.message.clone()));
        }
        for problem in problems {
            out.emit(Event::error(problem));
        }
        Session {
            options,
            engine: EngineState::new(out.clone()),
            out,
            session_id,
            models,
            approval: ApprovalState {
                mode: Arc::new(std::sync::Mutex::new(approval_mode)),
                allowlist: Default::default(),
            },
            approvals: PendingApprovals::default(),
            goal: None,
            actions_tx,
            history: Vec::new(),
            queue: VecDeque::new(),
            turn: None,
            cost_usd: 0.0,
            context_base: None,
            persist: Arc::new(std::sync::Mutex::new(persist)),
            project,
            mcp,
            next_turn_id: 1,
            http: None,
            finished_tx,
        }
    }

    pub(crate) fn config(&self) -> &jucode_config::Config {
        &self.options.config.config
    }

    /// `startup`, `model_status`, `command_list`, `approval_mode`,
    /// `mcp_servers`, `trust_prompt` (when due), in the spec's order.
    pub(crate) fn emit_startup_batch(&mut self) {
        let info = self.models.info();
        let opts = &self.options;
        self.out.emit(Event::Startup {
            version: env!("CARGO_PKG_VERSION").to_string(),
            session_id: self.session_id.clone(),
            profile_dir: opts.config.profile_dir.display().to_string(),
            config_path: opts.config.config_path.display().to_string(),
            cwd: opts.cwd.display().to_string(),
            model: self.models.model.clone(),
            context_window: info.context_window,
        });
        self.models.forget_status();
        self.emit_model_status();
        self.out.emit(Event::CommandList {
            commands: self.command_list(),
        });
        self.out.emit(Event::ApprovalMode { mode: self.mode() });
        self.emit_mcp_servers();
        self.emit_trust_prompt();
        let _ = PROTOCOL_VERSION;
    }

    pub fn emit_model_status(&mut self) {
        let config = self.options.config.config.clone();
        self.models.emit_status(&config, &self.out);
    }

    fn handle_op(&mut self, op: Op) -> Flow {
        match op {
            Op::UserMessage(msg) => self.submit(msg),
            Op::Command(cmd) => return self.run_command(&cmd.input),
            Op::Steer(ix) => self.steer(ix),
            Op::Unqueue(ix) => self.unqueue(ix),
            Op::Interrupt(ix) => self.interrupt(ix),
            Op::SetApprovalMode(m) => self.set_approval_mode(m.mode),
            Op::Approve(a) => self.approve(a),
            Op::SetAttended(a) => {
                self.engine.deferred.set_attended(a.attended);
                if !a.attended {
                    // Calls already waiting become deferred actions.
                    self.approvals.defer_all();
                }
                self.out.emit(Event::Attended {
                    attended: a.attended,
                });
            }
            Op::AgentRuns(_) => self.engine.agents.emit_runs(),
            Op::SubagentTranscript(t) => {
                let event = self.engine.agents.transcript_event(&t.agent_id);
                self.out.emit(event)
            }
            Op::ApprovePlan(p) => self.approve_plan(p),
            Op::DecideAction(d) => self.decide_action(d),
            Op::McpList(_) => self.emit_mcp_servers(),
            Op::McpSet(op) => self.mcp_set(&op.name, &op.config),
            Op::McpRemove(op) => self.mcp_remove(&op.name),
            Op::McpToggle(op) => self.mcp_toggle(&op.name, op.enabled),
            Op::Shutdown(_) => return Flow::Stop,
        }
        Flow::Continue
    }

    fn run_command(&mut self, input: &str) -> Flow {
        let Some(cmd) = commands::parse(input) else {
            self.out.emit(Event::error(format!(
                "not a command: {input:?} (commands start with /; send text with user_message)"
            )));
            return Flow::Continue;
        };
        if self.run_mcp_prompt(cmd.name, cmd.rest) || self.run_project_command(cmd.name, cmd.rest) {
            return Flow::Continue; // MCP prompts, `/trust`, custom commands, skills
        }
        match cmd.name {
            "/quit" | "/exit" => return Flow::Stop,
            "/help" => {
                let lines: Vec<String> = self
                    .command_list()
                    .into_iter()
                    .map(|c| format!("{} {} — {}", c.command, c.args, c.description))
                    .collect();
                self.out.emit(Event::info(lines.join("\n")));
            }
            "/model" => self.model_command(&cmd.args()),
            "/approve" => self.approve_command(&cmd.args()),
            "/resume" => self.resume_command(cmd.rest),
            "/transcript" => self.transcript_command(),
            "/tree" => self.tree_command(cmd.rest),
            "/checkout" => self.checkout_command(cmd.rest),
            "/compact" => self.compact_command(cmd.rest),
            "/plan" => self.plan_command(cmd.rest),
            "/goal" => self.goal_command(cmd.rest),
            "/mcp" => self.mcp_command(cmd.rest),
            other => self.out.emit(Event::error(format!(
                "unknown command: {other} (see /help)"
            ))),
        }
        Flow::Continue
    }

    pub(crate) fn mode(&self) -> ApprovalMode {
        *self.approval.mode.lock().expect("mode lock")
    }

    pub(crate) fn set_approval_mode(&mut self, mode: ApprovalMode) {
        *self.approval.mode.lock().expect("mode lock") = mode;
        self.out
            .emit(Event::status(format!("approval mode: {}", mode.as_str())));
        self.out.emit(Event::ApprovalMode { mode });
    }

    // ---- the queue -------------------------------------------------------

    pub(crate) fn submit(&mut self, msg: UserMessageOp) {
        self.submit_message(QueuedMessage {
            content: msg.content,
            images: msg.images,
            files: msg.files,
        });
    }

    /// Starts a turn with `queued`, or queues it behind the running one.
    pub(crate) fn submit_message(&mut self, queued: QueuedMessage) {
        if self.turn.is_some() {
            self.queue.push_back(queued);
            self.emit_queue();
            self.out
                .emit(Event::status(format!("queued: {}", self.queue.len())));
        } else {
            self.start_turn(queued);
        }
    }

    fn emit_queue(&self) {
        self.out.emit(Event::PendingMessages {
            messages: self.queue.iter().cloned().collect(),
        });
    }

    /// Resolves a protocol index (negative from the end) into the queue.
    fn queue_index(&self, index: Option<i64>) -> Option<usize> {
        let len = self.queue.len() as i64;
        let ix = index.unwrap_or(0);
        let ix = if ix < 0 { len + ix } else { ix };
        (0..len).contains(&ix).then_some(ix as usize)
    }

    fn steer(&mut self, op: QueueIndexOp) {
        if self.turn.is_none() {
            return;
        }
        let Some(ix) = self.queue_index(op.index) else {
            return;
        };
        let msg = self.queue.remove(ix).expect("index checked");
        if !msg.images.is_empty() {
            // Images cannot join a running request: stop and start anew.
            self.queue.push_front(msg);
            self.interrupt_current();
            self.emit_queue();
            self.start_next();
            return;
        }
        self.out.emit(Event::status("steering"));
        self.emit_queue();
        if let Some(turn) = &self.turn {
            turn.steer(msg);
        }
    }

    fn unqueue(&mut self, op: QueueIndexOp) {
        let Some(ix) = self.queue_index(op.index) else {
            return;
        };
        let msg = self.queue.remove(ix).expect("index checked");
        self.emit_queue();
        self.out.emit(Event::Unqueued {
            content: msg.content,
            images: msg.images,
            files: msg.files,
        });
    }

    fn interrupt(&mut self, op: QueueIndexOp) {
        if self.turn.is_none() {
            return;
        }
        let chosen = op.index.and_then(|i| self.queue_index(Some(i)));
        self.interrupt_current();
        if let Some(ix) = chosen {
            let msg = self.queue.remove(ix).expect("index checked");
            self.queue.push_front(msg);
            self.emit_queue();
        }
        self.start_next();
    }

    /// Aborts the running turn, keeping what it completed.
    fn interrupt_current(&mut self) {
        if let Some(turn) = self.turn.take() {
            self.engine.agents.close_all("interrupted");
            self.approvals.clear();
            let leftovers = turn.abort();
            self.absorb_turn_log(&turn);
            for msg in leftovers.into_iter().rev() {
                self.queue.push_front(msg);
            }
            self.out.emit(Event::info("request interrupted"));
            self.out.emit(Event::status("interrupted"));
        }
    }

    fn abort_turn(&mut self) {
        if let Some(turn) = self.turn.take() {
            turn.abort();
        }
    }

    pub(crate) fn start_next(&mut self) {
        if self.turn.is_none() {
            if let Some(next) = self.queue.pop_front() {
                self.emit_queue();
                self.start_turn(next);
            }
        }
    }

    // ---- turns -----------------------------------------------------------

    fn start_turn(&mut self, msg: QueuedMessage) {
        self.engine.agents.prune();
        self.start_worker(TurnKind::User(msg));
    }

    pub(crate) fn start_worker(&mut self, kind: TurnKind) {
        // The tokenizer's tables take tens of milliseconds and ~60 MB to
        // build: not at startup (an idle engine stays small), but beside
        // the first model request, so its `context_usage` does not wait.
        static WARM: std::sync::Once = std::sync::Once::new();
        WARM.call_once(|| {
            std::thread::spawn(jucode_models::warm_up);
        });
        let id = self.next_turn_id;
        self.next_turn_id += 1;
        let finished = self.finished_tx.clone();
        let handle = turn::spawn(self, id, kind, finished);
        self.turn = Some(handle);
    }

    /// The HTTP client, built on first use: building one loads the TLS
    /// roots, which would otherwise slow down startup.
    pub(crate) fn http_client(&mut self) -> reqwest::Client {
        self.http
            .get_or_insert_with(|| {
                reqwest::Client::builder()
                    .connect_timeout(std::time::Duration::from_secs(30))
                    .build()
                    .unwrap_or_default()
            })
            .clone()
    }

    fn absorb_turn_log(&mut self, turn: &TurnHandle) {
        turn.absorb_into(&mut self.history);
    }

    fn on_turn_finished(&mut self, mut finished: TurnFinished) {
        let Some(turn) = self.turn.take_if(|t| t.id == finished.turn_id) else {
            return; // a turn we already interrupted
        };
        self.absorb_turn_log(&turn);
        for msg in std::mem::take(&mut finished.unread_steers)
            .into_iter()
            .rev()
        {
            self.queue.push_front(msg);
        }
        self.finish_turn(finished);
        self.start_next();
    }
}
