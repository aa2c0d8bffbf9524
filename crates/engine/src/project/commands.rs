//! Custom slash commands: `.jucode/commands/NAME.md` (project, behind
//! trust) and `$JUCODE_HOME/commands/NAME.md` (profile). The file is a
//! prompt template: running `/NAME args` sends its body, with `$ARGUMENTS`
//! replaced by the arguments, as a user message.

use std::path::{Path, PathBuf};

use super::frontmatter;

/// Larger files are skipped: a prompt template is not a document.
const MAX_COMMAND_BYTES: u64 = 256 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Without the slash: the file stem.
    pub name: String,
    pub description: String,
    /// `argument-hint` from the frontmatter.
    pub args: String,
    pub body: String,
    pub path: PathBuf,
}

impl CustomCommand {
    /// The message `/NAME args` sends.
    pub fn expand(&self, args: &str) -> String {
        expand(&self.body, args)
    }
}

/// `$ARGUMENTS` replaced by `args`; a template without the placeholder gets
/// non-empty arguments appended after a blank line.
pub fn expand(body: &str, args: &str) -> String {
    let body = body.trim();
    let args = args.trim();
    if body.contains("$ARGUMENTS") {
        body.replace("$ARGUMENTS", args)
    } else if args.is_empty() {
        body.to_string()
    } else {
        format!("{body}\n\n{args}")
    }
}

/// Whether `name` can be typed as `/name`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// Every `*.md` in `dir`, by name. Problems (unreadable, oversized, bad
/// names) are returned to be reported, and those files skipped.
pub fn load_dir(dir: &Path) -> (Vec<CustomCommand>, Vec<String>) {
    let mut commands = Vec::new();
    let mut problems = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (commands, problems);
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
        .collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !valid_name(&name) {
            problems.push(format!(
                "{}: a command name may only have letters, digits, - _ . and :; skipped",
                path.display()
            ));
            continue;
        }
        match read_capped(&path, MAX_COMMAND_BYTES) {
            Ok(text) => {
                let (fields, body) = frontmatter::split(&text);
                let description = fields
                    .get("description")
                    .filter(|d| !d.is_empty())
                    .cloned()
                    .unwrap_or_else(|| frontmatter::first_line(body, 80));
                commands.push(CustomCommand {
                    name,
                    description,
                    args: fields.get("argument-hint").cloned().unwrap_or_default(),
                    body: body.to_string(),
                    path,
                });
            }
            Err(problem) => problems.push(problem),
        }
    }
    (commands, problems)
}

/// The text of a small file, or why it cannot be used.
pub fn read_capped(path: &Path, max: u64) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.len() > max {
        return Err(format!(
            "{}: larger than {} KB; skipped",
            path.display(),
            max / 1024
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}; skipped", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_arguments() {
        assert_eq!(
            expand("Review $ARGUMENTS now\n", " a.rs b.rs "),
            "Review a.rs b.rs now"
        );
        assert_eq!(expand("Say hi", ""), "Say hi");
        assert_eq!(expand("Say hi", "to Bob"), "Say hi\n\nto Bob");
    }

    #[test]
    fn loads_a_folder() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("review.md"),
            "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS\n",
        )
        .unwrap();
        std::fs::write(tmp.path().join("plain.md"), "\n# Plain one\nbody").unwrap();
        std::fs::write(tmp.path().join("bad name.md"), "x").unwrap();
        std::fs::write(tmp.path().join("notes.txt"), "x").unwrap();
        let (commands, problems) = load_dir(tmp.path());
        let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["plain", "review"]);
        assert_eq!(commands[0].description, "Plain one");
        assert_eq!(commands[1].description, "Review a file");
        assert_eq!(commands[1].args, "FILE");
        assert_eq!(commands[1].expand("x.rs"), "Review x.rs");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(load_dir(&tmp.path().join("missing")).0.is_empty());
    }
}
