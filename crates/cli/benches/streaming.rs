//! `cargo bench -p jucode-cli --bench streaming`: what JuCode adds between a
//! provider writing a delta and the front-end reading `assistant_delta`.
//!
//! A minimal Responses-format SSE server runs in this process, so the time a
//! delta was written and the time its line arrived on jucode's stdout are on
//! one clock. Latency: deltas sent 2 ms apart, each measured. Throughput: a
//! 10,000-delta answer written as fast as the socket takes it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn main() {
    let latency_deltas = 500;
    let throughput_deltas = 10_000;
    let (lat_written, lat_read) = run_turn(latency_deltas, Some(Duration::from_millis(2)));
    let mut added: Vec<Duration> = lat_written
        .iter()
        .zip(&lat_read)
        .map(|(w, r)| r.saturating_duration_since(*w))
        .collect();
    added.sort_unstable();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "added latency per delta ({latency_deltas} deltas): median {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        us(added[added.len() / 2]),
        us(added[added.len() * 99 / 100]),
        us(added[added.len() - 1])
    );
    let (written, read) = run_turn(throughput_deltas, None);
    let elapsed = read.last().unwrap().duration_since(written[0]);
    println!(
        "throughput: {throughput_deltas} deltas in {:.1} ms = {:.0} deltas/s",
        elapsed.as_secs_f64() * 1000.0,
        throughput_deltas as f64 / elapsed.as_secs_f64()
    );
}

/// Runs one turn against a fresh server and engine; returns when each delta
/// was written and when each `assistant_delta` line was read.
fn run_turn(deltas: usize, gap: Option<Duration>) -> (Vec<Instant>, Vec<Instant>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (written_tx, written_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let written = serve_one(stream, deltas, gap);
        written_tx.send(written).unwrap();
    });

    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "model = \"bench\"\nprovider = \"bench\"\n\
             [providers.bench]\nwire_api = \"responses\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\
             [models.bench]\nprovider = \"bench\"\n"
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_jucode"))
        .arg("serve")
        .env("JUCODE_HOME", home.path())
        .current_dir(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        lines.read_line(&mut line).unwrap();
        if line.contains("\"mcp_servers\"") {
            break;
        }
    }
    stdin
        .write_all(b"{\"op\":\"user_message\",\"content\":\"go\"}\n")
        .unwrap();
    let mut read = Vec::with_capacity(deltas);
    loop {
        line.clear();
        if lines.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if line.starts_with("{\"type\":\"assistant_delta\"") {
            read.push(Instant::now());
        } else if line.contains("\"message\":\"ready\"") {
            break;
        }
    }
    let _ = stdin.write_all(b"{\"op\":\"shutdown\"}\n");
    let _ = child.wait();
    let written = written_rx.recv().unwrap();
    assert_eq!(read.len(), deltas, "every delta arrives");
    (written, read)
}

fn serve_one(mut stream: TcpStream, deltas: usize, gap: Option<Duration>) -> Vec<Instant> {
    stream.set_nodelay(true).unwrap();
    read_request(&mut stream);
    let mut out = Vec::with_capacity(deltas);
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    stream.write_all(head.as_bytes()).unwrap();
    let event = |stream: &mut TcpStream, kind: &str, data: &str| {
        let frame = format!("event: {kind}\ndata: {data}\n\n");
        stream.write_all(frame.as_bytes()).unwrap();
        stream.flush().unwrap();
    };
    event(
        &mut stream,
        "response.created",
        r#"{"type":"response.created","response":{"id":"r1","status":"in_progress","output":[]}}"#,
    );
    event(
        &mut stream,
        "response.output_item.added",
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m1","role":"assistant","content":[]}}"#,
    );
    for i in 0..deltas {
        if let Some(gap) = gap {
            std::thread::sleep(gap);
        }
        let data = format!(
            r#"{{"type":"response.output_text.delta","item_id":"m1","output_index":0,"content_index":0,"delta":"w{i} "}}"#
        );
        event(&mut stream, "response.output_text.delta", &data);
        out.push(Instant::now());
    }
    event(
        &mut stream,
        "response.output_item.done",
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"m1","role":"assistant","content":[{"type":"output_text","text":""}]}}"#,
    );
    event(
        &mut stream,
        "response.completed",
        r#"{"type":"response.completed","response":{"id":"r1","status":"completed","usage":{"input_tokens":10,"output_tokens":10}}}"#,
    );
    out
}

/// Reads headers and a Content-Length body (the engine's request).
fn read_request(stream: &mut TcpStream) {
    let mut buf = Vec::new();
    let mut byte = [0u8; 4096];
    loop {
        let n = stream.read(&mut byte).unwrap();
        buf.extend_from_slice(&byte[..n]);
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().unwrap())
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                let n = stream.read(&mut byte).unwrap();
                buf.extend_from_slice(&byte[..n]);
            }
            return;
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
