//! MCP on the turn's side: the servers' tools as model tool specs, their
//! approval effect and summary, running a call, and the arguments of a
//! prompt command. The session's side (starting servers, ops, views) is
//! `mcp_ops`.

use std::time::Duration;

use jucode_mcp::{McpManager, McpPrompt};
use jucode_models::ToolSpec;
use jucode_tools::Effect;
use serde_json::{Map, Value};

/// Every MCP tool name starts with this (`mcp__SERVER__TOOL`).
const PREFIX: &str = "mcp__";

/// Longest approval summary of an MCP call, in characters.
const SUMMARY_CHARS: usize = 200;

pub fn is_mcp_tool(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// The tools of the connected servers, as the model sees them.
pub fn tool_specs(mcp: &McpManager) -> Vec<ToolSpec> {
    mcp.tools()
        .into_iter()
        .map(|tool| ToolSpec {
            name: tool.qualified_name,
            description: tool.description,
            parameters: tool.input_schema,
        })
        .collect()
}

/// Replaces the MCP tools in `tools` with the ones connected now, so each
/// request offers what the servers offer at that moment.
pub fn refresh_tools(tools: &mut Vec<ToolSpec>, mcp: &McpManager) {
    tools.retain(|t| !is_mcp_tool(&t.name));
    tools.extend(tool_specs(mcp));
}

/// What an MCP call does, for `approval::gate`: read-only when the server
/// marks the tool `readOnlyHint` (a tool that is gone counts as not).
pub fn effect(mcp: &McpManager, name: &str) -> Effect {
    let read_only = mcp
        .tools()
        .iter()
        .any(|t| t.qualified_name == name && t.read_only);
    Effect::Mcp { read_only }
}

/// `SERVER: TOOL {args}` for approval requests, shortened.
pub fn summary(mcp: &McpManager, name: &str, arguments: &str) -> String {
    let (server, tool) = match mcp.tools().into_iter().find(|t| t.qualified_name == name) {
        Some(t) => (t.server, t.name),
        None => ("mcp".to_string(), name.to_string()),
    };
    // Compact JSON when it parses, the text as sent otherwise.
    let args = serde_json::from_str::<Value>(arguments)
        .map(|v| match v {
            Value::Null => String::new(),
            Value::Object(m) if m.is_empty() => String::new(),
            v => v.to_string(),
        })
        .unwrap_or_else(|_| arguments.trim().to_string());
    let line = format!("{server}: {tool} {args}");
    shorten(line.trim_end(), SUMMARY_CHARS)
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max - 1).collect();
    format!("{cut}…")
}

/// Runs an MCP tool call; `(output, is_error)` for the model. Dropping the
/// future (an interrupted turn) cancels the call on the server.
pub async fn call(mcp: &McpManager, name: &str, arguments: &str) -> (String, bool) {
    let args = if arguments.trim().is_empty() {
        Value::Null
    } else {
        match serde_json::from_str::<Value>(arguments) {
            Ok(v) => v,
            Err(e) => return (format!("{name}: invalid JSON arguments: {e}"), true),
        }
    };
    let result = mcp.call_tool(name, args).await;
    (result.output, result.is_error)
}

/// Waits until no server is `connecting` any more, at most `limit`: a turn
/// that starts right after the engine (or a server) started offers the
/// tools of servers that connect within their startup timeout.
pub async fn settle(mcp: &McpManager, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    while mcp.snapshot().iter().any(|s| s.state == "connecting") {
        if tokio::time::Instant::now() >= deadline {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The argument hint of a prompt command: `city [state]`.
pub fn argument_hint(prompt: &McpPrompt) -> String {
    prompt
        .arguments
        .iter()
        .map(|(name, required)| {
            if *required {
                name.clone()
            } else {
                format!("[{name}]")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The arguments of `/mcp__SERVER__PROMPT rest`: `key=value` words for the
/// prompt's own argument names, the other words positionally onto the
/// arguments not named, in the prompt's order; the last one takes the rest
/// of the line. Double quotes group words (`city="New York"`).
pub fn prompt_arguments(prompt: &McpPrompt, rest: &str) -> Result<Map<String, Value>, String> {
    let words = split_words(rest)?;
    let names: Vec<&str> = prompt.arguments.iter().map(|(n, _)| n.as_str()).collect();
    let mut named = Map::new();
    let mut positional = Vec::new();
    for word in words {
        match word.split_once('=') {
            Some((key, value)) if names.contains(&key) => {
                named.insert(key.to_string(), Value::String(value.to_string()));
            }
            _ => positional.push(word),
        }
    }
    let free: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !named.contains_key(*n))
        .collect();
    if !positional.is_empty() && free.is_empty() {
        return Err(format!(
            "{} takes no more arguments (got `{}`)",
            prompt.command,
            positional.join(" ")
        ));
    }
    let mut positional = positional.into_iter();
    for (i, name) in free.iter().enumerate() {
        let value = if i + 1 == free.len() {
            positional.by_ref().collect::<Vec<_>>().join(" ")
        } else {
            positional.next().unwrap_or_default()
        };
        if !value.is_empty() {
            named.insert(name.to_string(), Value::String(value));
        }
    }
    Ok(named)
}

/// Splits on whitespace; `"…"` groups (the quotes are dropped).
pub fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut started) = (false, false);
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if quoted {
        return Err("unbalanced `\"` in the arguments".to_string());
    }
    if started {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(args: &[(&str, bool)]) -> McpPrompt {
        McpPrompt {
            server: "s".into(),
            name: "p".into(),
            command: "/mcp__s__p".into(),
            description: String::new(),
            arguments: args.iter().map(|(n, r)| (n.to_string(), *r)).collect(),
        }
    }

    fn args(p: &McpPrompt, rest: &str) -> Value {
        Value::Object(prompt_arguments(p, rest).unwrap())
    }

    #[test]
    fn prompt_arguments_by_name_or_position() {
        let p = prompt(&[("city", true), ("state", false)]);
        assert_eq!(args(&p, ""), serde_json::json!({}));
        assert_eq!(args(&p, "Paris"), serde_json::json!({"city": "Paris"}));
        assert_eq!(
            args(&p, "Portland Oregon"),
            serde_json::json!({"city": "Portland", "state": "Oregon"})
        );
        assert_eq!(
            args(&p, "state=Maine city=\"Bar Harbor\""),
            serde_json::json!({"city": "Bar Harbor", "state": "Maine"})
        );
        assert_eq!(
            args(&p, "state=NY New York"),
            serde_json::json!({"city": "New York", "state": "NY"})
        );
        // The last argument takes the rest of the line.
        assert_eq!(
            args(&p, "Springfield the one in Illinois"),
            serde_json::json!({"city": "Springfield", "state": "the one in Illinois"})
        );
        assert!(prompt_arguments(&prompt(&[]), "x").is_err());
        assert!(prompt_arguments(&p, "\"open").is_err());
        assert_eq!(argument_hint(&p), "city [state]");
    }

    #[test]
    fn summaries_are_short() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "ab…");
    }
}
