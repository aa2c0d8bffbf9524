//! The profile directory and `config.toml`: where JuCode keeps its state and
//! how a user configures providers, models, and MCP servers.
//!
//! Loading never fails hard: a broken file yields the defaults plus a
//! [`ConfigProblem`] that the engine reports as an `error` event.

mod overrides;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use overrides::apply_override;

/// `[providers.NAME]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// `responses`, `chat` or `anthropic`.
    pub wire_api: Option<String>,
    pub base_url: Option<String>,
    /// Name of the env var that holds the key; absent means no auth header.
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// Prices in USD per 1M tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceConfig {
    pub input: f64,
    #[serde(default)]
    pub cached_input: Option<f64>,
    #[serde(default)]
    pub cache_write: Option<f64>,
    pub output: f64,
}

/// `[models."ID"]`: overrides of, or additions to, the built-in catalog.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    pub provider: Option<String>,
    pub context_window: Option<u64>,
    pub context_limit: Option<u64>,
    pub max_output_tokens: Option<u64>,
    pub reasoning_efforts: Option<Vec<String>>,
    pub default_effort: Option<String>,
    pub price: Option<PriceConfig>,
}

/// `[mcp_servers.NAME]`, kept as a raw table so `mcp_set` can round-trip
/// whatever the front-end sends.
pub type McpServerConfig = toml::Table;

/// The whole of `config.toml`. Every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub model: Option<String>,
    pub provider: Option<String>,
    pub reasoning_effort: Option<String>,
    pub approval_mode: Option<String>,
    /// Seconds without a byte from the model before a stream counts as stalled.
    pub stream_idle_timeout: Option<f64>,
    /// Retries of a failed model request before the turn ends with an error.
    pub request_max_retries: Option<u32>,
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    #[serde(default)]
    pub models: BTreeMap<String, ModelConfig>,
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// Anything a later version adds lands in a known table; unknown
    /// top-level keys are rejected so typos are reported.
    #[serde(default)]
    pub web_search: Option<toml::Table>,
}

/// A config file that could not be used as written.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigProblem {
    pub message: String,
}

/// Where the profile lives: `$JUCODE_HOME`, else `~/.jucode`.
pub fn profile_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("JUCODE_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".jucode")
}

/// The loaded configuration and where it came from.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub profile_dir: PathBuf,
    pub config_path: PathBuf,
    pub config: Config,
    /// Problems found while loading; each one becomes an `error` event.
    pub problems: Vec<ConfigProblem>,
}

/// Loads `config.toml` from the profile dir and applies `-c key=value`
/// overrides. A missing file is fine; a broken one is reported and ignored.
pub fn load(profile_dir: &Path, overrides: &[String]) -> LoadedConfig {
    let config_path = profile_dir.join("config.toml");
    let mut problems = Vec::new();
    let mut table = match std::fs::read_to_string(&config_path) {
        Ok(text) => match text.parse::<toml::Table>() {
            Ok(table) => table,
            Err(err) => {
                problems.push(ConfigProblem {
                    message: describe_toml_error(&config_path, &text, &err),
                });
                toml::Table::new()
            }
        },
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => toml::Table::new(),
        Err(err) => {
            problems.push(ConfigProblem {
                message: format!(
                    "cannot read {}: {err}; using defaults",
                    config_path.display()
                ),
            });
            toml::Table::new()
        }
    };
    let file_table = table.clone();
    for raw in overrides {
        if let Err(message) = apply_override(&mut table, raw) {
            problems.push(ConfigProblem { message });
        }
    }
    let config = match Config::deserialize(toml::Value::Table(table)) {
        Ok(config) => config,
        Err(err) => {
            // The overrides may be what broke it; try the file alone so one
            // bad `-c` does not throw away a good file.
            problems.push(ConfigProblem {
                message: format!(
                    "{}: {}; using defaults",
                    config_path.display(),
                    err.to_string().trim()
                ),
            });
            Config::deserialize(toml::Value::Table(file_table)).unwrap_or_default()
        }
    };
    LoadedConfig {
        profile_dir: profile_dir.to_path_buf(),
        config_path,
        config,
        problems,
    }
}

fn describe_toml_error(path: &Path, text: &str, err: &toml::de::Error) -> String {
    let line = err
        .span()
        .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
    let what = err.message().trim();
    match line {
        Some(line) => format!("{} line {line}: {what}; using defaults", path.display()),
        None => format!("{}: {what}; using defaults", path.display()),
    }
}

/// Changes `config.toml` at `path` in place: reads the file as a TOML table
/// (a missing file is an empty one), lets `change` edit it, and writes it
/// back atomically. Only what `change` touches changes; the other keys and
/// tables are kept (comments and formatting are not). A file that does not
/// parse is left alone and reported, so a typo is never overwritten.
pub fn edit_file(path: &Path, change: impl FnOnce(&mut toml::Table)) -> Result<(), String> {
    let mut table = match std::fs::read_to_string(path) {
        Ok(text) => text.parse::<toml::Table>().map_err(|err| {
            describe_toml_error(path, &text, &err).replace("; using defaults", "")
        })?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => toml::Table::new(),
        Err(err) => return Err(format!("cannot read {}: {err}", path.display())),
    };
    change(&mut table);
    let text = toml::to_string_pretty(&table).map_err(|e| e.to_string())?;
    write_atomically(path, &text).map_err(|err| format!("cannot write {}: {err}", path.display()))
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(tmp, path)
}

impl Config {
    /// Writes the config back to `path` (used by ops that persist settings).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let text = toml::to_string_pretty(self).map_err(std::io::Error::other)?;
        write_atomically(path, &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_file_changes_one_table_and_keeps_the_rest() {
        let dir = std::env::temp_dir().join(format!("jucode-config-edit-{}", std::process::id()));
        let path = dir.join("config.toml");
        let _ = std::fs::remove_dir_all(&dir);
        // A missing file starts empty.
        edit_file(&path, |t| {
            t.insert("model".into(), "m1".into());
        })
        .unwrap();
        std::fs::write(
            &path,
            "model = \"m1\"\n[providers.p]\nbase_url = \"http://x\"\n[mcp_servers.a]\ncommand = \"a\"\n",
        )
        .unwrap();
        edit_file(&path, |t| {
            let servers = t
                .entry("mcp_servers")
                .or_insert_with(|| toml::Table::new().into());
            servers
                .as_table_mut()
                .unwrap()
                .insert("b".into(), toml::Table::new().into());
        })
        .unwrap();
        let config = load(&dir, &[]);
        assert!(config.problems.is_empty(), "{:?}", config.problems);
        assert_eq!(config.config.model.as_deref(), Some("m1"));
        assert_eq!(config.config.providers.len(), 1);
        assert_eq!(
            config.config.mcp_servers.keys().collect::<Vec<_>>(),
            ["a", "b"]
        );
        // A broken file is reported and left alone.
        std::fs::write(&path, "model = [").unwrap();
        let err = edit_file(&path, |t| t.clear()).unwrap_err();
        assert!(err.contains("config.toml line 1"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "model = [");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
