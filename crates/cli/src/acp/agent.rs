//! The ACP request handlers. Each one answers at once or moves its waiting
//! into `cx.spawn` (handlers run one at a time in the dispatch loop, and a
//! spawned task that returns `Err` would end the connection, so every task
//! answers errors through its responder and returns `Ok`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentChunk, Implementation, InitializeRequest,
    InitializeResponse, ListSessionsRequest, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, SessionCapabilities, SessionListCapabilities, SessionNotification,
    SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse, StopReason,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, Client, ConnectTo, Error, ErrorCode};
use jucode_protocol::{ApprovalMode, CommandOp, Op, SetApprovalModeOp};
use jucode_store::StoreError;

use super::mapping;
use super::prompt::{self, PromptInput};
use super::replay;
use super::session::{AcpSession, CancelToken, TurnEnd};
use crate::args::GlobalArgs;

/// The agent: global flags, live sessions, and a scratch folder for images
/// and blobs that arrive inline in prompts.
#[derive(Clone)]
pub struct JucodeAcp {
    inner: Arc<Inner>,
}

struct Inner {
    global: GlobalArgs,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
    scratch: tempfile::TempDir,
}

pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

pub(crate) fn internal(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message)
}

impl JucodeAcp {
    pub fn new(global: GlobalArgs) -> Result<JucodeAcp, String> {
        let scratch = tempfile::Builder::new()
            .prefix("jucode-acp-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
        Ok(JucodeAcp {
            inner: Arc::new(Inner {
                global,
                sessions: Mutex::new(HashMap::new()),
                scratch,
            }),
        })
    }

    fn session(&self, id: &str) -> Result<Arc<AcpSession>, Error> {
        self.inner
            .sessions
            .lock()
            .expect("sessions lock")
            .get(id)
            .cloned()
            .ok_or_else(|| invalid(format!("unknown session: {id}")))
    }

    fn insert(&self, session: Arc<AcpSession>) {
        self.inner
            .sessions
            .lock()
            .expect("sessions lock")
            .insert(session.id.clone(), session);
    }

    /// Stops every engine (stdin EOF).
    pub fn shutdown(&self) {
        let sessions: Vec<_> = self
            .inner
            .sessions
            .lock()
            .expect("sessions lock")
            .drain()
            .collect();
        for (_, session) in sessions {
            session.shutdown();
        }
    }

    fn initialize(&self, _req: &InitializeRequest) -> InitializeResponse {
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true))
            .session_capabilities(SessionCapabilities::new().list(SessionListCapabilities::new()));
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .agent_info(
                Implementation::new("jucode", env!("CARGO_PKG_VERSION"))
                    .title("JuCode".to_string()),
            )
    }

    /// `session/new`: starts an engine in `cwd`, answers, then advertises
    /// the slash commands.
    async fn new_session(
        &self,
        req: NewSessionRequest,
        cx: &ConnectionTo<Client>,
    ) -> Result<(NewSessionResponse, Arc<AcpSession>), Error> {
        warn_mcp(req.mcp_servers.len());
        let session =
            AcpSession::start(&self.inner.global, req.cwd.clone(), None, cx.clone()).await?;
        self.insert(session.clone());
        let response = NewSessionResponse::new(session.id.clone())
            .modes(session.modes())
            .config_options(session.config_options());
        Ok((response, session))
    }

    /// `session/load`: replays the stored history, then answers. A session
    /// that is already live in this process is reused (no second engine).
    async fn load_session(
        &self,
        req: LoadSessionRequest,
        cx: &ConnectionTo<Client>,
    ) -> Result<(LoadSessionResponse, Arc<AcpSession>), Error> {
        warn_mcp(req.mcp_servers.len());
        let id = req.session_id.0.to_string();
        let store = replay::store();
        let loaded = store.load(&id).map_err(|e| match e {
            StoreError::NotFound(_) => Error::new(ErrorCode::RESOURCE_NOT_FOUND, e.to_string()),
            other => internal(other.to_string()),
        })?;
        let session = match self.session(&id) {
            Ok(live) => live,
            Err(_) => {
                let s = AcpSession::start(
                    &self.inner.global,
                    req.cwd.clone(),
                    Some(id.clone()),
                    cx.clone(),
                )
                .await?;
                self.insert(s.clone());
                s
            }
        };
        let cwd = PathBuf::from(&loaded.header.cwd);
        for update in replay::history_updates(&loaded, &cwd) {
            let _ = cx.send_notification(SessionNotification::new(id.clone(), update));
        }
        let response = LoadSessionResponse::new()
            .modes(session.modes())
            .config_options(session.config_options());
        Ok((response, session))
    }

    fn set_mode(&self, req: SetSessionModeRequest) -> Result<SetSessionModeResponse, Error> {
        let session = self.session(&req.session_id.0)?;
        let mode: ApprovalMode = req
            .mode_id
            .0
            .parse()
            .map_err(|e: String| invalid(format!("unknown mode: {e}")))?;
        session.send(Op::SetApprovalMode(SetApprovalModeOp { mode }));
        Ok(SetSessionModeResponse::new())
    }

    /// `session/set_config_option`: `model` or `reasoning_effort`, applied
    /// with `/model NAME [EFFORT]`.
    async fn set_config_option(
        &self,
        req: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let session = self.session(&req.session_id.0)?;
        let value = req
            .value
            .as_value_id()
            .map(|v| v.0.to_string())
            .ok_or_else(|| invalid("expected a value id"))?;
        let command = session.model_command(&req.config_id.0, &value)?;
        let events = session.call_config(command).await?;
        if let Some(message) = events.iter().find_map(|e| match e {
            jucode_protocol::Event::Error { message } => Some(message.clone()),
            _ => None,
        }) {
            return Err(invalid(message));
        }
        Ok(SetSessionConfigOptionResponse::new(
            session.config_options(),
        ))
    }

    /// One prompt, from queueing behind the previous one to its stop reason.
    async fn prompt(
        session: Arc<AcpSession>,
        input: PromptInput,
        token: CancelToken,
        cx: &ConnectionTo<Client>,
    ) -> Result<StopReason, Error> {
        let _turn = session.turn_lock().await;
        match input {
            PromptInput::Message(msg) => {
                let Some(done) = session.begin_turn(msg, &token) else {
                    return Ok(StopReason::Cancelled);
                };
                let end = done.await.unwrap_or(TurnEnd::Closed);
                if token.is_cancelled() {
                    return Ok(StopReason::Cancelled);
                }
                match end {
                    TurnEnd::Interrupted => Ok(StopReason::Cancelled),
                    TurnEnd::Closed => Err(internal("the session's engine stopped")),
                    TurnEnd::Ready { errors } if errors.is_empty() => Ok(StopReason::EndTurn),
                    TurnEnd::Ready { errors } => Err(internal(errors.join("\n"))),
                }
            }
            PromptInput::Command(input) => {
                let text = if matches!(input.split_whitespace().next(), Some("/quit" | "/exit")) {
                    "Close the session in your editor to end it; /quit and /exit are not used over ACP.".to_string()
                } else {
                    let events = session
                        .call(vec![Op::Command(CommandOp { input })])
                        .await
                        .ok_or_else(|| internal("the session's engine stopped"))?;
                    mapping::render_command_answer(&events)
                };
                if !text.is_empty() {
                    let chunk = SessionUpdate::AgentMessageChunk(ContentChunk::new(text.into()));
                    let _ =
                        cx.send_notification(SessionNotification::new(session.id.clone(), chunk));
                }
                if token.is_cancelled() {
                    Ok(StopReason::Cancelled)
                } else {
                    Ok(StopReason::EndTurn)
                }
            }
        }
    }
}

/// Answers `session/new` or `session/load`, then sends the session's
/// `available_commands_update`: updates for a session go after its response.
fn respond_then_advertise<R: agent_client_protocol::JsonRpcResponse>(
    result: Result<(R, Arc<AcpSession>), Error>,
    responder: agent_client_protocol::v1::Responder<R>,
) {
    match result {
        Ok((response, session)) => {
            let _ = responder.respond(response);
            session.advertise_commands();
        }
        Err(err) => {
            let _ = responder.respond_with_error(err);
        }
    }
}

fn warn_mcp(count: usize) {
    if count > 0 {
        tracing::warn!(
            "the client passed {count} MCP server(s); client-provided servers are not supported yet, so they are ignored (the servers of config.toml are used)"
        );
    }
}

impl ConnectTo<Client> for JucodeAcp {
    async fn connect_to(self, client: impl ConnectTo<Agent>) -> Result<(), Error> {
        let (a1, a2, a3, a5, a6, a7, a8) = (
            self.clone(),
            self.clone(),
            self.clone(),
            self.clone(),
            self.clone(),
            self.clone(),
            self.clone(),
        );
        Agent
            .v1()
            .name("jucode")
            .on_receive_request(
                async move |req: InitializeRequest, responder, _cx| {
                    responder.respond(a1.initialize(&req))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |req: NewSessionRequest, responder, cx: ConnectionTo<Client>| {
                    let agent = a2.clone();
                    let task_cx = cx.clone();
                    cx.spawn(async move {
                        respond_then_advertise(agent.new_session(req, &task_cx).await, responder);
                        Ok(())
                    })
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |req: LoadSessionRequest, responder, cx: ConnectionTo<Client>| {
                    let agent = a3.clone();
                    let task_cx = cx.clone();
                    cx.spawn(async move {
                        respond_then_advertise(agent.load_session(req, &task_cx).await, responder);
                        Ok(())
                    })
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |req: ListSessionsRequest, responder, _cx| {
                    responder.respond_with_result(replay::list_sessions(&req))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |req: PromptRequest, responder, cx: ConnectionTo<Client>| {
                    let session = match a5.session(&req.session_id.0) {
                        Ok(session) => session,
                        Err(err) => return responder.respond_with_error(err),
                    };
                    let input = match prompt::convert(
                        req.prompt,
                        a5.inner.scratch.path(),
                        &session.command_names(),
                    ) {
                        Ok(input) => input,
                        Err(message) => return responder.respond_with_error(invalid(message)),
                    };
                    // The cancel token exists before anything awaits, so a
                    // session/cancel right behind this prompt always finds it.
                    let (number, token) = session.register_prompt();
                    let task_cx = cx.clone();
                    cx.spawn(async move {
                        let result =
                            JucodeAcp::prompt(session.clone(), input, token, &task_cx).await;
                        session.unregister_prompt(number);
                        let _ = responder.respond_with_result(result.map(PromptResponse::new));
                        Ok(())
                    })
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_notification(
                async move |note: CancelNotification, _cx| {
                    if let Ok(session) = a6.session(&note.session_id.0) {
                        session.cancel();
                    }
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |req: SetSessionModeRequest, responder, _cx| {
                    responder.respond_with_result(a7.set_mode(req))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |req: SetSessionConfigOptionRequest,
                            responder,
                            cx: ConnectionTo<Client>| {
                    let agent = a8.clone();
                    cx.spawn(async move {
                        let _ = responder.respond_with_result(agent.set_config_option(req).await);
                        Ok(())
                    })
                },
                agent_client_protocol::on_receive_request!(),
            )
            .connect_to(client)
            .await
    }
}
