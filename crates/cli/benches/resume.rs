//! `cargo bench -p jucode-cli --bench resume`: `jucode serve --resume ID` on
//! a session of 50,000 records, from spawn to the end of the startup batch,
//! and the RSS once resumed.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use jucode_store::{Record, SessionHeader, Store};
use serde_json::{json, Map, Value};

const RECORDS: usize = 50_000;
const RUNS: usize = 10;

fn body(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

fn main() {
    let home = tempfile::tempdir().unwrap();
    let cwd = home.path().join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let store = Store::new(home.path().join("sessions"));
    let id = "bench-session";
    let mut writer = store
        .create(&SessionHeader {
            id: id.into(),
            cwd: cwd.display().to_string(),
            created_at: 0,
            version: "bench".into(),
            chat: false,
        })
        .unwrap();
    let output = "x".repeat(2_000);
    let mut parent: Option<String> = None;
    for i in 0..RECORDS {
        let b = match i % 10 {
            0 => json!({"type":"user_message","content":format!("question {i}")}),
            1 | 4 => {
                json!({"type":"history_item","item":{"kind":"tool_call","call_id":format!("c{i}"),"name":"read","arguments":"{\"path\":\"src/lib.rs\"}"}})
            }
            2 | 5 => {
                json!({"type":"history_item","item":{"kind":"tool_result","call_id":format!("c{}", i - 1),"output":output,"is_error":false}})
            }
            9 => json!({"type":"context_usage","tokens":1000,"tokenizer":"o200k","cost":0.5}),
            _ => {
                json!({"type":"history_item","item":{"kind":"assistant","text":format!("answer number {i} with some words in it")}})
            }
        };
        let record = Record::new(parent.clone(), body(b));
        parent = Some(record.id.clone());
        writer.append(&record).unwrap();
    }
    drop(writer);
    let size = std::fs::metadata(home.path().join("sessions").join(format!("{id}.jsonl")))
        .unwrap()
        .len();

    let mut times = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_jucode"))
            .args(["serve", "--resume", id])
            .env("JUCODE_HOME", home.path())
            .current_dir(&cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        for line in lines.by_ref() {
            let line = line.unwrap();
            assert!(!line.contains("\"error\""), "{line}");
            if line.contains("\"mcp_servers\"") {
                break;
            }
        }
        times.push(start.elapsed());
        rss.push(rss_kb(child.id()));
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(b"{\"op\":\"shutdown\"}\n");
        drop(stdin);
        let _ = child.wait();
    }
    times.sort_unstable();
    rss.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "resume of {RECORDS} records ({:.1} MB file): median {:.1} ms, max {:.1} ms; RSS median {:.1} MB",
        size as f64 / 1e6,
        ms(times[RUNS / 2]),
        ms(times[RUNS - 1]),
        rss[RUNS / 2] as f64 / 1024.0
    );
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
