//! A raw HTTP/1.1 client for the tests: it sees exactly what is on the wire (chunk
//! boundaries, a missing terminating chunk, arrival times), which a high-level client hides.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

pub struct HttpResponse {
    pub status: u16,
    /// Lowercased names.
    pub headers: Vec<(String, String)>,
    /// Body chunks as sent by the server (one per chunked-encoding chunk).
    pub chunks: Vec<String>,
    /// Arrival time of each chunk, since the request was written.
    pub chunk_times: Vec<Duration>,
    /// True when the body ended properly (terminating chunk / full content-length).
    pub complete: bool,
    /// When the body ended (cleanly or not), since the request was written.
    pub ended_at: Duration,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn body(&self) -> String {
        self.chunks.concat()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body()).expect("JSON body")
    }

    pub fn events(&self) -> Vec<SseEvent> {
        parse_sse(&self.body())
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: Option<String>,
    pub comment: Option<String>,
}

impl SseEvent {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.data.as_deref().expect("data line")).expect("JSON data")
    }
}

/// Parse an SSE body into blocks (one per blank-line-terminated frame).
pub fn parse_sse(body: &str) -> Vec<SseEvent> {
    assert!(
        body.is_empty() || body.ends_with("\n\n"),
        "SSE body must end with a blank line: {body:?}"
    );
    body.split_terminator("\n\n")
        .map(|block| {
            let mut ev = SseEvent::default();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    assert!(ev.event.is_none(), "two event lines in {block:?}");
                    ev.event = Some(v.to_string());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    assert!(ev.data.is_none(), "two data lines in {block:?}");
                    ev.data = Some(v.to_string());
                } else if let Some(v) = line.strip_prefix(": ") {
                    ev.comment = Some(v.to_string());
                } else {
                    panic!("unexpected SSE line {line:?}");
                }
            }
            ev
        })
        .collect()
}

pub fn post(addr: SocketAddr, path: &str, body: &str) -> HttpResponse {
    request(
        addr,
        "POST",
        path,
        &[("content-type", "application/json")],
        body,
    )
}

pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> HttpResponse {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let start = Instant::now();
    let mut reader = BufReader::new(stream);

    let mut line = String::new();
    reader.read_line(&mut line).expect("status line");
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut resp_headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).expect("header line");
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').expect("header colon");
        resp_headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let mut resp = HttpResponse {
        status,
        headers: resp_headers,
        chunks: Vec::new(),
        chunk_times: Vec::new(),
        complete: false,
        ended_at: Duration::ZERO,
    };
    if resp.header("transfer-encoding") == Some("chunked") {
        read_chunked(&mut reader, &mut resp, start);
    } else if let Some(len) = resp.header("content-length") {
        let mut buf = vec![0u8; len.parse().unwrap()];
        resp.complete = reader.read_exact(&mut buf).is_ok();
        resp.chunks.push(String::from_utf8(buf).unwrap());
        resp.chunk_times.push(start.elapsed());
    } else {
        let mut buf = String::new();
        let _ = reader.read_to_string(&mut buf);
        resp.chunks.push(buf);
        resp.complete = true;
    }
    resp.ended_at = start.elapsed();
    resp
}

fn read_chunked(reader: &mut BufReader<TcpStream>, resp: &mut HttpResponse, start: Instant) {
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return, // EOF before the terminating chunk
            Ok(_) => {}
        }
        let size = usize::from_str_radix(line.trim(), 16)
            .unwrap_or_else(|_| panic!("bad chunk size {line:?}"));
        if size == 0 {
            line.clear();
            let _ = reader.read_line(&mut line);
            resp.complete = true;
            return;
        }
        let mut buf = vec![0u8; size + 2];
        if reader.read_exact(&mut buf).is_err() {
            return;
        }
        buf.truncate(size);
        resp.chunks.push(String::from_utf8(buf).unwrap());
        resp.chunk_times.push(start.elapsed());
    }
}

/// Assert the body is framed as one SSE frame per HTTP chunk (no buffering/coalescing by the
/// server's body stream) and return the parsed frames.
pub fn frames_one_per_chunk(resp: &HttpResponse) -> Vec<SseEvent> {
    for chunk in &resp.chunks {
        assert_eq!(
            parse_sse(chunk).len(),
            1,
            "chunk is not one frame: {chunk:?}"
        );
    }
    resp.events()
}
