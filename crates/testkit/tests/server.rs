//! Server behaviour outside rendering: queue, 418/404, recording, gates, repeat, shutdown.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::Duration;

use common::{post, request};
use jucode_testkit::{ScriptedResponse, ScriptedServer};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn base_url_points_at_v1() {
    let server = ScriptedServer::start();
    assert_eq!(
        server.base_url(),
        format!("http://127.0.0.1:{}/v1", server.port())
    );
}

#[test]
fn empty_queue_answers_418() {
    let server = ScriptedServer::start();
    let r = post(server.addr(), "/v1/responses", "{}");
    assert_eq!(r.status, 418);
    assert_eq!(
        r.json(),
        json!({"error": {"message": "no scripted response left", "type": "invalid_request_error"}})
    );
}

#[test]
fn unknown_path_is_404_and_does_not_consume() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("hi"));
    assert_eq!(post(server.addr(), "/v1/models", "{}").status, 404);
    assert_eq!(
        request(server.addr(), "GET", "/v1/responses", &[], "").status,
        405
    );
    assert_eq!(server.pending(), 1);
    assert_eq!(post(server.addr(), "/v1/responses", "{}").status, 200);
    assert_eq!(server.pending(), 0);
}

#[test]
fn queue_is_fifo_across_routes() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("first"));
    server.push(ScriptedResponse::status(500));
    let r = post(server.addr(), "/v1/chat/completions", "{}");
    assert!(r.body().contains("first"));
    assert_eq!(post(server.addr(), "/v1/messages", "{}").status, 500);
    assert_eq!(post(server.addr(), "/v1/responses", "{}").status, 418);
}

#[test]
fn records_requests() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("hi"));
    post(server.addr(), "/v1/models", "not json");
    request(
        server.addr(),
        "POST",
        "/v1/messages?beta=true",
        &[("X-Api-Key", "secret"), ("anthropic-version", "2023-06-01")],
        r#"{"model":"m","stream":true}"#,
    );
    let reqs = server.wait_for_requests(2, WAIT);
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].path, "/v1/models");
    assert_eq!(reqs[0].body, json!("not json"));
    let r = &reqs[1];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some("secret"));
    assert_eq!(r.header("X-API-KEY"), Some("secret"));
    assert!(r
        .headers
        .iter()
        .any(|(k, v)| k == "x-api-key" && v == "secret"));
    assert_eq!(r.body, json!({"model": "m", "stream": true}));
    assert_eq!(server.requests(), reqs);
    assert_eq!(server.request_count(), 2);
}

#[test]
#[should_panic(expected = "waiting for 1 request(s)")]
fn wait_for_requests_times_out_with_message() {
    let server = ScriptedServer::start();
    server.wait_for_requests(1, Duration::from_millis(50));
}

#[test]
fn wait_for_requests_wakes_on_arrival() {
    let server = ScriptedServer::start();
    let addr = server.addr();
    let client = std::thread::spawn(move || post(addr, "/v1/responses", r#"{"n":1}"#));
    let reqs = server.wait_for_requests(1, WAIT);
    assert_eq!(reqs[0].body["n"], 1);
    assert_eq!(client.join().unwrap().status, 418);
}

#[test]
fn gate_holds_response_until_opened() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("held").with_gate("turn1"));
    let addr = server.addr();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(post(addr, "/v1/responses", "{}")).unwrap());
    // Recorded before the gate is waited on.
    server.wait_for_requests(1, WAIT);
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "response must wait for the gate"
    );
    server.open_gate("turn1");
    let r = rx.recv_timeout(WAIT).expect("response after gate opened");
    assert_eq!(r.status, 200);
    assert!(r.complete);
    assert!(r.body().contains("held"));
}

#[test]
fn gate_opened_before_request_does_not_block() {
    let server = ScriptedServer::start();
    server.open_gate("g");
    server.push(ScriptedResponse::status(429).with_gate("g"));
    server.push(ScriptedResponse::text("again").with_gate("g"));
    assert_eq!(post(server.addr(), "/v1/messages", "{}").status, 429);
    assert_eq!(post(server.addr(), "/v1/messages", "{}").status, 200);
}

#[test]
fn gated_request_does_not_block_later_ones() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("slow").with_gate("later"));
    server.push(ScriptedResponse::text("fast"));
    let addr = server.addr();
    let held = std::thread::spawn(move || post(addr, "/v1/responses", "{}"));
    server.wait_for_requests(1, WAIT);
    let r = post(server.addr(), "/v1/responses", "{}");
    assert!(r.body().contains("fast"));
    server.open_gate("later");
    assert!(held.join().unwrap().body().contains("slow"));
}

#[test]
fn repeat_loops_the_script() {
    let server = ScriptedServer::start();
    server.set_repeat(true);
    server.set_recording(false);
    server.push_all([ScriptedResponse::text("a"), ScriptedResponse::status(503)]);
    for _ in 0..3 {
        assert_eq!(
            post(server.addr(), "/v1/chat/completions", "{}").status,
            200
        );
        assert_eq!(
            post(server.addr(), "/v1/chat/completions", "{}").status,
            503
        );
    }
    assert_eq!(server.request_count(), 6);
    assert!(server.requests().is_empty());
}

#[test]
fn drop_shuts_down_even_with_a_held_connection() {
    let server = ScriptedServer::start();
    server.push(ScriptedResponse::text("never").with_gate("never"));
    let addr = server.addr();
    let client = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .write_all(b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            .unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        let mut got = Vec::new();
        // Returns (EOF or reset) once the server is gone, instead of hanging.
        let _ = stream.read_to_end(&mut got);
        got
    });
    server.wait_for_requests(1, WAIT);
    drop(server);
    assert!(client.join().unwrap().is_empty(), "no response was started");
    assert!(TcpStream::connect(addr).is_err());
}
