//! The session's side of project resources: the system prompt and command
//! list they extend, the startup steps (trust prompt, `session_start`
//! hooks), `/trust`, and running custom commands and skills.

use jucode_protocol::{CommandInfo, Event, UserMessageOp};

use super::trust;
use crate::actor::Session;
use crate::commands;
use crate::prompt;

impl Session {
    /// Built-in commands, then custom commands and skills, then the MCP
    /// servers' prompts.
    pub(crate) fn command_list(&self) -> Vec<CommandInfo> {
        let mut list = commands::builtin_list();
        list.extend(self.project.command_entries());
        list.extend(self.mcp.prompt_commands.iter().cloned());
        list
    }

    /// The system prompt with the instructions files and the skills list.
    pub(crate) fn system_prompt(&self) -> String {
        let base = prompt::system_prompt(&self.options);
        let section = self.project.prompt_section();
        if section.is_empty() {
            base
        } else {
            format!("{base}\n\n{section}")
        }
    }

    /// Part of the startup batch, after `mcp_servers`.
    pub(crate) fn emit_trust_prompt(&self) {
        if self.project.needs_trust_prompt() {
            self.out.emit(Event::TrustPrompt {
                cwd: self.project.cwd.display().to_string(),
                repo_root: self.project.repo_root.display().to_string(),
            });
        }
    }

    /// After the startup batch: problems with resource files, then the
    /// `session_start` hooks (their output as `info`), before any op.
    pub(crate) async fn project_startup(&mut self) {
        self.report_project_problems();
        let hooks = self.project.hooks.clone();
        if hooks.has(super::HookEvent::SessionStart) {
            hooks.session_start(&self.out, "startup").await;
        }
    }

    fn report_project_problems(&mut self) {
        for problem in std::mem::take(&mut self.project.problems) {
            self.out.emit(Event::error(problem));
        }
    }

    /// `/trust` and custom commands and skills. Returns false when `name`
    /// is none of them (a built-in or an unknown command).
    pub(crate) fn run_project_command(&mut self, name: &str, rest: &str) -> bool {
        if name == "/trust" {
            self.trust_command(rest);
            return true;
        }
        let bare = &name[1..];
        if commands::builtin_list().iter().any(|b| b.command == name) {
            return false;
        }
        let content = if let Some(command) = self.project.commands.iter().find(|c| c.name == bare) {
            command.expand(rest)
        } else if let Some(skill) = self.project.skills.iter().find(|s| s.name == bare) {
            skill.request(rest)
        } else {
            return false;
        };
        self.submit(UserMessageOp {
            content,
            images: Vec::new(),
            files: Vec::new(),
        });
        true
    }

    fn trust_command(&mut self, rest: &str) {
        if self.project.chat {
            self.out.emit(Event::error(
                "a chat session has no project: nothing to trust",
            ));
            return;
        }
        let (path, trusted) = match rest {
            "" => {
                let message = self.describe_trust();
                self.out.emit(Event::info(message));
                return;
            }
            "yes" => (self.project.cwd.clone(), true),
            "repo" => (self.project.repo_root.clone(), true),
            "no" => (self.project.cwd.clone(), false),
            _ => {
                self.out
                    .emit(Event::error("usage: /trust [yes|repo|no]".to_string()));
                return;
            }
        };
        let profile = self.options.config.profile_dir.clone();
        if let Err(err) = trust::record(&profile, &path, trusted) {
            self.out.emit(Event::error(format!(
                "cannot record the trust decision: {err}"
            )));
            return;
        }
        let was_trusted = self.project.trust.as_ref().is_some_and(|d| d.trusted);
        self.project.reload();
        if trusted {
            self.out
                .emit(Event::status(format!("trusted {}", path.display())));
        } else {
            self.out.emit(Event::info(format!(
                "not trusting {}: its .jucode resources stay off (this is remembered; \
                 /trust yes changes it)",
                path.display()
            )));
        }
        self.out.emit(Event::CommandList {
            commands: self.command_list(),
        });
        self.report_project_problems();
        self.sync_project_mcp();
        if trusted && !was_trusted && self.project.hooks.has(super::HookEvent::SessionStart) {
            let hooks = self.project.hooks.clone();
            let out = self.out.clone();
            tokio::spawn(async move { hooks.session_start(&out, "trust").await });
        }
    }

    fn describe_trust(&self) -> String {
        let dirs = self.project.resource_dirs();
        let found = if dirs.is_empty() {
            "no .jucode resources here".to_string()
        } else {
            let list: Vec<String> = dirs
                .iter()
                .map(|d| d.join(".jucode").display().to_string())
                .collect();
            format!("project resources in {}", list.join(", "))
        };
        match &self.project.trust {
            Some(d) if d.trusted => format!(
                "trusted: {} (decided for {}); {found}",
                self.project.cwd.display(),
                d.path.display()
            ),
            Some(d) => format!(
                "not trusted: {} (refused for {}); {found} stay off. /trust yes or /trust repo changes it",
                self.project.cwd.display(),
                d.path.display()
            ),
            None => format!(
                "no trust decision for {}; {found}. Answer with /trust yes (this folder), \
                 /trust repo ({}) or /trust no",
                self.project.cwd.display(),
                self.project.repo_root.display()
            ),
        }
    }
}
