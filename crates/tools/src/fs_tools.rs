//! `read`, `write` and `edit`.
//!
//! `write` and `edit` are split into a pure planning step (what the file
//! would contain afterwards) and a commit step, so that approval UIs can show
//! the hunks of exactly the change that [`crate::run`] would make.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::args::{self, EditArgs, ReadArgs, WriteArgs};
use crate::output::clip_line;
use crate::paths;
use crate::{ToolContext, ToolOutput};

const DEFAULT_LIMIT: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// A NUL byte in the first block means "binary", as git and grep decide.
const SNIFF_BYTES: usize = 8192;

pub(crate) async fn read(a: ReadArgs, ctx: &ToolContext) -> ToolOutput {
    let offset = match a.offset {
        None => 1,
        Some(o) if o.is_finite() && o >= 0.0 => (o as usize).max(1),
        Some(o) => return ToolOutput::error(format!("offset must be a line number >= 1, got {o}")),
    };
    let limit = match a.limit {
        None => DEFAULT_LIMIT,
        Some(l) if l.is_finite() && l >= 1.0 => l as usize,
        Some(l) => return ToolOutput::error(format!("limit must be >= 1, got {l}")),
    };
    let path = paths::resolve(&ctx.cwd, &a.path);
    let shown = paths::display(&ctx.cwd, &path);
    let max_bytes = ctx.max_output_bytes;
    blocking(move || read_lines(&path, &shown, offset, limit, max_bytes)).await
}

fn read_lines(
    path: &Path,
    shown: &str,
    offset: usize,
    limit: usize,
    max_bytes: usize,
) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(shown, &e))?;
    if meta.is_dir() {
        return Err(format!(
            "{shown} is a directory; use the `list` tool to see its contents"
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| io_error(shown, &e))?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf().map_err(|e| io_error(shown, &e))?;
    if head[..head.len().min(SNIFF_BYTES)].contains(&0) {
        return Err(format!(
            "{shown} is a binary file ({} bytes); `read` only shows text",
            meta.len()
        ));
    }

    let mut out = String::new();
    let mut line = Vec::new();
    let mut line_no = 0usize;
    let mut last_shown = 0usize;
    let mut capped = false;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| io_error(shown, &e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if line_no < offset || capped || line_no >= offset + limit {
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        let formatted = format!("{line_no:>6}\t{}\n", clip_line(text, MAX_LINE_CHARS));
        if !out.is_empty() && out.len() + formatted.len() > max_bytes {
            capped = true;
            continue;
        }
        out.push_str(&formatted);
        last_shown = line_no;
    }
    let total = line_no;
    if total == 0 {
        return Ok(format!("({shown} is empty)"));
    }
    if offset > total {
        return Err(format!(
            "offset {offset} is past the end of {shown} ({total} lines)"
        ));
    }
    if last_shown < total {
        out.push_str(&format!(
            "… (showing lines {offset}-{last_shown} of {total}; use offset={} to read more)",
            last_shown + 1
        ));
    }
    Ok(out)
}

/// Runs `write` or `edit`: plan the new content, then write it.
pub(crate) async fn apply(name: &str, args: &str, ctx: &ToolContext) -> ToolOutput {
    let (name, args, cwd) = (name.to_string(), args.to_string(), ctx.cwd.clone());
    blocking(move || {
        let plan = plan(&name, &args, &cwd)?;
        commit(&plan, &plan.new)?;
        Ok(if name == "write" {
            let verb = if plan.existed { "Overwrote" } else { "Created" };
            format!("{verb} {} ({} bytes)", plan.shown, plan.new.len())
        } else {
            let n = plan.replacements;
            let s = if n == 1 { "" } else { "s" };
            format!("Edited {} ({n} replacement{s})", plan.shown)
        })
    })
    .await
}

/// What a `write` or `edit` call would do to one file.
pub(crate) struct Planned {
    pub path: PathBuf,
    /// The path as shown to the model and in hunks.
    pub shown: String,
    /// Current content ("" for a new file).
    pub old: String,
    /// Content after the call.
    pub new: String,
    pub existed: bool,
    pub replacements: usize,
}

/// Computes the effect of a `write` or `edit` call without touching the disk.
pub(crate) fn plan(name: &str, args: &str, cwd: &Path) -> Result<Planned, String> {
    match name {
        "write" => {
            let a: WriteArgs = args::parse(name, args)?;
            let path = paths::resolve(cwd, &a.path);
            let shown = paths::display(cwd, &path);
            if path.is_dir() {
                return Err(format!("{shown} is a directory; give a file path"));
            }
            let existed = path.exists();
            let old = if existed {
                read_text(&path, &shown)?
            } else {
                String::new()
            };
            Ok(Planned {
                path,
                shown,
                old,
                new: a.content,
                existed,
                replacements: 0,
            })
        }
        "edit" => {
            let a: EditArgs = args::parse(name, args)?;
            let pairs = a.pairs()?;
            let path = paths::resolve(cwd, &a.path);
            let shown = paths::display(cwd, &path);
            if !path.exists() {
                return Err(format!(
                    "file not found: {shown} (use `write` to create a new file)"
                ));
            }
            let old = read_text(&path, &shown)?;
            let mut new = old.clone();
            let mut replacements = 0;
            let many = pairs.len() > 1;
            for (i, p) in pairs.iter().enumerate() {
                let prefix = if many {
                    format!("edit {} of {}: ", i + 1, pairs.len())
                } else {
                    String::new()
                };
                let (next, n) = replace(&new, &p.old_text, &p.new_text, p.replace_all, &shown)
                    .map_err(|e| format!("{prefix}{e}"))?;
                new = next;
                replacements += n;
            }
            Ok(Planned {
                path,
                shown,
                old,
                new,
                existed: true,
                replacements,
            })
        }
        other => Err(format!("`{other}` does not edit files")),
    }
}

/// Writes `content` to the planned file, creating parent directories.
pub(crate) fn commit(plan: &Planned, content: &str) -> Result<(), String> {
    if let Some(parent) = plan.path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create directory {}: {e}", parent.display()))?;
    }
    std::fs::write(&plan.path, content).map_err(|e| io_error(&plan.shown, &e))
}

/// One exact-text replacement with the uniqueness rule.
fn replace(
    content: &str,
    old: &str,
    new: &str,
    replace_all: Option<bool>,
    shown: &str,
) -> Result<(String, usize), String> {
    if old.is_empty() {
        return Err("old_text must not be empty".into());
    }
    if old == new {
        return Err("old_text and new_text are identical; nothing to change".into());
    }
    let mut old = std::borrow::Cow::Borrowed(old);
    let mut new = std::borrow::Cow::Borrowed(new);
    let mut count = content.matches(old.as_ref()).count();
    // Models usually write "\n"; a CRLF file would otherwise never match.
    if count == 0 && content.contains("\r\n") && old.contains('\n') && !old.contains("\r\n") {
        let crlf_old = old.replace('\n', "\r\n");
        let crlf_count = content.matches(crlf_old.as_str()).count();
        if crlf_count > 0 {
            count = crlf_count;
            old = crlf_old.into();
            new = new.replace("\r\n", "\n").replace('\n', "\r\n").into();
        }
    }
    match count {
        0 => Err(format!(
            "old_text not found in {shown} (it must match the file exactly, including whitespace and indentation; read the file to check)"
        )),
        1 => Ok((content.replacen(old.as_ref(), &new, 1), 1)),
        n if replace_all == Some(true) => Ok((content.replace(old.as_ref(), &new), n)),
        n => Err(format!(
            "old_text occurs {n} times in {shown}; add more context or set replace_all"
        )),
    }
}

fn read_text(path: &Path, shown: &str) -> Result<String, String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| io_error(shown, &e))?;
    String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text; it cannot be edited"))
}

fn io_error(shown: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("file not found: {shown}"),
        std::io::ErrorKind::PermissionDenied => format!("permission denied: {shown}"),
        _ => format!("{shown}: {e}"),
    }
}

/// Runs filesystem work off the async executor and maps it to a tool output.
pub(crate) async fn blocking<F>(f: F) -> ToolOutput
where
    F: FnOnce() -> Result<String, String> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(text)) => ToolOutput::ok(text),
        Ok(Err(e)) => ToolOutput::error(e),
        Err(e) => ToolOutput::error(format!("internal error: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_rules() {
        assert_eq!(
            replace("a b a", "b", "c", None, "f").unwrap(),
            ("a c a".into(), 1)
        );
        let e = replace("a b a", "a", "c", None, "f").unwrap_err();
        assert_eq!(
            e,
            "old_text occurs 2 times in f; add more context or set replace_all"
        );
        assert_eq!(
            replace("a b a", "a", "c", Some(true), "f").unwrap(),
            ("c b c".into(), 2)
        );
        assert!(replace("a", "z", "c", None, "f")
            .unwrap_err()
            .starts_with("old_text not found in f"));
        assert!(replace("a", "", "c", None, "f").is_err());
    }

    #[test]
    fn crlf_fallback() {
        let (out, n) = replace("x\r\ny\r\n", "x\ny", "x\nz", None, "f").unwrap();
        assert_eq!((out.as_str(), n), ("x\r\nz\r\n", 1));
    }
}
