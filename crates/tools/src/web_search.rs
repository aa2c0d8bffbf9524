//! `web_search`: a web search through a configured backend.
//!
//! Offered to the model only when `config.toml` has a `[web_search]` table:
//!
//! ```toml
//! [web_search]
//! provider = "searxng"                 # GET {base_url}/search?q=...&format=json
//! base_url = "http://127.0.0.1:8888"
//!
//! [web_search]
//! provider = "brave"                   # Brave Search API
//! api_key_env = "BRAVE_API_KEY"        # default
//! ```

use std::time::Duration;

use reqwest::header::ACCEPT;
use serde::Deserialize;
use serde_json::Value;

use crate::output::keep_start;
use crate::{ToolContext, ToolOutput};

const TIMEOUT: Duration = Duration::from_secs(20);
const BRAVE_URL: &str = "https://api.search.brave.com/res/v1/web/search";
const BRAVE_KEY_ENV: &str = "BRAVE_API_KEY";
const DEFAULT_MAX_RESULTS: usize = 8;
/// Most results a config may ask for; backends cap around here anyway.
const MAX_RESULTS_CAP: usize = 20;

/// Where `web_search` sends its queries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebSearchBackend {
    /// A SearXNG instance with the JSON format enabled.
    Searxng { base_url: String },
    /// The Brave Search API; the key is read from `api_key_env` per call.
    Brave {
        endpoint: String,
        api_key_env: String,
    },
}

/// The parsed `[web_search]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSearchConfig {
    pub backend: WebSearchBackend,
    /// Results returned to the model (default 8, at most 20).
    pub max_results: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    provider: String,
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    api_key_env: Option<String>,
    #[serde(default)]
    max_results: Option<usize>,
}

impl WebSearchConfig {
    /// Parses the `[web_search]` table (as JSON). The message of an error
    /// names the problem in config terms.
    pub fn from_json(value: &Value) -> Result<WebSearchConfig, String> {
        let raw: RawConfig = serde_json::from_value(value.clone())
            .map_err(|e| format!("[web_search]: {e}; web_search is off"))?;
        let backend = match raw.provider.as_str() {
            "searxng" => {
                let Some(base_url) = raw.base_url.filter(|u| !u.trim().is_empty()) else {
                    return Err(
                        "[web_search]: provider \"searxng\" needs base_url; web_search is off"
                            .to_string(),
                    );
                };
                WebSearchBackend::Searxng {
                    base_url: base_url.trim().trim_end_matches('/').to_string(),
                }
            }
            "brave" => WebSearchBackend::Brave {
                endpoint: raw
                    .base_url
                    .filter(|u| !u.trim().is_empty())
                    .unwrap_or_else(|| BRAVE_URL.to_string()),
                api_key_env: raw.api_key_env.unwrap_or_else(|| BRAVE_KEY_ENV.to_string()),
            },
            other => {
                return Err(format!(
                    "[web_search]: unknown provider {other:?} (expected \"searxng\" or \"brave\"); web_search is off"
                ))
            }
        };
        let max_results = raw
            .max_results
            .unwrap_or(DEFAULT_MAX_RESULTS)
            .clamp(1, MAX_RESULTS_CAP);
        Ok(WebSearchConfig {
            backend,
            max_results,
        })
    }

    fn name(&self) -> &'static str {
        match self.backend {
            WebSearchBackend::Searxng { .. } => "searxng",
            WebSearchBackend::Brave { .. } => "brave",
        }
    }
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hit {
    title: String,
    url: String,
    snippet: String,
}

pub(crate) async fn search(query: &str, ctx: &ToolContext) -> ToolOutput {
    let Some(config) = ctx.web_search.as_deref() else {
        return ToolOutput::error(
            "web_search is not configured: add a [web_search] table to config.toml",
        );
    };
    let query = query.trim();
    if query.is_empty() {
        return ToolOutput::error("query is empty");
    }
    match run_query(config, query).await {
        Ok(hits) => ToolOutput::ok(keep_start(
            &render(config, query, &hits),
            ctx.max_output_bytes,
        )),
        Err(e) => ToolOutput::error(e),
    }
}

async fn run_query(config: &WebSearchConfig, query: &str) -> Result<Vec<Hit>, String> {
    let client = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .user_agent(concat!("jucode/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot create HTTP client: {e}"))?;
    let count = config.max_results.to_string();
    let request = match &config.backend {
        WebSearchBackend::Searxng { base_url } => client.get(with_query(
            &format!("{base_url}/search"),
            &[("q", query), ("format", "json")],
        )?),
        WebSearchBackend::Brave {
            endpoint,
            api_key_env,
        } => {
            let key = std::env::var(api_key_env)
                .ok()
                .filter(|k| !k.is_empty())
                .ok_or_else(|| {
                    format!(
                        "web_search (brave) needs an API key in ${api_key_env}, which is not set"
                    )
                })?;
            client
                .get(with_query(endpoint, &[("q", query), ("count", &count)])?)
                .header("X-Subscription-Token", key)
        }
    };
    let resp = request
        .header(ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| describe(config, &e))?;
    let status = resp.status();
    let body = resp.text().await.map_err(|e| describe(config, &e))?;
    if !status.is_success() {
        let detail: String = body.chars().take(300).collect();
        return Err(format!(
            "web_search ({}) answered HTTP {status}: {}",
            config.name(),
            detail.trim()
        ));
    }
    let json: Value = serde_json::from_str(&body).map_err(|e| {
        format!(
            "web_search ({}) did not answer JSON ({e}); for SearXNG enable the json format in settings.yml",
            config.name()
        )
    })?;
    let hits = match config.backend {
        WebSearchBackend::Searxng { .. } => parse_hits(&json["results"], "content"),
        WebSearchBackend::Brave { .. } => parse_hits(&json["web"]["results"], "description"),
    };
    Ok(hits.into_iter().take(config.max_results).collect())
}

/// `base` with the query parameters appended (form-encoded).
fn with_query(base: &str, params: &[(&str, &str)]) -> Result<reqwest::Url, String> {
    let mut url = reqwest::Url::parse(base)
        .map_err(|e| format!("web_search: invalid URL {base:?} in [web_search]: {e}"))?;
    url.query_pairs_mut().extend_pairs(params);
    Ok(url)
}

fn describe(config: &WebSearchConfig, e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return format!(
            "web_search ({}) timed out after {} s",
            config.name(),
            TIMEOUT.as_secs()
        );
    }
    let mut msg = format!("web_search ({}) failed: {e}", config.name());
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(&format!(": {s}"));
        source = s.source();
    }
    msg
}

fn parse_hits(results: &Value, snippet_key: &str) -> Vec<Hit> {
    let text = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .map(strip_tags)
            .unwrap_or_default()
    };
    results
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| {
                    let url = text(item, "url");
                    (!url.is_empty()).then(|| Hit {
                        title: text(item, "title"),
                        url,
                        snippet: text(item, snippet_key),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Brave marks matches with `<strong>`; the model wants plain text.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .trim()
        .to_string()
}

fn render(config: &WebSearchConfig, query: &str, hits: &[Hit]) -> String {
    if hits.is_empty() {
        return format!("No results for {query:?} ({}).", config.name());
    }
    let mut out = format!("Results for {query:?} ({}):\n", config.name());
    for (i, hit) in hits.iter().enumerate() {
        let title = if hit.title.is_empty() {
            "(untitled)"
        } else {
            &hit.title
        };
        out.push_str(&format!("\n{}. {title}\n   {}\n", i + 1, hit.url));
        if !hit.snippet.is_empty() {
            out.push_str(&format!("   {}\n", hit.snippet));
        }
    }
    out.push_str("\nOpen a result with web_fetch to read it.");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_parsing() {
        let c =
            WebSearchConfig::from_json(&json!({"provider":"searxng","base_url":"http://x:8888/"}))
                .unwrap();
        assert_eq!(
            c.backend,
            WebSearchBackend::Searxng {
                base_url: "http://x:8888".into()
            }
        );
        assert_eq!(c.max_results, DEFAULT_MAX_RESULTS);
        let c = WebSearchConfig::from_json(&json!({"provider":"brave","max_results":50})).unwrap();
        assert_eq!(
            c.backend,
            WebSearchBackend::Brave {
                endpoint: BRAVE_URL.into(),
                api_key_env: BRAVE_KEY_ENV.into()
            }
        );
        assert_eq!(c.max_results, MAX_RESULTS_CAP);
        assert!(WebSearchConfig::from_json(&json!({"provider":"searxng"}))
            .unwrap_err()
            .contains("base_url"));
        assert!(WebSearchConfig::from_json(&json!({"provider":"bing"}))
            .unwrap_err()
            .contains("unknown provider"));
        assert!(WebSearchConfig::from_json(&json!({"provider":"brave","key":"x"})).is_err());
    }

    #[test]
    fn hits_from_both_shapes() {
        let searx = json!({"results":[{"title":"A","url":"https://a","content":"alpha"},{"title":"nourl"}]});
        assert_eq!(
            parse_hits(&searx["results"], "content"),
            vec![Hit {
                title: "A".into(),
                url: "https://a".into(),
                snippet: "alpha".into()
            }]
        );
        let brave = json!({"web":{"results":[{"title":"B &amp; C","url":"https://b","description":"the <strong>best</strong>"}]}});
        let hits = parse_hits(&brave["web"]["results"], "description");
        assert_eq!(hits[0].title, "B & C");
        assert_eq!(hits[0].snippet, "the best");
    }
}
