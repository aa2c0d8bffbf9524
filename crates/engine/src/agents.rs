//! Subagents: child agents with their own history that run beside the
//! parent turn (`spawn_agent`, `wait_agent`, `close_agent`), and the
//! `agent_runs` / `subagent_transcript` views of them.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jucode_models::ToolSpec;
use jucode_protocol::{AgentRun, Event};
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::output::Output;
use crate::tool_calls::{Call, ToolRunner};

mod runner;
mod transcript;

pub use transcript::Transcript;

/// How many finished agents of earlier turns stay listed.
const KEEP_FINISHED: usize = 24;
/// `agent_runs` while agents work: at most this often.
const THROTTLE: Duration = Duration::from_millis(500);

pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "spawn_agent".into(),
            description: "Start a subagent that works on a self-contained task beside you, with its own context and your tools (approvals apply to its calls). Returns at once with its id; collect its result with wait_agent. Give a short task_name and a complete prompt: the agent sees nothing else.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "task_name": {"type": "string", "description": "short, lowercase, e.g. find_tests"},
                    "prompt": {"type": "string"},
                    "model": {"type": "string"},
                    "effort": {"type": "string"}
                },
                "required": ["task_name", "prompt"]
            }),
        },
        ToolSpec {
            name: "wait_agent".into(),
            description: "Wait for subagents to finish and get their results. Without ids, waits for every running subagent.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "ids": {"type": "array", "items": {"type": "string"}},
                    "timeout_seconds": {"type": "number"}
                }
            }),
        },
        ToolSpec {
            name: "close_agent".into(),
            description: "Stop a subagent that is no longer needed.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"]
            }),
        },
    ]
}

struct Entry {
    run: AgentRun,
    started: Instant,
    transcript: Transcript,
    task: Option<tokio::task::AbortHandle>,
    done: watch::Receiver<bool>,
    done_tx: watch::Sender<bool>,
}

#[derive(Default)]
struct Registry {
    agents: Vec<Entry>,
    /// Activity changed since the last `agent_runs`.
    dirty: bool,
    last_emit: Option<Instant>,
    ticker: bool,
}

/// The session's subagents. Cheap to clone.
#[derive(Clone)]
pub struct Agents {
    inner: Arc<Mutex<Registry>>,
    out: Output,
}

impl Agents {
    pub fn new(out: Output) -> Agents {
        Agents {
            inner: Arc::default(),
            out,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.inner.lock().expect("agents lock")
    }

    fn runs(registry: &Registry) -> Vec<AgentRun> {
        registry
            .agents
            .iter()
            .map(|e| {
                let mut run = e.run.clone();
                if run.state == "running" || run.state == "pending" {
                    run.duration_ms = e.started.elapsed().as_millis() as u64;
                }
                run
            })
            .collect()
    }

    /// The `agent_runs` event, now.
    pub fn emit_runs(&self) {
        let mut registry = self.lock();
        registry.dirty = false;
        registry.last_emit = Some(Instant::now());
        let agents = Self::runs(&registry);
        drop(registry);
        self.out.emit(Event::AgentRuns {
            workflows: Vec::new(),
            agents,
        });
    }

    fn lifecycle(&self, id: &str, status: &str, message: Option<String>) {
        let run = {
            let registry = self.lock();
            registry
                .agents
                .iter()
                .find(|e| e.run.id == id)
                .map(|e| e.run.clone())
        };
        if let Some(run) = run {
            self.out.emit(Event::SubagentLifecycle {
                path: run.id,
                status: status.to_string(),
                message,
                label: run.label,
                model: run.model,
                tool_use_id: run.tool_use_id,
            });
        }
        self.emit_runs();
    }

    /// Activity changed: `agent_runs` at most twice a second.
    fn touched(&self) {
        let mut registry = self.lock();
        registry.dirty = true;
        if registry.ticker {
            return;
        }
        registry.ticker = true;
        drop(registry);
        let agents = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(THROTTLE).await;
                let (dirty, running) = {
                    let r = agents.lock();
                    let running = r.agents.iter().any(|e| e.run.state == "running");
                    let due = r.last_emit.map(|t| t.elapsed() >= THROTTLE).unwrap_or(true);
                    (r.dirty && due, running)
                };
                if dirty {
                    agents.emit_runs();
                }
                if !running {
                    agents.lock().ticker = false;
                    return;
                }
            }
        });
    }

    fn update(&self, id: &str, f: impl FnOnce(&mut Entry)) {
        let mut registry = self.lock();
        if let Some(entry) = registry.agents.iter_mut().find(|e| e.run.id == id) {
            f(entry);
        }
    }

    /// A free id `/root/<task_name>`.
    fn new_id(&self, task_name: &str) -> String {
        let clean: String = task_name
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let clean = if clean.is_empty() {
            "agent".to_string()
        } else {
            clean
        };
        let registry = self.lock();
        let taken = |id: &str| registry.agents.iter().any(|e| e.run.id == id);
        let mut id = format!("/root/{clean}");
        let mut n = 2;
        while taken(&id) {
            id = format!("/root/{clean}-{n}");
            n += 1;
        }
        id
    }

    /// A new turn begins: forget all but the most recent finished agents.
    pub fn prune(&self) {
        let mut registry = self.lock();
        let finished: Vec<usize> = registry
            .agents
            .iter()
            .enumerate()
            .filter(|(_, e)| e.task.is_none())
            .map(|(i, _)| i)
            .collect();
        if finished.len() > KEEP_FINISHED {
            let drop_count = finished.len() - KEEP_FINISHED;
            let doomed: Vec<usize> = finished.into_iter().take(drop_count).collect();
            let mut i = 0;
            registry.agents.retain(|_| {
                let keep = !doomed.contains(&i);
                i += 1;
                keep
            });
        }
    }

    /// Stops every running agent (interrupt).
    pub fn close_all(&self, state: &str) {
        let ids: Vec<String> = self
            .lock()
            .agents
            .iter()
            .filter(|e| e.task.is_some())
            .map(|e| e.run.id.clone())
            .collect();
        for id in ids {
            self.finish(&id, state, None, None);
        }
    }

    /// Ends an agent: aborts its task if it still runs, records the state.
    fn finish(&self, id: &str, state: &str, result: Option<String>, error: Option<String>) {
        let mut changed = false;
        self.update(id, |e| {
            if let Some(task) = e.task.take() {
                task.abort();
                changed = true;
                e.run.state = state.to_string();
                e.run.duration_ms = e.started.elapsed().as_millis() as u64;
                e.run.result = result;
                e.run.error = error.clone();
                e.run.activity = None;
                e.transcript.finish_running();
                let _ = e.done_tx.send(true);
            }
        });
        if changed {
            self.lifecycle(id, state, error);
        }
    }

    /// `subagent_transcript` for `id`.
    pub fn transcript_event(&self, id: &str) -> Event {
        let registry = self.lock();
        match registry.agents.iter().find(|e| e.run.id == id) {
            Some(e) => Event::SubagentTranscript {
                agent_id: id.to_string(),
                items: Some(e.transcript.items()),
                error: None,
            },
            None => Event::SubagentTranscript {
                agent_id: id.to_string(),
                items: None,
                error: Some(format!("unknown agent: {id}")),
            },
        }
    }
}

/// `spawn_agent`, `wait_agent`, `close_agent`.
pub async fn run_tool(runner: &ToolRunner, call: &Call) -> (String, bool) {
    if runner.subagent_id.is_some() {
        return (
            "Subagents cannot start subagents of their own.".into(),
            true,
        );
    }
    let args: Value = match serde_json::from_str(&call.arguments) {
        Ok(v) => v,
        Err(e) => return (format!("{}: invalid JSON arguments: {e}", call.name), true),
    };
    let agents = runner.engine.agents.clone();
    match call.name.as_str() {
        "spawn_agent" => runner::spawn(&agents, runner, call, &args),
        "wait_agent" => wait(&agents, &args).await,
        _ => {
            let Some(id) = args.get("id").and_then(Value::as_str) else {
                return ("close_agent: `id` is required".into(), true);
            };
            let known = agents.lock().agents.iter().any(|e| e.run.id == id);
            if !known {
                return (format!("close_agent: unknown agent {id}"), true);
            }
            agents.finish(id, "closed", None, None);
            (format!("Closed {id}."), false)
        }
    }
}

async fn wait(agents: &Agents, args: &Value) -> (String, bool) {
    let wanted: Vec<String> = match args.get("ids").and_then(Value::as_array) {
        Some(ids) => ids
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        None => agents
            .lock()
            .agents
            .iter()
            .filter(|e| e.task.is_some())
            .map(|e| e.run.id.clone())
            .collect(),
    };
    if wanted.is_empty() {
        return ("No subagents are running.".into(), false);
    }
    let timeout = args
        .get("timeout_seconds")
        .and_then(Value::as_f64)
        .unwrap_or(600.0)
        .clamp(0.0, 3600.0);
    let mut receivers = Vec::new();
    for id in &wanted {
        match agents.lock().agents.iter().find(|e| &e.run.id == id) {
            Some(e) => receivers.push(e.done.clone()),
            None => return (format!("wait_agent: unknown agent {id}"), true),
        }
    }
    let all = async {
        for mut rx in receivers {
            let _ = rx.wait_for(|done| *done).await;
        }
    };
    let timed_out = tokio::time::timeout(Duration::from_secs_f64(timeout), all)
        .await
        .is_err();
    let registry = agents.lock();
    let mut report = Vec::new();
    for id in &wanted {
        if let Some(e) = registry.agents.iter().find(|e| &e.run.id == id) {
            let body = match (&e.run.result, &e.run.error) {
                (Some(result), _) => result.clone(),
                (None, Some(error)) => format!("error: {error}"),
                _ => String::new(),
            };
            report.push(format!("{id} ({}):\n{body}", e.run.state));
        }
    }
    if timed_out {
        report.push("(timed out; the others are still running)".into());
    }
    (report.join("\n\n"), false)
}
