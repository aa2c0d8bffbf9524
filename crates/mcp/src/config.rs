//! `[mcp_servers.NAME]` tables → [`ServerConfig`].
//!
//! The config crate keeps each server as a raw `toml::Table` (so `mcp_set` can
//! round-trip whatever a front-end sends); this module is where it gets
//! validated. Unknown keys are rejected, like everywhere else in
//! `config.toml`, so a typo is reported instead of silently ignored.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// How to reach a server.
#[derive(Clone, PartialEq)]
pub enum TransportConfig {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Added to (not replacing) JuCode's own environment.
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        /// Name of an env var holding a bearer token (sent as
        /// `Authorization: Bearer …`); read at connect time.
        bearer_token_env: Option<String>,
    },
}

/// One server's validated configuration.
#[derive(Clone, PartialEq)]
pub struct ServerConfig {
    pub transport: TransportConfig,
    /// `enabled` (default true). A disabled server is listed but not started.
    pub enabled: bool,
    /// `startup_timeout_sec` (default 10): spawn + handshake + first listing.
    pub startup_timeout: Duration,
    /// `tool_timeout_sec` (default 60): one `tools/call` or `prompts/get`.
    pub tool_timeout: Duration,
}

pub(crate) const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
pub(crate) const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

const STDIO_KEYS: &[&str] = &["command", "args", "env", "cwd"];
const HTTP_KEYS: &[&str] = &["url", "headers", "bearer_token_env"];
const COMMON_KEYS: &[&str] = &["enabled", "startup_timeout_sec", "tool_timeout_sec"];

impl ServerConfig {
    /// Parses one `[mcp_servers.NAME]` table. The error is a sentence fit for
    /// an `error` event, e.g. ``"`args` must be an array of strings"``.
    pub fn from_table(table: &toml::Table) -> Result<ServerConfig, String> {
        let transport = match (table.get("command"), table.get("url")) {
            (Some(_), Some(_)) => return Err("set either `command` or `url`, not both".into()),
            (None, None) => {
                return Err("missing `command` (stdio server) or `url` (HTTP server)".into())
            }
            (Some(command), None) => {
                check_keys(table, STDIO_KEYS)?;
                let command = string(command, "command")?;
                if command.trim().is_empty() {
                    return Err("`command` must not be empty".into());
                }
                TransportConfig::Stdio {
                    command,
                    args: match table.get("args") {
                        Some(v) => string_list(v, "args")?,
                        None => Vec::new(),
                    },
                    env: string_map(table.get("env"), "env")?,
                    cwd: table
                        .get("cwd")
                        .map(|v| string(v, "cwd").map(PathBuf::from))
                        .transpose()?,
                }
            }
            (None, Some(url)) => {
                check_keys(table, HTTP_KEYS)?;
                let url = string(url, "url")?;
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!("`url` must start with http:// or https://: {url}"));
                }
                TransportConfig::Http {
                    url,
                    headers: string_map(table.get("headers"), "headers")?,
                    bearer_token_env: table
                        .get("bearer_token_env")
                        .map(|v| string(v, "bearer_token_env"))
                        .transpose()?,
                }
            }
        };
        let enabled = match table.get("enabled") {
            Some(toml::Value::Boolean(b)) => *b,
            Some(_) => return Err("`enabled` must be true or false".into()),
            None => true,
        };
        Ok(ServerConfig {
            transport,
            enabled,
            startup_timeout: seconds(table, "startup_timeout_sec", DEFAULT_STARTUP_TIMEOUT)?,
            tool_timeout: seconds(table, "tool_timeout_sec", DEFAULT_TOOL_TIMEOUT)?,
        })
    }

    /// `"stdio"` or `"http"`, as shown in `mcp_servers`.
    pub fn transport(&self) -> &'static str {
        match self.transport {
            TransportConfig::Stdio { .. } => "stdio",
            TransportConfig::Http { .. } => "http",
        }
    }
}

/// Converts the JSON object of an `mcp_set` op into the TOML table that
/// config.toml stores (and [`ServerConfig::from_table`] reads). `null`
/// values are dropped, since TOML has no null.
pub fn table_from_json(
    config: &serde_json::Map<String, serde_json::Value>,
) -> Result<toml::Table, String> {
    let mut cleaned = config.clone();
    cleaned.retain(|_, v| !v.is_null());
    toml::Table::try_from(serde_json::Value::Object(cleaned))
        .map_err(|e| format!("invalid server config: {}", e.to_string().trim()))
}

fn check_keys(table: &toml::Table, transport_keys: &[&str]) -> Result<(), String> {
    for key in table.keys() {
        if transport_keys.contains(&key.as_str()) || COMMON_KEYS.contains(&key.as_str()) {
            continue;
        }
        let other = if transport_keys == STDIO_KEYS {
            HTTP_KEYS
        } else {
            STDIO_KEYS
        };
        return Err(if other.contains(&key.as_str()) {
            format!(
                "`{key}` does not apply to a {} server",
                kind(transport_keys)
            )
        } else {
            format!("unknown key `{key}`")
        });
    }
    Ok(())
}

fn kind(keys: &[&str]) -> &'static str {
    if keys == STDIO_KEYS {
        "stdio"
    } else {
        "HTTP"
    }
}

fn string(value: &toml::Value, key: &str) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("`{key}` must be a string"))
}

fn string_list(value: &toml::Value, key: &str) -> Result<Vec<String>, String> {
    let err = || format!("`{key}` must be an array of strings");
    value
        .as_array()
        .ok_or_else(err)?
        .iter()
        .map(|v| v.as_str().map(str::to_owned).ok_or_else(err))
        .collect()
}

fn string_map(value: Option<&toml::Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let err = || format!("`{key}` must be a table of strings");
    value
        .as_table()
        .ok_or_else(err)?
        .iter()
        .map(|(k, v)| Ok((k.clone(), v.as_str().ok_or_else(err)?.to_owned())))
        .collect()
}

fn seconds(table: &toml::Table, key: &str, default: Duration) -> Result<Duration, String> {
    let secs = match table.get(key) {
        None => return Ok(default),
        Some(toml::Value::Integer(n)) => *n as f64,
        Some(toml::Value::Float(f)) => *f,
        Some(_) => return Err(format!("`{key}` must be a number of seconds")),
    };
    // An upper bound keeps Duration::from_secs_f64 from panicking on huge
    // values; a day is far beyond any sensible timeout.
    if !(secs > 0.0 && secs <= 86_400.0) {
        return Err(format!("`{key}` must be between 0 and 86400 seconds"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// "10 s", "1.5 s": how timeouts appear in messages.
pub(crate) fn format_secs(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{} s", secs as u64)
    } else {
        format!("{secs:.1} s")
    }
}

// Env values and header values may hold secrets (tokens), so Debug shows
// only their names.
impl fmt::Debug for TransportConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("cwd", cwd)
                .finish(),
            TransportConfig::Http {
                url,
                headers,
                bearer_token_env,
            } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .field("bearer_token_env", bearer_token_env)
                .finish(),
        }
    }
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("transport", &self.transport)
            .field("enabled", &self.enabled)
            .field("startup_timeout", &self.startup_timeout)
            .field("tool_timeout", &self.tool_timeout)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ServerConfig, String> {
        ServerConfig::from_table(&text.parse::<toml::Table>().unwrap())
    }

    #[test]
    fn stdio_with_defaults() {
        let c = parse(
            r#"command = "node"
args = ["a", "b"]
env = { K = "v" }
cwd = "/tmp""#,
        )
        .unwrap();
        assert_eq!(c.transport(), "stdio");
        assert!(c.enabled);
        assert_eq!(c.startup_timeout, Duration::from_secs(10));
        assert_eq!(c.tool_timeout, Duration::from_secs(60));
        let TransportConfig::Stdio { args, env, cwd, .. } = &c.transport else {
            panic!()
        };
        assert_eq!(args, &["a", "b"]);
        assert_eq!(env["K"], "v");
        assert_eq!(cwd.as_deref(), Some(std::path::Path::new("/tmp")));
        // Debug must not leak env values.
        assert!(!format!("{c:?}").contains("\"v\""));
    }

    #[test]
    fn http_and_timeouts() {
        let c = parse(
            r#"url = "http://127.0.0.1:1/mcp"
headers = { X-Key = "secret" }
bearer_token_env = "TOKEN"
enabled = false
startup_timeout_sec = 2.5
tool_timeout_sec = 5"#,
        )
        .unwrap();
        assert_eq!(c.transport(), "http");
        assert!(!c.enabled);
        assert_eq!(c.startup_timeout, Duration::from_millis(2500));
        assert_eq!(c.tool_timeout, Duration::from_secs(5));
        assert!(!format!("{c:?}").contains("secret"));
    }

    #[test]
    fn errors_are_sentences() {
        assert!(parse("").unwrap_err().contains("missing `command`"));
        assert!(parse("command = \"x\"\nurl = \"http://a\"")
            .unwrap_err()
            .contains("not both"));
        assert_eq!(
            parse("command = \"x\"\nargs = [1]").unwrap_err(),
            "`args` must be an array of strings"
        );
        assert_eq!(
            parse("command = \"x\"\nheaders = {}").unwrap_err(),
            "`headers` does not apply to a stdio server"
        );
        assert_eq!(
            parse("command = \"x\"\ncomand = 1").unwrap_err(),
            "unknown key `comand`"
        );
        assert!(parse("url = \"ftp://x\"").unwrap_err().contains("http://"));
        assert!(parse("command = \"x\"\ntool_timeout_sec = 0").is_err());
        assert!(parse("command = \"x\"\nenabled = \"yes\"").is_err());
    }

    #[test]
    fn json_round_trip() {
        let json =
            serde_json::json!({"command": "node", "args": ["x"], "enabled": true, "cwd": null});
        let table = table_from_json(json.as_object().unwrap()).unwrap();
        assert!(!table.contains_key("cwd"));
        assert_eq!(
            ServerConfig::from_table(&table).unwrap().transport(),
            "stdio"
        );
        assert_eq!(format_secs(Duration::from_secs(1)), "1 s");
        assert_eq!(format_secs(Duration::from_millis(1500)), "1.5 s");
    }
}
