//! Turning provider error payloads (HTTP error bodies and in-stream error
//! events) into a retry decision or a [`ModelError`] whose message says
//! what to do.

use serde_json::Value;

use crate::retry::{is_transient_status, parse_try_again_delay, Failure, RetryHints};
use crate::types::ModelError;

/// Server messages are shown to the user; a whole HTML error page is not.
const MAX_MESSAGE_CHARS: usize = 500;

/// The fields of a provider error, whichever shape it came in.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ErrorInfo {
    /// `type` (`server_error`, `overloaded_error`, ...).
    pub kind: Option<String>,
    /// `code` (`context_length_exceeded`, `rate_limit_exceeded`, `502`, ...).
    pub code: Option<String>,
    pub message: String,
}

impl ErrorInfo {
    fn has(&self, names: &[&str]) -> bool {
        let is = |v: &Option<String>| v.as_deref().is_some_and(|v| names.contains(&v));
        is(&self.kind) || is(&self.code)
    }

    fn numeric_code(&self) -> Option<u16> {
        self.code.as_deref().and_then(|c| c.parse().ok())
    }
}

/// Reads `{"error":{"type","code","message"}}` (OpenAI live API, Anthropic,
/// OpenRouter), the top-level `{"type":"error","code","message"}` the
/// Responses spec documents, and `{"error":"text"}` (some local servers).
pub(crate) fn error_info(payload: &Value) -> ErrorInfo {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let obj = match payload.get("error") {
        Some(Value::String(message)) => {
            return ErrorInfo {
                message: message.clone(),
                ..ErrorInfo::default()
            }
        }
        Some(inner @ Value::Object(_)) => inner,
        _ => payload,
    };
    let kind = obj.get("type").and_then(text).filter(|t| t != "error");
    // Anthropic puts spend-limit details one level deeper.
    let code = obj
        .get("code")
        .and_then(text)
        .or_else(|| obj.pointer("/details/error_code").and_then(text));
    let message = obj
        .get("message")
        .and_then(text)
        .or_else(|| payload.get("message").and_then(text))
        .unwrap_or_default();
    ErrorInfo {
        kind,
        code,
        message,
    }
}

const QUOTA: &[&str] = &[
    "insufficient_quota",
    "usage_not_included",
    "enforced_spend_limit_reached",
    "billing_error",
    "billing_hard_limit_reached",
];
const AUTH: &[&str] = &[
    "authentication_error",
    "invalid_api_key",
    "permission_error",
];
const NOT_RETRYABLE: &[&str] = &[
    "invalid_request_error",
    "invalid_prompt",
    "not_found_error",
    "request_too_large",
    "model_not_found",
];
const SERVER_SIDE: &[&str] = &[
    "server_error",
    "api_error",
    "overloaded_error",
    "overloaded",
    "internal_error",
    "service_unavailable",
    "timeout",
    "rate_limit_exceeded",
    "rate_limit_error",
];

/// Whether a message says the prompt did not fit, in the words the
/// providers use (OpenAI, Anthropic, vLLM, llama.cpp).
fn is_context_overflow(info: &ErrorInfo) -> bool {
    if info.has(&["context_length_exceeded", "model_context_window_exceeded"]) {
        return true;
    }
    let m = info.message.to_ascii_lowercase();
    [
        "maximum context length",
        "context length exceeded",
        "context_length_exceeded",
        "prompt is too long",
        "context window",
        "exceeds the context",
        "exceed_context_size",
    ]
    .iter()
    .any(|needle| m.contains(needle))
}

/// An error reported inside a stream. `unknown_is_transient`: whether an
/// error with no recognised type is retried. It is for the Responses and
/// Anthropic streams, whose unrecognised failures are server-side; Chat
/// servers send all sorts of errors this way, so there only server-side
/// types are retried.
pub(crate) fn classify_stream_error(info: &ErrorInfo, unknown_is_transient: bool) -> Failure {
    let message = truncate(if info.message.is_empty() {
        info.kind
            .as_deref()
            .or(info.code.as_deref())
            .unwrap_or("unknown error")
    } else {
        &info.message
    });
    if is_context_overflow(info) {
        return Failure::Fatal(ModelError::ContextLength(message));
    }
    if info.has(QUOTA) {
        return Failure::Fatal(ModelError::Quota(message));
    }
    if info.has(AUTH) {
        return Failure::Fatal(ModelError::Auth(format!(
            "authentication failed: {message}"
        )));
    }
    let status = info.numeric_code();
    let server_side = info.has(SERVER_SIDE) || status.is_some_and(is_transient_status);
    let explicit_client =
        info.has(NOT_RETRYABLE) || status.is_some_and(|s| (400..500).contains(&s));
    if server_side || (unknown_is_transient && !explicit_client) {
        Failure::Transient {
            delay: parse_try_again_delay(&info.message),
            reason: message,
        }
    } else {
        Failure::Fatal(ModelError::Request(message))
    }
}

/// A non-2xx HTTP answer.
pub(crate) fn classify_status(
    provider: &str,
    status: u16,
    hints: RetryHints,
    body: &str,
) -> Failure {
    let info = serde_json::from_str::<Value>(body)
        .map(|v| error_info(&v))
        .unwrap_or_default();
    let detail = if !info.message.is_empty() {
        truncate(&info.message)
    } else if !body.trim().is_empty() {
        truncate(body.trim())
    } else {
        "no error message".to_string()
    };
    let described = format!("HTTP {status} from provider {provider}: {detail}");

    if info.has(QUOTA) || status == 402 {
        return Failure::Fatal(ModelError::Quota(described));
    }
    match status {
        // The server's 401 text can quote (part of) the key, so it is left
        // out; the engine adds which env var to check.
        401 => {
            return Failure::Fatal(ModelError::Auth(format!(
                "authentication failed (HTTP 401) for provider {provider}: check the API key"
            )))
        }
        403 => {
            return Failure::Fatal(ModelError::Auth(format!(
                "authentication failed (HTTP 403) for provider {provider}: check the API key \
                 and its permissions ({detail})"
            )))
        }
        _ => {}
    }
    if matches!(status, 400 | 413 | 422) && is_context_overflow(&info) {
        return Failure::Fatal(ModelError::ContextLength(described));
    }
    let transient = match hints.should_retry {
        Some(told) => told,
        None => is_transient_status(status),
    };
    if transient {
        Failure::Transient {
            delay: hints.delay.or_else(|| parse_try_again_delay(&info.message)),
            reason: described,
        }
    } else if is_transient_status(status) {
        Failure::Fatal(ModelError::Request(format!(
            "{described} (the server asked not to retry)"
        )))
    } else {
        Failure::Fatal(ModelError::Request(described))
    }
}

/// Cuts a message to [`MAX_MESSAGE_CHARS`] characters.
pub(crate) fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Replaces the API key wherever it appears, a last line of defence for
/// messages that quote request details.
pub(crate) fn redact(text: String, key: Option<&str>) -> String {
    match key {
        Some(key) if key.len() >= 4 && text.contains(key) => text.replace(key, "<redacted>"),
        _ => text,
    }
}

pub(crate) fn redact_error(err: ModelError, key: Option<&str>) -> ModelError {
    match err {
        ModelError::Auth(m) => ModelError::Auth(redact(m, key)),
        ModelError::ContextLength(m) => ModelError::ContextLength(redact(m, key)),
        ModelError::Quota(m) => ModelError::Quota(redact(m, key)),
        ModelError::Request(m) => ModelError::Request(redact(m, key)),
        ModelError::RetriesExhausted(m) => ModelError::RetriesExhausted(redact(m, key)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn reads_nested_top_level_and_string_shapes() {
        let nested = json!({"type":"error","error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"too long"}});
        let info = error_info(&nested);
        assert_eq!(info.kind.as_deref(), Some("invalid_request_error"));
        assert_eq!(info.code.as_deref(), Some("context_length_exceeded"));
        assert_eq!(info.message, "too long");

        let top = json!({"type":"error","code":"server_error","message":"boom","param":null});
        let info = error_info(&top);
        assert_eq!(info.kind, None);
        assert_eq!(info.code.as_deref(), Some("server_error"));
        assert_eq!(info.message, "boom");

        let openrouter = json!({"error":{"message":"upstream","code":502}});
        assert_eq!(error_info(&openrouter).code.as_deref(), Some("502"));
        assert_eq!(
            error_info(&json!({"error":"model not loaded"})).message,
            "model not loaded"
        );
    }

    #[test]
    fn stream_errors() {
        let info = |kind: &str, msg: &str| ErrorInfo {
            kind: Some(kind.into()),
            code: None,
            message: msg.into(),
        };
        assert!(matches!(
            classify_stream_error(&info("overloaded_error", "Overloaded"), false),
            Failure::Transient { .. }
        ));
        assert_eq!(
            classify_stream_error(
                &info("rate_limit_exceeded", "Please try again in 1.5s"),
                true
            ),
            Failure::Transient {
                reason: "Please try again in 1.5s".into(),
                delay: Some(Duration::from_millis(1500))
            }
        );
        assert!(matches!(
            classify_stream_error(&info("insufficient_quota", "pay up"), true),
            Failure::Fatal(ModelError::Quota(_))
        ));
        assert!(matches!(
            classify_stream_error(
                &info(
                    "invalid_request_error",
                    "This model's maximum context length is 8192"
                ),
                true
            ),
            Failure::Fatal(ModelError::ContextLength(_))
        ));
        assert!(matches!(
            classify_stream_error(&info("invalid_request_error", "bad"), true),
            Failure::Fatal(ModelError::Request(_))
        ));
        // Unknown types: retried on Responses/Anthropic, not on Chat.
        assert!(matches!(
            classify_stream_error(&info("weird", "?"), true),
            Failure::Transient { .. }
        ));
        assert!(matches!(
            classify_stream_error(&info("weird", "?"), false),
            Failure::Fatal(ModelError::Request(_))
        ));
    }

    #[test]
    fn http_statuses() {
        let none = RetryHints::default();
        let auth = classify_status(
            "openai",
            401,
            none,
            r#"{"error":{"message":"Incorrect API key provided: sk-abc"}}"#,
        );
        let Failure::Fatal(ModelError::Auth(msg)) = auth else {
            panic!("{auth:?}")
        };
        assert_eq!(
            msg,
            "authentication failed (HTTP 401) for provider openai: check the API key"
        );

        let ctx = classify_status(
            "anthropic",
            400,
            none,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        );
        assert!(
            matches!(ctx, Failure::Fatal(ModelError::ContextLength(_))),
            "{ctx:?}"
        );

        let quota = classify_status(
            "openai",
            429,
            none,
            r#"{"error":{"code":"insufficient_quota","message":"quota"}}"#,
        );
        assert!(matches!(quota, Failure::Fatal(ModelError::Quota(_))));
        let spend = classify_status(
            "anthropic",
            429,
            none,
            r#"{"error":{"type":"rate_limit_error","message":"x","details":{"error_code":"enforced_spend_limit_reached"}}}"#,
        );
        assert!(matches!(spend, Failure::Fatal(ModelError::Quota(_))));
        assert!(matches!(
            classify_status("or", 402, none, ""),
            Failure::Fatal(ModelError::Quota(_))
        ));

        let nf = classify_status("openai", 404, none, &"x".repeat(2000));
        let Failure::Fatal(ModelError::Request(msg)) = nf else {
            panic!()
        };
        assert!(msg.starts_with("HTTP 404 from provider openai: xxx"));
        assert!(msg.chars().count() < 560, "{}", msg.len());

        let busy = classify_status(
            "openai",
            429,
            none,
            r#"{"error":{"message":"Please try again in 250ms."}}"#,
        );
        assert_eq!(
            busy,
            Failure::Transient {
                reason: "HTTP 429 from provider openai: Please try again in 250ms.".into(),
                delay: Some(Duration::from_millis(250))
            }
        );
        let no = RetryHints {
            should_retry: Some(false),
            delay: None,
        };
        assert!(matches!(
            classify_status("p", 503, no, ""),
            Failure::Fatal(ModelError::Request(_))
        ));
        let yes = RetryHints {
            should_retry: Some(true),
            delay: Some(Duration::from_secs(1)),
        };
        assert!(matches!(
            classify_status("p", 400, yes, ""),
            Failure::Transient { delay: Some(_), .. }
        ));
    }

    #[test]
    fn redaction_and_truncation() {
        assert_eq!(
            redact("key sk-secret here".into(), Some("sk-secret")),
            "key <redacted> here"
        );
        assert_eq!(truncate("héllo"), "héllo");
        assert_eq!(truncate(&"é".repeat(600)).chars().count(), 501);
    }
}
