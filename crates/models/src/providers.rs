//! Provider resolution: the built-in providers merged with
//! `[providers.NAME]` from config, turned into an [`Endpoint`].

use std::collections::BTreeSet;

use jucode_config::{Config, ProviderConfig};

use crate::types::{Endpoint, WireApi};

/// A provider's settings before the key is looked up.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderInfo {
    pub name: String,
    pub wire_api: WireApi,
    pub base_url: String,
    /// Env var holding the key; `None` means no auth header.
    pub api_key_env: Option<String>,
    pub headers: Vec<(String, String)>,
}

/// Why a provider cannot be used. The messages say what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderProblem {
    #[error("unknown provider `{name}`; known providers: {}", known.join(", "))]
    UnknownProvider { name: String, known: Vec<String> },
    #[error("no API key for provider `{provider}`: set ${env_var}")]
    MissingCredentials { provider: String, env_var: String },
    #[error("provider `{provider}` has wire_api = \"{value}\"; use \"responses\", \"chat\" or \"anthropic\"")]
    BadWireApi { provider: String, value: String },
    /// A provider defined only in config must say where it lives.
    #[error("provider `{provider}` has no base_url; add one under [providers.{provider}]")]
    MissingBaseUrl { provider: String },
}

const BUILTIN_NAMES: [&str; 3] = ["openai", "anthropic", "ollama"];

/// The built-in provider `name`, with `*_BASE_URL` from the environment
/// applied; `None` if there is no such built-in.
fn builtin(name: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<ProviderInfo> {
    let from_env = |var: &str, default: &str| env(var).unwrap_or_else(|| default.to_string());
    let (wire_api, base_url, key) = match name {
        "openai" => (
            WireApi::Responses,
            from_env("OPENAI_BASE_URL", "https://api.openai.com/v1"),
            Some("OPENAI_API_KEY"),
        ),
        "anthropic" => (
            WireApi::Anthropic,
            from_env("ANTHROPIC_BASE_URL", "https://api.anthropic.com/v1"),
            Some("ANTHROPIC_API_KEY"),
        ),
        "ollama" => (WireApi::Chat, "http://127.0.0.1:11434/v1".to_string(), None),
        _ => return None,
    };
    Some(ProviderInfo {
        name: name.to_string(),
        wire_api,
        base_url,
        api_key_env: key.map(String::from),
        headers: Vec::new(),
    })
}

pub fn parse_wire_api(value: &str) -> Option<WireApi> {
    match value.trim().to_ascii_lowercase().as_str() {
        "responses" => Some(WireApi::Responses),
        "chat" | "chat_completions" => Some(WireApi::Chat),
        "anthropic" | "messages" => Some(WireApi::Anthropic),
        _ => None,
    }
}

/// Every provider name usable with `config`: built-ins first, then
/// config-only ones in name order.
pub fn provider_names(config: &Config) -> Vec<String> {
    let mut names: Vec<String> = BUILTIN_NAMES.iter().map(|s| s.to_string()).collect();
    let builtins: BTreeSet<&str> = BUILTIN_NAMES.into_iter().collect();
    names.extend(
        config
            .providers
            .keys()
            .filter(|n| !builtins.contains(n.as_str()))
            .cloned(),
    );
    names
}

/// The provider `name` with config fields laid over the built-in ones.
pub fn provider_info(name: &str, config: &Config) -> Result<ProviderInfo, ProviderProblem> {
    provider_info_with(name, config, &env_var)
}

fn provider_info_with(
    name: &str,
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ProviderInfo, ProviderProblem> {
    let base = builtin(name, env);
    let overrides = config.providers.get(name);
    let (mut info, cfg) = match (base, overrides) {
        (Some(info), cfg) => (info, cfg.cloned().unwrap_or_default()),
        (None, Some(cfg)) => {
            let ProviderConfig { base_url, .. } = cfg;
            if base_url.as_deref().is_none_or(|u| u.trim().is_empty()) {
                return Err(ProviderProblem::MissingBaseUrl {
                    provider: name.to_string(),
                });
            }
            let info = ProviderInfo {
                name: name.to_string(),
                // Most self-hosted servers speak Chat Completions.
                wire_api: WireApi::Chat,
                base_url: String::new(),
                api_key_env: None,
                headers: Vec::new(),
            };
            (info, cfg.clone())
        }
        (None, None) => {
            return Err(ProviderProblem::UnknownProvider {
                name: name.to_string(),
                known: provider_names(config),
            })
        }
    };
    if let Some(value) = &cfg.wire_api {
        info.wire_api = parse_wire_api(value).ok_or_else(|| ProviderProblem::BadWireApi {
            provider: name.to_string(),
            value: value.clone(),
        })?;
    }
    if let Some(url) = cfg.base_url.filter(|u| !u.trim().is_empty()) {
        info.base_url = url;
    }
    info.base_url = info.base_url.trim().trim_end_matches('/').to_string();
    if let Some(var) = cfg.api_key_env {
        // An empty name switches auth off (e.g. a local proxy).
        info.api_key_env = Some(var).filter(|v| !v.trim().is_empty());
    }
    info.headers.extend(cfg.headers);
    Ok(info)
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Resolves `name` to an endpoint, reading the key from its env var.
pub fn resolve_endpoint(name: &str, config: &Config) -> Result<Endpoint, ProviderProblem> {
    resolve_endpoint_with(name, config, &env_var)
}

/// [`resolve_endpoint`] with the environment supplied by the caller (tests,
/// or an engine that keeps its own env snapshot). `env` should return
/// `None` for unset or empty variables.
pub fn resolve_endpoint_with(
    name: &str,
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Endpoint, ProviderProblem> {
    let info = provider_info_with(name, config, env)?;
    let api_key = match &info.api_key_env {
        None => None,
        Some(var) => Some(
            env(var)
                .map(|k| k.trim().to_string())
                .filter(|k| !k.is_empty())
                .ok_or_else(|| ProviderProblem::MissingCredentials {
                    provider: name.to_string(),
                    env_var: var.clone(),
                })?,
        ),
    };
    Ok(Endpoint {
        provider: info.name,
        wire_api: info.wire_api,
        base_url: info.base_url,
        api_key,
        headers: info.headers,
    })
}

#[cfg(test)]
#[path = "tests/providers_tests.rs"]
mod tests;
