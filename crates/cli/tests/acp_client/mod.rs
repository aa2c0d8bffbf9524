//! A real ACP client (the `agent-client-protocol` crate's own client side)
//! driving `jucode acp` as a child process, plus what it saw.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse,
    PromptRequest, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, TextContent,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{AcpAgent, AcpAgentConfig, Agent, Client, Error, LineDirection};
use jucode_testkit::{ScriptedServer, TestHome};
use serde_json::Value;
use tokio::sync::Notify;

pub const T: Duration = Duration::from_secs(30);

/// How the client answers the next permission request.
pub enum Answer {
    Pick(&'static str),
    /// Never answer (keep the request pending).
    Hold,
}

#[derive(Default)]
pub struct Seen {
    /// `session/update` params, as JSON.
    pub updates: Mutex<Vec<Value>>,
    /// Every line the agent wrote to stdout.
    pub stdout: Mutex<Vec<String>>,
    /// `session/request_permission` params, as JSON.
    pub permissions: Mutex<Vec<Value>>,
    answers: Mutex<VecDeque<Answer>>,
    held: Mutex<Vec<Responder<RequestPermissionResponse>>>,
    changed: Notify,
}

impl Seen {
    fn touch(&self) {
        self.changed.notify_waiters();
    }
}

/// A scripted model server, a profile pointing at it, and extra flags for
/// `jucode acp`.
pub struct Acp {
    pub server: ScriptedServer,
    pub home: TestHome,
    pub args: Vec<String>,
}

impl Acp {
    pub fn new() -> Acp {
        let server = ScriptedServer::start();
        let home = TestHome::with_server(&server, "responses");
        Acp {
            server,
            home,
            args: Vec::new(),
        }
    }

    pub fn arg(mut self, arg: &str) -> Acp {
        self.args.push(arg.to_string());
        self
    }

    /// Runs `body` against a fresh `jucode acp` process. Permission requests
    /// are answered from `answers` in order (then `allow_once`). Afterwards
    /// checks that stdout held nothing but JSON-RPC frames.
    pub fn run<R>(
        &self,
        answers: Vec<Answer>,
        body: impl AsyncFnOnce(Ctx) -> Result<R, Error>,
    ) -> (R, Arc<Seen>) {
        let seen = Arc::new(Seen::default());
        *seen.answers.lock().unwrap() = answers.into();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let config = AcpAgentConfig::new(env!("CARGO_BIN_EXE_jucode"))
            .arg("acp")
            .args(self.args.clone())
            .env("JUCODE_HOME", self.home.path().display().to_string())
            .env("JUCODE_TEST_KEY", "sk-test-secret-key");
        let tap = seen.clone();
        let agent = AcpAgent::new(config).with_debug(move |line, direction| match direction {
            LineDirection::Stdout => tap.stdout.lock().unwrap().push(line.to_string()),
            LineDirection::Stderr => eprintln!("[jucode acp] {line}"),
            LineDirection::Stdin => {}
        });
        let (on_update, on_permission) = (seen.clone(), seen.clone());
        let ctx = Ctx {
            seen: seen.clone(),
            workspace: self.home.workspace().to_path_buf(),
            cx: None,
        };
        let client = Client
            .v1()
            .on_receive_notification(
                async move |note: SessionNotification, _cx| {
                    let value = serde_json::to_value(&note).unwrap();
                    on_update.updates.lock().unwrap().push(value);
                    on_update.touch();
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |req: RequestPermissionRequest,
                            responder: Responder<RequestPermissionResponse>,
                            _cx| {
                    let seen = &on_permission;
                    seen.permissions
                        .lock()
                        .unwrap()
                        .push(serde_json::to_value(&req).unwrap());
                    seen.touch();
                    let answer = seen.answers.lock().unwrap().pop_front();
                    match answer.unwrap_or(Answer::Pick("allow_once")) {
                        Answer::Pick(id) => responder.respond(RequestPermissionResponse::new(
                            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
                        )),
                        Answer::Hold => {
                            seen.held.lock().unwrap().push(responder);
                            Ok(())
                        }
                    }
                },
                agent_client_protocol::on_receive_request!(),
            );
        let result = runtime.block_on(async {
            tokio::time::timeout(
                Duration::from_secs(90),
                client.connect_with(agent, async move |cx: ConnectionTo<Agent>| {
                    body(Ctx {
                        cx: Some(cx),
                        ..ctx
                    })
                    .await
                }),
            )
            .await
        });
        let result = result
            .expect("the ACP conversation timed out")
            .unwrap_or_else(|e| panic!("ACP error: {e:?}"));
        seen.held.lock().unwrap().clear();
        assert_stdout_is_jsonrpc(&seen.stdout.lock().unwrap());
        (result, seen)
    }
}

/// Every stdout line is one JSON-RPC 2.0 message.
pub fn assert_stdout_is_jsonrpc(lines: &[String]) {
    assert!(!lines.is_empty(), "the agent wrote nothing");
    for line in lines {
        let value: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
        assert_eq!(value["jsonrpc"], "2.0", "not JSON-RPC 2.0: {line}");
        assert!(
            value.get("id").is_some() || value.get("method").is_some(),
            "neither a request, a response nor a notification: {line}"
        );
    }
}

pub struct Ctx {
    cx: Option<ConnectionTo<Agent>>,
    pub seen: Arc<Seen>,
    pub workspace: PathBuf,
}

impl Ctx {
    pub fn cx(&self) -> &ConnectionTo<Agent> {
        self.cx.as_ref().unwrap()
    }

    pub async fn init(&self) -> InitializeResponse {
        self.cx()
            .send_request(InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await
            .expect("initialize")
    }

    /// `initialize` then `session/new` in the workspace; returns the id.
    pub async fn session(&self) -> String {
        self.init().await;
        let resp = self.new_session().await;
        resp.session_id.0.to_string()
    }

    pub async fn new_session(&self) -> NewSessionResponse {
        self.cx()
            .send_request(NewSessionRequest::new(self.workspace.clone()))
            .block_task()
            .await
            .expect("session/new")
    }

    pub async fn prompt_blocks(
        &self,
        session: &str,
        blocks: Vec<ContentBlock>,
    ) -> Result<PromptResponse, Error> {
        self.cx()
            .send_request(PromptRequest::new(session.to_string(), blocks))
            .block_task()
            .await
    }

    pub async fn prompt(&self, session: &str, text: &str) -> Result<PromptResponse, Error> {
        self.prompt_blocks(session, vec![ContentBlock::Text(TextContent::new(text))])
            .await
    }

    /// Waits until `pred` holds for the updates seen so far.
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&[Value]) -> bool) {
        self.wait(what, || pred(&self.seen.updates.lock().unwrap()))
            .await
    }

    /// Waits until `n` permission requests arrived.
    pub async fn wait_permissions(&self, n: usize) {
        self.wait("permission requests", || {
            self.seen.permissions.lock().unwrap().len() >= n
        })
        .await
    }

    async fn wait(&self, what: &str, ok: impl Fn() -> bool) {
        let deadline = Instant::now() + T;
        loop {
            let notified = self.seen.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if ok() {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if tokio::time::timeout(left, notified).await.is_err() {
                panic!(
                    "timed out waiting for {what}; updates: {:#?}",
                    self.seen.updates.lock().unwrap()
                );
            }
        }
    }

    pub fn updates(&self) -> Vec<Value> {
        self.seen.updates.lock().unwrap().clone()
    }
}

/// The `update` objects of one kind (`sessionUpdate`).
pub fn of_kind(updates: &[Value], kind: &str) -> Vec<Value> {
    updates
        .iter()
        .filter(|u| u["update"]["sessionUpdate"] == kind)
        .map(|u| u["update"].clone())
        .collect()
}

/// The text of every chunk of one kind, concatenated.
pub fn chunk_text(updates: &[Value], kind: &str) -> String {
    of_kind(updates, kind)
        .iter()
        .filter_map(|u| u["content"]["text"].as_str().map(str::to_string))
        .collect()
}

/// Polls (async) until the server received `n` requests.
pub async fn requests_reach(server: &ScriptedServer, n: usize) {
    let deadline = Instant::now() + T;
    while server.request_count() < n {
        assert!(
            Instant::now() < deadline,
            "the model server got {} of {n} requests",
            server.request_count()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
