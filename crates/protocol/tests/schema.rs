//! The checked-in schema (docs/protocol.schema.json) must match the types.
//! Regenerate with `UPDATE_SCHEMA=1 cargo test -p jucode-protocol --test schema`.

use std::path::PathBuf;

#[test]
fn checked_in_schema_matches_the_types() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/protocol.schema.json");
    let generated =
        serde_json::to_string_pretty(&jucode_protocol::protocol_schema()).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    // Compared as JSON, not text: key order depends on whether a dependency
    // elsewhere in the workspace turned on serde_json's `preserve_order`.
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
            .unwrap_or_default();
    let generated: serde_json::Value = serde_json::from_str(&generated).unwrap();
    assert!(
        on_disk == generated,
        "docs/protocol.schema.json is out of date: run UPDATE_SCHEMA=1 cargo test -p jucode-protocol --test schema"
    );
}

#[test]
fn schema_lists_every_op_and_event() {
    let schema = serde_json::to_string(&jucode_protocol::protocol_schema()).unwrap();
    for op in jucode_protocol::OP_NAMES {
        assert!(schema.contains(&format!("\"{op}\"")), "op {op} missing");
    }
    for event in [
        "hello",
        "startup",
        "model_status",
        "assistant_delta",
        "compaction_failed",
        "action_deferred",
    ] {
        assert!(
            schema.contains(&format!("\"{event}\"")),
            "event {event} missing"
        );
    }
}
