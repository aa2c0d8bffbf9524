//! web_search against a local SearXNG-shaped JSON server.

use std::sync::{Arc, Mutex};

use jucode_tools::{run, ToolContext, WebSearchConfig};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Answers every request with `body` (status `status`); records request lines.
async fn serve(status: &'static str, body: String) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let body = body.clone();
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let mut req = Vec::new();
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    req.extend_from_slice(&buf[..n]);
                }
                let req = String::from_utf8_lossy(&req);
                log.lock()
                    .unwrap()
                    .push(req.lines().next().unwrap_or("").to_string());
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(body.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (format!("http://{addr}"), seen)
}

fn ctx(base_url: &str) -> ToolContext {
    let config =
        WebSearchConfig::from_json(&json!({"provider": "searxng", "base_url": base_url})).unwrap();
    ToolContext::new(std::env::temp_dir()).with_web_search(Some(Arc::new(config)))
}

async fn search(ctx: &ToolContext, query: &str) -> jucode_tools::ToolOutput {
    run(
        "web_search",
        &json!({ "query": query }).to_string(),
        ctx,
        &mut |_| {},
    )
    .await
}

#[tokio::test]
async fn searxng_results_come_back_as_text() {
    let body = json!({"results": [
        {"title": "Rust Book", "url": "https://doc.rust-lang.org/book/", "content": "The Rust Programming Language"},
        {"title": "Tokio", "url": "https://tokio.rs", "content": "An async runtime"}
    ]})
    .to_string();
    let (base, seen) = serve("200 OK", body).await;
    let out = search(&ctx(&base), "rust async book").await;
    assert!(!out.is_error, "{}", out.output);
    assert!(out.output.contains("1. Rust Book"), "{}", out.output);
    assert!(out.output.contains("https://tokio.rs"), "{}", out.output);
    assert!(out.output.contains("An async runtime"), "{}", out.output);
    let line = seen.lock().unwrap()[0].clone();
    assert!(line.starts_with("GET /search?"), "{line}");
    assert!(line.contains("q=rust+async+book"), "{line}");
    assert!(line.contains("format=json"), "{line}");
}

#[tokio::test]
async fn backend_failures_are_tool_errors() {
    let (base, _) = serve("403 Forbidden", "{\"error\":\"json disabled\"}".into()).await;
    let out = search(&ctx(&base), "x").await;
    assert!(out.is_error);
    assert!(out.output.contains("HTTP 403"), "{}", out.output);

    let (base, _) = serve("200 OK", json!({"results": []}).to_string()).await;
    let out = search(&ctx(&base), "nothing").await;
    assert!(!out.is_error);
    assert!(out.output.contains("No results"), "{}", out.output);

    let unconfigured = ToolContext::new(std::env::temp_dir());
    let out = search(&unconfigured, "x").await;
    assert!(out.is_error);
    assert!(out.output.contains("not configured"), "{}", out.output);
}
