//! How MCP tools and prompts are named towards the model and the user.
//!
//! Model APIs accept tool names matching `^[A-Za-z0-9_-]{1,64}$`, and the
//! `mcp__SERVER__TOOL` convention (shared with Codex and Claude Code) lets
//! permission rules match a whole server by prefix.

use std::collections::HashSet;

/// The longest name the model APIs accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// `mcp__SERVER__TOOL`, with every char outside `[A-Za-z0-9_-]` replaced by
/// `_`. Names longer than 64 chars are cut and end in `_` plus 8 hex digits
/// of a hash of the *original* server and tool names, so two long names that
/// share a prefix still differ.
pub fn qualified_tool_name(server: &str, tool: &str) -> String {
    let name = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    if name.len() <= MAX_TOOL_NAME_LEN {
        name
    } else {
        with_hash(&name, server, tool)
    }
}

/// The slash command of an MCP prompt: `/mcp__SERVER__PROMPT`.
pub fn prompt_command(server: &str, prompt: &str) -> String {
    format!("/{}", qualified_tool_name(server, prompt))
}

/// Assigns qualified names to `(server, tool)` pairs in order, so that no two
/// are equal: sanitizing can map different names to the same string
/// (`a.b` and `a_b`), and the later one then gets the hash suffix as well.
pub(crate) fn unique_names<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let mut taken = HashSet::new();
    let mut out = Vec::new();
    for (server, tool) in pairs {
        let mut name = qualified_tool_name(server, tool);
        if taken.contains(&name) {
            name = with_hash(&name, server, tool);
            // A second collision would need equal hashes of different names;
            // a counter keeps names distinct even then.
            let mut n = 2;
            while taken.contains(&name) {
                name = with_hash(&name, server, &format!("{tool}#{n}"));
                n += 1;
            }
        }
        taken.insert(name.clone());
        out.push(name);
    }
    out
}

fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Cuts `name` to leave room for `_` + 8 hex digits; `name` is ASCII here.
fn with_hash(name: &str, server: &str, tool: &str) -> String {
    let hash = fnv1a(server.as_bytes(), tool.as_bytes());
    let keep = name.len().min(MAX_TOOL_NAME_LEN - 9);
    format!("{}_{:08x}", &name[..keep], (hash ^ (hash >> 32)) as u32)
}

/// FNV-1a over `server \0 tool`: tiny, stable across versions and platforms
/// (std's hasher is not), which matters because the names end up in saved
/// sessions and permission rules.
fn fnv1a(server: &[u8], tool: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in server.iter().chain(&[0u8]).chain(tool) {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_and_caps() {
        assert_eq!(
            qualified_tool_name("git", "git_status"),
            "mcp__git__git_status"
        );
        assert_eq!(
            qualified_tool_name("my server", "a.b/c"),
            "mcp__my_server__a_b_c"
        );
        assert_eq!(qualified_tool_name("é", "x-y"), "mcp_____x-y");
        let long = qualified_tool_name("server", &"t".repeat(100));
        assert_eq!(long.len(), 64);
        assert_ne!(long, qualified_tool_name("server", &"t".repeat(101)));
        assert_eq!(prompt_command("s", "p q"), "/mcp__s__p_q");
    }

    #[test]
    fn collisions_get_distinct_names() {
        let names = unique_names([("s", "a.b"), ("s", "a_b"), ("s", "c")].into_iter());
        assert_eq!(names[0], "mcp__s__a_b");
        assert!(names[1].starts_with("mcp__s__a_b_") && names[1] != names[0]);
        assert_eq!(names[2], "mcp__s__c");
    }
}
