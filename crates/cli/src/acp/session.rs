//! One ACP session: its engine, what the adapter knows of the engine's
//! state (mode, model, commands), and the bookkeeping of prompts, cancel
//! tokens and engine round trips ("barriers").

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionModeState, SessionNotification, SessionUpdate,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, Error};
use jucode_engine::{Emitted, Input, Resume};
use jucode_protocol::{
    ApprovalMode, CommandInfo, CommandOp, Event, ModelViewItem, NoFields, Op, QueueIndexOp,
    UserMessageOp,
};
use tokio::sync::{mpsc, oneshot, Notify};

use super::agent::{internal, invalid};
use super::mapping;
use super::pump;
use crate::args::GlobalArgs;

/// How long the engine may take to send its startup batch.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// Fired by `session/cancel`; every wait of a prompt (its turn, its
/// permission requests) races against it.
#[derive(Clone, Default)]
pub struct CancelToken(Arc<TokenInner>);

#[derive(Default)]
struct TokenInner {
    fired: AtomicBool,
    notify: Notify,
}

impl CancelToken {
    pub fn fire(&self) {
        self.0.fired.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.fired.load(Ordering::SeqCst)
    }

    pub async fn cancelled(&self) {
        loop {
            let notified = self.0.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// How an engine turn ended, as the pump saw it.
#[derive(Debug)]
pub enum TurnEnd {
    /// `status: ready`, with the `error` messages the turn produced.
    Ready { errors: Vec<String> },
    /// `status: interrupted`.
    Interrupted,
    /// The engine stopped.
    Closed,
}

/// The engine turn a prompt is waiting for.
pub struct ActiveTurn {
    pub cancel: CancelToken,
    pub done: oneshot::Sender<TurnEnd>,
    pub errors: Vec<String>,
}

/// A round trip to the engine: the ops, then `agent_runs` as a marker whose
/// answer says every op before it was handled. Events seen meanwhile are
/// collected for the waiter.
pub struct Barrier {
    pub done: oneshot::Sender<Vec<Event>>,
    pub events: Vec<Event>,
}

#[derive(Default)]
pub struct State {
    pub mode: Option<ApprovalMode>,
    pub model: String,
    pub effort: Option<String>,
    pub efforts: Vec<String>,
    pub context_window: u64,
    pub models: Vec<ModelViewItem>,
    pub commands: Vec<CommandInfo>,
    pub turn: Option<ActiveTurn>,
    pub barriers: VecDeque<Barrier>,
    /// Cancel tokens of the prompts not answered yet.
    pub prompts: HashMap<u64, CancelToken>,
    next_prompt: u64,
    /// Tools the user rejected with "always" in this session.
    pub deny_always: HashSet<String>,
    /// `session/set_config_option` calls in flight (their answer carries
    /// the options, so no `config_option_update` is sent for them).
    pub config_calls: usize,
}

pub struct AcpSession {
    pub id: String,
    pub cwd: PathBuf,
    input: mpsc::UnboundedSender<Input>,
    pub state: Mutex<State>,
    turn_lock: tokio::sync::Mutex<()>,
    pub cx: ConnectionTo<Client>,
}

impl AcpSession {
    /// Starts an engine, reads its startup batch and the model list, and
    /// starts the pump. `resume` continues a stored session.
    pub async fn start(
        global: &GlobalArgs,
        cwd: PathBuf,
        resume: Option<String>,
        cx: ConnectionTo<Client>,
    ) -> Result<Arc<AcpSession>, Error> {
        if !cwd.is_absolute() {
            return Err(invalid(format!("cwd must be absolute: {}", cwd.display())));
        }
        let mut flags = global.clone();
        flags.cd = Some(cwd);
        let options = crate::setup::engine_options(&flags, false, resume.clone().map(Resume::Id))
            .map_err(invalid)?;
        let cwd = options.cwd.clone();
        let mut engine = jucode_engine::start(options);
        let mut state = State::default();
        let mut engine_id = String::new();
        let startup = async {
            read_until(&mut engine.events, &mut state, &mut engine_id, |e| {
                matches!(e, Event::McpServers { .. })
            })
            .await?;
            let _ = engine.input.send(Ok(Op::Command(CommandOp {
                input: "/model".into(),
            })));
            read_until(&mut engine.events, &mut state, &mut engine_id, |e| {
                matches!(e, Event::ModelView { .. })
            })
            .await
        };
        tokio::time::timeout(STARTUP_TIMEOUT, startup)
            .await
            .map_err(|_| internal("the engine did not start in time"))??;
        let id = match resume {
            Some(wanted) => {
                if wanted != engine_id {
                    tracing::warn!(
                        "session {wanted}: the engine started as {engine_id} (it did not resume the stored session)"
                    );
                }
                wanted
            }
            None => engine_id,
        };
        let session = Arc::new(AcpSession {
            id,
            cwd,
            input: engine.input,
            state: Mutex::new(state),
            turn_lock: tokio::sync::Mutex::new(()),
            cx: cx.clone(),
        });
        let pumped = session.clone();
        let events = engine.events;
        cx.spawn(async move {
            pump::run(pumped, events).await;
            Ok(())
        })
        .map_err(|e| internal(format!("cannot start the session: {e:?}")))?;
        Ok(session)
    }

    pub fn send(&self, op: Op) {
        let _ = self.input.send(Ok(op));
    }

    pub fn notify(&self, update: SessionUpdate) {
        let note = SessionNotification::new(self.id.clone(), update);
        if let Err(err) = self.cx.send_notification(note) {
            tracing::debug!("session/update not sent: {err:?}");
        }
    }

    pub fn shutdown(&self) {
        self.send(Op::Shutdown(NoFields {}));
    }

    pub async fn turn_lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.turn_lock.lock().await
    }

    pub fn modes(&self) -> SessionModeState {
        let mode = self.state.lock().expect("state lock").mode;
        mapping::modes(mode.unwrap_or(ApprovalMode::Manual))
    }

    pub fn config_options(&self) -> Vec<SessionConfigOption> {
        mapping::config_options(&self.state.lock().expect("state lock"))
    }

    /// Command names with their slash, as prompts may start with them.
    pub fn command_names(&self) -> Vec<String> {
        let state = self.state.lock().expect("state lock");
        state.commands.iter().map(|c| c.command.clone()).collect()
    }

    /// `available_commands_update`, sent after the session/new (or load)
    /// response.
    pub fn advertise_commands(&self) {
        let commands = self.state.lock().expect("state lock").commands.clone();
        self.notify(mapping::available_commands(&commands));
    }

    pub fn register_prompt(&self) -> (u64, CancelToken) {
        let mut state = self.state.lock().expect("state lock");
        state.next_prompt += 1;
        let number = state.next_prompt;
        let token = CancelToken::default();
        state.prompts.insert(number, token.clone());
        (number, token)
    }

    pub fn unregister_prompt(&self, number: u64) {
        self.state
            .lock()
            .expect("state lock")
            .prompts
            .remove(&number);
    }

    /// `session/cancel`: fires every waiting prompt's token and interrupts
    /// the engine (a no-op for the engine when no turn runs). Done under the
    /// state lock, so a turn is either started before the interrupt or sees
    /// the fired token and never starts.
    pub fn cancel(&self) {
        let state = self.state.lock().expect("state lock");
        for token in state.prompts.values() {
            token.fire();
        }
        self.send(Op::Interrupt(QueueIndexOp { index: None }));
    }

    /// Starts an engine turn unless the prompt was already cancelled.
    pub fn begin_turn(
        &self,
        msg: UserMessageOp,
        token: &CancelToken,
    ) -> Option<oneshot::Receiver<TurnEnd>> {
        let mut state = self.state.lock().expect("state lock");
        if token.is_cancelled() {
            return None;
        }
        let (done, rx) = oneshot::channel();
        state.turn = Some(ActiveTurn {
            cancel: token.clone(),
            done,
            errors: Vec::new(),
        });
        self.send(Op::UserMessage(msg));
        Some(rx)
    }

    /// Sends `ops` and waits until the engine has handled them; returns the
    /// events emitted meanwhile (`None` if the engine stopped).
    pub async fn call(&self, ops: Vec<Op>) -> Option<Vec<Event>> {
        let (done, rx) = oneshot::channel();
        {
            let mut state = self.state.lock().expect("state lock");
            state.barriers.push_back(Barrier {
                done,
                events: Vec::new(),
            });
            for op in ops {
                self.send(op);
            }
            self.send(Op::AgentRuns(NoFields {}));
        }
        rx.await.ok()
    }

    /// A `/model` command for `session/set_config_option`.
    pub fn model_command(&self, config_id: &str, value: &str) -> Result<String, Error> {
        let state = self.state.lock().expect("state lock");
        match config_id {
            mapping::MODEL_OPTION => {
                let Some(item) = state.models.iter().find(|m| m.model == value) else {
                    return Err(invalid(format!("unknown model: {value}")));
                };
                Ok(match &state.effort {
                    Some(effort) if item.reasoning_efforts.contains(effort) => {
                        format!("/model {value} {effort}")
                    }
                    _ => format!("/model {value}"),
                })
            }
            mapping::EFFORT_OPTION => {
                if !state.efforts.iter().any(|e| e == value) {
                    return Err(invalid(format!(
                        "unknown reasoning effort `{value}` for {} (expected one of: {})",
                        state.model,
                        state.efforts.join(", ")
                    )));
                }
                Ok(format!("/model {} {value}", state.model))
            }
            other => Err(invalid(format!("unknown config option: {other}"))),
        }
    }

    /// Runs a `/model` command for a config change, without the
    /// `config_option_update` the pump would otherwise send.
    pub async fn call_config(&self, command: String) -> Result<Vec<Event>, Error> {
        self.state.lock().expect("state lock").config_calls += 1;
        let events = self
            .call(vec![Op::Command(CommandOp { input: command })])
            .await;
        self.state.lock().expect("state lock").config_calls -= 1;
        events.ok_or_else(|| internal("the session's engine stopped"))
    }
}

/// Reads startup events into `state` until `stop` matches.
async fn read_until(
    events: &mut mpsc::UnboundedReceiver<Emitted>,
    state: &mut State,
    engine_id: &mut String,
    stop: impl Fn(&Event) -> bool,
) -> Result<(), Error> {
    loop {
        let Some(emitted) = events.recv().await else {
            return Err(internal("the engine stopped during start-up"));
        };
        let event = emitted.event;
        match &event {
            Event::Startup { session_id, .. } => *engine_id = session_id.clone(),
            Event::Error { message } => tracing::warn!("{message}"),
            _ => {}
        }
        apply(state, &event);
        if stop(&event) {
            return Ok(());
        }
    }
}

/// Updates what the adapter knows of the engine from one event; says
/// whether the model or effort changed.
pub fn apply(state: &mut State, event: &Event) -> bool {
    match event {
        Event::Startup {
            model,
            context_window,
            ..
        } => {
            state.model = model.clone();
            state.context_window = *context_window;
        }
        Event::ModelStatus {
            model,
            reasoning_effort,
            context_window,
            reasoning_efforts,
            ..
        } => {
            let changed = state.model != *model || state.effort != *reasoning_effort;
            state.model = model.clone();
            state.effort = reasoning_effort.clone();
            state.context_window = *context_window;
            state.efforts = reasoning_efforts.clone();
            return changed;
        }
        Event::ModelView { models, .. } => state.models = models.clone(),
        Event::CommandList { commands } => state.commands = commands.clone(),
        Event::ApprovalMode { mode } => state.mode = Some(*mode),
        _ => {}
    }
    false
}
