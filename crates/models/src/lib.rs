//! jucode-models: the model-provider layer of JuCode.
//!
//! - [`stream_response`]: one streaming call to a model in any of the three
//!   wire formats (OpenAI Responses, Chat Completions, Anthropic Messages),
//!   with retries and per-delta callbacks.
//! - [`catalog`]: model metadata and prices; [`providers`]: endpoint
//!   resolution from config and env; [`tokens`]: o200k token estimates.

pub mod types;
pub use types::*;

pub mod catalog;
pub mod providers;
pub mod tokens;

mod anthropic;
mod chat;
mod client;
mod emit;
mod errors;
mod responses;
mod retry;
mod sse;

pub use catalog::{Catalog, LongContextPrice, ModelInfo, Price};
pub use client::{build_body, stream_response};
pub use providers::{resolve_endpoint, ProviderProblem};
pub use tokens::{count_history, count_tokens, warm_up};
