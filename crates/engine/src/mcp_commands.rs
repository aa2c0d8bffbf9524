//! MCP slash commands: `/mcp` (the server view, and add/remove/enable/
//! disable like the `mcp_*` ops) and the servers' prompts as
//! `/mcp__SERVER__PROMPT args…`, which send the prompt's text as a user
//! message.

use jucode_protocol::{CommandInfo, Event, UserMessageOp};
use serde_json::{json, Map, Value};

use crate::actor::Session;
use crate::mcp_glue;
use crate::mcp_ops::PromptReady;

const MCP_USAGE: &str = "usage: /mcp [add NAME COMMAND [ARGS…] | add NAME URL | remove NAME | enable NAME | disable NAME]";

impl Session {
    /// The `command_list` entries of the connected servers' prompts.
    pub(crate) fn mcp_prompt_entries(&self) -> Vec<CommandInfo> {
        self.mcp
            .manager
            .prompts()
            .iter()
            .map(|p| CommandInfo {
                command: p.command.clone(),
                marker: Some("mcp".to_string()),
                args: mcp_glue::argument_hint(p),
                description: if p.description.is_empty() {
                    format!("Prompt `{}` of MCP server `{}`", p.name, p.server)
                } else {
                    p.description.clone()
                },
            })
            .collect()
    }

    /// `/mcp …`.
    pub(crate) fn mcp_command(&mut self, rest: &str) {
        let words = match mcp_glue::split_words(rest) {
            Ok(words) => words,
            Err(err) => return self.out.emit(Event::error(err)),
        };
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        match words.as_slice() {
            [] | ["list"] => self.emit_mcp_servers(),
            ["remove", name] => self.mcp_remove(name),
            ["enable", name] => self.mcp_toggle(name, true),
            ["disable", name] => self.mcp_toggle(name, false),
            ["add", name, url] if url.starts_with("http://") || url.starts_with("https://") => {
                self.mcp_set(name, &object(json!({ "url": url })))
            }
            ["add", name, command, args @ ..] => {
                self.mcp_set(name, &object(json!({ "command": command, "args": args })))
            }
            _ => self.out.emit(Event::error(MCP_USAGE)),
        }
    }

    /// Runs `/mcp__SERVER__PROMPT rest` if `name` is a prompt command:
    /// fetches the prompt in the background; its text arrives as a
    /// [`PromptReady`] and is sent like a user message. False when `name`
    /// is no prompt of a connected server.
    pub(crate) fn run_mcp_prompt(&mut self, name: &str, rest: &str) -> bool {
        if !mcp_glue::is_mcp_tool(&name[1..]) {
            return false;
        }
        let prompts = self.mcp.manager.prompts();
        let Some(prompt) = prompts.into_iter().find(|p| p.command == name) else {
            return false;
        };
        let arguments = match mcp_glue::prompt_arguments(&prompt, rest) {
            Ok(arguments) => arguments,
            Err(err) => {
                self.out.emit(Event::error(err));
                return true;
            }
        };
        let manager = self.mcp.manager.clone();
        let reply = self.mcp.prompt_tx.clone();
        tokio::spawn(async move {
            let text = manager
                .get_prompt(&prompt.server, &prompt.name, arguments)
                .await;
            let _ = reply.send(text);
        });
        true
    }

    /// A prompt command's text came back: it becomes a user message (a
    /// turn, or queued behind the running one).
    pub(crate) fn on_prompt_ready(&mut self, ready: PromptReady) {
        match ready {
            Ok(text) if text.trim().is_empty() => self.out.emit(Event::error(
                "the MCP prompt returned no text; nothing was sent",
            )),
            Ok(content) => self.submit(UserMessageOp {
                content,
                images: Vec::new(),
                files: Vec::new(),
            }),
            Err(err) => self.out.emit(Event::error(err)),
        }
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
