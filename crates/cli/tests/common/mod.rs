//! Shared set-up for the binary-driven tests.
#![allow(dead_code)]

use std::time::Duration;

use jucode_testkit::{Driver, ScriptedServer, TestHome};
use serde_json::Value;

pub const T: Duration = Duration::from_secs(20);

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_jucode")
}

/// `jucode serve` with a profile pointed at `server` in the given wire format.
pub fn serve_with(home: &TestHome, extra: &[&str]) -> Driver {
    let mut args = vec!["serve"];
    args.extend_from_slice(extra);
    Driver::new(bin())
        .args(args)
        .env("JUCODE_HOME", home.path())
        .env("JUCODE_TEST_KEY", "sk-test-secret-key")
        .current_dir(home.workspace())
        .spawn()
}

/// A home whose config talks to `server` with `wire_api`.
pub fn home_for(server: &ScriptedServer, wire_api: &str) -> TestHome {
    TestHome::with_server(server, wire_api)
}

/// Reads `hello` and the startup batch; returns the batch (after hello).
pub fn startup(driver: &mut Driver) -> Vec<Value> {
    let hello = driver.next(T).expect("hello");
    assert_eq!(hello["type"], "hello");
    driver.collect_until(|v| v["type"] == "mcp_servers", T)
}

pub fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Every event the driver has seen, after reading whatever is left on stdout.
pub fn drain(d: &mut Driver) -> Vec<Value> {
    while d.next(std::time::Duration::from_millis(300)).is_some() {}
    d.seen().to_vec()
}

/// `status: ready`: the end of a turn.
pub fn is_ready(v: &Value) -> bool {
    v["type"] == "status" && v["message"] == "ready"
}

/// `jucode serve` in `mode` against `server` (Responses wire), past startup.
pub fn start(server: &ScriptedServer, mode: &str) -> (TestHome, Driver) {
    let home = home_for(server, "responses");
    let mut d = serve_with(&home, &["--approval-mode", mode]);
    startup(&mut d);
    (home, d)
}
