//! Skills: `.jucode/skills/NAME/SKILL.md` (project, behind trust) and
//! `$JUCODE_HOME/skills/NAME/SKILL.md` (profile). Only the name and the
//! description go into the system prompt; the model reads the file itself
//! when a task calls for the skill ("loaded on use").

use std::path::{Path, PathBuf};

use super::commands::{read_capped, valid_name};
use super::frontmatter;

/// Only the frontmatter is needed, but a huge file is still a mistake.
const MAX_SKILL_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// `name` from the frontmatter, else the folder name.
    pub name: String,
    pub description: String,
    /// The SKILL.md file.
    pub path: PathBuf,
}

impl Skill {
    /// The user message `/NAME args` sends.
    pub fn request(&self, args: &str) -> String {
        let mut text = format!(
            "Use the skill \"{}\": read {} first and follow it.",
            self.name,
            self.path.display()
        );
        if !args.trim().is_empty() {
            text.push_str("\n\n");
            text.push_str(args.trim());
        }
        text
    }
}

/// Every `*/SKILL.md` under `dir`, by folder name.
pub fn load_dir(dir: &Path) -> (Vec<Skill>, Vec<String>) {
    let mut skills = Vec::new();
    let mut problems = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (skills, problems);
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path().join("SKILL.md")))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    for path in paths {
        let folder = path
            .parent()
            .and_then(Path::file_name)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = match read_capped(&path, MAX_SKILL_BYTES) {
            Ok(text) => text,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        let (fields, body) = frontmatter::split(&text);
        let name = fields
            .get("name")
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or(folder);
        if !valid_name(&name) {
            problems.push(format!(
                "{}: a skill name may only have letters, digits, - _ . and :; skipped",
                path.display()
            ));
            continue;
        }
        let description = fields
            .get("description")
            .filter(|d| !d.is_empty())
            .cloned()
            .unwrap_or_else(|| frontmatter::first_line(body, 120));
        skills.push(Skill {
            name,
            description,
            path,
        });
    }
    (skills, problems)
}

/// The system prompt section listing `skills` (empty when there are none).
pub fn render(skills: &[Skill]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "# Skills\n\nSkills are instructions for particular tasks, loaded on use: when a task \
         matches a skill's description (or the user names it), first read its SKILL.md with \
         the `read` tool, then follow it. Files a skill mentions are relative to its folder.\n",
    );
    for skill in skills {
        out.push_str(&format!(
            "\n- {}: {} ({})",
            skill.name,
            skill.description,
            skill.path.display()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_and_lists() {
        let tmp = tempfile::tempdir().unwrap();
        let write = |rel: &str, text: &str| {
            let p = tmp.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            "deploy/SKILL.md",
            "---\nname: ship-it\ndescription: Deploy the app\n---\nSteps…",
        );
        write("lint/SKILL.md", "Run the linters first.\n");
        write("empty-folder/README.md", "not a skill");
        let (skills, problems) = load_dir(tmp.path());
        assert!(problems.is_empty());
        let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["ship-it", "lint"]);
        assert_eq!(skills[1].description, "Run the linters first.");
        let section = render(&skills);
        assert!(section.contains("- ship-it: Deploy the app ("));
        assert!(section.contains("SKILL.md"));
        assert!(skills[0].request("to prod").ends_with("\n\nto prod"));
        assert_eq!(render(&[]), "");
    }
}
