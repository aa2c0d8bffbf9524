//! Approval support: what a call would do ([`classify`]) and how to describe
//! it in one line ([`summary`]). Nothing here touches the filesystem.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::args::{self, BashArgs};
use crate::paths;
use crate::rules;
use crate::shell::{self, Sep};
use crate::Effect;

/// What a call would do, for approval decisions (no side effects).
pub fn classify(name: &str, args: &str, cwd: &Path) -> Effect {
    match name {
        "read" | "list" | "search" => Effect::ReadOnly,
        "web_fetch" | "web_search" => Effect::Network,
        "write" | "edit" => match path_arg(args) {
            Some(p) => {
                let path = paths::resolve(cwd, &p);
                let inside_workspace = paths::is_inside(cwd, &path);
                Effect::Edit {
                    paths: vec![path],
                    inside_workspace,
                }
            }
            None => Effect::Unknown,
        },
        "bash" => match args::parse::<BashArgs>(name, args) {
            Ok(a) => {
                let v = shell_verdict(&a.command, cwd, cwd, 0);
                Effect::Shell {
                    read_only: v.read_only,
                    dangerous: v.dangerous,
                    inside_workspace: v.inside,
                }
            }
            Err(_) => Effect::Unknown,
        },
        _ => Effect::Unknown,
    }
}

/// One line describing the call for an approval dialog.
pub fn summary(name: &str, args: &str) -> String {
    let v: Value = serde_json::from_str(args).unwrap_or(Value::Null);
    let s = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let line = match name {
        "bash" => s("command").map(|c| {
            let mut lines = c.trim().lines();
            let first = lines.next().unwrap_or("").to_string();
            match lines.count() {
                0 => first,
                n => format!("{first} … (+{n} lines)"),
            }
        }),
        "read" => s("path").map(|p| format!("read {p}")),
        "write" => s("path").map(|p| {
            let bytes = s("content").map_or(0, |c| c.len());
            format!("write {p} ({bytes} bytes)")
        }),
        "edit" => s("path").map(|p| format!("edit {p}")),
        "list" => Some(match (s("path"), s("glob")) {
            (p, Some(g)) => format!("list {} ({g})", p.unwrap_or_else(|| ".".into())),
            (p, None) => format!("list {}", p.unwrap_or_else(|| ".".into())),
        }),
        "search" => s("pattern").map(|pat| {
            let mut out = format!(
                "search /{pat}/ in {}",
                s("path").unwrap_or_else(|| ".".into())
            );
            if let Some(g) = s("glob") {
                out.push_str(&format!(" ({g})"));
            }
            out
        }),
        "web_fetch" => s("url").map(|u| format!("fetch {u}")),
        "web_search" => s("query").map(|q| format!("search the web for {q:?}")),
        _ => Some(format!("{name} {}", args.trim())),
    };
    let line = line.unwrap_or_else(|| format!("{name} (invalid arguments)"));
    clip(&line, 200)
}

fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

fn path_arg(args: &str) -> Option<String> {
    let v: Value = serde_json::from_str(args).ok()?;
    v.get("path")?.as_str().map(str::to_string)
}

struct Verdict {
    read_only: bool,
    dangerous: bool,
    inside: bool,
}

/// Words that start or structure a compound command; the command proper follows.
const KEYWORDS: [&str; 13] = [
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time",
];
const FETCHERS: [&str; 2] = ["curl", "wget"];
const INTERPRETERS: [&str; 13] = [
    "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python2", "python3", "perl", "ruby",
    "node", "php",
];
/// Programs whose first positional argument is a pattern or script, not a path.
const PATTERN_FIRST: [&str; 6] = ["grep", "egrep", "fgrep", "rg", "sed", "awk"];
const MAX_DEPTH: u32 = 8;

/// Classifies a command line. `ws` is the workspace, `start` the directory
/// the line starts in (they differ inside `$(...)` after a `cd`).
fn shell_verdict(line: &str, ws: &Path, start: &Path, depth: u32) -> Verdict {
    let script = shell::parse(line);
    let mut v = Verdict {
        read_only: script.complete && !script.heredoc_substitution,
        dangerous: fork_bomb(line),
        inside: true,
    };
    if depth > MAX_DEPTH {
        v.inside = false;
        return v;
    }
    let mut dir: PathBuf = paths::normalize(start);
    let mut fetch_in_pipeline = false;

    for cmd in &script.commands {
        if cmd.sep != Sep::Pipe {
            fetch_in_pipeline = false;
        }
        // Command substitutions run commands: never read-only, and their
        // danger and paths count as ours.
        for sub in &cmd.substitutions {
            let inner = shell_verdict(sub, ws, &dir, depth + 1);
            v.read_only = false;
            v.dangerous |= inner.dangerous;
            v.inside &= inner.inside;
        }
        for r in &cmd.redirects {
            if r.op.starts_with("<<") {
                continue;
            }
            let fd_dup = (r.op == ">&" || r.op == "<&") && !r.writes();
            if fd_dup {
                continue;
            }
            if r.writes() {
                if !harmless_device(&r.target) {
                    v.read_only = false;
                }
                if block_device(&r.target) {
                    v.dangerous = true;
                }
            }
            if outside(&r.target, &dir, ws) {
                v.inside = false;
            }
        }

        let mut words: &[String] = &cmd.words;
        while let Some(w) = words.first() {
            if KEYWORDS.contains(&w.as_str()) {
                words = &words[1..];
            } else if rules::is_assignment(w) {
                // `PAGER=... git log`, `LD_PRELOAD=...`: the environment can
                // make any program run something else.
                v.read_only = false;
                if outside(w, &dir, ws) {
                    v.inside = false;
                }
                words = &words[1..];
            } else {
                break;
            }
        }
        let Some(first) = words.first() else { continue };
        let prog = program_name(first);
        if !prog.is_some_and(|p| rules::read_only(p, &words[1..])) {
            v.read_only = false;
        }

        // Danger: look through wrappers such as `nohup`, `env`, `xargs`.
        let mut inner = words;
        loop {
            let base = basename(&inner[0]);
            let rest = &inner[1..];
            if rules::dangerous(base, rest) {
                v.dangerous = true;
            }
            if FETCHERS.contains(&base) {
                fetch_in_pipeline = true;
            }
            if INTERPRETERS.contains(&base) {
                let reads_stdin = !rest.iter().any(|a| a == "-c" || a == "-e")
                    && rest
                        .iter()
                        .find(|a| !a.starts_with('-') || a.as_str() == "-")
                        .is_none_or(|a| a == "-");
                let fetched_sub = cmd
                    .substitutions
                    .iter()
                    .any(|s| FETCHERS.iter().any(|f| s.contains(f)));
                if (cmd.sep == Sep::Pipe && fetch_in_pipeline && reads_stdin) || fetched_sub {
                    v.dangerous = true;
                }
            }
            match rules::wrapper_len(inner) {
                Some(n) if n > 0 && n < inner.len() => inner = &inner[n..],
                _ => break,
            }
        }

        // Workspace boundary: path-like arguments and `cd`.
        let base = basename(first);
        if prog.is_none() && outside(first, &dir, ws) {
            v.inside = false;
        }
        if !matches!(base, "echo" | "printf") {
            let explicit_pattern = words[1..].iter().any(|a| {
                matches!(a.as_str(), "-e" | "-f" | "--file")
                    || a.starts_with("--regexp")
                    || a.starts_with("--expression")
            });
            let mut skip_first_positional = PATTERN_FIRST.contains(&base) && !explicit_pattern;
            for a in &words[1..] {
                if skip_first_positional && !a.starts_with('-') {
                    skip_first_positional = false;
                    continue;
                }
                if outside(a, &dir, ws) {
                    v.inside = false;
                }
            }
        }
        if base == "cd" || base == "pushd" {
            match words[1..].iter().find(|a| !a.starts_with('-')) {
                None => dir = paths::home().unwrap_or_else(|| PathBuf::from("/")),
                Some(t) if t.starts_with('$') || t == "-" => v.inside = false,
                Some(t) => dir = paths::resolve(&dir, t),
            }
            if !paths::is_inside(ws, &dir) {
                v.inside = false;
            }
        }
    }
    v
}

/// The program name if it names a standard program (bare, or in a system
/// bin directory); `./ls` or `/opt/x/cat` could be anything.
fn program_name(word: &str) -> Option<&str> {
    if !word.contains('/') {
        return Some(word);
    }
    [
        "/bin/",
        "/usr/bin/",
        "/usr/local/bin/",
        "/sbin/",
        "/usr/sbin/",
    ]
    .iter()
    .find_map(|dir| word.strip_prefix(dir))
    .filter(|rest| !rest.contains('/') && !rest.is_empty())
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn harmless_device(target: &str) -> bool {
    matches!(
        target,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty"
    ) || target.starts_with("/dev/fd/")
}

fn block_device(target: &str) -> bool {
    [
        "/dev/sd",
        "/dev/hd",
        "/dev/vd",
        "/dev/xvd",
        "/dev/nvme",
        "/dev/mmcblk",
        "/dev/disk",
    ]
    .iter()
    .any(|p| target.starts_with(p))
}

/// Whether a word names a path outside the workspace. Only words that look
/// like paths count: absolute, `~`, or containing a `..` component; variables
/// count as unknown, hence outside.
fn outside(word: &str, dir: &Path, ws: &Path) -> bool {
    if word.contains("://") {
        return false;
    }
    let candidate = if word.starts_with("--") {
        match word.split_once('=') {
            Some((_, value)) => value,
            None => return false,
        }
    } else if word.starts_with('-') {
        return false;
    } else if !word.starts_with(['/', '.', '~']) && word.contains('=') {
        // `of=/dev/sda`, `NAME=/path`: the value is what may be a path.
        word.split_once('=').map_or(word, |(_, value)| value)
    } else {
        word
    };
    if candidate.is_empty() || harmless_device(candidate) {
        return false;
    }
    if candidate.starts_with('$') || candidate.starts_with('`') {
        return true;
    }
    if candidate.starts_with('~') && candidate != "~" && !candidate.starts_with("~/") {
        return true; // ~user
    }
    let path_like = candidate.starts_with('/')
        || candidate.starts_with('~')
        || candidate.split('/').any(|c| c == "..");
    path_like && !paths::is_inside(ws, &paths::resolve(dir, candidate))
}

/// `:(){ :|:& };:` and renamed variants: a function that pipes into itself
/// in the background.
fn fork_bomb(line: &str) -> bool {
    let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let mut from = 0;
    while let Some(pos) = compact[from..].find("(){") {
        let at = from + pos;
        let name: String = compact[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '-'))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let body = &compact[at + 3..];
        if !name.is_empty() && body.contains(&format!("{name}|{name}")) {
            return true;
        }
        from = at + 3;
    }
    false
}
