//! Keeps the tail of a stdio server's stderr. Servers explain why they fail
//! there ("missing API key", a stack trace); the last few KB go into the
//! `failed` message. It is never passed through: JuCode's own stderr may be
//! a terminal a TUI draws on.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;
use tokio_util::sync::CancellationToken;

/// Bytes of stderr kept per server.
pub const STDERR_TAIL_BYTES: usize = 4096;

#[derive(Clone)]
pub(crate) struct StderrTail {
    buf: Arc<Mutex<Vec<u8>>>,
    eof: CancellationToken,
}

impl StderrTail {
    /// Reads `stderr` until EOF in a background task, keeping the tail. The
    /// pipe must be drained either way, or a chatty server would block on a
    /// full pipe.
    pub fn capture(mut stderr: ChildStderr) -> StderrTail {
        let tail = StderrTail {
            buf: Arc::new(Mutex::new(Vec::new())),
            eof: CancellationToken::new(),
        };
        let writer = tail.clone();
        tokio::spawn(async move {
            let mut chunk = [0u8; 4096];
            loop {
                match stderr.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut buf = writer.buf.lock().unwrap_or_else(|e| e.into_inner());
                        buf.extend_from_slice(&chunk[..n]);
                        if buf.len() > STDERR_TAIL_BYTES {
                            let excess = buf.len() - STDERR_TAIL_BYTES;
                            buf.drain(..excess);
                        }
                    }
                }
            }
            writer.eof.cancel();
        });
        tail
    }

    /// Waits up to `limit` for the pipe to close.
    pub async fn wait_eof(&self, limit: Duration) {
        let _ = tokio::time::timeout(limit, self.eof.cancelled()).await;
    }

    /// The kept tail, trimmed, with invalid UTF-8 (such as a char cut in
    /// half by the window) replaced.
    pub fn text(&self) -> String {
        let buf = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&buf).trim().to_owned()
    }
}
