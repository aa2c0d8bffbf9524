//! Trust decisions, kept in the profile: `$JUCODE_HOME/trust.toml`.
//!
//! ```toml
//! [projects]
//! "/home/me/src/app" = "yes"     # /trust yes or /trust repo
//! "/home/me/downloads/x" = "no"  # /trust no
//! ```
//!
//! A decision covers its folder and everything inside it; the most specific
//! (longest) path that covers a folder decides for it. Recording a decision
//! drops the ones made earlier for folders inside it.

use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "trust.toml";

/// A stored decision and the folder it was made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub path: PathBuf,
    pub trusted: bool,
}

impl Decision {
    /// Whether this decision lets resources found in `dir` load.
    pub fn allows(&self, dir: &Path) -> bool {
        self.trusted && dir.starts_with(&self.path)
    }
}

fn file(profile_dir: &Path) -> PathBuf {
    profile_dir.join(FILE_NAME)
}

fn read_table(profile_dir: &Path) -> Result<toml::Table, String> {
    let path = file(profile_dir);
    match std::fs::read_to_string(&path) {
        Ok(text) => text
            .parse::<toml::Table>()
            .map_err(|e| format!("{}: {}", path.display(), e.message().trim())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(toml::Table::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The decision that covers `dir`, if any. An unreadable file counts as no
/// decisions at all (nothing is trusted) and is reported.
pub fn lookup(profile_dir: &Path, dir: &Path) -> (Option<Decision>, Option<String>) {
    let table = match read_table(profile_dir) {
        Ok(table) => table,
        Err(problem) => return (None, Some(format!("{problem}; nothing is trusted"))),
    };
    let best = table
        .get("projects")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flatten()
        .filter_map(|(path, value)| {
            let trusted = match value.as_str()? {
                "yes" => true,
                "no" => false,
                _ => return None,
            };
            let path = PathBuf::from(path);
            dir.starts_with(&path).then_some(Decision { path, trusted })
        })
        .max_by_key(|d| d.path.components().count());
    (best, None)
}

/// Records a decision for `path`, replacing any made for it or for a
/// folder inside it.
pub fn record(profile_dir: &Path, path: &Path, trusted: bool) -> Result<(), String> {
    let mut table = read_table(profile_dir)?;
    let projects = table
        .entry("projects")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let Some(projects) = projects.as_table_mut() else {
        return Err(format!(
            "{}: `projects` is not a table",
            file(profile_dir).display()
        ));
    };
    // The new decision covers everything inside `path`: earlier decisions
    // made for folders inside it are replaced by it.
    projects.retain(|key, _| !Path::new(key).starts_with(path));
    projects.insert(
        path.display().to_string(),
        toml::Value::String(if trusted { "yes" } else { "no" }.to_string()),
    );
    let text = format!(
        "# JuCode trust decisions (/trust yes|repo|no). A decision covers its folder and\n\
         # everything inside it; the most specific one wins.\n{}",
        toml::to_string(&table).map_err(|e| e.to_string())?
    );
    std::fs::create_dir_all(profile_dir).map_err(|e| format!("{}: {e}", profile_dir.display()))?;
    let target = file(profile_dir);
    let tmp = target.with_extension("toml.tmp");
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, &target))
        .map_err(|e| format!("cannot write {}: {e}", target.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_specific_decision_wins() {
        let tmp = tempfile::tempdir().unwrap();
        let profile = tmp.path();
        let repo = Path::new("/src/repo");
        assert_eq!(lookup(profile, repo), (None, None));
        record(profile, repo, true).unwrap();
        record(profile, &repo.join("vendor"), false).unwrap();
        let (d, _) = lookup(profile, &repo.join("src"));
        let d = d.unwrap();
        assert!(d.trusted);
        assert_eq!(d.path, repo);
        assert!(d.allows(&repo.join("src")));
        assert!(!d.allows(Path::new("/src")));
        let (d, _) = lookup(profile, &repo.join("vendor/lib"));
        assert!(!d.unwrap().trusted);
        assert_eq!(lookup(profile, Path::new("/src/repository")).0, None);
        // Deciding for a folder replaces the decisions inside it.
        record(profile, repo, false).unwrap();
        assert!(!lookup(profile, repo).0.unwrap().trusted);
        assert_eq!(lookup(profile, &repo.join("vendor")).0.unwrap().path, repo);
        let text = std::fs::read_to_string(profile.join(FILE_NAME)).unwrap();
        assert!(text.contains("\"/src/repo\" = \"no\""), "{text}");
    }

    #[test]
    fn a_broken_file_trusts_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(FILE_NAME), "[projects\n").unwrap();
        let (d, problem) = lookup(tmp.path(), Path::new("/x"));
        assert_eq!(d, None);
        assert!(problem.unwrap().contains("nothing is trusted"));
        assert!(record(tmp.path(), Path::new("/x"), true).is_err());
    }
}
