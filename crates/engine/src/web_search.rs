//! The `web_search` backend from `config.toml`'s `[web_search]` table. The
//! tool is offered (to coding and chat sessions alike) only when one is
//! configured; see `jucode_tools::WebSearchConfig`.

use std::sync::Arc;

use jucode_tools::WebSearchConfig;

/// The configured backend, `Ok(None)` without a `[web_search]` table, or
/// the problem with the table (then the tool is not offered).
pub(crate) fn backend(
    config: &jucode_config::Config,
) -> Result<Option<Arc<WebSearchConfig>>, String> {
    let Some(table) = &config.web_search else {
        return Ok(None);
    };
    let value = serde_json::to_value(table).map_err(|e| format!("[web_search]: {e}"))?;
    WebSearchConfig::from_json(&value).map(|c| Some(Arc::new(c)))
}
