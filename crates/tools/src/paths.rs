//! Path resolution shared by the tools and the approval classifier.
//!
//! Everything here is lexical: approval decisions are made before a file
//! exists, so we cannot canonicalize through the filesystem.

use std::path::{Component, Path, PathBuf};

/// The user's home directory, for `~` expansion.
pub(crate) fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Resolves `path` (absolute, relative to `cwd`, or `~`-prefixed) to a
/// normalized absolute path.
pub(crate) fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let expanded = if path == "~" {
        home().unwrap_or_else(|| PathBuf::from("/"))
    } else if let Some(rest) = path.strip_prefix("~/") {
        home().unwrap_or_else(|| PathBuf::from("/")).join(rest)
    } else {
        PathBuf::from(path)
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    normalize(&joined)
}

/// Removes `.` and resolves `..` lexically. `..` above the root stays at the root.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                // pop() refuses to remove the root, which is what we want.
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Whether `path` (already resolved) lies in the workspace `cwd` (or is it).
pub(crate) fn is_inside(cwd: &Path, path: &Path) -> bool {
    normalize(path).starts_with(normalize(cwd))
}

/// How to show `path` to the model: relative to `cwd` when inside it.
pub(crate) fn display(cwd: &Path, path: &Path) -> String {
    let cwd = normalize(cwd);
    match path.strip_prefix(&cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_and_normalizes() {
        let cwd = Path::new("/work/proj");
        assert_eq!(
            resolve(cwd, "src/a.rs"),
            PathBuf::from("/work/proj/src/a.rs")
        );
        assert_eq!(resolve(cwd, "./src/../b"), PathBuf::from("/work/proj/b"));
        assert_eq!(resolve(cwd, "../other/x"), PathBuf::from("/work/other/x"));
        assert_eq!(resolve(cwd, "/etc/../../x"), PathBuf::from("/x"));
        assert_eq!(resolve(cwd, "."), PathBuf::from("/work/proj"));
    }

    #[test]
    fn inside_checks() {
        let cwd = Path::new("/work/proj");
        assert!(is_inside(cwd, &resolve(cwd, "a/b/../c")));
        assert!(is_inside(cwd, &resolve(cwd, ".")));
        assert!(!is_inside(cwd, &resolve(cwd, "a/../../x")));
        // A sibling with a common string prefix is not inside.
        assert!(!is_inside(cwd, Path::new("/work/project2/x")));
        assert_eq!(display(cwd, Path::new("/work/proj/src/a.rs")), "src/a.rs");
        assert_eq!(display(cwd, Path::new("/etc/hosts")), "/etc/hosts");
    }
}
