//! Per-hunk approval of file changes.
//!
//! The hunks are recomputed from the call's arguments and the file's current
//! content each time, with a deterministic diff (no deadline), so the ids the
//! UI got from [`edit_hunks`] name the same hunks in [`run_with_hunks`] as
//! long as the file did not change in between.

use std::path::Path;

use similar::udiff::UnifiedHunkHeader;
use similar::{ChangeTag, DiffOp, DiffTag, TextDiff};

use crate::fs_tools::{self, blocking};
use crate::{Hunk, ToolContext, ToolOutput};

/// Lines of unchanged context around each hunk, as in `diff -u`.
const CONTEXT: usize = 3;

/// The hunks a `write` or `edit` call would apply, ids `h0`, `h1`, ... in file order.
///
/// A `write` to a new file is one hunk of `+` lines. Errors are the messages
/// the call itself would fail with (bad arguments, old_text not found, ...).
pub fn edit_hunks(name: &str, args: &str, cwd: &Path) -> Result<Vec<Hunk>, String> {
    let plan = fs_tools::plan(name, args, cwd)?;
    Ok(hunks_of(&plan.shown, &plan.old, &plan.new))
}

/// Runs a `write` or `edit` call applying only the hunks whose ids are in
/// `keep`: the file ends up as its current content with exactly those hunks
/// changed. The output lists applied and skipped hunks.
pub async fn run_with_hunks(
    name: &str,
    args: &str,
    ctx: &ToolContext,
    keep: &[String],
) -> ToolOutput {
    if name != "write" && name != "edit" {
        return ToolOutput::error(format!(
            "`{name}` has no hunks; only `write` and `edit` can be applied partially"
        ));
    }
    let (name, args, cwd, keep) = (
        name.to_string(),
        args.to_string(),
        ctx.cwd.clone(),
        keep.to_vec(),
    );
    blocking(move || {
        let plan = fs_tools::plan(&name, &args, &cwd)?;
        let diff = TextDiff::from_lines(plan.old.as_str(), plan.new.as_str());
        let groups = diff.grouped_ops(CONTEXT);
        if groups.is_empty() {
            // Nothing differs (or a new empty file): there is nothing to choose.
            fs_tools::commit(&plan, &plan.new)?;
            return Ok(format!("{} unchanged (no hunks)", plan.shown));
        }
        let ids: Vec<String> = (0..groups.len()).map(|i| format!("h{i}")).collect();
        let kept: Vec<bool> = ids.iter().map(|id| keep.contains(id)).collect();
        let applied: Vec<&str> = ids
            .iter()
            .zip(&kept)
            .filter(|(_, k)| **k)
            .map(|(id, _)| id.as_str())
            .collect();
        let skipped: Vec<&str> = ids
            .iter()
            .zip(&kept)
            .filter(|(_, k)| !**k)
            .map(|(id, _)| id.as_str())
            .collect();
        let unknown: Vec<&str> = keep
            .iter()
            .filter(|k| !ids.contains(k))
            .map(String::as_str)
            .collect();

        let mut report = if applied.is_empty() {
            // Writing the unchanged content back would still create a new file.
            format!(
                "No hunks applied; {} left unchanged (skipped {})",
                plan.shown,
                skipped.join(", ")
            )
        } else {
            let old_lines: Vec<&str> = diff.iter_old_slices().collect();
            let new_lines: Vec<&str> = diff.iter_new_slices().collect();
            let content = apply_kept(&old_lines, &new_lines, &groups, &kept);
            fs_tools::commit(&plan, &content)?;
            let mut r = format!("Applied {} to {}", applied.join(", "), plan.shown);
            if !skipped.is_empty() {
                r.push_str(&format!("; skipped {} (rejected)", skipped.join(", ")));
            }
            r
        };
        if !unknown.is_empty() {
            report.push_str(&format!(
                "; ignored unknown hunk ids {}",
                unknown.join(", ")
            ));
        }
        Ok(report)
    })
    .await
}

fn hunks_of(file: &str, old: &str, new: &str) -> Vec<Hunk> {
    let diff = TextDiff::from_lines(old, new);
    diff.grouped_ops(CONTEXT)
        .iter()
        .enumerate()
        .map(|(i, group)| {
            let mut lines = Vec::new();
            for op in group {
                for change in diff.iter_changes(op) {
                    let sign = match change.tag() {
                        ChangeTag::Equal => ' ',
                        ChangeTag::Delete => '-',
                        ChangeTag::Insert => '+',
                    };
                    let text = change.value();
                    let text = text
                        .strip_suffix('\n')
                        .map(|t| t.strip_suffix('\r').unwrap_or(t))
                        .unwrap_or(text);
                    lines.push(format!("{sign}{text}"));
                    if change.missing_newline() {
                        lines.push("\\ No newline at end of file".to_string());
                    }
                }
            }
            Hunk {
                id: format!("h{i}"),
                file: file.to_string(),
                header: UnifiedHunkHeader::new(group).to_string(),
                lines,
            }
        })
        .collect()
}

/// Rebuilds the file from the old lines, substituting the new lines only for
/// the changes of kept hunks. Every non-equal op belongs to exactly one group
/// and groups are in file order, so walking them with a cursor over the old
/// lines reproduces the old file wherever a hunk is skipped.
fn apply_kept(old: &[&str], new: &[&str], groups: &[Vec<DiffOp>], kept: &[bool]) -> String {
    let mut out = String::new();
    let mut cursor = 0;
    for (group, &keep) in groups.iter().zip(kept) {
        for op in group.iter().filter(|op| op.tag() != DiffTag::Equal) {
            let (o, n) = (op.old_range(), op.new_range());
            old[cursor..o.start].iter().for_each(|l| out.push_str(l));
            let replacement = if keep { &new[n] } else { &old[o.clone()] };
            replacement.iter().for_each(|l| out.push_str(l));
            cursor = o.end;
        }
    }
    old[cursor..].iter().for_each(|l| out.push_str(l));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    fn apply(old: &str, new: &str, keep: &[bool]) -> String {
        let diff = TextDiff::from_lines(old, new);
        let groups = diff.grouped_ops(CONTEXT);
        let o: Vec<&str> = diff.iter_old_slices().collect();
        let n: Vec<&str> = diff.iter_new_slices().collect();
        apply_kept(&o, &n, &groups, keep)
    }

    #[test]
    fn two_hunks_each_applied_alone() {
        let old = numbered(20);
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 18\n", "line eighteen\nextra\n");
        let hunks = hunks_of("f.txt", &old, &new);
        assert_eq!(hunks.len(), 2);
        assert_eq!(hunks[0].id, "h0");
        assert_eq!(hunks[0].header, "@@ -1,5 +1,5 @@");
        assert!(hunks[0].lines.contains(&"-line 2".to_string()));
        assert!(hunks[0].lines.contains(&"+line two".to_string()));
        assert_eq!(hunks[1].header, "@@ -15,6 +15,7 @@");
        assert_eq!(apply(&old, &new, &[true, true]), new);
        assert_eq!(apply(&old, &new, &[false, false]), old);
        assert_eq!(
            apply(&old, &new, &[true, false]),
            old.replace("line 2\n", "line two\n")
        );
        assert_eq!(
            apply(&old, &new, &[false, true]),
            old.replace("line 18\n", "line eighteen\nextra\n")
        );
    }

    #[test]
    fn new_file_is_one_insert_hunk() {
        let hunks = hunks_of("new.txt", "", "a\nb");
        assert_eq!(hunks.len(), 1);
        assert_eq!(hunks[0].header, "@@ -0,0 +1,2 @@");
        assert_eq!(
            hunks[0].lines,
            vec!["+a", "+b", "\\ No newline at end of file"]
        );
    }

    #[test]
    fn missing_final_newline_round_trips() {
        let old = "a\nb\nc";
        let new = "a\nB\nc\nd";
        assert_eq!(apply(old, new, &[true]), new);
        assert_eq!(apply(old, new, &[false]), old);
    }
}
