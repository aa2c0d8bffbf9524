//! What the engine asks of connected servers: their tools and prompts, and
//! calls to them. Every failure becomes a message, never a panic.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::client::{CallError, Connection, Request, Response};
use crate::config::format_secs;
use crate::manager::{McpManager, Phase};
use crate::naming::{prompt_command, qualified_tool_name, unique_names};
use crate::output::{prompt_text, tool_output};
use crate::{McpCallResult, McpPrompt, McpTool};

impl McpManager {
    /// The tools of every connected server, with names unique across them.
    pub fn tools(&self) -> Vec<McpTool> {
        let state = self.shared.lock();
        let mut tools = Vec::new();
        for e in &state.entries {
            if let Phase::Connected(c) = &e.phase {
                let lists = c.lists.lock().unwrap_or_else(|p| p.into_inner());
                tools.extend(lists.tools.iter().map(|t| (e.name.clone(), t.clone())));
            }
        }
        let names = unique_names(tools.iter().map(|(s, t)| (s.as_str(), t.name.as_ref())));
        tools
            .into_iter()
            .zip(names)
            .map(|((server, t), qualified_name)| McpTool {
                read_only: t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true),
                server,
                name: t.name.to_string(),
                qualified_name,
                description: t.description.as_deref().unwrap_or_default().to_owned(),
                input_schema: Value::Object((*t.input_schema).clone()),
            })
            .collect()
    }

    /// The prompts of every connected server, as slash commands.
    pub fn prompts(&self) -> Vec<McpPrompt> {
        let state = self.shared.lock();
        let mut prompts = Vec::new();
        for e in &state.entries {
            let Phase::Connected(c) = &e.phase else {
                continue;
            };
            let lists = c.lists.lock().unwrap_or_else(|p| p.into_inner());
            prompts.extend(lists.prompts.iter().map(|p| {
                McpPrompt {
                    server: e.name.clone(),
                    name: p.name.clone(),
                    command: prompt_command(&e.name, &p.name),
                    description: p.description.clone().unwrap_or_default(),
                    arguments: p
                        .arguments
                        .iter()
                        .flatten()
                        .map(|a| (a.name.clone(), a.required == Some(true)))
                        .collect(),
                }
            }));
        }
        prompts
    }

    /// The protocol revision a connected server negotiated: `2025-11-25`
    /// (the `initialize` handshake) or `2026-07-28` (stateless). `None`
    /// unless connected.
    pub fn protocol_version(&self, server: &str) -> Option<String> {
        let state = self.shared.lock();
        let entry = state.entries.iter().find(|e| e.name == server)?;
        let Phase::Connected(c) = &entry.phase else {
            return None;
        };
        c.peer.peer_info().map(|i| i.protocol_version.to_string())
    }

    /// Calls a tool by its qualified name under the server's tool timeout.
    /// Never fails: every problem is an `is_error` result saying what went
    /// wrong. Dropping the future cancels the call on the server.
    pub async fn call_tool(&self, qualified_name: &str, arguments: Value) -> McpCallResult {
        let arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            _ => return McpCallResult::error("MCP tool arguments must be a JSON object".into()),
        };
        let target = self
            .tools()
            .into_iter()
            .find(|t| t.qualified_name == qualified_name);
        let Some(tool) = target else {
            return McpCallResult::error(self.explain_missing_tool(qualified_name));
        };
        let (connection, limit) = match self.connection(&tool.server) {
            Ok(found) => found,
            Err(message) => return McpCallResult::error(message),
        };
        let params =
            rmcp::model::CallToolRequestParams::new(tool.name.clone()).with_arguments(arguments);
        match connection.request(Request::CallTool(params), limit).await {
            Ok(Response::CallTool(result)) => McpCallResult {
                output: tool_output(&result),
                is_error: result.is_error == Some(true),
            },
            Ok(_) => McpCallResult::error("unexpected response from the MCP server".into()),
            Err(e) => {
                McpCallResult::error(describe_failure(e, &tool.server, "tool", &tool.name, limit))
            }
        }
    }

    /// Gets a prompt and returns its messages' text, joined by blank lines.
    pub async fn get_prompt(
        &self,
        server: &str,
        prompt: &str,
        arguments: Map<String, Value>,
    ) -> Result<String, String> {
        let (connection, limit) = self.connection(server)?;
        let required: Vec<String> = {
            let lists = connection.lists.lock().unwrap_or_else(|p| p.into_inner());
            let Some(found) = lists.prompts.iter().find(|p| p.name == prompt) else {
                return Err(format!("MCP server `{server}` has no prompt `{prompt}`"));
            };
            let args = found.arguments.iter().flatten();
            args.filter(|a| a.required == Some(true))
                .map(|a| a.name.clone())
                .collect()
        };
        // Said here, before the round trip, in words a user typing the slash
        // command understands (servers answer with a schema error).
        if let Some(missing) = required.iter().find(|name| !arguments.contains_key(*name)) {
            return Err(format!(
                "missing required argument `{missing}` for /{}",
                &prompt_command(server, prompt)[1..]
            ));
        }
        let mut params = rmcp::model::GetPromptRequestParams::new(prompt);
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        match connection.request(Request::GetPrompt(params), limit).await {
            Ok(Response::GetPrompt(result)) => Ok(prompt_text(&result)),
            Ok(_) => Err("unexpected response from the MCP server".into()),
            Err(e) => Err(describe_failure(e, server, "prompt", prompt, limit)),
        }
    }

    /// Why `qualified_name` is not a callable tool, as helpfully as possible.
    fn explain_missing_tool(&self, qualified_name: &str) -> String {
        for server in self.snapshot() {
            let prefix = qualified_tool_name(&server.name, "");
            if qualified_name.starts_with(&prefix) && server.state != "connected" {
                let why = server.error.map(|e| format!(": {e}")).unwrap_or_default();
                return format!(
                    "MCP server `{}` is not connected ({}{why})",
                    server.name, server.state
                );
            }
        }
        format!("unknown MCP tool `{qualified_name}`")
    }

    /// The live connection of `server` and its tool timeout.
    fn connection(&self, server: &str) -> Result<(Arc<Connection>, Duration), String> {
        let state = self.shared.lock();
        let entry = state.entries.iter().find(|e| e.name == server);
        match entry.map(|e| (&e.phase, e.config.tool_timeout)) {
            Some((Phase::Connected(c), limit)) => Ok((c.clone(), limit)),
            Some((Phase::Failed(e), _)) => Err(format!(
                "MCP server `{server}` is not connected (failed: {e})"
            )),
            Some(_) => Err(format!("MCP server `{server}` is not connected")),
            None => Err(format!("unknown MCP server `{server}`")),
        }
    }
}

fn describe_failure(
    error: CallError,
    server: &str,
    kind: &str,
    name: &str,
    limit: Duration,
) -> String {
    match error {
        CallError::Closed => {
            format!("MCP server `{server}` disconnected before the {kind} `{name}` finished")
        }
        CallError::TimedOut => format!(
            "MCP {kind} `{name}` on server `{server}` timed out after {}",
            format_secs(limit)
        ),
        CallError::Failed(why) => {
            format!("MCP server `{server}` could not run {kind} `{name}`: {why}")
        }
    }
}
