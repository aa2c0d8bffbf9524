//! Reading one response body as server-sent events and feeding each event
//! to a wire parser the moment it is decoded.

use std::fmt::Display;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures::{Stream, StreamExt};

use crate::emit::Emitter;
use crate::retry::Failure;
use crate::types::ModelResponse;

/// Whether the parser has seen its terminal event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Done,
}

/// One wire format's stream parser. A parser lives for one attempt.
pub(crate) trait WireParser {
    /// `event` is the SSE `event:` name (`message` when absent); `data` the
    /// joined `data:` lines.
    fn on_event(&mut self, event: &str, data: &str, em: &mut Emitter<'_>) -> Result<Flow, Failure>;

    /// The body ended before the terminal event. Returns `Ok` when what
    /// arrived is nevertheless a whole response.
    fn on_eof(&mut self) -> Result<(), Failure>;

    /// The finished response, once `Done` (or an accepted EOF).
    fn into_response(self) -> ModelResponse;
}

/// Why reading the body stopped early.
#[derive(Debug)]
enum BodyError<E> {
    Transport(E),
    Idle(Duration),
}

/// Wraps a byte stream so that a gap of `idle` between two chunks ends it
/// with an error. The timer runs on raw bytes, before SSE decoding, so SSE
/// comments (`: OPENROUTER PROCESSING`) and `ping` events count as
/// activity: they prove the connection is alive while a slow model thinks,
/// and only a silent connection is a stalled one.
fn idle_guard<S, E>(bytes: S, idle: Duration) -> impl Stream<Item = Result<Bytes, BodyError<E>>>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    futures::stream::unfold(Some(bytes), move |state| async move {
        let mut bytes = state?;
        match tokio::time::timeout(idle, bytes.next()).await {
            Ok(Some(Ok(chunk))) => Some((Ok(chunk), Some(bytes))),
            Ok(Some(Err(err))) => Some((Err(BodyError::Transport(err)), None)),
            Ok(None) => None,
            // Ends the stream after reporting, so nothing reads past a stall.
            Err(_) => Some((Err(BodyError::Idle(idle)), None)),
        }
    })
}

/// Feeds `bytes` through the SSE decoder into `parser` until its terminal
/// event, the end of the body, an error, or an idle gap.
pub(crate) async fn drive<S, E, P>(
    bytes: S,
    idle: Duration,
    parser: &mut P,
    em: &mut Emitter<'_>,
) -> Result<(), Failure>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: Display,
    P: WireParser,
{
    let mut events = Box::pin(idle_guard(bytes, idle)).eventsource();
    while let Some(next) = events.next().await {
        match next {
            Ok(event) => {
                if parser.on_event(&event.event, &event.data, em)? == Flow::Done {
                    // Stop reading at once: the terminal event is the
                    // answer, whatever the server sends after it.
                    return Ok(());
                }
            }
            Err(EventStreamError::Transport(BodyError::Idle(idle))) => {
                return Err(Failure::transient(format!(
                    "stream stalled: no data for {} ms",
                    idle.as_millis()
                )))
            }
            Err(EventStreamError::Transport(BodyError::Transport(err))) => {
                return Err(Failure::transient(format!(
                    "connection lost mid-stream: {err}"
                )))
            }
            Err(EventStreamError::Utf8(err)) => {
                return Err(Failure::transient(format!("malformed event stream: {err}")))
            }
            Err(EventStreamError::Parser(err)) => {
                return Err(Failure::transient(format!("malformed event stream: {err}")))
            }
        }
    }
    parser.on_eof()
}

/// `data.type` when present, else the SSE event name: Responses and
/// Anthropic repeat the type in the payload, and some proxies drop the
/// `event:` line.
pub(crate) fn event_type<'a>(event: &'a str, data: &'a serde_json::Value) -> &'a str {
    data.get("type").and_then(|t| t.as_str()).unwrap_or(event)
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Runs a parser over canned SSE chunks, as the HTTP path would.
    use super::*;
    use crate::types::StreamEvent;

    /// Splits `text` into chunks of `size` bytes, cutting through lines,
    /// JSON and multi-byte characters alike.
    pub(crate) fn split_every(text: &str, size: usize) -> Vec<Bytes> {
        text.as_bytes()
            .chunks(size)
            .map(Bytes::copy_from_slice)
            .collect()
    }

    pub(crate) fn run<P: WireParser>(
        mut parser: P,
        body: Vec<Bytes>,
    ) -> (Result<ModelResponse, Failure>, Vec<StreamEvent>) {
        let mut seen = Vec::new();
        let mut sink = |e: StreamEvent| seen.push(e);
        let mut em = Emitter::new(&mut sink);
        let stream = futures::stream::iter(body.into_iter().map(Ok::<_, String>));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let result = rt.block_on(drive(stream, Duration::from_secs(5), &mut parser, &mut em));
        drop(em);
        (result.map(|()| parser.into_response()), seen)
    }

    /// Runs `body` whole and split at every chunk size from 1 to 17 bytes;
    /// the results and the concatenated deltas must not depend on where the
    /// network cut the bytes.
    pub(crate) fn run_all_splits<P: WireParser>(
        make: impl Fn() -> P,
        body: &str,
    ) -> (Result<ModelResponse, Failure>, Vec<StreamEvent>) {
        let whole = run(make(), vec![Bytes::copy_from_slice(body.as_bytes())]);
        for size in 1..=17 {
            let split = run(make(), split_every(body, size));
            assert_eq!(
                split.0, whole.0,
                "result differs when split every {size} bytes"
            );
            assert_eq!(
                join_deltas(&split.1),
                join_deltas(&whole.1),
                "deltas differ when split every {size} bytes"
            );
        }
        whole
    }

    /// The events with consecutive deltas of one kind merged, so that
    /// chunking differences do not matter.
    pub(crate) fn join_deltas(events: &[StreamEvent]) -> Vec<StreamEvent> {
        let mut out: Vec<StreamEvent> = Vec::new();
        for e in events {
            match (out.last_mut(), e) {
                (Some(StreamEvent::TextDelta(a)), StreamEvent::TextDelta(b))
                | (Some(StreamEvent::ReasoningDelta(a)), StreamEvent::ReasoningDelta(b)) => {
                    a.push_str(b)
                }
                (
                    Some(StreamEvent::ToolCallDelta {
                        call_id: a_id,
                        delta: a,
                    }),
                    StreamEvent::ToolCallDelta {
                        call_id: b_id,
                        delta: b,
                    },
                ) if a_id == b_id => a.push_str(b),
                _ => out.push(e.clone()),
            }
        }
        out
    }

    #[test]
    fn idle_gap_is_reported_and_comments_count_as_activity() {
        use crate::types::{StopReason, Usage};
        struct Count(usize);
        impl WireParser for Count {
            fn on_event(&mut self, _: &str, _: &str, _: &mut Emitter<'_>) -> Result<Flow, Failure> {
                self.0 += 1;
                Ok(Flow::Continue)
            }
            fn on_eof(&mut self) -> Result<(), Failure> {
                Ok(())
            }
            fn into_response(self) -> ModelResponse {
                ModelResponse {
                    items: vec![],
                    usage: Some(Usage {
                        output_tokens: self.0 as u64,
                        ..Usage::default()
                    }),
                    stop_reason: StopReason::End,
                }
            }
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut sink = |_e: StreamEvent| {};
            let mut em = Emitter::new(&mut sink);
            // Comments every 30 ms keep a 50 ms idle timer from firing.
            let keepalive = futures::stream::iter(0..5).then(|i| async move {
                tokio::time::sleep(Duration::from_millis(30)).await;
                Ok::<_, String>(Bytes::from(if i == 4 {
                    "data: {}\n\n"
                } else {
                    ": PROCESSING\n\n"
                }))
            });
            let mut p = Count(0);
            drive(
                Box::pin(keepalive),
                Duration::from_millis(50),
                &mut p,
                &mut em,
            )
            .await
            .unwrap();
            assert_eq!(p.0, 1);

            let stall = futures::stream::iter(0..2).then(|i| async move {
                tokio::time::sleep(Duration::from_millis(if i == 0 { 0 } else { 200 })).await;
                Ok::<_, String>(Bytes::from("data: {}\n\n"))
            });
            let mut p = Count(0);
            let err = drive(Box::pin(stall), Duration::from_millis(50), &mut p, &mut em).await;
            assert_eq!(
                err,
                Err(Failure::transient("stream stalled: no data for 50 ms"))
            );
            assert_eq!(p.0, 1);
        });
    }
}
