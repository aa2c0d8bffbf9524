//! Readable sentences for rmcp's errors. Its own `Display` texts name
//! internal types ("Send message error … when send initialize request");
//! a user needs the cause at the bottom of the chain.

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use rmcp::ServiceError;

/// A readable sentence for a failed handshake. rmcp's own `Display` names
/// internal transport types; the source chain is what a user needs.
pub(crate) fn describe_init(error: ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            tracing::debug!("MCP handshake failed when {context}");
            format!("handshake failed: {}", transport_error(&*error.error))
        }
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => describe_init(*fallback),
        ClientInitializeError::ConnectionClosed(_) => {
            "the server closed the connection during the handshake".into()
        }
        ClientInitializeError::JsonRpcError(e) => {
            format!("the server refused the handshake: {}", e.message)
        }
        other => format!("handshake failed: {}", chain(&other)),
    }
}

/// A readable sentence for a failed request.
pub(crate) fn describe(error: &ServiceError) -> String {
    match error {
        // Servers often put the code into the message themselves.
        ServiceError::McpError(e) if e.message.contains(&e.code.0.to_string()) => {
            e.message.to_string()
        }
        ServiceError::McpError(e) => format!("{} (code {})", e.message, e.code.0),
        ServiceError::TransportClosed => "the server closed the connection".into(),
        ServiceError::TransportSend(e) => transport_error(&*e.error),
        other => chain(other),
    }
}

/// rmcp wraps the HTTP client's error without exposing it as a `source`,
/// which hides the part that matters ("Connection refused"); unwrap it.
fn transport_error(error: &(dyn std::error::Error + Send + Sync + 'static)) -> String {
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(e)) => chain(e),
        _ => chain(error),
    }
}

/// `error: source: source…`, skipping sources whose text the outer message
/// already contains (many errors repeat their source).
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}
