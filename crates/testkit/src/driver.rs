//! [`Driver`]: runs the `jucode` binary and speaks its line protocol (JSON ops on stdin, one
//! JSON event per stdout line).
//!
//! Reading happens on background threads so a test can wait for an event with a timeout
//! instead of blocking forever on a hung engine, and so a chatty stderr can never fill its
//! pipe and deadlock the child. Every wait that fails panics with the full event history and
//! stderr, because on CI that is all there is to debug with.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::home::{TestHome, TEST_API_KEY, TEST_API_KEY_ENV};

/// Generous default for waits: CI runs on two slow cores.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Builder for a [`Driver`]; created by [`Driver::new`].
pub struct DriverBuilder {
    cmd: Command,
}

impl DriverBuilder {
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.cmd.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.cmd.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.cmd.env_remove(key);
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cmd.current_dir(dir);
        self
    }

    /// Point the engine at a [`TestHome`]: `JUCODE_HOME`, the test API key variable, and the
    /// home's workspace as working directory.
    pub fn home(self, home: &TestHome) -> Self {
        self.env("JUCODE_HOME", home.path())
            .env(TEST_API_KEY_ENV, TEST_API_KEY)
            .current_dir(home.workspace())
    }

    /// Start the process with all three standard streams piped.
    ///
    /// # Panics
    /// If the binary cannot be started.
    pub fn spawn(mut self) -> Driver {
        let mut child = self
            .cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {:?}: {e}", self.cmd.get_program()));
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");

        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("driver-stdout".into())
            .spawn(move || read_stdout(stdout, tx))
            .expect("spawn stdout reader");

        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = stderr.clone();
        std::thread::Builder::new()
            .name("driver-stderr".into())
            .spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n) = stderr_pipe.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    sink.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend_from_slice(&buf[..n]);
                }
            })
            .expect("spawn stderr reader");

        Driver {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            stdout_closed: false,
            seen: Vec::new(),
            stderr,
            exit: None,
        }
    }
}

enum Line {
    Event(Value),
    /// A stdout line that is not JSON: a protocol violation the test must fail on.
    Invalid(String),
}

fn read_stdout(stdout: impl Read, tx: mpsc::Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim_end_matches(['\n', '\r']);
        let line = match serde_json::from_str::<Value>(text) {
            Ok(value) => Line::Event(value),
            Err(_) => Line::Invalid(text.to_string()),
        };
        if tx.send(line).is_err() {
            return;
        }
    }
}

/// A running `jucode` process. The child is killed when the driver is dropped.
pub struct Driver {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    stdout_closed: bool,
    seen: Vec<Value>,
    stderr: Arc<Mutex<Vec<u8>>>,
    exit: Option<ExitStatus>,
}

impl Driver {
    /// Start building a driver for the binary at `bin` (see [`locate_bin`]).
    #[allow(clippy::new_ret_no_self)]
    pub fn new(bin: impl AsRef<OsStr>) -> DriverBuilder {
        DriverBuilder {
            cmd: Command::new(bin),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Write one op as a JSON line.
    pub fn send(&mut self, op: &Value) {
        self.send_raw(&op.to_string());
    }

    /// Write `text` plus `\n` verbatim (for malformed-input tests).
    ///
    /// # Panics
    /// If stdin was closed or the process is gone.
    pub fn send_raw(&mut self, text: &str) {
        let result = match self.stdin.as_mut() {
            None => panic!("send after close_stdin"),
            Some(stdin) => stdin
                .write_all(text.as_bytes())
                .and_then(|_| stdin.write_all(b"\n"))
                .and_then(|_| stdin.flush()),
        };
        if let Err(e) = result {
            panic!("cannot write to jucode stdin: {e}\n{}", self.context());
        }
    }

    /// Close stdin (EOF), which asks the engine to shut down.
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Next event, or `None` on timeout or once stdout is closed (see
    /// [`Self::is_stdout_closed`]).
    ///
    /// # Panics
    /// If the engine wrote a line that is not JSON.
    pub fn next(&mut self, timeout: Duration) -> Option<Value> {
        if self.stdout_closed {
            return None;
        }
        match self.lines.recv_timeout(timeout) {
            Ok(Line::Event(value)) => {
                self.seen.push(value.clone());
                Some(value)
            }
            Ok(Line::Invalid(line)) => {
                panic!(
                    "jucode wrote a non-JSON line on stdout: {line:?}\n{}",
                    self.context()
                )
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                self.stdout_closed = true;
                None
            }
        }
    }

    /// True once stdout reached EOF and every line was consumed.
    pub fn is_stdout_closed(&self) -> bool {
        self.stdout_closed
    }

    /// Skip events until one matches and return it (skipped ones stay in [`Self::seen`]).
    ///
    /// # Panics
    /// On timeout or EOF, listing every event seen so far and stderr.
    pub fn wait_for(&mut self, pred: impl FnMut(&Value) -> bool, timeout: Duration) -> Value {
        self.collect_until(pred, timeout)
            .pop()
            .expect("collect_until returns the match")
    }

    /// Wait for the next event whose `type` is `kind`.
    pub fn wait_type(&mut self, kind: &str, timeout: Duration) -> Value {
        self.wait_for(
            |v| v.get("type").and_then(Value::as_str) == Some(kind),
            timeout,
        )
    }

    /// All events from now up to and including the first match.
    ///
    /// # Panics
    /// On timeout or EOF, listing every event seen so far and stderr.
    pub fn collect_until(
        &mut self,
        mut pred: impl FnMut(&Value) -> bool,
        timeout: Duration,
    ) -> Vec<Value> {
        let deadline = Instant::now() + timeout;
        let mut out = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left) {
                Some(event) => {
                    let hit = pred(&event);
                    out.push(event);
                    if hit {
                        return out;
                    }
                }
                None if self.stdout_closed => {
                    let status = self.child.try_wait().ok().flatten();
                    panic!(
                        "jucode closed stdout (exit status: {status:?}) before the awaited \
                         event\n{}",
                        self.context()
                    );
                }
                None => panic!(
                    "timed out after {timeout:?} waiting for an event\n{}",
                    self.context()
                ),
            }
        }
    }

    /// Every event received so far, in order.
    pub fn seen(&self) -> &[Value] {
        &self.seen
    }

    /// Everything the process wrote on stderr so far.
    pub fn stderr(&self) -> String {
        let buf = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&buf).into_owned()
    }

    /// Wait for the process to exit.
    ///
    /// # Panics
    /// On timeout, after killing the process.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_wait() {
                return status;
            }
            if Instant::now() >= deadline {
                self.kill();
                panic!(
                    "jucode did not exit within {timeout:?} (killed)\n{}",
                    self.context()
                );
            }
            // std has no timed wait on a child; a short poll is the portable option.
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Exit status if the process has exited.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = self.child.try_wait().ok().flatten();
        }
        self.exit
    }

    /// SIGKILL the process and reap it (a no-op if it already exited).
    pub fn kill(&mut self) {
        if self.try_wait().is_none() {
            let _ = self.child.kill();
            self.exit = self.child.wait().ok();
        }
    }

    fn context(&self) -> String {
        let mut out = format!("--- {} event(s) seen ---\n", self.seen.len());
        for event in &self.seen {
            out.push_str(&event.to_string());
            out.push('\n');
        }
        out.push_str("--- stderr ---\n");
        out.push_str(&self.stderr());
        out
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Find a workspace binary next to the running test executable (`target/<profile>/NAME`),
/// unless the env var `NAME_BIN` (uppercased, `-` → `_`, e.g. `JUCODE_BIN`) names one. In
/// the crate that defines the binary, prefer `env!("CARGO_BIN_EXE_<name>")`.
///
/// # Panics
/// If the binary is not found; it must be built first (`cargo build -p jucode-cli`).
pub fn locate_bin(name: &str) -> PathBuf {
    let var = format!("{}_BIN", name.to_ascii_uppercase().replace('-', "_"));
    if let Some(path) = std::env::var_os(&var) {
        return PathBuf::from(path);
    }
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let exe = std::env::current_exe().expect("current_exe");
    // Test binaries live in target/<profile>/deps, binaries in target/<profile>.
    for dir in exe.ancestors().skip(1).take(3) {
        let candidate = dir.join(&file);
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!("cannot find the `{name}` binary near {exe:?}; build it first or set {var}");
}
