//! The script language of the [`ScriptedServer`](crate::ScriptedServer).
//!
//! A script describes *what* the model says (reasoning, text, tool calls, usage) and *how the
//! transport misbehaves* (HTTP errors, dropped or stalled streams, in-stream errors, slow
//! chunks, gates), independently of the wire format. The server renders the same script as
//! OpenAI Responses, Chat Completions or Anthropic Messages depending on the route it is hit
//! on, so one engine test can be run against all three providers.
//!
//! Everything is `Serialize + Deserialize` so that `jucode-testkit serve-model --script` can
//! be driven by a JSON file. Every field has a default, so JSON scripts can stay terse:
//!
//! ```json
//! [
//!   {"steps": [{"type": "reasoning", "deltas": "Let me look"},
//!              {"type": "tool_call", "call_id": "call_1", "name": "shell",
//!               "arguments": "{\"cmd\":\"ls\"}"}],
//!    "usage": {"input_tokens": 100, "output_tokens": 20}},
//!   {"steps": [{"type": "text", "deltas": ["Done", "."]}]},
//!   {"fault": {"type": "status", "code": 429, "retry_after": "1"}}
//! ]
//! ```
//!
//! `deltas` accepts either an array (sent verbatim, one delta each) or a plain string (split
//! into word deltas like [`ScriptedResponse::text`]).

use serde::{Deserialize, Deserializer, Serialize};

/// One scripted model response: consumed by exactly one POST, whatever its wire format.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScriptedResponse {
    /// Output items in the order they are streamed.
    pub steps: Vec<Step>,
    /// Token usage reported at the end of the stream. `None` means "the provider did not
    /// report usage" (Responses: `"usage": null`; Chat: no usage chunk; Anthropic: zeros,
    /// because that format has no way to omit it).
    pub usage: Option<ScriptUsage>,
    /// Transport misbehaviour applied to this response.
    pub fault: Option<Fault>,
    /// Pause between consecutive SSE events, to simulate a slow model.
    pub chunk_delay_ms: u64,
    /// Hold the response (before any header is sent) until
    /// [`ScriptedServer::open_gate`](crate::ScriptedServer::open_gate) is called with this name.
    pub gate: Option<String>,
}

/// One output item of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Step {
    /// Reasoning summary / thinking text, streamed delta by delta.
    Reasoning {
        #[serde(deserialize_with = "deltas_from_json")]
        deltas: Vec<String>,
    },
    /// Assistant text, streamed delta by delta.
    Text {
        #[serde(deserialize_with = "deltas_from_json")]
        deltas: Vec<String>,
    },
    /// A function/tool call. `arguments` is the raw JSON text; it is streamed in a few
    /// argument deltas so clients must concatenate fragments.
    ToolCall {
        call_id: String,
        name: String,
        arguments: String,
    },
}

/// Token counts in OpenAI's convention: `input_tokens` *includes* `cached_input_tokens` and
/// `output_tokens` *includes* `reasoning_tokens`. Renderers convert where a format differs
/// (Anthropic reports uncached input separately).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScriptUsage {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_tokens: u64,
}

/// Ways a response can fail. Event counts (`events`, `after`) count SSE events only; SSE
/// comment lines such as `: keep-alive` are not events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Fault {
    /// Answer with an HTTP error instead of a stream. `retry_after` / `retry_after_ms` become
    /// the `retry-after` / `retry-after-ms` headers; `body` replaces the default JSON error
    /// body (which is shaped like the route's format).
    Status {
        code: u16,
        #[serde(default)]
        retry_after: Option<String>,
        #[serde(default)]
        retry_after_ms: Option<u64>,
        #[serde(default)]
        body: Option<String>,
    },
    /// Send `events` SSE events, then close the connection abruptly: no terminal event and
    /// no end of the chunked body, like a proxy or server dying mid-stream. (With `events`
    /// beyond the stream's length, everything is sent and only the body's end is missing.)
    DropAfter { events: usize },
    /// Send `events` SSE events, keep the connection open but silent for `ms`, then close it
    /// abruptly. Exercises idle timeouts.
    StallAfter { events: usize, ms: u64 },
    /// After `after` events, emit the format's in-stream error and end the body cleanly.
    /// `kind` is the error type/code (e.g. `overloaded_error`, `rate_limit_exceeded`,
    /// `server_error`, `context_length_exceeded`).
    StreamError {
        after: usize,
        kind: String,
        message: String,
    },
}

impl Fault {
    /// An HTTP error with no retry headers and the default body.
    pub fn status(code: u16) -> Fault {
        Fault::Status {
            code,
            retry_after: None,
            retry_after_ms: None,
            body: None,
        }
    }
}

impl ScriptedResponse {
    /// An empty response (no output items); add steps with the `with_*` builders.
    pub fn new() -> Self {
        Self::default()
    }

    /// A plain assistant message, split into word deltas so clients see several chunks.
    pub fn text(text: &str) -> Self {
        Self::new().with_text(text)
    }

    /// A response consisting of a single tool call.
    pub fn tool_call(call_id: &str, name: &str, arguments_json: &str) -> Self {
        Self::new().with_tool_call(call_id, name, arguments_json)
    }

    /// An HTTP error response (no stream). See [`Self::with_retry_after`] and friends.
    pub fn status(code: u16) -> Self {
        Self::new().with_fault(Fault::status(code))
    }

    /// Append a step verbatim (for exact control over deltas).
    pub fn with_step(mut self, step: Step) -> Self {
        self.steps.push(step);
        self
    }

    /// Append a text item split into word deltas.
    pub fn with_text(self, text: &str) -> Self {
        self.with_step(Step::Text {
            deltas: split_words(text),
        })
    }

    /// Add a reasoning item *before* the first non-reasoning item, because models think
    /// before they speak and the builder reads naturally as `text(..).with_reasoning(..)`.
    pub fn with_reasoning(mut self, text: &str) -> Self {
        let at = self
            .steps
            .iter()
            .position(|s| !matches!(s, Step::Reasoning { .. }))
            .unwrap_or(self.steps.len());
        self.steps.insert(
            at,
            Step::Reasoning {
                deltas: split_words(text),
            },
        );
        self
    }

    /// Append a tool call (several calls in one response are parallel calls).
    pub fn with_tool_call(self, call_id: &str, name: &str, arguments_json: &str) -> Self {
        self.with_step(Step::ToolCall {
            call_id: call_id.to_string(),
            name: name.to_string(),
            arguments: arguments_json.to_string(),
        })
    }

    /// Report usage (OpenAI convention: `input` includes `cached`, `output` includes
    /// `reasoning`).
    pub fn with_usage(mut self, input: u64, cached: u64, output: u64, reasoning: u64) -> Self {
        self.usage = Some(ScriptUsage {
            input_tokens: input,
            cached_input_tokens: cached,
            output_tokens: output,
            reasoning_tokens: reasoning,
        });
        self
    }

    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }

    /// Sleep this long between SSE events.
    pub fn with_chunk_delay(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = ms;
        self
    }

    /// Hold the response until the named gate is opened.
    pub fn with_gate(mut self, name: &str) -> Self {
        self.gate = Some(name.to_string());
        self
    }

    /// Set the `retry-after` header of a [`Fault::Status`] response (seconds or HTTP-date).
    ///
    /// # Panics
    /// If the response has no `Status` fault: a misuse of the builder.
    pub fn with_retry_after(mut self, value: &str) -> Self {
        *self.status_field("with_retry_after").0 = Some(value.to_string());
        self
    }

    /// Set the `retry-after-ms` header of a [`Fault::Status`] response.
    ///
    /// # Panics
    /// If the response has no `Status` fault.
    pub fn with_retry_after_ms(mut self, ms: u64) -> Self {
        *self.status_field("with_retry_after_ms").1 = Some(ms);
        self
    }

    /// Replace the default JSON error body of a [`Fault::Status`] response.
    ///
    /// # Panics
    /// If the response has no `Status` fault.
    pub fn with_error_body(mut self, body: &str) -> Self {
        *self.status_field("with_error_body").2 = Some(body.to_string());
        self
    }

    fn status_field(
        &mut self,
        what: &str,
    ) -> (&mut Option<String>, &mut Option<u64>, &mut Option<String>) {
        match &mut self.fault {
            Some(Fault::Status {
                retry_after,
                retry_after_ms,
                body,
                ..
            }) => (retry_after, retry_after_ms, body),
            other => panic!("{what} needs a Fault::Status response, found {other:?}"),
        }
    }
}

/// Split text into word deltas whose concatenation is the original text: whitespace is
/// attached to the word that follows it ("Hello world" → ["Hello", " world"]).
pub fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut prev_ws = false;
    for ch in text.chars() {
        let ws = ch.is_whitespace();
        if ws && !prev_ws && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.push(ch);
        prev_ws = ws;
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Split tool-call arguments into up to three fragments (on char boundaries) so clients are
/// forced to concatenate argument deltas. Empty arguments give no fragment.
pub fn split_arguments(arguments: &str) -> Vec<String> {
    let chars: Vec<char> = arguments.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(3).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn deltas_from_json<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Deltas {
        Text(String),
        List(Vec<String>),
    }
    Ok(match Deltas::deserialize(d)? {
        Deltas::Text(text) => split_words(&text),
        Deltas::List(list) => list,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_words_keeps_text() {
        assert_eq!(split_words("Hello world"), vec!["Hello", " world"]);
        assert_eq!(split_words("  a  b\nc "), vec!["  a", "  b", "\nc", " "]);
        assert!(split_words("").is_empty());
        for t in ["x", "a b c", "über straße", " lead", "trail "] {
            assert_eq!(split_words(t).concat(), t);
        }
    }

    #[test]
    fn split_arguments_in_fragments() {
        let args = r#"{"cmd":"cargo test"}"#;
        let parts = split_arguments(args);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.concat(), args);
        assert_eq!(split_arguments("{}"), vec!["{", "}"]);
        assert!(split_arguments("").is_empty());
    }

    #[test]
    fn builders_order_steps() {
        let r = ScriptedResponse::text("hi there")
            .with_reasoning("think")
            .with_tool_call("c1", "shell", "{}");
        assert!(matches!(r.steps[0], Step::Reasoning { .. }));
        assert!(matches!(r.steps[1], Step::Text { .. }));
        assert!(matches!(r.steps[2], Step::ToolCall { .. }));
    }

    #[test]
    fn json_script_round_trips_and_accepts_string_deltas() {
        let json = r#"[{"steps":[{"type":"text","deltas":"a b"}],"usage":{"input_tokens":3}},
                       {"fault":{"type":"status","code":429,"retry_after":"2"}},
                       {"fault":{"type":"drop_after","events":2},"gate":"g"}]"#;
        let script: Vec<ScriptedResponse> = serde_json::from_str(json).unwrap();
        assert_eq!(
            script[0].steps[0],
            Step::Text {
                deltas: vec!["a".into(), " b".into()]
            }
        );
        assert_eq!(script[0].usage.unwrap().input_tokens, 3);
        assert_eq!(
            script[1],
            ScriptedResponse::status(429).with_retry_after("2")
        );
        let back: Vec<ScriptedResponse> =
            serde_json::from_str(&serde_json::to_string(&script).unwrap()).unwrap();
        assert_eq!(back, script);
    }

    #[test]
    #[should_panic(expected = "needs a Fault::Status")]
    fn retry_after_without_status_panics() {
        let _ = ScriptedResponse::text("x").with_retry_after("1");
    }
}
