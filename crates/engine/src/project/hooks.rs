//! Hooks: shell commands the user or the project runs at points of a
//! session, from `$JUCODE_HOME/hooks.toml` (profile) and `.jucode/hooks.toml`
//! (project, behind trust):
//!
//! ```toml
//! [[pre_tool_use]]
//! matcher = "bash|edit"     # tool names; `*` and `?` wildcards; absent = every tool
//! command = "./scripts/check-call"
//! timeout = 10              # seconds (default 10)
//! ```
//!
//! Events: `session_start`, `user_prompt_submit`, `pre_tool_use`,
//! `post_tool_use`, `stop`. Each hook runs as `bash -c COMMAND` in the
//! session's folder, in its own process group, with a JSON payload on stdin
//! and stdout/stderr captured (never inherited: our stdout is the protocol
//! channel). At its timeout, or when it ends, its process group is killed.
//! Exit code 2 blocks a prompt (`user_prompt_submit`) or a tool call
//! (`pre_tool_use`); other failures are reported as `info` and ignored.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use jucode_models::HistoryItem;
use jucode_protocol::Event;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{sleep_until, Instant};

use crate::output::Output;
use crate::tool_calls::Call;

pub const FILE_NAME: &str = "hooks.toml";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_TIMEOUT_SECS: f64 = 3600.0;
/// Captured output kept per stream.
const MAX_CAPTURE: usize = 64 * 1024;
/// After the hook exits, how long output still in flight is read.
const DRAIN_GRACE: Duration = Duration::from_millis(200);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    Stop,
}

impl HookEvent {
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session_start",
            HookEvent::UserPromptSubmit => "user_prompt_submit",
            HookEvent::PreToolUse => "pre_tool_use",
            HookEvent::PostToolUse => "post_tool_use",
            HookEvent::Stop => "stop",
        }
    }
}

/// One configured hook.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    pub event: HookEvent,
    pub command: String,
    pub timeout: Duration,
    /// Tool-name pattern (`pre_tool_use`, `post_tool_use` only).
    pub matcher: Option<String>,
    /// From a project's `.jucode/hooks.toml` (not the profile's).
    pub project: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HooksFile {
    #[serde(default)]
    session_start: Vec<RawHook>,
    #[serde(default)]
    user_prompt_submit: Vec<RawHook>,
    #[serde(default)]
    pre_tool_use: Vec<RawHook>,
    #[serde(default)]
    post_tool_use: Vec<RawHook>,
    #[serde(default)]
    stop: Vec<RawHook>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHook {
    command: String,
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(default)]
    matcher: Option<String>,
}

/// The hooks of one `hooks.toml` (none when it does not exist), or why the
/// file cannot be used (then none of its hooks run).
pub fn load_file(path: &Path, project: bool) -> Result<Vec<Hook>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}; its hooks are off", path.display())),
    };
    let file: HooksFile = toml::from_str(&text).map_err(|e| {
        format!(
            "{}: {}; its hooks are off",
            path.display(),
            e.message().trim()
        )
    })?;
    let mut hooks = Vec::new();
    let groups = [
        (HookEvent::SessionStart, file.session_start),
        (HookEvent::UserPromptSubmit, file.user_prompt_submit),
        (HookEvent::PreToolUse, file.pre_tool_use),
        (HookEvent::PostToolUse, file.post_tool_use),
        (HookEvent::Stop, file.stop),
    ];
    for (event, raws) in groups {
        for raw in raws {
            let timeout = match raw.timeout {
                None => DEFAULT_TIMEOUT,
                Some(t) if t.is_finite() && t > 0.0 => {
                    Duration::from_secs_f64(t.min(MAX_TIMEOUT_SECS))
                }
                Some(t) => {
                    return Err(format!(
                        "{}: {} timeout must be a positive number of seconds, got {t}; its hooks are off",
                        path.display(),
                        event.name()
                    ))
                }
            };
            if raw.command.trim().is_empty() {
                return Err(format!(
                    "{}: a {} hook has an empty command; its hooks are off",
                    path.display(),
                    event.name()
                ));
            }
            hooks.push(Hook {
                event,
                command: raw.command,
                timeout,
                matcher: raw.matcher.filter(|m| !m.trim().is_empty()),
                project,
            });
        }
    }
    Ok(hooks)
}

/// Whether tool `name` matches `pattern`: `|`-separated alternatives, each
/// a glob with `*` and `?` (no regular expressions).
pub fn matches(pattern: &str, name: &str) -> bool {
    pattern.split('|').any(|alt| glob(alt.trim(), name))
}

fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// The hooks a session runs, cheap to clone into turns and tasks.
#[derive(Clone, Default)]
pub struct Hooks {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    hooks: Vec<Hook>,
    /// Where hooks run: the session's folder.
    cwd: PathBuf,
    /// `$JUCODE_PROJECT_DIR`: the repo root (or cwd).
    project_dir: PathBuf,
}

impl Hooks {
    pub fn new(hooks: Vec<Hook>, cwd: PathBuf, project_dir: PathBuf) -> Hooks {
        Hooks {
            inner: Arc::new(Inner {
                hooks,
                cwd,
                project_dir,
            }),
        }
    }

    pub fn has(&self, event: HookEvent) -> bool {
        self.inner.hooks.iter().any(|h| h.event == event)
    }

    fn for_event(&self, event: HookEvent, tool: Option<&str>) -> Vec<Hook> {
        self.inner
            .hooks
            .iter()
            .filter(|h| h.event == event)
            .filter(|h| match (&h.matcher, tool) {
                (Some(pattern), Some(tool)) => matches(pattern, tool),
                _ => true,
            })
            .cloned()
            .collect()
    }

    fn payload(&self, event: HookEvent, out: &Output, extra: Value) -> Value {
        let mut payload = json!({
            "event": event.name(),
            "session_id": &*out.session(),
            "cwd": self.inner.cwd.display().to_string(),
        });
        if let (Some(map), Value::Object(extra)) = (payload.as_object_mut(), extra) {
            map.extend(extra);
        }
        payload
    }

    /// `session_start`: each hook's stdout becomes an `info`. `source` is
    /// `startup`, or `trust` when a project was just trusted (then only the
    /// project's hooks run: the profile's ran at startup).
    pub async fn session_start(&self, out: &Output, source: &str) {
        let only_project = source != "startup";
        let payload = self.payload(HookEvent::SessionStart, out, json!({ "source": source }));
        for hook in self.for_event(HookEvent::SessionStart, None) {
            if only_project && !hook.project {
                continue;
            }
            let outcome = self.run(&hook, &payload, out).await;
            if outcome.succeeded() {
                let text = outcome.stdout.trim();
                if !text.is_empty() {
                    out.emit(Event::info(text.to_string()));
                }
            } else {
                report(out, &hook, &outcome);
            }
        }
    }

    /// `user_prompt_submit`: `Ok` with the context the hooks printed (if
    /// any) for the model, or `Err` with the `error` message when a hook
    /// blocked the prompt (exit code 2).
    pub async fn user_prompt_submit(
        &self,
        out: &Output,
        prompt: &str,
    ) -> Result<Option<String>, String> {
        let payload = self.payload(
            HookEvent::UserPromptSubmit,
            out,
            json!({ "prompt": prompt }),
        );
        let mut context = Vec::new();
        for hook in self.for_event(HookEvent::UserPromptSubmit, None) {
            let outcome = self.run(&hook, &payload, out).await;
            if outcome.code == Some(2) {
                return Err(format!("prompt blocked by hook: {}", outcome.reason()));
            }
            if outcome.succeeded() {
                let text = outcome.stdout.trim();
                if !text.is_empty() {
                    context.push(text.to_string());
                }
            } else {
                report(out, &hook, &outcome);
            }
        }
        Ok((!context.is_empty()).then(|| context.join("\n\n")))
    }

    /// `pre_tool_use`: `Some(result for the model)` when a hook blocked the
    /// call (exit code 2); the call must not run then.
    pub async fn pre_tool_use(&self, out: &Output, call: &Call) -> Option<String> {
        let hooks = self.for_event(HookEvent::PreToolUse, Some(&call.name));
        if hooks.is_empty() {
            return None;
        }
        let payload = self.payload(HookEvent::PreToolUse, out, tool_fields(call));
        for hook in hooks {
            let outcome = self.run(&hook, &payload, out).await;
            if outcome.code == Some(2) {
                return Some(format!("blocked by hook: {}", outcome.reason()));
            }
            if !outcome.succeeded() {
                report(out, &hook, &outcome);
            }
        }
        None
    }

    /// `post_tool_use`, in the background (bounded by each hook's timeout).
    pub fn post_tool_use(&self, out: &Output, call: &Call, output: &str, is_error: bool) {
        let hooks = self.for_event(HookEvent::PostToolUse, Some(&call.name));
        if hooks.is_empty() {
            return;
        }
        let mut fields = tool_fields(call);
        fields["output"] = json!(output);
        fields["is_error"] = json!(is_error);
        let payload = self.payload(HookEvent::PostToolUse, out, fields);
        self.spawn_all(hooks, payload, out);
    }

    /// `stop`, when a turn ends by itself, in the background.
    pub fn stop(&self, out: &Output, failed: bool) {
        let hooks = self.for_event(HookEvent::Stop, None);
        if hooks.is_empty() {
            return;
        }
        let payload = self.payload(HookEvent::Stop, out, json!({ "failed": failed }));
        self.spawn_all(hooks, payload, out);
    }

    fn spawn_all(&self, hooks: Vec<Hook>, payload: Value, out: &Output) {
        let this = self.clone();
        let out = out.clone();
        tokio::spawn(async move {
            for hook in hooks {
                let outcome = this.run(&hook, &payload, &out).await;
                if !outcome.succeeded() {
                    report(&out, &hook, &outcome);
                }
            }
        });
    }

    async fn run(&self, hook: &Hook, payload: &Value, out: &Output) -> Outcome {
        let outcome = run_process(hook, payload, &self.inner, &out.session()).await;
        tracing::debug!(
            event = hook.event.name(),
            command = %hook.command,
            code = ?outcome.code,
            timed_out = outcome.timed_out,
            "hook finished"
        );
        outcome
    }
}

fn tool_fields(call: &Call) -> Value {
    let arguments = serde_json::from_str::<Value>(&call.arguments)
        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
    json!({
        "tool_name": call.name,
        "call_id": call.call_id,
        "arguments": arguments,
    })
}

/// Appends what `user_prompt_submit` hooks printed to the user message the
/// model reads (the `user_message` event keeps the text as typed).
pub fn add_context(item: &mut HistoryItem, context: &str) {
    if let HistoryItem::User { text, .. } = item {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str("[Context added by a user_prompt_submit hook]\n");
        text.push_str(context);
    }
}

fn report(out: &Output, hook: &Hook, outcome: &Outcome) {
    let what = if let Some(err) = &outcome.spawn_error {
        format!("could not start: {err}")
    } else if outcome.timed_out {
        format!(
            "timed out after {} s and was killed",
            hook.timeout.as_secs_f64()
        )
    } else {
        match outcome.code {
            Some(code) => format!("failed with exit code {code}"),
            None => "was killed by a signal".to_string(),
        }
    };
    let mut message = format!(
        "{} hook `{}` {what}",
        hook.event.name(),
        clip(&hook.command, 80)
    );
    let detail = outcome.stderr.trim();
    if !detail.is_empty() && outcome.spawn_error.is_none() {
        message.push_str(": ");
        message.push_str(&clip(detail, 500));
    }
    out.emit(Event::info(message));
}

fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// How one hook run ended.
#[derive(Debug, Default)]
struct Outcome {
    /// Exit code; `None` when killed or not started.
    code: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
    spawn_error: Option<String>,
}

impl Outcome {
    fn succeeded(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    /// Why a hook blocked: its stderr, else its stdout.
    fn reason(&self) -> String {
        let text = [self.stderr.trim(), self.stdout.trim()]
            .into_iter()
            .find(|t| !t.is_empty())
            .unwrap_or("(the hook gave no reason)");
        clip(text, 2000)
    }
}

/// Kills the hook's process group when dropped: on timeout, when it ends,
/// and when the future running it is dropped (an interrupted turn).
struct GroupKill(Option<libc::pid_t>);

impl Drop for GroupKill {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            // SAFETY: killpg has no memory-safety preconditions; the group
            // is the one the hook was started in.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

async fn run_process(hook: &Hook, payload: &Value, inner: &Inner, session: &str) -> Outcome {
    let mut cmd = tokio::process::Command::new("bash");
    cmd.arg("-c")
        .arg(&hook.command)
        .current_dir(&inner.cwd)
        .env("JUCODE_HOOK_EVENT", hook.event.name())
        .env("JUCODE_SESSION_ID", session)
        .env("JUCODE_PROJECT_DIR", &inner.project_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Outcome {
                spawn_error: Some(e.to_string()),
                ..Outcome::default()
            }
        }
    };
    let _group = GroupKill(child.id().map(|id| id as libc::pid_t));
    let mut input = serde_json::to_vec(payload).unwrap_or_default();
    input.push(b'\n');
    let stdin = child.stdin.take();
    // The payload is written alongside reading: a hook that ignores stdin
    // must not block on a large payload, nor us on it.
    let writer = async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        }
    };
    tokio::pin!(writer);
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let (mut out_buf, mut err_buf) = (Vec::new(), Vec::new());
    let (mut b1, mut b2) = ([0u8; 8192], [0u8; 8192]);
    let (mut out_eof, mut err_eof, mut written) = (false, false, false);
    let mut outcome = Outcome::default();
    let mut exited = false;
    let deadline = Instant::now() + hook.timeout;
    let mut drain_until: Option<Instant> = None;
    while !(out_eof && err_eof && exited) {
        tokio::select! {
            _ = &mut writer, if !written => written = true,
            read = stdout.read(&mut b1), if !out_eof => match read {
                Ok(0) | Err(_) => out_eof = true,
                Ok(n) => push_capped(&mut out_buf, &b1[..n]),
            },
            read = stderr.read(&mut b2), if !err_eof => match read {
                Ok(0) | Err(_) => err_eof = true,
                Ok(n) => push_capped(&mut err_buf, &b2[..n]),
            },
            status = child.wait(), if !exited => {
                exited = true;
                outcome.code = status.ok().and_then(|s| s.code());
                drain_until = Some(Instant::now() + DRAIN_GRACE);
            }
            // Background processes may hold the pipes open after the hook
            // exited; what they write later is not waited for.
            _ = sleep_until(drain_until.unwrap_or(deadline)), if drain_until.is_some() => break,
            _ = sleep_until(deadline), if !exited => {
                outcome.timed_out = true;
                break;
            }
        }
    }
    outcome.stdout = String::from_utf8_lossy(&out_buf).into_owned();
    outcome.stderr = String::from_utf8_lossy(&err_buf).into_owned();
    outcome
}

fn push_capped(buf: &mut Vec<u8>, bytes: &[u8]) {
    let room = MAX_CAPTURE.saturating_sub(buf.len());
    buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers() {
        assert!(matches("bash", "bash"));
        assert!(!matches("bash", "bashful"));
        assert!(matches("edit|write", "write"));
        assert!(matches("mcp__*", "mcp__git__status"));
        assert!(matches("web_?etch", "web_fetch"));
        assert!(matches("*", "anything"));
        assert!(!matches("read", "bash"));
    }

    #[test]
    fn parses_a_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(FILE_NAME);
        assert_eq!(load_file(&path, true).unwrap(), Vec::new());
        std::fs::write(
            &path,
            "[[pre_tool_use]]\nmatcher = \"bash\"\ncommand = \"exit 2\"\ntimeout = 1.5\n\n[[stop]]\ncommand = \"true\"\n",
        )
        .unwrap();
        let hooks = load_file(&path, true).unwrap();
        assert_eq!(hooks.len(), 2);
        assert_eq!(hooks[0].event, HookEvent::PreToolUse);
        assert_eq!(hooks[0].timeout, Duration::from_millis(1500));
        assert_eq!(hooks[0].matcher.as_deref(), Some("bash"));
        assert_eq!(hooks[1].timeout, DEFAULT_TIMEOUT);
        std::fs::write(&path, "[[pre_tool_uze]]\ncommand = \"x\"\n").unwrap();
        assert!(load_file(&path, true)
            .unwrap_err()
            .contains("hooks are off"));
        std::fs::write(&path, "[[stop]]\ncommand = \"x\"\ntimeout = 0\n").unwrap();
        assert!(load_file(&path, true).is_err());
    }

    fn hook(event: HookEvent, command: &str, timeout_ms: u64) -> Hook {
        Hook {
            event,
            command: command.to_string(),
            timeout: Duration::from_millis(timeout_ms),
            matcher: None,
            project: false,
        }
    }

    fn inner(dir: &Path) -> Inner {
        Inner {
            hooks: Vec::new(),
            cwd: dir.to_path_buf(),
            project_dir: dir.to_path_buf(),
        }
    }

    #[tokio::test]
    async fn runs_with_the_payload_and_captures_output() {
        let tmp = tempfile::tempdir().unwrap();
        let h = hook(
            HookEvent::PreToolUse,
            "cat > payload.json; echo out; echo err >&2; echo $JUCODE_HOOK_EVENT; exit 3",
            5000,
        );
        let outcome = run_process(&h, &json!({"k": "v"}), &inner(tmp.path()), "s-1").await;
        assert_eq!(outcome.code, Some(3));
        assert_eq!(outcome.stdout, "out\npre_tool_use\n");
        assert_eq!(outcome.stderr, "err\n");
        let written = std::fs::read_to_string(tmp.path().join("payload.json")).unwrap();
        assert_eq!(written.trim(), r#"{"k":"v"}"#);
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_group() {
        let tmp = tempfile::tempdir().unwrap();
        let h = hook(
            HookEvent::Stop,
            "(sleep 2; touch late) & echo started; sleep 30",
            300,
        );
        let started = std::time::Instant::now();
        let outcome = run_process(&h, &json!({}), &inner(tmp.path()), "s").await;
        assert!(outcome.timed_out);
        assert_eq!(outcome.stdout, "started\n");
        assert!(started.elapsed() < Duration::from_secs(5));
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert!(!tmp.path().join("late").exists());
    }

    #[tokio::test]
    async fn a_big_payload_does_not_block_a_hook_that_ignores_stdin() {
        let tmp = tempfile::tempdir().unwrap();
        let h = hook(HookEvent::PostToolUse, "echo fine", 5000);
        let payload = json!({ "output": "x".repeat(1_000_000) });
        let outcome = run_process(&h, &payload, &inner(tmp.path()), "s").await;
        assert!(outcome.succeeded(), "{outcome:?}");
        assert_eq!(outcome.stdout, "fine\n");
    }

    #[test]
    fn context_goes_after_the_text() {
        let mut item = HistoryItem::User {
            text: "hi".into(),
            images: Vec::new(),
        };
        add_context(&mut item, "branch: main");
        let HistoryItem::User { text, .. } = item else {
            unreachable!()
        };
        assert!(text.starts_with("hi\n\n[Context"));
        assert!(text.ends_with("branch: main"));
    }
}
