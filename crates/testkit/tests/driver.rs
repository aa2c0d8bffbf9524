//! Driver against a tiny shell "engine": it says hello, echoes each stdin line as an event
//! and exits on EOF.

use std::time::Duration;

use jucode_testkit::{Driver, TestHome, DEFAULT_TIMEOUT, TEST_API_KEY};
use serde_json::json;

const ECHO: &str = r#"echo '{"type":"hello"}'; echo "started in $PWD" >&2
while IFS= read -r line; do echo "$line"; done
echo '{"type":"bye"}'; exit 3"#;

fn echo_engine() -> Driver {
    Driver::new("sh").args(["-c", ECHO]).spawn()
}

#[test]
fn send_and_wait() {
    let mut d = echo_engine();
    assert_eq!(
        d.wait_type("hello", DEFAULT_TIMEOUT),
        json!({"type": "hello"})
    );
    d.send(&json!({"type": "status", "state": "busy"}));
    d.send(&json!({"type": "delta", "text": "a"}));
    d.send(&json!({"type": "status", "state": "ready"}));
    let ready = d.wait_for(|v| v["state"] == "ready", DEFAULT_TIMEOUT);
    assert_eq!(ready["type"], "status");
    // Skipped events are still in the history.
    assert_eq!(d.seen().len(), 4);
    assert_eq!(d.seen()[2]["text"], "a");
    assert!(d.pid() > 0);
}

#[test]
fn collect_until_includes_the_match() {
    let mut d = echo_engine();
    for i in 0..3 {
        d.send(&json!({"type": "n", "i": i}));
    }
    let got = d.collect_until(|v| v["i"] == 1, DEFAULT_TIMEOUT);
    assert_eq!(got.len(), 3); // hello, i=0, i=1
    assert_eq!(got[2]["i"], 1);
    assert_eq!(d.next(DEFAULT_TIMEOUT).unwrap()["i"], 2);
    assert!(d.next(Duration::from_millis(50)).is_none());
}

#[test]
fn close_stdin_and_wait_exit() {
    let mut d = echo_engine();
    d.send_raw(r#"{"type":"raw"}"#);
    d.close_stdin();
    let status = d.wait_exit(DEFAULT_TIMEOUT);
    assert_eq!(status.code(), Some(3));
    d.wait_type("bye", DEFAULT_TIMEOUT);
    assert_eq!(d.seen().len(), 3);
    assert!(d.next(Duration::from_millis(10)).is_none());
    assert!(d.is_stdout_closed());
    assert!(d.stderr().contains("started in"));
}

#[test]
#[should_panic(expected = "non-JSON line on stdout: \"not json\"")]
fn non_json_stdout_fails() {
    let mut d = echo_engine();
    d.send_raw("not json");
    loop {
        d.next(DEFAULT_TIMEOUT);
    }
}

#[test]
fn timeout_panic_lists_events_and_stderr() {
    let result = std::panic::catch_unwind(|| {
        let mut d = echo_engine();
        d.send(&json!({"type": "marker_event"}));
        d.wait_type("never", Duration::from_millis(300));
    });
    let err = result.unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(msg.contains("timed out"), "{msg}");
    assert!(msg.contains("marker_event"), "{msg}");
    assert!(msg.contains("started in"), "{msg}");
}

#[test]
#[should_panic(expected = "closed stdout")]
fn eof_while_waiting_fails() {
    let mut d = echo_engine();
    d.close_stdin();
    d.wait_type("never", DEFAULT_TIMEOUT);
}

#[test]
fn kill_and_drop() {
    let mut d = Driver::new("sh").args(["-c", "exec sleep 30"]).spawn();
    d.kill();
    let status = d.wait_exit(DEFAULT_TIMEOUT);
    assert!(!status.success());
    // Dropping a live driver kills it (would otherwise leave `sleep 30` behind).
    let d = Driver::new("sh").args(["-c", "exec sleep 30"]).spawn();
    let pid = d.pid();
    drop(d);
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
}

#[test]
#[should_panic(expected = "did not exit")]
fn wait_exit_times_out() {
    let mut d = Driver::new("sh").args(["-c", "exec sleep 30"]).spawn();
    d.wait_exit(Duration::from_millis(100));
}

#[test]
fn home_sets_env_and_cwd() {
    let home = TestHome::new();
    let script = r#"printf '{"home":"%s","key":"%s","cwd":"%s"}\n' "$JUCODE_HOME" "$JUCODE_TEST_KEY" "$PWD""#;
    let mut d = Driver::new("sh")
        .args(["-c", script])
        .env("UNUSED", "1")
        .home(&home)
        .spawn();
    let ev = d.next(DEFAULT_TIMEOUT).expect("event");
    assert_eq!(ev["home"], home.path().to_str().unwrap());
    assert_eq!(ev["key"], TEST_API_KEY);
    assert_eq!(ev["cwd"], home.workspace().to_str().unwrap());
    assert!(d.wait_exit(DEFAULT_TIMEOUT).success());
}
