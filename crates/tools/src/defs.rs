//! The tool definitions advertised to models. Names and argument names are a
//! public contract: prompts, transcripts and other crates rely on them.

use serde_json::json;

use crate::{ToolDef, ToolSet};

/// The tools of a tool set as offered to the model: the built-in ones, plus
/// `web_search` (after `web_fetch`) when a search backend is configured.
pub fn tool_defs(set: ToolSet, web_search: bool) -> Vec<ToolDef> {
    let mut defs = builtin_defs(set);
    if web_search {
        let at = defs
            .iter()
            .position(|d| d.name == "web_fetch")
            .map_or(defs.len(), |i| i + 1);
        defs.insert(at, web_search_def());
    }
    defs
}

/// The built-in tools of a tool set, in a stable order (without
/// `web_search`, which needs a configured backend: see [`tool_defs`]).
pub fn builtin_defs(set: ToolSet) -> Vec<ToolDef> {
    match set {
        ToolSet::Coding => vec![
            bash(),
            read(),
            write(),
            edit(),
            list(),
            search(),
            web_fetch(),
        ],
        ToolSet::Chat => vec![web_fetch()],
    }
}

fn bash() -> ToolDef {
    ToolDef {
        name: "bash",
        description:
            "Run a shell command with `bash -c` in the workspace directory and return its \
            combined stdout and stderr. Output streams while the command runs; long output keeps \
            only its end. There is no stdin: do not run interactive programs. Each call starts a \
            fresh shell (cd and variables do not persist). A non-zero exit status is reported as \
            an error. Prefer the read/list/search tools for looking at files."
                .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line to run."},
                "timeout": {
                    "type": "number",
                    "description": "Seconds before the command and everything it started are killed (default 120)."
                }
            },
            "required": ["command"],
            "additionalProperties": false
        }),
    }
}

fn read() -> ToolDef {
    ToolDef {
        name: "read",
        description: "Read a text file. Lines come numbered like `cat -n`; at most `limit` lines \
            (default 2000) from line `offset` (1-based, default 1); very long lines are cut. \
            Use offset/limit to page through large files. Directories cannot be read: use `list`."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, absolute or relative to the workspace."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to show (1-based)."},
                "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to show."}
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    }
}

fn write() -> ToolDef {
    ToolDef {
        name: "write",
        description: "Write a file with the given content, replacing it entirely if it exists. \
            Parent directories are created. For changes to an existing file prefer `edit`."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, absolute or relative to the workspace."},
                "content": {"type": "string", "description": "The complete new content of the file."}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        }),
    }
}

fn edit() -> ToolDef {
    let pair = json!({
        "type": "object",
        "properties": {
            "old_text": {"type": "string"},
            "new_text": {"type": "string"},
            "replace_all": {"type": "boolean"}
        },
        "required": ["old_text", "new_text"],
        "additionalProperties": false
    });
    ToolDef {
        name: "edit",
        description: "Replace exact text in an existing file. `old_text` must match the file \
            exactly (whitespace and indentation included) and occur exactly once, unless \
            `replace_all` is true; include enough surrounding lines to make it unique. Several \
            replacements in one file can be given as `edits`, applied in order."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, absolute or relative to the workspace."},
                "old_text": {"type": "string", "description": "Exact text to replace."},
                "new_text": {"type": "string", "description": "Replacement text."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
                "edits": {
                    "type": "array",
                    "items": pair,
                    "description": "Alternative to old_text/new_text: several replacements applied in order."
                }
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    }
}

fn list() -> ToolDef {
    ToolDef {
        name: "list",
        description: "List files and directories recursively (directories end with `/`), sorted, \
            skipping hidden files and whatever .gitignore ignores. With `glob` (ripgrep -g syntax, \
            e.g. `*.rs` or `src/**/*.ts`) only matching files are listed."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (default: the workspace)."},
                "glob": {"type": "string", "description": "Only list files matching this glob."}
            },
            "additionalProperties": false
        }),
    }
}

fn search() -> ToolDef {
    ToolDef {
        name: "search",
        description: "Search file contents with a regular expression (ripgrep syntax and rules: \
            .gitignore respected, hidden and binary files skipped). Returns `path:line:text` \
            lines, at most 500 matches. Use `glob` to restrict files (e.g. `*.rs`)."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression (Rust regex syntax)."},
                "path": {"type": "string", "description": "File or directory to search (default: the workspace)."},
                "glob": {"type": "string", "description": "Only search files matching this glob."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
    }
}

fn web_fetch() -> ToolDef {
    ToolDef {
        name: "web_fetch",
        description: "Fetch a web page or text resource over http(s) and return it as readable \
            text (HTML is converted to plain text). Long pages are cut."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The http:// or https:// URL to fetch."}
            },
            "required": ["url"],
            "additionalProperties": false
        }),
    }
}

fn web_search_def() -> ToolDef {
    ToolDef {
        name: "web_search",
        description: "Search the web. Returns the top results as title, URL and snippet; open \
            a result with `web_fetch` to read it. Use specific queries."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to search for."}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets() {
        let names: Vec<_> = builtin_defs(ToolSet::Coding)
            .iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(
            names,
            [
                "bash",
                "read",
                "write",
                "edit",
                "list",
                "search",
                "web_fetch"
            ]
        );
        let names: Vec<_> = builtin_defs(ToolSet::Chat).iter().map(|d| d.name).collect();
        assert_eq!(names, ["web_fetch"]);
        let names: Vec<_> = tool_defs(ToolSet::Chat, true)
            .iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["web_fetch", "web_search"]);
        let coding = tool_defs(ToolSet::Coding, true);
        assert_eq!(coding.len(), 8);
        assert_eq!(coding[7].name, "web_search");
        assert_eq!(tool_defs(ToolSet::Coding, false).len(), 7);
        for d in builtin_defs(ToolSet::Coding) {
            assert_eq!(d.parameters["type"], "object", "{}", d.name);
            assert!(!d.description.is_empty());
        }
    }
}
