//! read / write / edit / hunks / list / search on real files.

use std::fs;
use std::path::Path;

use jucode_tools::{edit_hunks, run, run_with_hunks, ToolContext, ToolOutput};
use serde_json::{json, Value};

async fn call(dir: &Path, name: &str, args: Value) -> ToolOutput {
    run(name, &args.to_string(), &ToolContext::new(dir), &mut |_| {}).await
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn read_with_offset_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f.txt"), numbered(10)).unwrap();
    let out = call(
        dir.path(),
        "read",
        json!({"path": "f.txt", "offset": 3, "limit": 2}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        out.output,
        "     3\tline 3\n     4\tline 4\n… (showing lines 3-4 of 10; use offset=5 to read more)"
    );
    let out = call(dir.path(), "read", json!({"path": "f.txt", "offset": 9})).await;
    assert_eq!(out.output, "     9\tline 9\n    10\tline 10\n");
    let out = call(dir.path(), "read", json!({"path": "f.txt", "offset": 50})).await;
    assert!(
        out.is_error && out.output.contains("past the end"),
        "{out:?}"
    );
}

#[tokio::test]
async fn read_errors_and_long_lines() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("bin"), b"\x7fELF\0\0\x01").unwrap();
    fs::create_dir(dir.path().join("sub")).unwrap();
    fs::write(dir.path().join("long.txt"), "x".repeat(5000)).unwrap();
    let out = call(dir.path(), "read", json!({"path": "bin"})).await;
    assert!(out.is_error && out.output.contains("binary"), "{out:?}");
    let out = call(dir.path(), "read", json!({"path": "sub"})).await;
    assert!(
        out.is_error && out.output.contains("use the `list` tool"),
        "{out:?}"
    );
    let out = call(dir.path(), "read", json!({"path": "missing.txt"})).await;
    assert!(
        out.is_error && out.output.contains("file not found: missing.txt"),
        "{out:?}"
    );
    let out = call(dir.path(), "read", json!({"path": "long.txt"})).await;
    assert!(
        out.output.contains("[line truncated, 3000 more chars]"),
        "{out:?}"
    );
}

#[tokio::test]
async fn write_creates_parents_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let out = call(
        dir.path(),
        "write",
        json!({"path": "a/b/c.txt", "content": "hello"}),
    )
    .await;
    assert_eq!(out, ToolOutput::ok("Created a/b/c.txt (5 bytes)"));
    assert_eq!(
        fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
        "hello"
    );
    let out = call(
        dir.path(),
        "write",
        json!({"path": "a/b/c.txt", "content": "bye"}),
    )
    .await;
    assert_eq!(out, ToolOutput::ok("Overwrote a/b/c.txt (3 bytes)"));
    assert_eq!(
        fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
        "bye"
    );
}

#[tokio::test]
async fn edit_found_missing_ambiguous_replace_all() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.rs");
    fs::write(&f, "let a = 1;\nlet b = 1;\nlet c = 2;\n").unwrap();

    let out = call(
        dir.path(),
        "edit",
        json!({"path": "x.rs", "old_text": "let c = 2;", "new_text": "let c = 3;"}),
    )
    .await;
    assert_eq!(out, ToolOutput::ok("Edited x.rs (1 replacement)"));
    assert_eq!(
        fs::read_to_string(&f).unwrap(),
        "let a = 1;\nlet b = 1;\nlet c = 3;\n"
    );

    let out = call(
        dir.path(),
        "edit",
        json!({"path": "x.rs", "old_text": "nope", "new_text": "x"}),
    )
    .await;
    assert!(
        out.is_error && out.output.starts_with("old_text not found in x.rs"),
        "{out:?}"
    );

    let out = call(
        dir.path(),
        "edit",
        json!({"path": "x.rs", "old_text": "= 1;", "new_text": "= 9;"}),
    )
    .await;
    assert_eq!(
        out,
        ToolOutput::error("old_text occurs 2 times in x.rs; add more context or set replace_all")
    );
    assert_eq!(
        fs::read_to_string(&f).unwrap(),
        "let a = 1;\nlet b = 1;\nlet c = 3;\n"
    );

    let out = call(
        dir.path(),
        "edit",
        json!({"path": "x.rs", "old_text": "= 1;", "new_text": "= 9;", "replace_all": true}),
    )
    .await;
    assert_eq!(out, ToolOutput::ok("Edited x.rs (2 replacements)"));
    assert_eq!(
        fs::read_to_string(&f).unwrap(),
        "let a = 9;\nlet b = 9;\nlet c = 3;\n"
    );

    let out = call(
        dir.path(),
        "edit",
        json!({"path": "nofile.rs", "old_text": "a", "new_text": "b"}),
    )
    .await;
    assert!(
        out.is_error && out.output.contains("file not found: nofile.rs"),
        "{out:?}"
    );
}

#[tokio::test]
async fn multi_edit_is_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("m.txt");
    fs::write(&f, "alpha\nbeta\ngamma\n").unwrap();
    let out = call(
        dir.path(),
        "edit",
        json!({"path": "m.txt", "edits": [
            {"old_text": "alpha", "new_text": "ALPHA"},
            {"old_text": "missing", "new_text": "x"},
        ]}),
    )
    .await;
    assert!(
        out.is_error && out.output.starts_with("edit 2 of 2: old_text not found"),
        "{out:?}"
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), "alpha\nbeta\ngamma\n");
    let out = call(
        dir.path(),
        "edit",
        json!({"path": "m.txt", "edits": [
            {"old_text": "alpha", "new_text": "ALPHA"},
            {"old_text": "gamma", "new_text": "GAMMA"},
        ]}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(fs::read_to_string(&f).unwrap(), "ALPHA\nbeta\nGAMMA\n");
}

#[tokio::test]
async fn hunks_of_a_two_hunk_edit_and_partial_apply() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("h.txt");
    let original = numbered(20);
    fs::write(&f, &original).unwrap();
    let args = json!({"path": "h.txt", "edits": [
        {"old_text": "line 2\n", "new_text": "line TWO\n"},
        {"old_text": "line 18\n", "new_text": "line EIGHTEEN\n"},
    ]})
    .to_string();

    let hunks = edit_hunks("edit", &args, dir.path()).unwrap();
    assert_eq!(hunks.len(), 2);
    assert_eq!((hunks[0].id.as_str(), hunks[1].id.as_str()), ("h0", "h1"));
    assert_eq!(hunks[0].file, "h.txt");
    assert_eq!(hunks[0].header, "@@ -1,5 +1,5 @@");
    assert_eq!(
        hunks[0].lines,
        vec![
            " line 1",
            "-line 2",
            "+line TWO",
            " line 3",
            " line 4",
            " line 5"
        ]
    );
    assert_eq!(hunks[1].header, "@@ -15,6 +15,6 @@");
    // Computing hunks has no side effects.
    assert_eq!(fs::read_to_string(&f).unwrap(), original);

    let ctx = ToolContext::new(dir.path());
    let out = run_with_hunks("edit", &args, &ctx, &["h1".to_string()]).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.output, "Applied h1 to h.txt; skipped h0 (rejected)");
    assert_eq!(
        fs::read_to_string(&f).unwrap(),
        original.replace("line 18\n", "line EIGHTEEN\n")
    );
}

#[tokio::test]
async fn write_hunks_new_and_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let args = json!({"path": "new.txt", "content": "a\nb\n"}).to_string();
    let hunks = edit_hunks("write", &args, dir.path()).unwrap();
    assert_eq!(hunks.len(), 1);
    assert_eq!(hunks[0].header, "@@ -0,0 +1,2 @@");
    assert_eq!(hunks[0].lines, vec!["+a", "+b"]);

    let ctx = ToolContext::new(dir.path());
    let out = run_with_hunks("write", &args, &ctx, &[]).await;
    assert!(out.output.starts_with("No hunks applied"), "{out:?}");
    assert!(!dir.path().join("new.txt").exists());

    fs::write(dir.path().join("old.txt"), numbered(12)).unwrap();
    let new = numbered(12)
        .replace("line 1\n", "first\n")
        .replace("line 12\n", "last\n");
    let args = json!({"path": "old.txt", "content": new}).to_string();
    let hunks = edit_hunks("write", &args, dir.path()).unwrap();
    assert_eq!(hunks.len(), 2);
    let out = run_with_hunks("write", &args, &ctx, &["h0".into()]).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        fs::read_to_string(dir.path().join("old.txt")).unwrap(),
        numbered(12).replace("line 1\n", "first\n")
    );

    let err = edit_hunks(
        "edit",
        r#"{"path":"old.txt","old_text":"zzz","new_text":"y"}"#,
        dir.path(),
    );
    assert!(err.unwrap_err().starts_with("old_text not found"));
}

fn tree(dir: &Path) {
    fs::create_dir_all(dir.join("src/nested")).unwrap();
    fs::create_dir_all(dir.join("target/debug")).unwrap();
    fs::write(dir.join(".gitignore"), "target/\n*.log\n").unwrap();
    fs::write(
        dir.join("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n",
    )
    .unwrap();
    fs::write(dir.join("src/nested/util.rs"), "pub fn hello() {}\n").unwrap();
    fs::write(dir.join("README.md"), "say hello\n").unwrap();
    fs::write(dir.join("debug.log"), "hello from the log\n").unwrap();
    fs::write(dir.join("target/debug/out.rs"), "hello\n").unwrap();
    fs::write(dir.join(".hidden"), "hello\n").unwrap();
}

#[tokio::test]
async fn list_respects_gitignore_and_glob() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let out = call(dir.path(), "list", json!({})).await;
    assert_eq!(
        out.output,
        "README.md\nsrc/\nsrc/main.rs\nsrc/nested/\nsrc/nested/util.rs"
    );
    let out = call(dir.path(), "list", json!({"path": "src", "glob": "*.rs"})).await;
    assert_eq!(out.output, "src/main.rs\nsrc/nested/util.rs");
    let out = call(dir.path(), "list", json!({"path": "nope"})).await;
    assert!(out.is_error, "{out:?}");
}

#[tokio::test]
async fn list_caps_entries() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..1100 {
        fs::write(dir.path().join(format!("f{i:04}.txt")), "").unwrap();
    }
    let out = call(dir.path(), "list", json!({})).await;
    let lines: Vec<&str> = out.output.lines().collect();
    assert_eq!(lines.len(), 1001);
    assert_eq!(lines[1000], "… 100 more entries (narrow with path or glob)");
}

#[tokio::test]
async fn search_with_glob_respects_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let out = call(dir.path(), "search", json!({"pattern": "hel+o"})).await;
    assert_eq!(
        out.output,
        "README.md:1:say hello\nsrc/main.rs:2:    println!(\"hello\");\nsrc/nested/util.rs:1:pub fn hello() {}"
    );
    let out = call(
        dir.path(),
        "search",
        json!({"pattern": "hello", "glob": "*.rs"}),
    )
    .await;
    assert_eq!(
        out.output,
        "src/main.rs:2:    println!(\"hello\");\nsrc/nested/util.rs:1:pub fn hello() {}"
    );
    let out = call(
        dir.path(),
        "search",
        json!({"pattern": "hello", "path": "src/nested"}),
    )
    .await;
    assert_eq!(out.output, "src/nested/util.rs:1:pub fn hello() {}");
    let out = call(dir.path(), "search", json!({"pattern": "absent_word"})).await;
    assert!(
        !out.is_error && out.output.starts_with("no matches"),
        "{out:?}"
    );
    let out = call(dir.path(), "search", json!({"pattern": "(unclosed"})).await;
    assert!(
        out.is_error && out.output.contains("invalid regex"),
        "{out:?}"
    );
}
