//! The `bash` tool against real processes.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jucode_tools::{run, ToolContext};
use serde_json::json;

fn ctx(dir: &Path) -> ToolContext {
    ToolContext::new(dir)
}

fn args(command: &str) -> String {
    json!({ "command": command }).to_string()
}

/// Alive = exists and is not a zombie (a container's init may reap late).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

async fn wait_dead(pid: i32) -> bool {
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

async fn read_pid(file: &Path) -> i32 {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(text) = std::fs::read_to_string(file) {
            if let Ok(pid) = text.trim().parse() {
                return pid;
            }
        }
        assert!(Instant::now() < until, "pid file never written");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn streams_updates_before_the_command_ends() {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let updates: Arc<Mutex<Vec<(Duration, String)>>> = Arc::default();
    let sink = updates.clone();
    let mut on_update = move |s: String| sink.lock().unwrap().push((start.elapsed(), s));
    let out = run(
        "bash",
        &args("echo a; sleep 0.5; echo b"),
        &ctx(dir.path()),
        &mut on_update,
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.output, "a\nb\n");
    let updates = updates.lock().unwrap();
    assert_eq!(updates[0].1, "a\n");
    assert!(
        updates[0].0 < Duration::from_millis(400),
        "first update at {:?}",
        updates[0].0
    );
    let all: String = updates.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(all, "a\nb\n");
}

#[tokio::test]
async fn stderr_is_merged_in_order_and_stdout_not_inherited() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        "bash",
        &args("echo one; echo two >&2; echo three"),
        &ctx(dir.path()),
        &mut |_| {},
    )
    .await;
    assert_eq!(out.output, "one\ntwo\nthree\n");
}

#[tokio::test]
async fn nonzero_exit_is_an_error_with_code() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        "bash",
        &args("echo oops; exit 3"),
        &ctx(dir.path()),
        &mut |_| {},
    )
    .await;
    assert!(out.is_error);
    assert_eq!(out.output, "oops\nexit code 3");
    let out = run("bash", &args("true"), &ctx(dir.path()), &mut |_| {}).await;
    assert!(!out.is_error);
    assert_eq!(out.output, "(no output)");
}

#[tokio::test]
async fn runs_in_cwd_with_null_stdin() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker.txt"), "").unwrap();
    // `cat` with no file reads stdin, which must be empty rather than ours.
    let out = run(
        "bash",
        &args("ls; cat; echo end"),
        &ctx(dir.path()),
        &mut |_| {},
    )
    .await;
    assert_eq!(out.output, "marker.txt\nend\n");
}

#[tokio::test]
async fn output_cap_keeps_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = ctx(dir.path());
    c.max_output_bytes = 100;
    let out = run("bash", &args("seq 1 10000"), &c, &mut |_| {}).await;
    assert!(!out.is_error);
    let (note, rest) = out.output.split_once('\n').unwrap();
    assert!(
        note.starts_with("… (") && note.ends_with(" bytes trimmed)"),
        "{note}"
    );
    assert!(rest.ends_with("9999\n10000\n"), "{rest}");
    assert!(rest.len() <= 100);
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("bg.pid");
    let cmd = format!(
        "sleep 30 & echo $! > {}; echo started; sleep 30",
        pid_file.display()
    );
    let started = Instant::now();
    let out = run(
        "bash",
        &json!({"command": cmd, "timeout": 1}).to_string(),
        &ctx(dir.path()),
        &mut |_| {},
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(out.is_error);
    assert!(out.output.contains("started"), "{}", out.output);
    assert!(
        out.output.ends_with("command timed out after 1 s"),
        "{}",
        out.output
    );
    let pid = read_pid(&pid_file).await;
    assert!(
        wait_dead(pid).await,
        "background child {pid} survived the timeout"
    );
}

#[tokio::test]
async fn dropping_the_future_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("bg.pid");
    let cmd = format!("sleep 30 & echo $! > {}; sleep 30", pid_file.display());
    let c = ctx(dir.path());
    let a = args(&cmd);
    let task = tokio::spawn(async move { run("bash", &a, &c, &mut |_| {}).await });
    let pid = read_pid(&pid_file).await;
    assert!(alive(pid));
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert!(
        wait_dead(pid).await,
        "background child {pid} survived the cancel"
    );
}

#[tokio::test]
async fn finished_command_does_not_wait_for_background_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    // The background sleep keeps the output pipe open; we must not hang on it.
    let out = run(
        "bash",
        &args("sleep 5 & echo done"),
        &ctx(dir.path()),
        &mut |_| {},
    )
    .await;
    assert_eq!(out.output, "done\n");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn bad_arguments_are_tool_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = run("bash", "{}", &ctx(dir.path()), &mut |_| {}).await;
    assert!(out.is_error && out.output.contains("command"), "{out:?}");
    let out = run(
        "bash",
        r#"{"command":"ls","timeout":-1}"#,
        &ctx(dir.path()),
        &mut |_| {},
    )
    .await;
    assert!(out.is_error && out.output.contains("timeout"), "{out:?}");
    let out = run("nope", "{}", &ctx(dir.path()), &mut |_| {}).await;
    assert!(
        out.is_error && out.output.contains("unknown tool"),
        "{out:?}"
    );
}

/// The engine spawns tool calls as tasks, so the future must be Send.
#[allow(dead_code)]
fn run_future_is_send(c: &ToolContext, f: &mut (dyn FnMut(String) + Send)) {
    fn assert_send<T: Send>(_: T) {}
    assert_send(run("bash", "{}", c, f));
}
