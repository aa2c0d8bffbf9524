//! `list` and `search`, built on ripgrep's crates so that results follow the
//! same rules a developer's `rg` would: .gitignore/.ignore respected, hidden
//! files skipped, `glob` with `rg -g` semantics.

use std::path::{Path, PathBuf};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::overrides::OverrideBuilder;
use ignore::WalkBuilder;

use crate::args::{ListArgs, SearchArgs};
use crate::fs_tools::blocking;
use crate::output::{clip_line, keep_start};
use crate::paths;
use crate::{ToolContext, ToolOutput};

const MAX_ENTRIES: usize = 1000;
/// Past this we stop counting the entries we do not show.
const MAX_COUNTED: usize = 100_000;
const MAX_MATCHES: usize = 500;
const MAX_MATCH_LINE_CHARS: usize = 500;

pub(crate) async fn list(a: ListArgs, ctx: &ToolContext) -> ToolOutput {
    let cwd = ctx.cwd.clone();
    let root = paths::resolve(&cwd, a.path.as_deref().unwrap_or("."));
    let max = ctx.max_output_bytes;
    blocking(move || list_blocking(&cwd, &root, a.glob.as_deref(), max)).await
}

fn list_blocking(
    cwd: &Path,
    root: &Path,
    glob: Option<&str>,
    max: usize,
) -> Result<String, String> {
    let shown_root = paths::display(cwd, root);
    if !root.exists() {
        return Err(format!("path not found: {shown_root}"));
    }
    let walker = walker(root, glob)?;
    let mut lines = Vec::new();
    let mut total = 0usize;
    for entry in walker.build().flatten() {
        if entry.depth() == 0 && root.is_dir() {
            continue;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        // With a glob the listing is the matching files (`rg --files -g`);
        // directories are only traversed.
        if is_dir && glob.is_some() {
            continue;
        }
        total += 1;
        if lines.len() < MAX_ENTRIES {
            let mut line = paths::display(cwd, entry.path());
            if is_dir {
                line.push('/');
            }
            lines.push(line);
        } else if total >= MAX_COUNTED {
            break;
        }
    }
    if lines.is_empty() {
        return Ok(match glob {
            Some(g) => format!("no files matching {g:?} in {shown_root}"),
            None => format!("{shown_root} is empty (or everything in it is ignored)"),
        });
    }
    let mut out = lines.join("\n");
    if total > lines.len() {
        let plus = if total >= MAX_COUNTED { "+" } else { "" };
        out.push_str(&format!(
            "\n… {}{plus} more entries (narrow with path or glob)",
            total - lines.len()
        ));
    }
    Ok(keep_start(&out, max))
}

pub(crate) async fn search(a: SearchArgs, ctx: &ToolContext) -> ToolOutput {
    let cwd = ctx.cwd.clone();
    let root = paths::resolve(&cwd, a.path.as_deref().unwrap_or("."));
    let max = ctx.max_output_bytes;
    blocking(move || search_blocking(&cwd, &root, &a.pattern, a.glob.as_deref(), max)).await
}

fn search_blocking(
    cwd: &Path,
    root: &Path,
    pattern: &str,
    glob: Option<&str>,
    max: usize,
) -> Result<String, String> {
    if pattern.is_empty() {
        return Err("pattern is empty".into());
    }
    let shown_root = paths::display(cwd, root);
    if !root.exists() {
        return Err(format!("path not found: {shown_root}"));
    }
    let matcher = RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .build(pattern)
        .map_err(|e| format!("invalid regex {pattern:?}: {e}"))?;
    // Stop at the first NUL like rg does: matches in binary files are noise.
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build();

    let mut out = String::new();
    let mut count = 0usize;
    for entry in walker(root, glob)?.build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let shown = paths::display(cwd, entry.path());
        let sink = Lossy(|line_no, line: &str| {
            count += 1;
            let line = line.trim_end_matches(['\n', '\r']);
            out.push_str(&format!(
                "{shown}:{line_no}:{}\n",
                clip_line(line, MAX_MATCH_LINE_CHARS)
            ));
            Ok(count < MAX_MATCHES)
        });
        // Unreadable files are skipped, as rg does (with a warning we omit).
        let _ = searcher.search_path(&matcher, entry.path(), sink);
        if count >= MAX_MATCHES {
            out.push_str(&format!(
                "… (stopped after {MAX_MATCHES} matches; narrow the pattern, path or glob)\n"
            ));
            break;
        }
    }
    if count == 0 {
        let within = glob.map_or(String::new(), |g| format!(" (glob {g:?})"));
        return Ok(format!(
            "no matches for {pattern:?} in {shown_root}{within}"
        ));
    }
    let out = out.trim_end_matches('\n');
    Ok(keep_start(out, max))
}

/// A deterministic (sorted, single-threaded) walker with rg's filtering rules.
fn walker(root: &Path, glob: Option<&str>) -> Result<WalkBuilder, String> {
    let mut b = WalkBuilder::new(root);
    b.hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .ignore(true)
        .parents(true)
        // Respect .gitignore even in a tree that is not (yet) a git repository.
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    if let Some(g) = glob.filter(|g| !g.is_empty()) {
        let base: PathBuf = if root.is_dir() {
            root.to_path_buf()
        } else {
            root.parent()
                .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
        };
        let mut ob = OverrideBuilder::new(base);
        ob.add(g).map_err(|e| format!("invalid glob {g:?}: {e}"))?;
        let overrides = ob.build().map_err(|e| format!("invalid glob {g:?}: {e}"))?;
        b.overrides(overrides);
    }
    Ok(b)
}
