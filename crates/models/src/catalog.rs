//! What JuCode knows about each model: provider, context sizes, reasoning
//! efforts and prices. The built-in data lives in `catalog.toml` (embedded
//! at compile time, with an `as_of` date); `[models."ID"]` in config.toml
//! overrides or extends it.

use std::collections::{BTreeMap, BTreeSet};

use jucode_config::{ModelConfig, PriceConfig};
use serde::{Deserialize, Serialize};

use crate::types::Usage;

const BUILTIN: &str = include_str!("../catalog.toml");

/// Defaults for models known only from config.
const DEFAULT_WINDOW: u64 = 128_000;
const DEFAULT_MAX_OUTPUT: u64 = 8_192;
/// Compaction starts at this share of the window unless a limit is given:
/// the rest is room for the answer and for estimation error.
const DEFAULT_LIMIT_PERCENT: u64 = 80;

/// A surcharge above a prompt size (gpt-5.4: 2× input, 1.5× output above
/// 272K input tokens).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LongContextPrice {
    pub above_input_tokens: u64,
    pub input_multiplier: f64,
    pub output_multiplier: f64,
}

/// USD per 1M tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    pub cached_input: f64,
    pub cache_write: f64,
    pub output: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_context: Option<LongContextPrice>,
}

impl Price {
    /// Fills the cache prices a source left out. Anthropic bills cache
    /// reads at 0.1× and 5-minute writes at 1.25× input; for anyone else
    /// nothing is assumed, so cached input costs full price (an estimate
    /// that errs high rather than low).
    fn with_defaults(
        provider: &str,
        input: f64,
        cached: Option<f64>,
        write: Option<f64>,
        output: f64,
    ) -> Price {
        let (cached_factor, write_factor) = if provider == "anthropic" {
            (0.1, 1.25)
        } else {
            (1.0, 1.0)
        };
        Price {
            input,
            cached_input: cached.unwrap_or(input * cached_factor),
            cache_write: write.unwrap_or(input * write_factor),
            output,
            long_context: None,
        }
    }

    const FREE: Price = Price {
        input: 0.0,
        cached_input: 0.0,
        cache_write: 0.0,
        output: 0.0,
        long_context: None,
    };
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub id: String,
    /// `openai`, `anthropic`, `ollama`, or a configured provider.
    pub provider: String,
    pub context_window: u64,
    /// Prompt size at which the engine compacts.
    pub context_limit: u64,
    pub max_output_tokens: u64,
    /// Empty for models without reasoning control.
    pub reasoning_efforts: Vec<String>,
    pub default_effort: Option<String>,
    pub price: Price,
}

impl ModelInfo {
    /// Figures for a model the catalog does not know (a local model named
    /// only by flag, say): the same defaults a config-added model gets, and
    /// no price (its cost counts as 0).
    pub fn unknown(id: &str, provider: &str) -> ModelInfo {
        ModelInfo {
            id: id.to_string(),
            provider: provider.to_string(),
            context_window: DEFAULT_WINDOW,
            context_limit: default_limit(DEFAULT_WINDOW),
            max_output_tokens: DEFAULT_MAX_OUTPUT,
            reasoning_efforts: Vec::new(),
            default_effort: None,
            price: Price {
                input: 0.0,
                cached_input: 0.0,
                cache_write: 0.0,
                output: 0.0,
                long_context: None,
            },
        }
    }

    /// What `usage` cost in USD: uncached input at the input price, cache
    /// reads at the cached price, cache writes at the write price, output
    /// (reasoning included) at the output price.
    pub fn cost_usd(&self, usage: &Usage) -> f64 {
        let p = &self.price;
        let (in_x, out_x) = match p.long_context {
            Some(lc) if usage.input_tokens > lc.above_input_tokens => {
                (lc.input_multiplier, lc.output_multiplier)
            }
            _ => (1.0, 1.0),
        };
        let uncached = usage
            .input_tokens
            .saturating_sub(usage.cached_input_tokens)
            .saturating_sub(usage.cache_write_tokens);
        let dollars = (uncached as f64 * p.input
            + usage.cached_input_tokens as f64 * p.cached_input
            + usage.cache_write_tokens as f64 * p.cache_write)
            * in_x
            + usage.output_tokens as f64 * p.output * out_x;
        dollars / 1_000_000.0
    }

    pub fn supports_effort(&self, effort: &str) -> bool {
        self.reasoning_efforts.iter().any(|e| e == effort)
    }
}

/// A catalog entry as written in catalog.toml, before defaults.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    id: String,
    provider: String,
    context_window: u64,
    context_limit: Option<u64>,
    max_output_tokens: u64,
    #[serde(default)]
    reasoning_efforts: Vec<String>,
    default_effort: Option<String>,
    price: RawPrice,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrice {
    input: f64,
    cached_input: Option<f64>,
    cache_write: Option<f64>,
    output: f64,
    long_context: Option<LongContextPrice>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    as_of: String,
    models: Vec<RawModel>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Catalog {
    as_of: String,
    models: Vec<ModelInfo>,
    /// Ids whose limit was stated rather than derived from the window; a
    /// derived limit follows the window when the window is overridden.
    stated_limits: BTreeSet<String>,
}

fn default_limit(window: u64) -> u64 {
    window.saturating_mul(DEFAULT_LIMIT_PERCENT) / 100
}

/// Which built-in provider a model id most likely belongs to.
fn guess_provider(id: &str) -> &'static str {
    if id.starts_with("claude") {
        "anthropic"
    } else if id.contains(':') {
        // Ollama tags look like `name:size`.
        "ollama"
    } else {
        "openai"
    }
}

impl Catalog {
    /// The catalog shipped with this build.
    pub fn builtin() -> Catalog {
        let raw: RawCatalog =
            toml::from_str(BUILTIN).expect("catalog.toml is valid (checked by tests)");
        let mut stated_limits = BTreeSet::new();
        let models = raw
            .models
            .into_iter()
            .map(|m| {
                if m.context_limit.is_some() {
                    stated_limits.insert(m.id.clone());
                }
                let mut price = Price::with_defaults(
                    &m.provider,
                    m.price.input,
                    m.price.cached_input,
                    m.price.cache_write,
                    m.price.output,
                );
                price.long_context = m.price.long_context;
                ModelInfo {
                    context_limit: m
                        .context_limit
                        .unwrap_or_else(|| default_limit(m.context_window)),
                    id: m.id,
                    provider: m.provider,
                    context_window: m.context_window,
                    max_output_tokens: m.max_output_tokens,
                    reasoning_efforts: m.reasoning_efforts,
                    default_effort: m.default_effort,
                    price,
                }
            })
            .collect();
        Catalog {
            as_of: raw.as_of,
            models,
            stated_limits,
        }
    }

    /// When the built-in data was last checked (`YYYY-MM`).
    pub fn as_of(&self) -> &str {
        &self.as_of
    }

    pub fn get(&self, id: &str) -> Option<&ModelInfo> {
        self.models.iter().find(|m| m.id == id)
    }

    /// Built-in models in catalog order, then models added by config in
    /// id order.
    pub fn models(&self) -> &[ModelInfo] {
        &self.models
    }

    /// Applies `[models."ID"]` tables: set fields replace those of a known
    /// model; an unknown id is added with defaults (128K window, 80 %
    /// limit, 8192 output tokens, no reasoning efforts, price 0 unless
    /// given).
    pub fn with_overrides(mut self, overrides: &BTreeMap<String, ModelConfig>) -> Catalog {
        for (id, cfg) in overrides {
            let index = match self.models.iter().position(|m| &m.id == id) {
                Some(index) => index,
                None => {
                    let provider = cfg
                        .provider
                        .clone()
                        .unwrap_or_else(|| guess_provider(id).to_string());
                    self.models.push(ModelInfo {
                        id: id.clone(),
                        provider,
                        context_window: DEFAULT_WINDOW,
                        context_limit: default_limit(DEFAULT_WINDOW),
                        max_output_tokens: DEFAULT_MAX_OUTPUT,
                        reasoning_efforts: Vec::new(),
                        default_effort: None,
                        price: Price::FREE,
                    });
                    self.models.len() - 1
                }
            };
            let stated = self.stated_limits.contains(id);
            let model = &mut self.models[index];
            if let Some(provider) = &cfg.provider {
                model.provider = provider.clone();
            }
            if let Some(window) = cfg.context_window {
                model.context_window = window;
                if !stated {
                    model.context_limit = default_limit(window);
                }
            }
            if let Some(limit) = cfg.context_limit {
                model.context_limit = limit;
                self.stated_limits.insert(id.clone());
            }
            // A limit above the window would never trigger compaction.
            model.context_limit = model.context_limit.min(model.context_window);
            if let Some(max) = cfg.max_output_tokens {
                model.max_output_tokens = max;
            }
            if let Some(efforts) = &cfg.reasoning_efforts {
                model.reasoning_efforts = efforts.clone();
            }
            if let Some(effort) = &cfg.default_effort {
                model.default_effort = Some(effort.clone());
            }
            if let Some(PriceConfig {
                input,
                cached_input,
                cache_write,
                output,
            }) = cfg.price
            {
                model.price =
                    Price::with_defaults(&model.provider, input, cached_input, cache_write, output);
            }
        }
        self
    }
}

#[cfg(test)]
#[path = "tests/catalog_tests.rs"]
mod tests;
