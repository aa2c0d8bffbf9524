//! The one streaming entry point: send, parse, retry.
//!
//! Cancellation is by dropping the future. That is safe at every await:
//! nothing is spawned, no lock is held, and dropping the response closes
//! its connection; the only state is local to the future.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE};

use crate::emit::Emitter;
use crate::errors::{classify_status, redact, redact_error};
use crate::retry::{backoff_delay, retry_hints, Failure};
use crate::sse::{drive, WireParser};
use crate::types::{
    Endpoint, ModelError, ModelRequest, ModelResponse, RetryPolicy, StreamEvent, WireApi,
};
use crate::{anthropic, chat, responses};

const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Sends `request` to `endpoint` in its wire format and streams the
/// answer: `on_event` gets each delta the moment it is parsed, and the
/// finished items come back when the response is complete.
///
/// Transient failures (connection errors, 408/409/429/5xx/529, in-stream
/// server errors, a stream that ends early or stalls for
/// `policy.idle_timeout_ms`) are retried up to `policy.max_retries` times,
/// with a [`StreamEvent::Retrying`] before each. Output already passed to
/// `on_event` is not passed again when a retry repeats it, and the result
/// holds only the successful attempt's items.
pub async fn stream_response(
    http: &reqwest::Client,
    endpoint: &Endpoint,
    request: &ModelRequest,
    policy: &RetryPolicy,
    on_event: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<ModelResponse, ModelError> {
    // Built once: a retry re-sends exactly the same request.
    let body = Bytes::from(build_body(endpoint.wire_api, request).to_string());
    let key = endpoint.api_key.as_deref();
    let mut em = Emitter::new(on_event);
    let mut retry = 0u32;
    loop {
        let failure = match endpoint.wire_api {
            WireApi::Responses => {
                attempt(
                    http,
                    endpoint,
                    &body,
                    policy,
                    &mut em,
                    responses::ResponsesParser::default(),
                )
                .await
            }
            WireApi::Chat => {
                attempt(
                    http,
                    endpoint,
                    &body,
                    policy,
                    &mut em,
                    chat::ChatParser::default(),
                )
                .await
            }
            WireApi::Anthropic => {
                attempt(
                    http,
                    endpoint,
                    &body,
                    policy,
                    &mut em,
                    anthropic::AnthropicParser::default(),
                )
                .await
            }
        };
        let (reason, requested) = match failure {
            Ok(response) => return Ok(response),
            Err(Failure::Fatal(err)) => return Err(redact_error(err, key)),
            Err(Failure::Transient { reason, delay }) => (redact(reason, key), delay),
        };
        if retry >= policy.max_retries {
            let tries = policy.max_retries + 1;
            return Err(ModelError::RetriesExhausted(format!(
                "the request to provider {} failed {tries} time{}; last error: {reason}",
                endpoint.provider,
                if tries == 1 { "" } else { "s" },
            )));
        }
        let delay = match requested {
            Some(d) if d.as_millis() > u128::from(policy.max_honoured_delay_ms) => {
                // Waiting minutes inside a turn looks like a hang; better to
                // say so and let the user decide.
                return Err(ModelError::RetriesExhausted(format!(
                    "provider {} asked to wait {} s before retrying, longer than the {} s limit; \
                     last error: {reason}",
                    endpoint.provider,
                    d.as_secs(),
                    policy.max_honoured_delay_ms / 1000,
                )));
            }
            Some(d) => d,
            None => backoff_delay(policy, retry),
        };
        retry += 1;
        tracing::info!(provider = %endpoint.provider, retry, delay_ms = delay.as_millis() as u64, %reason, "retrying model request");
        em.raw(StreamEvent::Retrying {
            attempt: retry,
            max: policy.max_retries,
            delay_ms: delay.as_millis() as u64,
            reason,
        });
        tokio::time::sleep(delay).await;
        em.new_attempt();
    }
}

/// The JSON body for `request` in `wire`'s format.
pub fn build_body(wire: WireApi, request: &ModelRequest) -> serde_json::Value {
    match wire {
        WireApi::Responses => responses::build_body(request),
        WireApi::Chat => chat::build_body(request),
        WireApi::Anthropic => anthropic::build_body(request),
    }
}

fn url(endpoint: &Endpoint) -> String {
    let base = endpoint.base_url.trim_end_matches('/');
    match endpoint.wire_api {
        WireApi::Responses => format!("{base}/responses"),
        WireApi::Chat => format!("{base}/chat/completions"),
        WireApi::Anthropic => format!("{base}/messages"),
    }
}

/// A transport error with its causes, which is where reqwest keeps the
/// useful part ("connection refused", "connection reset").
fn describe(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// One HTTP request and its stream.
async fn attempt<P: WireParser>(
    http: &reqwest::Client,
    endpoint: &Endpoint,
    body: &Bytes,
    policy: &RetryPolicy,
    em: &mut Emitter<'_>,
    mut parser: P,
) -> Result<ModelResponse, Failure> {
    let mut req = http
        .post(url(endpoint))
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .body(body.clone());
    if let Some(key) = &endpoint.api_key {
        req = match endpoint.wire_api {
            WireApi::Anthropic => req.header("x-api-key", key),
            WireApi::Responses | WireApi::Chat => req.bearer_auth(key),
        };
    }
    if endpoint.wire_api == WireApi::Anthropic {
        req = req.header("anthropic-version", ANTHROPIC_VERSION);
    }
    for (name, value) in &endpoint.headers {
        req = req.header(name, value);
    }

    let connect = Duration::from_millis(policy.connect_timeout_ms);
    let response = match tokio::time::timeout(connect, req.send()).await {
        Err(_) => {
            return Err(Failure::transient(format!(
                "no response from provider {} within {} ms",
                endpoint.provider, policy.connect_timeout_ms
            )))
        }
        // A request that cannot even be built (bad header, bad URL) fails
        // the same way every time.
        Ok(Err(err)) if err.is_builder() => {
            return Err(Failure::Fatal(ModelError::Request(format!(
                "cannot build the request for provider {}: {}",
                endpoint.provider,
                describe(&err)
            ))))
        }
        Ok(Err(err)) => {
            return Err(Failure::transient(format!(
                "cannot reach provider {}: {}",
                endpoint.provider,
                describe(&err)
            )))
        }
        Ok(Ok(response)) => response,
    };

    let status = response.status();
    if !status.is_success() {
        let hints = retry_hints(response.headers());
        // The error body is small; a stalled one is cut off by the idle limit.
        let idle = Duration::from_millis(policy.idle_timeout_ms);
        let text = match tokio::time::timeout(idle, response.text()).await {
            Ok(Ok(text)) => text,
            _ => String::new(),
        };
        return Err(classify_status(
            &endpoint.provider,
            status.as_u16(),
            hints,
            &text,
        ));
    }

    em.response_started();
    let idle = Duration::from_millis(policy.idle_timeout_ms);
    let stream = response.bytes_stream();
    drive(Box::pin(stream), idle, &mut parser, em)
        .await
        .map_err(|failure| match failure {
            Failure::Transient { reason, delay } => Failure::Transient {
                reason: format!("provider {}: {reason}", endpoint.provider),
                delay,
            },
            fatal => fatal,
        })?;
    Ok(parser.into_response())
}
