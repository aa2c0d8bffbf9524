//! [`ScriptedServer`]: a real HTTP/SSE model server on 127.0.0.1 that plays back scripts.
//!
//! It is a real socket server (not an in-process fake) because the engine under test is a
//! separate `jucode` process, and because transport faults — dropped connections, stalls,
//! slow chunks — only mean something on a real connection.
//!
//! The server owns a thread with a single-threaded tokio runtime, so plain synchronous
//! `#[test]` functions can use it and nothing leaks into the caller's runtime. Dropping the
//! server stops the runtime, which cancels every connection (gated and stalled ones too).

use std::collections::{HashSet, VecDeque};
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::serve::ListenerExt;
use axum::Router;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot, watch};

use crate::render::{self, Ending, RenderCtx, StreamPlan, WireFormat};
use crate::script::{Fault, ScriptedResponse};

/// How long an aborting stream waits before killing the connection. Hyper drops bytes still
/// in its write buffer when a body errors, so the abort must come after the already-sent
/// events were flushed; on the single-threaded runtime the connection task runs (and
/// flushes) as soon as the producer sleeps, so a short pause is enough.
const ABORT_GRACE: Duration = Duration::from_millis(10);

/// One request as the server received it, recorded before any response is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    /// Path only (no query string), e.g. `/v1/responses`.
    pub path: String,
    /// Header names are lowercased; values are lossily decoded as UTF-8.
    pub headers: Vec<(String, String)>,
    /// Parsed JSON body; `Null` when empty, a JSON string holding the raw text when the body
    /// is not JSON (so a test can still see what was sent).
    pub body: Value,
}

impl RecordedRequest {
    /// First value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Log {
    requests: Vec<RecordedRequest>,
    /// Counts requests even when recording is off, so waiting still works.
    total: usize,
}

struct Shared {
    queue: Mutex<VecDeque<ScriptedResponse>>,
    repeat: AtomicBool,
    record: AtomicBool,
    log: Mutex<Log>,
    log_changed: Condvar,
    gates: watch::Sender<HashSet<String>>,
    /// Number of scripts consumed so far; the current one's number goes into generated ids.
    consumed: AtomicU64,
}

/// Locks ignoring poison: a test that panicked while holding a lock must not turn every
/// later assertion into a confusing `PoisonError`.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn record(&self, req: RecordedRequest) {
        let mut log = lock(&self.log);
        log.total += 1;
        if self.record.load(Ordering::SeqCst) {
            log.requests.push(req);
        }
        self.log_changed.notify_all();
    }

    fn pop(&self) -> Option<ScriptedResponse> {
        let mut queue = lock(&self.queue);
        let next = queue.pop_front()?;
        if self.repeat.load(Ordering::SeqCst) {
            queue.push_back(next.clone());
        }
        Some(next)
    }
}

/// Scripted model server. See the [crate docs](crate) for an example.
pub struct ScriptedServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ScriptedServer {
    /// Start on an ephemeral port.
    ///
    /// # Panics
    /// If the socket cannot be bound or the runtime cannot be built.
    pub fn start() -> ScriptedServer {
        Self::bind(0).expect("ScriptedServer: cannot bind 127.0.0.1:0")
    }

    /// Start on a fixed port (`0` = ephemeral); for the `serve-model` binary.
    pub fn bind(port: u16) -> std::io::Result<ScriptedServer> {
        // Bind synchronously so the address is known (and errors surface) before returning.
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            repeat: AtomicBool::new(false),
            record: AtomicBool::new(true),
            log: Mutex::new(Log {
                requests: Vec::new(),
                total: 0,
            }),
            log_changed: Condvar::new(),
            gates: watch::Sender::new(HashSet::new()),
            consumed: AtomicU64::new(0),
        });
        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let thread = std::thread::Builder::new()
            .name(format!("scripted-server-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(std_listener)
                        .expect("register listener")
                        .tap_io(|tcp| {
                            // Every SSE event must leave immediately (latency benchmarks).
                            let _ = tcp.set_nodelay(true);
                        });
                    tokio::select! {
                        _ = axum::serve(listener, app).into_future() => {}
                        _ = shutdown_rx => {}
                    }
                });
                // Cancel in-flight connections (gated or stalled) instead of waiting.
                runtime.shutdown_background();
            })?;
        Ok(ScriptedServer {
            shared,
            addr,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT/v1`, ready to be a provider `base_url`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Queue a response for the next POST (any route).
    pub fn push(&self, response: ScriptedResponse) {
        lock(&self.shared.queue).push_back(response);
    }

    /// Queue several responses in order.
    pub fn push_all(&self, responses: impl IntoIterator<Item = ScriptedResponse>) {
        lock(&self.shared.queue).extend(responses);
    }

    /// Responses not consumed yet; useful to assert that a test used its whole script.
    pub fn pending(&self) -> usize {
        lock(&self.shared.queue).len()
    }

    /// When on, each consumed response goes back to the end of the queue, so the script
    /// loops forever (benchmarks).
    pub fn set_repeat(&self, on: bool) {
        self.shared.repeat.store(on, Ordering::SeqCst);
    }

    /// When off, requests are counted but not kept, so long benchmarks don't grow memory.
    pub fn set_recording(&self, on: bool) {
        self.shared.record.store(on, Ordering::SeqCst);
    }

    /// Let responses gated on `name` start, now and forever after. Opening a gate before the
    /// request arrives is fine: the response then streams without waiting.
    pub fn open_gate(&self, name: &str) {
        self.shared.gates.send_modify(|gates| {
            gates.insert(name.to_string());
        });
    }

    /// Requests recorded so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.log).requests.clone()
    }

    /// Number of requests received so far (also counted when recording is off).
    pub fn request_count(&self) -> usize {
        lock(&self.shared.log).total
    }

    /// Block until at least `n` requests were received, then return the recorded ones
    /// (all of them, not just `n`; none if recording is off).
    ///
    /// # Panics
    /// On timeout, naming what did arrive.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let deadline = Instant::now() + timeout;
        let mut log = lock(&self.shared.log);
        while log.total < n {
            let now = Instant::now();
            if now >= deadline {
                let got: Vec<String> = log
                    .requests
                    .iter()
                    .map(|r| format!("{} {}", r.method, r.path))
                    .collect();
                panic!(
                    "ScriptedServer: timed out after {timeout:?} waiting for {n} request(s); \
                     received {}: {got:?}",
                    log.total
                );
            }
            log = self
                .shared
                .log_changed
                .wait_timeout(log, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        log.requests.clone()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    // No size limit: compaction tests send large histories.
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let body = parse_body(&bytes);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("test-model")
        .to_string();
    let path = parts.uri.path().to_string();
    shared.record(RecordedRequest {
        method: parts.method.to_string(),
        path: path.clone(),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
                (k.as_str().to_ascii_lowercase(), value)
            })
            .collect(),
        body,
    });

    let Some(format) = WireFormat::from_path(&path) else {
        return json_error(StatusCode::NOT_FOUND, &format!("no route for {path}"));
    };
    if parts.method != Method::POST {
        return json_error(StatusCode::METHOD_NOT_ALLOWED, "only POST is scripted");
    }
    let Some(script) = shared.pop() else {
        // 418: no client retries it, so a missing script fails the test fast.
        return json_error(StatusCode::IM_A_TEAPOT, "no scripted response left");
    };
    let n = shared.consumed.fetch_add(1, Ordering::SeqCst) + 1;

    if let Some(gate) = &script.gate {
        let mut gates = shared.gates.subscribe();
        // The sender lives in `shared`, so this only returns once the gate is open.
        let _ = gates.wait_for(|open| open.contains(gate)).await;
    }

    if let Some(Fault::Status {
        code,
        retry_after,
        retry_after_ms,
        body,
    }) = &script.fault
    {
        let status = StatusCode::from_u16(*code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(v) = retry_after {
            resp = resp.header(header::RETRY_AFTER, v.as_str());
        }
        if let Some(ms) = retry_after_ms {
            resp = resp.header("retry-after-ms", ms.to_string());
        }
        let body = body
            .clone()
            .unwrap_or_else(|| render::error_body(format, *code));
        return resp.body(Body::from(body)).expect("valid status response");
    }

    let plan = render::plan(format, &script, &RenderCtx { n, model });
    stream(plan)
}

/// Streams the plan through a channel so each SSE event becomes its own body chunk, written
/// as soon as it is produced.
fn stream(plan: StreamPlan) -> Response {
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::spawn(produce(plan, tx));
    let body = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let mut resp = Response::new(Body::from_stream(body));
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

async fn produce(plan: StreamPlan, tx: mpsc::Sender<Result<Bytes, std::io::Error>>) {
    for (i, frame) in plan.frames.into_iter().enumerate() {
        if i > 0 && !plan.delay.is_zero() {
            tokio::time::sleep(plan.delay).await;
        }
        if tx.send(Ok(Bytes::from(frame.text))).await.is_err() {
            return; // client went away
        }
    }
    let abort = match plan.ending {
        Ending::Clean => return,
        Ending::Abort => ABORT_GRACE,
        Ending::StallThenAbort(silence) => silence.max(ABORT_GRACE),
    };
    tokio::time::sleep(abort).await;
    // A body error makes hyper close the socket without the final chunk: an abrupt drop.
    let err = std::io::Error::new(
        std::io::ErrorKind::ConnectionAborted,
        "scripted connection drop",
    );
    let _ = tx.send(Err(err)).await;
}

fn parse_body(bytes: &[u8]) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

fn json_error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": "invalid_request_error"}});
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .expect("valid error response")
}
