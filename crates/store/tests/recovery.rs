//! A killed writer loses at most the line it was writing.

mod common;

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{delta, header, record, store, write_chain};
use jucode_store::{Record, Store};
use serde_json::json;

fn append_raw(store: &Store, id: &str, bytes: &[u8]) {
    let mut file = OpenOptions::new()
        .append(true)
        .open(store.dir().join(format!("{id}.jsonl")))
        .unwrap();
    file.write_all(bytes).unwrap();
}

#[test]
fn torn_last_line_is_skipped_and_reported() {
    let (_tmp, store) = store();
    let mut writer = store.create(&header("torn", "/repo", 1)).unwrap();
    let written = write_chain(&mut writer, 5);
    let line = serde_json::to_string(&delta(Some(&written[4].id), "never finished")).unwrap();
    append_raw(&store, "torn", &line.as_bytes()[..line.len() / 2]);

    let loaded = store.load("torn").unwrap();
    assert_eq!(loaded.records, written);
    assert_eq!(loaded.skipped_lines.len(), 1);
    // Header is line 1, records 2..=6.
    assert_eq!(loaded.skipped_lines[0].line_number, 7);
    assert!(
        loaded.skipped_lines[0].reason.contains("torn"),
        "{:?}",
        loaded.skipped_lines
    );
}

#[test]
fn corrupt_middle_line_is_skipped_and_reported() {
    let (_tmp, store) = store();
    let mut writer = store.create(&header("mid", "/repo", 1)).unwrap();
    let mut written = write_chain(&mut writer, 2);
    append_raw(
        &store,
        "mid",
        b"{\"id\":\"x\",\"ts\":1,\"type\":\"assistant_del\n",
    );
    append_raw(&store, "mid", b"{\"id\":\"y\",\"ts\":1}\n"); // valid JSON, no type
    append_raw(&store, "mid", b"\xff\xfe not utf-8\n");
    append_raw(&store, "mid", b"\n"); // blank lines are ignored, not reported
    let more = delta(Some(&written[1].id), "still here");
    writer.append(&more).unwrap();
    written.push(more);

    let loaded = store.load("mid").unwrap();
    assert_eq!(loaded.records, written);
    let numbers: Vec<usize> = loaded.skipped_lines.iter().map(|s| s.line_number).collect();
    assert_eq!(numbers, [4, 5, 6]);
    assert!(loaded.skipped_lines[0].reason.starts_with("corrupt line"));
    assert!(loaded.skipped_lines[1].reason.contains("type"));
}

#[test]
fn append_to_cuts_a_torn_tail_before_writing() {
    let (_tmp, store) = store();
    let mut writer = store.create(&header("resume", "/repo", 1)).unwrap();
    let mut written = write_chain(&mut writer, 3);
    drop(writer);
    append_raw(&store, "resume", b"{\"id\":\"half\",\"parent_id\":nu");

    let mut writer = store.append_to("resume").unwrap();
    let next = delta(Some(&written[2].id), "after the crash");
    writer.append(&next).unwrap();
    written.push(next);

    let loaded = store.load("resume").unwrap();
    assert_eq!(loaded.records, written);
    assert!(
        loaded.skipped_lines.is_empty(),
        "{:?}",
        loaded.skipped_lines
    );
}

#[test]
fn a_whole_record_missing_only_its_newline_is_kept() {
    let (_tmp, store) = store();
    let writer = store.create(&header("nl", "/repo", 1)).unwrap();
    drop(writer);
    let whole = delta(None, "complete");
    append_raw(
        &store,
        "nl",
        serde_json::to_string(&whole).unwrap().as_bytes(),
    );
    assert_eq!(store.load("nl").unwrap().records, vec![whole.clone()]);

    let mut writer = store.append_to("nl").unwrap();
    let next = delta(Some(&whole.id), "next");
    writer.append(&next).unwrap();
    let loaded = store.load("nl").unwrap();
    assert_eq!(loaded.records, vec![whole, next]);
    assert!(loaded.skipped_lines.is_empty());
}

/// Simulates kill -9 at every kind of moment: the file cut at a pseudo-random
/// byte inside its last line, many times over.
#[test]
fn truncated_anywhere_in_the_last_line_loads_the_rest() {
    let (_tmp, store) = store();
    let mut writer = store.create(&header("killed", "/repo", 1)).unwrap();
    let mut written = Vec::new();
    let mut parent: Option<String> = None;
    for i in 0..300 {
        let rec = if i % 10 == 9 {
            let output = format!("line {i}: {}\n", "x".repeat(40)).repeat(50);
            record(
                parent.as_deref(),
                "tool_output",
                json!({ "call_id": format!("c{i}"), "name": "shell", "output": output, "is_error": false }),
            )
        } else {
            delta(parent.as_deref(), &format!("token {i} "))
        };
        writer.append(&rec).unwrap();
        parent = Some(rec.id.clone());
        written.push(rec);
    }
    drop(writer);
    let path = store.dir().join("killed.jsonl");
    let full = fs::read(&path).unwrap();
    let last_start = full[..full.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let last_len = full.len() - last_start;

    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..40 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Strictly inside the last line's JSON: at least one byte of it, at
        // most all but its closing brace (cutting only the newline leaves a
        // whole record, which is kept).
        let cut = last_start + 1 + (seed as usize) % (last_len - 2);
        fs::write(&path, &full[..cut]).unwrap();

        let loaded = store.load("killed").unwrap();
        assert_eq!(loaded.records.len(), written.len() - 1, "cut at {cut}");
        assert_eq!(loaded.records[..], written[..written.len() - 1]);
        assert_eq!(loaded.skipped_lines.len(), 1, "cut at {cut}");
        assert_eq!(loaded.skipped_lines[0].line_number, written.len() + 1);
    }
}

const CHILD_ENV: &str = "JUCODE_STORE_TEST_CHILD_DIR";

/// The writer half of `sigkilled_child_process_leaves_a_loadable_session`:
/// does nothing unless started by it.
#[test]
fn child_writer() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let store = Store::new(dir);
    let mut writer = store.create(&header("child", "/repo", 1)).unwrap();
    let mut parent: Option<String> = None;
    let started = Instant::now();
    // Bounded, in case the parent dies before it can kill us.
    while started.elapsed() < Duration::from_secs(20) {
        for i in 0..100 {
            let text = if i % 7 == 0 {
                "y".repeat(64 * 1024)
            } else {
                format!("t{i} ")
            };
            let rec = delta(parent.as_deref(), &text);
            writer.append(&rec).unwrap();
            parent = Some(rec.id);
        }
        writer.touch().unwrap();
    }
}

#[test]
fn sigkilled_child_process_leaves_a_loadable_session() {
    let (_tmp, store) = store();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, store.dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let path = store.dir().join("child.jsonl");
    let deadline = Instant::now() + Duration::from_secs(20);
    while fs::metadata(&path).map_or(0, |m| m.len()) < 2 * 1024 * 1024 {
        assert!(Instant::now() < deadline, "child wrote too little");
        assert!(child.try_wait().unwrap().is_none(), "child exited early");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();

    let loaded = store.load("child").unwrap();
    assert!(loaded.records.len() > 10);
    assert!(
        loaded.skipped_lines.len() <= 1,
        "{:?}",
        loaded.skipped_lines
    );
    // Every record but the first hangs off the one before it.
    for pair in loaded.records.windows(2) {
        assert_eq!(pair[1].parent_id.as_deref(), Some(pair[0].id.as_str()));
    }

    // Resuming cuts whatever was torn and continues cleanly.
    let leaf = loaded.records.last().unwrap().id.clone();
    let mut writer = store.append_to("child").unwrap();
    let next: Record = delta(Some(&leaf), "resumed");
    writer.append(&next).unwrap();
    let reloaded = store.load("child").unwrap();
    assert!(reloaded.skipped_lines.is_empty());
    assert_eq!(reloaded.records.len(), loaded.records.len() + 1);
    assert_eq!(reloaded.records.last(), Some(&next));
    assert_eq!(store.list().len(), 1);
}
