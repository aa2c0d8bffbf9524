//! Slash commands: the built-in table and the parser for `command` ops.

use jucode_protocol::CommandInfo;

/// A built-in command: name (with slash), argument hint, description.
struct Builtin {
    command: &'static str,
    args: &'static str,
    description: &'static str,
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        command: "/help",
        args: "",
        description: "List the available commands",
    },
    Builtin {
        command: "/model",
        args: "[NAME] [EFFORT]",
        description: "Show the model picker, or switch model and reasoning effort",
    },
    Builtin {
        command: "/approve",
        args: "MODE | CALL_ID allow|deny [always]",
        description: "Set the approval mode, or answer a pending approval",
    },
    Builtin {
        command: "/resume",
        args: "[ID]",
        description: "List this folder's sessions, or continue one",
    },
    Builtin {
        command: "/transcript",
        args: "",
        description: "Show the conversation of the active branch",
    },
    Builtin {
        command: "/tree",
        args: "[ID]",
        description: "Show the session's branch tree, or continue from a turn",
    },
    Builtin {
        command: "/checkout",
        args: "[ID]",
        description: "List checkpoints, or restore files and rewind to before a message",
    },
    Builtin {
        command: "/compact",
        args: "[INSTRUCTIONS]",
        description: "Summarize the older conversation to free context",
    },
    Builtin {
        command: "/plan",
        args: "ID approve [MODE] [NOTES] | ID revise FEEDBACK",
        description: "Approve a proposed plan, or ask for a revision",
    },
    Builtin {
        command: "/goal",
        args: "[OBJECTIVE [--budget TOKENS] | done | clear]",
        description: "Set, show, finish or clear the session's goal",
    },
    Builtin {
        command: "/mcp",
        args: "[add NAME COMMAND|URL | remove NAME | enable NAME | disable NAME]",
        description: "Show the MCP servers, or add, remove, enable or disable one",
    },
    Builtin {
        command: "/trust",
        args: "[yes|repo|no]",
        description: "Trust this folder's project resources (or the whole repo), or refuse them",
    },
    Builtin {
        command: "/quit",
        args: "",
        description: "Exit JuCode",
    },
    Builtin {
        command: "/exit",
        args: "",
        description: "Exit JuCode",
    },
];

/// The `command_list` entries of the built-in commands.
pub fn builtin_list() -> Vec<CommandInfo> {
    BUILTINS
        .iter()
        .map(|b| CommandInfo {
            command: b.command.to_string(),
            marker: None,
            args: b.args.to_string(),
            description: b.description.to_string(),
        })
        .collect()
}

/// A `command` op's input split into the command name and its arguments.
pub struct Parsed<'a> {
    /// With the slash, e.g. `/model`.
    pub name: &'a str,
    /// The rest, trimmed.
    pub rest: &'a str,
}

impl<'a> Parsed<'a> {
    pub fn args(&self) -> Vec<&'a str> {
        self.rest.split_whitespace().collect()
    }
}

/// Splits `/name args…`. Input that does not start with `/` is not a command.
pub fn parse(input: &str) -> Option<Parsed<'_>> {
    let input = input.trim();
    if !input.starts_with('/') || input.len() == 1 {
        return None;
    }
    let (name, rest) = match input.find(char::is_whitespace) {
        Some(at) => (&input[..at], input[at..].trim()),
        None => (input, ""),
    };
    Some(Parsed { name, rest })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_name_and_args() {
        let p = parse("  /model gpt-5  high ").unwrap();
        assert_eq!(p.name, "/model");
        assert_eq!(p.args(), vec!["gpt-5", "high"]);
        assert!(parse("hello").is_none());
        assert!(parse("/").is_none());
        assert_eq!(parse("/quit").unwrap().rest, "");
    }
}
