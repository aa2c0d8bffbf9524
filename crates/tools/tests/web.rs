//! web_fetch against a minimal local HTTP server.

use jucode_tools::{run, ToolContext};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Serves each connection one canned response chosen by request path.
async fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
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
                let path = req.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (status, ctype, body): (&str, &str, Vec<u8>) = match path.as_str() {
                    "/page" => (
                        "200 OK",
                        "text/html; charset=utf-8",
                        b"<html><head><title>T</title><style>p{color:red}</style></head>\
                          <body><h1>Welcome</h1><p>Hello <b>agent</b>.</p></body></html>"
                            .to_vec(),
                    ),
                    "/data.json" => ("200 OK", "application/json", b"{\"k\": 1}".to_vec()),
                    "/img" => ("200 OK", "image/png", b"\x89PNG\r\n\x1a\n\0\0".to_vec()),
                    _ => ("404 Not Found", "text/plain", b"no such page".to_vec()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(&body).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

async fn fetch(url: &str) -> jucode_tools::ToolOutput {
    let ctx = ToolContext::new(std::env::temp_dir());
    run(
        "web_fetch",
        &json!({ "url": url }).to_string(),
        &ctx,
        &mut |_| {},
    )
    .await
}

#[tokio::test]
async fn html_is_converted_to_text() {
    let base = serve().await;
    let out = fetch(&format!("{base}/page")).await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.output.contains("Welcome"), "{}", out.output);
    assert!(out.output.contains("Hello"), "{}", out.output);
    assert!(!out.output.contains("<p>"), "{}", out.output);
    assert!(!out.output.contains("color:red"), "{}", out.output);
}

#[tokio::test]
async fn text_types_pass_through_and_errors_are_reported() {
    let base = serve().await;
    let out = fetch(&format!("{base}/data.json")).await;
    assert_eq!((out.output.as_str(), out.is_error), ("{\"k\": 1}", false));

    let out = fetch(&format!("{base}/missing")).await;
    assert!(out.is_error);
    assert!(
        out.output.starts_with("HTTP 404 Not Found"),
        "{}",
        out.output
    );
    assert!(out.output.contains("no such page"), "{}", out.output);

    let out = fetch(&format!("{base}/img")).await;
    assert!(out.is_error && out.output.contains("binary"), "{out:?}");

    let out = fetch("ftp://example.com/x").await;
    assert!(out.is_error && out.output.contains("scheme"), "{out:?}");
    let out = fetch("not a url").await;
    assert!(
        out.is_error && out.output.contains("invalid URL"),
        "{out:?}"
    );
}

#[tokio::test]
async fn connection_refused_is_a_tool_error() {
    // Bind then drop to get a port with (almost certainly) no listener.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let out = fetch(&format!("http://{addr}/")).await;
    assert!(out.is_error && out.output.contains("failed"), "{out:?}");
}
