//! MCP on the session's side: which servers run (config.toml's
//! `[mcp_servers.*]`, plus a trusted project's `.jucode/mcp.toml`), the
//! `mcp_servers` view, and the `mcp_*` ops that change config.toml. The
//! turn's side (tools, gating, calls) is `mcp_glue`; slash commands are
//! `mcp_commands`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jucode_mcp::{McpManager, McpUpdate, ServerConfig, TransportConfig};
use jucode_protocol::{CommandInfo, Event, McpServerInfo};
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;

use crate::actor::Session;
use crate::project::Project;

/// The file a project's servers live in, inside its `.jucode/` folder.
const PROJECT_FILE: &str = "mcp.toml";

/// A prompt fetched for a prompt command: the text to send, or why not.
pub(crate) type PromptReady = Result<String, String>;

/// The channels MCP work reports back to the actor on.
pub(crate) struct McpChannels {
    pub updates: UnboundedSender<McpUpdate>,
    pub prompts: UnboundedSender<PromptReady>,
}

/// A server of a trusted `.jucode/mcp.toml`.
#[derive(Clone, PartialEq)]
struct ProjectServer {
    file: PathBuf,
    config: ServerConfig,
}

pub(crate) struct McpState {
    pub manager: McpManager,
    /// `[mcp_servers.*]` of config.toml, as the ops have left it.
    config_servers: BTreeMap<String, toml::Table>,
    /// Servers of trusted project files; config.toml wins on a name clash.
    project_servers: BTreeMap<String, ProjectServer>,
    /// The last `mcp_servers` view emitted (for deduplication).
    last_view: Option<Vec<McpServerInfo>>,
    /// The prompt commands of the last `command_list`.
    pub prompt_commands: Vec<CommandInfo>,
    /// Config problems to report after the startup batch.
    problems: Vec<String>,
    pub prompt_tx: UnboundedSender<PromptReady>,
    chat: bool,
    cwd: PathBuf,
    config_path: PathBuf,
}

impl McpState {
    /// Starts the enabled servers in the background (never blocks). Chat
    /// sessions start none.
    pub fn start(
        config: &jucode_config::Config,
        options: &crate::options::EngineOptions,
        project: &Project,
        channels: McpChannels,
    ) -> McpState {
        let mut problems = Vec::new();
        let (config_servers, project_servers) = if options.chat {
            (BTreeMap::new(), BTreeMap::new())
        } else {
            let project = load_project(project, &mut problems);
            (config.mcp_servers.clone(), project)
        };
        let config_path = options.config.config_path.clone();
        // The servers to run, in order: config.toml's that are valid, then
        // the project's whose names config.toml does not use.
        let mut servers = Vec::new();
        for (name, table) in &config_servers {
            match ServerConfig::from_table(table) {
                Ok(config) => servers.push((name.clone(), resolve(config, &options.cwd))),
                Err(reason) => problems.push(format!(
                    "{}: mcp_servers.{name}: {reason}; the server is not started",
                    config_path.display()
                )),
            }
        }
        for (name, server) in &project_servers {
            if !config_servers.contains_key(name) {
                servers.push((name.clone(), server.config.clone()));
            }
        }
        McpState {
            manager: McpManager::start(servers, channels.updates),
            config_servers,
            project_servers,
            last_view: None,
            prompt_commands: Vec::new(),
            problems,
            prompt_tx: channels.prompts,
            chat: options.chat,
            cwd: options.cwd.clone(),
            config_path,
        }
    }

    /// How long a turn's first request may wait for servers still
    /// connecting: the longest startup timeout, and a little more.
    pub fn settle_limit(&self) -> Duration {
        let longest = self
            .config_servers
            .values()
            .filter_map(|t| ServerConfig::from_table(t).ok())
            .chain(self.project_servers.values().map(|s| s.config.clone()))
            .map(|c| c.startup_timeout)
            .max()
            .unwrap_or_default();
        longest + Duration::from_secs(1)
    }
}

/// The servers of the trusted `.jucode/mcp.toml` files from the repo root
/// down to cwd (a deeper file wins on a name clash).
fn load_project(project: &Project, problems: &mut Vec<String>) -> BTreeMap<String, ProjectServer> {
    let mut found = BTreeMap::new();
    for dir in project.resource_dirs() {
        let file = dir.join(".jucode").join(PROJECT_FILE);
        if !project.is_trusted(&dir) || !file.is_file() {
            continue;
        }
        let servers = match read_project_file(&file) {
            Ok(servers) => servers,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        for (name, table) in servers {
            match ServerConfig::from_table(&table) {
                Ok(config) => {
                    let config = resolve(config, &dir);
                    let file = file.clone();
                    found.insert(name, ProjectServer { file, config });
                }
                Err(reason) => problems.push(format!(
                    "{}: mcp_servers.{name}: {reason}; the server is not started",
                    file.display()
                )),
            }
        }
    }
    found
}

/// A `.jucode/mcp.toml`: `[mcp_servers.NAME]` tables, as in config.toml.
fn read_project_file(file: &Path) -> Result<Vec<(String, toml::Table)>, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("{}: {}", file.display(), e.message().trim()))?;
    let mut servers = Vec::new();
    for (key, value) in table {
        match (key.as_str(), value) {
            ("mcp_servers", toml::Value::Table(all)) => {
                for (name, server) in all {
                    match server {
                        toml::Value::Table(t) => servers.push((name, t)),
                        _ => {
                            return Err(format!(
                                "{}: mcp_servers.{name} must be a table",
                                file.display()
                            ))
                        }
                    }
                }
            }
            (other, _) => {
                return Err(format!(
                    "{}: unknown key `{other}` (expected [mcp_servers.NAME] tables)",
                    file.display()
                ))
            }
        }
    }
    Ok(servers)
}

/// A stdio server without `cwd` runs in the session's cwd; a relative one
/// is taken from `base` (the session's cwd, or the project folder).
fn resolve(mut config: ServerConfig, base: &Path) -> ServerConfig {
    if let TransportConfig::Stdio { cwd, .. } = &mut config.transport {
        *cwd = Some(match cwd.take() {
            Some(dir) if dir.is_relative() => base.join(dir),
            Some(dir) => dir,
            None => base.to_path_buf(),
        });
    }
    config
}

/// `mcp_servers.NAME: reason`, the message of an invalid `mcp_set`.
fn parse_op_config(name: &str, config: &Map<String, Value>) -> Result<toml::Table, String> {
    let table =
        jucode_mcp::table_from_json(config).map_err(|e| format!("mcp_servers.{name}: {e}"))?;
    ServerConfig::from_table(&table).map_err(|e| format!("mcp_servers.{name}: {e}"))?;
    Ok(table)
}

impl Session {
    /// The `mcp_servers` view of the servers now.
    fn mcp_view(&self) -> Vec<McpServerInfo> {
        self.mcp
            .manager
            .snapshot()
            .into_iter()
            .map(|s| McpServerInfo {
                name: s.name,
                transport: s.transport,
                state: s.state,
                tools: s.tools,
                error: s.error,
            })
            .collect()
    }

    /// Emits the view (an answer: even when it did not change).
    pub(crate) fn emit_mcp_servers(&mut self) {
        let servers = self.mcp_view();
        self.mcp.last_view = Some(servers.clone());
        self.out.emit(Event::McpServers { servers });
    }

    /// After the startup batch: config problems of the servers.
    pub(crate) fn report_mcp_problems(&mut self) {
        for problem in std::mem::take(&mut self.mcp.problems) {
            self.out.emit(Event::error(problem));
        }
    }

    /// A server changed: a new view unless it equals the last one, and a
    /// new `command_list` when the prompt commands changed.
    pub(crate) fn on_mcp_changed(&mut self) {
        let servers = self.mcp_view();
        if self.mcp.last_view.as_ref() != Some(&servers) {
            self.mcp.last_view = Some(servers.clone());
            self.out.emit(Event::McpServers { servers });
        }
        let prompts = self.mcp_prompt_entries();
        if prompts != self.mcp.prompt_commands {
            self.mcp.prompt_commands = prompts;
            self.out.emit(Event::CommandList {
                commands: self.command_list(),
            });
        }
    }

    /// After `/trust`: start the servers of newly trusted project files,
    /// stop those no longer trusted.
    pub(crate) fn sync_project_mcp(&mut self) {
        if self.mcp.chat {
            return;
        }
        let found = load_project(&self.project, &mut self.mcp.problems);
        self.report_mcp_problems();
        let old = std::mem::replace(&mut self.mcp.project_servers, found);
        let manager = self.mcp.manager.clone();
        for (name, server) in &self.mcp.project_servers {
            if !self.mcp.config_servers.contains_key(name) && old.get(name) != Some(server) {
                manager.set_server(name, server.config.clone());
            }
        }
        for name in old.keys() {
            if !self.mcp.project_servers.contains_key(name)
                && !self.mcp.config_servers.contains_key(name)
            {
                manager.remove_server(name);
            }
        }
    }

    /// Refuses MCP changes in a chat session (which runs no servers).
    fn mcp_unavailable(&self) -> bool {
        if self.mcp.chat {
            self.out.emit(Event::error(
                "chat sessions do not use MCP servers; manage them from a coding session",
            ));
        }
        self.mcp.chat
    }

    /// Changes `[mcp_servers.NAME]` in config.toml (`None` removes it).
    fn save_mcp_server(&self, name: &str, table: Option<toml::Table>) -> Result<(), String> {
        jucode_config::edit_file(&self.mcp.config_path, |file| {
            let servers = file
                .entry("mcp_servers")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if !servers.is_table() {
                *servers = toml::Value::Table(toml::Table::new());
            }
            let servers = servers.as_table_mut().expect("a table");
            match table {
                Some(table) => {
                    servers.insert(name.to_string(), toml::Value::Table(table));
                }
                None => {
                    servers.remove(name);
                }
            }
            if servers.is_empty() {
                file.remove("mcp_servers");
            }
        })
        .map_err(|e| format!("cannot save the MCP server `{name}`: {e}"))
    }

    /// `mcp_set`: adds or replaces a server, saves it, connects it.
    pub(crate) fn mcp_set(&mut self, name: &str, config: &Map<String, Value>) {
        if self.mcp_unavailable() {
            return;
        }
        if name.trim().is_empty() {
            return self
                .out
                .emit(Event::error("mcp_set: `name` must not be empty"));
        }
        let table = match parse_op_config(name, config) {
            Ok(table) => table,
            Err(err) => return self.out.emit(Event::error(err)),
        };
        if let Err(err) = self.save_mcp_server(name, Some(table.clone())) {
            return self.out.emit(Event::error(err));
        }
        let server = ServerConfig::from_table(&table).expect("validated above");
        self.mcp.config_servers.insert(name.to_string(), table);
        self.mcp
            .manager
            .set_server(name, resolve(server, &self.mcp.cwd));
        self.emit_mcp_servers();
    }

    /// `mcp_remove`: disconnects a config.toml server and deletes its table.
    pub(crate) fn mcp_remove(&mut self, name: &str) {
        if self.mcp_unavailable() {
            return;
        }
        if !self.mcp.config_servers.contains_key(name) {
            return self.unknown_or_project(name, "remove it there");
        }
        if let Err(err) = self.save_mcp_server(name, None) {
            return self.out.emit(Event::error(err));
        }
        self.mcp.config_servers.remove(name);
        match self.mcp.project_servers.get(name) {
            // The project's server of that name was hidden by this one.
            Some(server) => self.mcp.manager.set_server(name, server.config.clone()),
            None => {
                self.mcp.manager.remove_server(name);
            }
        }
        self.emit_mcp_servers();
    }

    /// `mcp_toggle`: switches a server off (disconnects) or on (connects,
    /// also retrying a failed one) and saves `enabled`.
    pub(crate) fn mcp_toggle(&mut self, name: &str, enabled: bool) {
        if self.mcp_unavailable() {
            return;
        }
        if let Some(table) = self.mcp.config_servers.get(name) {
            let mut table = table.clone();
            table.insert("enabled".into(), toml::Value::Boolean(enabled));
            let server = match ServerConfig::from_table(&table) {
                Ok(server) => resolve(server, &self.mcp.cwd),
                Err(e) => {
                    return self
                        .out
                        .emit(Event::error(format!("mcp_servers.{name}: {e}")))
                }
            };
            if let Err(err) = self.save_mcp_server(name, Some(table.clone())) {
                return self.out.emit(Event::error(err));
            }
            self.mcp.config_servers.insert(name.to_string(), table);
            if !self.mcp.manager.toggle_server(name, enabled) {
                self.mcp.manager.set_server(name, server);
            }
        } else if let Some(server) = self.mcp.project_servers.get_mut(name) {
            // A project file is the repository's: switched for this session only.
            server.config.enabled = enabled;
            self.mcp.manager.toggle_server(name, enabled);
            self.out.emit(Event::info(format!(
                "MCP server `{name}` comes from {}: switched for this session only",
                server.file.display()
            )));
        } else {
            return self
                .out
                .emit(Event::error(format!("unknown MCP server: {name}")));
        }
        self.emit_mcp_servers();
    }

    fn unknown_or_project(&self, name: &str, what: &str) {
        let message = match self.mcp.project_servers.get(name) {
            Some(server) => format!(
                "MCP server `{name}` comes from {}: {what}",
                server.file.display()
            ),
            None => format!("unknown MCP server: {name}"),
        };
        self.out.emit(Event::error(message));
    }
}
