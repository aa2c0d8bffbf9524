mod common;

use common::{delta, header, record, store, write_chain};
use jucode_protocol::Event;
use jucode_store::{Record, StoreError, HEADER_TYPE};
use serde_json::json;

#[test]
fn create_append_load_round_trip() {
    let (_tmp, store) = store();
    let hdr = header("s1", "/repo", 1_000);
    let mut writer = store.create(&hdr).unwrap();
    assert_eq!(writer.id(), "s1");
    assert!(store.exists("s1"));

    let user = Record::from_event(
        None,
        &Event::UserMessage {
            content: "hello".into(),
            images: vec![],
            files: vec![],
        },
    );
    let history = record(
        Some(&user.id),
        "history_item",
        json!({ "item": { "role": "user", "content": [{ "type": "input_text", "text": "hello" }] } }),
    );
    let answer = delta(Some(&history.id), "Hi \"there\"\nsecond line ✓");
    for rec in [&user, &history, &answer] {
        writer.append(rec).unwrap();
    }

    let loaded = store.load("s1").unwrap();
    assert_eq!(loaded.header, hdr);
    assert_eq!(loaded.records, vec![user.clone(), history, answer]);
    assert!(loaded.skipped_lines.is_empty());
    assert_eq!(loaded.records[0].kind(), Some("user_message"));

    // The file itself: a header line, then one flat object per record.
    let text = std::fs::read_to_string(writer.path()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(text.ends_with('\n'));
    let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(first["type"], HEADER_TYPE);
    assert_eq!(first["cwd"], "/repo");
    let prefix = format!(r#"{{"id":"{}","parent_id":null,"ts":"#, user.id);
    assert!(lines[1].starts_with(&prefix), "{}", lines[1]);
    assert!(
        lines[1].contains(r#","type":"user_message","#),
        "{}",
        lines[1]
    );
    let second: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(second["type"], "user_message");
    assert_eq!(second["content"], "hello");
    assert_eq!(second["id"], user.id.as_str());
    assert_eq!(second["parent_id"], serde_json::Value::Null);
}

#[test]
fn events_with_their_own_id_round_trip() {
    let (_tmp, store) = store();
    let mut writer = store.create(&header("plans", "/repo", 1)).unwrap();
    let event = Event::ProposedPlan {
        id: "plan-7".into(),
        title: "Refactor".into(),
        markdown: "# Plan".into(),
        status: "proposed".into(),
    };
    let rec = Record::from_event(None, &event);
    writer.append(&rec).unwrap();

    let loaded = store.load("plans").unwrap();
    assert_eq!(loaded.records, vec![rec.clone()]);
    let back: Event = serde_json::from_value(loaded.records[0].body.clone().into()).unwrap();
    assert_eq!(back, event);
}

#[test]
fn append_to_continues_the_same_file() {
    let (_tmp, store) = store();
    let mut writer = store.create(&header("s2", "/repo", 1)).unwrap();
    let first = write_chain(&mut writer, 3);
    drop(writer);

    let loaded = store.load("s2").unwrap();
    let leaf = loaded.records.last().unwrap().id.clone();
    let mut writer = store.append_to("s2").unwrap();
    let more = delta(Some(&leaf), "after resume");
    writer.append(&more).unwrap();

    let loaded = store.load("s2").unwrap();
    assert_eq!(loaded.records.len(), 4);
    assert_eq!(loaded.records[..3], first[..]);
    assert_eq!(loaded.records[3], more);
    assert_eq!(store.list().len(), 1);
}

#[test]
fn errors_not_found_corrupt_and_bad_ids() {
    let (_tmp, store) = store();
    assert!(matches!(store.load("nope"), Err(StoreError::NotFound(id)) if id == "nope"));
    assert!(matches!(
        store.load("../etc/passwd"),
        Err(StoreError::NotFound(_))
    ));
    assert_eq!(
        store.append_to("nope").err().map(|e| e.kind()),
        Some(std::io::ErrorKind::NotFound)
    );
    for bad in ["", "a/b", "..", ".hidden", "index", "sp ace"] {
        let err = store.create(&header(bad, "/repo", 1)).err().unwrap();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{bad:?}");
        assert!(!store.exists(bad));
    }

    store.create(&header("dup", "/repo", 1)).unwrap();
    let err = store.create(&header("dup", "/repo", 2)).err().unwrap();
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);

    std::fs::write(store.dir().join("broken.jsonl"), "{\"type\":\"session_he").unwrap();
    assert!(matches!(store.load("broken"), Err(StoreError::Corrupt(_))));
    std::fs::write(store.dir().join("empty.jsonl"), "").unwrap();
    assert!(matches!(store.load("empty"), Err(StoreError::Corrupt(_))));
    // Neither is listed, and appending to them is refused.
    assert_eq!(store.list().len(), 1);
    assert!(store.append_to("broken").is_err());
}

#[test]
fn the_directory_is_created_lazily() {
    let (_tmp, store) = store();
    assert!(store.list().is_empty());
    assert!(!store.dir().exists());
    store.create(&header("s", "/repo", 1)).unwrap();
    assert!(store.dir().is_dir());
}
