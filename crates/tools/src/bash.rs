//! The `bash` tool: runs `bash -c COMMAND` and streams its output.
//!
//! Design points:
//! - The command runs in its own process group so that a timeout or an
//!   interrupt can kill everything it started (pipelines, `&` jobs), not just
//!   the `bash` process.
//! - stdout and stderr share ONE pipe (like `2>&1`), so the model sees them
//!   interleaved in the order the program wrote them. Our own stdout is the
//!   engine's protocol channel and must never be inherited.
//! - If the future is dropped (the engine aborts the task on interrupt), a
//!   guard kills the process group.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;
use tokio::time::{sleep_until, Instant};

use crate::args::BashArgs;
use crate::output::Utf8Stream;
use crate::{ToolContext, ToolOutput};

/// Longest timeout a model may ask for; beyond this a call looks like a mistake.
const MAX_TIMEOUT_SECS: f64 = 24.0 * 3600.0;
/// Updates are coalesced to at most one per this interval...
const UPDATE_INTERVAL: Duration = Duration::from_millis(50);
/// ...unless this much output is waiting.
const UPDATE_BYTES: usize = 4096;
/// After `bash` exits, how long we keep reading output still in flight.
/// Background jobs (`server &`) inherit the pipe and may hold it open
/// forever, so we cannot wait for end-of-file.
const DRAIN_GRACE: Duration = Duration::from_millis(200);

pub(crate) async fn run(
    args: &BashArgs,
    ctx: &ToolContext,
    on_update: &mut (dyn FnMut(String) + Send),
) -> ToolOutput {
    let timeout = match args.timeout {
        None => ctx.bash_timeout_default,
        Some(t) if t.is_finite() && t > 0.0 => Duration::from_secs_f64(t.min(MAX_TIMEOUT_SECS)),
        Some(t) => {
            return ToolOutput::error(format!(
                "timeout must be a positive number of seconds, got {t}"
            ))
        }
    };
    if args.command.trim().is_empty() {
        return ToolOutput::error("command is empty");
    }
    if !ctx.cwd.is_dir() {
        return ToolOutput::error(format!(
            "working directory {} does not exist",
            ctx.cwd.display()
        ));
    }
    match execute(&args.command, timeout, ctx, on_update).await {
        Ok(out) => out,
        Err(e) => ToolOutput::error(format!("failed to start bash: {e}")),
    }
}

async fn execute(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
    on_update: &mut (dyn FnMut(String) + Send),
) -> std::io::Result<ToolOutput> {
    // One pipe for both streams. The child's end must be blocking (programs
    // do not expect EAGAIN on stdout); ours is registered with tokio.
    let (tx, mut rx) = tokio::net::unix::pipe::pipe()?;
    let child_out = tx.into_blocking_fd()?;
    let child_err = child_out.try_clone()?;

    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(command)
        .current_dir(&ctx.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(child_out))
        .stderr(Stdio::from(child_err))
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    // The Command still owns our copies of the write end; until they are
    // closed the pipe can never report end-of-file.
    drop(cmd);
    let mut guard = GroupGuard {
        pgid: child.id().map(|id| id as libc::pid_t),
    };

    let deadline = Instant::now() + timeout;
    let mut buf = vec![0u8; 16 * 1024];
    let mut decoder = Utf8Stream::default();
    let mut tail = TailBuffer::new(ctx.max_output_bytes);
    let mut updates = Coalescer::default();
    let mut status: Option<ExitStatus> = None;
    let mut eof = false;
    let mut timed_out = false;
    let mut drain_until: Option<Instant> = None;

    while !(eof && status.is_some()) {
        let flush_at = updates.flush_deadline();
        tokio::select! {
            read = rx.read(&mut buf), if !eof => match read {
                Ok(0) => eof = true,
                Ok(n) => {
                    let text = decoder.push(&buf[..n]);
                    tail.push(&text);
                    updates.push(text, on_update);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => eof = true,
            },
            exit = child.wait(), if status.is_none() => {
                status = Some(exit?);
                drain_until = Some(Instant::now() + DRAIN_GRACE);
            }
            _ = sleep_until(deadline), if status.is_none() => {
                timed_out = true;
                guard.kill();
                status = Some(child.wait().await?);
                drain_until = Some(Instant::now() + DRAIN_GRACE);
            }
            _ = sleep_until(flush_at.unwrap_or(deadline)), if flush_at.is_some() => {
                updates.flush(on_update);
            }
            _ = sleep_until(drain_until.unwrap_or(deadline)), if drain_until.is_some() => break,
        }
    }
    // Normal completion: leave any deliberately detached job (`nohup x &`)
    // alone. Only timeouts and cancellation kill the group.
    guard.disarm();

    let rest = decoder.finish();
    tail.push(&rest);
    updates.push(rest, on_update);
    updates.flush(on_update);

    let mut text = tail.finish();
    let status = status.expect("loop ends only once the child has exited");
    let mut is_error = false;
    let mut note = None;
    if timed_out {
        is_error = true;
        note = Some(format!(
            "command timed out after {} s",
            format_secs(timeout)
        ));
    } else if let Some(code) = status.code() {
        if code != 0 {
            is_error = true;
            note = Some(format!("exit code {code}"));
        }
    } else {
        use std::os::unix::process::ExitStatusExt;
        is_error = true;
        note = Some(format!(
            "terminated by signal {}",
            status.signal().unwrap_or_default()
        ));
    }
    if let Some(note) = note {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&note);
    } else if text.is_empty() {
        text.push_str("(no output)");
    }
    Ok(ToolOutput {
        output: text,
        is_error,
    })
}

fn format_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s:.1}")
    }
}

/// Kills the command's process group when dropped while armed, so that
/// cancelling the tool call cannot leave processes behind.
struct GroupGuard {
    pgid: Option<libc::pid_t>,
}

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            // SAFETY: killpg only sends a signal; pgid is the group our child
            // leads, which stays reserved while any member is alive.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }

    fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Batches streamed output: the first chunk goes out at once (the user should
/// see that something happens), later ones at most every `UPDATE_INTERVAL`
/// or when `UPDATE_BYTES` have accumulated.
#[derive(Default)]
struct Coalescer {
    pending: String,
    last_emit: Option<Instant>,
}

impl Coalescer {
    fn push(&mut self, text: String, on_update: &mut (dyn FnMut(String) + Send)) {
        if text.is_empty() {
            return;
        }
        self.pending.push_str(&text);
        let due = match self.last_emit {
            None => true,
            Some(t) => t.elapsed() >= UPDATE_INTERVAL,
        };
        if due || self.pending.len() >= UPDATE_BYTES {
            self.flush(on_update);
        }
    }

    /// When the pending text must go out even if no more output arrives.
    fn flush_deadline(&self) -> Option<Instant> {
        if self.pending.is_empty() {
            None
        } else {
            Some(
                self.last_emit
                    .map_or_else(Instant::now, |t| t + UPDATE_INTERVAL),
            )
        }
    }

    fn flush(&mut self, on_update: &mut (dyn FnMut(String) + Send)) {
        if !self.pending.is_empty() {
            on_update(std::mem::take(&mut self.pending));
            self.last_emit = Some(Instant::now());
        }
    }
}

/// Keeps the end of the output in bounded memory: a chatty command must not
/// grow our heap without limit when only `max` bytes will be returned.
struct TailBuffer {
    max: usize,
    text: String,
    trimmed: usize,
}

impl TailBuffer {
    fn new(max: usize) -> Self {
        TailBuffer {
            max,
            text: String::new(),
            trimmed: 0,
        }
    }

    fn push(&mut self, chunk: &str) {
        self.text.push_str(chunk);
        // Trim in batches so that pushing stays amortized O(chunk).
        if self.text.len() > self.max * 2 + 64 * 1024 {
            self.trim_to(self.max);
        }
    }

    fn trim_to(&mut self, max: usize) {
        if self.text.len() > max {
            let mut cut = self.text.len() - max;
            while !self.text.is_char_boundary(cut) {
                cut += 1;
            }
            self.text.drain(..cut);
            self.trimmed += cut;
        }
    }

    fn finish(mut self) -> String {
        self.trim_to(self.max);
        if self.trimmed == 0 {
            self.text
        } else {
            format!("… ({} bytes trimmed)\n{}", self.trimmed, self.text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_buffer_keeps_end_and_counts() {
        let mut t = TailBuffer::new(10);
        for i in 0..20_000 {
            t.push(&format!("{}\n", i % 10));
        }
        let out = t.finish();
        assert!(out.starts_with("… (39990 bytes trimmed)\n"), "{out}");
        assert!(out.ends_with("5\n6\n7\n8\n9\n"), "{out}");
    }

    #[test]
    fn tail_buffer_small_output_untouched() {
        let mut t = TailBuffer::new(100);
        t.push("hello");
        assert_eq!(t.finish(), "hello");
    }

    #[test]
    fn coalescer_sends_first_chunk_immediately_then_batches() {
        let mut got = Vec::new();
        let mut sink = |s: String| got.push(s);
        let mut c = Coalescer::default();
        c.push("a".into(), &mut sink);
        c.push("b".into(), &mut sink);
        c.push("c".into(), &mut sink);
        assert!(c.flush_deadline().is_some());
        c.push("x".repeat(UPDATE_BYTES), &mut sink);
        c.flush(&mut sink);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], "a");
        assert!(got[1].starts_with("bcx"));
    }
}
