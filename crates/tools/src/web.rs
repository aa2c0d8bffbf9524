//! `web_fetch`: GET a URL and return readable text.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};

use crate::args::WebFetchArgs;
use crate::output::keep_start;
use crate::{ToolContext, ToolOutput};

const TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes of body we read at most; pages beyond this are cut, not refused.
const MAX_BODY: usize = 5 * 1024 * 1024;
/// html2text wraps at this width; wide enough not to break code samples much.
const TEXT_WIDTH: usize = 120;

pub(crate) async fn fetch(a: &WebFetchArgs, ctx: &ToolContext) -> ToolOutput {
    match fetch_inner(a.url.trim(), ctx.max_output_bytes).await {
        Ok(out) => out,
        Err(e) => ToolOutput::error(e),
    }
}

async fn fetch_inner(url: &str, max_output: usize) -> Result<ToolOutput, String> {
    let url = reqwest::Url::parse(url).map_err(|e| format!("invalid URL {url:?}: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "unsupported URL scheme {:?}; web_fetch only fetches http and https",
            url.scheme()
        ));
    }
    // A client per call: clients pool connections on the runtime that made
    // them, and the engine may run tools on different runtimes.
    let client = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .user_agent(concat!("jucode/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot create HTTP client: {e}"))?;
    let mut resp = client
        .get(url.clone())
        .header(
            ACCEPT,
            "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5",
        )
        .send()
        .await
        .map_err(|e| request_error(&url, &e))?;
    let status = resp.status();
    let final_url = resp.url().clone();
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();

    let mut body = Vec::new();
    let mut cut = false;
    while let Some(chunk) = resp.chunk().await.map_err(|e| request_error(&url, &e))? {
        let room = MAX_BODY - body.len();
        if chunk.len() >= room {
            body.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }

    let kind = Kind::of(&content_type, &body);
    let text = match kind {
        Kind::Html => {
            // Rendering a multi-megabyte page is CPU work; keep it off the executor.
            tokio::task::spawn_blocking(move || html_to_text(&body))
                .await
                .map_err(|e| format!("internal error: {e}"))?
        }
        Kind::Text => String::from_utf8_lossy(&body).into_owned(),
        Kind::Binary => {
            return Err(format!(
                "{final_url} returned binary content ({content_type}, {} bytes); web_fetch only returns text and HTML",
                body.len()
            ))
        }
    };

    let mut out = String::new();
    if final_url != url {
        out.push_str(&format!("(redirected to {final_url})\n\n"));
    }
    if !status.is_success() {
        out.push_str(&format!("HTTP {status} from {final_url}\n\n"));
    }
    out.push_str(text.trim());
    if out.is_empty() {
        out.push_str("(empty response)");
    }
    if cut {
        out.push_str(&format!("\n… (body cut at {MAX_BODY} bytes)"));
    }
    Ok(ToolOutput {
        output: keep_start(&out, max_output),
        is_error: !status.is_success(),
    })
}

fn request_error(url: &reqwest::Url, e: &reqwest::Error) -> String {
    if e.is_timeout() {
        format!("request to {url} timed out after {} s", TIMEOUT.as_secs())
    } else {
        // The source chain holds the useful part ("connection refused", DNS...).
        let mut msg = format!("request to {url} failed: {e}");
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            msg.push_str(&format!(": {s}"));
            source = s.source();
        }
        msg
    }
}

fn html_to_text(body: &[u8]) -> String {
    html2text::from_read(body, TEXT_WIDTH)
        .unwrap_or_else(|_| String::from_utf8_lossy(body).into_owned())
}

#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary,
}

impl Kind {
    fn of(content_type: &str, body: &[u8]) -> Kind {
        let head = &body[..body.len().min(1024)];
        let head_text = String::from_utf8_lossy(head).to_ascii_lowercase();
        let looks_html = {
            let t = head_text.trim_start();
            t.starts_with("<!doctype html") || t.starts_with("<html")
        };
        if content_type.contains("html") || (content_type.is_empty() && looks_html) {
            return Kind::Html;
        }
        const TEXTUAL: [&str; 8] = [
            "text/",
            "json",
            "xml",
            "javascript",
            "yaml",
            "toml",
            "csv",
            "markdown",
        ];
        if TEXTUAL.iter().any(|t| content_type.contains(t)) {
            return Kind::Text;
        }
        // Unlabelled or mislabelled (octet-stream) text is common for raw files.
        let generic =
            content_type.is_empty() || content_type.starts_with("application/octet-stream");
        if generic && !head.contains(&0) && std::str::from_utf8(body).is_ok() {
            return Kind::Text;
        }
        Kind::Binary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(Kind::of("text/html; charset=utf-8", b""), Kind::Html);
        assert_eq!(Kind::of("", b"  <!DOCTYPE html><p>x"), Kind::Html);
        assert_eq!(Kind::of("application/json", b"{}"), Kind::Text);
        assert_eq!(Kind::of("", b"plain words"), Kind::Text);
        assert_eq!(Kind::of("image/png", b"\x89PNG\0"), Kind::Binary);
        assert_eq!(Kind::of("application/octet-stream", b"a\0b"), Kind::Binary);
    }

    #[test]
    fn html_becomes_text() {
        let t = html_to_text(b"<html><body><h1>Title</h1><p>Hello <b>world</b></p><script>var x;</script></body></html>");
        assert!(t.contains("Title"), "{t}");
        assert!(t.contains("Hello"), "{t}");
        assert!(!t.contains("<p>"), "{t}");
    }
}
