//! One live connection to one MCP server: spawning or dialing it, the
//! handshake, listing, calls and closing. rmcp has no timeouts of its own, so
//! every await on the server here sits under one.

use std::future::Future;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ErrorData,
    GetPromptRequestParams, GetPromptResult, Implementation, ListRootsRequestMethod, Prompt,
    ProtocolVersion, Tool,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RoleClient,
    RunningService,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, Peer, ServiceError};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio_util::sync::CancellationToken;

use crate::config::{format_secs, ServerConfig, TransportConfig};
use crate::errors::{describe, describe_init};
use crate::stderr::StderrTail;
use crate::transport::Watched;

/// How long a graceful close may take before the process group is killed.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

pub(crate) enum Request {
    CallTool(CallToolRequestParams),
    GetPrompt(GetPromptRequestParams),
}

pub(crate) enum Response {
    CallTool(CallToolResult),
    GetPrompt(GetPromptResult),
}

/// Why a request produced no result.
#[derive(Debug)]
pub(crate) enum CallError {
    /// The connection closed (on purpose, or the server went away).
    Closed,
    TimedOut,
    /// The server answered with an error, or the transport failed.
    Failed(String),
}

/// What a list-changed notification asks to re-list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refresh {
    Tools,
    Prompts,
}

/// The tools and prompts a server last listed.
#[derive(Default)]
pub(crate) struct Lists {
    pub tools: Vec<Tool>,
    pub prompts: Vec<Prompt>,
}

pub(crate) struct Connection {
    /// Taken out by `close`. Calls hold a read guard while they run, so close
    /// first cancels `closed` (which ends them) and then takes the write lock.
    service: tokio::sync::RwLock<Option<RunningService<RoleClient, Handler>>>,
    pub peer: Peer<RoleClient>,
    /// Cancelled when JuCode closes (or drops) the connection on purpose.
    pub closed: CancellationToken,
    /// Cancelled when the transport ends on its own (the server exited).
    pub transport_closed: CancellationToken,
    /// Kills the stdio server's process group when dropped: at the end of
    /// `close`, or with the connection. `None` for HTTP servers.
    group: Mutex<Option<GroupGuard>>,
    pub stderr: Option<StderrTail>,
    pub refresh_tx: UnboundedSender<Refresh>,
    pub lists: Mutex<Lists>,
}

/// Answers the server's side of the protocol. Only what JuCode implements is
/// declared (no capabilities), so servers should not ask for roots,
/// sampling or elicitation; if they do, the answers are "not supported".
pub(crate) struct Handler {
    refresh: UnboundedSender<Refresh>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("jucode", env!("CARGO_PKG_VERSION")),
        )
    }

    // rmcp's default answers an empty root list even though no roots
    // capability was declared; -32601 is what the spec asks for. (Roots are
    // deprecated by SEP-2577, hence the allow; the override still matters.)
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, ErrorData> {
        Err(ErrorData::method_not_found::<ListRootsRequestMethod>())
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.refresh.send(Refresh::Tools);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.refresh.send(Refresh::Prompts);
    }
}

/// Both eras: probe `server/discover` (2026-07-28, stateless) and fall back
/// to the `initialize` handshake (2025-11-25) for legacy servers.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    }
}

/// Starts the server, does the handshake and the first listing, all under
/// the startup timeout. The receiver yields list-changed requests.
pub(crate) async fn connect(
    config: &ServerConfig,
) -> Result<(Arc<Connection>, UnboundedReceiver<Refresh>), String> {
    let (refresh_tx, refresh_rx) = unbounded_channel();
    let handler = Handler {
        refresh: refresh_tx.clone(),
    };
    let transport_closed = CancellationToken::new();
    let mut stderr = None;
    let attempt = async {
        let (service, group) = match &config.transport {
            TransportConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut cmd = CommandWrap::with_new(command, |c| {
                    c.args(args).envs(env);
                    if let Some(cwd) = cwd {
                        c.current_dir(cwd);
                    }
                });
                // Own process group: npx/uvx wrappers and their node/python
                // children are killed together. KillOnDrop covers the case
                // where the transport is dropped outside a runtime.
                cmd.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
                // stdout is the protocol pipe and stderr is captured: a child
                // must never write to JuCode's stdout (a protocol channel) or
                // its terminal.
                let (proc, err) = TokioChildProcess::builder(cmd)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| format!("cannot start `{command}`: {e}"))?;
                // Armed before the handshake: a timeout or an abort drops the
                // attempt, and with it this guard, killing the whole group.
                let group = GroupGuard(proc.id());
                if let Some(err) = err {
                    stderr = Some(StderrTail::capture(err));
                }
                let transport = Watched::new(proc, transport_closed.clone());
                let service = handler
                    .serve_with_lifecycle(transport, lifecycle())
                    .await
                    .map_err(describe_init)?;
                (service, Some(group))
            }
            TransportConfig::Http {
                url,
                headers,
                bearer_token_env,
            } => {
                let mut http = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(var) = bearer_token_env {
                    let token = std::env::var(var)
                        .ok()
                        .filter(|t| !t.is_empty())
                        .ok_or_else(|| format!("environment variable {var} is not set"))?;
                    http = http.auth_header(token);
                }
                http = http.custom_headers(header_map(headers)?);
                let transport = StreamableHttpClientTransport::from_config(http);
                let transport = Watched::new(transport, transport_closed.clone());
                let service = handler
                    .serve_with_lifecycle(transport, lifecycle())
                    .await
                    .map_err(describe_init)?;
                (service, None)
            }
        };
        let lists = list_all(service.peer()).await?;
        Ok::<_, String>((service, group, lists))
    };
    let outcome = tokio::time::timeout(config.startup_timeout, attempt).await;
    let (service, group, lists) = match outcome {
        Ok(Ok(parts)) => parts,
        Ok(Err(message)) => return Err(with_stderr(message, stderr.as_ref()).await),
        Err(_) => {
            let message = format!(
                "timed out after {} while starting",
                format_secs(config.startup_timeout)
            );
            return Err(with_stderr(message, stderr.as_ref()).await);
        }
    };
    let connection = Connection {
        peer: service.peer().clone(),
        service: tokio::sync::RwLock::new(Some(service)),
        closed: CancellationToken::new(),
        transport_closed,
        group: Mutex::new(group),
        stderr,
        refresh_tx,
        lists: Mutex::new(lists),
    };
    Ok((Arc::new(connection), refresh_rx))
}

/// Lists tools and prompts, each only if the server declares it. The
/// caller bounds the time.
pub(crate) async fn list_all(peer: &Peer<RoleClient>) -> Result<Lists, String> {
    let caps = peer
        .peer_info()
        .map(|i| i.capabilities.clone())
        .unwrap_or_default();
    let mut lists = Lists::default();
    if caps.tools.is_some() {
        lists.tools = peer
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {}", describe(&e)))?;
    }
    if caps.prompts.is_some() {
        lists.prompts = peer
            .list_all_prompts()
            .await
            .map_err(|e| format!("prompts/list failed: {}", describe(&e)))?;
    }
    Ok(lists)
}

impl Connection {
    /// Whether the negotiated revision is the stateless one, where list
    /// changes arrive only through `subscriptions/listen`.
    pub fn is_modern(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|i| i.protocol_version >= ProtocolVersion::V_2026_07_28)
    }

    /// Sends one request under `limit`. Dropping the returned future
    /// abandons the request, and rmcp then sends `notifications/cancelled`.
    pub async fn request(&self, request: Request, limit: Duration) -> Result<Response, CallError> {
        // A close in progress must not wait for running calls, and running
        // calls must not outlive a close: both select on `closed`.
        let guard = tokio::select! {
            biased;
            _ = self.closed.cancelled() => return Err(CallError::Closed),
            guard = self.service.read() => guard,
        };
        let Some(service) = guard.as_ref() else {
            return Err(CallError::Closed);
        };
        let call: Pin<Box<dyn Future<Output = Result<Response, ServiceError>> + Send + '_>> =
            match request {
                Request::CallTool(p) => {
                    Box::pin(async move { service.call_tool(p).await.map(Response::CallTool) })
                }
                Request::GetPrompt(p) => {
                    Box::pin(async move { service.get_prompt(p).await.map(Response::GetPrompt) })
                }
            };
        tokio::select! {
            biased;
            _ = self.closed.cancelled() => Err(CallError::Closed),
            outcome = tokio::time::timeout(limit, call) => match outcome {
                Err(_) => Err(CallError::TimedOut),
                Ok(Err(ServiceError::TransportClosed)) => Err(CallError::Closed),
                Ok(Err(e)) => Err(CallError::Failed(describe(&e))),
                Ok(Ok(response)) => Ok(response),
            },
            _ = self.transport_closed.cancelled() => Err(CallError::Closed),
        }
    }

    /// Closes the session (stdin EOF / HTTP DELETE), then kills whatever is
    /// left of the process group.
    pub async fn close(&self) {
        self.closed.cancel();
        let service = self.service.write().await.take();
        if let Some(mut service) = service {
            let _ = service.close_with_timeout(CLOSE_GRACE).await;
        }
        // Whatever outlived the graceful close (grandchildren of npx/uvx,
        // a server ignoring EOF) goes with the group.
        drop(self.group.lock().unwrap_or_else(|e| e.into_inner()).take());
    }

    /// The captured stderr tail, for messages about a dead server.
    pub async fn stderr_note(&self, message: String) -> String {
        with_stderr(message, self.stderr.as_ref()).await
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Dropped without `close` (the manager itself was dropped): stop the
        // background tasks; the group guard, dropped next, kills the server.
        self.closed.cancel();
    }
}

/// SIGKILLs a process group when dropped. Synchronous on purpose: it also
/// works while the runtime shuts down, where rmcp's spawned kill may not run.
pub(crate) struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pgid) = self
            .0
            .and_then(|p| i32::try_from(p).ok())
            .filter(|p| *p > 1)
        {
            // SAFETY: kill(2) with a negative pid signals a process group; it
            // has no memory-safety preconditions. ESRCH (group gone) is fine.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

/// Appends the last stderr lines, which usually say why a server died.
async fn with_stderr(message: String, stderr: Option<&StderrTail>) -> String {
    let Some(stderr) = stderr else { return message };
    // A server that just exited may still have bytes in the pipe.
    stderr.wait_eof(Duration::from_millis(200)).await;
    match stderr.text() {
        tail if tail.is_empty() => message,
        tail => format!("{message}; stderr: {tail}"),
    }
}

fn header_map(
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<std::collections::HashMap<http::HeaderName, http::HeaderValue>, String> {
    headers
        .iter()
        .map(|(k, v)| {
            let name = http::HeaderName::try_from(k.as_str())
                .map_err(|_| format!("invalid header name `{k}`"))?;
            let value = http::HeaderValue::try_from(v.as_str())
                .map_err(|_| format!("invalid value for header `{k}`"))?;
            Ok((name, value))
        })
        .collect()
}
