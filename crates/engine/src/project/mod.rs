//! Project resources: instructions files, custom commands, skills and hooks,
//! from the project (its `.jucode/` folders, behind trust) and from the
//! profile (`$JUCODE_HOME`, always trusted). Chat sessions load none of them.
//!
//! * `AGENTS.md`, `JUCODE.md` from the repo root down to cwd, and the
//!   profile's `AGENTS.md`: always loaded (they are part of the repository).
//! * `.jucode/commands/*.md`, `.jucode/skills/*/SKILL.md`,
//!   `.jucode/hooks.toml`, `.jucode/mcp.toml` in any folder from the repo
//!   root down to cwd: loaded only once the folder is trusted (`/trust`).
//!
//! Everything is read when the session starts and again after `/trust`.

mod commands;
mod frontmatter;
pub(crate) mod hooks;
mod instructions;
mod session;
mod skills;
mod trust;

use std::path::{Path, PathBuf};

use jucode_protocol::CommandInfo;

use crate::options::EngineOptions;
pub(crate) use commands::CustomCommand;
pub(crate) use hooks::{HookEvent, Hooks};
pub(crate) use skills::Skill;

/// The trust decision covering `cwd` in the profile at `profile_dir`:
/// `Some(true)` trusted, `Some(false)` refused, `None` undecided. For
/// loaders of other project resources (`.jucode/mcp.toml`).
pub fn project_trust(profile_dir: &Path, cwd: &Path) -> Option<bool> {
    let cwd = canonical(cwd);
    trust::lookup(profile_dir, &cwd).0.map(|d| d.trusted)
}

/// Whether the project resources in `dir` (a folder holding `.jucode/`) may
/// load for a session in `cwd`: `/trust yes` in a folder covers the folder
/// and what is inside it, `/trust repo` the whole repository.
pub fn is_trusted(profile_dir: &Path, cwd: &Path, dir: &Path) -> bool {
    trust::lookup(profile_dir, &canonical(cwd))
        .0
        .is_some_and(|d| d.allows(&canonical(dir)))
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// What a session loaded.
#[derive(Default)]
pub(crate) struct Project {
    pub chat: bool,
    pub cwd: PathBuf,
    /// The nearest ancestor of cwd with `.git`, else cwd.
    pub repo_root: PathBuf,
    profile_dir: PathBuf,
    /// The stored decision covering cwd.
    pub trust: Option<trust::Decision>,
    pub instructions: Vec<instructions::InstructionsFile>,
    /// Profile commands, then project ones (a later one replaces an earlier
    /// one of the same name).
    pub commands: Vec<CustomCommand>,
    pub skills: Vec<Skill>,
    pub hooks: Hooks,
    /// Problems to report as `error` events (files skipped, bad hooks.toml).
    pub problems: Vec<String>,
}

impl Project {
    /// Reads everything this session may use.
    pub fn load(options: &EngineOptions) -> Project {
        if options.chat {
            return Project {
                chat: true,
                cwd: options.cwd.clone(),
                repo_root: options.cwd.clone(),
                ..Project::default()
            };
        }
        let cwd = canonical(&options.cwd);
        let mut project = Project {
            chat: false,
            repo_root: instructions::repo_root(&cwd),
            cwd,
            profile_dir: options.config.profile_dir.clone(),
            ..Project::default()
        };
        project.reload();
        project
    }

    /// Re-reads the trust decision and every resource.
    pub fn reload(&mut self) {
        if self.chat {
            return;
        }
        let dirs = instructions::root_to_cwd(&self.repo_root, &self.cwd);
        let (decision, problem) = trust::lookup(&self.profile_dir, &self.cwd);
        self.trust = decision;
        self.problems = problem.into_iter().collect();
        self.instructions = instructions::load(&self.profile_dir, &dirs);

        // Profile first, then trusted project folders from the root down.
        let mut sources: Vec<(PathBuf, bool)> = vec![(self.profile_dir.clone(), false)];
        sources.extend(
            self.resource_dirs()
                .into_iter()
                .filter(|dir| self.trust.as_ref().is_some_and(|d| d.allows(dir)))
                .map(|dir| (dir.join(".jucode"), true)),
        );
        let (mut commands, mut skills, mut hooks) = (Vec::new(), Vec::new(), Vec::new());
        for (base, project) in sources {
            let (found, problems) = commands::load_dir(&base.join("commands"));
            self.problems.extend(problems);
            for command in found {
                commands.retain(|c: &CustomCommand| c.name != command.name);
                commands.push(command);
            }
            let (found, problems) = skills::load_dir(&base.join("skills"));
            self.problems.extend(problems);
            for skill in found {
                skills.retain(|s: &Skill| s.name != skill.name);
                skills.push(skill);
            }
            match hooks::load_file(&base.join(hooks::FILE_NAME), project) {
                Ok(found) => hooks.extend(found),
                Err(problem) => self.problems.push(problem),
            }
        }
        // Built-in commands win over custom ones; commands over skills.
        let builtins = crate::commands::builtin_list();
        let is_builtin = |name: &str| builtins.iter().any(|b| b.command[1..] == *name);
        commands.retain(|c| !is_builtin(&c.name));
        skills.retain(|s| !is_builtin(&s.name) && !commands.iter().any(|c| c.name == s.name));
        self.commands = commands;
        self.skills = skills;
        self.hooks = Hooks::new(hooks, self.cwd.clone(), self.repo_root.clone());
    }

    /// Folders from the repo root down to cwd whose `.jucode/` holds a
    /// resource that needs trust (the profile's own folder never counts).
    pub fn resource_dirs(&self) -> Vec<PathBuf> {
        if self.chat {
            return Vec::new();
        }
        let profile = canonical(&self.profile_dir);
        instructions::root_to_cwd(&self.repo_root, &self.cwd)
            .into_iter()
            .filter(|dir| {
                let jucode = dir.join(".jucode");
                canonical(&jucode) != profile && has_resources(&jucode)
            })
            .collect()
    }

    /// A `trust_prompt` is due: resources wait and nothing was decided.
    pub fn needs_trust_prompt(&self) -> bool {
        !self.chat && self.trust.is_none() && !self.resource_dirs().is_empty()
    }

    /// Whether this session's project resources are trusted (for loaders of
    /// `.jucode/mcp.toml`).
    pub fn is_trusted(&self, dir: &Path) -> bool {
        !self.chat && self.trust.as_ref().is_some_and(|d| d.allows(dir))
    }

    /// The system prompt section: instructions and the skills list.
    pub fn prompt_section(&self) -> String {
        [
            instructions::render(&self.instructions),
            skills::render(&self.skills),
        ]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
    }

    /// The `command_list` entries of custom commands and skills.
    pub fn command_entries(&self) -> Vec<CommandInfo> {
        let commands = self.commands.iter().map(|c| CommandInfo {
            command: format!("/{}", c.name),
            marker: Some("custom".to_string()),
            args: c.args.clone(),
            description: c.description.clone(),
        });
        let skills = self.skills.iter().map(|s| CommandInfo {
            command: format!("/{}", s.name),
            marker: Some("skill".to_string()),
            args: "[TASK]".to_string(),
            description: s.description.clone(),
        });
        commands.chain(skills).collect()
    }
}

/// Whether a `.jucode` folder holds anything that needs trust.
fn has_resources(jucode: &Path) -> bool {
    if !jucode.is_dir() {
        return false;
    }
    let any_entry = |dir: PathBuf, pred: &dyn Fn(&Path) -> bool| {
        std::fs::read_dir(dir)
            .map(|entries| entries.filter_map(Result::ok).any(|e| pred(&e.path())))
            .unwrap_or(false)
    };
    jucode.join(hooks::FILE_NAME).is_file()
        || jucode.join("mcp.toml").is_file()
        || any_entry(jucode.join("commands"), &|p| {
            p.extension().is_some_and(|e| e == "md") && p.is_file()
        })
        || any_entry(jucode.join("skills"), &|p| p.join("SKILL.md").is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(profile: &Path, cwd: &Path, chat: bool) -> EngineOptions {
        EngineOptions {
            config: jucode_config::load(profile, &[]),
            cwd: cwd.to_path_buf(),
            model: None,
            provider: None,
            approval_mode: None,
            chat,
            resume: None,
        }
    }

    fn write(path: PathBuf, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn project_resources_wait_for_trust() {
        let tmp = tempfile::tempdir().unwrap();
        let tmp = canonical(tmp.path());
        let profile = tmp.join("profile");
        let repo = tmp.join("repo");
        let sub = repo.join("sub");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        write(repo.join("AGENTS.md"), "root rules");
        write(repo.join(".jucode/commands/greet.md"), "Hello $ARGUMENTS");
        write(sub.join(".jucode/skills/ship/SKILL.md"), "description: x\n");
        write(profile.join("commands/mine.md"), "Mine");
        write(profile.join("commands/help.md"), "shadowing a builtin");

        let p = Project::load(&options(&profile, &sub, false));
        assert_eq!(p.repo_root, repo);
        assert!(p.needs_trust_prompt());
        assert_eq!(p.resource_dirs(), vec![repo.clone(), sub.clone()]);
        assert!(p.prompt_section().contains("root rules"));
        let names: Vec<&str> = p.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["mine"]);
        assert!(p.skills.is_empty());

        // Trusting the subfolder covers its resources, not the root's.
        trust::record(&profile, &sub, true).unwrap();
        let p = Project::load(&options(&profile, &sub, false));
        assert!(!p.needs_trust_prompt());
        assert_eq!(p.skills.len(), 1);
        assert_eq!(p.commands.len(), 1);
        assert!(is_trusted(&profile, &sub, &sub));
        assert!(!is_trusted(&profile, &sub, &repo));
        assert_eq!(project_trust(&profile, &sub), Some(true));

        trust::record(&profile, &repo, true).unwrap();
        trust::record(&profile, &sub, false).unwrap();
        let p = Project::load(&options(&profile, &sub, false));
        assert!(p.skills.is_empty() && p.commands.len() == 1);
        let p = Project::load(&options(&profile, &repo, false));
        let names: Vec<&str> = p.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["mine", "greet"]);
        let entries = p.command_entries();
        assert_eq!(entries[1].command, "/greet");
        assert_eq!(entries[1].marker.as_deref(), Some("custom"));

        let chat = Project::load(&options(&profile, &repo, true));
        assert!(chat.commands.is_empty() && chat.prompt_section().is_empty());
        assert!(!chat.needs_trust_prompt());
    }

    #[test]
    fn the_profile_folder_is_not_a_project_resource() {
        let tmp = tempfile::tempdir().unwrap();
        let home = canonical(tmp.path());
        let profile = home.join(".jucode");
        write(profile.join("commands/mine.md"), "Mine");
        let p = Project::load(&options(&profile, &home, false));
        assert!(!p.needs_trust_prompt());
        assert_eq!(p.commands.len(), 1);
    }
}
