//! [`McpManager`]: every configured server, its state, and the background
//! tasks that connect, watch and close them.
//!
//! All state sits behind one std mutex that is never held across an await;
//! the slow work (spawning, handshakes, closing) runs in tasks, so every
//! non-async method returns at once. A connect task finishing after its
//! server was replaced or removed notices via `gen` and closes what it made.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::AbortHandle;

use crate::client::{self, Connection};
use crate::config::ServerConfig;
use crate::watch;
use crate::{McpUpdate, ServerState};

/// The MCP servers of one engine. Cheap to clone; clones share everything.
///
/// Every method must be called within a Tokio runtime (they spawn tasks).
#[derive(Clone)]
pub struct McpManager {
    pub(crate) shared: Arc<Shared>,
}

pub(crate) struct Shared {
    state: Mutex<State>,
    updates: UnboundedSender<McpUpdate>,
}

pub(crate) struct State {
    pub(crate) entries: Vec<Entry>,
    next_gen: u64,
    shut_down: bool,
}

pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) config: ServerConfig,
    /// Bumped whenever the entry is (re)started or stopped; tasks carry the
    /// value they were started with and give up when it no longer matches.
    gen: u64,
    pub(crate) phase: Phase,
    connecting: Option<AbortHandle>,
}

pub(crate) enum Phase {
    Connecting,
    Connected(Arc<Connection>),
    Failed(String),
    Disabled,
}

impl McpManager {
    /// Starts connecting every enabled server in the background, each under
    /// its startup timeout, and returns at once. [`snapshot`](Self::snapshot)
    /// then shows them `connecting` (or `disabled`); every later change is
    /// announced on `updates`.
    pub fn start(
        servers: Vec<(String, ServerConfig)>,
        updates: UnboundedSender<McpUpdate>,
    ) -> McpManager {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                entries: Vec::new(),
                next_gen: 0,
                shut_down: false,
            }),
            updates,
        });
        {
            let mut state = shared.lock();
            for (name, config) in servers {
                state.entries.retain(|e| e.name != name);
                state.entries.push(Entry {
                    name,
                    config,
                    gen: 0,
                    phase: Phase::Disabled,
                    connecting: None,
                });
            }
            for i in 0..state.entries.len() {
                shared.restart(&mut state, i);
            }
        }
        McpManager { shared }
    }

    /// Every server, in configuration order.
    pub fn snapshot(&self) -> Vec<ServerState> {
        let state = self.shared.lock();
        state
            .entries
            .iter()
            .map(|e| {
                let (label, tools, error) = match &e.phase {
                    Phase::Connecting => ("connecting", Vec::new(), None),
                    Phase::Connected(c) => {
                        let lists = c.lists.lock().unwrap_or_else(|p| p.into_inner());
                        (
                            "connected",
                            lists.tools.iter().map(|t| t.name.to_string()).collect(),
                            None,
                        )
                    }
                    Phase::Failed(message) => ("failed", Vec::new(), Some(message.clone())),
                    Phase::Disabled => ("disabled", Vec::new(), None),
                };
                ServerState {
                    name: e.name.clone(),
                    transport: e.config.transport().to_owned(),
                    state: label.to_owned(),
                    tools,
                    error,
                }
            })
            .collect()
    }

    /// Adds a server, or replaces one of the same name: the old connection
    /// is closed and the new configuration connected, in the background.
    pub fn set_server(&self, name: &str, config: ServerConfig) {
        let mut state = self.shared.lock();
        let index = match state.entries.iter().position(|e| e.name == name) {
            Some(i) => {
                state.entries[i].config = config;
                i
            }
            None => {
                let entry = Entry {
                    name: name.to_owned(),
                    config,
                    gen: 0,
                    phase: Phase::Disabled,
                    connecting: None,
                };
                state.entries.push(entry);
                state.entries.len() - 1
            }
        };
        self.shared.restart(&mut state, index);
        drop(state);
        self.shared.notify();
    }

    /// Removes a server and closes its connection. False if it is unknown.
    pub fn remove_server(&self, name: &str) -> bool {
        let mut state = self.shared.lock();
        let Some(index) = state.entries.iter().position(|e| e.name == name) else {
            return false;
        };
        let mut entry = state.entries.remove(index);
        drop(state);
        if let Some(connection) = stop(&mut entry) {
            tokio::spawn(async move { connection.close().await });
        }
        self.shared.notify();
        true
    }

    /// Enables or disables a server. Disabling closes it (state `disabled`);
    /// enabling connects it, and also retries a `failed` one. False if the
    /// name is unknown.
    pub fn toggle_server(&self, name: &str, enabled: bool) -> bool {
        let mut state = self.shared.lock();
        let Some(index) = state.entries.iter().position(|e| e.name == name) else {
            return false;
        };
        let entry = &mut state.entries[index];
        entry.config.enabled = enabled;
        if !enabled || matches!(entry.phase, Phase::Disabled | Phase::Failed(_)) {
            self.shared.restart(&mut state, index);
        }
        drop(state);
        self.shared.notify();
        true
    }

    /// Closes every connection (stdio servers get EOF, then their process
    /// group is killed) and waits for that. Servers show as `disabled`
    /// afterwards, and later `set_server`/`toggle_server` connect nothing.
    pub async fn shutdown(&self) {
        let connections: Vec<Arc<Connection>> = {
            let mut state = self.shared.lock();
            state.shut_down = true;
            state.entries.iter_mut().filter_map(stop).collect()
        };
        futures::future::join_all(connections.iter().map(|c| c.close())).await;
        self.shared.notify();
    }
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager")
            .field("servers", &self.snapshot())
            .finish()
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn notify(&self) {
        let _ = self.updates.send(McpUpdate::Changed);
    }

    /// Stops whatever entry `index` runs, then connects it again if it is
    /// enabled (and the manager is not shut down).
    fn restart(self: &Arc<Self>, state: &mut State, index: usize) {
        state.next_gen += 1;
        let gen = state.next_gen;
        let shut_down = state.shut_down;
        let entry = &mut state.entries[index];
        if let Some(old) = stop(entry) {
            tokio::spawn(async move { old.close().await });
        }
        entry.gen = gen;
        if !entry.config.enabled || shut_down {
            return;
        }
        entry.phase = Phase::Connecting;
        let (weak, name, config) = (
            Arc::downgrade(self),
            entry.name.clone(),
            entry.config.clone(),
        );
        let task = tokio::spawn(async move {
            let outcome = client::connect(&config).await;
            finish_connect(weak, name, gen, outcome).await;
        });
        entry.connecting = Some(task.abort_handle());
    }

    /// Runs `f` on the entry if it still has generation `gen`.
    pub(crate) fn with_entry(&self, name: &str, gen: u64, f: impl FnOnce(&mut Phase)) -> bool {
        let mut state = self.lock();
        match state
            .entries
            .iter_mut()
            .find(|e| e.name == name && e.gen == gen)
        {
            Some(entry) => {
                f(&mut entry.phase);
                true
            }
            None => false,
        }
    }
}

/// Stores a connect task's outcome, unless its entry moved on meanwhile.
async fn finish_connect(
    shared: Weak<Shared>,
    name: String,
    gen: u64,
    outcome: Result<
        (
            Arc<Connection>,
            tokio::sync::mpsc::UnboundedReceiver<client::Refresh>,
        ),
        String,
    >,
) {
    let Some(strong) = shared.upgrade() else {
        if let Ok((connection, _)) = outcome {
            connection.close().await;
        }
        return;
    };
    let (phase, watcher) = match outcome {
        Ok((connection, refresh)) => (
            Phase::Connected(connection.clone()),
            Some((connection, refresh)),
        ),
        Err(message) => (Phase::Failed(message), None),
    };
    let stored = strong.with_entry(&name, gen, |slot| *slot = phase);
    match watcher {
        Some((connection, refresh)) if stored => {
            watch::spawn(shared, name, gen, &connection, refresh);
        }
        Some((connection, _)) => connection.close().await,
        None => {}
    }
    if stored {
        strong.notify();
    }
}

/// Takes an entry out of service: aborts its connect task (dropping the
/// attempt kills its process group) and hands back a live connection for
/// the caller to close. The entry is left `disabled`.
fn stop(entry: &mut Entry) -> Option<Arc<Connection>> {
    if let Some(task) = entry.connecting.take() {
        task.abort();
    }
    match std::mem::replace(&mut entry.phase, Phase::Disabled) {
        Phase::Connected(connection) => {
            // End the connection's tasks now, even before `close` runs.
            connection.closed.cancel();
            Some(connection)
        }
        _ => None,
    }
}
