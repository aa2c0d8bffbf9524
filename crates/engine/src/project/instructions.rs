//! Instructions files: `AGENTS.md` and `JUCODE.md` from the repo root down
//! to the working directory, plus the profile's `AGENTS.md`. They are part
//! of the repository (or the user's own), so they load without trust.

use std::path::{Path, PathBuf};

/// Cap per file; a longer file is cut and the model told where the rest is.
pub const MAX_INSTRUCTIONS_BYTES: usize = 32 * 1024;

/// Names read in every directory from the repo root down to cwd, in order.
pub const NAMES: [&str; 2] = ["AGENTS.md", "JUCODE.md"];

/// One loaded instructions file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionsFile {
    pub path: PathBuf,
    /// The text (cut at [`MAX_INSTRUCTIONS_BYTES`]).
    pub text: String,
    /// The profile's file, not the project's.
    pub profile: bool,
}

/// The nearest ancestor of `cwd` (itself included) holding `.git` (a folder,
/// or a file for worktrees and submodules); `cwd` when there is none.
pub fn repo_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// The directories from `root` down to `cwd`, both included (`cwd` must be
/// inside `root`; otherwise just `cwd`).
pub fn root_to_cwd(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    if !cwd.starts_with(root) {
        return vec![cwd.to_path_buf()];
    }
    let mut dirs: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|dir| dir.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}

/// The profile's `AGENTS.md` first, then each directory's files from the
/// root down: the later, the more specific.
pub fn load(profile_dir: &Path, dirs: &[PathBuf]) -> Vec<InstructionsFile> {
    let mut files = Vec::new();
    if let Some(file) = read(&profile_dir.join("AGENTS.md"), true) {
        files.push(file);
    }
    for dir in dirs {
        for name in NAMES {
            if let Some(file) = read(&dir.join(name), false) {
                files.push(file);
            }
        }
    }
    files
}

fn read(path: &Path, profile: bool) -> Option<InstructionsFile> {
    if !path.is_file() {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let total = bytes.len();
    let mut text = String::from_utf8_lossy(&bytes[..total.min(MAX_INSTRUCTIONS_BYTES)])
        .trim_end_matches('\u{fffd}')
        .trim()
        .to_string();
    if text.is_empty() {
        return None;
    }
    if total > MAX_INSTRUCTIONS_BYTES {
        text.push_str(&format!(
            "\n\n[… cut: the file has {total} bytes; read {} for the rest]",
            path.display()
        ));
    }
    Some(InstructionsFile {
        path: path.to_path_buf(),
        text,
        profile,
    })
}

/// The system prompt section for `files` (empty when there are none).
pub fn render(files: &[InstructionsFile]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "# Instructions\n\nThe user and the project left these instructions for you. Follow \
         them; where they disagree, the later (more specific) file wins, and the user's \
         messages win over all of them.",
    );
    for file in files {
        let whose = if file.profile { " (user profile)" } else { "" };
        out.push_str(&format!(
            "\n\n## {}{whose}\n\n{}",
            file.path.display(),
            file.text
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_root_and_walks_down() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let sub = root.join("a").join("b");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(repo_root(&sub), sub);
        std::fs::create_dir(root.join(".git")).unwrap();
        assert_eq!(repo_root(&sub), root);
        assert_eq!(
            root_to_cwd(&root, &sub),
            vec![root.clone(), root.join("a"), sub.clone()]
        );
        assert_eq!(root_to_cwd(&sub, &root), vec![root.clone()]);
    }

    #[test]
    fn loads_in_order_and_caps() {
        let tmp = tempfile::tempdir().unwrap();
        let profile = tmp.path().join("profile");
        let root = tmp.path().join("repo");
        let sub = root.join("sub");
        std::fs::create_dir_all(&profile).unwrap();
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(profile.join("AGENTS.md"), "profile rule").unwrap();
        std::fs::write(root.join("AGENTS.md"), "root rule").unwrap();
        std::fs::write(root.join("JUCODE.md"), "  \n").unwrap();
        std::fs::write(sub.join("JUCODE.md"), "x".repeat(40_000)).unwrap();
        let files = load(&profile, &root_to_cwd(&root, &sub));
        let texts: Vec<&str> = files.iter().map(|f| &f.text[..4]).collect();
        assert_eq!(texts, ["prof", "root", "xxxx"]);
        assert!(files[0].profile);
        assert!(files[2].text.contains("cut: the file has 40000 bytes"));
        assert!(files[2].text.len() < 33 * 1024);
        let section = render(&files);
        assert!(section.contains(&format!(
            "## {} (user profile)",
            profile.join("AGENTS.md").display()
        )));
        assert!(section.contains(&format!(
            "## {}\n\nroot rule",
            root.join("AGENTS.md").display()
        )));
        assert_eq!(render(&[]), "");
    }
}
