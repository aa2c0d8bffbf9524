//! `cargo bench -p jucode-store`: writes a 50,000-record session shaped like
//! a real one and times `load`, then times `list` over 1,000 sessions.
//! The target is a load under 200 ms on a slow 2-core machine.

use std::hint::black_box;
use std::time::{Duration, Instant};

use jucode_store::{path_to, Record, SessionHeader, Store};
use serde_json::{json, Map, Value};

const RECORDS: usize = 50_000;
const SESSIONS: usize = 1_000;
const RUNS: usize = 10;

fn header(id: &str, cwd: &str, created_at: u64) -> SessionHeader {
    SessionHeader {
        id: id.to_owned(),
        cwd: cwd.to_owned(),
        created_at,
        version: "0.3.0".to_owned(),
        chat: false,
    }
}

fn body(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

/// A tool output of about 4 KiB: source-like lines with quotes, tabs and
/// newlines, so the JSON has escapes to decode like real output does.
fn tool_output(n: usize) -> String {
    let mut out = String::with_capacity(4200);
    let mut line = 0;
    while out.len() < 4000 {
        out.push_str(&format!(
            "src/module_{n}.rs:{line}:\tlet value = compute(\"arg {line}\", &mut state)?; // résumé\n"
        ));
        line += 1;
    }
    out
}

/// The body of record `i` of a turn-structured session: per 100 records, one
/// user message, reasoning and answer deltas (a few words each), three tool
/// calls with ~4 KiB outputs (each also stored as a history item), usage.
fn event(i: usize) -> Map<String, Value> {
    let turn = i / 100;
    let call = format!("call_{turn}_{}", (i % 100) / 4);
    body(match i % 100 {
        0 => {
            json!({ "type": "user_message", "content": format!("Please fix failing test number {turn} in the parser") })
        }
        1 => json!({ "type": "history_item", "item": { "type": "message", "role": "user",
                "content": [{ "type": "input_text", "text": format!("Please fix failing test number {turn}") }] } }),
        2 => json!({ "type": "thinking_start" }),
        3..=12 => json!({ "type": "reasoning_delta", "delta": " considering the parser's state" }),
        13 => json!({ "type": "assistant_start" }),
        20 | 40 | 60 => json!({ "type": "tool_start", "call_id": call, "name": "shell" }),
        21 | 41 | 61 => {
            json!({ "type": "history_item", "item": { "type": "function_call", "call_id": call,
                "name": "shell", "arguments": "{\"command\":\"cargo test -p parser\"}" } })
        }
        22 | 42 | 62 => json!({ "type": "tool_output", "call_id": call, "name": "shell",
                "output": tool_output(i), "is_error": false }),
        23 | 43 | 63 => json!({ "type": "history_item", "item": { "type": "function_call_output",
                "call_id": call, "output": tool_output(i) } }),
        99 => json!({ "type": "usage", "input_tokens": 12_345, "cached_input_tokens": 10_000,
                "output_tokens": 512, "reasoning_tokens": 128 }),
        _ => json!({ "type": "assistant_delta", "delta": format!(" the fix {i} is") }),
    })
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let store = Store::new(tmp.path().join("sessions"));

    // Write the big session.
    let started = Instant::now();
    let mut writer = store.create(&header("big", "/repo", 1)).unwrap();
    let mut parent: Option<String> = None;
    let mut leaf = String::new();
    for i in 0..RECORDS {
        let record = Record::new(parent.take(), event(i));
        writer.append(&record).unwrap();
        leaf.clone_from(&record.id);
        parent = Some(record.id);
    }
    writer.touch().unwrap();
    let write_time = started.elapsed();
    let size = std::fs::metadata(writer.path()).unwrap().len();
    drop(writer);
    println!(
        "write: {RECORDS} records, {:.1} MiB, {} ({:.1} µs/record)",
        size as f64 / (1024.0 * 1024.0),
        ms(write_time),
        write_time.as_secs_f64() * 1e6 / RECORDS as f64
    );

    // Load it, RUNS times; the first run also warms the page cache, as a
    // resume shortly after a session ends would find it.
    let mut samples = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let loaded = store.load("big").unwrap();
        samples.push(started.elapsed());
        assert_eq!(loaded.records.len(), RECORDS);
        assert!(loaded.skipped_lines.is_empty());
        black_box(loaded);
    }
    let (min, max) = (
        *samples.iter().min().unwrap(),
        *samples.iter().max().unwrap(),
    );
    println!(
        "load: {RECORDS} records, median {} (min {}, max {}) over {RUNS} runs; {:.0} MiB/s",
        ms(median(samples.clone())),
        ms(min),
        ms(max),
        size as f64 / (1024.0 * 1024.0) / median(samples).as_secs_f64()
    );

    let loaded = store.load("big").unwrap();
    let started = Instant::now();
    let chain = path_to(&loaded.records, &leaf);
    let tree_time = started.elapsed();
    assert_eq!(chain.len(), RECORDS);
    println!("path_to: {RECORDS}-record chain, {}", ms(tree_time));
    drop(loaded);

    // 1,000 more sessions across 10 directories, each labeled and touched.
    let list_store = Store::new(tmp.path().join("many"));
    for n in 0..SESSIONS {
        let cwd = format!("/home/dev/project-{}", n % 10);
        let mut w = list_store
            .create(&header(
                &format!("s{n:04}"),
                &cwd,
                1_700_000_000_000 + n as u64,
            ))
            .unwrap();
        w.append(&Record::new(None, event(0))).unwrap();
        w.set_label(&format!("Please fix failing test number {n} in the parser"))
            .unwrap();
        w.touch().unwrap();
    }
    let mut samples = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let list = list_store.list();
        samples.push(started.elapsed());
        assert_eq!(list.len(), SESSIONS);
        black_box(list);
    }
    println!(
        "list: {SESSIONS} sessions, median {} over {RUNS} runs",
        ms(median(samples))
    );

    let cwd = std::path::Path::new("/home/dev/project-3");
    let started = Instant::now();
    let latest = list_store.latest_for_cwd(cwd);
    println!("latest_for_cwd: {}", ms(started.elapsed()));
    assert!(latest.is_some());

    std::fs::remove_file(list_store.dir().join("index.jsonl")).unwrap();
    let started = Instant::now();
    let list = list_store.list();
    println!(
        "list with index rebuild: {SESSIONS} sessions, {}",
        ms(started.elapsed())
    );
    assert_eq!(list.len(), SESSIONS);

    let mut w = list_store.append_to("s0500").unwrap();
    let mut samples = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        w.touch().unwrap();
        samples.push(started.elapsed());
    }
    println!(
        "touch: index of {SESSIONS} sessions, median {}",
        ms(median(samples))
    );
}
