//! Tool and prompt names as the model and the user see them.

use jucode_mcp::{prompt_command, qualified_tool_name, MAX_TOOL_NAME_LEN};

#[test]
fn sanitized_prefixed_names() {
    assert_eq!(
        qualified_tool_name("everything", "get-sum"),
        "mcp__everything__get-sum"
    );
    assert_eq!(
        qualified_tool_name("my.server", "a b/c"),
        "mcp__my_server__a_b_c"
    );
    assert_eq!(qualified_tool_name("ünï", "tool"), "mcp___n___tool");
    assert_eq!(
        prompt_command("everything", "simple-prompt"),
        "/mcp__everything__simple-prompt"
    );
}

#[test]
fn long_names_are_capped_and_stay_unique() {
    let a = qualified_tool_name("server", &format!("{}_a", "x".repeat(80)));
    let b = qualified_tool_name("server", &format!("{}_b", "x".repeat(80)));
    assert_eq!(a.len(), MAX_TOOL_NAME_LEN);
    assert_eq!(b.len(), MAX_TOOL_NAME_LEN);
    assert_ne!(a, b);
    assert!(a.starts_with("mcp__server__xxx"));
    assert!(a
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    // Stable: the same input always gives the same name.
    assert_eq!(
        a,
        qualified_tool_name("server", &format!("{}_a", "x".repeat(80)))
    );
    // Exactly 64 is kept as is.
    let tool = "t".repeat(64 - "mcp__s__".len());
    assert_eq!(qualified_tool_name("s", &tool), format!("mcp__s__{tool}"));
}
