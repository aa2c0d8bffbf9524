//! Shared helpers of the HTTP tests: a mock endpoint, a fast retry policy
//! and a recorder of everything `stream_response` emits.
#![allow(dead_code)] // each test file uses a different subset

use std::time::{Duration, Instant};

use jucode_models::*;
use jucode_testkit::ScriptedServer;

pub const KEY: &str = "sk-test-secret-key";
pub const WIRES: [WireApi; 3] = [WireApi::Responses, WireApi::Chat, WireApi::Anthropic];

pub fn endpoint(server: &ScriptedServer, wire_api: WireApi) -> Endpoint {
    Endpoint {
        provider: "mock".into(),
        wire_api,
        base_url: server.base_url(),
        api_key: Some(KEY.into()),
        headers: vec![("x-extra".into(), "yes".into())],
    }
}

pub fn policy() -> RetryPolicy {
    RetryPolicy {
        max_retries: 3,
        base_delay_ms: 10,
        max_delay_ms: 40,
        max_honoured_delay_ms: 5_000,
        idle_timeout_ms: 300,
        connect_timeout_ms: 2_000,
    }
}

pub fn request() -> ModelRequest {
    ModelRequest {
        model: "test-model".into(),
        instructions: "Be brief.".into(),
        history: vec![HistoryItem::User {
            text: "hi".into(),
            images: vec![],
        }],
        tools: vec![],
        reasoning_effort: None,
        max_output_tokens: None,
        cache_key: "session-1".into(),
    }
}

pub struct Outcome {
    pub events: Vec<StreamEvent>,
    pub result: Result<ModelResponse, ModelError>,
    pub elapsed: Duration,
}

impl Outcome {
    pub fn text(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn retries(&self) -> Vec<(u32, u32, u64, String)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Retrying {
                    attempt,
                    max,
                    delay_ms,
                    reason,
                } => Some((*attempt, *max, *delay_ms, reason.clone())),
                _ => None,
            })
            .collect()
    }

    pub fn count(&self, pred: impl Fn(&StreamEvent) -> bool) -> usize {
        self.events.iter().filter(|e| pred(e)).count()
    }
}

pub async fn call(server: &ScriptedServer, wire: WireApi, policy: &RetryPolicy) -> Outcome {
    let http = reqwest::Client::new();
    let mut events = Vec::new();
    let mut sink = |e: StreamEvent| events.push(e);
    let started = Instant::now();
    let result = stream_response(
        &http,
        &endpoint(server, wire),
        &request(),
        policy,
        &mut sink,
    )
    .await;
    Outcome {
        events,
        result,
        elapsed: started.elapsed(),
    }
}

pub fn assistant_text(response: &ModelResponse) -> String {
    response
        .items
        .iter()
        .filter_map(|i| match i {
            HistoryItem::Assistant { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
