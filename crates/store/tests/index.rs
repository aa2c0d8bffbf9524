mod common;

use std::fs;
use std::path::Path;

use common::{header, store, write_chain};
use jucode_store::{IndexEntry, Store};

fn ids(list: &[IndexEntry]) -> Vec<&str> {
    list.iter().map(|e| e.id.as_str()).collect()
}

fn index_lines(store: &Store) -> usize {
    fs::read_to_string(store.dir().join("index.jsonl"))
        .unwrap()
        .lines()
        .count()
}

#[test]
fn list_is_newest_first_with_labels_and_cwd_filters() {
    let (_tmp, store) = store();
    let mut a = store.create(&header("a", "/repo/one", 1_000)).unwrap();
    let mut b = store.create(&header("b", "/repo/two", 2_000)).unwrap();
    store.create(&header("c", "/repo/one", 3_000)).unwrap();
    assert_eq!(ids(&store.list()), ["c", "b", "a"]);

    // The label is set once, on one line, and shortened.
    a.set_label("  fix the\n\tbuild  ").unwrap();
    a.set_label("a later message").unwrap();
    b.set_label(&"long ".repeat(100)).unwrap();
    let list = store.list();
    // set_label counts as activity: a and b are now newer than c.
    assert_eq!(list[2].id, "c");
    let label = |id: &str| list.iter().find(|e| e.id == id).unwrap().label.clone();
    assert_eq!(label("a"), "fix the build");
    assert_eq!(label("b").chars().count(), 200);
    assert!(label("b").ends_with('…'));
    assert_eq!(label("c"), "");

    // Past the millisecond of the labels, so the order is not a tie.
    std::thread::sleep(std::time::Duration::from_millis(3));
    a.touch().unwrap();
    let list = store.list();
    assert_eq!(list[0].id, "a");
    assert!(list[0].updated_at >= list[1].updated_at);
    assert_eq!(list[0].created_at, 1_000);

    assert_eq!(ids(&store.list_for_cwd(Path::new("/repo/one"))), ["a", "c"]);
    assert_eq!(
        ids(&store.list_for_cwd(Path::new("/repo/one/"))),
        ["a", "c"]
    );
    assert_eq!(ids(&store.list_for_cwd(Path::new("/repo/two"))), ["b"]);
    assert!(store.list_for_cwd(Path::new("/elsewhere")).is_empty());
    assert_eq!(
        store.latest_for_cwd(Path::new("/repo/one")).unwrap().id,
        "a"
    );
    assert_eq!(store.latest_for_cwd(Path::new("/nowhere")), None);
}

#[test]
fn a_resumed_session_keeps_its_label() {
    let (_tmp, store) = store();
    let mut w = store.create(&header("s", "/repo", 1)).unwrap();
    w.set_label("first").unwrap();
    drop(w);
    let mut w = store.append_to("s").unwrap();
    w.set_label("second").unwrap();
    w.touch().unwrap();
    assert_eq!(store.list()[0].label, "first");
}

#[test]
fn index_is_rebuilt_from_the_files_when_deleted_or_unreadable() {
    let (_tmp, store) = store();
    let mut a = store.create(&header("a", "/repo", 1_000)).unwrap();
    let user = common::record(
        None,
        "user_message",
        serde_json::json!({ "content": "hello\nworld" }),
    );
    a.append(&user).unwrap();
    a.set_label("hello\nworld").unwrap();
    write_chain(&mut a, 3);
    let mut b = store.create(&header("b", "/other", 2_000)).unwrap();
    write_chain(&mut b, 2);
    b.touch().unwrap();
    let before = store.list();
    assert_eq!(ids(&before), ["b", "a"]);

    fs::remove_file(store.dir().join("index.jsonl")).unwrap();
    let rebuilt = store.list();
    assert_eq!(ids(&rebuilt), ids(&before));
    let a_entry = rebuilt.iter().find(|e| e.id == "a").unwrap();
    assert_eq!(a_entry.label, "hello world");
    assert_eq!(a_entry.cwd, "/repo");
    assert_eq!(a_entry.created_at, 1_000);
    // The rebuilt index was written back.
    assert_eq!(index_lines(&store), 2);

    fs::write(store.dir().join("index.jsonl"), "garbage\n\u{0}\u{1}\n").unwrap();
    assert_eq!(ids(&store.list()), ids(&before));
}

#[test]
fn index_follows_the_files_on_disk() {
    let (_tmp, store) = store();
    store.create(&header("kept", "/repo", 1)).unwrap();
    store.create(&header("gone", "/repo", 2)).unwrap();
    fs::remove_file(store.dir().join("gone.jsonl")).unwrap();
    // A session the index never heard of (e.g. an upsert lost to a race).
    let other = Store::new(store.dir().join("elsewhere"));
    other.create(&header("stray", "/repo", 3)).unwrap();
    fs::copy(
        other.dir().join("stray.jsonl"),
        store.dir().join("stray.jsonl"),
    )
    .unwrap();
    // Not sessions: temp files, the index itself.
    fs::write(store.dir().join(".index.jsonl.1.tmp"), "x").unwrap();

    let list = store.list();
    let mut listed = ids(&list);
    listed.sort();
    assert_eq!(listed, ["kept", "stray"]);
    assert!(!store.exists("gone"));
}

#[test]
fn index_is_compacted_past_four_lines_per_session() {
    let (_tmp, store) = store();
    let mut a = store.create(&header("a", "/repo", 1)).unwrap();
    let mut b = store.create(&header("b", "/repo", 2)).unwrap();
    let mut max_lines = 0;
    for _ in 0..20 {
        a.touch().unwrap();
        b.touch().unwrap();
        max_lines = max_lines.max(index_lines(&store));
    }
    assert!(max_lines <= 8, "index grew to {max_lines} lines");
    assert!(index_lines(&store) < 8);
    a.set_label("kept across compaction").unwrap();
    for _ in 0..10 {
        b.touch().unwrap();
    }
    let list = store.list();
    assert_eq!(list.len(), 2);
    assert_eq!(
        list.iter().find(|e| e.id == "a").unwrap().label,
        "kept across compaction"
    );
    // No temp file left behind.
    let names: Vec<String> = fs::read_dir(store.dir())
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[test]
fn a_torn_index_line_loses_nothing_else() {
    let (_tmp, store) = store();
    let mut a = store.create(&header("a", "/repo", 1)).unwrap();
    let index = store.dir().join("index.jsonl");
    let mut text = fs::read_to_string(&index).unwrap();
    text.push_str("{\"id\":\"a\",\"cwd\":\"/re");
    fs::write(&index, text).unwrap();
    assert_eq!(ids(&store.list()), ["a"]);

    // The next upsert starts on a fresh line instead of gluing onto the
    // fragment.
    a.set_label("after the tear").unwrap();
    assert_eq!(store.list()[0].label, "after the tear");
}
