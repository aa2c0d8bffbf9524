//! Turning a [`ScriptedResponse`] into SSE frames of one wire format.
//!
//! Rendering is pure (script in, frames out) so that the fault logic — cut after N events,
//! then drop, stall or emit an in-stream error — is written once here, not per format, and
//! so the framing can be unit-tested without a socket.

mod anthropic;
mod chat;
mod responses;

use std::time::Duration;

use serde_json::{json, Value};

use crate::script::{Fault, ScriptedResponse};

/// The three model APIs, chosen by the request path's suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// OpenAI Responses (`…/responses`).
    Responses,
    /// OpenAI-compatible Chat Completions (`…/chat/completions`).
    Chat,
    /// Anthropic Messages (`…/messages`).
    Anthropic,
}

impl WireFormat {
    /// Route by suffix so any base URL prefix (`/v1`, `/openai/v1`, …) works.
    pub fn from_path(path: &str) -> Option<WireFormat> {
        let path = path.trim_end_matches('/');
        if path.ends_with("/responses") {
            Some(WireFormat::Responses)
        } else if path.ends_with("/chat/completions") {
            Some(WireFormat::Chat)
        } else if path.ends_with("/messages") {
            Some(WireFormat::Anthropic)
        } else {
            None
        }
    }
}

/// One SSE frame, already serialized (ends with a blank line).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Frame {
    pub text: String,
    /// `false` for SSE comments, which faults do not count as events.
    pub is_event: bool,
}

impl Frame {
    /// `event: NAME` + `data: JSON` (Responses and Anthropic name their events).
    pub fn event(name: &str, data: &Value) -> Frame {
        Frame {
            text: format!("event: {name}\ndata: {data}\n\n"),
            is_event: true,
        }
    }

    /// A bare `data:` frame (Chat Completions).
    pub fn data(data: &str) -> Frame {
        Frame {
            text: format!("data: {data}\n\n"),
            is_event: true,
        }
    }

    /// An SSE comment line, which conforming clients must ignore.
    pub fn comment(text: &str) -> Frame {
        Frame {
            text: format!(": {text}\n\n"),
            is_event: false,
        }
    }
}

/// Per-response values that make ids unique across a test and echo the request.
#[derive(Debug, Clone)]
pub(crate) struct RenderCtx {
    /// 1-based number of the streamed response, used in every generated id.
    pub n: u64,
    /// The request's `model`, echoed back like real servers do.
    pub model: String,
}

/// How the body ends after its frames.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ending {
    /// Finish the chunked body normally.
    Clean,
    /// Kill the connection without finishing the body.
    Abort,
    /// Stay silent this long with the connection open, then abort.
    StallThenAbort(Duration),
}

/// Everything the server needs to stream one response.
#[derive(Debug, Clone)]
pub(crate) struct StreamPlan {
    pub frames: Vec<Frame>,
    pub ending: Ending,
    pub delay: Duration,
}

/// Render `resp` in `format`, applying its stream fault. `Fault::Status` is not a stream and
/// must be handled by the caller before this.
pub(crate) fn plan(format: WireFormat, resp: &ScriptedResponse, ctx: &RenderCtx) -> StreamPlan {
    let frames = match format {
        WireFormat::Responses => responses::render(resp, ctx),
        WireFormat::Chat => chat::render(resp, ctx),
        WireFormat::Anthropic => anthropic::render(resp, ctx),
    };
    let (frames, ending) = match &resp.fault {
        None | Some(Fault::Status { .. }) => (frames, Ending::Clean),
        Some(Fault::DropAfter { events }) => (take_events(frames, *events), Ending::Abort),
        Some(Fault::StallAfter { events, ms }) => (
            take_events(frames, *events),
            Ending::StallThenAbort(Duration::from_millis(*ms)),
        ),
        Some(Fault::StreamError {
            after,
            kind,
            message,
        }) => {
            let mut frames = take_events(frames, *after);
            let sent = frames.iter().filter(|f| f.is_event).count();
            frames.extend(match format {
                WireFormat::Responses => responses::stream_error(ctx, sent, kind, message),
                WireFormat::Chat => chat::stream_error(kind, message),
                WireFormat::Anthropic => anthropic::stream_error(kind, message),
            });
            (frames, Ending::Clean)
        }
    };
    StreamPlan {
        frames,
        ending,
        delay: Duration::from_millis(resp.chunk_delay_ms),
    }
}

/// The first frames up to and including the `n`-th event (comments before it included).
fn take_events(frames: Vec<Frame>, n: usize) -> Vec<Frame> {
    let mut out = Vec::new();
    let mut count = 0;
    for frame in frames {
        if count == n {
            break;
        }
        count += usize::from(frame.is_event);
        out.push(frame);
    }
    out
}

/// Default JSON body of a `Fault::Status` response, shaped like the format's real errors so
/// clients exercise their error-body parsing.
pub(crate) fn error_body(format: WireFormat, code: u16) -> String {
    let message = format!("scripted HTTP {code}");
    match format {
        WireFormat::Anthropic => {
            let kind = match code {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
        }
        WireFormat::Responses | WireFormat::Chat => {
            let (kind, code_str) = match code {
                400 | 404 | 413 | 422 => ("invalid_request_error", Value::Null),
                401 => ("invalid_request_error", json!("invalid_api_key")),
                403 => ("permission_error", Value::Null),
                429 => ("rate_limit_error", json!("rate_limit_exceeded")),
                _ => ("server_error", Value::Null),
            };
            json!({"error": {"message": message, "type": kind, "code": code_str, "param": null}})
                .to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_suffix() {
        assert_eq!(
            WireFormat::from_path("/v1/responses"),
            Some(WireFormat::Responses)
        );
        assert_eq!(
            WireFormat::from_path("/x/v1/chat/completions/"),
            Some(WireFormat::Chat)
        );
        assert_eq!(
            WireFormat::from_path("/v1/messages"),
            Some(WireFormat::Anthropic)
        );
        assert_eq!(WireFormat::from_path("/v1/models"), None);
    }

    #[test]
    fn take_events_skips_comment_counting() {
        let frames = vec![
            Frame::data("1"),
            Frame::comment("keep-alive"),
            Frame::data("2"),
            Frame::data("3"),
        ];
        let cut = take_events(frames.clone(), 2);
        assert_eq!(cut, frames[..3].to_vec());
        assert!(take_events(frames.clone(), 0).is_empty());
        assert_eq!(take_events(frames.clone(), 99), frames);
    }
}
